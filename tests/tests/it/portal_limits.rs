//! Portal sessions limited to some endpoints or event types (issue 41, item
//! 1), on both backends: a session limited to one endpoint lists only it and
//! what went to it, finds the others 404, and is refused (403 naming the
//! limit) what reaches every endpoint of the tenant; a session limited to some
//! event types sees only those in the catalog, the events and the deliveries,
//! and subscribes endpoints within them (422 naming the entry otherwise); a
//! limit naming no endpoint of the tenant, or a bad pattern, is 422.

use std::time::Duration;

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    a_session_limited_to_endpoints_and_types_sees_only_those,
}

const WAIT: Duration = Duration::from_secs(30);

/// A catalog type with an example.
async fn catalog_type(gw: &TestGateway, name: &str) {
    let body = json!({"name": name, "example": {"n": 1}});
    let (s, b) = gw
        .call("POST", "/v1/event-types", Some(ADMIN), Some(body))
        .await;
    assert_eq!(s, 201, "{b}");
}

/// Sends an event of `event_type`; answers its one delivery, once final.
async fn delivered(gw: &TestGateway, key: &str, event_type: &str) -> (String, String) {
    let ev = gw.event("acme", key, event_type, json!({"n": 1})).await;
    let id = ev["deliveries"][0]["id"].as_str().unwrap().to_owned();
    let d = gw.wait_delivery("acme", key, &id, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    (ev["id"].as_str().unwrap().to_owned(), id)
}

/// Mints a session of acme with `body`; answers its token and the answer.
async fn session(gw: &TestGateway, key: &str, body: Value) -> (String, Value) {
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/portal-sessions",
            Some(key),
            Some(body),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    (b["token"].as_str().unwrap().to_owned(), b)
}

/// The `field` of each item of the list at `path`.
async fn listed(gw: &TestGateway, path: &str, token: &str, field: &str) -> Vec<String> {
    let (s, b) = gw.call("GET", path, Some(token), None).await;
    assert_eq!(s, 200, "{path}: {b}");
    let mut v: Vec<String> = b["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[field].as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

async fn status(
    gw: &TestGateway,
    method: &str,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    gw.call(method, path, Some(token), body).await
}

async fn a_session_limited_to_endpoints_and_types_sees_only_those(backend: Backend) {
    let mut bed = backend.bed().await;
    bed.config.stats.flush_ms = 50;
    let gw = TestGateway::start_bed(bed, Default::default()).await;
    let rx = Receiver::start(Vec::new()).await;
    let key = gw.tenant("acme").await;
    catalog_type(&gw, "order.paid").await;
    catalog_type(&gw, "invoice.paid").await;
    let orders = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": rx.url(), "uid": "orders", "event_types": ["order.*"]}),
        )
        .await;
    let invoices = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": rx.url(), "event_types": ["invoice.*"]}),
        )
        .await;
    let (orders_id, invoices_id) = (
        orders["id"].as_str().unwrap().to_owned(),
        invoices["id"].as_str().unwrap().to_owned(),
    );
    let (order_event, order_delivery) = delivered(&gw, &key, "order.paid").await;
    let (invoice_event, invoice_delivery) = delivered(&gw, &key, "invoice.paid").await;

    // Limited to the orders endpoint (named by its uid) and order types.
    let caps = ["view", "manage_endpoints", "replay"];
    let (one, shown) = session(
        &gw,
        &key,
        json!({"capabilities": caps, "endpoints": ["orders"], "event_types": ["order.*"]}),
    )
    .await;
    assert_eq!(shown["endpoints"], json!([orders_id]), "{shown}");
    assert_eq!(shown["event_types"], json!(["order.*"]), "{shown}");
    let (s, me) = status(&gw, "GET", "/v1/portal-session", &one, None).await;
    assert_eq!((s, &me["endpoints"]), (200, &json!([orders_id])), "{me}");

    let eps = listed(&gw, "/v1/tenants/acme/endpoints", &one, "id").await;
    assert_eq!(eps, vec![orders_id.clone()]);
    let deliveries = listed(&gw, "/v1/tenants/acme/deliveries", &one, "id").await;
    assert_eq!(deliveries, vec![order_delivery.clone()]);
    let attempts = listed(&gw, "/v1/tenants/acme/attempts", &one, "endpoint_id").await;
    assert_eq!(attempts, vec![orders_id.clone()]);
    let types = listed(&gw, "/v1/event-types", &one, "name").await;
    assert_eq!(types, vec!["order.paid".to_owned()]);
    // What is outside the limit is not there.
    for path in [
        format!("/v1/tenants/acme/endpoints/{invoices_id}"),
        format!("/v1/tenants/acme/endpoints/{invoices_id}/stats"),
        format!("/v1/tenants/acme/deliveries/{invoice_delivery}"),
        "/v1/event-types/invoice.paid".to_owned(),
    ] {
        let (s, b) = status(&gw, "GET", &path, &one, None).await;
        assert_eq!(s, 404, "{path}: {b}");
    }
    let replay = format!("/v1/tenants/acme/deliveries/{invoice_delivery}/replay");
    let (s, b) = status(&gw, "POST", &replay, &one, Some(json!({}))).await;
    assert_eq!(s, 404, "{b}");
    let (s, b) = status(&gw, "GET", "/v1/tenants/acme/endpoints/orders", &one, None).await;
    assert_eq!(s, 200, "its own endpoint, by uid: {b}");
    // What reaches every endpoint of the tenant is refused, naming the limit.
    for (method, path, body) in [
        (
            "POST",
            "/v1/tenants/acme/endpoints",
            Some(json!({"url": rx.url(), "event_types": ["order.paid"]})),
        ),
        ("GET", "/v1/tenants/acme/events", None),
        ("GET", "/v1/tenants/acme/stats", None),
        ("GET", "/v1/tenants/acme/dlq/summary", None),
    ] {
        let (s, b) = status(&gw, method, path, &one, body).await;
        assert_eq!(s, 403, "{method} {path}: {b}");
        let message = b["error"]["message"].as_str().unwrap();
        assert!(message.contains("limited to some endpoints"), "{message}");
    }
    let (s, b) = status(
        &gw,
        "GET",
        &format!("/v1/tenants/acme/events/{order_event}"),
        &one,
        None,
    )
    .await;
    assert_eq!(s, 403, "{b}");
    // Its history counts its endpoint only.
    let deadline = tokio::time::Instant::now() + WAIT;
    let history = loop {
        let (s, h) = status(&gw, "GET", "/v1/tenants/acme/stats/history", &one, None).await;
        assert_eq!(s, 200, "{h}");
        if h["totals"]["attempts"] == 1 || tokio::time::Instant::now() >= deadline {
            break h;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(history["totals"]["attempts"], 1, "{history}");
    assert_eq!(history["endpoints"][0]["endpoint_id"], orders_id.as_str());
    assert_eq!(history["endpoints"].as_array().unwrap().len(), 1);
    // It subscribes its endpoint within its types only.
    let path = format!("/v1/tenants/acme/endpoints/{orders_id}");
    let (s, b) = status(
        &gw,
        "PATCH",
        &path,
        &one,
        Some(json!({"event_types": ["invoice.*"]})),
    )
    .await;
    assert_eq!(
        (s, &b["error"]["field"]),
        (422, &json!("event_types[0]")),
        "{b}"
    );
    let (s, b) = status(
        &gw,
        "PATCH",
        &path,
        &one,
        Some(json!({"event_types": ["order.paid", "order.*"]})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let example = format!("{path}/send-example");
    let (s, b) = status(
        &gw,
        "POST",
        &example,
        &one,
        Some(json!({"event_type": "invoice.paid"})),
    )
    .await;
    assert_eq!(
        (s, &b["error"]["field"]),
        (422, &json!("event_type")),
        "{b}"
    );
    let (s, b) = status(
        &gw,
        "POST",
        &example,
        &one,
        Some(json!({"event_type": "order.paid"})),
    )
    .await;
    assert_eq!(s, 202, "{b}");

    // Limited to order types only: every endpoint, order events only.
    let (typed, _) = session(
        &gw,
        &key,
        json!({"capabilities": ["view", "manage_endpoints"], "event_types": ["order.*"]}),
    )
    .await;
    let events = listed(&gw, "/v1/tenants/acme/events", &typed, "id").await;
    assert!(
        events.contains(&order_event) && !events.contains(&invoice_event),
        "{events:?}"
    );
    let (s, _) = status(
        &gw,
        "GET",
        &format!("/v1/tenants/acme/events/{invoice_event}"),
        &typed,
        None,
    )
    .await;
    assert_eq!(s, 404);
    let eps = listed(&gw, "/v1/tenants/acme/endpoints", &typed, "id").await;
    assert_eq!(eps.len(), 2, "every endpoint: {eps:?}");
    let deliveries = listed(
        &gw,
        "/v1/tenants/acme/deliveries?limit=250",
        &typed,
        "event_type",
    )
    .await;
    assert!(
        deliveries.iter().all(|t| t == "order.paid"),
        "{deliveries:?}"
    );
    // A new endpoint must name types within its own; every type is not.
    let (s, b) = status(
        &gw,
        "POST",
        "/v1/tenants/acme/endpoints",
        &typed,
        Some(json!({"url": rx.url()})),
    )
    .await;
    assert_eq!(
        (s, &b["error"]["field"]),
        (422, &json!("event_types[0]")),
        "{b}"
    );
    let body = json!({"url": rx.url(), "event_types": ["order.paid"]});
    let (s, b) = status(
        &gw,
        "POST",
        "/v1/tenants/acme/endpoints",
        &typed,
        Some(body),
    )
    .await;
    assert_eq!(s, 201, "{b}");

    // A limit naming no endpoint of the tenant, or a bad pattern, is 422.
    for (body, field) in [
        (json!({"endpoints": ["nope"]}), "endpoints[0]"),
        (
            json!({"event_types": ["order.*", "bad*type"]}),
            "event_types[1]",
        ),
    ] {
        let (s, b) = gw
            .call(
                "POST",
                "/v1/tenants/acme/portal-sessions",
                Some(&key),
                Some(body),
            )
            .await;
        assert_eq!((s, &b["error"]["field"]), (422, &json!(field)), "{b}");
    }
}
