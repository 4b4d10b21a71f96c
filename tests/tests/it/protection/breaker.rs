//! The circuit breaker: it opens, probes once, climbs its cooldowns and closes; a
//! replay while it is open goes out at once; an operator can reset it.

use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};

use super::{WAIT, endpoint_view, wait_count};

hookgate_tests::on_each_backend! {
    breaker_opens_probes_once_climbs_and_closes,
    replay_while_the_breaker_is_open_sends_at_once_and_says_so,
    a_breaker_can_be_reset_by_hand,
}

async fn breaker_gateway(backend: Backend) -> TestGateway {
    let mut bed = backend.bed().await;
    let config = &mut bed.config;
    config.breaker.cooldowns = vec![1_000, 2_000];
    TestGateway::start_bed(bed, Default::default()).await
}

async fn breaker_opens_probes_once_climbs_and_closes(backend: Backend) {
    // 20 failures trip it; the first probe fails too; then everything succeeds.
    let rx = Receiver::start((0..21).map(|_| Reply::status(503)).collect()).await;
    let gw = breaker_gateway(backend).await;
    let key = gw.tenant("acme").await;
    let body = json!({"url": rx.url(), "max_in_flight": 1, "policy": {"max_attempts": 1}});
    let ep = gw.endpoint("acme", &key, body).await;
    let mut ids = Vec::new();
    for i in 0..25 {
        let ev = gw.event("acme", &key, "x", json!({"i": i})).await;
        ids.push(ev["deliveries"][0]["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(wait_count(&rx, 20).await, 20);
    // Opened by the 20th failure. The timings below are the receiver's own
    // arrival times, so a test process that looks late cannot miss a request
    // sent while the breaker was open.
    let view = wait_breaker(&gw, &key, &ep, "open").await;
    assert!(view["breaker"]["trips"].as_u64() >= Some(1), "{view}");
    assert!(view["breaker"]["open_until"].is_string(), "{view}");

    // After the 1 s cool-down: one probe, which fails and re-opens it for 2 s;
    // the second probe succeeds.
    assert_eq!(wait_count(&rx, 25).await, 25);
    let got = rx.received();
    assert!(
        got[20].at - got[19].at >= Duration::from_millis(1_000),
        "a request went out while the breaker was open: {:?} after the 20th failure",
        got[20].at - got[19].at
    );
    assert!(
        got[21].at - got[20].at >= Duration::from_millis(2_000),
        "the half-open probe is a single request, and the re-trip used the next \
         cool-down: {:?}",
        got[21].at - got[20].at
    );
    for id in &ids[21..] {
        let d = gw.wait_delivery("acme", &key, id, WAIT, is_final).await;
        assert_eq!(d["state"], "succeeded", "{d}");
    }
    let view = endpoint_view(&gw, &key, &ep).await;
    assert_eq!(
        (
            view["breaker"]["state"].as_str(),
            view["breaker"]["trips"].as_u64()
        ),
        (Some("closed"), Some(0)),
        "{view}"
    );
}

/// Polls the endpoint until its breaker is in `state`; fails if it never gets there.
async fn wait_breaker(gw: &TestGateway, key: &str, ep: &Value, state: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let view = endpoint_view(gw, key, ep).await;
        if view["breaker"]["state"] == state {
            return view;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "breaker never {state}: {view}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Opens the breaker of a fresh endpoint (default config: 20 failures, then a
/// 10-minute cool-down) with 20 events its receiver refuses.
async fn tripped(rx: &Receiver, gw: &TestGateway, key: &str, status: u16) -> Value {
    let ep = gw
        .endpoint("acme", key, json!({"url": rx.url(), "max_in_flight": 1}))
        .await;
    rx.script((0..20).map(|_| Reply::status(status)));
    for i in 0..20 {
        gw.event("acme", key, "x", json!({"i": i})).await;
    }
    assert_eq!(wait_count(rx, 20).await, 20);
    wait_breaker(gw, key, &ep, "open").await;
    ep
}

/// Item 11: a replay is the operator saying the receiver is fixed. It sends at
/// once (the probe first) instead of after the 10-minute cool-down, its response
/// names the open breaker, and while the breaker is open no delivery claims an
/// earlier next attempt than `open_until`.
async fn replay_while_the_breaker_is_open_sends_at_once_and_says_so(backend: Backend) {
    let rx = Receiver::start(Vec::new()).await;
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let ep = tripped(&rx, &gw, &key, 404).await;
    let ep_id = ep["id"].as_str().unwrap();
    let open_until = endpoint_view(&gw, &key, &ep).await["breaker"]["open_until"].clone();
    assert!(open_until.is_string());
    // Sent while the breaker is open: due now, but not attempted before open_until.
    let ev = gw.event("acme", &key, "x", json!({"late": true})).await;
    let late = ev["deliveries"][0]["id"].as_str().unwrap();
    let (_, d) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/deliveries/{late}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(d["next_attempt_at"], open_until, "{d}");

    // The receiver is fixed (the script is spent: it answers 200 now).
    let (s, body) = gw
        .call(
            "POST",
            "/v1/tenants/acme/replay",
            Some(&key),
            Some(json!({"state": "dead"})),
        )
        .await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["replayed"], 20, "{body}");
    let open = body["open_breakers"].as_array().unwrap();
    assert_eq!(open.len(), 1, "{body}");
    assert_eq!(open[0]["endpoint_id"], ep_id);
    // Everything goes out long before the cool-down would have ended.
    assert_eq!(wait_count(&rx, 41).await, 41);
    wait_breaker(&gw, &key, &ep, "closed").await;
}

/// Item 11: the endpoint's tenant (or the admin) can close a breaker by hand;
/// pending work then goes out at once. Another tenant cannot.
async fn a_breaker_can_be_reset_by_hand(backend: Backend) {
    let rx = Receiver::start(Vec::new()).await;
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let other = gw.tenant("other").await;
    let ep = tripped(&rx, &gw, &key, 503).await;
    gw.event("acme", &key, "x", json!({"waiting": true})).await;
    let path = format!(
        "/v1/tenants/acme/endpoints/{}/breaker/reset",
        ep["id"].as_str().unwrap()
    );
    let (s, body) = gw.call("POST", &path, Some(&other), None).await;
    assert_eq!(s, 404, "{body}");
    // The stats count it: the tenant's and the gateway's, not the other tenant's.
    assert_eq!(open_breakers(&gw, "acme", &key, 1).await, 1);
    assert_eq!(open_breakers(&gw, "other", &other, 0).await, 0);
    let (s, body) = gw.call("POST", &path, Some(&key), None).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(open_breakers(&gw, "", hookgate_tests::ADMIN, 0).await, 0);
    assert_eq!(body["breaker"]["state"], "closed", "{body}");
    assert_eq!(body["breaker"]["open_until"], Value::Null, "{body}");
    // The waiting event goes out now, not after the 10-minute cool-down.
    assert!(wait_count(&rx, 21).await >= 21);
    let (s, body) = gw
        .call(
            "POST",
            "/v1/tenants/acme/endpoints/ep_missing/breaker/reset",
            Some(hookgate_tests::ADMIN),
            None,
        )
        .await;
    assert_eq!(
        (s, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
}

/// The stats' `open_breakers` of `tenant` (the gateway's when empty), once it
/// reads `want` or after five seconds.
async fn open_breakers(gw: &TestGateway, tenant: &str, token: &str, want: i64) -> i64 {
    let path = if tenant.is_empty() {
        "/v1/stats".to_owned()
    } else {
        format!("/v1/tenants/{tenant}/stats")
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let (_, stats) = gw.call("GET", &path, Some(token), None).await;
        let open = stats["open_breakers"].as_i64().expect("open_breakers");
        if open == want || std::time::Instant::now() > deadline {
            return open;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
