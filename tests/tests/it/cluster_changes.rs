//! Two gateways on one PostgreSQL database: what changes through one is in
//! force on the other. A plugin uploaded through one is loaded by the other
//! from the bytes in the database and decides the deliveries it attempts; an
//! endpoint disabled through one gets no more deliveries from events sent to the
//! other; a tenant key rotated through one stops working on the other; a
//! transform uploaded through one, and its next version, shape what the other
//! sends. Each delay is polled for with a generous deadline and reported.

use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::verify::verify_with_official_library;
use hookgate_tests::{Backend, TestGateway, body_receiver, is_final, upload_example};
use serde_json::{Value, json};
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
    let (status, answer) = create_endpoint_once_loaded(&b, &key, &body, uploaded).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transform_uploaded_through_one_gateway_shapes_what_another_sends() {
    let (a, b) = two_gateways().await;
    let key = a.tenant("acme").await;
    upload_example(&a, &key, "shape", "rename-fields", 1).await;
    let uploaded = Instant::now();

    // Gateway b accepts the binding only once it has the transform loaded.
    let rx = Receiver::start(vec![Reply::status(200), Reply::status(200)]).await;
    let body = json!({"url": rx.url(), "transform": "shape",
                      "metadata": {"rename.n": "number"}});
    let (status, ep) = create_endpoint_once_loaded(&b, &key, &body, uploaded).await;
    assert_eq!(status, 201, "gateway b never loaded the transform: {ep}");
    let loaded_after = uploaded.elapsed();
    let secret = ep["secret"].as_str().unwrap().to_owned();

    // Either gateway may attempt it: both run version 1.
    let first = shaped_delivery(&b, &key, 1).await;
    assert_eq!(first["transform"]["plugin"], "shape@1", "{first}");

    // Version 2, uploaded through a, becomes b's active version.
    upload_example(&a, &key, "shape", "slack-message", 2).await;
    let plugin = "/v1/tenants/acme/plugins/shape";
    let active_on_b = || async {
        let (s, view) = b.call("GET", plugin, Some(&key), None).await;
        let loaded = view["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|v| v["version"] == 2 && v["loaded"] == true);
        s == 200 && view["active_version"] == 2 && loaded
    };
    let moved_after = within(active_on_b).await;
    assert!(
        moved_after.is_some(),
        "gateway b never made version 2 active"
    );

    // Only b is left to attempt: it sends version 2's shape.
    a.stop().await;
    let second = shaped_delivery(&b, &key, 2).await;
    assert_eq!(second["transform"]["plugin"], "shape@2", "{second}");
    let got = rx.wait_for(2, WAIT).await;
    let bodies: Vec<Value> = got
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(
        bodies,
        [json!({"number": 1}), json!({"text": "*order.paid*\nn: 2"})]
    );
    verify_with_official_library(&secret, &got);
    println!(
        "gateway b loaded the transform {loaded_after:?} after a stored it, and its version 2 {moved_after:?} after"
    );
}

/// Creates an endpoint of `body` through `gw`, again and again until it is
/// created or [`WAIT`] after `since` (a binding is refused until the plugin it
/// names is loaded); the last status and answer.
async fn create_endpoint_once_loaded(
    gw: &TestGateway,
    key: &str,
    body: &Value,
    since: Instant,
) -> (u16, Value) {
    let path = "/v1/tenants/acme/endpoints";
    loop {
        let (s, answer) = gw.call("POST", path, Some(key), Some(body.clone())).await;
        if s == 201 || Instant::now() >= since + WAIT {
            return (s, answer);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Sends `{"n": n}` through `gw` and waits for its delivery to succeed; its
/// last attempt.
async fn shaped_delivery(gw: &TestGateway, key: &str, n: u64) -> Value {
    let ev = gw.event("acme", key, "order.paid", json!({"n": n})).await;
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let d = gw.wait_delivery("acme", key, dlv, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    d["attempt_log"].as_array().unwrap().last().unwrap().clone()
}
