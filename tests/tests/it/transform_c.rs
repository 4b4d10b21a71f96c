//! A transform written in C (`plugins/envelope-c`): built here with Debian's
//! clang and wasm-ld, no libc and no wit-bindgen, it must pass the host's
//! upload checks as a Rust transform does, answer through the host's own path,
//! and shape real deliveries the receiver verifies with the official
//! `standardwebhooks` package. Without clang the tests fail, naming the
//! packages to install; they never skip.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use hookgate_server::{
    DestinationKind, PluginHost, PluginKind, TransformFacts, TransformMethod, TransformRequest,
    Transformed,
};
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::verify::verify_with_official_library;
use hookgate_tests::{TestGateway, is_final};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// The example's directory.
fn example_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/envelope-c")
}

/// The module `plugins/envelope-c/build.sh` builds, once per test binary.
fn envelope_c() -> Vec<u8> {
    static BUILT: OnceLock<Vec<u8>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = tempfile::tempdir().unwrap();
            let dir = example_dir();
            let run = Command::new("bash")
                .arg(dir.join("build.sh"))
                .arg(out.path())
                .current_dir(&dir)
                .output()
                .expect("run bash plugins/envelope-c/build.sh");
            assert!(
                run.status.success(),
                "building plugins/envelope-c failed ({}); it needs Debian's clang and lld: \
                 `apt-get install -y clang lld` (tests/run.sh installs them)\nstdout: {}\nstderr: {}",
                run.status,
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr),
            );
            std::fs::read(out.path().join("envelope_c.wasm")).expect("envelope_c.wasm")
        })
        .clone()
}

#[test]
fn the_c_transform_is_small_and_passes_the_hosts_upload_checks() {
    let bytes = envelope_c();
    assert!(
        bytes.len() < 64 * 1024,
        "envelope_c.wasm is {} bytes",
        bytes.len()
    );
    // A core module (the host makes the component), not a component.
    assert_eq!(&bytes[..8], b"\0asm\x01\0\0\0");
    let checked = PluginHost::new(512 * 1024)
        .unwrap()
        .check(&bytes)
        .unwrap_or_else(|e| panic!("the host refused envelope_c.wasm: {e}"));
    assert_eq!(checked.wit.kind(), PluginKind::Transform);
    assert!(checked.componentized);
    // Every conformance sample (among them an empty and a 256 KiB payload) was
    // sent, wrapped, with the sample's header and `x-envelope`.
    let samples = &checked.conformance.samples;
    assert_eq!(samples.len(), 6, "{samples:?}");
    for s in samples {
        assert!(
            s.answer.starts_with("send POST /, ")
                && s.answer.ends_with("application/json, 2 headers"),
            "{}: {}",
            s.name,
            s.answer
        );
    }
    let results = checked.results();
    assert!(
        results.memory_used_bytes <= results.memory_limit_bytes,
        "{results:?}"
    );
}

#[tokio::test]
async fn the_c_transform_escapes_strings_and_keeps_the_request_through_the_host() {
    let host = PluginHost::new(512 * 1024).unwrap();
    host.load("acme", "envelope", &envelope_c()).unwrap();
    let url = url::Url::parse("https://r.example/hooks").unwrap();
    let metadata = BTreeMap::new();
    let facts = |event_type: &'static str, payload: &'static [u8]| TransformFacts {
        event_id: "evt_\"quoted\"\\",
        event_type,
        timestamp_ms: 1_733_500_000_000,
        payload,
        channels: &[],
        tags: &[],
        endpoint_id: "ep_\u{1}\t\n",
        endpoint_uid: Some("mine"),
        metadata: &metadata,
        destination: DestinationKind::Http,
        request: TransformRequest {
            method: TransformMethod::Put,
            path: "/hooks/in?team=7".into(),
            headers: vec![
                ("x-envelope".into(), "old".into()),
                ("x-team".into(), "7".into()),
            ],
            body: payload.to_vec(),
            content_type: "application/json".into(),
        },
    };

    let run = host
        .transform(
            "acme",
            "envelope",
            &facts("a\"b\\c\r\u{1f}é", b" \n\t"),
            &url,
        )
        .await;
    let Ok(Transformed::Send(sent)) = run.result else {
        panic!("{run:?}")
    };
    assert_eq!(sent.method, TransformMethod::Put);
    assert_eq!(sent.path, "/hooks/in?team=7");
    assert_eq!(sent.content_type, "application/json");
    assert_eq!(
        sent.headers,
        [
            ("x-team".to_owned(), "7".to_owned()),
            ("x-envelope".to_owned(), "c".to_owned())
        ]
    );
    let body: Value = serde_json::from_slice(&sent.body).unwrap();
    assert_eq!(
        body,
        json!({"type": "a\"b\\c\r\u{1f}é", "id": "evt_\"quoted\"\\",
               "endpoint": "ep_\u{1}\t\n", "data": null})
    );

    // The payload goes in as it came, byte for byte.
    let run = host
        .transform(
            "acme",
            "envelope",
            &facts("order.paid", b"[1, {\"a\": 2}]"),
            &url,
        )
        .await;
    let Ok(Transformed::Send(sent)) = run.result else {
        panic!("{run:?}")
    };
    let expected = "{\"type\":\"order.paid\",\"id\":\"evt_\\\"quoted\\\"\\\\\",\
                    \"endpoint\":\"ep_\\u0001\\t\\n\",\"data\":[1, {\"a\": 2}]}";
    assert_eq!(String::from_utf8(sent.body).unwrap(), expected);

    let run = host
        .transform("acme", "envelope", &facts("test.ping", b"{}"), &url)
        .await;
    assert_eq!(run.result, Ok(Transformed::Skip("test event".into())));
    // `test` alone, or `tests.`, is not a test event.
    for event_type in ["test", "tests.x"] {
        let run = host
            .transform("acme", "envelope", &facts(event_type, b"{}"), &url)
            .await;
        assert!(
            matches!(run.result, Ok(Transformed::Send(_))),
            "{event_type}: {run:?}"
        );
    }
}

#[tokio::test]
async fn the_c_transform_wraps_deliveries_the_receiver_verifies_and_skips_test_events() {
    let bytes = envelope_c();
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let (s, up) = gw.upload_plugin("acme", &key, "envelope", bytes).await;
    assert_eq!(s, 201, "{up}");
    assert_eq!(up["kind"], "transform", "{up}");

    let rx = Receiver::start(vec![Reply::status(200)]).await;
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": rx.url(), "event_types": ["order.paid", "test.ping"],
                   "transform": "envelope", "headers": {"x-team": "7"}}),
        )
        .await;
    assert_eq!(ep["transform"], "envelope", "{ep}");
    let secret = ep["secret"].as_str().unwrap();
    let endpoint_id = ep["id"].as_str().unwrap();

    let ev = gw
        .event("acme", &key, "order.paid", json!({"amount": 42}))
        .await;
    let event_id = ev["id"].as_str().unwrap();
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let d = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    let got = rx.wait_for(1, WAIT).await;
    assert_eq!(got.len(), 1, "{got:?}");
    let got = &got[0];
    let body: Value = serde_json::from_slice(&got.body)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&got.body)));
    assert_eq!(
        body,
        json!({"type": "order.paid", "id": event_id, "endpoint": endpoint_id,
               "data": {"amount": 42}})
    );
    assert_eq!(got.header("content-type"), Some("application/json"));
    assert_eq!(got.header("x-envelope"), Some("c"));
    assert_eq!(got.header("x-team"), Some("7"));
    assert_eq!((got.method.as_str(), got.path.as_str()), ("POST", "/hook"));
    assert_eq!(got.header("webhook-id"), Some(event_id));
    verify_with_official_library(secret, std::slice::from_ref(got));

    let ev = gw
        .event("acme", &key, "test.ping", json!({"ping": true}))
        .await;
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let d = gw
        .wait_delivery("acme", &key, dlv, WAIT, |d| {
            is_final(d) || d["state"] == "skipped"
        })
        .await;
    assert_eq!(d["state"], "skipped", "{d}");
    let attempt = d["attempt_log"].as_array().unwrap().last().unwrap();
    assert_eq!(attempt["decided_by"], "transform:envelope@1", "{d}");
    assert_eq!(attempt["response_snippet"], "test event", "{d}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.received().len(), 1, "{:?}", rx.received());
}
