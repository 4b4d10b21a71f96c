//! The plugin host in a running gateway: plugins preloaded from config
//! (`[[plugins.preload]]`), bound by endpoints, deciding real deliveries — and
//! hostile ones falling back while the gateway keeps serving.
//!
//! The plugins are WAT fragments under `tests/fixtures/plugins/`, assembled into
//! core modules here; the gateway makes components of them with its own world.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use hookgate_server::{Config, PreloadPlugin};
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{TestGateway, fixture_module, is_final, plugin_fixture, test_config};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// A test config preloading `plugins` (name, wasm bytes) for tenant `acme`.
fn config_with(dir: &tempfile::TempDir, plugins: &[(&str, Vec<u8>)]) -> Config {
    let mut config = test_config(dir.path());
    for (name, bytes) in plugins {
        let path = dir.path().join(format!("{name}.wasm"));
        std::fs::write(&path, bytes).unwrap();
        config.plugins.preload.push(PreloadPlugin {
            tenant: "acme".into(),
            name: (*name).into(),
            path,
        });
    }
    config
}

async fn gateway_with(plugins: &[&str]) -> TestGateway {
    gateway_tuned(plugins, |_| {}).await
}

/// [`gateway_with`], with the config changed by `tune` first.
async fn gateway_tuned(plugins: &[&str], tune: impl FnOnce(&mut Config)) -> TestGateway {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let modules: Vec<(&str, Vec<u8>)> = plugins.iter().map(|n| (*n, fixture_module(n))).collect();
    let mut config = config_with(&dir, &modules);
    tune(&mut config);
    TestGateway::start_with(config, dir, hookgate_server::RunOptions::default()).await
}

/// A receiver answering each request with the next (status, body), then 200.
async fn body_receiver(script: Vec<(u16, &'static str)>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let script = Arc::new(Mutex::new(std::collections::VecDeque::from(script)));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let script = Arc::clone(&script);
            tokio::spawn(async move {
                let svc = service_fn(move |_req: Request<hyper::body::Incoming>| {
                    let next = script.lock().unwrap().pop_front().unwrap_or((200, "ok"));
                    async move {
                        let resp = Response::builder()
                            .status(next.0)
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from_static(next.1.as_bytes())))
                            .unwrap();
                        Ok::<_, Infallible>(resp)
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    url
}

fn log(d: &Value) -> &Vec<Value> {
    d["attempt_log"].as_array().unwrap()
}

#[tokio::test]
async fn a_plugin_retries_a_400_that_says_try_again() {
    let url = body_receiver(vec![(400, r#"{"error":"try_again"}"#)]).await;
    let gw = gateway_with(&["tryagain"]).await;
    let (key, ep, dlv) = gw.one_delivery(&url, json!({"plugin": "tryagain"})).await;
    assert_eq!(ep["plugin"], "tryagain");
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    assert_eq!(d["attempts"], 2);
    let log = log(&d);
    assert_eq!(log[0]["status"], 400);
    assert_eq!(log[0]["verdict"], "retry");
    assert_eq!(log[0]["delay_ms"], 1_000);
    assert_eq!(log[0]["decided_by"], "plugin:tryagain@1");
    assert_eq!(log[1]["verdict"], "delivered");
    assert_eq!(
        log[1]["decided_by"], "builtin",
        "the host alone decides a 2xx"
    );
}

#[tokio::test]
async fn without_try_again_the_builtin_gives_up_on_a_400() {
    let url = body_receiver(vec![(400, r#"{"error":"bad_request"}"#)]).await;
    let gw = gateway_with(&["tryagain"]).await;
    let (key, _, dlv) = gw.one_delivery(&url, json!({"plugin": "tryagain@1"})).await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("give_up")),
        "{d}"
    );
    assert_eq!(
        log(&d)[0]["decided_by"],
        "builtin",
        "use-default both times"
    );
}

#[tokio::test]
async fn hostile_plugins_fall_back_and_the_gateway_keeps_serving() {
    let cases = [
        ("loop", "fallback:out_of_fuel"),
        ("memory_bomb", "fallback:memory_limit"),
        ("trap", "fallback:trap"),
        ("unreachable", "fallback:trap"),
        ("invalid_output", "fallback:invalid_output"),
        ("absurd_delay", "plugin:absurd_delay@1"),
    ];
    let gw = gateway_with(&cases.map(|(name, _)| name)).await;
    let key = gw.tenant("acme").await;
    let policy =
        json!({"strategy": "fixed", "base_ms": 100, "jitter": "none", "max_delay_ms": 1_500});
    let mut receivers = Vec::new();
    for (name, _) in cases {
        let rx = Receiver::start(vec![Reply::status(500)]).await;
        let body =
            json!({"url": rx.url(), "plugin": name, "policy": policy, "event_types": [name]});
        gw.endpoint("acme", &key, body).await;
        receivers.push(rx);
    }
    for (name, decided_by) in cases {
        let ev = gw.event("acme", &key, name, json!({"plugin": name})).await;
        let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
        let d = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
        assert_eq!(d["state"], "succeeded", "{name}: {d}");
        let log = log(&d);
        // A loop ends on whichever limit comes first: fuel normally, the epoch
        // deadline when the host is too busy to burn the fuel in time.
        let loop_ended = name == "loop" && log[0]["decided_by"] == "fallback:epoch_deadline";
        if !loop_ended {
            assert_eq!(log[0]["decided_by"], decided_by, "{name}: {d}");
        }
        assert_eq!(log[0]["verdict"], "retry", "{name}");
        let delay = if name == "absurd_delay" { 1_500 } else { 100 };
        assert_eq!(
            log[0]["delay_ms"], delay,
            "{name}: clamped to max_delay, or the built-in's"
        );
    }
    // Recovery: after all of them, a delivery without a plugin still succeeds.
    let rx = Receiver::start(vec![]).await;
    let plain = json!({"url": rx.url(), "event_types": ["plain"]});
    gw.endpoint("acme", &key, plain).await;
    let ev = gw.event("acme", &key, "plain", json!({})).await;
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let d = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["attempts"].as_u64()),
        (Some("succeeded"), Some(1)),
        "{d}"
    );
}

#[tokio::test]
async fn twenty_counted_failures_disable_the_plugin() {
    let rx = Receiver::start(vec![Reply::status(500); 30]).await;
    // The breaker would pause the endpoint after 20 failures; keep it out of the way.
    let gw = gateway_tuned(&["trap"], |c| c.breaker.failure_threshold = 1_000).await;
    let policy = json!({"strategy": "fixed", "base_ms": 20, "jitter": "none", "max_attempts": 23});
    let (key, _, dlv) = gw
        .one_delivery(&rx.url(), json!({"plugin": "trap", "policy": policy}))
        .await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("max_attempts")),
        "{d}"
    );
    let by: Vec<&str> = log(&d)
        .iter()
        .map(|a| a["decided_by"].as_str().unwrap())
        .collect();
    assert_eq!(by.len(), 23);
    assert!(by[..20].iter().all(|b| *b == "fallback:trap"), "{by:?}");
    assert!(by[20..].iter().all(|b| *b == "fallback:disabled"), "{by:?}");
}

#[tokio::test]
async fn endpoints_bind_only_plugins_the_tenant_has() {
    let gw = gateway_with(&["tryagain"]).await;
    let key = gw.tenant("acme").await;
    let other = gw.tenant("globex").await;
    let url = "http://127.0.0.1:9/hook";
    for ok in ["tryagain", "tryagain@1"] {
        let ep = gw
            .endpoint("acme", &key, json!({"url": url, "plugin": ok}))
            .await;
        assert_eq!(ep["plugin"], ok);
    }
    for (tenant, k, bad) in [
        ("acme", &key, "tryagain@2"),
        ("acme", &key, "nope"),
        ("globex", &other, "tryagain"),
    ] {
        let (s, b) = gw
            .call(
                "POST",
                &format!("/v1/tenants/{tenant}/endpoints"),
                Some(k),
                Some(json!({"url": url, "plugin": bad})),
            )
            .await;
        assert_eq!(
            (s, b["error"]["field"].as_str()),
            (422, Some("plugin")),
            "{bad}: {b}"
        );
    }
}

#[tokio::test]
async fn a_plugin_that_imports_anything_stops_start_up_naming_its_file() {
    let wasi_module = wat::parse_str(plugin_fixture("wasi.wat")).unwrap();
    let wasi_component = wat::parse_str(plugin_fixture("wasi_component.wat")).unwrap();
    for (name, bytes, says) in [
        ("wasi_module", wasi_module, "wasi_snapshot_preview1"),
        (
            "wasi_component",
            wasi_component,
            "imports wasi:random/random",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let config = config_with(&dir, &[(name, bytes)]);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let shutdown = tokio_util::sync::CancellationToken::new();
        let run = hookgate_server::run_with(
            config,
            listener,
            shutdown.clone(),
            hookgate_server::RunOptions::default(),
        );
        let result = tokio::time::timeout(WAIT, run)
            .await
            .expect("start-up must fail, not serve");
        shutdown.cancel();
        let message = result
            .expect_err("a WASI plugin must be refused")
            .to_string();
        let path = dir.path().join(format!("{name}.wasm"));
        assert!(message.contains(&path.display().to_string()), "{message}");
        assert!(message.contains(says), "{message}");
    }
}
