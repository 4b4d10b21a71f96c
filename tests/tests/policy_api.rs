//! Per-endpoint policies against a real gateway and receivers: schedules are kept,
//! a PATCH governs later decisions, the status lists change the table, and the
//! config's `[policy.default]` is what endpoints start from.

use std::sync::Arc;
use std::time::Duration;

use hookgate::policy::PolicySpec;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{TestGateway, is_final, test_config};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn schedules_are_never_early_and_barely_late() {
    let script = vec![Reply::status(503), Reply::status(503), Reply::status(503)];
    let rx = Receiver::start(script).await;
    let gw = TestGateway::start().await;
    let policy =
        json!({"policy": {"strategy": "schedule", "schedule_ms": [500, 1500], "jitter": "none"}});
    let (key, _, dlv) = gw.one_delivery(&rx.url(), policy).await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["attempts"].as_u64()),
        (Some("succeeded"), Some(4)),
        "{d}"
    );
    let got = rx.received();
    let log = d["attempt_log"].as_array().unwrap();
    for (n, want_ms) in [(0, 500), (1, 1500), (2, 1500)] {
        assert_eq!(log[n]["delay_ms"], want_ms);
        let gap = got[n + 1].at - got[n].at;
        let want = Duration::from_millis(want_ms);
        assert!(gap >= want, "retry {} early: {gap:?} < {want:?}", n + 1);
        assert!(
            gap <= want + Duration::from_millis(400),
            "retry {} late: {gap:?}",
            n + 1
        );
    }
}

#[tokio::test]
async fn a_patch_changes_the_next_delay() {
    let rx = Receiver::start(vec![Reply::status(503), Reply::status(503)]).await;
    let gw = TestGateway::start().await;
    let slow = json!({"policy": {"strategy": "fixed", "base_ms": 1500, "jitter": "none"}});
    let (key, ep, dlv) = gw.one_delivery(&rx.url(), slow).await;
    let d = gw
        .wait_delivery("acme", &key, &dlv, WAIT, |d| d["attempts"] == 1)
        .await;
    assert_eq!(d["attempt_log"][0]["delay_ms"], 1500);
    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    let fast = json!({"policy": {"base_ms": 200}});
    let (s, e) = gw.call("PATCH", &path, Some(&key), Some(fast)).await;
    assert_eq!(
        (s, e["policy_effective"]["base_ms"].as_u64()),
        (200, Some(200)),
        "{e}"
    );
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    let log = d["attempt_log"].as_array().unwrap();
    assert_eq!(log.len(), 3, "{d}");
    assert_eq!(
        log[1]["delay_ms"], 200,
        "the decision after the PATCH uses the new policy"
    );
    assert!(log.iter().all(|a| a["policy"] == "endpoint:default"), "{d}");
}

#[tokio::test]
async fn status_lists_change_the_table() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let unavailable = Receiver::start(vec![Reply::status(503)]).await;
    let missing = Receiver::start(vec![Reply::status(404)]).await;
    let give_up =
        json!({"url": unavailable.url(), "event_types": ["a"], "policy": {"give_up_on": ["503"]}});
    let retry = json!({"url": missing.url(), "event_types": ["b"], "policy": {"retry_on": ["404"], "base_ms": 100, "jitter": "none"}});
    gw.endpoint("acme", &key, give_up).await;
    gw.endpoint("acme", &key, retry).await;
    let a = gw.event("acme", &key, "a", json!({})).await;
    let b = gw.event("acme", &key, "b", json!({})).await;
    let d = gw
        .wait_delivery(
            "acme",
            &key,
            a["deliveries"][0]["id"].as_str().unwrap(),
            WAIT,
            is_final,
        )
        .await;
    assert_eq!(
        (
            d["state"].as_str(),
            d["dead_reason"].as_str(),
            d["attempts"].as_u64()
        ),
        (Some("dead"), Some("give_up"), Some(1)),
        "{d}"
    );
    let d = gw
        .wait_delivery(
            "acme",
            &key,
            b["deliveries"][0]["id"].as_str().unwrap(),
            WAIT,
            is_final,
        )
        .await;
    assert_eq!(
        (d["state"].as_str(), d["attempts"].as_u64()),
        (Some("succeeded"), Some(2)),
        "{d}"
    );
    assert_eq!(d["attempt_log"][0]["verdict"], "retry");
}

#[tokio::test]
async fn config_default_policy_is_where_endpoints_start() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    config.policy.default =
        PolicySpec::from_json(&json!({"max_attempts": 2, "base_ms": 100, "jitter": "none"}))
            .unwrap();
    let gw = TestGateway::start_with(config, dir, Default::default()).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start((0..10).map(|_| Reply::status(500)).collect()).await;
    let plain = gw
        .endpoint("acme", &key, json!({"url": rx.url(), "event_types": ["a"]}))
        .await;
    assert_eq!(plain["policy_effective"]["max_attempts"], 2);
    let own = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": rx.url(), "event_types": ["b"], "policy": {"max_attempts": 3}}),
        )
        .await;
    assert_eq!(
        (
            own["policy_effective"]["max_attempts"].as_u64(),
            own["policy_effective"]["base_ms"].as_u64()
        ),
        (Some(3), Some(100))
    );
    let a = gw.event("acme", &key, "a", json!({})).await;
    let b = gw.event("acme", &key, "b", json!({})).await;
    let d = gw
        .wait_delivery(
            "acme",
            &key,
            a["deliveries"][0]["id"].as_str().unwrap(),
            WAIT,
            is_final,
        )
        .await;
    assert_eq!(
        (d["dead_reason"].as_str(), d["attempts"].as_u64()),
        (Some("max_attempts"), Some(2)),
        "{d}"
    );
    assert_eq!(d["attempt_log"][0]["policy"], "config:default");
    assert_eq!(d["attempt_log"][0]["delay_ms"], 100);
    let d = gw
        .wait_delivery(
            "acme",
            &key,
            b["deliveries"][0]["id"].as_str().unwrap(),
            WAIT,
            is_final,
        )
        .await;
    assert_eq!(
        (d["dead_reason"].as_str(), d["attempts"].as_u64()),
        (Some("max_attempts"), Some(3)),
        "{d}"
    );
    assert_eq!(d["attempt_log"][0]["policy"], "endpoint:default");
}
