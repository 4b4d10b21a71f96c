//! Comparing a filter's operand with a payload's value: JSON equality with
//! numbers by value (`1` equals `1.0`, exactly, even past 2^53), and ordering
//! of numbers with numbers and strings with strings.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// JSON equality, numbers by value. Recursion goes no deeper than `operand`,
/// which the depth bound keeps shallow, however deep `value` is.
pub(super) fn json_eq(operand: &Value, value: &Value) -> bool {
    match (operand, value) {
        (Value::Number(a), Value::Number(b)) => cmp_numbers(a, b) == Some(Ordering::Equal),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, x)| b.get(k).is_some_and(|y| json_eq(x, y)))
        }
        (Value::Null, Value::Null) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::String(a), Value::String(b)) => a == b,
        _ => false,
    }
}

/// How `value` orders against `operand`: numbers by value, strings byte-wise
/// (so ISO-8601 timestamps of one format order in time); `None` for any other
/// pair, which every ordering operator takes as false.
pub(super) fn order(value: &Value, operand: &Value) -> Option<Ordering> {
    match (value, operand) {
        (Value::Number(a), Value::Number(b)) => cmp_numbers(a, b),
        (Value::String(a), Value::String(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        _ => None,
    }
}

/// Exact numeric order: integers as integers, an integer against a float
/// without rounding the integer to a float.
fn cmp_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    match (integer(a), integer(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        (Some(x), None) => cmp_int_float(x, b.as_f64()?),
        (None, Some(y)) => cmp_int_float(y, a.as_f64()?).map(Ordering::reverse),
        (None, None) => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// An `i64` or `u64` number; both fit an `i128`.
fn integer(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn cmp_int_float(i: i128, f: f64) -> Option<Ordering> {
    // Beyond ±2^64 a float is beyond every integer serde_json holds.
    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    if f.is_nan() {
        return None;
    }
    if f >= TWO_POW_64 {
        return Some(Ordering::Less);
    }
    if f <= -TWO_POW_64 {
        return Some(Ordering::Greater);
    }
    // Within ±2^64 the whole part converts to i128 exactly, and the
    // fraction settles a tie.
    let whole = f.trunc();
    match i.cmp(&(whole as i128)) {
        Ordering::Equal => 0.0_f64.partial_cmp(&(f - whole)),
        unequal => Some(unequal),
    }
}
