//! Each plugin version shows its upload-check results (`versions[].checks`): the
//! checks it passed and the most fuel and memory its conformance run used,
//! against the production limits. Preloaded plugins never run conformance, so
//! theirs is null.

use hookgate_server::{FUEL_PER_DECISION, MEMORY_LIMIT_BYTES, UPLOAD_CHECKS};
use hookgate_tests::{TestGateway, upload_example};
use serde_json::Value;

/// Asserts `checks` lists all nine checks passed, and usage within the limits.
fn assert_passed_within_limits(checks: &Value) {
    let passed: Vec<&str> = checks["passed"]
        .as_array()
        .expect("checks.passed is a list")
        .iter()
        .map(|c| c.as_str().expect("a check's name"))
        .collect();
    assert_eq!(passed, UPLOAD_CHECKS, "{checks}");
    let memory_limit = MEMORY_LIMIT_BYTES as u64;
    assert_eq!(checks["fuel_limit"].as_u64(), Some(FUEL_PER_DECISION));
    assert_eq!(checks["memory_limit_bytes"].as_u64(), Some(memory_limit));
    let fuel = checks["fuel_used"].as_u64().expect("fuel_used");
    let memory = checks["memory_used_bytes"]
        .as_u64()
        .expect("memory_used_bytes");
    assert!(fuel > 0 && fuel <= FUEL_PER_DECISION, "{checks}");
    assert!(memory > 0 && memory <= memory_limit, "{checks}");
}

#[tokio::test]
async fn an_uploaded_version_shows_the_checks_it_passed_and_what_it_used() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let created = upload_example(&gw, &key, "codes", "json-error-code", 1).await;
    assert_passed_within_limits(&created["checks"]);

    let (s, shown) = gw
        .call("GET", "/v1/tenants/acme/plugins/codes", Some(&key), None)
        .await;
    assert_eq!(s, 200, "{shown}");
    let checks = &shown["versions"][0]["checks"];
    assert_passed_within_limits(checks);
    assert_eq!(
        checks, &created["checks"],
        "the upload's answer is what is stored"
    );

    let (s, list) = gw
        .call("GET", "/v1/tenants/acme/plugins", Some(&key), None)
        .await;
    assert_eq!(s, 200, "{list}");
    assert_eq!(&list["data"][0]["versions"][0]["checks"], checks);
}

#[tokio::test]
async fn a_preloaded_plugin_shows_no_check_results() {
    let gw = super::plugins_api::gateway_with_preloaded_codes().await;
    let key = gw.tenant("acme").await;
    let (s, shown) = gw
        .call("GET", "/v1/tenants/acme/plugins/codes", Some(&key), None)
        .await;
    assert_eq!(s, 200, "{shown}");
    assert_eq!(shown["source"], "preload");
    let version = shown["versions"][0].as_object().expect("a version");
    assert_eq!(version.get("checks"), Some(&Value::Null), "{shown}");
}
