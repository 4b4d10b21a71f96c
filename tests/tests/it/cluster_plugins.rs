//! Two gateways on one PostgreSQL database: a plugin uploaded through one is
//! loaded by the other from the bytes in the database (told by a notification,
//! or at worst by its next change), and decides the deliveries the other
//! attempts. The delay is polled for with a generous deadline and reported.

use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::{Backend, TestGateway, body_receiver, is_final, upload_example};
use serde_json::json;
use tokio::time::Instant;

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_uploaded_through_one_gateway_decides_on_another() {
    let bed = Backend::Postgres.bed().await;
    let other = bed.another_node().expect("a shared store");
    let a = TestGateway::start_bed(bed, RunOptions::default()).await;
    let b = TestGateway::start_bed(other, RunOptions::default()).await;
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
