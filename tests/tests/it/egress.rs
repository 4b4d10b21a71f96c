//! The egress allow-list (`outbound.allow_only`) end to end: an endpoint whose
//! host matches no entry is refused at creation and on change without a DNS
//! lookup, and one created before the list was narrowed has its attempt ended
//! as a blocked address without a connection, while the operator's alert
//! endpoint, which the list does not cover, still gets its alerts.

use std::sync::Arc;
use std::time::Duration;

use hookgate_server::AlertsConfig;
use hookgate_server::EgressRule;
use hookgate_server::RunOptions;
use hookgate_tests::receiver::Receiver;
use hookgate_tests::resolvers::CountingResolver;
use hookgate_tests::{TestGateway, is_final, test_config};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

fn rules(entries: &[&str]) -> Option<Vec<EgressRule>> {
    Some(entries.iter().map(|e| e.parse().unwrap()).collect())
}

fn assert_not_allow_listed(status: u16, body: &Value) {
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "url_blocked", "{body}");
    assert_eq!(body["error"]["field"], "url", "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("outbound.allow_only"), "{body}");
}

#[tokio::test]
async fn unlisted_hosts_are_refused_at_creation_and_on_change_without_dns() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    config.outbound.allow_only = rules(&["127.0.0.0/8"]);
    let resolver = Arc::new(CountingResolver::default());
    let options = RunOptions {
        resolver: Some(resolver.clone()),
        ..Default::default()
    };
    let gw = TestGateway::start_with(config, dir, options).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/hook"}))
        .await;
    let endpoints = "/v1/tenants/acme/endpoints";
    for url in ["https://example.com/hook", "http://10.0.0.1/hook"] {
        let body = json!({"url": url});
        let (s, b) = gw.call("POST", endpoints, Some(&key), Some(body)).await;
        assert_not_allow_listed(s, &b);
    }
    let path = format!("{endpoints}/{}", ep["id"].as_str().unwrap());
    let patch = json!({"url": "https://example.com/hook"});
    let (s, b) = gw.call("PATCH", &path, Some(&key), Some(patch)).await;
    assert_not_allow_listed(s, &b);
    let (_, shown) = gw.call("GET", &path, Some(&key), None).await;
    assert_eq!(
        shown["url"], "http://127.0.0.1:9/hook",
        "the refused change left no trace"
    );
    assert_eq!(resolver.calls(), 0, "no name was looked up");
}

#[tokio::test]
async fn an_endpoint_outside_a_narrowed_list_is_blocked_at_connect_time() {
    let rx = Receiver::start(Vec::new()).await;
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    config.outbound.allow_only = rules(&["127.0.0.0/8"]);
    let gw = TestGateway::start_with(config.clone(), dir.clone(), RunOptions::default()).await;
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": rx.url()})).await;
    gw.stop().await;

    // Narrowed: the endpoint on 127.0.0.1 now matches no entry, nor does the
    // alert receiver, which one dead delivery is enough to alert.
    config.outbound.allow_only = rules(&["127.0.0.2/32", "*.example.com"]);
    let alerts_rx = Receiver::start(Vec::new()).await;
    config.alerts = AlertsConfig {
        url: Some(alerts_rx.url()),
        dlq_growth: 0,
        ..AlertsConfig::default()
    };
    let resolver = Arc::new(CountingResolver::default());
    let options = RunOptions {
        resolver: Some(resolver.clone()),
        ..Default::default()
    };
    let gw = TestGateway::start_with(config, dir, options).await;
    let ev = gw.event("acme", &key, "test.event", json!({"n": 1})).await;
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let d = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("blocked_address")),
        "{d}"
    );
    let log = d["attempt_log"].as_array().unwrap();
    assert_eq!(log.len(), 1, "{d}");
    assert_eq!(log[0]["error_kind"], "blocked_address", "{d}");
    let snippet = log[0]["response_snippet"].as_str().unwrap_or_default();
    assert!(snippet.contains("outbound.allow_only"), "{d}");
    assert!(rx.received().is_empty(), "nothing reached the receiver");
    assert_eq!(resolver.calls(), 0, "no name was looked up");
    let alerts = alerts_rx.wait_for(1, WAIT).await;
    let alert: Value = serde_json::from_slice(&alerts[0].body).unwrap();
    assert_eq!(alert["data"]["rule"], "dlq_growth", "{alert}");
}
