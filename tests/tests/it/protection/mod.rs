//! Delivery protection: the circuit breaker, in-flight and rate caps, fairness
//! between endpoints, and bulk DLQ replay. Durations are shrunk through config.

use std::collections::HashMap;
use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply, most_within};
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    bulk_replay_delivers_every_dead_delivery_once_more,
    in_flight_and_rate_caps_hold,
    a_broken_endpoint_never_holds_back_a_healthy_one,
    endpoint_reloads_keep_the_limits,
}

const WAIT: Duration = Duration::from_secs(60);

mod breaker;

async fn endpoint_view(gw: &TestGateway, key: &str, ep: &Value) -> Value {
    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    gw.call("GET", &path, Some(key), None).await.1
}

async fn wait_count(rx: &Receiver, n: usize) -> usize {
    rx.wait_for(n, WAIT).await.len()
}

async fn in_flight_and_rate_caps_hold(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let slow = Receiver::start(
        (0..30)
            .map(|_| Reply::status(200).after(Duration::from_millis(100)))
            .collect(),
    )
    .await;
    let fast = Receiver::start(Vec::new()).await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": slow.url(), "event_types": ["slow"], "max_in_flight": 3}),
    )
    .await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": fast.url(), "event_types": ["fast"], "rate_limit_per_s": 20}),
    )
    .await;
    let mut ids = Vec::new();
    for i in 0..30 {
        ids.push(
            gw.event("acme", &key, "slow", json!({"i": i})).await["deliveries"][0]["id"].clone(),
        );
    }
    for i in 0..50 {
        ids.push(
            gw.event("acme", &key, "fast", json!({"i": i})).await["deliveries"][0]["id"].clone(),
        );
    }
    for id in &ids {
        let d = gw
            .wait_delivery("acme", &key, id.as_str().unwrap(), WAIT, is_final)
            .await;
        assert_eq!(d["state"], "succeeded", "{d}");
    }
    assert!(
        slow.max_concurrent() <= 3,
        "saw {} concurrent requests",
        slow.max_concurrent()
    );
    assert_eq!(slow.max_concurrent(), 3, "the cap is also used");
    let got = fast.received();
    assert_eq!(got.len(), 50);
    let t0 = got[0].at;
    let mut per_second: HashMap<u64, usize> = HashMap::new();
    for r in &got {
        *per_second.entry((r.at - t0).as_secs()).or_default() += 1;
    }
    assert!(
        per_second.values().all(|n| *n <= 20),
        "per second: {per_second:?}"
    );
    // Sliding windows too: no 1 s span holds more than 20 arrivals.
    let most = most_within(&got, Duration::from_secs(1));
    assert!(most <= 20, "{most} arrivals within one second");
}

async fn a_broken_endpoint_never_holds_back_a_healthy_one(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    // The broken receiver is slow as well as failing, so its backlog lasts.
    let broken = Receiver::start(
        (0..2000)
            .map(|_| Reply::status(503).after(Duration::from_millis(200)))
            .collect(),
    )
    .await;
    let healthy = Receiver::start(Vec::new()).await;
    let b = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": broken.url(), "event_types": ["b"], "max_in_flight": 4}),
        )
        .await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": healthy.url(), "event_types": ["h"]}),
    )
    .await;
    for i in 0..400 {
        gw.event("acme", &key, "b", json!({"i": i})).await;
    }
    let mut healthy_ids = Vec::new();
    for i in 0..20 {
        healthy_ids.push(
            gw.event("acme", &key, "h", json!({"i": i})).await["deliveries"][0]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for id in &healthy_ids {
        let d = gw.wait_delivery("acme", &key, id, WAIT, is_final).await;
        assert_eq!(
            (d["state"].as_str(), d["attempts"].as_u64()),
            (Some("succeeded"), Some(1)),
            "{d}"
        );
    }
    // Ordering: every healthy delivery finished while the broken endpoint still had
    // first attempts waiting.
    let q = format!(
        "/v1/tenants/acme/deliveries?endpoint_id={}&state=pending&limit=250",
        b["id"].as_str().unwrap()
    );
    let (_, pending) = gw.call("GET", &q, Some(&key), None).await;
    let untried = pending["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["attempts"] == 0)
        .count();
    assert!(untried > 0, "the broken backlog had drained first");
    assert_eq!(healthy.received().len(), 20);
}

async fn bulk_replay_delivers_every_dead_delivery_once_more(backend: Backend) {
    // 1000 give-ups in a row would trip the breaker; this test is about replay.
    let mut bed = backend.bed().await;
    let config = &mut bed.config;
    config.breaker.failure_threshold = 100_000;
    let gw = TestGateway::start_bed(bed, Default::default()).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start((0..1000).map(|_| Reply::status(404)).collect()).await;
    gw.endpoint("acme", &key, json!({"url": rx.url()})).await;
    let mut ids = Vec::new();
    for i in 0..1000 {
        ids.push(
            gw.event("acme", &key, "x", json!({"i": i})).await["deliveries"][0]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_eq!(wait_count(&rx, 1000).await, 1000);
    // The receiver has answered every request; wait until each outcome is recorded.
    for id in &ids {
        let d = gw.wait_delivery("acme", &key, id, WAIT, is_final).await;
        assert_eq!(d["state"], "dead", "{d}");
    }

    // One replay while still pending is refused; a dead one replays singly, too.
    let (s, one) = gw
        .call(
            "POST",
            &format!("/v1/tenants/acme/deliveries/{}/replay", ids[0]),
            Some(&key),
            None,
        )
        .await;
    assert_eq!((s, one["series"].as_u64()), (200, Some(2)), "{one}");
    // Pending again, or already taken by the scheduler the replay woke.
    assert!(
        matches!(one["state"].as_str(), Some("pending" | "in_flight")),
        "{one}"
    );
    let (s, _) = gw
        .call(
            "POST",
            &format!("/v1/tenants/acme/deliveries/{}/replay", ids[0]),
            Some(&key),
            None,
        )
        .await;
    assert!(
        s == 409 || s == 200,
        "a pending delivery is 409 (or it already succeeded and needs force)"
    );

    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/replay",
            Some(&key),
            Some(json!({"state": "dead"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    // ids[0] is on its new series already: pending, or succeeded; not dead.
    assert_eq!(b["replayed"], 999, "{b}");
    for id in &ids {
        let d = gw.wait_delivery("acme", &key, id, WAIT, is_final).await;
        assert_eq!(
            (d["state"].as_str(), d["series"].as_u64()),
            (Some("succeeded"), Some(2)),
            "{d}"
        );
        let series: Vec<u64> = d["attempt_log"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["series"].as_u64().unwrap())
            .collect();
        assert_eq!(series, [1, 2], "the log keeps the earlier series");
    }
    let got = rx.received();
    assert_eq!(got.len(), 2000, "each delivery exactly once more");
    let mut per_id: HashMap<&str, usize> = HashMap::new();
    for r in &got {
        *per_id.entry(r.header("webhook-id").unwrap()).or_default() += 1;
    }
    assert_eq!(per_id.len(), 1000);
    assert!(
        per_id.values().all(|n| *n == 2),
        "same webhook-id, sent twice each"
    );

    // A succeeded delivery needs force; with it, it is sent again.
    let path = format!("/v1/tenants/acme/deliveries/{}/replay", ids[1]);
    let (s, e) = gw.call("POST", &path, Some(&key), None).await;
    assert_eq!((s, e["error"]["code"].as_str()), (409, Some("conflict")));
    let (s, _) = gw
        .call("POST", &path, Some(&key), Some(json!({"force": true})))
        .await;
    assert_eq!(s, 200);
    let (s, _) = gw
        .call(
            "POST",
            "/v1/tenants/acme/deliveries/dlv_nope/replay",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(s, 404);
    let (s, _) = gw
        .call(
            "POST",
            "/v1/tenants/acme/replay",
            Some(&key),
            Some(json!({"state": "pending"})),
        )
        .await;
    assert_eq!(s, 422);
}

/// Changes an endpoint through the API (a reload in the scheduler).
async fn patch(gw: &TestGateway, key: &str, ep: &Value, body: Value) {
    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    let (s, b) = gw.call("PATCH", &path, Some(key), Some(body)).await;
    assert_eq!(s, 200, "{b}");
}

/// Fair shares, item 6: reloading an endpoint mid-burst neither resets what is in
/// flight nor the starts of the current second; a lowered limit applies to both.
async fn endpoint_reloads_keep_the_limits(backend: Backend) {
    let slow = Reply::status(200).after(Duration::from_secs(2));
    let rx = Receiver::start(vec![slow; 4]).await;
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint("acme", &key, json!({"url": rx.url(), "max_in_flight": 4}))
        .await;
    for i in 0..8 {
        gw.event("acme", &key, "x", json!({"i": i})).await;
    }
    assert_eq!(wait_count(&rx, 4).await, 4);
    // Four are out; the limit drops to 1: nothing more starts until they end.
    patch(&gw, &key, &ep, json!({"max_in_flight": 1})).await;
    assert_eq!(wait_count(&rx, 8).await, 8);
    assert_eq!(
        rx.max_concurrent(),
        4,
        "a reload let more than the limit out"
    );

    let rx = Receiver::start(Vec::new()).await;
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": rx.url(), "rate_limit_per_s": 3}),
        )
        .await;
    for i in 0..9 {
        gw.event("acme", &key, "y", json!({"i": i})).await;
    }
    assert!(wait_count(&rx, 3).await >= 3);
    patch(&gw, &key, &ep, json!({"description": "reloaded"})).await;
    let arrivals: Vec<_> = rx.wait_for(9, WAIT).await.iter().map(|r| r.at).collect();
    assert!(arrivals.len() >= 9);
    for (i, first) in arrivals.iter().enumerate() {
        let within_a_second = arrivals[i..]
            .iter()
            .take_while(|at| at.duration_since(*first) < Duration::from_millis(1000))
            .count();
        assert!(
            within_a_second <= 3,
            "{within_a_second} requests within one second"
        );
    }
}
