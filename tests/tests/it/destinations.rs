//! Broker destinations (issue 43) end to end against the real RabbitMQ, NATS
//! JetStream and Redis of this project's machines: each kind delivers through
//! the same chain, and a consumer written with that ecosystem's usual client
//! (pika, nats-py, redis-py) verifies every message with the official
//! `standardwebhooks` package. Views mask credentials; bad destinations are a
//! 422 naming the field. Faults (`destination_faults.rs`) end as documented.

use std::time::Duration;

use hookgate_tests::brokers::{self, NATS, RABBITMQ, REDIS};
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    each_kind_delivers_and_its_consumer_verifies_the_signature,
}

const WAIT: Duration = Duration::from_secs(30);

/// The destination of `kind` for the test-owned `name`.
pub(crate) fn destination(kind: &str, url: &str, name: &str) -> Value {
    match kind {
        "rabbitmq" => json!({"type": "rabbitmq", "url": url, "exchange": name,
                             "credentials": {"username": "guest", "password": "guest"}}),
        "nats" => json!({"type": "nats", "url": url, "subject": format!("{name}.orders")}),
        _ => json!({"type": "redis", "url": url, "stream": name, "max_len": 1000}),
    }
}

/// Waits for every delivery of `events` to end; returns their views.
pub(crate) async fn settled(gw: &TestGateway, key: &str, events: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for ev in events {
        let id = ev["deliveries"][0]["id"].as_str().unwrap();
        out.push(gw.wait_delivery("acme", key, id, WAIT, is_final).await);
    }
    out
}

/// Asserts that each of `events` is in `got` once, by its `webhook-id`.
pub(crate) fn arrived_once(kind: &str, got: &[Value], events: &[Value]) {
    let mut ids: Vec<&str> = got
        .iter()
        .map(|m| m["headers"]["webhook-id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    let mut sent: Vec<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    sent.sort_unstable();
    assert_eq!(ids, sent, "{kind}: every event arrives once, by its id");
}

/// What the broker answered to `event`'s first attempt, which delivered it
/// with no HTTP status.
pub(crate) async fn receipt_of(gw: &TestGateway, key: &str, event: &Value) -> String {
    let dlv = event["deliveries"][0]["id"].as_str().unwrap();
    let (s, attempts) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/attempts?delivery={dlv}"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(s, 200, "{attempts}");
    let first = &attempts["data"][0];
    assert_eq!(first["verdict"], "delivered", "{first}");
    assert!(first["status"].is_null(), "{first}");
    first["response_snippet"].as_str().unwrap().to_owned()
}

async fn each_kind_delivers_and_its_consumer_verifies_the_signature(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    for (kind, url) in [("rabbitmq", RABBITMQ), ("nats", NATS), ("redis", REDIS)] {
        let name = brokers::unique(kind);
        brokers::setup(kind, url, &name);
        let ep = gw
            .endpoint(
                "acme",
                &key,
                json!({"destination": destination(kind, url, &name), "event_types": ["order.*"]}),
            )
            .await;
        let secret = ep["secret"].as_str().unwrap().to_owned();
        assert_eq!(ep["destination"]["type"], kind, "{ep}");
        assert_eq!(ep["url"], url, "{ep}");
        let mut events = Vec::new();
        for n in 0..3 {
            let ev = gw
                .event("acme", &key, "order.paid", json!({"n": n, "note": "héllo"}))
                .await;
            events.push(ev);
        }
        let views = settled(&gw, &key, &events).await;
        for d in &views {
            assert_eq!(d["state"], "succeeded", "{kind}: {d}");
        }
        let got = brokers::consume(kind, url, &name, &secret, 3);
        arrived_once(kind, &got, &events);
        for m in &got {
            assert_eq!(m["headers"]["hookgate-event-type"], "order.paid", "{m}");
            assert_eq!(m["headers"]["content-type"], "application/json", "{m}");
        }
        if kind == "rabbitmq" {
            // The event's type is the routing key when none is set, and the
            // message is persistent, with the event id as its message id.
            assert!(got.iter().all(|m| m["routing_key"] == "order.paid"
                && m["persistent"] == true
                && m["id"] == m["headers"]["webhook-id"]));
        }
        if kind == "nats" {
            assert!(got.iter().all(|m| m["id"] == m["headers"]["webhook-id"]));
        }
        // The attempt log keeps what the broker answered.
        let receipt = receipt_of(&gw, &key, &events[0]).await;
        let expected = match kind {
            "rabbitmq" => "confirmed",
            "nats" => "stream ",
            _ => "XADD ",
        };
        assert!(receipt.starts_with(expected), "{kind}: {receipt}");
        brokers::teardown(kind, url, &name);
    }
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_mask_credentials_and_changes_keep_them() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let name = brokers::unique("mask");
    brokers::setup("rabbitmq", RABBITMQ, &name);
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"destination": destination("rabbitmq", RABBITMQ, &name), "uid": "orders"}),
        )
        .await;
    let id = ep["id"].as_str().unwrap();
    let path = format!("/v1/tenants/acme/endpoints/{id}");
    let masked = json!({"username": "guest", "password": "********"});
    assert_eq!(ep["destination"]["credentials"], masked, "{ep}");
    let (s, shown) = gw.call("GET", &path, Some(&key), None).await;
    assert_eq!(s, 200);
    assert_eq!(shown["destination"]["credentials"], masked, "{shown}");
    assert!(
        !shown.to_string().contains("\"password\":\"guest\""),
        "{shown}"
    );
    // A change that gives the masked view back keeps the stored password: the
    // delivery after it still authenticates.
    let (s, changed) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"destination": {"routing_key": "fixed.key"}, "description": "x"})),
        )
        .await;
    assert_eq!(s, 200, "{changed}");
    assert_eq!(changed["destination"]["routing_key"], "fixed.key");
    let whole = json!({"destination": shown["destination"], "description": "put back"});
    let by_uid = "/v1/tenants/acme/endpoints/orders";
    let (s, put) = gw
        .call("PUT", by_uid, Some(&key), Some(whole.clone()))
        .await;
    assert_eq!(s, 200, "{put}");
    assert_eq!(put["destination"]["credentials"], masked, "{put}");
    // A masked password where none is stored is a mistake, not an empty password.
    let (s, b) = gw
        .call(
            "PUT",
            "/v1/tenants/acme/endpoints/other",
            Some(&key),
            Some(whole),
        )
        .await;
    assert_eq!(s, 422, "{b}");
    assert_eq!(
        b["error"]["field"], "destination.credentials.password",
        "{b}"
    );
    let ev = gw.event("acme", &key, "order.paid", json!({"n": 1})).await;
    let done = settled(&gw, &key, &[ev]).await;
    assert_eq!(done[0]["state"], "succeeded", "{}", done[0]);
    let secret = ep["secret"].as_str().unwrap();
    let got = brokers::consume("rabbitmq", RABBITMQ, &name, secret, 1);
    assert_eq!(
        got[0]["routing_key"], "order.paid",
        "the PUT put the view back"
    );
    // Back to http: destination null, with a url.
    let (s, back) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"destination": null, "url": "http://127.0.0.1:9/hook"})),
        )
        .await;
    assert_eq!(s, 200, "{back}");
    assert_eq!(back["destination"], json!({"type": "http"}));
    brokers::teardown("rabbitmq", RABBITMQ, &name);
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_destinations_are_a_422_naming_the_field() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let cases = [
        (json!({"type": "kafka"}), "destination.type"),
        (
            json!({"type": "rabbitmq", "url": "http://h", "exchange": "x"}),
            "destination.url",
        ),
        (
            json!({"type": "rabbitmq", "url": "amqp://u:p@h", "exchange": "x"}),
            "destination.url",
        ),
        (
            json!({"type": "rabbitmq", "url": "amqp://h"}),
            "destination",
        ),
        (
            json!({"type": "rabbitmq", "url": "amqp://h", "exchange": "x", "queue": "q"}),
            "destination.queue",
        ),
        (
            json!({"type": "nats", "url": "nats://h", "subject": "a.>"}),
            "destination.subject",
        ),
        (
            json!({"type": "redis", "url": "redis://h", "stream": "s", "max_len": 0}),
            "destination.max_len",
        ),
        (
            json!({"type": "redis", "url": "redis://h", "stream": "s",
                   "credentials": {"name": "nobody-configured-this"}}),
            "destination.credentials.name",
        ),
        (json!({"type": "http", "url": "http://h"}), "destination"),
        (json!("rabbitmq"), "destination"),
    ];
    for (given, field) in cases {
        let (s, b) = gw
            .call(
                "POST",
                "/v1/tenants/acme/endpoints",
                Some(&key),
                Some(json!({"destination": given})),
            )
            .await;
        assert_eq!(s, 422, "{given}: {b}");
        assert_eq!(b["error"]["field"], field, "{given}: {b}");
    }
    // A url beside a broker destination that is not its own is a mistake.
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/endpoints",
            Some(&key),
            Some(json!({"url": "https://example.com/",
                        "destination": destination("redis", REDIS, "s")})),
        )
        .await;
    assert_eq!((s, b["error"]["field"].as_str()), (422, Some("url")), "{b}");
    // The address guard holds for brokers as for HTTP.
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/endpoints",
            Some(&key),
            Some(json!({"destination": destination("redis", "redis://10.1.2.3:6379/0", "s")})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (422, Some("url_blocked")),
        "{b}"
    );
    gw.stop().await;
}

/// A tiny run of `bench deliver --destination` for each kind: the gateway's
/// leg and the bare client's both publish into the local broker and count
/// what it holds (speed is never asserted here; `BENCHMARKS.md` has it).
#[test]
fn the_destination_bench_runs_for_each_kind() {
    use hookgate::lab::bench::{BenchCommand, BenchDestination, Common, run};
    for kind in [
        BenchDestination::Rabbitmq,
        BenchDestination::Nats,
        BenchDestination::Redis,
    ] {
        let smoke = Common {
            runs: 1,
            smoke: true,
            store_url: None,
            traced: false,
            destination: Some(kind),
            transform: None,
            validated: false,
        };
        assert_eq!(
            run(BenchCommand::Deliver(smoke)),
            0,
            "bench deliver --destination {kind:?} --smoke"
        );
    }
}
