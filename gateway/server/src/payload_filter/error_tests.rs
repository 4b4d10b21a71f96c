//! Refusals: each bound just at and just over its limit, each malformed
//! shape, and the place and message each error carries.

use serde_json::{Map, Value, json};

use super::{FilterErrorKind as Kind, MAX_BYTES, PayloadFilter};

/// The refusal's place and kind; panics when the filter is accepted.
fn refused(v: &Value) -> (String, Kind) {
    match PayloadFilter::parse(v) {
        Ok(_) => panic!("{v} was accepted"),
        Err(e) => (e.at().to_owned(), e.kind().clone()),
    }
}

fn accepted(v: &Value) -> bool {
    PayloadFilter::parse(v).is_ok()
}

#[test]
fn the_filter_must_be_an_object() {
    for v in [json!([]), json!("x"), json!(null), json!(1)] {
        assert_eq!(refused(&v), ("filter".into(), Kind::NotAnObject));
    }
}

#[test]
fn size_is_compact_json_up_to_4096_bytes() {
    let pad = |n: usize| json!({ "s": "x".repeat(n) });
    // `{"s":""}` is 8 bytes.
    assert_eq!(
        serde_json::to_string(&pad(4088)).map(|s| s.len()).ok(),
        Some(MAX_BYTES)
    );
    assert!(accepted(&pad(4088)));
    assert_eq!(refused(&pad(4089)), ("filter".into(), Kind::TooLarge));
    // Escapes count as written: `"` is 2 bytes, `\u{1}` is 6, `é` 2.
    let tricky =
        json!({ "s": format!("{}{}{}", "\"".repeat(1000), "\u{1}".repeat(300), "é".repeat(144)) });
    let len = serde_json::to_string(&tricky).map(|s| s.len()).unwrap_or(0);
    assert_eq!(len, 8 + 2000 + 1800 + 288);
    assert!(accepted(&tricky));
    let over =
        json!({ "s": format!("{}{}{}", "\"".repeat(1000), "\u{1}".repeat(300), "é".repeat(145)) });
    assert_eq!(refused(&over).1, Kind::TooLarge);
    // Whitespace in the text given is not counted.
    let spaced = format!("{{\"s\" :  \"{}\"  }}", "x".repeat(4088));
    let v: Value = serde_json::from_str(&spaced).unwrap_or_default();
    assert!(accepted(&v));
}

#[test]
fn depth_is_at_most_8_levels() {
    // The root is level 1; each `$and` adds an array and an object.
    let nest = |n: usize| (0..n).fold(json!({}), |inner, _| json!({ "$and": [inner] }));
    assert!(accepted(&nest(3))); // levels 1..=7
    let (at, kind) = refused(&nest(4));
    assert_eq!(kind, Kind::TooDeep);
    assert_eq!(at, "filter.$and[0].$and[0].$and[0].$and[0]");
    // Literal values count as well.
    let literal = |n: usize| (0..n).fold(json!(1), |inner, _| json!({ "a": inner }));
    assert!(accepted(&literal(8)));
    assert_eq!(
        refused(&literal(9)),
        ("filter.a.a.a.a.a.a.a.a".into(), Kind::TooDeep)
    );
    let list = json!({"x": {"$in": [[[[[[1]]]]]]}});
    assert!(accepted(&list));
    let list = json!({"x": {"$in": [[[[[[[1]]]]]]]}});
    assert_eq!(
        refused(&list),
        ("filter.x.$in[0][0][0][0][0][0]".into(), Kind::TooDeep)
    );
}

#[test]
fn at_most_64_conditions() {
    let fields = |n: usize| -> Value {
        let map: Map<String, Value> = (0..n).map(|i| (format!("k{i:02}"), json!(i))).collect();
        Value::Object(map)
    };
    assert!(accepted(&fields(64)));
    assert_eq!(
        refused(&fields(65)),
        ("filter.k64".into(), Kind::TooManyConditions)
    );
    // Each operator counts, and so do `$and`, `$or` and `$not`.
    let ops =
        |n: usize| json!({"$and": (0..n).map(|i| json!({"x": {"$gte": i}})).collect::<Vec<_>>()});
    assert!(accepted(&ops(63)));
    assert_eq!(
        refused(&ops(64)),
        ("filter.$and[63].x.$gte".into(), Kind::TooManyConditions)
    );
    // A field-level `$not` counts too: two conditions per item here.
    let nots = |n: usize| json!({"$and": vec![json!({"x": {"$not": {"$gt": 1}}}); n]});
    let mut just = nots(31);
    if let Some(m) = just.as_object_mut() {
        m.insert("y".into(), json!(1));
    }
    assert!(accepted(&just));
    assert_eq!(
        refused(&nots(32)),
        ("filter.$and[31].x.$not.$gt".into(), Kind::TooManyConditions)
    );
}

#[test]
fn lists_hold_at_most_100_values() {
    for op in ["$in", "$nin"] {
        let list = |n: usize| json!({ "status": { op: (0..n).collect::<Vec<_>>() } });
        assert!(accepted(&list(100)));
        let (at, kind) = refused(&list(101));
        assert_eq!(at, format!("filter.status.{op}"));
        assert_eq!(
            kind.to_string(),
            format!("`{op}` takes an array of at most 100 values")
        );
        assert_eq!(refused(&json!({ "status": { op: "paid" } })).0, at);
    }
}

#[test]
fn paths_are_bounded_and_have_no_empty_segment() {
    let segments = |n: usize| vec!["a"; n].join(".");
    assert!(accepted(&json!({ segments(16): 1 })));
    let long = segments(17);
    assert_eq!(
        refused(&json!({ &long: 1 })),
        (format!("filter.{long}"), Kind::TooManySegments)
    );
    assert!(accepted(&json!({ "a".repeat(256): 1 })));
    assert_eq!(refused(&json!({ "a".repeat(257): 1 })).1, Kind::PathTooLong);
    for bad in ["", "a..b", ".a", "a.", "."] {
        assert_eq!(
            refused(&json!({ bad: 1 })),
            (format!("filter.{bad}"), Kind::EmptySegment)
        );
    }
}

#[test]
fn unknown_and_misplaced_operators_are_named() {
    let (at, kind) = refused(&json!({"amount": {"$regex": "^1"}}));
    assert_eq!(at, "filter.amount.$regex");
    assert!(
        kind.to_string()
            .starts_with("unknown operator `$regex`; a filter takes")
    );
    let (_, kind) = refused(&json!({"amount": {"$ne": 1}}));
    assert_eq!(
        kind.to_string(),
        "unknown operator `$ne`; did you mean `$neq`?"
    );
    assert_eq!(
        refused(&json!({"$nor": []})),
        ("filter.$nor".into(), Kind::UnknownOperator("$nor".into()))
    );
    assert_eq!(
        refused(&json!({"$gt": 1})),
        (
            "filter.$gt".into(),
            Kind::FieldOperatorOutsideField("$gt".into())
        )
    );
    assert_eq!(
        refused(&json!({"a": {"$or": [{"b": 1}]}})),
        (
            "filter.a.$or".into(),
            Kind::LogicalOperatorInsideField("$or".into())
        )
    );
}

#[test]
fn an_object_mixing_operators_and_keys_is_refused() {
    let (at, kind) = refused(&json!({"amount": {"$gt": 1, "currency": "EUR"}}));
    assert_eq!(at, "filter.amount");
    assert_eq!(
        kind,
        Kind::MixedKeys {
            op: "$gt".into(),
            key: "currency".into()
        }
    );
    assert_eq!(
        refused(&json!({"a": {"$not": {"$gt": 1, "b": 2}}})).0,
        "filter.a.$not"
    );
    // The usual slip for a dotted path is caught instead of never matching.
    let (at, kind) = refused(&json!({"data": {"amount": {"$gt": 100}}}));
    assert_eq!(
        (at.as_str(), kind),
        (
            "filter.data.amount.$gt",
            Kind::OperatorInLiteral {
                op: "$gt".into(),
                path: "data.amount".into()
            }
        )
    );
    let (at, kind) = refused(&json!({"a": [{"$b": 1}]}));
    assert_eq!(at, "filter.a[0].$b");
    assert_eq!(
        kind.to_string(),
        "`$b` inside a literal value: to test a nested field, use its dotted path as the key, \
         as in {\"a.0\": {\"$b\": …}}; to match an object with `$` keys exactly, use `$eq`"
    );
}

#[test]
fn operands_of_the_wrong_kind() {
    let (at, kind) = refused(&json!({"$and": [{"type": "a"}, {"amount": {"$gt": true}}]}));
    assert_eq!(at, "filter.$and[1].amount.$gt");
    assert_eq!(kind.to_string(), "`$gt` takes a number or a string");
    for op in ["$gte", "$lt", "$lte"] {
        for bad in [json!(null), json!([1]), json!({"a": 1})] {
            assert_eq!(
                refused(&json!({"x": { op: bad }})).1,
                Kind::NotNumberOrString(op)
            );
        }
    }
    assert_eq!(
        refused(&json!({"x": {"$exists": 1}})),
        ("filter.x.$exists".into(), Kind::NotBool)
    );
    assert_eq!(
        refused(&json!({"x": {"$not": 1}})).1,
        Kind::NotOperatorObject
    );
    assert_eq!(
        refused(&json!({"x": {"$not": {}}})).1,
        Kind::NotOperatorObject
    );
    assert_eq!(
        refused(&json!({"x": {"$not": {"a": 1}}})).1,
        Kind::NotOperatorObject
    );
}

#[test]
fn logical_operators_take_filters() {
    for op in ["$and", "$or"] {
        let name = if op == "$and" { "$and" } else { "$or" };
        for bad in [json!([]), json!({}), json!("x")] {
            assert_eq!(
                refused(&json!({ op: bad })),
                (format!("filter.{op}"), Kind::NotFilterList(name))
            );
        }
        let (at, kind) = refused(&json!({ op: [{"a": 1}, 2] }));
        assert_eq!(at, format!("filter.{op}[1]"));
        assert_eq!(
            kind.to_string(),
            format!("`{op}` takes a non-empty array of filters (objects)")
        );
        assert_eq!(
            refused(&json!({ op: [{"a": {"$lt": null}}] })).0,
            format!("filter.{op}[0].a.$lt")
        );
    }
    assert_eq!(
        refused(&json!({"$not": [{"a": 1}]})),
        ("filter.$not".into(), Kind::NotFilter)
    );
    assert_eq!(
        refused(&json!({"$not": {"a": {"$in": 1}}})).0,
        "filter.$not.a.$in"
    );
}

#[test]
fn messages_name_the_limits() {
    let msg = |v: Value| {
        PayloadFilter::parse(&v)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert_eq!(
        msg(json!({"s": "x".repeat(5000)})),
        "a filter may be at most 4096 bytes as compact JSON"
    );
    assert_eq!(
        msg(json!({"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": 1}}}}}}}}})),
        "a filter may nest objects and arrays at most 8 levels deep"
    );
    assert_eq!(
        msg(json!({ vec!["a"; 17].join("."): 1 })),
        "a field path may have at most 16 segments"
    );
    assert_eq!(
        msg(json!({ "a".repeat(300): 1 })),
        "a field path may be at most 256 bytes"
    );
    assert!(msg(json!({"x": {"$exists": "yes"}})).contains("true or false"));
}
