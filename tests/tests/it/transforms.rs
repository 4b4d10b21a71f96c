//! Transforms end to end: the example transforms from `plugins/` (built for
//! `wasm32-unknown-unknown` by this package's build script) uploaded, bound to
//! endpoints and shaping real deliveries, each received request verified with
//! the official `standardwebhooks` package over the body as transformed;
//! skips; hostile transforms (preloaded WAT fixtures, which upload refuses)
//! that never send the untransformed payload; a new version on replay; and
//! two tenants' transforms apart.

use std::time::Duration;

use hookgate_server::PreloadPlugin;
use hookgate_tests::receiver::{Received, Receiver, Reply};
use hookgate_tests::verify::verify_with_official_library;
use hookgate_tests::{Backend, TestGateway, fixture_module, is_final, upload_example};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    each_example_transform_changes_what_the_receiver_gets_and_stays_verifiable,
    a_skip_sends_nothing_and_ends_the_delivery_skipped_with_its_reason,
    hostile_transforms_end_as_transform_failed_and_never_send_the_payload,
    a_new_version_applies_to_a_replay,
}

const WAIT: Duration = Duration::from_secs(30);

/// An endpoint at `rx` for `event_type`, with `extra` fields; its secret.
async fn endpoint(
    gw: &TestGateway,
    tenant: &str,
    key: &str,
    rx: &Receiver,
    event_type: &str,
    extra: Value,
) -> (String, Value) {
    let mut body = json!({"url": rx.url(), "event_types": [event_type]});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    let ep = gw.endpoint(tenant, key, body).await;
    (ep["secret"].as_str().unwrap().to_owned(), ep)
}

/// Sends one event; the id of its one delivery.
async fn send(
    gw: &TestGateway,
    tenant: &str,
    key: &str,
    event_type: &str,
    payload: Value,
) -> String {
    let ev = gw.event(tenant, key, event_type, payload).await;
    ev["deliveries"][0]["id"].as_str().unwrap().to_owned()
}

/// Hex SHA-256, by the `sha256sum` nobody here wrote.
fn sha256_hex(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

fn only(got: Vec<Received>) -> Received {
    assert_eq!(got.len(), 1, "{got:?}");
    got.into_iter().next().unwrap()
}

fn last_attempt(d: &Value) -> &Value {
    d["attempt_log"].as_array().unwrap().last().unwrap()
}

async fn each_example_transform_changes_what_the_receiver_gets_and_stays_verifiable(
    backend: Backend,
) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    for (name, example) in [
        ("rename", "rename-fields"),
        ("slack", "slack-message"),
        ("form", "form-body"),
    ] {
        let up = upload_example(&gw, &key, name, example, 1).await;
        assert_eq!(up["kind"], "transform", "{up}");
    }
    let payload = json!({"amt": 42, "customer": "Zoë Q", "lines": [1, 2]});
    let cases = [
        ("rename", json!({"rename.amt": "amount"})),
        ("slack", json!({"slack.channel": "#billing"})),
        ("form", json!({})),
    ];
    for (transform, metadata) in cases {
        let rx = Receiver::start(vec![Reply::status(200)]).await;
        let event_type = format!("order.{transform}");
        let extra = json!({"transform": transform, "metadata": metadata,
                           "headers": {"x-team": "7"}});
        let (secret, ep) = endpoint(&gw, "acme", &key, &rx, &event_type, extra).await;
        assert_eq!(ep["transform"], transform);
        let dlv = send(&gw, "acme", &key, &event_type, payload.clone()).await;
        let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
        assert_eq!(d["state"], "succeeded", "{d}");
        let got = only(rx.wait_for(1, WAIT).await);
        verify_with_official_library(&secret, std::slice::from_ref(&got));
        let body = String::from_utf8(got.body.to_vec()).unwrap();
        match transform {
            "rename" => {
                let sent: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(
                    sent,
                    json!({"amount": 42, "customer": "Zoë Q", "lines": [1, 2]})
                );
                assert_eq!(got.header("content-type"), Some("application/json"));
            }
            "slack" => {
                let sent: Value = serde_json::from_str(&body).unwrap();
                assert_eq!(
                    sent,
                    json!({"text": "*order.slack*\namt: 42\ncustomer: Zoë Q", "channel": "#billing"})
                );
            }
            _ => {
                assert_eq!(
                    body,
                    "amt=42&customer=Zo%C3%AB+Q&lines=%5B1%2C2%5D&event_type=order.form"
                );
                assert_eq!(
                    got.header("content-type"),
                    Some("application/x-www-form-urlencoded")
                );
            }
        }
        // The endpoint's own headers go through the transform, which keeps them.
        assert_eq!(got.header("x-team"), Some("7"));
        let note = &last_attempt(&d)["transform"];
        assert_eq!(note["plugin"], format!("{transform}@1"), "{d}");
        assert_eq!(note["body_bytes"], got.body.len());
        assert_eq!(note["body_sha256"], sha256_hex(&got.body));
    }
}

async fn a_skip_sends_nothing_and_ends_the_delivery_skipped_with_its_reason(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    upload_example(&gw, &key, "skipper", "skip-by-field", 1).await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;
    let (secret, _) = endpoint(
        &gw,
        "acme",
        &key,
        &rx,
        "order.paid",
        json!({"transform": "skipper"}),
    )
    .await;
    let skipped = send(
        &gw,
        "acme",
        &key,
        "order.paid",
        json!({"id": 1, "test": true}),
    )
    .await;
    let d = gw
        .wait_delivery("acme", &key, &skipped, WAIT, is_final)
        .await;
    assert_eq!(d["state"], "skipped", "{d}");
    let attempt = last_attempt(&d);
    assert_eq!(attempt["verdict"], "skipped", "{d}");
    assert_eq!(attempt["decided_by"], "transform:skipper@1");
    assert_eq!(attempt["response_snippet"], "/test is true");
    assert!(attempt["transform"]["body_sha256"].is_null(), "{d}");
    let sent = send(
        &gw,
        "acme",
        &key,
        "order.paid",
        json!({"id": 2, "test": false}),
    )
    .await;
    let d = gw.wait_delivery("acme", &key, &sent, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    // Only the unmarked event arrived, unchanged.
    let got = only(rx.wait_for(1, WAIT).await);
    assert_eq!(
        serde_json::from_slice::<Value>(&got.body).unwrap(),
        json!({"id": 2, "test": false})
    );
    verify_with_official_library(&secret, &[got]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.received().len(), 1);
    let (s, listed) = gw
        .call(
            "GET",
            "/v1/tenants/acme/deliveries?state=skipped",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(listed["data"][0]["id"], skipped, "{listed}");
    // The version's runs, as the console shows them, and the metrics.
    let (_, plugin) = gw
        .call("GET", "/v1/tenants/acme/plugins/skipper", Some(&key), None)
        .await;
    let runs = &plugin["versions"][0]["runs"];
    assert_eq!(
        (
            runs["count"].as_u64(),
            runs["skipped"].as_u64(),
            runs["failed"].as_u64()
        ),
        (Some(2), Some(1), Some(0)),
        "{plugin}"
    );
    assert!(
        runs["time_us"].as_u64().is_some_and(|us| us > 0),
        "{plugin}"
    );
    let answer = gw
        .exchange(hookgate_tests::ApiRequest::path(
            http::Method::GET,
            "/metrics",
        ))
        .await;
    let metrics = String::from_utf8_lossy(&answer.body);
    for sample in [
        "hookgate_transform_runs_total{result=\"skipped\"} 1\n",
        "hookgate_transform_runs_total{result=\"sent\"} 1\n",
        "hookgate_transform_seconds_count 2\n",
    ] {
        assert!(metrics.contains(sample), "{sample} in:\n{metrics}");
    }
}

/// A gateway with the hostile transform fixtures preloaded for tenant `acme`
/// (upload's conformance check refuses them; preloading runs checks 1–8 only).
async fn gateway_with_hostile_transforms(backend: Backend) -> TestGateway {
    let mut bed = backend.bed().await;
    let dir = std::sync::Arc::clone(&bed.dir);
    let config = &mut bed.config;
    config.breaker.failure_threshold = 1_000;
    for name in [
        "transform_trap",
        "transform_loop",
        "transform_memory",
        "transform_bad_variant",
    ] {
        let path = dir.path().join(format!("{name}.wasm"));
        std::fs::write(&path, fixture_module(name)).unwrap();
        config.plugins.preload.push(PreloadPlugin {
            tenant: "acme".into(),
            name: name.into(),
            path,
        });
    }
    TestGateway::start_bed(bed, hookgate_server::RunOptions::default()).await
}

async fn hostile_transforms_end_as_transform_failed_and_never_send_the_payload(backend: Backend) {
    let gw = gateway_with_hostile_transforms(backend).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;
    let policy = json!({"strategy": "fixed", "base_ms": 1000, "jitter": "none"});
    for (name, reasons) in [
        ("transform_trap", &["trap"][..]),
        ("transform_loop", &["out_of_fuel", "epoch_deadline"][..]),
        ("transform_memory", &["memory_limit"][..]),
        ("transform_bad_variant", &["invalid_output"][..]),
    ] {
        let event_type = format!("hostile.{name}");
        let extra = json!({"transform": name, "policy": policy});
        endpoint(&gw, "acme", &key, &rx, &event_type, extra).await;
        let dlv = send(
            &gw,
            "acme",
            &key,
            &event_type,
            json!({"secret": "never sent"}),
        )
        .await;
        let d = gw
            .wait_delivery("acme", &key, &dlv, Duration::from_secs(60), is_final)
            .await;
        assert_eq!(
            (
                d["state"].as_str(),
                d["dead_reason"].as_str(),
                d["attempts"].as_u64()
            ),
            (Some("dead"), Some("give_up"), Some(3)),
            "{name}: {d}"
        );
        for attempt in d["attempt_log"].as_array().unwrap() {
            assert_eq!(attempt["error_kind"], "transform_failed", "{name}: {d}");
            assert_eq!(attempt["transform"]["plugin"], format!("{name}@1"));
            let said = attempt["response_snippet"].as_str().unwrap();
            assert!(
                reasons.iter().any(|r| said.contains(&format!("({r})"))),
                "{name}: {said}"
            );
        }
        let last = last_attempt(&d)["verdict"].clone();
        assert_eq!(last, "give_up");
    }
    assert!(
        rx.received().is_empty(),
        "the untransformed payload was sent"
    );
}

#[tokio::test]
async fn upload_refuses_a_trapping_transform_at_conformance() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let (s, b) = gw
        .upload_plugin("acme", &key, "trap", fixture_module("transform_trap"))
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (422, Some("plugin_rejected")),
        "{b}"
    );
    let message = b["error"]["message"].as_str().unwrap();
    assert!(message.contains("check 9 conformance"), "{message}");
}

#[tokio::test]
async fn a_transform_answering_an_invalid_request_is_refused_and_retried_per_the_rules() {
    // A transform may not leave the endpoint's path: `/hooks` bound to
    // rename-fields answers `/hooks`, but a binding at `/hooks` to a transform
    // that answers `/` would fail; the bad-variant fixture stands in for any
    // invalid answer above, so here the rules decide: one attempt, then dead.
    let gw = gateway_with_hostile_transforms(Backend::Sled).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;
    let policy = json!({"error_rules": {"transform_failed": "give_up"}});
    let extra = json!({"transform": "transform_bad_variant", "policy": policy});
    endpoint(&gw, "acme", &key, &rx, "once", extra).await;
    let dlv = send(&gw, "acme", &key, "once", json!({})).await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["attempts"].as_u64()),
        (Some("dead"), Some(1)),
        "{d}"
    );
    assert!(rx.received().is_empty());
}

async fn a_new_version_applies_to_a_replay(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    upload_example(&gw, &key, "shape", "rename-fields", 1).await;
    let rx = Receiver::start(vec![Reply::status(200), Reply::status(200)]).await;
    let extra = json!({"transform": "shape", "metadata": {"rename.n": "number"}});
    let (secret, _) = endpoint(&gw, "acme", &key, &rx, "order.paid", extra).await;
    let dlv = send(&gw, "acme", &key, "order.paid", json!({"n": 1})).await;
    gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    upload_example(&gw, &key, "shape", "slack-message", 2).await;
    let (s, b) = gw
        .call(
            "POST",
            &format!("/v1/tenants/acme/deliveries/{dlv}/replay"),
            Some(&key),
            Some(json!({"force": true})),
        )
        .await;
    assert!(s == 200 || s == 202, "{s} {b}");
    let got = rx.wait_for(2, WAIT).await;
    assert_eq!(got.len(), 2);
    let bodies: Vec<Value> = got
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(bodies[0], json!({"number": 1}));
    assert_eq!(bodies[1], json!({"text": "*order.paid*\nn: 1"}));
    verify_with_official_library(&secret, &got);
    let d = gw
        .wait_delivery("acme", &key, &dlv, WAIT, |d| {
            d["series"].as_u64() == Some(2) && is_final(d)
        })
        .await;
    assert_eq!(last_attempt(&d)["transform"]["plugin"], "shape@2", "{d}");
}

#[tokio::test]
async fn two_tenants_transforms_stay_apart() {
    let gw = TestGateway::start().await;
    let (a, b) = (gw.tenant("acme").await, gw.tenant("bravo").await);
    upload_example(&gw, &a, "shape", "rename-fields", 1).await;
    let (s, up) = gw
        .upload_plugin(
            "bravo",
            &b,
            "shape",
            hookgate_tests::plugin_wasm("slack-message"),
        )
        .await;
    assert_eq!(s, 201, "{up}");
    let (rx_a, rx_b) = (
        Receiver::start(vec![Reply::status(200)]).await,
        Receiver::start(vec![Reply::status(200)]).await,
    );
    let extra = json!({"transform": "shape", "metadata": {"rename.who": "tenant"}});
    endpoint(&gw, "acme", &a, &rx_a, "t.e", extra.clone()).await;
    endpoint(&gw, "bravo", &b, &rx_b, "t.e", extra).await;
    send(&gw, "acme", &a, "t.e", json!({"who": "acme-only"})).await;
    send(&gw, "bravo", &b, "t.e", json!({"who": "bravo-only"})).await;
    let got_a: Value = serde_json::from_slice(&only(rx_a.wait_for(1, WAIT).await).body).unwrap();
    let got_b: Value = serde_json::from_slice(&only(rx_b.wait_for(1, WAIT).await).body).unwrap();
    assert_eq!(got_a, json!({"tenant": "acme-only"}));
    assert_eq!(got_b, json!({"text": "*t.e*\nwho: bravo-only"}));
    // Neither tenant can bind the other's transform by name.
    let rx = Receiver::start(vec![]).await;
    let (s, err) = gw
        .call(
            "POST",
            "/v1/tenants/bravo/endpoints",
            Some(&b),
            Some(json!({"url": rx.url(), "transform": "rename"})),
        )
        .await;
    assert_eq!(
        (s, err["error"]["field"].as_str()),
        (422, Some("transform")),
        "{err}"
    );
}

#[tokio::test]
async fn a_binding_names_a_plugin_of_its_kind() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    upload_example(&gw, &key, "codes", "json-error-code", 1).await;
    upload_example(&gw, &key, "shape", "rename-fields", 1).await;
    let rx = Receiver::start(vec![]).await;
    for (field, name, says) in [
        ("transform", "codes", "is a policy, not a transform"),
        ("plugin", "shape", "is a transform, not a policy"),
        ("transform", "absent", "no plugin named"),
    ] {
        let (s, err) = gw
            .call(
                "POST",
                "/v1/tenants/acme/endpoints",
                Some(&key),
                Some(json!({"url": rx.url(), field: name})),
            )
            .await;
        assert_eq!(
            (s, err["error"]["field"].as_str()),
            (422, Some(field)),
            "{err}"
        );
        assert!(err.to_string().contains(says), "{err}");
    }
    let (_, list) = gw
        .call("GET", "/v1/tenants/acme/plugins", Some(&key), None)
        .await;
    let kinds: Vec<(&str, &str)> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("codes", "policy"), ("shape", "transform")]);
}
