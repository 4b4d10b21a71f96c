//! Property tests: random filters against random payloads, checked against a
//! reference evaluator written here from the language's description (it reads
//! the filter's JSON directly and shares no code with the module), and parse
//! never panicking on arbitrary JSON.

use std::cell::Cell;
use std::cmp::Ordering;

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value};

use super::{MAX_BYTES, PayloadFilter, bounds};

// ---- The reference evaluator ------------------------------------------------

/// Whether `payload` passes `filter`, read straight from the filter's JSON.
fn reference(filter: &Value, payload: &Value) -> bool {
    let Value::Object(keys) = filter else {
        unreachable!("the generator makes objects")
    };
    keys.iter().all(|(key, arg)| match key.as_str() {
        "$and" => arg
            .as_array()
            .into_iter()
            .flatten()
            .all(|f| reference(f, payload)),
        "$or" => arg
            .as_array()
            .into_iter()
            .flatten()
            .any(|f| reference(f, payload)),
        "$not" => !reference(arg, payload),
        path => field(get(payload, path), arg),
    })
}

/// The value at a dotted path; digits index arrays, nothing else does.
fn get<'v>(payload: &'v Value, path: &str) -> Option<&'v Value> {
    let mut at = payload;
    for seg in path.split('.') {
        at = match at {
            Value::Object(m) => m.get(seg)?,
            Value::Array(a) if seg.chars().all(|c| c.is_ascii_digit()) => {
                a.get(seg.parse::<usize>().ok()?)?
            }
            _ => return None,
        };
    }
    Some(at)
}

fn is_operator_object(v: &Value) -> bool {
    matches!(v, Value::Object(m) if !m.is_empty() && m.keys().all(|k| k.starts_with('$')))
}

fn field(x: Option<&Value>, cond: &Value) -> bool {
    if !is_operator_object(cond) {
        return same(x, cond);
    }
    let Value::Object(ops) = cond else {
        return false;
    };
    ops.iter().all(|(op, arg)| {
        let list = || arg.as_array().cloned().unwrap_or_default();
        match op.as_str() {
            "$eq" => same(x, arg),
            "$neq" => !same(x, arg),
            "$in" => list().iter().any(|a| same(x, a)),
            "$nin" => !list().iter().any(|a| same(x, a)),
            "$gt" => compare(x, arg) == Some(Ordering::Greater),
            "$gte" => matches!(compare(x, arg), Some(Ordering::Greater | Ordering::Equal)),
            "$lt" => compare(x, arg) == Some(Ordering::Less),
            "$lte" => matches!(compare(x, arg), Some(Ordering::Less | Ordering::Equal)),
            "$exists" => x.is_some() == (arg == &Value::Bool(true)),
            "$not" => !field(x, arg),
            other => unreachable!("the generator makes no {other}"),
        }
    })
}

/// Equality, a missing field equal to nothing; the generator's numbers are
/// exact in f64, so comparing as f64 is exact here.
fn same(x: Option<&Value>, lit: &Value) -> bool {
    let Some(x) = x else { return false };
    match (x, lit) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| same(Some(p), q))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && b.iter().all(|(k, q)| same(a.get(k), q))
        }
        _ => x == lit,
    }
}

fn compare(x: Option<&Value>, bound: &Value) -> Option<Ordering> {
    match (x?, bound) {
        (Value::Number(a), Value::Number(b)) => a.as_f64()?.partial_cmp(&b.as_f64()?),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        _ => None,
    }
}

// ---- Generators -------------------------------------------------------------

const PATHS: [&str; 8] = ["a", "b", "a.b", "a.0", "a.0.b", "c.d", "items.1", "items.x"];
const KEYS: [&str; 7] = ["a", "b", "c", "d", "items", "x", "0"];

fn scalar() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-2i64..=3).prop_map(Value::from),
        prop::sample::select(vec![1.0, 2.0, -0.0, 2.5, -1.5]).prop_map(Value::from),
        prop::sample::select(vec!["", "a", "b", "ab", "B", "1", "2024-05-01"])
            .prop_map(Value::from),
    ]
}

fn key() -> impl Strategy<Value = String> + Clone {
    prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned)
}

/// A literal: mostly a scalar, sometimes a flat array or object.
fn literal() -> impl Strategy<Value = Value> + Clone {
    prop_oneof![
        6 => scalar(),
        1 => vec(scalar(), 0..3).prop_map(Value::Array),
        1 => btree_map(key(), scalar(), 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
    ]
}

fn bound() -> impl Strategy<Value = Value> + Clone {
    scalar().prop_filter("a number or a string", |v| v.is_number() || v.is_string())
}

/// One or two field operators; `$not` only where `nested` allows it.
fn operators(nested: bool) -> BoxedStrategy<Value> {
    let plain = prop_oneof![
        literal().prop_map(|v| ("$eq", v)),
        literal().prop_map(|v| ("$neq", v)),
        vec(scalar(), 0..4).prop_map(|v| ("$in", Value::Array(v))),
        vec(scalar(), 0..4).prop_map(|v| ("$nin", Value::Array(v))),
        bound().prop_map(|v| ("$gt", v)),
        bound().prop_map(|v| ("$gte", v)),
        bound().prop_map(|v| ("$lt", v)),
        bound().prop_map(|v| ("$lte", v)),
        any::<bool>().prop_map(|b| ("$exists", Value::Bool(b))),
    ];
    let op = if nested {
        prop_oneof![8 => plain, 1 => operators(false).prop_map(|v| ("$not", v))].boxed()
    } else {
        plain.boxed()
    };
    vec(op, 1..3)
        .prop_map(|ops| {
            let map: Map<String, Value> = ops.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            Value::Object(map)
        })
        .boxed()
}

/// Up to two field conditions, each a literal or an operator object.
fn fields() -> impl Strategy<Value = Map<String, Value>> + Clone {
    let cond = prop_oneof![literal(), operators(true)];
    btree_map(prop::sample::select(PATHS.to_vec()), cond, 0..3)
        .prop_map(|m| m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// Filters nested two logical levels at most: within every bound by
/// construction (depth 8 at most, 59 conditions at most).
fn filter() -> impl Strategy<Value = Value> {
    fields()
        .prop_map(Value::Object)
        .prop_recursive(2, 12, 2, |inner| {
            let logical = prop_oneof![
                vec(inner.clone(), 1..3).prop_map(|v| ("$and", Value::Array(v))),
                vec(inner.clone(), 1..3).prop_map(|v| ("$or", Value::Array(v))),
                inner.prop_map(|v| ("$not", v)),
            ];
            (fields(), prop::option::of(logical)).prop_map(|(mut map, logical)| {
                if let Some((k, v)) = logical {
                    map.insert(k.to_owned(), v);
                }
                Value::Object(map)
            })
        })
}

/// Payloads over the same keys: mostly shaped like the paths, so that most
/// conditions find their field, sometimes any tree at all.
fn payload() -> impl Strategy<Value = Value> {
    let value = literal;
    let maybe = |s: BoxedStrategy<Value>| prop::option::weighted(0.85, s);
    let a = prop_oneof![
        value(),
        (maybe(value().boxed()), maybe(value().boxed()))
            .prop_map(|(b, zero)| object([("b", b), ("0", zero)])),
        (maybe(value().boxed()), value())
            .prop_map(|(b, second)| { Value::Array(vec![object([("b", b)]), second]) }),
    ];
    let c = prop_oneof![
        value(),
        maybe(value().boxed()).prop_map(|d| object([("d", d)]))
    ];
    let items = prop_oneof![
        vec(value(), 0..4).prop_map(Value::Array),
        (maybe(value().boxed()), maybe(value().boxed()))
            .prop_map(|(x, one)| object([("x", x), ("1", one)])),
    ];
    let shaped = (
        maybe(a.boxed()),
        maybe(value().boxed()),
        maybe(c.boxed()),
        maybe(items.boxed()),
    )
        .prop_map(|(a, b, c, items)| object([("a", a), ("b", b), ("c", c), ("items", items)]));
    let tree = scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(key(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    let any_tree =
        btree_map(key(), tree, 0..5).prop_map(|m| Value::Object(m.into_iter().collect()));
    prop_oneof![4 => shaped, 1 => any_tree]
}

/// An object of the entries that are present.
fn object<const N: usize>(entries: [(&str, Option<Value>); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_owned(), v?)))
            .collect(),
    )
}

/// Any JSON at all, keys leaning to operators and paths, for "never panics".
fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        scalar(),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::from),
    ];
    let any_key = prop_oneof![
        prop::sample::select(vec![
            "$and", "$or", "$not", "$eq", "$neq", "$in", "$nin", "$gt", "$gte", "$lt", "$lte",
            "$exists", "$ne", "$regex", "a", "a.0", "a..b", "", ".", "0", "$",
        ])
        .prop_map(str::to_owned),
        "[a-z0-9$.]{0,6}",
    ];
    leaf.prop_recursive(10, 64, 6, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            btree_map(any_key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

// ---- Properties ---------------------------------------------------------------

#[test]
fn matches_agrees_with_the_reference() {
    let mut runner = TestRunner::new(Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    });
    let (passed, failed) = (Cell::new(0u32), Cell::new(0u32));
    let outcome = runner.run(&(filter(), payload()), |(f, p)| {
        let compiled = PayloadFilter::parse(&f)
            .map_err(|e| TestCaseError::fail(format!("{f} refused at {}: {e}", e.at())))?;
        let want = reference(&f, &p);
        prop_assert_eq!(compiled.matches(&p), want, "filter {} payload {}", f, p);
        let count = if want { &passed } else { &failed };
        count.set(count.get() + 1);
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    // Both outcomes must be common, or the agreement says little.
    let (passed, failed) = (passed.get(), failed.get());
    assert!(
        passed >= 200 && failed >= 200,
        "{passed} passed, {failed} failed"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// One field, one operator object: each outcome then rests on a single
    /// comparison, so an off-by-one (`$gte` as `$gt`) cannot hide.
    #[test]
    fn single_conditions_agree(
        path in prop::sample::select(PATHS.to_vec()),
        ops in operators(true),
        p in payload(),
    ) {
        let f = serde_json::json!({ path: ops });
        let compiled = PayloadFilter::parse(&f)
            .map_err(|e| TestCaseError::fail(format!("{f} refused at {}: {e}", e.at())))?;
        prop_assert_eq!(compiled.matches(&p), reference(&f, &p), "filter {} payload {}", f, p);
    }

    #[test]
    fn parse_never_panics(v in arbitrary_json(), p in payload()) {
        match PayloadFilter::parse(&v) {
            Ok(f) => {
                let _ = f.matches(&p);
                let _ = f.matches(&v);
                let text = serde_json::to_string(&f).unwrap_or_default();
                prop_assert!(text.len() <= MAX_BYTES);
                let back: PayloadFilter = serde_json::from_str(&text)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(back.matches(&p), f.matches(&p));
            }
            Err(e) => {
                prop_assert!(e.at().starts_with("filter"), "{}", e.at());
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }

    #[test]
    fn size_bound_is_the_compact_json_length(
        strings in vec("\\PC{0,1500}", 1..6),
        numbers in vec(any::<f64>(), 0..40),
    ) {
        let v = serde_json::json!({"s": strings, "n": numbers});
        let len = serde_json::to_string(&v).map(|s| s.len()).unwrap_or(0);
        prop_assert_eq!(bounds::check(&v).is_ok(), len <= MAX_BYTES, "{} bytes", len);
    }
}
