//! An endpoint's payload filter: a small MongoDB-like language, evaluated on
//! an event's JSON payload, that decides whether the endpoint gets the event.
//!
//! A filter is a JSON object whose keys all must hold. A key is a logical
//! operator (`$and`, `$or`: a non-empty array of filters; `$not`: one filter)
//! or a dotted field path from the payload's root (`data.customer.id`; an
//! all-digit segment also indexes an array: `items.0.sku`). A field's value is
//! a literal it must equal, or an operator object (`{"$gte": 10, "$lt": 20}`)
//! of `$eq`, `$neq`, `$in`, `$nin`, `$gt`, `$gte`, `$lt`, `$lte`, `$exists`
//! and `$not`, all of which must hold.
//!
//! Semantics in brief (payload-filters.md has them in full):
//! - equality is JSON equality with numbers by value (`1` equals `1.0`);
//! - `$gt` and kin order a number against a number, a string against a string
//!   (byte-wise); any other pair, or a missing field, is false;
//! - a missing field fails `$eq`, `$in` and the orderings and passes `$neq`,
//!   `$nin` and `$exists: false`; `null` equals only an explicit `null`;
//! - no implicit traversal into arrays: `$in` asks whether the field's value
//!   is one of the listed values, and `tags: "a"` does not match `["a"]`.
//!
//! Bounds are checked at parse time ([`MAX_BYTES`] and the other `MAX_`
//! constants), so [`PayloadFilter::matches`] costs at most a fixed amount
//! whatever the payload.

mod bounds;
mod compare;
mod error;
mod eval;
mod node;
mod parse;

#[cfg(test)]
mod error_tests;
#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub(crate) use error::{FilterError, FilterErrorKind};

/// Most bytes of a filter, as compact JSON.
pub(crate) const MAX_BYTES: usize = 4096;
/// Most levels of objects and arrays in a filter, the root object being 1.
pub(crate) const MAX_DEPTH: usize = 8;
/// Most conditions: comparisons plus `$and`, `$or` and `$not`.
pub(crate) const MAX_CONDITIONS: usize = 64;
/// Most values in one `$in` or `$nin` list.
pub(crate) const MAX_LIST: usize = 100;
/// Most segments of one field path.
pub(crate) const MAX_SEGMENTS: usize = 16;
/// Most bytes of one field path.
pub(crate) const MAX_PATH_BYTES: usize = 256;

/// A validated, compiled payload filter. It keeps the JSON it was given, which
/// is what it serializes as, compares by, and shows in views.
#[derive(Clone)]
pub(crate) struct PayloadFilter {
    json: Value,
    root: node::Node,
}

impl PayloadFilter {
    /// Validates and compiles `filter`.
    ///
    /// # Errors
    /// A [`FilterError`] naming the place in the filter and the problem: a
    /// bound passed, an unknown operator, an operand of the wrong kind.
    pub(crate) fn parse(filter: &Value) -> Result<Self, FilterError> {
        let root = compile(filter)?;
        Ok(Self {
            json: filter.clone(),
            root,
        })
    }

    /// Whether `payload` passes the filter.
    pub(crate) fn matches(&self, payload: &Value) -> bool {
        eval::node(&self.root, payload)
    }
}

fn compile(filter: &Value) -> Result<node::Node, FilterError> {
    if !filter.is_object() {
        return Err(FilterError::new(
            &error::Loc::Root,
            FilterErrorKind::NotAnObject,
        ));
    }
    // Bounds first: they make everything after them cheap.
    bounds::check(filter)?;
    parse::compile(filter)
}

impl fmt::Debug for PayloadFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PayloadFilter").field(&self.json).finish()
    }
}

impl PartialEq for PayloadFilter {
    /// Equal when given as equal JSON (`1` and `1.0` differ here, as they do
    /// in `serde_json`).
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json
    }
}

impl Serialize for PayloadFilter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PayloadFilter {
    /// Validates as [`PayloadFilter::parse`] does, so a stored record always
    /// holds a valid filter. The error reads `<at>: <message>`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = Value::deserialize(deserializer)?;
        let root =
            compile(&json).map_err(|e| serde::de::Error::custom(format!("{}: {e}", e.at())))?;
        Ok(Self { json, root })
    }
}
