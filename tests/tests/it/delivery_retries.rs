//! The delivery engine against real receivers: signed retries, classification,
//! Retry-After, transport failures, limits.

use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::verify::verify_with_official_library;
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::json;

hookgate_tests::on_each_backend! {
    retries_503_then_succeeds_with_signed_requests_and_growing_gaps,
    not_found_gives_up_after_one_attempt,
    gone_disables_the_endpoint,
    retry_after_is_a_floor,
    hangs_refusals_and_redirects_are_retried,
    limits_make_deliveries_dead,
}

const WAIT: Duration = Duration::from_secs(30);

async fn retries_503_then_succeeds_with_signed_requests_and_growing_gaps(backend: Backend) {
    let rx = Receiver::start(vec![
        Reply::status(503),
        Reply::status(503),
        Reply::status(200),
    ])
    .await;
    let gw = TestGateway::start_on(backend).await;
    let policy = json!({"policy": {"jitter": "none", "base_ms": 200, "factor": 3}});
    let (key, ep, dlv) = gw.one_delivery(&rx.url(), policy).await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    assert_eq!(d["attempts"], 3);

    let got = rx.wait_for(3, WAIT).await;
    assert_eq!(got.len(), 3, "exactly three requests");
    let id = got[0].header("webhook-id").unwrap();
    assert!(
        got.iter().all(|r| r.header("webhook-id") == Some(id)),
        "one webhook-id across retries"
    );
    assert_eq!(id, d["event_id"].as_str().unwrap());
    for r in &got {
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert!(r.header("user-agent").unwrap().starts_with("hookgate/"));
        assert_eq!(&r.body[..], br#"{"hello":"world","n":1}"#);
    }
    verify_with_official_library(ep["secret"].as_str().unwrap(), &got);

    let gap1 = got[1].at - got[0].at;
    let gap2 = got[2].at - got[1].at;
    assert!(gap1 >= Duration::from_millis(200), "first gap {gap1:?}");
    assert!(
        gap2 > gap1 * 2,
        "second gap {gap2:?} not more than twice the first {gap1:?}"
    );

    let log = d["attempt_log"].as_array().unwrap();
    assert_eq!(log.len(), 3);
    assert_eq!(log[0]["status"], 503);
    assert_eq!(log[0]["verdict"], "retry");
    assert_eq!(log[0]["delay_ms"], 200);
    assert_eq!(log[1]["delay_ms"], 600);
    assert_eq!(log[2]["verdict"], "delivered");
    assert!(
        log.iter()
            .all(|a| a["decided_by"] == "builtin" && a["series"] == 1)
    );
    assert_eq!(log[0]["response_snippet"], "ok");
}

async fn not_found_gives_up_after_one_attempt(backend: Backend) {
    let rx = Receiver::start(vec![Reply::status(404)]).await;
    let gw = TestGateway::start_on(backend).await;
    let (key, _, dlv) = gw.one_delivery(&rx.url(), json!({})).await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("give_up")),
        "{d}"
    );
    assert_eq!(d["attempts"], 1);
    assert_eq!(d["last_status"], 404);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.received().len(), 1);
    let (_, dlq) = gw
        .call(
            "GET",
            "/v1/tenants/acme/deliveries?state=dead",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(dlq["data"][0]["id"], dlv.as_str());
}

async fn gone_disables_the_endpoint(backend: Backend) {
    let rx = Receiver::start(vec![Reply::status(410)]).await;
    let gw = TestGateway::start_on(backend).await;
    let (key, ep, dlv) = gw.one_delivery(&rx.url(), json!({})).await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("endpoint_disabled")),
        "{d}"
    );
    let (_, e) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap()),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        (e["disabled"].as_bool(), e["disabled_reason"].as_str()),
        (Some(true), Some("gone"))
    );
    // A disabled endpoint gets no new deliveries.
    let ev = gw.event("acme", &key, "test.event", json!({})).await;
    assert_eq!(ev["deliveries"], json!([]));
}

async fn retry_after_is_a_floor(backend: Backend) {
    let rx = Receiver::start(vec![Reply::status(429).header("retry-after", "2")]).await;
    let gw = TestGateway::start_on(backend).await;
    let (key, _, dlv) = gw
        .one_delivery(
            &rx.url(),
            json!({"policy": {"jitter": "none", "base_ms": 100}}),
        )
        .await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    let got = rx.received();
    assert_eq!(got.len(), 2);
    assert!(
        got[1].at - got[0].at >= Duration::from_secs(2),
        "retried after {:?}",
        got[1].at - got[0].at
    );
    assert_eq!(d["attempt_log"][0]["delay_ms"], 2000);
}

async fn hangs_refusals_and_redirects_are_retried(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let fast = json!({"jitter": "none", "base_ms": 100});

    // A receiver that hangs past timeout_ms, then answers.
    let hang = Receiver::start(vec![Reply::status(200).after(Duration::from_secs(3))]).await;
    // A 301 is never followed, and retried.
    let redirect = Receiver::start(vec![
        Reply::status(301).header("location", "http://127.0.0.1:9/"),
    ])
    .await;
    // A port where nothing listens refuses the connection.
    let refused_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let cases = [
        (
            hang.url(),
            json!({"timeout_ms": 300, "policy": fast}),
            "timeout",
            true,
        ),
        (redirect.url(), json!({"policy": fast}), "redirect", true),
        (
            format!("http://127.0.0.1:{refused_port}/"),
            json!({"policy": {"jitter": "none", "base_ms": 100, "max_attempts": 2}}),
            "connect",
            false,
        ),
    ];
    let mut expected = std::collections::HashMap::new();
    for (url, extra, kind, recovers) in cases {
        let mut body = json!({"url": url});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let ep = gw.endpoint("acme", &key, body).await;
        expected.insert(ep["id"].as_str().unwrap().to_owned(), (kind, recovers));
    }
    let ev = gw.event("acme", &key, "x", json!({})).await;
    let deliveries = ev["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 3);
    for dlv in deliveries {
        let (kind, recovers) = expected[dlv["endpoint_id"].as_str().unwrap()];
        let d = gw
            .wait_delivery("acme", &key, dlv["id"].as_str().unwrap(), WAIT, is_final)
            .await;
        let first = &d["attempt_log"][0];
        assert_eq!(
            (first["error_kind"].as_str(), first["verdict"].as_str()),
            (Some(kind), Some("retry")),
            "{d}"
        );
        assert!(
            d["attempts"].as_u64().unwrap() >= 2,
            "{kind} was not retried: {d}"
        );
        if recovers {
            assert_eq!(d["state"], "succeeded", "{kind}: {d}");
        } else {
            assert_eq!(
                (d["state"].as_str(), d["dead_reason"].as_str()),
                (Some("dead"), Some("max_attempts")),
                "{d}"
            );
        }
    }
    assert_eq!(hang.received().len(), 2);
    assert_eq!(redirect.received().len(), 2);
}

async fn limits_make_deliveries_dead(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let failing = Receiver::start((0..20).map(|_| Reply::status(500)).collect()).await;
    let by_count = gw.endpoint("acme", &key, json!({"url": failing.url(), "event_types": ["count"], "policy": {"jitter": "none", "base_ms": 100, "max_attempts": 3}})).await;
    let by_window = gw.endpoint("acme", &key, json!({"url": failing.url(), "event_types": ["window"], "policy": {"jitter": "none", "base_ms": 200, "factor": 2, "retry_window_ms": "1s"}})).await;
    assert_eq!(by_window["policy_effective"]["retry_window_ms"], 1000);

    let count = gw.event("acme", &key, "count", json!({})).await;
    let window = gw.event("acme", &key, "window", json!({})).await;
    let d = gw
        .wait_delivery(
            "acme",
            &key,
            count["deliveries"][0]["id"].as_str().unwrap(),
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
        (Some("dead"), Some("max_attempts"), Some(3)),
        "{d}"
    );
    assert_eq!(d["max_attempts"], 3);
    assert_eq!(by_count["policy_effective"]["max_attempts"], 3);
    let d = gw
        .wait_delivery(
            "acme",
            &key,
            window["deliveries"][0]["id"].as_str().unwrap(),
            WAIT,
            is_final,
        )
        .await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("retry_window")),
        "{d}"
    );
    // Attempts at about 0, 200 and 600 ms; the next (after 800 ms) would pass the 1 s window.
    assert_eq!(d["attempts"], 3, "{d}");
}
