//! Reads a filter (already within the size and depth bounds) into its
//! compiled [`Node`], refusing anything malformed with the place it is at,
//! and counting conditions against [`MAX_CONDITIONS`].

use serde_json::{Map, Value};

use super::error::{FilterError, FilterErrorKind as Kind, Loc};
use super::node::{CmpOp, Node, Path, Segment, Test};
use super::{MAX_CONDITIONS, MAX_LIST, MAX_PATH_BYTES, MAX_SEGMENTS};

/// The operators a field takes, for telling a misplaced one from an unknown one.
const FIELD_OPERATORS: [&str; 10] = [
    "$eq", "$neq", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists", "$not",
];

/// Compiles a filter whose bounds [`super::bounds::check`] has passed.
///
/// # Errors
/// The first problem met, walking keys in `serde_json` map order (sorted by
/// default, so `filter.$and` comes before `filter.amount`).
pub(super) fn compile(filter: &Value) -> Result<Node, FilterError> {
    Compiler { conditions: 0 }.filter(filter, &Loc::Root)
}

struct Compiler {
    conditions: usize,
}

impl Compiler {
    /// Counts one condition, at the place it is written.
    fn count(&mut self, at: &Loc<'_>) -> Result<(), FilterError> {
        self.conditions += 1;
        if self.conditions > MAX_CONDITIONS {
            return Err(FilterError::new(at, Kind::TooManyConditions));
        }
        Ok(())
    }

    fn filter(&mut self, v: &Value, at: &Loc<'_>) -> Result<Node, FilterError> {
        let Value::Object(map) = v else {
            return Err(FilterError::new(at, Kind::NotAnObject));
        };
        let mut nodes = Vec::with_capacity(map.len());
        for (key, arg) in map {
            let at = at.key(key);
            let node = match key.as_str() {
                "$and" => Node::All(self.filter_list("$and", arg, &at)?),
                "$or" => Node::Any(self.filter_list("$or", arg, &at)?),
                "$not" => {
                    if !arg.is_object() {
                        return Err(FilterError::new(&at, Kind::NotFilter));
                    }
                    self.count(&at)?;
                    Node::Not(Box::new(self.filter(arg, &at)?))
                }
                op if op.starts_with('$') => {
                    let kind = if FIELD_OPERATORS.contains(&op) {
                        Kind::FieldOperatorOutsideField(op.to_owned())
                    } else {
                        Kind::UnknownOperator(op.to_owned())
                    };
                    return Err(FilterError::new(&at, kind));
                }
                path => Node::Field(parse_path(path, &at)?, self.condition(arg, &at)?),
            };
            nodes.push(node);
        }
        Ok(one_or_all(nodes, Node::All))
    }

    /// The filters of `$and` or `$or`: a non-empty array of objects.
    fn filter_list(
        &mut self,
        op: &'static str,
        arg: &Value,
        at: &Loc<'_>,
    ) -> Result<Vec<Node>, FilterError> {
        let items = match arg {
            Value::Array(items) if !items.is_empty() => items,
            _ => return Err(FilterError::new(at, Kind::NotFilterList(op))),
        };
        self.count(at)?;
        let mut nodes = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = at.index(i);
            if !item.is_object() {
                return Err(FilterError::new(&at, Kind::NotFilterList(op)));
            }
            nodes.push(self.filter(item, &at)?);
        }
        Ok(nodes)
    }

    /// A field's value: an operator object, or a literal it must equal.
    fn condition(&mut self, v: &Value, at: &Loc<'_>) -> Result<Test, FilterError> {
        match operator_object(v, at)? {
            Some(ops) => self.operators(ops, at),
            None => {
                check_literal(v, at, &mut at_field(at))?;
                self.count(at)?;
                Ok(Test::Eq(v.clone()))
            }
        }
    }

    /// Every operator of one object; all must hold.
    fn operators(&mut self, ops: &Map<String, Value>, at: &Loc<'_>) -> Result<Test, FilterError> {
        let mut tests = Vec::with_capacity(ops.len());
        for (op, arg) in ops {
            tests.push(self.operator(op, arg, &at.key(op))?);
        }
        Ok(one_or_all(tests, Test::All))
    }

    fn operator(&mut self, op: &str, arg: &Value, at: &Loc<'_>) -> Result<Test, FilterError> {
        let refuse = |kind| Err(FilterError::new(at, kind));
        let Some(&name) = FIELD_OPERATORS.iter().find(|known| **known == op) else {
            return refuse(match op {
                "$and" | "$or" => Kind::LogicalOperatorInsideField(op.to_owned()),
                _ => Kind::UnknownOperator(op.to_owned()),
            });
        };
        let test = match name {
            // Explicit operands are taken literally, `$` keys and all: that is
            // how a payload object with `$` keys can be matched.
            "$eq" => Test::Eq(arg.clone()),
            "$neq" => Test::Neq(arg.clone()),
            "$in" | "$nin" => match arg {
                Value::Array(items) if items.len() <= MAX_LIST && name == "$in" => {
                    Test::In(items.clone())
                }
                Value::Array(items) if items.len() <= MAX_LIST => Test::Nin(items.clone()),
                _ => return refuse(Kind::NotList(name)),
            },
            "$gt" | "$gte" | "$lt" | "$lte" => {
                if !(arg.is_number() || arg.is_string()) {
                    return refuse(Kind::NotNumberOrString(name));
                }
                let cmp = match name {
                    "$gt" => CmpOp::Gt,
                    "$gte" => CmpOp::Gte,
                    "$lt" => CmpOp::Lt,
                    _ => CmpOp::Lte,
                };
                Test::Cmp(cmp, arg.clone())
            }
            "$exists" => match arg {
                Value::Bool(b) => Test::Exists(*b),
                _ => return refuse(Kind::NotBool),
            },
            _ => {
                // `$not`, the one left.
                let Some(inner) = operator_object(arg, at)? else {
                    return refuse(Kind::NotOperatorObject);
                };
                // Counted before its operators, so the count follows the walk.
                self.count(at)?;
                return Ok(Test::Not(Box::new(self.operators(inner, at)?)));
            }
        };
        self.count(at)?;
        Ok(test)
    }
}

/// The one item itself, so a single condition compiles to no wrapper.
fn one_or_all<T>(mut items: Vec<T>, all: fn(Vec<T>) -> T) -> T {
    if items.len() == 1
        && let Some(only) = items.pop()
    {
        return only;
    }
    all(items)
}

/// `Some` when `v` is an operator object: non-empty, every key a `$` key.
///
/// # Errors
/// `MixedKeys` for an object with both kinds of key.
fn operator_object<'v>(
    v: &'v Value,
    at: &Loc<'_>,
) -> Result<Option<&'v Map<String, Value>>, FilterError> {
    let Value::Object(map) = v else {
        return Ok(None);
    };
    let op = map.keys().find(|k| k.starts_with('$'));
    let plain = map.keys().find(|k| !k.starts_with('$'));
    match (op, plain) {
        (Some(op), Some(key)) => Err(FilterError::new(
            at,
            Kind::MixedKeys {
                op: op.clone(),
                key: key.clone(),
            },
        )),
        (Some(_), None) => Ok(Some(map)),
        (None, _) => Ok(None),
    }
}

/// Refuses `$` keys anywhere inside a literal: `{"data": {"amount": {"$gt":
/// 1}}}` is almost surely meant as a dotted path, and would silently never
/// match. `path` is the dotted path so far, for the hint; recursion is bounded
/// by the depth check.
fn check_literal(v: &Value, at: &Loc<'_>, path: &mut String) -> Result<(), FilterError> {
    let len = path.len();
    match v {
        Value::Object(map) => {
            for (key, item) in map {
                let at = at.key(key);
                if key.starts_with('$') {
                    let kind = Kind::OperatorInLiteral {
                        op: key.clone(),
                        path: path.clone(),
                    };
                    return Err(FilterError::new(&at, kind));
                }
                path.push('.');
                path.push_str(key);
                check_literal(item, &at, path)?;
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                // An all-digit segment indexes arrays, so the hint stays a path.
                path.push_str(&format!(".{i}"));
                check_literal(item, &at.index(i), path)?;
                path.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

/// The field path a field's location ends with (its last key).
fn at_field(at: &Loc<'_>) -> String {
    match at {
        Loc::Key(_, key) => (*key).to_owned(),
        _ => String::new(),
    }
}

/// Splits a field path and checks its bounds.
fn parse_path(key: &str, at: &Loc<'_>) -> Result<Path, FilterError> {
    if key.len() > MAX_PATH_BYTES {
        return Err(FilterError::new(at, Kind::PathTooLong));
    }
    let mut segments = Vec::new();
    for seg in key.split('.') {
        if seg.is_empty() {
            return Err(FilterError::new(at, Kind::EmptySegment));
        }
        if segments.len() == MAX_SEGMENTS {
            return Err(FilterError::new(at, Kind::TooManySegments));
        }
        // All digits, so `+1` (which `parse` takes) stays a plain key.
        let index = if seg.bytes().all(|b| b.is_ascii_digit()) {
            seg.parse().ok()
        } else {
            None
        };
        segments.push(Segment {
            key: seg.to_owned(),
            index,
        });
    }
    Ok(Path(segments))
}
