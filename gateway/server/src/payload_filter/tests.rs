//! What filters mean: each operator, numbers and strings, missing against
//! null, paths into objects and arrays, and the serde face.

use serde_json::{Value, json};

use super::PayloadFilter;

fn filter(v: Value) -> PayloadFilter {
    PayloadFilter::parse(&v).unwrap_or_else(|e| panic!("{v} refused at {}: {e}", e.at()))
}

fn matches(f: Value, payload: Value) -> bool {
    filter(f).matches(&payload)
}

#[test]
fn a_literal_is_eq() {
    let f = json!({"type": "invoice.paid"});
    assert!(matches(f.clone(), json!({"type": "invoice.paid"})));
    assert!(!matches(f.clone(), json!({"type": "invoice.created"})));
    assert!(!matches(f, json!({})));
    assert!(matches(json!({"ok": true}), json!({"ok": true})));
    assert!(!matches(json!({"ok": true}), json!({"ok": "true"})));
}

#[test]
fn numbers_compare_by_value() {
    assert!(matches(json!({"n": 1}), json!({"n": 1.0})));
    assert!(matches(json!({"n": 1.0}), json!({"n": 1})));
    assert!(matches(json!({"n": {"$in": [1.0]}}), json!({"n": 1})));
    assert!(matches(json!({"n": 0}), json!({"n": -0.0})));
    assert!(matches(json!({"n": -3}), json!({"n": -3.0})));
    assert!(!matches(json!({"n": 1}), json!({"n": 1.5})));
    assert!(!matches(json!({"n": 1}), json!({"n": "1"})));
    // Exact past 2^53: no rounding of the integer to a float.
    let big = 9_007_199_254_740_993_u64;
    assert!(!matches(
        json!({"n": 9_007_199_254_740_992.0}),
        json!({ "n": big })
    ));
    assert!(matches(
        json!({"n": {"$gt": 9_007_199_254_740_992.0}}),
        json!({ "n": big })
    ));
    assert!(matches(
        json!({"n": {"$lt": 18_446_744_073_709_551_616.0}}),
        json!({ "n": u64::MAX })
    ));
    assert!(matches(
        json!({ "n": i64::MIN }),
        json!({"n": -9_223_372_036_854_775_808.0})
    ));
    assert!(matches(json!({"n": {"$lt": u64::MAX}}), json!({"n": -1})));
}

#[test]
fn neq_is_the_negation_of_eq() {
    let f = json!({"mode": {"$neq": "test"}});
    assert!(!matches(f.clone(), json!({"mode": "test"})));
    assert!(matches(f.clone(), json!({"mode": "live"})));
    assert!(matches(f.clone(), json!({"mode": 1})));
    assert!(matches(f.clone(), json!({})));
    assert!(matches(f, json!({"mode": null})));
    assert!(!matches(json!({"n": {"$neq": 2}}), json!({"n": 2.0})));
}

#[test]
fn in_and_nin_test_membership_of_the_value() {
    let f = json!({"status": {"$in": ["paid", "refunded", 3]}});
    assert!(matches(f.clone(), json!({"status": "paid"})));
    assert!(matches(f.clone(), json!({"status": 3.0})));
    assert!(!matches(f.clone(), json!({"status": "open"})));
    assert!(!matches(f.clone(), json!({})));
    // No traversal: an array field is one value, not its elements.
    assert!(!matches(f, json!({"status": ["paid"]})));
    assert!(matches(
        json!({"tags": {"$in": [["a", "b"]]}}),
        json!({"tags": ["a", "b"]})
    ));
    let f = json!({"status": {"$nin": ["void", "draft"]}});
    assert!(matches(f.clone(), json!({"status": "paid"})));
    assert!(!matches(f.clone(), json!({"status": "void"})));
    assert!(matches(f, json!({})));
    assert!(!matches(json!({"x": {"$in": []}}), json!({"x": 1})));
    assert!(matches(json!({"x": {"$nin": []}}), json!({"x": 1})));
}

#[test]
fn orderings_on_numbers() {
    let cases = [
        ("$gt", [false, false, true]),
        ("$gte", [false, true, true]),
        ("$lt", [true, false, false]),
        ("$lte", [true, true, false]),
    ];
    for (op, want) in cases {
        for (amount, expect) in [99.5, 100.0, 100.5].into_iter().zip(want) {
            let f = json!({"amount": {op: 100}});
            assert_eq!(
                matches(f, json!({ "amount": amount })),
                expect,
                "{amount} {op} 100"
            );
        }
        // Other types and a missing field are false for every ordering.
        for other in [json!({"amount": "200"}), json!({"amount": null}), json!({})] {
            assert!(!matches(json!({"amount": {op: 100}}), other), "{op}");
        }
    }
}

#[test]
fn orderings_on_strings_are_byte_wise() {
    let after =
        |bound: &str, value: &str| matches(json!({"t": {"$gt": bound}}), json!({"t": value}));
    assert!(after("2024-05-01T00:00:00Z", "2024-05-01T00:00:01Z"));
    assert!(!after("2024-05-01T00:00:00Z", "2024-04-30T23:59:59Z"));
    assert!(after("Z", "a"));
    assert!(after("z", "é"));
    assert!(after("ab", "abc"));
    assert!(after("10", "9"), "strings order as strings, not as numbers");
    assert!(!matches(json!({"t": {"$gt": "1"}}), json!({"t": 2})));
    assert!(matches(json!({"t": {"$lte": "b"}}), json!({"t": "b"})));
}

#[test]
fn exists_and_null() {
    assert!(matches(json!({"x": {"$exists": true}}), json!({"x": null})));
    assert!(!matches(json!({"x": {"$exists": true}}), json!({})));
    assert!(matches(json!({"x": {"$exists": false}}), json!({})));
    assert!(!matches(json!({"x": {"$exists": false}}), json!({"x": 0})));
    // `null` is a value: it matches an explicit null, not a missing field.
    assert!(matches(json!({"x": null}), json!({"x": null})));
    assert!(!matches(json!({"x": null}), json!({})));
    assert!(!matches(json!({"x": null}), json!({"x": 0})));
    assert!(matches(json!({"x": {"$neq": null}}), json!({})));
    assert!(matches(json!({"x": {"$in": [null]}}), json!({"x": null})));
}

#[test]
fn several_operators_all_hold() {
    let f = json!({"n": {"$gte": 10, "$lt": 20}});
    for (n, want) in [(9, false), (10, true), (19, true), (20, false)] {
        assert_eq!(matches(f.clone(), json!({ "n": n })), want, "{n}");
    }
    let f = json!({"n": {"$exists": true, "$nin": [15]}});
    assert!(matches(f.clone(), json!({"n": 14})));
    assert!(!matches(f.clone(), json!({"n": 15})));
    assert!(!matches(f, json!({})));
}

#[test]
fn field_not_negates_its_operator_object() {
    let f = json!({"amount": {"$not": {"$gt": 100}}});
    assert!(matches(f.clone(), json!({"amount": 50})));
    assert!(!matches(f.clone(), json!({"amount": 150})));
    assert!(matches(f.clone(), json!({})));
    assert!(matches(f, json!({"amount": "150"})));
    let f = json!({"n": {"$not": {"$gte": 10, "$lt": 20}}});
    assert!(matches(f.clone(), json!({"n": 5})));
    assert!(!matches(f, json!({"n": 15})));
}

#[test]
fn logical_operators() {
    let p = json!({"type": "invoice.paid", "amount": 120, "livemode": true});
    let yes = json!({"type": "invoice.paid"});
    let no = json!({"type": "invoice.void"});
    assert!(matches(
        json!({"$and": [yes, {"amount": {"$gt": 100}}]}),
        p.clone()
    ));
    assert!(!matches(json!({"$and": [yes, no]}), p.clone()));
    assert!(matches(json!({"$or": [no, yes]}), p.clone()));
    assert!(!matches(json!({"$or": [no, {"amount": 1}]}), p.clone()));
    assert!(matches(json!({"$not": no}), p.clone()));
    assert!(!matches(json!({"$not": yes}), p.clone()));
    // Keys of one object all hold; logical keys and fields mix.
    assert!(matches(
        json!({"$or": [no, yes], "livemode": true}),
        p.clone()
    ));
    assert!(!matches(
        json!({"$or": [no, yes], "livemode": false}),
        p.clone()
    ));
    let nested = json!({"$and": [{"$or": [no, {"$not": {"livemode": false}}]}, {"amount": 120}]});
    assert!(matches(nested, p.clone()));
    // The empty filter passes everything; its negation nothing.
    assert!(matches(json!({}), p.clone()));
    assert!(matches(json!({}), json!("not even an object")));
    assert!(!matches(json!({"$not": {}}), p));
}

#[test]
fn literal_objects_and_arrays_are_exact() {
    let f = json!({"meta": {"plan": "pro", "seats": 5}});
    assert!(matches(
        f.clone(),
        json!({"meta": {"seats": 5.0, "plan": "pro"}})
    ));
    assert!(!matches(f.clone(), json!({"meta": {"plan": "pro"}})));
    assert!(!matches(
        f.clone(),
        json!({"meta": {"plan": "pro", "seats": 5, "x": 1}})
    ));
    assert!(matches(json!({"meta": {}}), json!({"meta": {}})));
    assert!(!matches(json!({"meta": {}}), json!({"meta": {"a": 1}})));
    assert!(matches(
        json!({"tags": ["a", "b"]}),
        json!({"tags": ["a", "b"]})
    ));
    assert!(!matches(
        json!({"tags": ["a", "b"]}),
        json!({"tags": ["b", "a"]})
    ));
    assert!(!matches(json!({"tags": "a"}), json!({"tags": ["a"]})));
    // Through `$eq`, `$` keys are literal too.
    let f = json!({"ref": {"$eq": {"$id": 7}}});
    assert!(matches(f.clone(), json!({"ref": {"$id": 7}})));
    assert!(!matches(f, json!({"ref": {"$id": 8}})));
}

#[test]
fn paths_reach_into_objects_and_arrays() {
    let p = json!({
        "data": {"customer": {"id": "cus_1"}, "$meta": 1, "0": "zero"},
        "items": [{"sku": "A"}, {"sku": "B"}],
        "n": 5,
    });
    let m = |f: Value| matches(f, p.clone());
    assert!(m(json!({"data.customer.id": "cus_1"})));
    assert!(m(json!({"items.0.sku": "A"})));
    assert!(m(json!({"items.1.sku": "B"})));
    assert!(m(json!({"items.01.sku": "B"})), "digits index by value");
    assert!(m(json!({"items.2.sku": {"$exists": false}})));
    assert!(
        m(json!({"data.0": "zero"})),
        "a digit segment is also a key"
    );
    assert!(
        m(json!({"data.$meta": 1})),
        "only a whole key starting with $ is an operator"
    );
    // No traversal into arrays, no stepping into scalars.
    assert!(m(json!({"items.sku": {"$exists": false}})));
    assert!(m(json!({"n.x": {"$exists": false}})));
    assert!(m(json!({"items.-1": {"$exists": false}})));
    assert!(m(
        json!({"items.99999999999999999999999": {"$exists": false}})
    ));
    // A payload may itself be an array.
    assert!(matches(json!({"0.id": 1}), json!([{"id": 1}])));
}

#[test]
fn a_deep_payload_costs_no_more_than_the_filter() {
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!({ "a": deep });
    }
    let payload = json!({ "x": deep });
    assert!(!matches(json!({"x": {"a": 1}}), payload.clone()));
    assert!(matches(json!({"x.a.a.a": {"$exists": true}}), payload));
}

#[test]
fn serde_round_trip_keeps_the_json() {
    let v = json!({"$or": [{"amount": {"$gte": 100, "$lt": 1.5e3}}, {"tags": ["a"]}]});
    let f = filter(v.clone());
    assert_eq!(serde_json::to_value(&f).unwrap(), v);
    let text = serde_json::to_string(&f).unwrap_or_default();
    assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(v.clone()));
    let back: PayloadFilter = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, f);
    assert_eq!(back.clone(), f);
    assert!(back.matches(&json!({"amount": 100})));
    assert_eq!(format!("{f:?}"), format!("PayloadFilter({v:?})"));
    // Equality is of the JSON form: same meaning, different JSON, unequal.
    assert_ne!(filter(json!({"n": 1})), filter(json!({"n": 1.0})));
}

#[test]
fn deserialize_validates() {
    let err = serde_json::from_str::<PayloadFilter>(
        r#"{"$and": [{"type": "a"}, {"amount": {"$gt": true}}]}"#,
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("filter.$and[1].amount.$gt: `$gt` takes a number or a string"),
        "{err}"
    );
    assert!(serde_json::from_str::<PayloadFilter>("[]").is_err());
    // Inside a record, as a stored endpoint would hold it.
    #[derive(serde::Deserialize)]
    struct Record {
        #[serde(rename = "filter")]
        _filter: Option<PayloadFilter>,
    }
    assert!(serde_json::from_str::<Record>(r#"{"filter": {"a": {"$regex": "x"}}}"#).is_err());
    assert!(serde_json::from_str::<Record>(r#"{"filter": {"a": 1}}"#).is_ok());
    assert!(serde_json::from_str::<Record>(r#"{"filter": null}"#).is_ok());
}

/// The examples of payload-filters.md, so the docs cannot drift.
#[test]
fn the_documented_examples_hold() {
    let invoice =
        json!({"data.customer.id": "cus_42", "data.currency": "EUR", "data.amount": {"$gt": 100}});
    let paid = |amount: Value| json!({"data": {"customer": {"id": "cus_42"}, "currency": "EUR", "amount": amount}});
    assert!(matches(invoice.clone(), paid(json!(100.5))));
    assert!(!matches(invoice.clone(), paid(json!(100))));
    assert!(!matches(invoice, paid(json!("250"))));

    assert!(!matches(json!({"livemode": true}), json!({})));
    assert!(matches(json!({"test": {"$neq": true}}), json!({})));
    assert!(!matches(
        json!({"test": {"$neq": true}}),
        json!({"test": true})
    ));

    let orders = json!({
        "$or": [{"data.shipping.country": {"$in": ["DE", "AT"]}}, {"data.total": {"$gte": 1000}}],
        "data.status": {"$neq": "cancelled"}
    });
    let order = |country: &str, total: i64, status: &str| json!({"data": {"shipping": {"country": country}, "total": total, "status": status}});
    assert!(matches(orders.clone(), order("AT", 5, "paid")));
    assert!(matches(orders.clone(), order("FR", 1000, "paid")));
    assert!(!matches(orders.clone(), order("FR", 999, "paid")));
    assert!(!matches(orders, order("DE", 5, "cancelled")));

    let missing_or_null = json!({"$or": [{"x": null}, {"x": {"$exists": false}}]});
    assert!(matches(missing_or_null.clone(), json!({})));
    assert!(matches(missing_or_null.clone(), json!({"x": null})));
    assert!(!matches(missing_or_null, json!({"x": 0})));
    assert!(matches(
        json!({"n": 1}),
        serde_json::from_str("{\"n\": 1e0}").unwrap_or_default()
    ));
    assert!(!matches(json!({"n": 1}), json!({"n": true})));

    let err = PayloadFilter::parse(&json!({"$and": [{}, {"data.amount": {"$gt": [100]}}]})).err();
    assert_eq!(
        err.map(|e| (e.at().to_owned(), e.to_string())),
        Some((
            "filter.$and[1].data.amount.$gt".to_owned(),
            "`$gt` takes a number or a string".to_owned()
        ))
    );
}
