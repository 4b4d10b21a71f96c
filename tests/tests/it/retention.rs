//! Retention and disabling: pruning removes what is due and nothing else, pending
//! deliveries on a long-disabled endpoint end, and a failing endpoint is disabled
//! after `disable_after` and resumes when re-enabled. Time runs on a manual clock
//! where that helps.

use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_server::lab::ManualClock;
use hookgate_server::{Clock, SystemClock};
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    pruning_removes_what_is_due_and_nothing_else,
    failing_endpoints_are_disabled_and_resume_when_enabled,
}

const WAIT: Duration = Duration::from_secs(30);
const HOUR: Duration = Duration::from_secs(3600);

async fn status(gw: &TestGateway, key: &str, path: &str) -> u16 {
    gw.call("GET", &format!("/v1/tenants/acme/{path}"), Some(key), None)
        .await
        .0
}

/// Polls until `path` answers `want`, or the bounded wait ends.
async fn wait_status(gw: &TestGateway, key: &str, path: &str, want: u16) -> u16 {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let s = status(gw, key, path).await;
        if s == want || tokio::time::Instant::now() >= deadline {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn first_delivery(ev: &Value) -> String {
    ev["deliveries"][0]["id"].as_str().unwrap().to_owned()
}

async fn pruning_removes_what_is_due_and_nothing_else(backend: Backend) {
    let clock = ManualClock::new(SystemClock.now_ms());
    let mut bed = backend.bed().await;
    let config = &mut bed.config;
    (
        config.retention,
        config.dlq_retention,
        config.sweep_interval,
    ) = (3_600_000, 7_200_000, 100);
    let options = RunOptions {
        clock: Some(clock.clone()),
        ..Default::default()
    };
    let gw = TestGateway::start_bed(bed, options).await;
    let key = gw.tenant("acme").await;
    let ok = Receiver::start(Vec::new()).await;
    let gone = Receiver::start(vec![Reply::status(404)]).await;
    let failing = Receiver::start((0..10).map(|_| Reply::status(503)).collect()).await;
    let slow_retry = json!({"base_ms": "10h", "max_delay_ms": "10h", "retry_window_ms": "5d"});
    gw.endpoint(
        "acme",
        &key,
        json!({"url": ok.url(), "event_types": ["ok"]}),
    )
    .await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": gone.url(), "event_types": ["dead"]}),
    )
    .await;
    let pending_ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": failing.url(), "event_types": ["pending"], "policy": slow_retry}),
        )
        .await;
    let (a, b, c) = (
        gw.event("acme", &key, "ok", json!({})).await,
        gw.event("acme", &key, "dead", json!({})).await,
        gw.event("acme", &key, "pending", json!({})).await,
    );
    let d = gw.event("acme", &key, "nobody.listens", json!({})).await;
    let (da, db, dc) = (first_delivery(&a), first_delivery(&b), first_delivery(&c));
    assert_eq!(
        gw.wait_delivery("acme", &key, &da, WAIT, is_final).await["state"],
        "succeeded"
    );
    assert_eq!(
        gw.wait_delivery("acme", &key, &db, WAIT, is_final).await["state"],
        "dead"
    );
    gw.wait_delivery("acme", &key, &dc, WAIT, |d| d["attempts"] == 1)
        .await;
    let ev = |e: &Value| format!("events/{}", e["id"].as_str().unwrap());

    // Past `retention`: the succeeded delivery and its event go, and the event nobody
    // received; the dead and the pending ones stay.
    clock.advance(HOUR + Duration::from_secs(1));
    assert_eq!(
        wait_status(&gw, &key, &format!("deliveries/{da}"), 404).await,
        404
    );
    assert_eq!(wait_status(&gw, &key, &ev(&a), 404).await, 404);
    assert_eq!(wait_status(&gw, &key, &ev(&d), 404).await, 404);
    for kept in [
        format!("deliveries/{db}"),
        ev(&b),
        format!("deliveries/{dc}"),
        ev(&c),
    ] {
        assert_eq!(
            status(&gw, &key, &kept).await,
            200,
            "{kept} was pruned too early"
        );
    }

    // Disable the pending one's endpoint, then pass `dlq_retention`: the dead delivery
    // and its event go; the pending delivery on the disabled endpoint ends as dead.
    let ep_path = format!(
        "/v1/tenants/acme/endpoints/{}",
        pending_ep["id"].as_str().unwrap()
    );
    assert_eq!(
        gw.call(
            "PATCH",
            &ep_path,
            Some(&key),
            Some(json!({"disabled": true}))
        )
        .await
        .0,
        200
    );
    clock.advance(2 * HOUR + Duration::from_secs(1));
    assert_eq!(
        wait_status(&gw, &key, &format!("deliveries/{db}"), 404).await,
        404
    );
    assert_eq!(wait_status(&gw, &key, &ev(&b), 404).await, 404);
    let d = gw.wait_delivery("acme", &key, &dc, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("endpoint_disabled")),
        "{d}"
    );
    assert_eq!(
        status(&gw, &key, &ev(&c)).await,
        200,
        "its event stays while the dead delivery is kept"
    );
    // The stats follow: the removed dead one left the DLQ, the ended one moved
    // from pending to it.
    let deadline = tokio::time::Instant::now() + WAIT;
    let counts = loop {
        let (_, stats) = gw
            .call("GET", "/v1/tenants/acme/stats", Some(&key), None)
            .await;
        let counts = (
            stats["dlq_size"].clone(),
            stats["deliveries"]["pending"].clone(),
        );
        if counts == (json!(1), json!(0)) || tokio::time::Instant::now() >= deadline {
            break counts;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(counts, (json!(1), json!(0)));
}

async fn failing_endpoints_are_disabled_and_resume_when_enabled(backend: Backend) {
    let mut bed = backend.bed().await;
    let config = &mut bed.config;
    config.disable_after = 1_000;
    let gw = TestGateway::start_bed(bed, Default::default()).await;
    let rx = Receiver::start((0..4).map(|_| Reply::status(503)).collect()).await;
    let policy = json!({"policy": {"base_ms": 200, "jitter": "none"}});
    let (key, ep, dlv) = gw.one_delivery(&rx.url(), policy).await;
    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    let deadline = tokio::time::Instant::now() + WAIT;
    let view = loop {
        let (_, v) = gw.call("GET", &path, Some(&key), None).await;
        if v["disabled"] == true || tokio::time::Instant::now() >= deadline {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        (view["disabled"].as_bool(), view["disabled_reason"].as_str()),
        (Some(true), Some("failing")),
        "{view}"
    );
    let d = gw
        .wait_delivery("acme", &key, &dlv, Duration::ZERO, |_| true)
        .await;
    assert_eq!(
        d["state"], "pending",
        "a disabled endpoint keeps its pending deliveries"
    );
    let seen = rx.received().len();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        rx.received().len(),
        seen,
        "nothing goes to a disabled endpoint"
    );

    let (s, v) = gw
        .call("PATCH", &path, Some(&key), Some(json!({"disabled": false})))
        .await;
    assert_eq!(
        (s, v["disabled"].as_bool(), v["breaker"]["state"].as_str()),
        (200, Some(false), Some("closed"))
    );
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
}
