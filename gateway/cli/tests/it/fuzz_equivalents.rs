//! Proptest equivalents of the cargo-fuzz targets in `gateway/server/fuzz/`, run in the
//! normal suite: each parser takes arbitrary input without panicking and keeps
//! its own invariants.

use hookgate_server::normalize_endpoint_url;
use hookgate_server::{PolicySpec, parse_retry_after};
use hookgate_server::{SigningSecret, sign, verify};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn retry_after_never_panics(value in ".{0,40}", date in proptest::option::of(".{0,40}"), digits in "[0-9]{1,30}") {
        let _ = parse_retry_after(&value, date.as_deref(), 1_700_000_000_000);
        let _ = parse_retry_after(&digits, None, 1_700_000_000_000);
    }

    #[test]
    fn policy_json_resolves_or_names_a_field(
        base in prop_oneof![Just(serde_json::json!(-1)), Just(serde_json::json!("30s")), any::<i64>().prop_map(serde_json::Value::from)],
        factor in any::<f64>(),
        attempts in any::<i64>(),
        jitter in "[a-z]{0,12}",
        schedule in proptest::collection::vec(any::<i64>(), 0..4),
    ) {
        let v = serde_json::json!({"base_ms": base, "factor": factor, "max_attempts": attempts, "jitter": jitter, "schedule_ms": schedule});
        if let Err(e) = PolicySpec::from_json(&v).and_then(|s| s.resolve()) {
            prop_assert!(e.field.starts_with("policy"), "{e:?}");
        }
    }

    #[test]
    fn ingest_bodies_keep_their_payload(event_type in "[a-z.]{0,10}", payload in "[ -~]{0,60}", raw in proptest::collection::vec(any::<u8>(), 0..80)) {
        let body = format!(r#"{{"event_type":"{event_type}","payload":{payload}}}"#);
        if let Ok(b) = hookgate_server::parse_ingest_body(body.as_bytes(), 128) {
            prop_assert!(body.contains(b.payload.get()));
        }
        let _ = hookgate_server::parse_ingest_body(&raw, 128);
    }

    #[test]
    fn signatures_verify_only_when_made_by_sign(body in proptest::collection::vec(any::<u8>(), 0..200), header in ".{0,120}") {
        let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let _ = verify(&secret, "msg_1", 1_614_265_330, &body, &header);
        let good = sign(std::slice::from_ref(&secret), "msg_1", 1_614_265_330, &body);
        prop_assert!(verify(&secret, "msg_1", 1_614_265_330, &body, &good));
        prop_assert!(!verify(&secret, "msg_2", 1_614_265_330, &body, &good));
        let _ = SigningSecret::parse(&header);
    }

    #[test]
    fn url_normalization_is_idempotent(url in "(https?|ftp|HTTP)://[a-zA-Z0-9.:\\[\\]@%-]{0,30}(/[ -~]{0,20})?") {
        if let Ok(u) = normalize_endpoint_url(&url, 4096) {
            prop_assert_eq!(normalize_endpoint_url(u.as_str(), 8192).unwrap(), u);
        }
    }

    #[test]
    fn config_text_loads_or_is_refused(key in "[a-z_.]{1,20}", value in "[ -~]{0,20}") {
        let text = format!("{key} = {value}\n");
        if let Err(e) = hookgate_server::Config::from_toml_str(&text, Vec::new()) {
            prop_assert!(!e.to_string().is_empty());
        }
    }
}
