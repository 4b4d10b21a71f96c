//! Which endpoints an event reaches (types, channels, payload filters), as
//! docs/payload-filters.md and docs/receivers.md say; endpoints and events
//! named by the platform's own uids; an endpoint put by its uid; a scheduled
//! send held until its time.

use std::time::Duration;

use hookgate::client::ApiRequest;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{Backend, TestGateway};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    channels_and_filters_route_as_documented,
    endpoints_are_named_and_put_by_their_uid,
    an_event_uid_repeats_idempotently_and_names_the_event,
    a_scheduled_send_waits_for_its_time,
}

/// The endpoint ids an ingest answer names, in name order.
fn reached(answer: &Value, names: &[(&str, String)]) -> Vec<String> {
    let mut out: Vec<String> = answer["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let id = d["endpoint_id"].as_str().unwrap();
            names.iter().find(|(_, i)| i == id).unwrap().0.to_owned()
        })
        .collect();
    out.sort();
    out
}

async fn channels_and_filters_route_as_documented(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;
    let key = gw.tenant("acme").await;
    let mut names = Vec::new();
    for (name, extra) in [
        ("all", json!({})),
        ("eu", json!({"channels": ["eu"]})),
        ("big", json!({"filter": {"amount": {"$gte": 100}}})),
        (
            "us_vip",
            json!({"channels": ["us"], "filter": {"customer.tier": "vip"}}),
        ),
        ("refunds", json!({"event_types": ["refund.*"]})),
        (
            "nested",
            json!({"filter": {"$or": [{"amount": {"$lt": 10}}, {"$and": [{"customer.tier": {"$in": ["gold", "vip"]}}, {"test": {"$neq": true}}]}]}}),
        ),
    ] {
        let mut body = json!({"url": rx.url()});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let ep = gw.endpoint("acme", &key, body).await;
        names.push((name, ep["id"].as_str().unwrap().to_owned()));
    }
    let cases = [
        (json!({"amount": 5}), json!([]), vec!["all", "nested"]),
        (
            json!({"amount": 500}),
            json!(["eu"]),
            vec!["all", "big", "eu"],
        ),
        (
            json!({"amount": 500, "customer": {"tier": "vip"}}),
            json!(["us"]),
            vec!["all", "big", "nested", "us_vip"],
        ),
        (
            json!({"amount": 50, "customer": {"tier": "gold"}, "test": true}),
            json!(["eu", "us"]),
            vec!["all", "eu"],
        ),
        (json!("not an object"), json!(["us"]), vec!["all"]),
    ];
    let mut expected_requests = 0;
    for (payload, channels, want) in cases {
        let body = json!({"event_type": "order.paid", "payload": payload, "channels": channels});
        let (s, answer) = gw
            .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
            .await;
        assert_eq!(s, 202, "{answer}");
        assert_eq!(reached(&answer, &names), want, "{payload} on {channels}");
        expected_requests += want.len();
    }
    let refund = json!({"event_type": "refund.made", "payload": {"amount": 1}});
    let (_, answer) = gw
        .call("POST", "/v1/tenants/acme/events", Some(&key), Some(refund))
        .await;
    assert_eq!(reached(&answer, &names), ["all", "nested", "refunds"]);
    expected_requests += 3;
    let got = rx
        .wait_for(expected_requests, Duration::from_secs(20))
        .await;
    assert_eq!(
        got.len(),
        expected_requests,
        "each delivery reached the receiver once"
    );

    // A filter is checked when set, naming the place in it; a patch replaces it whole.
    let eps = format!("/v1/tenants/acme/endpoints/{}", names[2].1);
    for (filter, field) in [
        (
            json!({"amount": {"$gte": 1, "$between": 2}}),
            "filter.amount.$between",
        ),
        (json!({"$or": []}), "filter.$or"),
        (json!(["amount"]), "filter"),
    ] {
        let (s, b) = gw
            .call("PATCH", &eps, Some(&key), Some(json!({"filter": filter})))
            .await;
        assert_eq!(
            (s, b["error"]["code"].as_str(), b["error"]["field"].as_str()),
            (422, Some("validation_failed"), Some(field)),
            "{b}"
        );
    }
    let (s, b) = gw
        .call(
            "PATCH",
            &eps,
            Some(&key),
            Some(json!({"filter": {"currency": "EUR"}})),
        )
        .await;
    assert_eq!(
        (s, b["filter"].clone()),
        (200, json!({"currency": "EUR"})),
        "replaced, not merged"
    );
    let (s, b) = gw
        .call("PATCH", &eps, Some(&key), Some(json!({"filter": null})))
        .await;
    assert_eq!((s, b["filter"].clone()), (200, Value::Null));
    let bad = json!({"url": rx.url(), "channels": ["a b"]});
    let (s, b) = gw
        .call("POST", "/v1/tenants/acme/endpoints", Some(&key), Some(bad))
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("channels[0]")),
        "{b}"
    );
    let bad = json!({"event_type": "x", "payload": {}, "tags": ["ok", "no space"]});
    let (s, b) = gw
        .call("POST", "/v1/tenants/acme/events", Some(&key), Some(bad))
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("tags[1]")),
        "{b}"
    );
}

async fn endpoints_are_named_and_put_by_their_uid(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let url = "http://127.0.0.1:9/hook";
    let path = "/v1/tenants/acme/endpoints/orders-eu";
    let body =
        json!({"url": url, "description": "eu orders", "channels": ["eu"], "timeout_ms": 2000});
    let (s, made) = gw.call("PUT", path, Some(&key), Some(body)).await;
    assert_eq!(s, 201, "{made}");
    assert_eq!(made["uid"], "orders-eu");
    assert!(made["secret"].as_str().unwrap().starts_with("whsec_"));
    let id = made["id"].as_str().unwrap().to_owned();
    // Put again: replaced whole, the same endpoint.
    let (s, put) = gw
        .call("PUT", path, Some(&key), Some(json!({"url": url})))
        .await;
    assert_eq!(s, 200, "{put}");
    assert_eq!(
        (put["id"].as_str(), put["uid"].as_str()),
        (Some(id.as_str()), Some("orders-eu"))
    );
    assert_eq!(
        (put["description"].as_str(), put["timeout_ms"].as_u64()),
        (Some(""), Some(15_000))
    );
    assert_eq!(put["channels"], json!([]));
    assert!(put.get("secret").is_none());
    // By uid wherever the id goes.
    let (s, shown) = gw.call("GET", path, Some(&key), None).await;
    assert_eq!((s, shown["id"].as_str()), (200, Some(id.as_str())));
    let (s, patched) = gw
        .call("PATCH", path, Some(&key), Some(json!({"description": "x"})))
        .await;
    assert_eq!((s, patched["description"].as_str()), (200, Some("x")));
    let (s, secret) = gw
        .call("GET", &format!("{path}/secret"), Some(&key), None)
        .await;
    assert_eq!(s, 200, "{secret}");
    // A uid is the tenant's to give once.
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/endpoints",
            Some(&key),
            Some(json!({"url": url, "uid": "orders-eu"})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (409, Some("conflict")),
        "{b}"
    );
    let other = gw
        .endpoint("acme", &key, json!({"url": url, "uid": "other"}))
        .await;
    let other_path = format!(
        "/v1/tenants/acme/endpoints/{}",
        other["id"].as_str().unwrap()
    );
    let (s, b) = gw
        .call(
            "PATCH",
            &other_path,
            Some(&key),
            Some(json!({"uid": "orders-eu"})),
        )
        .await;
    assert_eq!(s, 409, "{b}");
    let (s, b) = gw
        .call(
            "PUT",
            path,
            Some(&key),
            Some(json!({"url": url, "uid": "not-the-path"})),
        )
        .await;
    assert_eq!((s, b["error"]["field"].as_str()), (422, Some("uid")), "{b}");
    let (s, b) = gw
        .call(
            "PUT",
            "/v1/tenants/acme/endpoints/bad%20uid",
            Some(&key),
            Some(json!({"url": url})),
        )
        .await;
    assert_eq!(s, 422, "{b}");
    // Another tenant's uid names nothing here.
    let beta = gw.tenant("beta").await;
    let (s, _) = gw
        .call(
            "GET",
            "/v1/tenants/beta/endpoints/orders-eu",
            Some(&beta),
            None,
        )
        .await;
    assert_eq!(s, 404);
    let (s, _) = gw.call("DELETE", path, Some(&key), None).await;
    assert_eq!(s, 204);
    let (s, _) = gw.call("GET", path, Some(&key), None).await;
    assert_eq!(s, 404);
}

async fn an_event_uid_repeats_idempotently_and_names_the_event(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/x"}))
        .await;
    let send = |body: Value| {
        ApiRequest::path("POST".parse().unwrap(), "/v1/tenants/acme/events")
            .token(Some(&key))
            .json(&body)
    };
    let first = gw
        .exchange(send(
            json!({"event_type": "order.paid", "payload": {"n": 1}, "id": "order-1-paid",
            "channels": ["eu"], "tags": ["order:1"]}),
        ))
        .await;
    assert_eq!(first.status, 202);
    assert!(first.headers.get("idempotent-replayed").is_none());
    let event_id = first.json()["id"].as_str().unwrap().to_owned();
    // The same uid, another body (even another type): the first event, marked replayed.
    let again = gw
        .exchange(send(
            json!({"event_type": "order.other", "payload": {"n": 2}, "uid": "order-1-paid"}),
        ))
        .await;
    assert_eq!(again.status, 202);
    assert_eq!(again.json()["id"], event_id.as_str());
    assert_eq!(again.headers.get("idempotent-replayed").unwrap(), "true");
    for path in [event_id.as_str(), "order-1-paid"] {
        let (s, ev) = gw
            .call(
                "GET",
                &format!("/v1/tenants/acme/events/{path}"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(s, 200, "{ev}");
        assert_eq!(ev["id"], event_id.as_str());
        assert_eq!(
            (ev["uid"].as_str(), ev["payload"]["n"].as_u64()),
            (Some("order-1-paid"), Some(1))
        );
        assert_eq!(
            (ev["channels"].clone(), ev["tags"].clone()),
            (json!(["eu"]), json!(["order:1"]))
        );
    }
    // A header key's repeat with the same body is marked replayed too.
    let keyed = |n: u32| {
        send(json!({"event_type": "a", "payload": {"n": n}})).header("idempotency-key", Some("k-1"))
    };
    let one = gw.exchange(keyed(1)).await;
    let two = gw.exchange(keyed(1)).await;
    assert_eq!((one.status, two.status), (202, 202));
    assert_eq!(two.headers.get("idempotent-replayed").unwrap(), "true");
    assert_eq!(one.json()["id"], two.json()["id"]);
    let bad = gw
        .exchange(send(
            json!({"event_type": "a", "payload": {}, "id": "no spaces allowed"}),
        ))
        .await;
    assert_eq!(
        (bad.status, bad.json()["error"]["field"].as_str()),
        (422, Some("uid"))
    );
}

async fn a_scheduled_send_waits_for_its_time(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": rx.url()})).await;
    let at_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        + 2_500;
    let at = hookgate_server::rfc3339_ms(at_ms);
    let body = json!({"event_type": "reminder", "payload": {}, "deliver_at": at});
    let (s, ev) = gw
        .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
        .await;
    assert_eq!(s, 202, "{ev}");
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let (_, d) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/deliveries/{dlv}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        (d["state"].as_str(), d["attempts"].as_u64()),
        (Some("pending"), Some(0)),
        "{d}"
    );
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(rx.received().is_empty(), "held until its time");
    let got = rx.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 1);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(now_ms >= at_ms, "not before its time");
    let (_, ev) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/events/{}", ev["id"].as_str().unwrap()),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(ev["deliver_at"], at.as_str());
    for (when, why) in [
        ("2030-13-01T00:00:00Z", "not a time"),
        ("2999-01-01T00:00:00Z", "too far"),
    ] {
        let body = json!({"event_type": "x", "payload": {}, "deliver_at": when});
        let (s, b) = gw
            .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
            .await;
        assert_eq!(
            (s, b["error"]["field"].as_str()),
            (422, Some("deliver_at")),
            "{why}: {b}"
        );
    }
}
