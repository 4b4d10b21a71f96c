//! Amazon SQS, SNS and Kinesis destinations under faults (issue 43), each
//! against a test's own `moto` server: a TCP proxy cuts and heals the way to
//! the service; a queue, topic or stream that does not exist, credentials the
//! service refuses (a moto that checks them) and a message larger than the
//! queue takes each end as docs/destinations.md says. Nothing acknowledged is
//! lost.

use std::sync::Arc;
use std::time::Duration;

use hookgate_server::{NamedCredentials, RunOptions};
use hookgate_tests::brokers;
use hookgate_tests::moto::{ACCOUNT, OwnMoto, REGION};
use hookgate_tests::tcp_proxy::TcpProxy;
use hookgate_tests::{TestGateway, is_final, test_config};
use serde_json::json;

use super::aws_destinations::aws_destination;
use super::destination_faults::{failing_while_cut, one_ending, quick};
use super::destinations::settled;

const WAIT: Duration = Duration::from_secs(40);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aws_service_unreachable_for_a_while_loses_nothing() {
    let moto = OwnMoto::start();
    let url = moto.url();
    let upstream = url.trim_start_matches("http://").parse().unwrap();
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    for kind in ["sqs", "sns", "kinesis"] {
        let name = brokers::unique(kind);
        let made = brokers::setup(kind, &url, &name);
        let proxy = TcpProxy::start(upstream).await;
        proxy.cut();
        let mut dest = aws_destination(kind, &url, &name, &made);
        dest["endpoint_url"] = json!(format!("http://{}", proxy.addr));
        let ep = gw
            .endpoint(
                "acme",
                &key,
                json!({"destination": dest, "policy": quick(json!({}))}),
            )
            .await;
        let mut events = Vec::new();
        for n in 0..3 {
            events.push(gw.event("acme", &key, "order.paid", json!({"n": n})).await);
        }
        failing_while_cut(&gw, &key, kind, &events[0]).await;
        proxy.restore();
        for d in settled(&gw, &key, &events).await {
            assert_eq!(d["state"], "succeeded", "{kind}: {d}");
        }
        let secret = ep["secret"].as_str().unwrap();
        let got = brokers::consume(kind, &url, &name, secret, 3);
        assert_eq!(got.len(), 3, "{kind}: {got:?}");
        brokers::teardown(kind, &url, &name);
    }
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_queue_topic_or_stream_gives_up_after_three_attempts() {
    let moto = OwnMoto::start();
    let url = moto.url();
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let name = brokers::unique("missing");
    let made = json!({
        "queue_url": format!("{url}/{ACCOUNT}/{name}"),
        "topic_arn": format!("arn:aws:sns:{REGION}:{ACCOUNT}:{name}"),
    });
    for kind in ["sqs", "sns", "kinesis"] {
        let dest = aws_destination(kind, &url, &name, &made);
        let done = one_ending(&gw, &key, dest, quick(json!({})), json!({"n": 1})).await;
        assert_eq!(done["state"], "dead", "{kind}: {done}");
        assert_eq!(done["last_error"], "not_found", "{kind}: {done}");
        assert_eq!(done["attempts"], 3, "{kind}: {done}");
        assert_eq!(done["dead_reason"], "give_up", "{kind}: {done}");
    }
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_aws_credentials_give_up_after_three_attempts() {
    let moto = OwnMoto::start_with_auth();
    let url = moto.url();
    // Keys moto issued, allowed everything: the queue is made and read with
    // them, and the operator names them for tenants as `ops`.
    let (id, secret_key) = moto.user(&["*"]);
    let allowed = json!({"access_key_id": id, "secret_access_key": secret_key});
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    let named = NamedCredentials {
        access_key_id: Some(id.clone()),
        secret_access_key: Some(secret_key.clone()),
        ..NamedCredentials::default()
    };
    config.destinations.credentials.insert("ops".into(), named);
    let gw = TestGateway::start_with(config, dir, RunOptions::default()).await;
    let key = gw.tenant("acme").await;
    let name = brokers::unique("auth");
    let mut made = brokers::setup_with("sqs", &url, &name, allowed.clone());
    // Refused before anything is looked up, the topic need not exist.
    made["topic_arn"] = json!(format!("arn:aws:sns:{REGION}:{ACCOUNT}:{name}"));
    for kind in ["sqs", "sns", "kinesis"] {
        // Keys moto never issued.
        let dest = aws_destination(kind, &url, &name, &made);
        let done = one_ending(&gw, &key, dest, quick(json!({})), json!({"n": 1})).await;
        assert_eq!(done["state"], "dead", "{kind}: {done}");
        assert_eq!(done["last_error"], "auth_refused", "{kind}: {done}");
        assert_eq!(done["attempts"], 3, "{kind}: {done}");
    }
    // The keys it issued deliver, given or named by the operator (and then
    // never shown to the tenant); the consumer reads each message with them.
    for (credentials, n) in [(allowed.clone(), 2), (json!({"name": "ops"}), 3)] {
        let mut dest = aws_destination("sqs", &url, &name, &made);
        dest["credentials"] = credentials;
        // Its own event type, so the queue holds this endpoint's copy alone.
        let event_type = format!("order.keys{n}");
        let ep = gw
            .endpoint(
                "acme",
                &key,
                json!({"destination": dest, "event_types": [event_type]}),
            )
            .await;
        assert!(!ep.to_string().contains(&secret_key), "{ep}");
        let ev = gw.event("acme", &key, &event_type, json!({"n": n})).await;
        let id = ev["deliveries"][0]["id"].as_str().unwrap();
        let done = gw.wait_delivery("acme", &key, id, WAIT, is_final).await;
        assert_eq!(done["state"], "succeeded", "{done}");
        let secret = ep["secret"].as_str().unwrap();
        let got = brokers::consume_with("sqs", &url, &name, secret, 1, allowed.clone());
        assert_eq!(got[0]["headers"]["webhook-id"], ev["id"], "{got:?}");
    }
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_larger_than_the_queue_takes_gives_up_at_once() {
    let moto = OwnMoto::start();
    let url = moto.url();
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let name = brokers::unique("large");
    let made = brokers::setup_with("sqs", &url, &name, json!({"max_message_size": 1024}));
    let dest = aws_destination("sqs", &url, &name, &made);
    let big = json!({"blob": "x".repeat(4096)});
    let done = one_ending(&gw, &key, dest.clone(), quick(json!({})), big).await;
    assert_eq!(done["state"], "dead", "{done}");
    assert_eq!(done["last_error"], "too_large", "{done}");
    assert_eq!(done["attempts"], 1, "{done}");
    // A small one to the same queue still goes through.
    let done = one_ending(&gw, &key, dest, quick(json!({})), json!({"n": 1})).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    brokers::teardown("sqs", &url, &name);
    gw.stop().await;
}
