//! Two gateways on one PostgreSQL database: what changes through one is in
//! force on the other. A plugin uploaded through one is loaded by the other
//! from the bytes in the database and decides the deliveries it attempts; an
//! endpoint disabled through one gets no more deliveries from events sent to the
//! other; a tenant key rotated through one stops working on the other. Each
//! delay is polled for with a generous deadline and reported.

use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::{Backend, TestGateway, body_receiver, is_final, upload_example};
use serde_json::json;
use tokio::time::Instant;

const WAIT: Duration = Duration::from_secs(30);

/// Two gateways on one scratch database.
async fn two_gateways() -> (TestGateway, TestGateway) {
    let bed = Backend::Postgres.bed().await;
    let other = bed.another_node().expect("a shared store");
    let a = TestGateway::start_bed(bed, RunOptions::default()).await;
    let b = TestGateway::start_bed(other, RunOptions::default()).await;
    (a, b)
}

/// Polls `check` until it holds or [`WAIT`] passes; returns how long it took,
/// or `None` if it never held.
async fn within<F: Future<Output = bool>>(check: impl Fn() -> F) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < WAIT {
        if check().await {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_disabled_and_a_key_rotated_through_one_gateway_hold_on_the_other() {
    let (a, b) = two_gateways().await;
    let key = a.tenant("acme").await;
    let ep = a
        .endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/hook"}))
        .await;
    let ev = b.event("acme", &key, "order.paid", json!({"n": 1})).await;
    assert_eq!(ev["deliveries"].as_array().map(Vec::len), Some(1), "{ev}");

    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    let (s, patched) = a
        .call("PATCH", &path, Some(&key), Some(json!({"disabled": true})))
        .await;
    assert_eq!(s, 200, "{patched}");
    let no_deliveries = || async {
        let ev = b.event("acme", &key, "order.paid", json!({"n": 2})).await;
        ev["deliveries"].as_array().is_some_and(Vec::is_empty)
    };
    let disabled_after = within(no_deliveries).await;
    assert!(
        disabled_after.is_some(),
        "gateway b still fans out to the disabled endpoint"
    );

    let (s, rotated) = a
        .call(
            "POST",
            "/v1/tenants/acme/rotate-key",
            Some(hookgate_tests::ADMIN),
            None,
        )
        .await;
    assert_eq!(s, 200, "{rotated}");
    let new_key = rotated["api_key"].as_str().unwrap().to_owned();
    let old_refused = || async {
        b.call("GET", "/v1/tenants/acme/endpoints", Some(&key), None)
            .await
            .0
            == 401
    };
    let rotated_after = within(old_refused).await;
    assert!(rotated_after.is_some(), "gateway b still takes the old key");
    let (s, _) = b
        .call("GET", "/v1/tenants/acme/endpoints", Some(&new_key), None)
        .await;
    assert_eq!(s, 200);
    println!(
        "gateway b: endpoint disabled after {disabled_after:?}, old key refused after {rotated_after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_uploaded_through_one_gateway_decides_on_another() {
    let (a, b) = two_gateways().await;
    let key = a.tenant("acme").await;
    upload_example(&a, &key, "coded", "json-error-code", 1).await;
    let uploaded = Instant::now();

    // Gateway b accepts a binding only once it has the plugin loaded.
    let url = body_receiver(vec![(400, r#"{"error":"try_again"}"#)]).await;
    let body = json!({"url": url, "plugin": "coded"});
    let path = "/v1/tenants/acme/endpoints";
    let deadline = uploaded + WAIT;
    let (status, answer) = loop {
        let (s, answer) = b.call("POST", path, Some(&key), Some(body.clone())).await;
        if s == 201 || Instant::now() >= deadline {
            break (s, answer);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status, 201, "gateway b never loaded the plugin: {answer}");
    let loaded_after = uploaded.elapsed();
    let (s, listed) = b
        .call("GET", "/v1/tenants/acme/plugins/coded", Some(&key), None)
        .await;
    let loaded = listed["versions"][0]["loaded"].as_bool();
    assert_eq!(
        (s, listed["active_version"].as_u64(), loaded),
        (200, Some(1), Some(true)),
        "{listed}"
    );

    // Only b is left to attempt: the plugin decides there.
    a.stop().await;
    let ev = b.event("acme", &key, "order.paid", json!({"n": 1})).await;
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let d = b.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["attempts"].as_u64()),
        (Some("succeeded"), Some(2)),
        "{d}"
    );
    let first = &d["attempt_log"][0];
    assert_eq!(
        (first["verdict"].as_str(), first["decided_by"].as_str()),
        (Some("retry"), Some("plugin:coded@1")),
        "{d}"
    );
    println!("gateway b loaded the plugin {loaded_after:?} after gateway a stored it");
}
