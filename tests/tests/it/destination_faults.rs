//! Broker destinations under faults (issue 43), never touching the shared
//! servers' settings: a test's own TCP proxy cuts and heals the way to each
//! broker; a target that does not exist, credentials the broker refuses and a
//! message larger than it takes each end as docs/destinations.md says; and a
//! policy's `error_rules` change those endings without a plugin. Nothing
//! acknowledged is lost.

use std::net::SocketAddr;
use std::time::Duration;

use hookgate_tests::brokers::{self, NATS, OwnNats, RABBITMQ, REDIS};
use hookgate_tests::tcp_proxy::TcpProxy;
use hookgate_tests::{TestGateway, is_final};
use serde_json::{Value, json};

use super::destinations::{destination, settled};

const WAIT: Duration = Duration::from_secs(40);

/// Retries a second apart, so a fault's whole course fits in a test.
pub(crate) fn quick(rules: Value) -> Value {
    json!({"strategy": "fixed", "base_ms": 1000, "jitter": "none", "max_attempts": 10,
           "error_rules": rules})
}

/// `url` with its host and port replaced by `addr`.
fn through(url: &str, addr: SocketAddr) -> String {
    let mut u = url::Url::parse(url).unwrap();
    u.set_port(Some(addr.port())).unwrap();
    u.set_ip_host(addr.ip()).unwrap();
    u.to_string()
}

fn upstream(url: &str) -> SocketAddr {
    let u = url::Url::parse(url).unwrap();
    format!("{}:{}", u.host_str().unwrap(), u.port().unwrap())
        .parse()
        .unwrap()
}

/// One event to a new endpoint with `dest` and `policy`; its final view.
pub(crate) async fn one_ending(
    gw: &TestGateway,
    key: &str,
    dest: Value,
    policy: Value,
    payload: Value,
) -> Value {
    gw.endpoint("acme", key, json!({"destination": dest, "policy": policy}))
        .await;
    let ev = gw.event("acme", key, "order.paid", payload).await;
    let id = ev["deliveries"][0]["id"].as_str().unwrap();
    gw.wait_delivery("acme", key, id, WAIT, is_final).await
}

/// Waits until `event` has failed twice while the way is cut, and asserts
/// it failed as a connection failure and waits for another attempt.
pub(crate) async fn failing_while_cut(gw: &TestGateway, key: &str, kind: &str, event: &Value) {
    let first = event["deliveries"][0]["id"].as_str().unwrap();
    let failed = gw
        .wait_delivery("acme", key, first, WAIT, |d| {
            d["attempts"].as_u64() >= Some(2)
        })
        .await;
    assert_eq!(failed["state"], "pending", "{kind}: {failed}");
    let error = failed["last_error"].as_str().unwrap_or_default();
    assert!(
        ["connect", "reset", "timeout"].contains(&error),
        "{kind}: {failed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_unreachable_for_a_while_loses_nothing() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    for (kind, url) in [("rabbitmq", RABBITMQ), ("nats", NATS), ("redis", REDIS)] {
        let name = brokers::unique(kind);
        brokers::setup(kind, url, &name);
        let proxy = TcpProxy::start(upstream(url)).await;
        proxy.cut();
        let dest = destination(kind, &through(url, proxy.addr), &name);
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
        let got = brokers::consume(kind, url, &name, secret, 3);
        assert_eq!(got.len(), 3, "{kind}: {got:?}");
        brokers::teardown(kind, url, &name);
    }
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_target_gives_up_after_three_attempts() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    // No such exchange; no stream captures the subject; the key holds no stream.
    let name = brokers::unique("missing");
    let redis = redis_set(&name);
    let cases = [
        ("rabbitmq", destination("rabbitmq", RABBITMQ, &name)),
        ("nats", destination("nats", NATS, &name)),
        ("redis", destination("redis", REDIS, &redis)),
    ];
    for (kind, dest) in cases {
        let done = one_ending(&gw, &key, dest, quick(json!({})), json!({"n": 1})).await;
        assert_eq!(done["state"], "dead", "{kind}: {done}");
        assert_eq!(done["last_error"], "not_found", "{kind}: {done}");
        assert_eq!(done["attempts"], 3, "{kind}: {done}");
        assert_eq!(done["dead_reason"], "give_up", "{kind}: {done}");
    }
    // A rule makes it retry instead, up to the policy's attempts.
    let rules = json!({"not_found": {"give_up_after": 5}});
    let dest = destination("rabbitmq", RABBITMQ, &name);
    let done = one_ending(&gw, &key, dest, quick(rules), json!({"n": 2})).await;
    assert_eq!(
        (done["state"].as_str(), done["attempts"].as_u64()),
        (Some("dead"), Some(5)),
        "{done}"
    );
    brokers::teardown("redis", REDIS, &redis);
    gw.stop().await;
}

/// A key named after `name` that holds a string, so `XADD` to it is refused.
fn redis_set(name: &str) -> String {
    let key = format!("{name}-string");
    let out = std::process::Command::new("redis-cli")
        .args(["-u", REDIS, "SET", &key, "not a stream"])
        .output()
        .expect("redis-cli is on this machine");
    assert!(out.status.success(), "{out:?}");
    key
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_credentials_give_up_after_three_attempts() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let name = brokers::unique("auth");
    brokers::setup("rabbitmq", RABBITMQ, &name);
    // The shared NATS asks for no credentials: this one does.
    let guarded = OwnNats::start("authorization { user: hookgate, password: right }");
    let wrong = json!({"username": "hookgate", "password": "wrong"});
    let mut rabbit = destination("rabbitmq", RABBITMQ, &name);
    rabbit["credentials"] = wrong.clone();
    let mut nats = destination("nats", &guarded.url, &name);
    nats["credentials"] = wrong;
    let mut redis = destination("redis", REDIS, &name);
    redis["credentials"] = json!({"username": "nobody", "password": "wrong"});
    for (kind, dest) in [("rabbitmq", rabbit), ("nats", nats), ("redis", redis)] {
        let done = one_ending(&gw, &key, dest, quick(json!({})), json!({"n": 1})).await;
        assert_eq!(done["state"], "dead", "{kind}: {done}");
        assert_eq!(done["last_error"], "auth_refused", "{kind}: {done}");
        assert_eq!(done["attempts"], 3, "{kind}: {done}");
    }
    // A rule gives up at once.
    let mut dest = destination("rabbitmq", RABBITMQ, &name);
    dest["credentials"] = json!({"username": "guest", "password": "wrong"});
    let done = one_ending(
        &gw,
        &key,
        dest,
        quick(json!({"auth_refused": "give_up"})),
        json!({}),
    )
    .await;
    assert_eq!(
        (done["state"].as_str(), done["attempts"].as_u64()),
        (Some("dead"), Some(1)),
        "{done}"
    );
    brokers::teardown("rabbitmq", RABBITMQ, &name);
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_too_large_gives_up_at_once() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    // The shared NATS takes 1 MiB, more than an event may hold: this one takes 2 KiB.
    let small = OwnNats::start("max_payload: 2048");
    let name = brokers::unique("large");
    brokers::setup("nats", &small.url, &name);
    let dest = destination("nats", &small.url, &name);
    let big = json!({"blob": "x".repeat(4096)});
    let done = one_ending(&gw, &key, dest.clone(), quick(json!({})), big).await;
    assert_eq!(done["state"], "dead", "{done}");
    assert_eq!(done["last_error"], "too_large", "{done}");
    assert_eq!(done["attempts"], 1, "{done}");
    // A small one to the same stream still goes through.
    let ok = one_ending(&gw, &key, dest, quick(json!({})), json!({"n": 1})).await;
    assert_eq!(ok["state"], "succeeded", "{ok}");
    gw.stop().await;
}

/// The `broker-aware` example plugin (built with the SDK against
/// `hookgate:policy@0.3.0`) is told the destination's kind and the broker's
/// error: it waits out a RabbitMQ auth refusal for 30 s where the policy alone
/// would retry in 1 s, and it gives up on a message NATS finds too large,
/// deciding both itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_plugin_sees_the_destination_and_the_broker_error_and_decides() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    hookgate_tests::upload_example(&gw, &key, "broker-aware", "broker-aware", 1).await;
    let name = brokers::unique("plugin");
    brokers::setup("rabbitmq", RABBITMQ, &name);
    let mut refused = destination("rabbitmq", RABBITMQ, &name);
    refused["credentials"] = json!({"username": "guest", "password": "wrong"});
    gw.endpoint(
        "acme",
        &key,
        json!({"destination": refused, "policy": quick(json!({})), "plugin": "broker-aware"}),
    )
    .await;
    let ev = gw.event("acme", &key, "order.paid", json!({"n": 1})).await;
    let id = ev["deliveries"][0]["id"].as_str().unwrap();
    let waiting = gw
        .wait_delivery("acme", &key, id, WAIT, |d| {
            d["attempts"].as_u64() >= Some(1)
        })
        .await;
    assert_eq!(waiting["state"], "pending", "{waiting}");
    assert_eq!(waiting["last_error"], "auth_refused", "{waiting}");
    let (s, attempts) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/attempts?delivery={id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(s, 200, "{attempts}");
    let first = &attempts["data"][0];
    assert_eq!(first["decided_by"], "plugin:broker-aware@1", "{first}");
    assert_eq!(
        first["delay_ms"], 30_000,
        "the plugin's wait, not the policy's 1 s: {first}"
    );

    let small = OwnNats::start("max_payload: 2048");
    let stream = brokers::unique("plugin-nats");
    brokers::setup("nats", &small.url, &stream);
    gw.endpoint(
        "acme",
        &key,
        json!({"destination": destination("nats", &small.url, &stream),
               "policy": quick(json!({"too_large": "retry"})), "plugin": "broker-aware",
               "event_types": ["order.big"]}),
    )
    .await;
    let big = gw
        .event("acme", &key, "order.big", json!({"blob": "x".repeat(4096)}))
        .await;
    let big_id = big["deliveries"][0]["id"].as_str().unwrap();
    let done = gw.wait_delivery("acme", &key, big_id, WAIT, is_final).await;
    // The policy's rule says retry; the plugin, told the kind, gives up.
    assert_eq!(
        (done["state"].as_str(), done["attempts"].as_u64()),
        (Some("dead"), Some(1)),
        "{done}"
    );
    assert_eq!(done["last_error"], "too_large", "{done}");
    let (_, attempts) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/attempts?delivery={big_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        attempts["data"][0]["decided_by"], "plugin:broker-aware@1",
        "{attempts}"
    );
    brokers::teardown("rabbitmq", RABBITMQ, &name);
    gw.stop().await;
}
