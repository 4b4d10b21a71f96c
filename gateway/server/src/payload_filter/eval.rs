//! Runs a compiled filter on a payload. The work is bounded by the filter:
//! each condition looks one path up (at most 16 steps, no traversal into
//! arrays) and compares with its operand (at most 100 for `$in`), and the
//! recursion follows the filter's nesting, never the payload's.

use std::cmp::Ordering;

use serde_json::Value;

use super::compare::{json_eq, order};
use super::node::{CmpOp, Node, Path, Test};

pub(super) fn node(n: &Node, payload: &Value) -> bool {
    match n {
        Node::All(children) => children.iter().all(|c| node(c, payload)),
        Node::Any(children) => children.iter().any(|c| node(c, payload)),
        Node::Not(inner) => !node(inner, payload),
        Node::Field(path, t) => test(t, lookup(payload, path)),
    }
}

/// The value at `path`, or `None` when any step finds nothing: a key absent,
/// an index past the end, or a step into a scalar.
fn lookup<'v>(payload: &'v Value, path: &Path) -> Option<&'v Value> {
    let mut at = payload;
    for seg in &path.0 {
        at = match at {
            Value::Object(map) => map.get(&seg.key)?,
            Value::Array(items) => items.get(seg.index?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Whether `value` (`None`: missing) passes; every negative operator is the
/// exact negation of its positive, so a missing field passes `$neq`/`$nin`.
fn test(t: &Test, value: Option<&Value>) -> bool {
    match t {
        Test::All(tests) => tests.iter().all(|t| test(t, value)),
        Test::Not(inner) => !test(inner, value),
        Test::Eq(operand) => value.is_some_and(|v| json_eq(operand, v)),
        Test::Neq(operand) => !value.is_some_and(|v| json_eq(operand, v)),
        Test::In(operands) => value.is_some_and(|v| operands.iter().any(|o| json_eq(o, v))),
        Test::Nin(operands) => !value.is_some_and(|v| operands.iter().any(|o| json_eq(o, v))),
        Test::Cmp(op, operand) => value
            .and_then(|v| order(v, operand))
            .is_some_and(|ord| holds(*op, ord)),
        Test::Exists(wanted) => value.is_some() == *wanted,
    }
}

/// Whether `value <op> operand`, given how `value` orders against it.
fn holds(op: CmpOp, ord: Ordering) -> bool {
    match op {
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::Gte => ord != Ordering::Less,
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::Lte => ord != Ordering::Greater,
    }
}
