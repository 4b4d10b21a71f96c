//! Listing events: newest or oldest first, paged both ways, filtered by type
//! patterns, channel, tag and time, each page saying how many stored events
//! it read.

use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{Backend, TestGateway};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    events_list_both_ways_and_filter_as_asked,
    an_expunged_payload_is_gone_for_good_and_its_delivery_ends_without_a_request,
}

/// The `n` payload field of each listed event.
fn ns(page: &Value) -> Vec<u64> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["payload"]["n"].as_u64().unwrap())
        .collect()
}

async fn events_list_both_ways_and_filter_as_asked(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let other = gw.tenant("other").await;
    gw.event("other", &other, "order.paid", json!({"n": 99}))
        .await;
    let mut middle_time = String::new();
    for n in 0..12u64 {
        let event_type = if n % 2 == 0 {
            "order.paid"
        } else {
            "refund.made"
        };
        let channels = if n % 3 == 0 { json!(["eu"]) } else { json!([]) };
        let tags = if n % 4 == 0 {
            json!(["vip"])
        } else {
            json!([])
        };
        let body = json!({"event_type": event_type, "payload": {"n": n}, "channels": channels, "tags": tags});
        let (s, b) = gw
            .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
            .await;
        assert_eq!(s, 202, "{b}");
        if n == 6 {
            let (_, ev) = gw
                .call(
                    "GET",
                    &format!("/v1/tenants/acme/events/{}", b["id"].as_str().unwrap()),
                    Some(&key),
                    None,
                )
                .await;
            middle_time = ev["created_at"].as_str().unwrap().to_owned();
        }
        // Distinct milliseconds, so the time filter below cuts cleanly.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let list = |query: &str| {
        let path = format!("/v1/tenants/acme/events?{query}");
        let (gw, key) = (&gw, key.clone());
        async move {
            let (s, page) = gw.call("GET", &path, Some(&key), None).await;
            assert_eq!(s, 200, "{path}: {page}");
            page
        }
    };
    // Newest first, five at a time, forward and back.
    let first = list("limit=5").await;
    assert_eq!(ns(&first), [11, 10, 9, 8, 7]);
    assert_eq!(first["scanned"], 5);
    let next = first["next_cursor"].as_str().unwrap();
    let second = list(&format!("limit=5&cursor={next}")).await;
    assert_eq!(ns(&second), [6, 5, 4, 3, 2]);
    let third = list(&format!(
        "limit=5&cursor={}",
        second["next_cursor"].as_str().unwrap()
    ))
    .await;
    assert_eq!(ns(&third), [1, 0]);
    assert!(third["next_cursor"].is_null());
    let back = list(&format!(
        "limit=5&cursor={}",
        second["prev_cursor"].as_str().unwrap()
    ))
    .await;
    assert_eq!(
        ns(&back),
        [11, 10, 9, 8, 7],
        "the page before the second is the first"
    );
    let newer = list(&format!(
        "limit=5&cursor={}",
        first["prev_cursor"].as_str().unwrap()
    ))
    .await;
    assert_eq!(
        ns(&newer),
        Vec::<u64>::new(),
        "nothing arrived since the first page"
    );
    // Oldest first.
    let asc = list("limit=4&order=ascending").await;
    assert_eq!(ns(&asc), [0, 1, 2, 3]);
    let asc2 = list(&format!(
        "limit=4&order=ascending&cursor={}",
        asc["next_cursor"].as_str().unwrap()
    ))
    .await;
    assert_eq!(ns(&asc2), [4, 5, 6, 7]);
    // Filters, and the events each page read to answer them.
    let refunds = list("event_types=refund.*").await;
    assert_eq!(ns(&refunds), [11, 9, 7, 5, 3, 1]);
    assert_eq!(
        refunds["scanned"], 12,
        "every event of the tenant, no other's"
    );
    assert_eq!(
        ns(&list("event_types=order.paid,refund.made&limit=3").await),
        [11, 10, 9]
    );
    assert_eq!(ns(&list("channel=eu").await), [9, 6, 3, 0]);
    assert_eq!(ns(&list("tag=vip&order=ascending").await), [0, 4, 8]);
    assert_eq!(ns(&list("channel=eu&tag=vip").await), [0]);
    let since = list(&format!("since={middle_time}&order=ascending")).await;
    assert_eq!(ns(&since), [6, 7, 8, 9, 10, 11]);
    assert_eq!(since["scanned"], 6, "a time range is read as an id range");
    let until = list(&format!("until={middle_time}")).await;
    assert_eq!(ns(&until), [5, 4, 3, 2, 1, 0]);
    let one = &list("limit=1").await["data"][0];
    for field in [
        "id",
        "event_type",
        "payload",
        "channels",
        "tags",
        "created_at",
        "deliveries",
    ] {
        assert!(one.get(field).is_some(), "{field}: {one}");
    }
    for bad in [
        "cursor=nope",
        "order=sideways",
        "event_types=ord*er",
        "since=yesterday",
        "limit=0",
    ] {
        let (s, b) = gw
            .call(
                "GET",
                &format!("/v1/tenants/acme/events?{bad}"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (400, Some("invalid_field")),
            "{bad}: {b}"
        );
    }
}

async fn an_expunged_payload_is_gone_for_good_and_its_delivery_ends_without_a_request(
    backend: Backend,
) {
    let gw = TestGateway::start_on(backend).await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": rx.url()})).await;
    let down = json!({"url": "http://127.0.0.1:9/down", "policy": {"max_attempts": 1}});
    gw.endpoint("acme", &key, down).await;
    let body = json!({"event_type": "user.created", "payload": {"email": "a@example.com"}, "uid": "user-1"});
    let (_, ev) = gw
        .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
        .await;
    let deliveries: Vec<String> = ev["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .collect();
    let path = "/v1/tenants/acme/events/user-1/payload";
    // Refused while a delivery is pending (or done, if both already ended).
    let (s, b) = gw.call("DELETE", path, Some(&key), None).await;
    assert!(s == 409 || s == 204, "{s} {b}");
    for d in &deliveries {
        gw.wait_delivery(
            "acme",
            &key,
            d,
            Duration::from_secs(20),
            hookgate_tests::is_final,
        )
        .await;
    }
    assert_eq!(rx.wait_for(1, Duration::from_secs(10)).await.len(), 1);
    let (s, b) = gw.call("DELETE", path, Some(&key), None).await;
    assert_eq!(s, 204, "{b}");
    let (s, _) = gw.call("DELETE", path, Some(&key), None).await;
    assert_eq!(s, 204, "again: nothing left to remove");
    let (_, shown) = gw
        .call("GET", "/v1/tenants/acme/events/user-1", Some(&key), None)
        .await;
    assert_eq!(shown["payload"], Value::Null, "{shown}");
    assert!(shown["payload_expunged_at"].is_string());
    assert_eq!(
        shown["deliveries"].as_array().unwrap().len(),
        2,
        "the logs stay"
    );
    let (_, listed) = gw
        .call("GET", "/v1/tenants/acme/events", Some(&key), None)
        .await;
    assert_eq!(listed["data"][0]["payload"], Value::Null);
    // A replay is refused; a bulk replay's delivery ends without a request.
    let dead = shown["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["state"] == "dead")
        .map(|d| d["id"].as_str().unwrap().to_owned())
        .unwrap();
    let replay_one = format!("/v1/tenants/acme/deliveries/{dead}/replay");
    let (s, b) = gw.call("POST", &replay_one, Some(&key), None).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (409, Some("conflict")),
        "{b}"
    );
    let all_dead = json!({"state": "dead"});
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/replay",
            Some(&key),
            Some(all_dead),
        )
        .await;
    assert_eq!((s, b["replayed"].as_u64()), (200, Some(1)), "{b}");
    let ended = gw
        .wait_delivery("acme", &key, &dead, Duration::from_secs(20), |d| {
            d["dead_reason"] == "payload_expunged"
        })
        .await;
    assert_eq!(ended["dead_reason"], "payload_expunged", "{ended}");
    let (s, _) = gw
        .call(
            "DELETE",
            "/v1/tenants/acme/events/evt_nope/payload",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(s, 404);
    assert_eq!(rx.received().len(), 1, "nothing more was sent");
}
