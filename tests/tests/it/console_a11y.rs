//! The console's accessibility: axe-core (pinned in `tests/scripts`) checks the
//! sign-in form and every page, signed in with a tenant's key, with an
//! endpoint, a delivery and a catalog type to show, against WCAG 2.0 and 2.1
//! A and AA (contrast among them); the overview and the endpoint list (with a
//! disabled endpoint, an open breaker and a RabbitMQ destination among its
//! rows, the create form's picker showing RabbitMQ's fields) again in the dark
//! palette. No page may have a serious or critical violation. Every badge
//! tone reads at 4.5:1 or more in both palettes. Screenshots at 1280 px and
//! 390 px go to `target/tmp/console-screens`.

use std::sync::Arc;
use std::time::Duration;

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, TestGateway, is_final, test_config};
use serde_json::{Value, json};

use super::console_browser::drive;

/// Sends one `event_type` event and waits until its delivery is final; the delivery.
async fn final_delivery(gw: &TestGateway, key: &str, event_type: &str) -> Value {
    let ev = gw
        .event("acme", key, event_type, json!({"amount": 1}))
        .await;
    let id = ev["deliveries"][0]["id"].as_str().unwrap().to_owned();
    gw.wait_delivery("acme", key, &id, Duration::from_secs(30), is_final)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_page_has_a_serious_accessibility_violation() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    // One failure opens a breaker: the list then shows an open one.
    config.breaker.failure_threshold = 1;
    config.stats.flush_ms = 100;
    let gw = TestGateway::start_with(config, dir, Default::default()).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start(Vec::new()).await;
    let body = json!({"name": "order.paid", "group": "orders", "description": "An order was paid",
        "schemas": {"1": {"type": "object"}}, "example": {"amount": 1}});
    let (s, b) = gw
        .call("POST", "/v1/event-types", Some(ADMIN), Some(body))
        .await;
    assert_eq!(s, 201, "{b}");
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": rx.url(), "description": "orders service", "event_types": ["order.*"]}),
        )
        .await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": rx.url(), "description": "paused", "event_types": ["ping.*"], "disabled": true}),
    )
    .await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": rx.failing_first_url(1), "description": "failing",
               "event_types": ["invoice.*"], "policy": {"max_attempts": 1}}),
    )
    .await;
    // A broker destination (no event reaches it; making it connects to none).
    gw.endpoint(
        "acme",
        &key,
        json!({"description": "orders to rabbit", "event_types": ["broker.test"],
               "destination": {"type": "rabbitmq", "url": "amqp://127.0.0.1:5672/%2f",
                               "exchange": "hookgate.a11y", "routing_key": "orders",
                               "credentials": {"username": "guest", "password": "guest"}}}),
    )
    .await;
    let d = final_delivery(&gw, &key, "order.paid").await;
    assert_eq!(d["state"], "succeeded", "{d}");
    let dead = final_delivery(&gw, &key, "invoice.paid").await;
    assert_eq!(dead["state"], "dead", "{dead}");
    let setup = json!({"endpoint": ep["id"], "delivery": d["id"]});
    let seen = drive(&gw, "console_a11y.mjs", &key, setup).await;
    let pages = seen["violations"].as_object().expect("pages audited");
    assert_eq!(
        pages.len(),
        12,
        "the sign-in form, nine pages, two of them dark too: {seen}"
    );
    // The list showed every badge tone it has data for.
    let mut tones: Vec<&str> = seen["badges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap())
        .collect();
    tones.sort_unstable();
    tones.dedup();
    assert_eq!(tones, ["tone-bad", "tone-good"], "{seen}");
    for tone in seen["contrast"].as_array().unwrap() {
        assert!(tone["ratio"].as_f64() >= Some(4.5), "{tone}");
    }
    assert_eq!(seen["contrast"].as_array().map(Vec::len), Some(9), "{seen}");
    let found: Vec<(&String, &Value)> = pages
        .iter()
        .filter(|(_, v)| v.as_array().is_some_and(|a| !a.is_empty()))
        .collect();
    assert!(
        found.is_empty(),
        "serious or critical violations: {found:?}"
    );
    assert_eq!(seen["outside"], json!([]), "no request left the gateway");
}
