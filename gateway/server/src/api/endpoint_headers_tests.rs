//! Custom header validation: what a tenant may set, how it is stored, and how
//! sensitive values stay hidden.

use std::collections::BTreeMap;

use super::{MASK, MAX_HEADERS, shown, validate};
use crate::store::EndpointHeader;

fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn refused_field(pairs: &[(&str, &str)], sensitive: &[&str]) -> String {
    let sensitive: Vec<String> = sensitive.iter().map(|s| (*s).to_owned()).collect();
    let err = validate(&given(pairs), &sensitive, &[]).unwrap_err();
    assert_eq!(
        (err.status().as_u16(), err.code()),
        (422, "validation_failed"),
        "{err:?}"
    );
    err.field.unwrap_or_default()
}

#[test]
fn names_are_stored_in_lower_case_and_credentials_are_sensitive() {
    let out = validate(
        &given(&[
            ("X-Api-Key", "k1"),
            ("Authorization", "Bearer t"),
            ("X-Team", "orders"),
        ]),
        &["x-api-key".to_owned()],
        &[],
    )
    .unwrap();
    let names: Vec<(&str, bool)> = out.iter().map(|h| (h.name.as_str(), h.sensitive)).collect();
    assert_eq!(
        names,
        [
            ("authorization", true),
            ("x-api-key", true),
            ("x-team", false)
        ]
    );
    let view = shown(&out);
    assert_eq!(view["x-api-key"], MASK);
    assert_eq!(view["authorization"], MASK);
    assert_eq!(view["x-team"], "orders");
}

#[test]
fn headers_hookgate_owns_and_malformed_ones_are_refused_by_name() {
    for owned in [
        "webhook-id",
        "Webhook-Signature",
        "content-type",
        "Host",
        "user-agent",
        "transfer-encoding",
    ] {
        assert_eq!(
            refused_field(&[(owned, "x")], &[]),
            format!("headers.{owned}")
        );
    }
    assert_eq!(refused_field(&[("bad name", "x")], &[]), "headers.bad name");
    assert_eq!(
        refused_field(&[("x-a", "line\r\nbreak")], &[]),
        "headers.x-a"
    );
    assert_eq!(refused_field(&[("x-a", " padded")], &[]), "headers.x-a");
    assert_eq!(refused_field(&[("x-a", "caf\u{e9}")], &[]), "headers.x-a");
    assert_eq!(
        refused_field(&[("X-A", "1"), ("x-a", "2")], &[]),
        "headers.x-a"
    );
    assert_eq!(
        refused_field(&[("x-a", "1")], &["x-b"]),
        "sensitive_headers[0]"
    );
    let many: Vec<(String, String)> = (0..=MAX_HEADERS)
        .map(|i| (format!("x-{i}"), "v".to_owned()))
        .collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(refused_field(&many, &[]), "headers");
    let long = "v".repeat(5000);
    assert_eq!(refused_field(&[("x-a", &long)], &[]), "headers");
    assert_eq!(
        refused_field(&[("x-a", MASK)], &[]),
        "headers.x-a",
        "a mask with nothing stored"
    );
}

#[test]
fn a_masked_value_keeps_the_stored_one_and_a_secret_stays_masked_until_replaced() {
    let stored = vec![EndpointHeader {
        name: "x-api-key".into(),
        value: "k1".into(),
        sensitive: true,
    }];
    // Sent back as read, without the sensitive list: still the stored secret, still masked.
    let out = validate(&given(&[("x-api-key", MASK)]), &[], &stored).unwrap();
    assert_eq!(out, stored);
    // The same value given in clear does not reveal it either.
    let out = validate(&given(&[("x-api-key", "k1")]), &[], &stored).unwrap();
    assert!(out[0].sensitive);
    // A new value, not marked: shown.
    let out = validate(&given(&[("x-api-key", "k2")]), &[], &stored).unwrap();
    assert_eq!((out[0].value.as_str(), out[0].sensitive), ("k2", false));
    // Removed, while the list still names it: fine.
    let out = validate(&given(&[]), &["x-api-key".to_owned()], &stored).unwrap();
    assert!(out.is_empty());
}
