//! The event-type catalog (issue 40, item 1), on both backends: the admin
//! writes types (schemas checked as JSON Schema, examples checked against
//! them) and imports them from an OpenAPI document; every caller reads them;
//! a validating type's bad payload is refused at ingest with the schema's
//! place and message and nothing is stored, on every node of a cluster;
//! archived types cannot be newly subscribed and strict mode refuses unknown
//! names; `send-example` delivers a type's example, signed, to one endpoint
//! as a test.

use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::verify::verify_with_official_library;
use hookgate_tests::{ADMIN, Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    catalog_types_are_written_read_paged_and_removed,
    catalog_types_are_imported_from_an_openapi_document,
    a_validating_type_refuses_bad_payloads_and_stores_nothing,
    send_example_arrives_signed_and_marked_as_a_test,
    subscriptions_respect_archived_types_and_strict_mode,
}

const WAIT: Duration = Duration::from_secs(30);

fn order_schema() -> Value {
    json!({
        "type": "object",
        "required": ["amount"],
        "properties": {"amount": {"type": "integer", "minimum": 0}}
    })
}

/// Creates a type as the admin; returns its view.
async fn create_type(gw: &TestGateway, body: Value) -> Value {
    let (s, b) = gw
        .call("POST", "/v1/event-types", Some(ADMIN), Some(body))
        .await;
    assert_eq!(s, 201, "{b}");
    b
}

fn names(page: &Value) -> Vec<&str> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

async fn catalog_types_are_written_read_paged_and_removed(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let paid = create_type(
        &gw,
        json!({
            "name": "order.paid", "description": "An order was paid", "group": "orders",
            "schemas": {"1": order_schema()}, "example": {"amount": 250}
        }),
    )
    .await;
    assert_eq!(paid["schemas"]["1"], order_schema());
    assert_eq!(
        (paid["archived"].clone(), paid["validate"].clone()),
        (json!(false), json!(false))
    );

    // Refusals name the field; only the admin writes.
    for (body, field) in [
        (json!({"name": "bad name"}), "name"),
        (
            json!({"name": "a.b", "schemas": {"1": {"type": "objekt"}}}),
            "schemas.1",
        ),
        (json!({"name": "a.b", "schemas": {"x": {}}}), "schemas"),
        (
            json!({"name": "a.b", "schemas": {"1": {"$ref": "https://example.com/s.json"}}}),
            "schemas.1",
        ),
        (
            json!({"name": "a.b", "schemas": {"1": order_schema()}, "example": {"amount": -1}}),
            "example",
        ),
        (json!({"name": "a.b", "validate": true}), "validate"),
    ] {
        let (s, b) = gw
            .call("POST", "/v1/event-types", Some(ADMIN), Some(body.clone()))
            .await;
        assert_eq!(
            (s, b["error"]["field"].as_str()),
            (422, Some(field)),
            "{body}: {b}"
        );
    }
    let (s, b) = gw
        .call(
            "POST",
            "/v1/event-types",
            Some(ADMIN),
            Some(json!({"name": "order.paid"})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (409, Some("conflict")),
        "{b}"
    );
    let (s, _) = gw
        .call(
            "POST",
            "/v1/event-types",
            Some(&key),
            Some(json!({"name": "x.y"})),
        )
        .await;
    assert_eq!(s, 403);
    let (s, _) = gw
        .call("DELETE", "/v1/event-types/order.paid", Some(&key), None)
        .await;
    assert_eq!(s, 403);

    // A tenant reads; a merge patch adds a schema version and archives.
    let (s, b) = gw
        .call("GET", "/v1/event-types/order.paid", Some(&key), None)
        .await;
    assert_eq!(
        (s, b["description"].as_str()),
        (200, Some("An order was paid")),
        "{b}"
    );
    let v2 = json!({"type": "object", "required": ["amount", "currency"]});
    let (s, b) = gw
        .call(
            "PATCH",
            "/v1/event-types/order.paid",
            Some(ADMIN),
            Some(json!({"schemas": {"2": v2}, "example": {"amount": 1, "currency": "EUR"}})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        b["schemas"]["1"],
        order_schema(),
        "a patch merges into the schemas"
    );
    assert_eq!(b["schemas"]["2"], v2);
    assert_eq!(b["group"], "orders");
    // The example is checked against the highest version; an example (as a
    // schema version) is replaced whole, not merged into.
    let (s, b) = gw
        .call(
            "PATCH",
            "/v1/event-types/order.paid",
            Some(ADMIN),
            Some(json!({"example": {"amount": 1}})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("example")),
        "{b}"
    );

    for name in ["a.one", "a.two", "a.three", "a.four"] {
        create_type(&gw, json!({"name": name})).await;
    }
    let (s, _) = gw
        .call(
            "PATCH",
            "/v1/event-types/a.two",
            Some(ADMIN),
            Some(json!({"archived": true})),
        )
        .await;
    assert_eq!(s, 200);
    let (_, all) = gw.call("GET", "/v1/event-types", Some(&key), None).await;
    assert_eq!(names(&all), ["a.four", "a.one", "a.three", "order.paid"]);
    let (_, all) = gw
        .call(
            "GET",
            "/v1/event-types?include_archived=true",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        names(&all),
        ["a.four", "a.one", "a.three", "a.two", "order.paid"]
    );
    // Pages of two, by name.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..5 {
        let path = match &cursor {
            Some(c) => format!("/v1/event-types?limit=2&include_archived=true&cursor={c}"),
            None => "/v1/event-types?limit=2&include_archived=true".to_owned(),
        };
        let (s, page) = gw.call("GET", &path, Some(&key), None).await;
        assert_eq!(s, 200, "{page}");
        seen.extend(names(&page).into_iter().map(str::to_owned));
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen, ["a.four", "a.one", "a.three", "a.two", "order.paid"]);
    let (s, b) = gw
        .call(
            "GET",
            "/v1/event-types?include_archived=maybe",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (400, Some("include_archived"))
    );

    let (s, _) = gw
        .call("DELETE", "/v1/event-types/a.one", Some(ADMIN), None)
        .await;
    assert_eq!(s, 204);
    for method in ["GET", "DELETE"] {
        let (s, _) = gw
            .call(method, "/v1/event-types/a.one", Some(ADMIN), None)
            .await;
        assert_eq!(s, 404, "{method}");
    }
    let (s, _) = gw
        .call(
            "PATCH",
            "/v1/event-types/a.one",
            Some(ADMIN),
            Some(json!({})),
        )
        .await;
    assert_eq!(s, 404);
    gw.stop().await;
}

/// An OpenAPI 3.1 document as a platform would publish it: webhooks whose
/// bodies refer to shared component schemas, examples, a deprecated one, and
/// some the catalog cannot take.
fn shop_document(paid_amount_minimum: i64) -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Shop webhooks", "version": "2026-12"},
        "webhooks": {
            "order.paid": {"post": {
                "summary": "An order was paid",
                "tags": ["orders"],
                "requestBody": {"content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/OrderPaid"},
                    "examples": {"small": {"value": {"order": "o-1", "total": {"amount": 250, "currency": "EUR"}}}}
                }}},
                "responses": {"200": {"description": "ok"}}
            }},
            "order.refunded": {"post": {
                "description": "An order was refunded",
                "deprecated": true,
                "requestBody": {"$ref": "#/components/requestBodies/Refund"},
                "responses": {"200": {"description": "ok"}}
            }},
            "customer created": {"post": {"responses": {"200": {"description": "ok"}}}},
            "order.shipped": {"post": {
                "requestBody": {"content": {"application/json": {
                    "schema": {"$ref": "https://schemas.example.com/shipment.json"}
                }}},
                "responses": {"200": {"description": "ok"}}
            }}
        },
        "components": {
            "schemas": {
                "OrderPaid": {
                    "type": "object", "required": ["order", "total"],
                    "properties": {"order": {"type": "string"}, "total": {"$ref": "#/components/schemas/Money"}}
                },
                "Money": {
                    "type": "object", "required": ["amount"],
                    "properties": {
                        "amount": {"type": "integer", "minimum": paid_amount_minimum},
                        "currency": {"type": "string"}
                    }
                }
            },
            "requestBodies": {"Refund": {"content": {"application/json": {
                "schema": {"type": "object", "properties": {"order": {"type": "string"}}},
                "example": {"order": "o-1"}
            }}}}
        }
    })
}

async fn catalog_types_are_imported_from_an_openapi_document(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let import = |doc: Value| {
        let gw = &gw;
        async move {
            let (s, b) = gw
                .call("POST", "/v1/event-types/import", Some(ADMIN), Some(doc))
                .await;
            assert_eq!(s, 200, "{b}");
            b
        }
    };
    let first = import(shop_document(0)).await;
    assert_eq!(
        first["created"],
        json!(["order.paid", "order.refunded"]),
        "{first}"
    );
    let skipped: Vec<&str> = first["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["customer created", "order.shipped"], "{first}");
    assert!(
        first["skipped"][1]["reason"]
            .as_str()
            .unwrap()
            .contains("shipment.json"),
        "{first}"
    );

    let (_, paid) = gw
        .call("GET", "/v1/event-types/order.paid", Some(&key), None)
        .await;
    assert_eq!(paid["description"], "An order was paid");
    assert_eq!(paid["group"], "orders");
    assert_eq!(paid["example"]["total"]["amount"], 250);
    assert_eq!(
        paid["schemas"]["1"]["$defs"]["Money"]["required"],
        json!(["amount"])
    );
    let (_, refunded) = gw
        .call("GET", "/v1/event-types/order.refunded", Some(&key), None)
        .await;
    assert_eq!(
        (refunded["deprecated"].clone(), refunded["example"].clone()),
        (json!(true), json!({"order": "o-1"}))
    );

    // The imported schema works: turned on, it checks payloads.
    let (s, _) = gw
        .call(
            "PATCH",
            "/v1/event-types/order.paid",
            Some(ADMIN),
            Some(json!({"validate": true})),
        )
        .await;
    assert_eq!(s, 200);
    let bad = json!({"event_type": "order.paid", "payload": {"order": "o-2", "total": {"amount": "lots"}}});
    let (s, b) = gw
        .call("POST", "/v1/tenants/acme/events", Some(&key), Some(bad))
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("payload/total/amount")),
        "{b}"
    );

    // Again, unchanged; then a changed schema comes in as version 2.
    let again = import(shop_document(0)).await;
    assert_eq!(
        again["unchanged"],
        json!(["order.paid", "order.refunded"]),
        "{again}"
    );
    let changed = import(shop_document(1)).await;
    assert_eq!(changed["updated"], json!(["order.paid"]), "{changed}");
    let (_, paid) = gw
        .call("GET", "/v1/event-types/order.paid", Some(&key), None)
        .await;
    assert_eq!(
        paid["schemas"]["2"]["$defs"]["Money"]["properties"]["amount"]["minimum"],
        1
    );
    assert_eq!(
        paid["schemas"]["1"]["$defs"]["Money"]["properties"]["amount"]["minimum"],
        0
    );
    assert_eq!(
        paid["validate"], true,
        "an import keeps what it does not say"
    );

    // OpenAPI 3.0 keeps webhooks under x-webhooks.
    let v30 = json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {},
        "x-webhooks": {"invoice.sent": {"post": {"summary": "Sent", "responses": {}}}}});
    assert_eq!(import(v30).await["created"], json!(["invoice.sent"]));
    for (doc, field) in [
        (json!({"swagger": "2.0"}), "openapi"),
        (json!({"openapi": "3.1.0", "info": {}}), "webhooks"),
    ] {
        let (s, b) = gw
            .call("POST", "/v1/event-types/import", Some(ADMIN), Some(doc))
            .await;
        assert_eq!((s, b["error"]["field"].as_str()), (422, Some(field)), "{b}");
    }
    let (s, _) = gw
        .call(
            "POST",
            "/v1/event-types/import",
            Some(&key),
            Some(shop_document(0)),
        )
        .await;
    assert_eq!(s, 403);
    gw.stop().await;
}

async fn a_validating_type_refuses_bad_payloads_and_stores_nothing(backend: Backend) {
    let bed = backend.bed().await;
    let other_bed = bed.another_node();
    let gw = TestGateway::start_bed(bed, Default::default()).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;
    gw.endpoint("acme", &key, json!({"url": rx.url()})).await;
    // A type without validation accepts anything.
    create_type(
        &gw,
        json!({"name": "order.paid", "schemas": {"1": order_schema()}}),
    )
    .await;
    let post = |payload: Value| {
        let gw = &gw;
        let key = key.clone();
        async move {
            let body = json!({"event_type": "order.paid", "payload": payload});
            gw.call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
                .await
        }
    };
    assert_eq!(post(json!({"amount": -5})).await.0, 202);
    let (s, _) = gw
        .call(
            "PATCH",
            "/v1/event-types/order.paid",
            Some(ADMIN),
            Some(json!({"validate": true})),
        )
        .await;
    assert_eq!(s, 200);
    let (_, before) = gw
        .call("GET", "/v1/tenants/acme/events", Some(&key), None)
        .await;
    let stored = before["data"].as_array().unwrap().len();

    let (s, b) = post(json!({"amount": -1})).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (422, Some("validation_failed")),
        "{b}"
    );
    assert_eq!(b["error"]["field"], "payload/amount");
    let message = b["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("/amount") && message.contains("minimum"),
        "{message}"
    );
    let (s, b) = post(json!(["not", "an", "object"])).await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("payload")),
        "{b}"
    );
    let (_, after) = gw
        .call("GET", "/v1/tenants/acme/events", Some(&key), None)
        .await;
    assert_eq!(
        after["data"].as_array().unwrap().len(),
        stored,
        "nothing refused was stored: {after}"
    );

    let (s, ok) = post(json!({"amount": 7})).await;
    assert_eq!(s, 202, "{ok}");
    let dlv = ok["deliveries"][0]["id"].as_str().unwrap();
    let d = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");

    // Another node of the cluster hears of the change and refuses too.
    if let Some(other_bed) = other_bed {
        let other = TestGateway::start_bed(other_bed, Default::default()).await;
        let body = json!({"event_type": "order.paid", "payload": {"amount": -2}});
        let (s, b) = other
            .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
            .await;
        assert_eq!(s, 422, "a node started after the change refuses: {b}");
        let (s, _) = gw
            .call(
                "PATCH",
                "/v1/event-types/order.paid",
                Some(ADMIN),
                Some(json!({"validate": false})),
            )
            .await;
        assert_eq!(s, 200);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let body = json!({"event_type": "order.paid", "payload": {"amount": -3}});
            let (s, _) = other
                .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
                .await;
            if s == 202 {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the other node never heard: {s}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        other.stop().await;
    }
    gw.stop().await;
}

async fn send_example_arrives_signed_and_marked_as_a_test(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;
    // It subscribes to other types: an example is sent whatever it hears.
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": rx.url(), "event_types": ["invoice.*"]}),
        )
        .await;
    let (id, secret) = (ep["id"].as_str().unwrap(), ep["secret"].as_str().unwrap());
    create_type(
        &gw,
        json!({"name": "order.paid", "schemas": {"1": order_schema()}, "example": {"amount": 250}}),
    )
    .await;
    create_type(&gw, json!({"name": "order.bare"})).await;
    create_type(
        &gw,
        json!({"name": "order.old", "example": {}, "archived": true}),
    )
    .await;
    let path = format!("/v1/tenants/acme/endpoints/{id}/send-example");

    for (ty, why) in [
        ("order.nope", "not in the catalog"),
        ("order.bare", "has no example"),
        ("order.old", "archived"),
    ] {
        let (s, b) = gw
            .call("POST", &path, Some(&key), Some(json!({"event_type": ty})))
            .await;
        assert_eq!(
            (s, b["error"]["field"].as_str()),
            (422, Some("event_type")),
            "{ty}: {b}"
        );
        assert!(b["error"]["message"].as_str().unwrap().contains(why), "{b}");
    }
    let (s, _) = gw
        .call(
            "POST",
            "/v1/tenants/acme/endpoints/ep_nope/send-example",
            Some(&key),
            Some(json!({"event_type": "order.paid"})),
        )
        .await;
    assert_eq!(s, 404);

    let (s, sent) = gw
        .call(
            "POST",
            &path,
            Some(&key),
            Some(json!({"event_type": "order.paid"})),
        )
        .await;
    assert_eq!(s, 202, "{sent}");
    assert_eq!(sent["deliveries"].as_array().unwrap().len(), 1);
    let got = rx.wait_for(1, WAIT).await;
    assert_eq!(
        serde_json::from_slice::<Value>(&got[0].body).unwrap(),
        json!({"amount": 250})
    );
    verify_with_official_library(secret, &got);
    assert_eq!(got[0].header("webhook-id"), sent["id"].as_str());

    let dlv = sent["deliveries"][0]["id"].as_str().unwrap();
    let d = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    let attempt = &d["attempt_log"][0];
    assert_eq!(attempt["test"], true, "{d}");
    let (_, shown) = gw
        .call(
            "GET",
            &format!(
                "/v1/tenants/acme/attempts/{}",
                attempt["id"].as_str().unwrap()
            ),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(shown["test"], true, "{shown}");
    let (_, ev) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/events/{}", sent["id"].as_str().unwrap()),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        (ev["test"].clone(), ev["event_type"].clone()),
        (json!(true), json!("order.paid")),
        "{ev}"
    );
    // A platform's own event is not a test.
    let rx2 = Receiver::start(vec![Reply::status(200)]).await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": rx2.url(), "event_types": ["order.*"]}),
    )
    .await;
    let real = gw
        .event("acme", &key, "order.paid", json!({"amount": 1}))
        .await;
    let (_, ev) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/events/{}", real["id"].as_str().unwrap()),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(ev["test"], false, "{ev}");
    gw.stop().await;
}

async fn subscriptions_respect_archived_types_and_strict_mode(backend: Backend) {
    let mut bed = backend.bed().await;
    bed.config.event_types.strict = true;
    let gw = TestGateway::start_bed(bed, Default::default()).await;
    let key = gw.tenant("acme").await;
    create_type(&gw, json!({"name": "order.paid"})).await;
    create_type(&gw, json!({"name": "order.old"})).await;
    let make = |event_types: Value| {
        let gw = &gw;
        let key = key.clone();
        async move {
            let body = json!({"url": "http://127.0.0.1:9/", "event_types": event_types});
            gw.call("POST", "/v1/tenants/acme/endpoints", Some(&key), Some(body))
                .await
        }
    };
    // Strict: a name must be in the catalog; patterns pass.
    let (s, b) = make(json!(["order.paid", "order.typo"])).await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("event_types[1]")),
        "{b}"
    );
    assert!(
        b["error"]["message"]
            .as_str()
            .unwrap()
            .contains("order.typo"),
        "{b}"
    );
    let (s, ep) = make(json!(["order.old", "invoice.*", "*"])).await;
    assert_eq!(s, 201, "{ep}");
    let id = ep["id"].as_str().unwrap();

    // Archived: kept where subscribed, refused where new.
    let (s, _) = gw
        .call(
            "PATCH",
            "/v1/event-types/order.old",
            Some(ADMIN),
            Some(json!({"archived": true})),
        )
        .await;
    assert_eq!(s, 200);
    let (s, b) = make(json!(["order.old"])).await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("event_types[0]")),
        "{b}"
    );
    assert!(
        b["error"]["message"].as_str().unwrap().contains("archived"),
        "{b}"
    );
    let path = format!("/v1/tenants/acme/endpoints/{id}");
    let (s, b) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"event_types": ["order.old", "order.paid"]})),
        )
        .await;
    assert_eq!(s, 200, "an endpoint keeps an archived type it had: {b}");
    gw.stop().await;
}

/// A tiny run of `bench ingest --validated`: both legs run, the validated
/// one with its type in the catalog (speed is never asserted here;
/// `BENCHMARKS.md` has it).
#[test]
fn the_validated_ingest_bench_runs() {
    use hookgate::lab::bench::{BenchCommand, Common, run};
    let smoke = Common {
        runs: 1,
        smoke: true,
        store_url: None,
        traced: false,
        destination: None,
        transform: None,
        validated: true,
    };
    assert_eq!(
        run(BenchCommand::Ingest(smoke)),
        0,
        "bench ingest --validated --smoke"
    );
}
