//! The compiled form of a filter: what `parse` builds and `eval` runs, with
//! paths split and operands checked once, up front.

use serde_json::Value;

/// One filter object, or a logical operator over filters.
#[derive(Debug, Clone)]
pub(super) enum Node {
    /// Every child holds; an empty filter (`{}`) is `All` of nothing.
    All(Vec<Node>),
    /// Some child holds (`$or`, never empty).
    Any(Vec<Node>),
    Not(Box<Node>),
    /// The field at `path` passes `test`.
    Field(Path, Test),
}

/// A field path, split at dots.
#[derive(Debug, Clone)]
pub(super) struct Path(pub(super) Vec<Segment>);

/// One segment: an object key, and an array index when it is all digits.
#[derive(Debug, Clone)]
pub(super) struct Segment {
    pub(super) key: String,
    /// `None` for a key that is not all digits, or too large to index.
    pub(super) index: Option<usize>,
}

/// What a field must be. `None` below stands for a missing field.
#[derive(Debug, Clone)]
pub(super) enum Test {
    /// Several operators of one object: all hold.
    All(Vec<Test>),
    /// Field-level `$not`: the operator object does not hold.
    Not(Box<Test>),
    Eq(Value),
    Neq(Value),
    In(Vec<Value>),
    Nin(Vec<Value>),
    /// `$gt` and kin; the operand is a number or a string.
    Cmp(CmpOp, Value),
    Exists(bool),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CmpOp {
    Gt,
    Gte,
    Lt,
    Lte,
}
