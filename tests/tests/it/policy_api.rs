//! Per-endpoint policies against a real gateway and receivers: schedules are kept,
//! a PATCH governs later decisions, the status lists change the table, the config's
//! `[policy.default]` is what endpoints start from, and every duration is bounded.

use std::sync::Arc;
use std::time::Duration;

use hookgate_server::PolicySpec;
use hookgate_server::{Config, ConfigError};
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{TestGateway, is_final, test_config};
use serde_json::{Value, json};

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

/// 30 days in ms: the bound of every policy duration.
const THIRTY_DAYS_MS: u64 = 30 * 24 * 3_600_000;

#[tokio::test]
async fn durations_have_an_upper_bound_of_30_days() {
    let rx = Receiver::start(vec![Reply::status(503)]).await;
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let path = "/v1/tenants/acme/endpoints";
    let with = |policy: Value| json!({"url": rx.url(), "event_types": ["t"], "policy": policy});
    // The reported endpoint: once accepted, now refused naming the field.
    let years = json!({"base_ms": "9000y", "max_delay_ms": "9000y", "retry_window_ms": "9000y"});
    let (s, e) = gw.call("POST", path, Some(&key), Some(with(years))).await;
    assert_eq!(
        (s, e["error"]["code"].as_str(), e["error"]["field"].as_str()),
        (422, Some("validation_failed"), Some("policy.base_ms")),
        "{e}"
    );
    let over = THIRTY_DAYS_MS + 1;
    for (field, policy) in [
        (
            "policy.base_ms",
            json!({"base_ms": over, "retry_window_ms": over}),
        ),
        (
            "policy.step_ms",
            json!({"strategy": "linear", "step_ms": over}),
        ),
        (
            "policy.schedule_ms",
            json!({"strategy": "schedule", "schedule_ms": ["1s", over]}),
        ),
        ("policy.max_delay_ms", json!({"max_delay_ms": "31d"})),
        (
            "policy.retry_window_ms",
            json!({"retry_window_ms": u64::MAX}),
        ),
    ] {
        let (s, e) = gw
            .call("POST", path, Some(&key), Some(with(policy.clone())))
            .await;
        assert_eq!(
            (s, e["error"]["field"].as_str()),
            (422, Some(field)),
            "{policy} → {e}"
        );
    }

    // Exactly 30 days is accepted, for every duration.
    let thirty = json!({
        "strategy": "linear", "base_ms": "30d", "step_ms": "30d",
        "max_delay_ms": "30d", "retry_window_ms": THIRTY_DAYS_MS
    });
    let ep = gw.endpoint("acme", &key, with(thirty)).await;
    let effective = &ep["policy_effective"];
    for name in ["base_ms", "step_ms", "max_delay_ms", "retry_window_ms"] {
        assert_eq!(
            effective[name].as_u64(),
            Some(THIRTY_DAYS_MS),
            "{name}: {ep}"
        );
    }
    let schedule = json!({"strategy": "schedule", "schedule_ms": ["1h", "30d"]});
    gw.endpoint("acme", &key, with(schedule)).await;

    // A PATCH above the bound is refused too, and the policy stays as it was.
    let ep_path = format!("{path}/{}", ep["id"].as_str().unwrap());
    let patch = json!({"policy": {"max_delay_ms": "9000y"}});
    let (s, e) = gw.call("PATCH", &ep_path, Some(&key), Some(patch)).await;
    assert_eq!(
        (s, e["error"]["field"].as_str()),
        (422, Some("policy.max_delay_ms")),
        "{e}"
    );
    let (s, e) = gw.call("GET", &ep_path, Some(&key), None).await;
    assert_eq!(
        (s, e["policy_effective"]["max_delay_ms"].as_u64()),
        (200, Some(THIRTY_DAYS_MS))
    );
}

#[tokio::test]
async fn durations_have_an_upper_bound_and_a_long_retry_is_scheduled_and_shown() {
    let rx = Receiver::start(vec![Reply::status(503)]).await;
    let gw = TestGateway::start().await;
    let policy = json!({"policy": {
        "base_ms": "15d", "max_delay_ms": "30d", "retry_window_ms": "30d", "jitter": "none"
    }});
    let (key, _, dlv) = gw.one_delivery(&rx.url(), policy).await;
    let d = gw
        .wait_delivery("acme", &key, &dlv, WAIT, |d| d["attempts"] == 1)
        .await;
    // Retried, 15 days on: not dead, and the far-off time formats.
    assert_eq!(
        (
            d["state"].as_str(),
            d["attempt_log"][0]["delay_ms"].as_u64()
        ),
        (Some("pending"), Some(THIRTY_DAYS_MS / 2)),
        "{d}"
    );
    let due = hookgate_server::parse_rfc3339_ms(d["next_attempt_at"].as_str().unwrap()).unwrap();
    let started =
        hookgate_server::parse_rfc3339_ms(d["attempt_log"][0]["started_at"].as_str().unwrap())
            .unwrap();
    assert!(due >= started + THIRTY_DAYS_MS / 2, "{d}");
    let (s, list) = gw
        .call("GET", "/v1/tenants/acme/deliveries", Some(&key), None)
        .await;
    assert_eq!(s, 200, "{list}");
}

#[test]
fn durations_have_an_upper_bound_in_the_config_default() {
    let key_of = |result: Result<Config, ConfigError>| match result {
        Err(ConfigError::Invalid { key, .. }) => key,
        other => panic!("expected an invalid key, got {other:?}"),
    };
    let file = "[policy.default]\nbase_ms = \"9000y\"\nmax_delay_ms = \"9000y\"\nretry_window_ms = \"9000y\"\n";
    assert_eq!(
        key_of(Config::from_toml_str(file, Vec::new())),
        "policy.default.base_ms"
    );
    let env = [(
        "HOOKGATE_POLICY__DEFAULT__MAX_DELAY_MS".to_owned(),
        "31d".to_owned(),
    )];
    assert_eq!(
        key_of(Config::from_toml_str("", env)),
        "policy.default.max_delay_ms"
    );
    let thirty = "[policy.default]\nmax_delay_ms = \"30d\"\nretry_window_ms = \"30d\"\n";
    let config = Config::from_toml_str(thirty, Vec::new()).unwrap();
    let policy = config.policy.default.resolve().unwrap();
    assert_eq!(
        (policy.max_delay_ms, policy.retry_window_ms),
        (THIRTY_DAYS_MS, THIRTY_DAYS_MS)
    );
}
