//! The one error a filter can be refused with: what is wrong and where, as a
//! path into the filter (`filter.$and[1].amount.$gt`) that the API answers as
//! the error's `field`.

use std::fmt;

use super::{MAX_BYTES, MAX_CONDITIONS, MAX_DEPTH, MAX_LIST, MAX_PATH_BYTES, MAX_SEGMENTS};

/// A refused filter: the place in it ([`FilterError::at`]) and what is wrong
/// there (the `Display` message, which does not repeat the place).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub(crate) struct FilterError {
    at: String,
    kind: FilterErrorKind,
}

impl FilterError {
    pub(super) fn new(at: &Loc<'_>, kind: FilterErrorKind) -> Self {
        Self {
            at: at.to_string(),
            kind,
        }
    }

    /// Where in the filter: `filter`, then `.key` per object key and `[i]` per
    /// array element, keys as given (`filter.data.amount.$gt`).
    pub(crate) fn at(&self) -> &str {
        &self.at
    }

    /// What is wrong, for tests that branch on it.
    #[cfg(test)]
    pub(crate) fn kind(&self) -> &FilterErrorKind {
        &self.kind
    }
}

/// Every way a filter can be refused; the messages are for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FilterErrorKind {
    #[error("a filter must be a JSON object")]
    NotAnObject,
    #[error("a filter may be at most {MAX_BYTES} bytes as compact JSON")]
    TooLarge,
    #[error("a filter may nest objects and arrays at most {MAX_DEPTH} levels deep")]
    TooDeep,
    #[error(
        "a filter may hold at most {MAX_CONDITIONS} conditions \
         (each comparison and each `$and`, `$or` and `$not` counts one)"
    )]
    TooManyConditions,
    #[error("a field path may not be empty or hold an empty segment (`a..b`, `.a`, `a.`)")]
    EmptySegment,
    #[error("a field path may have at most {MAX_SEGMENTS} segments")]
    TooManySegments,
    #[error("a field path may be at most {MAX_PATH_BYTES} bytes")]
    PathTooLong,
    /// A `$` key that is no operator at all; `$ne` gets a hint.
    #[error("unknown operator `{0}`{hint}", hint = unknown_hint(.0))]
    UnknownOperator(String),
    /// A field operator written where a filter's keys go.
    #[error("`{0}` tests a field: write it inside one, as in {{\"amount\": {{\"{0}\": …}}}}")]
    FieldOperatorOutsideField(String),
    /// A logical operator written inside a field's operator object.
    #[error("`{0}` combines filters and belongs at filter level, not inside a field")]
    LogicalOperatorInsideField(String),
    #[error(
        "an operator object may hold only `$` keys; this one mixes `{op}` with `{key}` \
         (to match an object exactly, use `$eq`)"
    )]
    MixedKeys { op: String, key: String },
    /// `path` is the dotted path the literal's nesting spells, up to `op`.
    #[error(
        "`{op}` inside a literal value: to test a nested field, use its dotted path \
         as the key, as in {{\"{path}\": {{\"{op}\": …}}}}; to match an object with \
         `$` keys exactly, use `$eq`"
    )]
    OperatorInLiteral { op: String, path: String },
    #[error("`{0}` takes a non-empty array of filters (objects)")]
    NotFilterList(&'static str),
    #[error("`$not` takes one filter (an object)")]
    NotFilter,
    #[error(
        "`$not` on a field takes a non-empty operator object, as in {{\"$not\": {{\"$in\": […]}}}}"
    )]
    NotOperatorObject,
    #[error("`{0}` takes an array of at most {MAX_LIST} values")]
    NotList(&'static str),
    #[error("`{0}` takes a number or a string")]
    NotNumberOrString(&'static str),
    #[error("`$exists` takes true or false")]
    NotBool,
}

fn unknown_hint(op: &str) -> &'static str {
    match op {
        "$ne" => "; did you mean `$neq`?",
        _ => {
            "; a filter takes `$and`, `$or`, `$not` and field paths, and a field takes \
             `$eq`, `$neq`, `$in`, `$nin`, `$gt`, `$gte`, `$lt`, `$lte`, `$exists` and `$not`"
        }
    }
}

/// A place in the filter, kept as borrowed links up to the root so that
/// walking costs nothing until an error renders it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Loc<'a> {
    Root,
    Key(&'a Loc<'a>, &'a str),
    Index(&'a Loc<'a>, usize),
}

impl<'a> Loc<'a> {
    pub(super) fn key(&'a self, key: &'a str) -> Self {
        Loc::Key(self, key)
    }

    pub(super) fn index(&'a self, i: usize) -> Self {
        Loc::Index(self, i)
    }
}

impl fmt::Display for Loc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Recursion is as deep as the filter, which the bounds keep shallow.
        match self {
            Loc::Root => f.write_str("filter"),
            Loc::Key(parent, key) => write!(f, "{parent}.{key}"),
            Loc::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}
