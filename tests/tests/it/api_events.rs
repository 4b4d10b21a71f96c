//! Events: ingest and fan-out, idempotency, byte-exact payloads, reads, delivery
//! lists with filters and cursors, and the bad-input answers.

use hookgate_tests::{ApiRequest, Backend, TestGateway};
use http::Method;
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    events_fan_out_by_type_and_read_back,
    payload_reads_back_byte_for_byte,
    idempotency_keys_replay_or_refuse,
    bad_events_get_their_error,
    delivery_lists_filter_and_page,
}

const URL: &str = "http://127.0.0.1:9/hook";

fn ids(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn events_fan_out_by_type_and_read_back(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let orders = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": URL, "event_types": ["order.*"]}),
        )
        .await;
    let all = gw.endpoint("acme", &key, json!({"url": URL})).await;
    let off = gw
        .endpoint("acme", &key, json!({"url": URL, "disabled": true}))
        .await;
    assert_eq!(off["disabled"], true);

    let ev = gw.event("acme", &key, "order.paid", json!({"n": 1})).await;
    let eps: Vec<_> = ev["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["endpoint_id"].clone())
        .collect();
    assert_eq!(eps.len(), 2);
    assert!(eps.contains(&orders["id"]) && eps.contains(&all["id"]));
    let ev2 = gw.event("acme", &key, "order", json!({})).await;
    assert_eq!(
        ev2["deliveries"].as_array().unwrap().len(),
        1,
        "order.* does not match order"
    );

    let id = ev["id"].as_str().unwrap();
    assert!(id.starts_with("evt_"));
    let (s, b) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/events/{id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        (b["event_type"].as_str(), &b["payload"]),
        (Some("order.paid"), &json!({"n": 1}))
    );
    assert!(b["created_at"].as_str().unwrap().ends_with('Z'));
    let d = &b["deliveries"][0];
    for f in [
        "id",
        "endpoint_id",
        "state",
        "attempts",
        "max_attempts",
        "next_attempt_at",
        "last_status",
        "dead_reason",
    ] {
        assert!(d.get(f).is_some(), "delivery lacks {f}");
    }
    assert_eq!(d["max_attempts"], 40);
    assert_eq!(
        gw.call("GET", "/v1/tenants/acme/events/evt_nope", Some(&key), None)
            .await
            .0,
        404
    );
}

async fn payload_reads_back_byte_for_byte(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let payload =
        r#"{ "z" :1,"a":  [ 1.50, 12345678901234567890123, -0.0 ],"u":"\u00e9\n" ,  "b":{}}"#;
    let body = format!(r#"{{"event_type":"x.y","payload":{payload}}}"#);
    let (s, b) = gw
        .call_raw(
            "POST",
            "/v1/tenants/acme/events",
            &key,
            body.into_bytes(),
            &[],
        )
        .await;
    assert_eq!(s, 202, "{b}");
    let id = serde_json::from_str::<Value>(&b).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/v1/tenants/acme/events/{id}");
    let raw = gw
        .exchange(ApiRequest::path(Method::GET, &path).token(Some(&key)))
        .await;
    let text = String::from_utf8_lossy(&raw.body);
    assert!(
        text.contains(&format!("\"payload\":{payload}")),
        "payload changed: {text}"
    );
}

async fn idempotency_keys_replay_or_refuse(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": URL})).await;
    let body = br#"{"event_type":"a","payload":{"x":1}}"#.to_vec();
    let path = "/v1/tenants/acme/events";
    let (s1, first) = gw
        .call_raw(
            "POST",
            path,
            &key,
            body.clone(),
            &[("idempotency-key", "k-1")],
        )
        .await;
    let (s2, again) = gw
        .call_raw(
            "POST",
            path,
            &key,
            body.clone(),
            &[("idempotency-key", "k-1")],
        )
        .await;
    assert_eq!((s1, s2), (202, 202));
    assert_eq!(first, again, "a repeat gets the original body");
    let (_, list) = gw
        .call("GET", "/v1/tenants/acme/deliveries", Some(&key), None)
        .await;
    assert_eq!(ids(&list).len(), 1, "the repeat created nothing");

    let other = br#"{"event_type":"a","payload":{"x":2}}"#.to_vec();
    let (s, b) = gw
        .call_raw("POST", path, &key, other, &[("idempotency-key", "k-1")])
        .await;
    assert_eq!(s, 422);
    assert!(b.contains("idempotency_key_reused"));

    // Concurrent repeats: exactly one event is created and both get its body.
    let (a, b) = tokio::join!(
        gw.call_raw(
            "POST",
            path,
            &key,
            body.clone(),
            &[("idempotency-key", "k-2")]
        ),
        gw.call_raw(
            "POST",
            path,
            &key,
            body.clone(),
            &[("idempotency-key", "k-2")]
        ),
    );
    assert_eq!((a.0, b.0), (202, 202));
    assert_eq!(a.1, b.1);
    let (_, list) = gw
        .call("GET", "/v1/tenants/acme/deliveries", Some(&key), None)
        .await;
    assert_eq!(ids(&list).len(), 2);

    let long = "k".repeat(256);
    let (s, b) = gw
        .call_raw("POST", path, &key, body, &[("idempotency-key", &long)])
        .await;
    assert_eq!(s, 400, "{b}");
}

async fn bad_events_get_their_error(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let path = "/v1/tenants/acme/events";
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (b"{\"event_type\":".to_vec(), 400, "invalid_json"),
        (b"[1,2]".to_vec(), 400, "invalid_field"),
        (
            br#"{"event_type":5,"payload":{}}"#.to_vec(),
            400,
            "invalid_field",
        ),
        (br#"{"payload":{}}"#.to_vec(), 400, "invalid_field"),
        (br#"{"event_type":"a"}"#.to_vec(), 400, "invalid_field"),
        (
            br#"{"event_type":"","payload":{}}"#.to_vec(),
            422,
            "validation_failed",
        ),
        (
            format!(r#"{{"event_type":"{}","payload":{{}}}}"#, "a".repeat(129)).into_bytes(),
            422,
            "validation_failed",
        ),
        (
            br#"{"event_type":"a b","payload":{}}"#.to_vec(),
            422,
            "validation_failed",
        ),
        (
            format!(
                r#"{{"event_type":"a","payload":"{}"}}"#,
                "x".repeat(257 * 1024)
            )
            .into_bytes(),
            413,
            "payload_too_large",
        ),
    ];
    for (body, status, code) in cases {
        let (s, b) = gw.call_raw("POST", path, &key, body.clone(), &[]).await;
        assert_eq!(
            s,
            status,
            "{} → {b}",
            String::from_utf8_lossy(&body[..body.len().min(80)])
        );
        assert!(b.contains(code), "{b}");
    }
    let (_, list) = gw
        .call("GET", "/v1/tenants/acme/deliveries", Some(&key), None)
        .await;
    assert_eq!(list["data"], json!([]));
}

async fn delivery_lists_filter_and_page(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let a = gw
        .endpoint("acme", &key, json!({"url": URL, "event_types": ["a"]}))
        .await;
    gw.endpoint("acme", &key, json!({"url": URL, "event_types": ["b"]}))
        .await;
    for i in 0..5 {
        gw.event(
            "acme",
            &key,
            if i % 2 == 0 { "a" } else { "b" },
            json!({"i": i}),
        )
        .await;
    }
    let base = "/v1/tenants/acme/deliveries";
    let (s, all) = gw.call("GET", base, Some(&key), None).await;
    assert_eq!(s, 200);
    let all_ids = ids(&all);
    assert_eq!(all_ids.len(), 5);
    let mut sorted = all_ids.clone();
    sorted.sort_by(|x, y| y.cmp(x));
    assert_eq!(all_ids, sorted, "newest first");

    let (_, by_ep) = gw
        .call(
            "GET",
            &format!("{base}?endpoint_id={}", a["id"].as_str().unwrap()),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(ids(&by_ep).len(), 3);
    let (_, by_type) = gw
        .call("GET", &format!("{base}?event_type=b"), Some(&key), None)
        .await;
    assert_eq!(ids(&by_type).len(), 2);
    let (_, dead) = gw
        .call("GET", &format!("{base}?state=dead"), Some(&key), None)
        .await;
    assert_eq!(ids(&dead).len(), 0);
    let (_, future) = gw
        .call(
            "GET",
            &format!("{base}?since=2999-01-01T00:00:00Z"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(ids(&future).len(), 0);
    let (_, past) = gw
        .call(
            "GET",
            &format!("{base}?until=2999-01-01T00:00:00Z&since=2000-01-01T00:00:00Z"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(ids(&past).len(), 5);

    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let q = cursor
            .as_ref()
            .map_or(String::new(), |c| format!("&cursor={c}"));
        let (_, page) = gw
            .call("GET", &format!("{base}?limit=2{q}"), Some(&key), None)
            .await;
        paged.extend(ids(&page));
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(paged, all_ids);

    for bad in ["state=lost", "since=yesterday", "limit=999", "limit=x"] {
        let (s, b) = gw
            .call("GET", &format!("{base}?{bad}"), Some(&key), None)
            .await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (400, Some("invalid_field")),
            "{bad}"
        );
    }

    let one = &all_ids[0];
    let (s, d) = gw
        .call("GET", &format!("{base}/{one}"), Some(&key), None)
        .await;
    assert_eq!(s, 200);
    assert!(d["attempt_log"].is_array());
    assert_eq!(d["series"], 1);
    assert_eq!(
        gw.call("GET", &format!("{base}/dlv_nope"), Some(&key), None)
            .await
            .0,
        404
    );
    // One event's deliveries, by its id or its uid, with the other filters.
    let both = gw.endpoint("acme", &key, json!({"url": URL})).await;
    let body = json!({"event_type": "a", "uid": "order-7", "payload": {}});
    let (s, ev) = gw
        .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
        .await;
    assert!(s == 201 || s == 202, "{ev}");
    let mut of_event: Vec<String> = ev["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    of_event.sort_by(|x, y| y.cmp(x));
    assert_eq!(of_event.len(), 2, "{ev}");
    for named in [ev["id"].as_str().unwrap(), "order-7"] {
        let (s, listed) = gw
            .call("GET", &format!("{base}?event_id={named}"), Some(&key), None)
            .await;
        assert_eq!(
            (s, ids(&listed)),
            (200, of_event.clone()),
            "{named}: {listed}"
        );
        assert_eq!(listed["next_cursor"], Value::Null);
    }
    let both_id = both["id"].as_str().unwrap();
    let (_, narrowed) = gw
        .call(
            "GET",
            &format!("{base}?event_id=order-7&endpoint_id={both_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(ids(&narrowed).len(), 1, "{narrowed}");
    let (s, none) = gw
        .call(
            "GET",
            &format!("{base}?event_id=evt_nope"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!((s, ids(&none).len()), (200, 0), "{none}");
    let (s, e) = gw
        .call("GET", &format!("{base}?event_id="), Some(&key), None)
        .await;
    assert_eq!((s, &e["error"]["field"]), (400, &json!("event_id")), "{e}");
}

#[tokio::test]
async fn low_disk_refuses_ingest_and_fails_health() {
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let mut config = hookgate_tests::test_config(dir.path());
    config.store.min_free_disk = u64::MAX;
    let gw = TestGateway::start_with(config, dir, Default::default()).await;
    let key = gw.tenant("acme").await;
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/events",
            Some(&key),
            Some(json!({"event_type": "a", "payload": {}})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (507, Some("insufficient_storage"))
    );
    assert_eq!(gw.call("GET", "/healthz", None, None).await.0, 503);
}
