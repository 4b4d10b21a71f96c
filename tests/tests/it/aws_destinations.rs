//! Amazon SQS, SNS and Kinesis destinations (issue 43) end to end against a
//! test's own `moto` server: each kind delivers through the same chain, and a
//! boto3 consumer verifies every message with the official `standardwebhooks`
//! package, including an SQS message whose attributes overflow the service's
//! ten and travel as one JSON object. A FIFO queue gets the event id as
//! deduplication id and a message group from the payload or the endpoint.

use hookgate_tests::brokers;
use hookgate_tests::moto::{ACCOUNT, OwnMoto, REGION};
use hookgate_tests::{Backend, TestGateway};
use serde_json::{Value, json};

use super::destinations::{arrived_once, receipt_of, settled};

hookgate_tests::on_each_backend! {
    each_aws_kind_delivers_and_its_consumer_verifies_the_signature,
}

/// Keys moto takes when it checks nothing.
pub(crate) fn keys() -> Value {
    json!({"access_key_id": "AKIDHOOKGATETEST", "secret_access_key": "testing-secret"})
}

/// The destination of the AWS `kind` at moto `url`, for what `setup` made.
pub(crate) fn aws_destination(kind: &str, url: &str, name: &str, made: &Value) -> Value {
    let mut d = match kind {
        "sqs" => json!({"type": "sqs", "queue_url": made["queue_url"]}),
        "sns" => json!({"type": "sns", "topic_arn": made["topic_arn"]}),
        _ => json!({"type": "kinesis", "stream": name}),
    };
    let o = d.as_object_mut().unwrap();
    o.insert("region".into(), REGION.into());
    o.insert("endpoint_url".into(), url.into());
    o.insert("credentials".into(), keys());
    d
}

async fn each_aws_kind_delivers_and_its_consumer_verifies_the_signature(backend: Backend) {
    let moto = OwnMoto::start();
    let url = moto.url();
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    for kind in ["sqs", "sns", "kinesis"] {
        let name = brokers::unique(kind);
        let made = brokers::setup(kind, &url, &name);
        // Six headers of the endpoint's own: with the signature's and the
        // event's, more attributes than SQS and SNS take.
        let headers: serde_json::Map<String, Value> = (0..6)
            .map(|i| (format!("X-Team-{i}"), Value::from(format!("t{i}"))))
            .collect();
        let ep = gw
            .endpoint(
                "acme",
                &key,
                json!({"destination": aws_destination(kind, &url, &name, &made),
                       "event_types": ["order.*"], "headers": headers}),
            )
            .await;
        let secret = ep["secret"].as_str().unwrap().to_owned();
        assert_eq!(ep["destination"]["type"], kind, "{ep}");
        assert_eq!(ep["url"], url.as_str(), "{ep}");
        // The secret key is never shown again; the key id is.
        let shown = &ep["destination"]["credentials"];
        assert_eq!(shown["secret_access_key"], "********", "{ep}");
        assert_eq!(shown["access_key_id"], keys()["access_key_id"], "{ep}");
        let mut events = Vec::new();
        for n in 0..3 {
            let ev = gw
                .event("acme", &key, "order.paid", json!({"n": n, "note": "héllo"}))
                .await;
            events.push(ev);
        }
        for d in settled(&gw, &key, &events).await {
            assert_eq!(d["state"], "succeeded", "{kind}: {d}");
        }
        let got = brokers::consume(kind, &url, &name, &secret, 3);
        arrived_once(kind, &got, &events);
        for m in &got {
            assert_eq!(m["headers"]["hookgate-event-type"], "order.paid", "{m}");
            assert_eq!(m["headers"]["content-type"], "application/json", "{m}");
            // Every header of the endpoint's arrives, the overflow merged back.
            assert_eq!(m["headers"]["x-team-5"], "t5", "{kind}: {m}");
            if kind != "kinesis" {
                // moto takes more than ten; AWS does not, so none are sent.
                let names = m["attribute_names"].as_array().unwrap();
                assert!(names.len() <= 10, "{kind}: {m}");
                assert!(names.iter().any(|n| n == "hookgate-headers"), "{kind}: {m}");
            }
        }
        let receipt = receipt_of(&gw, &key, &events[0]).await;
        let expected = if kind == "kinesis" {
            "shard "
        } else {
            "MessageId "
        };
        assert!(receipt.starts_with(expected), "{kind}: {receipt}");
        brokers::teardown(kind, &url, &name);
    }
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_queue_gets_the_event_id_and_a_message_group() {
    let moto = OwnMoto::start();
    let url = moto.url();
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let name = brokers::unique("fifo");
    let fifo = json!({"fifo": true});
    let made = brokers::setup_with("sqs", &url, &name, fifo.clone());
    let mut dest = aws_destination("sqs", &url, &name, &made);
    dest["message_group_path"] = json!("/customer/id");
    let ep = gw
        .endpoint("acme", &key, json!({"destination": dest}))
        .await;
    let with_customer = gw
        .event(
            "acme",
            &key,
            "order.paid",
            json!({"customer": {"id": "c-42"}}),
        )
        .await;
    let without = gw.event("acme", &key, "order.paid", json!({"n": 1})).await;
    let events = [with_customer.clone(), without.clone()];
    for d in settled(&gw, &key, &events).await {
        assert_eq!(d["state"], "succeeded", "{d}");
    }
    let secret = ep["secret"].as_str().unwrap();
    let got = brokers::consume_with("sqs", &url, &name, secret, 2, fifo.clone());
    let by_id = |id: &Value| {
        got.iter()
            .find(|m| &m["headers"]["webhook-id"] == id)
            .unwrap_or_else(|| panic!("{id} arrived: {got:?}"))
            .clone()
    };
    let first = by_id(&with_customer["id"]);
    assert_eq!(first["group"], "c-42", "{first}");
    assert_eq!(first["dedup"], with_customer["id"], "{first}");
    // No value at the path: the endpoint's own group.
    let second = by_id(&without["id"]);
    assert_eq!(second["group"], ep["id"], "{second}");
    brokers::teardown_with("sqs", &url, &name, fifo);
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_aws_destinations_are_a_422_naming_the_field() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let queue = format!("http://127.0.0.1:9/{ACCOUNT}/orders");
    let base = json!({"type": "sqs", "queue_url": queue, "region": REGION,
                      "endpoint_url": "http://127.0.0.1:9", "credentials": keys()});
    let cases = [
        (json!({"region": "Mars 1"}), "destination.region"),
        (json!({"queue_url": "orders"}), "destination.queue_url"),
        (
            json!({"endpoint_url": "ftp://127.0.0.1"}),
            "destination.endpoint_url",
        ),
        (json!({"credentials": null}), "destination.credentials"),
        (
            json!({"credentials": {"access_key_id": "AKID"}}),
            "destination.credentials",
        ),
        (
            json!({"message_group_path": "customer"}),
            "destination.message_group_path",
        ),
        (
            json!({"topic_arn": "arn:aws:sns:us-east-1:1:t"}),
            "destination.topic_arn",
        ),
    ];
    for (change, field) in cases {
        let mut dest = base.clone();
        dest.as_object_mut()
            .unwrap()
            .extend(change.as_object().unwrap().clone());
        let (s, body) = gw
            .call(
                "POST",
                "/v1/tenants/acme/endpoints",
                Some(&key),
                Some(json!({"destination": dest})),
            )
            .await;
        assert_eq!(s, 422, "{change}: {body}");
        assert_eq!(body["error"]["field"], field, "{change}: {body}");
    }
    gw.stop().await;
}
