//! Tenant fairness, item 2: delivery lists bound their scan. A filter that
//! matches nothing in a long history answers an empty page and a cursor to read
//! on, rather than reading the whole history in one request; following the
//! cursors reaches the end; another tenant is served meanwhile.

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ApiRequest, Backend, TestGateway, is_final};
use http::Method;
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    delivery_lists_bound_their_scan,
}

/// Endpoints of the tenant with the long history; each event goes to all.
const FAN_OUT: usize = 10;
/// Its events: 2 600 deliveries, more than one request reads.
const EVENTS: usize = 260;

async fn page(gw: &TestGateway, key: &str, query: &str) -> Value {
    let path = format!("/v1/tenants/big/deliveries?{query}");
    let (status, body) = gw.call("GET", &path, Some(key), None).await;
    assert_eq!(status, 200, "{path}: {body}");
    body
}

async fn delivery_lists_bound_their_scan(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let rx = Receiver::start(Vec::new()).await;
    let key = gw.tenant("big").await;
    for _ in 0..FAN_OUT {
        gw.endpoint("big", &key, json!({"url": rx.url()})).await;
    }
    for n in 0..EVENTS {
        gw.event("big", &key, "order.created", json!({"n": n}))
            .await;
    }

    // Nothing matches: pages come back empty, each with a cursor to read on,
    // until the history ends; never the whole history in one request.
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let query = match &cursor {
            Some(c) => format!("event_type=no.such.type&limit=250&cursor={c}"),
            None => "event_type=no.such.type&limit=250".to_owned(),
        };
        let body = page(&gw, &key, &query).await;
        assert_eq!(body["data"], json!([]), "{body}");
        pages += 1;
        match body["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        assert!(pages < 10, "the cursors never reached the end");
    }
    assert_eq!(pages, 2, "2 600 records take two bounded reads");

    // Every delivery is still found by paging through the unfiltered list.
    let mut seen = 0;
    let mut cursor: Option<String> = None;
    loop {
        let query = match &cursor {
            Some(c) => format!("limit=250&cursor={c}"),
            None => "limit=250".to_owned(),
        };
        let body = page(&gw, &key, &query).await;
        seen += body["data"].as_array().unwrap().len();
        match body["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, FAN_OUT * EVENTS);

    // A window after the history reads nothing at all.
    let body = page(&gw, &key, "since=2999-01-01T00:00:00Z").await;
    assert_eq!(
        (body["data"].clone(), body["next_cursor"].clone()),
        (json!([]), Value::Null)
    );

    // Another tenant ingests and is delivered to while the long history is
    // read by several requests at once.
    let scans: Vec<_> = (0..4)
        .map(|_| {
            let api = gw.api.with_token(&key);
            tokio::spawn(async move {
                for _ in 0..5 {
                    let path = "/v1/tenants/big/deliveries?event_type=no.such.type";
                    let answer = api.exchange(ApiRequest::path(Method::GET, path)).await;
                    assert_eq!(answer.unwrap().status, 200);
                }
            })
        })
        .collect();
    let (other, _, delivery) = gw.one_delivery(&rx.url(), json!({})).await;
    let (status, _) = gw.call("GET", "/healthz", None, None).await;
    assert_eq!(status, 200);
    let wait = std::time::Duration::from_secs(30);
    let d = gw
        .wait_delivery("acme", &other, &delivery, wait, is_final)
        .await;
    assert_eq!(d["state"], "succeeded", "{d}");
    for scan in scans {
        scan.await.unwrap();
    }
}
