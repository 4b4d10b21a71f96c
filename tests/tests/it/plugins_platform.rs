//! The plugin platform end to end: real plugins from `plugins/` (built for
//! `wasm32-unknown-unknown` by this package's build script) uploaded through the
//! API, bound, and deciding real deliveries: `json-error-code`, `ladder`, a
//! rollback to the previous version, and plugins surviving a restart.

use std::sync::Arc;
use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{
    TestGateway, body_receiver, fixture_module, is_final, plugin_wasm, test_config, upload_example,
};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

fn log(d: &Value) -> &Vec<Value> {
    d["attempt_log"].as_array().unwrap()
}

fn has_attempts(n: usize) -> impl Fn(&Value) -> bool {
    move |d: &Value| d["attempt_log"].as_array().is_some_and(|l| l.len() >= n)
}

/// An endpoint at `url` for events of type `event_type`, bound to `plugin`; sends
/// one such event; returns the delivery id.
async fn deliver(gw: &TestGateway, key: &str, url: &str, plugin: &str, event_type: &str) -> String {
    let body = json!({"url": url, "plugin": plugin, "event_types": [event_type]});
    let ep = gw.endpoint("acme", key, body).await;
    assert_eq!(ep["plugin"], plugin);
    let ev = gw.event("acme", key, event_type, json!({"n": 1})).await;
    ev["deliveries"][0]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn json_error_code_retries_a_400_that_says_try_again() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let up = upload_example(&gw, &key, "json-error-code", "json-error-code", 1).await;
    assert_eq!(up["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(
        up["size"].as_u64(),
        Some(plugin_wasm("json-error-code").len() as u64)
    );
    let url = body_receiver(vec![(400, r#"{"error":"try_again"}"#)]).await;
    let dlv = deliver(&gw, &key, &url, "json-error-code", "order.paid").await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["attempts"].as_u64()),
        (Some("succeeded"), Some(2)),
        "{d}"
    );
    let log = log(&d);
    assert_eq!(
        (log[0]["status"].as_u64(), log[0]["verdict"].as_str()),
        (Some(400), Some("retry"))
    );
    assert_eq!(log[0]["decided_by"], "plugin:json-error-code@1");
    assert_eq!(log[1]["verdict"], "delivered");
}

#[tokio::test]
async fn json_error_code_gives_up_on_a_closed_account_and_waits_retry_in() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    upload_example(&gw, &key, "codes", "json-error-code", 1).await;
    let closed = body_receiver(vec![(503, r#"{"error":"account_closed"}"#)]).await;
    let dlv = deliver(&gw, &key, &closed, "codes", "closed").await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("give_up")),
        "{d}"
    );
    assert_eq!(log(&d)[0]["decided_by"], "plugin:codes@1");
    let limited = body_receiver(vec![(429, r#"{"error":"rate_limited","retry_in":30}"#)]).await;
    let dlv = deliver(&gw, &key, &limited, "codes", "limited").await;
    let d = gw
        .wait_delivery("acme", &key, &dlv, WAIT, has_attempts(1))
        .await;
    assert_eq!(log(&d)[0]["delay_ms"], 30_000, "{d}");
}

#[tokio::test]
async fn ladder_waits_five_minutes_after_the_first_attempt() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    upload_example(&gw, &key, "ladder", "ladder", 1).await;
    let rx = Receiver::start(vec![Reply::status(503)]).await;
    let dlv = deliver(&gw, &key, &rx.url(), "ladder", "order.paid").await;
    let d = gw
        .wait_delivery("acme", &key, &dlv, WAIT, has_attempts(1))
        .await;
    let first = &log(&d)[0];
    assert_eq!(
        (first["verdict"].as_str(), first["delay_ms"].as_u64()),
        (Some("retry"), Some(300_000)),
        "{d}"
    );
    assert_eq!(first["decided_by"], "plugin:ladder@1");
    assert_eq!(d["state"], "pending");
}

#[tokio::test]
async fn rollback_makes_the_previous_version_decide_again() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    // v1 retries a 409 after 10 s; v2 (the ladder) leaves a 409 to the built-in,
    // which gives up on it.
    upload_example(&gw, &key, "p", "tutorial", 1).await;
    upload_example(&gw, &key, "p", "ladder", 2).await;
    let conflict = || async { Receiver::start(vec![Reply::status(409); 5]).await };
    let rx2 = conflict().await;
    let dlv = deliver(&gw, &key, &rx2.url(), "p", "before").await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), log(&d)[0]["decided_by"].as_str()),
        (Some("dead"), Some("builtin")),
        "{d}"
    );

    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/plugins/p/rollback",
            Some(&key),
            None,
        )
        .await;
    assert_eq!((s, b["active_version"].as_u64()), (200, Some(1)), "{b}");
    let rx1 = conflict().await;
    let dlv = deliver(&gw, &key, &rx1.url(), "p", "after").await;
    let d = gw
        .wait_delivery("acme", &key, &dlv, WAIT, has_attempts(1))
        .await;
    let first = &log(&d)[0];
    assert_eq!(
        (first["decided_by"].as_str(), first["delay_ms"].as_u64()),
        (Some("plugin:p@1"), Some(10_000)),
        "{d}"
    );
    // A binding pinned to v2 still gets v2.
    let pinned = Receiver::start(vec![Reply::status(503)]).await;
    let dlv = deliver(&gw, &key, &pinned.url(), "p@2", "pinned").await;
    let d = gw
        .wait_delivery("acme", &key, &dlv, WAIT, has_attempts(1))
        .await;
    assert_eq!(log(&d)[0]["decided_by"], "plugin:p@2", "{d}");

    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/plugins/p/rollback",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (409, Some("conflict")),
        "v1 is the oldest: {b}"
    );
    upload_example(&gw, &key, "p", "json-error-code", 3).await;
    let (s, b) = gw
        .call("GET", "/v1/tenants/acme/plugins/p", Some(&key), None)
        .await;
    assert_eq!(s, 200, "{b}");
    let versions: Vec<(u64, bool)> = b["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["version"].as_u64().unwrap(),
                v["active"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        versions,
        [(1, false), (2, false), (3, true)],
        "never renumbered: {b}"
    );
    assert_eq!(b["active_version"], 3);
    assert_eq!(b["sha256"], b["versions"][2]["sha256"]);
}

#[tokio::test]
async fn plugins_and_their_active_version_survive_a_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let start = || {
        TestGateway::start_with(
            test_config(dir.path()),
            Arc::clone(&dir),
            hookgate_server::RunOptions::default(),
        )
    };
    let gw = start().await;
    let key = gw.tenant("acme").await;
    upload_example(&gw, &key, "codes", "json-error-code", 1).await;
    upload_example(&gw, &key, "codes", "ladder", 2).await;
    let (s, _) = gw
        .call(
            "POST",
            "/v1/tenants/acme/plugins/codes/rollback",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(s, 200);
    let (_, before) = gw
        .call("GET", "/v1/tenants/acme/plugins/codes", Some(&key), None)
        .await;
    gw.stop().await;
    let artifacts = std::fs::read_dir(dir.path().join("plugin-artifacts"))
        .unwrap()
        .count();
    assert_eq!(artifacts, 2, "each version's compiled artifact is cached");

    let gw = start().await;
    let (s, after) = gw
        .call("GET", "/v1/tenants/acme/plugins/codes", Some(&key), None)
        .await;
    assert_eq!(s, 200, "{after}");
    assert_eq!(after, before);
    assert_eq!(after["active_version"], 1);
    let url = body_receiver(vec![(400, r#"{"error":"try_again"}"#)]).await;
    let dlv = deliver(&gw, &key, &url, "codes", "order.paid").await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["attempts"].as_u64()),
        (Some("succeeded"), Some(2)),
        "{d}"
    );
    assert_eq!(log(&d)[0]["decided_by"], "plugin:codes@1");
}

#[tokio::test]
async fn a_disabled_plugin_stays_disabled_after_a_restart() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let config = || {
        let mut c = test_config(dir.path());
        // The breaker would pause the endpoint after 20 failures; keep it out of the way.
        c.breaker.failure_threshold = 1_000;
        c
    };
    let gw = TestGateway::start_with(
        config(),
        Arc::clone(&dir),
        hookgate_server::RunOptions::default(),
    )
    .await;
    let key = gw.tenant("acme").await;
    let teapot = fixture_module("teapot");
    let (s, b) = gw.upload_plugin("acme", &key, "teapot", teapot).await;
    assert_eq!(s, 201, "{b}");
    let rx = Receiver::start(vec![Reply::status(418); 30]).await;
    let policy = json!({"strategy": "fixed", "base_ms": 20, "jitter": "none", "max_attempts": 22, "retry_on": ["418"]});
    let ep = json!({"url": rx.url(), "plugin": "teapot", "policy": policy});
    gw.endpoint("acme", &key, ep).await;
    let ev = gw.event("acme", &key, "order.paid", json!({})).await;
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let d = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
    let by: Vec<&str> = log(&d)
        .iter()
        .map(|a| a["decided_by"].as_str().unwrap())
        .collect();
    assert_eq!(by.len(), 22, "{d}");
    assert!(
        by[..20].iter().all(|b| *b == "fallback:trap")
            && by[20..].iter().all(|b| *b == "fallback:disabled"),
        "{by:?}"
    );
    let path = "/v1/tenants/acme/plugins/teapot";
    let (_, p) = gw.call("GET", path, Some(&key), None).await;
    assert_eq!(
        (
            p["disabled"].as_bool(),
            p["versions"][0]["consecutive_failures"].as_u64()
        ),
        (Some(true), Some(20)),
        "{p}"
    );
    gw.stop().await;

    let gw = TestGateway::start_with(
        config(),
        Arc::clone(&dir),
        hookgate_server::RunOptions::default(),
    )
    .await;
    let (_, p) = gw.call("GET", path, Some(&key), None).await;
    assert_eq!(p["disabled"], true, "{p}");
}
