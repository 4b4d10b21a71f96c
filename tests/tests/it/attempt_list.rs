//! Attempts (issue 39, item 4): each has an id; a tenant's attempts are
//! listed newest or oldest first, paged both ways, filtered by endpoint (id or
//! uid), event, delivery, outcome, status class and time, each page saying how
//! many stored attempts it read; one attempt shows the request headers sent,
//! signature included and sensitive values masked.

use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    attempts_are_listed_filtered_paged_and_shown_with_their_headers,
}

const WAIT: Duration = Duration::from_secs(30);
const SECRET_VALUE: &str = "k-secret-51c0ffee";

/// The ids of a page's attempts.
fn ids(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect()
}

async fn list(gw: &TestGateway, key: &str, query: &str) -> Value {
    let path = format!("/v1/tenants/acme/attempts?{query}");
    let (s, b) = gw.call("GET", &path, Some(key), None).await;
    assert_eq!(s, 200, "{path}: {b}");
    assert!(
        !b.to_string().contains(SECRET_VALUE),
        "{path} shows the secret: {b}"
    );
    b
}

/// Sends one event and waits until each of its deliveries is final.
async fn settled_event(gw: &TestGateway, key: &str, n: u64) -> (String, Vec<String>) {
    let ev = gw.event("acme", key, "order.paid", json!({"n": n})).await;
    let mut deliveries = Vec::new();
    for d in ev["deliveries"].as_array().unwrap() {
        let id = d["id"].as_str().unwrap();
        gw.wait_delivery("acme", key, id, WAIT, is_final).await;
        deliveries.push(id.to_owned());
    }
    (ev["id"].as_str().unwrap().to_owned(), deliveries)
}

async fn attempts_are_listed_filtered_paged_and_shown_with_their_headers(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let other = gw.tenant("globex").await;
    let rx = Receiver::start(vec![Reply::status(500).header("x-why", "busy")]).await;
    let policy = json!({"max_attempts": 3, "base_ms": 50, "jitter": "none"});
    let good = gw
        .endpoint(
            "acme",
            &key,
            json!({
                "url": rx.url(), "uid": "orders-in", "policy": policy,
                "headers": {"X-Api-Key": SECRET_VALUE, "X-Team": "orders"},
                "sensitive_headers": ["X-Api-Key"],
            }),
        )
        .await;
    let good_id = good["id"].as_str().unwrap().to_owned();
    // Nothing listens on port 9: every attempt is a transport failure.
    let down = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": "http://127.0.0.1:9/down", "policy": {"max_attempts": 1}}),
        )
        .await;
    let down_id = down["id"].as_str().unwrap().to_owned();
    // The first event's delivery to `good` fails once (500) then succeeds.
    let (first_event, first_deliveries) = settled_event(&gw, &key, 1).await;
    let (_second_event, _) = settled_event(&gw, &key, 2).await;

    // All five, newest first, each read once.
    let all = list(&gw, &key, "").await;
    let all_ids = ids(&all);
    assert_eq!((all_ids.len(), &all["scanned"]), (5, &json!(5)), "{all}");
    assert!(all_ids.iter().all(|id| id.starts_with("atm_")), "{all}");
    let mut sorted = all_ids.clone();
    sorted.sort();
    sorted.reverse();
    assert_eq!(all_ids, sorted, "newest first");
    let oldest = list(&gw, &key, "order=ascending").await;
    assert_eq!(
        ids(&oldest),
        sorted.iter().rev().cloned().collect::<Vec<_>>()
    );

    // Filters, alone and together; `scanned` counts what the page read.
    let count = |page: &Value| {
        (
            page["data"].as_array().unwrap().len(),
            page["scanned"].clone(),
        )
    };
    let by_endpoint = list(&gw, &key, &format!("endpoint={good_id}")).await;
    assert_eq!(count(&by_endpoint), (3, json!(3)), "{by_endpoint}");
    let by_uid = list(&gw, &key, "endpoint=orders-in").await;
    assert_eq!(ids(&by_uid), ids(&by_endpoint));
    let down_only = list(&gw, &key, &format!("endpoint={down_id}")).await;
    assert_eq!(count(&down_only), (2, json!(2)), "{down_only}");
    let by_event = list(&gw, &key, &format!("event={first_event}")).await;
    assert_eq!(count(&by_event), (3, json!(3)), "{by_event}");
    let good_delivery = first_deliveries
        .iter()
        .find(|d| by_endpoint.to_string().contains(d.as_str()))
        .unwrap();
    let by_delivery = list(&gw, &key, &format!("delivery={good_delivery}")).await;
    assert_eq!(count(&by_delivery), (2, json!(2)), "{by_delivery}");
    for (query, n) in [
        ("outcome=retry", 1),
        ("outcome=delivered", 2),
        ("outcome=dead", 2),
        ("status_class=5xx", 1),
        ("status_class=2xx", 2),
        ("status_class=transport", 2),
        ("status_class=4xx", 0),
    ] {
        let page = list(&gw, &key, query).await;
        assert_eq!(count(&page), (n, json!(5)), "{query}: {page}");
    }
    let narrow = list(&gw, &key, &format!("endpoint={good_id}&status_class=2xx")).await;
    assert_eq!(count(&narrow), (2, json!(3)), "{narrow}");
    let retried = list(&gw, &key, "outcome=retry").await;
    let failed = &retried["data"][0];
    assert_eq!(
        (
            &failed["status"],
            &failed["endpoint_id"],
            &failed["event_id"]
        ),
        (&json!(500), &json!(good_id), &json!(first_event)),
        "{failed}"
    );

    // Time: `since` is inclusive, `until` exclusive, both on the start time.
    let newest_start = all["data"][0]["started_at"].as_str().unwrap().to_owned();
    let since = list(&gw, &key, &format!("since={newest_start}")).await;
    assert!(ids(&since).contains(&all_ids[0]), "{since}");
    for a in since["data"].as_array().unwrap() {
        assert!(a["started_at"].as_str().unwrap() >= newest_start.as_str());
    }
    let oldest_start = all["data"][4]["started_at"].as_str().unwrap().to_owned();
    let until = list(&gw, &key, &format!("until={oldest_start}")).await;
    assert!(!ids(&until).contains(&all_ids[4]), "{until}");

    // Pages of two, forward and back.
    let p1 = list(&gw, &key, "limit=2").await;
    let next = p1["next_cursor"].as_str().unwrap();
    let p2 = list(&gw, &key, &format!("limit=2&cursor={next}")).await;
    let next = p2["next_cursor"].as_str().unwrap();
    let p3 = list(&gw, &key, &format!("limit=2&cursor={next}")).await;
    assert_eq!(
        [ids(&p1), ids(&p2), ids(&p3)].concat(),
        all_ids,
        "{p1} {p2} {p3}"
    );
    assert!(p3["next_cursor"].is_null(), "{p3}");
    let back = p2["prev_cursor"].as_str().unwrap();
    let p1_again = list(&gw, &key, &format!("limit=2&cursor={back}")).await;
    assert_eq!(ids(&p1_again), ids(&p1));

    // One attempt: the headers as sent, the signature shown, the secret masked.
    let id = failed["id"].as_str().unwrap();
    let path = format!("/v1/tenants/acme/attempts/{id}");
    let (s, shown) = gw.call("GET", &path, Some(&key), None).await;
    assert_eq!(s, 200, "{shown}");
    assert!(!shown.to_string().contains(SECRET_VALUE), "{shown}");
    let header = |name: &str| {
        shown["request_headers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == name)
            .map(|h| h["value"].as_str().unwrap().to_owned())
    };
    assert_eq!(header("x-api-key").as_deref(), Some("********"), "{shown}");
    assert_eq!(header("x-team").as_deref(), Some("orders"), "{shown}");
    assert_eq!(header("webhook-id"), Some(first_event.clone()), "{shown}");
    assert!(
        header("webhook-signature").is_some_and(|s| s.starts_with("v1,")),
        "{shown}"
    );
    // The receiver got the real value with the same signature.
    let sent = rx.received();
    assert_eq!(sent[0].header("x-api-key"), Some(SECRET_VALUE));
    assert_eq!(
        sent[0].header("webhook-signature").map(str::to_owned),
        header("webhook-signature")
    );
    assert_eq!(
        (
            &shown["delivery_id"],
            &shown["outcome"],
            &shown["event_type"]
        ),
        (&json!(good_delivery), &json!("retry"), &json!("order.paid")),
        "{shown}"
    );
    // The delivery's own log shows the same ids.
    let (_, d) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/deliveries/{good_delivery}"),
            Some(&key),
            None,
        )
        .await;
    let logged: Vec<&str> = d["attempt_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    let listed: Vec<String> = ids(&by_delivery).into_iter().rev().collect();
    assert_eq!(logged, listed, "{d}");

    // Another tenant sees none of it; unknown ids are 404; bad filters 400.
    let (s, b) = gw.call("GET", &path, Some(&other), None).await;
    assert_eq!(s, 404, "{b}");
    let (s, b) = gw
        .call("GET", "/v1/tenants/globex/attempts", Some(&other), None)
        .await;
    assert_eq!(
        (s, b["data"].as_array().map(Vec::len)),
        (200, Some(0)),
        "{b}"
    );
    let (s, b) = gw
        .call(
            "GET",
            "/v1/tenants/acme/attempts/atm_01KBX0000000000000000000AB",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (404, Some("not_found")),
        "{b}"
    );
    for (query, field) in [
        ("outcome=bogus", "outcome"),
        ("status_class=6xx", "status_class"),
        ("cursor=sideways:x", "cursor"),
        ("since=yesterday", "since"),
        ("order=random", "order"),
        ("endpoint=", "endpoint"),
    ] {
        let (s, b) = gw
            .call(
                "GET",
                &format!("/v1/tenants/acme/attempts?{query}"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(
            (s, b["error"]["field"].as_str()),
            (400, Some(field)),
            "{query}: {b}"
        );
    }
}
