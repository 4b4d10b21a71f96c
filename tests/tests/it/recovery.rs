//! Recovery as background tasks: an endpoint's dead deliveries since a time
//! replayed, and the deliveries an endpoint missed (created later) made, each
//! exactly those, once.

use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{Backend, TestGateway};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    recover_replays_the_dead_deliveries_since_a_time,
    replay_missing_gives_a_later_endpoint_what_reaches_it_once,
}

/// Waits for the task at `location` to end; returns it.
async fn task_done(gw: &TestGateway, key: &str, started: &Value) -> Value {
    let path = format!("/v1/tenants/acme/tasks/{}", started["id"].as_str().unwrap());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (s, t) = gw.call("GET", &path, Some(key), None).await;
        assert_eq!(s, 200, "{t}");
        if t["state"] != "running" {
            return t;
        }
        assert!(tokio::time::Instant::now() < deadline, "{t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Now, as the API writes times (the gateway runs on this machine's clock).
fn now_rfc3339() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    hookgate_server::rfc3339_ms(ms)
}

async fn recover_replays_the_dead_deliveries_since_a_time(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": "http://127.0.0.1:9/down", "policy": {"max_attempts": 1}}),
        )
        .await;
    let ep_path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    let mut deliveries = Vec::new();
    let mut since = String::new();
    for n in 0..5 {
        if n == 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
            since = now_rfc3339();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let ev = gw.event("acme", &key, "order.paid", json!({"n": n})).await;
        deliveries.push(ev["deliveries"][0]["id"].as_str().unwrap().to_owned());
    }
    for d in &deliveries {
        let done = gw
            .wait_delivery(
                "acme",
                &key,
                d,
                Duration::from_secs(20),
                hookgate_tests::is_final,
            )
            .await;
        assert_eq!(done["state"], "dead", "{done}");
    }
    // The receiver is fixed: recover the endpoint from `since`.
    let (s, _) = gw
        .call(
            "PATCH",
            &ep_path,
            Some(&key),
            Some(json!({"url": rx.url()})),
        )
        .await;
    assert_eq!(s, 200);
    let (s, started) = gw
        .call(
            "POST",
            &format!("{ep_path}/recover"),
            Some(&key),
            Some(json!({"since": since})),
        )
        .await;
    assert_eq!(s, 202, "{started}");
    assert_eq!(started["kind"], "endpoint_recover");
    let done = task_done(&gw, &key, &started).await;
    assert_eq!(
        (done["state"].as_str(), done["changed"].as_u64()),
        (Some("finished"), Some(3)),
        "{done}"
    );
    assert_eq!(rx.wait_for(3, Duration::from_secs(20)).await.len(), 3);
    for (n, d) in deliveries.iter().enumerate() {
        let after = gw
            .wait_delivery(
                "acme",
                &key,
                d,
                Duration::from_secs(20),
                hookgate_tests::is_final,
            )
            .await;
        let want = if n < 2 { "dead" } else { "succeeded" };
        assert_eq!(after["state"], want, "delivery {n}: {after}");
    }
    let (s, b) = gw
        .call(
            "POST",
            &format!("{ep_path}/recover"),
            Some(&key),
            Some(json!({"since": "nope"})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (400, Some("since")),
        "{b}"
    );
    let (s, b) = gw
        .call(
            "POST",
            &format!("{ep_path}/recover"),
            Some(&key),
            Some(json!({"since": since, "until": since})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("until")),
        "{b}"
    );
    let (s, _) = gw
        .call(
            "POST",
            "/v1/tenants/acme/endpoints/ep_nope/recover",
            Some(&key),
            Some(json!({"since": since})),
        )
        .await;
    assert_eq!(s, 404);
}

async fn replay_missing_gives_a_later_endpoint_what_reaches_it_once(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let early = Receiver::start(vec![Reply::status(200)]).await;
    let late = Receiver::start(vec![Reply::status(200)]).await;
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": early.url()})).await;
    let since = now_rfc3339();
    tokio::time::sleep(Duration::from_millis(5)).await;
    for (event_type, payload, channels) in [
        ("order.paid", json!({"amount": 5}), json!([])),
        ("order.paid", json!({"amount": 500}), json!([])),
        ("order.paid", json!({"amount": 700}), json!(["us"])),
        ("order.shipped", json!({"amount": 900}), json!(["eu"])),
        ("refund.made", json!({"amount": 800}), json!([])),
    ] {
        let body = json!({"event_type": event_type, "payload": payload, "channels": channels});
        let (s, _) = gw
            .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
            .await;
        assert_eq!(s, 202);
    }
    assert_eq!(early.wait_for(5, Duration::from_secs(20)).await.len(), 5);
    // Created later: orders over 100 on the EU channel (an endpoint with
    // channels hears no event without one).
    let later = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": late.url(), "uid": "late", "event_types": ["order.*"],
            "channels": ["eu"], "filter": {"amount": {"$gt": 100}}}),
        )
        .await;
    assert_eq!(later["uid"], "late");
    let path = "/v1/tenants/acme/endpoints/late/replay-missing";
    let (s, started) = gw
        .call("POST", path, Some(&key), Some(json!({"since": since})))
        .await;
    assert_eq!(s, 202, "{started}");
    let done = task_done(&gw, &key, &started).await;
    assert_eq!(
        (done["state"].as_str(), done["changed"].as_u64()),
        (Some("finished"), Some(1)),
        "{done}"
    );
    assert_eq!(done["examined"], 5);
    let got = late.wait_for(1, Duration::from_secs(20)).await;
    let mut amounts: Vec<u64> = got
        .iter()
        .map(|r| {
            serde_json::from_slice::<Value>(&r.body).unwrap()["amount"]
                .as_u64()
                .unwrap()
        })
        .collect();
    amounts.sort_unstable();
    assert_eq!(amounts, [900]);
    // Again: nothing is missing now.
    let (_, again) = gw
        .call("POST", path, Some(&key), Some(json!({"since": since})))
        .await;
    let done = task_done(&gw, &key, &again).await;
    assert_eq!(
        (done["state"].as_str(), done["changed"].as_u64()),
        (Some("finished"), Some(0)),
        "{done}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(late.received().len(), 1, "no event twice");
    let (s, tasks) = gw
        .call("GET", "/v1/tenants/acme/tasks", Some(&key), None)
        .await;
    assert_eq!((s, tasks["data"].as_array().unwrap().len()), (200, 2));
    assert_eq!(tasks["data"][0]["endpoint_id"], later["id"]);
}
