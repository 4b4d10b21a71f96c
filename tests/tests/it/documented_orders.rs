//! Tenant fairness, item 5: the documentation says what the code does. The
//! order each list's reference text states ("newest first", "oldest first")
//! is the order the API answers in.

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, TestGateway};
use serde_json::{Value, json};

/// The order a list operation's reference text states: `true` for newest first.
fn documented_newest_first(doc: &Value, path: &str) -> bool {
    let op = &doc["paths"][path]["get"];
    let text = format!("{} {}", op["summary"], op["description"]).to_lowercase();
    match (text.contains("newest"), text.contains("oldest first")) {
        (true, false) => true,
        (false, true) => false,
        _ => panic!("{path}: the reference states no one order: {text}"),
    }
}

/// The ids of a list answer, in the order given.
async fn listed(gw: &TestGateway, path: &str, token: &str) -> Vec<String> {
    let (status, body) = gw.call("GET", path, Some(token), None).await;
    assert_eq!(status, 200, "{body}");
    let ids = body["data"].as_array().unwrap().iter();
    ids.map(|item| item["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn each_list_answers_in_the_order_its_reference_states() {
    let gw = TestGateway::start().await;
    let doc: Value = serde_json::from_str(&hookgate_server::openapi_document()).unwrap();

    let mut tenants = Vec::new();
    for id in ["order-a", "order-b", "order-c"] {
        gw.tenant(id).await;
        tenants.push(id.to_owned());
    }
    let key = gw.tenant("order-d").await;
    tenants.push("order-d".to_owned());
    let rx = Receiver::start(Vec::new()).await;
    let mut endpoints = Vec::new();
    for _ in 0..3 {
        let body = json!({"url": rx.url()});
        endpoints.push(
            gw.endpoint("order-d", &key, body).await["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let mut deliveries = Vec::new();
    for n in 0..3 {
        let ev = gw
            .event("order-d", &key, "order.created", json!({"n": n}))
            .await;
        for d in ev["deliveries"].as_array().unwrap() {
            deliveries.push(d["id"].as_str().unwrap().to_owned());
        }
    }

    let all_tenants = listed(&gw, "/v1/tenants?limit=250", ADMIN).await;
    let all_tenants: Vec<String> = all_tenants
        .into_iter()
        .filter(|t| t.starts_with("order-"))
        .collect();
    for (path, made, answered) in [
        ("/v1/tenants", tenants, all_tenants),
        (
            "/v1/tenants/{t}/endpoints",
            endpoints,
            listed(&gw, "/v1/tenants/order-d/endpoints", &key).await,
        ),
        (
            "/v1/tenants/{t}/deliveries",
            deliveries,
            listed(&gw, "/v1/tenants/order-d/deliveries?limit=250", &key).await,
        ),
    ] {
        assert!(made.len() >= 3, "{path}: too few made to show an order");
        let mut expected = made;
        // Made in id order (ids sort by creation); several of one event share a millisecond.
        expected.sort();
        if documented_newest_first(&doc, path) {
            expected.reverse();
        }
        assert_eq!(answered, expected, "{path}");
    }
}
