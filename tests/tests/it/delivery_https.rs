//! HTTPS delivery: a receiver whose certificate comes from a test CA is reached
//! with `tls.extra_ca_file`, and refused (a TLS failure, retried) without it.

use std::sync::Arc;
use std::time::Duration;

use hookgate_tests::receiver::Receiver;
use hookgate_tests::tls::test_ca_and_acceptor;
use hookgate_tests::{TestGateway, is_final, test_config};
use serde_json::json;

#[tokio::test]
async fn https_with_and_without_the_test_ca() {
    let (ca_pem, acceptor) = test_ca_and_acceptor();
    let rx = Receiver::start_with_tls(Vec::new(), Some(acceptor)).await;

    let dir = Arc::new(tempfile::tempdir().unwrap());
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, ca_pem).unwrap();
    let mut config = test_config(&dir.path().join("data"));
    config.tls.extra_ca_file = Some(ca_file);
    let gw = TestGateway::start_with(config, Arc::clone(&dir), Default::default()).await;
    let (key, _, dlv) = gw.one_delivery(&rx.https_url(), json!({})).await;
    let d = gw
        .wait_delivery("acme", &key, &dlv, Duration::from_secs(30), is_final)
        .await;
    assert_eq!(d["state"], "succeeded", "{d}");
    assert_eq!(rx.received().len(), 1);
    gw.stop().await;

    // The same receiver, without the CA: the handshake fails and is retried.
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let gw = TestGateway::start_with(
        test_config(dir.path()),
        Arc::clone(&dir),
        Default::default(),
    )
    .await;
    let policy = json!({"policy": {"jitter": "none", "base_ms": 100, "max_attempts": 2}});
    let (key, _, dlv) = gw.one_delivery(&rx.https_url(), policy).await;
    let d = gw
        .wait_delivery("acme", &key, &dlv, Duration::from_secs(30), is_final)
        .await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("max_attempts")),
        "{d}"
    );
    let log = d["attempt_log"].as_array().unwrap();
    assert!(
        log.iter()
            .all(|a| a["error_kind"] == "tls" && a["verdict"] == "retry"),
        "{d}"
    );
    assert_eq!(
        rx.received().len(),
        1,
        "no request got through without the CA"
    );
}
