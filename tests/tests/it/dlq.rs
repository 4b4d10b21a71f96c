//! The dead-letter queue through the API: bulk replay's dry run, bulk resend
//! of delivered ones (`state: succeeded`), the `dead_reason` filter, and the
//! dead counts per reason, endpoint and tenant.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    a_dry_run_answers_what_the_replay_then_replays_and_changes_nothing,
    the_dead_list_and_bulk_replay_filter_by_dead_reason,
    the_dlq_summary_counts_dead_by_reason_endpoint_and_tenant,
}

const WAIT: Duration = Duration::from_secs(30);

/// Sends `n` events to a new endpoint at `url` (with `extra` fields) of tenant
/// `t`, of an event type only it takes, and waits until each delivery is final;
/// returns the endpoint's id.
async fn final_deliveries(
    gw: &TestGateway,
    t: &str,
    key: &str,
    url: &str,
    extra: Value,
    n: usize,
) -> String {
    // A type of its own, so the tenant's other endpoints get none of these events.
    static ENDPOINTS: AtomicUsize = AtomicUsize::new(0);
    let event_type = format!("dlq.ep{}", ENDPOINTS.fetch_add(1, Ordering::Relaxed));
    let mut body = json!({"url": url, "event_types": [event_type]});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let ep = gw.endpoint(t, key, body).await;
    let ep_id = ep["id"].as_str().unwrap().to_owned();
    for i in 0..n {
        let ev = gw.event(t, key, &event_type, json!({"n": i})).await;
        for d in ev["deliveries"].as_array().unwrap() {
            if d["endpoint_id"] == ep_id.as_str() {
                let id = d["id"].as_str().unwrap();
                let d = gw.wait_delivery(t, key, id, WAIT, is_final).await;
                assert!(is_final(&d), "{d}");
            }
        }
    }
    ep_id
}

/// The ids of the deliveries a list answer holds.
fn ids(list: &Value) -> Vec<&str> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect()
}

async fn a_dry_run_answers_what_the_replay_then_replays_and_changes_nothing(backend: Backend) {
    let rx = Receiver::start(vec![Reply::status(400); 3]).await;
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    final_deliveries(&gw, "acme", &key, &rx.url(), json!({}), 3).await;
    let dead_path = "/v1/tenants/acme/deliveries?state=dead";
    let (s, dead) = gw.call("GET", dead_path, Some(&key), None).await;
    assert_eq!((s, ids(&dead).len()), (200, 3), "{dead}");

    let replay = "/v1/tenants/acme/replay";
    let dry = json!({"state": "dead", "dry_run": true});
    let (s, planned) = gw.call("POST", replay, Some(&key), Some(dry)).await;
    assert_eq!(s, 200, "{planned}");
    assert_eq!(planned["replayed"], 3, "{planned}");
    assert_eq!(planned["dry_run"], true);
    assert!(planned["open_breakers"].is_array(), "{planned}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, still) = gw.call("GET", dead_path, Some(&key), None).await;
    assert_eq!(
        ids(&still),
        ids(&dead),
        "the dry run left every delivery dead"
    );
    assert_eq!(rx.received().len(), 3, "and sent nothing");
    assert_eq!(dlq_and_pending(&gw, &key, (3, 0)).await, (3, 0));

    // One from its own row, then the rest in bulk: each leaves the DLQ count.
    let first = ids(&dead)[0];
    let one = format!("/v1/tenants/acme/deliveries/{first}/replay");
    let (s, body) = gw.call("POST", &one, Some(&key), None).await;
    assert_eq!(s, 200, "{body}");
    gw.wait_delivery("acme", &key, first, WAIT, is_final).await;
    assert_eq!(dlq_and_pending(&gw, &key, (2, 0)).await, (2, 0));
    let real = json!({"state": "dead"});
    let (s, replayed) = gw.call("POST", replay, Some(&key), Some(real)).await;
    assert_eq!(s, 200, "{replayed}");
    assert_eq!(replayed["replayed"], 2, "{replayed}");
    assert!(replayed.get("dry_run").is_none(), "{replayed}");
    rx.wait_for(6, WAIT).await;
    for id in ids(&dead) {
        let d = gw.wait_delivery("acme", &key, id, WAIT, is_final).await;
        assert_eq!(
            (d["state"].as_str(), d["series"].as_u64()),
            (Some("succeeded"), Some(2)),
            "{d}"
        );
    }
    assert_eq!(dlq_and_pending(&gw, &key, (0, 0)).await, (0, 0));
    // A delivered one sent again is pending, and never was dead.
    let (s, body) = gw
        .call("POST", &one, Some(&key), Some(json!({"force": true})))
        .await;
    assert_eq!(s, 200, "{body}");
    gw.wait_delivery("acme", &key, first, WAIT, |d| {
        d["series"] == 3 && is_final(d)
    })
    .await;
    assert_eq!(dlq_and_pending(&gw, &key, (0, 0)).await, (0, 0));

    // A bulk resend of the delivered ones: planned, then done, each a new
    // series that reaches the receiver again; `dead_reason` is for dead ones.
    let resend = json!({"state": "succeeded", "dry_run": true});
    let (s, planned) = gw.call("POST", replay, Some(&key), Some(resend)).await;
    assert_eq!((s, &planned["replayed"]), (200, &json!(3)), "{planned}");
    let sent_before = rx.received().len();
    let mut series_before = Vec::new();
    for id in ids(&dead) {
        let (_, d) = gw
            .call(
                "GET",
                &format!("/v1/tenants/acme/deliveries/{id}"),
                Some(&key),
                None,
            )
            .await;
        series_before.push(d["series"].as_u64().unwrap());
    }
    let (s, body) = gw
        .call(
            "POST",
            replay,
            Some(&key),
            Some(json!({"state": "succeeded"})),
        )
        .await;
    assert_eq!((s, &body["replayed"]), (200, &json!(3)), "{body}");
    rx.wait_for(sent_before + 3, WAIT).await;
    for (id, before) in ids(&dead).into_iter().zip(series_before) {
        let d = gw
            .wait_delivery("acme", &key, id, WAIT, |d| {
                d["series"].as_u64() == Some(before + 1) && is_final(d)
            })
            .await;
        assert_eq!(
            (d["state"].as_str(), d["series"].as_u64()),
            (Some("succeeded"), Some(before + 1)),
            "{d}"
        );
    }
    assert_eq!(dlq_and_pending(&gw, &key, (0, 0)).await, (0, 0));
    for (bad, field) in [
        (json!({"state": "pending"}), "state"),
        (
            json!({"state": "succeeded", "dead_reason": "max_attempts"}),
            "dead_reason",
        ),
    ] {
        let (s, b) = gw.call("POST", replay, Some(&key), Some(bad)).await;
        assert_eq!((s, b["error"]["field"].as_str()), (422, Some(field)), "{b}");
    }
    let answer = gw
        .exchange(hookgate_tests::ApiRequest::path(
            http::Method::GET,
            "/metrics",
        ))
        .await;
    let metrics = String::from_utf8_lossy(&answer.body);
    assert!(metrics.contains("\nhookgate_dlq_size 0\n"), "{metrics}");
    gw.stop().await;
}

/// The tenant's stats `(dlq_size, deliveries.pending)`, once they read `want`
/// or after five seconds.
async fn dlq_and_pending(gw: &TestGateway, key: &str, want: (i64, i64)) -> (i64, i64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (_, stats) = gw
            .call("GET", "/v1/tenants/acme/stats", Some(key), None)
            .await;
        let seen = (
            stats["dlq_size"].as_i64().expect("dlq_size"),
            stats["deliveries"]["pending"].as_i64().expect("pending"),
        );
        if seen == want || std::time::Instant::now() > deadline {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Tenant `acme` with two give-up deliveries (a receiver answering 400) and one
/// that ran out of attempts (503 with `max_attempts: 1`); returns the key and the
/// two endpoints' ids.
async fn two_reasons(
    gw: &TestGateway,
    give_up: &Receiver,
    exhausted: &Receiver,
) -> (String, String, String) {
    let key = gw.tenant("acme").await;
    let a = final_deliveries(gw, "acme", &key, &give_up.url(), json!({}), 2).await;
    let one_attempt = json!({"policy": {"max_attempts": 1}});
    let b = final_deliveries(gw, "acme", &key, &exhausted.url(), one_attempt, 1).await;
    (key, a, b)
}

async fn the_dead_list_and_bulk_replay_filter_by_dead_reason(backend: Backend) {
    let give_up = Receiver::start(vec![Reply::status(400); 2]).await;
    let exhausted = Receiver::start(vec![Reply::status(503)]).await;
    let gw = TestGateway::start_on(backend).await;
    let (key, a, b) = two_reasons(&gw, &give_up, &exhausted).await;
    let list =
        |reason: &str| format!("/v1/tenants/acme/deliveries?state=dead&dead_reason={reason}");

    let (s, gave_up) = gw.call("GET", &list("give_up"), Some(&key), None).await;
    assert_eq!((s, ids(&gave_up).len()), (200, 2), "{gave_up}");
    for d in gave_up["data"].as_array().unwrap() {
        assert_eq!(
            (d["endpoint_id"].as_str(), d["dead_reason"].as_str()),
            (Some(a.as_str()), Some("give_up"))
        );
    }
    let (_, ran_out) = gw
        .call("GET", &list("max_attempts"), Some(&key), None)
        .await;
    assert_eq!(ids(&ran_out).len(), 1, "{ran_out}");
    assert_eq!(ran_out["data"][0]["endpoint_id"], b.as_str());
    let (_, none) = gw
        .call("GET", &list("retry_window"), Some(&key), None)
        .await;
    assert_eq!(ids(&none).len(), 0, "{none}");

    let (s, bad) = gw.call("GET", &list("tired"), Some(&key), None).await;
    assert_eq!(s, 400, "{bad}");
    assert_eq!(bad["error"]["field"], "dead_reason");
    let message = bad["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("give_up") && message.contains("internal_error"),
        "{message}"
    );

    let replay = "/v1/tenants/acme/replay";
    let only = json!({"state": "dead", "dead_reason": "max_attempts", "dry_run": true});
    let (s, planned) = gw.call("POST", replay, Some(&key), Some(only)).await;
    assert_eq!((s, &planned["replayed"]), (200, &json!(1)), "{planned}");
    let bad = json!({"state": "dead", "dead_reason": "tired"});
    let (s, refused) = gw.call("POST", replay, Some(&key), Some(bad)).await;
    assert_eq!(
        (s, &refused["error"]["field"]),
        (422, &json!("dead_reason")),
        "{refused}"
    );
    gw.stop().await;
}

async fn the_dlq_summary_counts_dead_by_reason_endpoint_and_tenant(backend: Backend) {
    let give_up = Receiver::start(vec![Reply::status(400); 3]).await;
    let exhausted = Receiver::start(vec![Reply::status(503)]).await;
    let gw = TestGateway::start_on(backend).await;
    let (key, a, b) = two_reasons(&gw, &give_up, &exhausted).await;
    let beta = gw.tenant("beta").await;
    let c = final_deliveries(&gw, "beta", &beta, &give_up.url(), json!({}), 1).await;
    let acme = "/v1/tenants/acme/dlq/summary";

    let (s, summary) = gw.call("GET", acme, Some(&key), None).await;
    assert_eq!(s, 200, "{summary}");
    assert_eq!(
        (&summary["dead"], &summary["complete"]),
        (&json!(3), &json!(true)),
        "{summary}"
    );
    assert_eq!(summary["by_reason"]["give_up"], 2);
    assert_eq!(summary["by_reason"]["max_attempts"], 1);
    assert_eq!(
        summary["by_reason"]["retry_window"], 0,
        "every reason is listed"
    );
    assert_eq!(
        summary["by_endpoint"],
        json!([{"endpoint_id": a, "dead": 2}, {"endpoint_id": b, "dead": 1}])
    );
    assert!(summary.get("by_tenant").is_none(), "{summary}");
    let (s, as_admin) = gw
        .call("GET", acme, Some(hookgate_tests::ADMIN), None)
        .await;
    assert_eq!((s, &as_admin), (200, &summary));
    let (s, _) = gw.call("GET", acme, Some(&beta), None).await;
    assert_eq!(s, 404, "another tenant's summary is not found");

    let all = "/v1/dlq/summary";
    let (s, _) = gw.call("GET", all, Some(&key), None).await;
    assert_eq!(s, 403, "the summary across tenants is the admin's");
    let (s, all) = gw.call("GET", all, Some(hookgate_tests::ADMIN), None).await;
    assert_eq!(s, 200, "{all}");
    assert_eq!(
        (&all["dead"], &all["by_reason"]["give_up"]),
        (&json!(4), &json!(3)),
        "{all}"
    );
    assert_eq!(
        all["by_tenant"],
        json!([{"tenant_id": "acme", "dead": 3}, {"tenant_id": "beta", "dead": 1}])
    );
    assert_eq!(
        all["by_endpoint"][2],
        json!({"tenant_id": "beta", "endpoint_id": c, "dead": 1})
    );
    gw.stop().await;
}
