//! Observability after a scripted run: /metrics values (parsed by the official
//! Prometheus parser for the format the response declares), /v1/stats rates, and
//! alerts delivered as signed webhooks, exactly one per incident plus one resolution.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use hookgate_server::AlertsConfig;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::verify::verify_with_official_library;
use hookgate_tests::{ADMIN, ApiRequest, TestGateway, is_final, test_config};
use http::Method;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// Prometheus's own scrape `Accept` header (OpenMetrics first, classic text as a fallback).
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// One `GET /metrics`: the declared `Content-Type` and the body.
async fn scrape(gw: &TestGateway, accept: Option<&str>) -> (String, String) {
    // Without a preference a scraper accepts anything.
    let accept = accept.unwrap_or("*/*");
    let req = ApiRequest::path(Method::GET, "/metrics").header("accept", Some(accept));
    let resp = gw.exchange(req).await;
    assert_eq!(resp.status, 200);
    let content_type = resp
        .headers
        .get("content-type")
        .expect("a Content-Type")
        .to_str()
        .unwrap()
        .to_owned();
    (
        content_type,
        String::from_utf8_lossy(&resp.body).into_owned(),
    )
}

/// Parses a scrape with the official Prometheus parser for the format its
/// `Content-Type` declares: `{"format": .., "families": {name: {type, samples}}}`.
fn parse_as_declared(content_type: &str, text: &str) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/parse_metrics.py");
    let mut child = Command::new("python3")
        .arg(script)
        .arg(content_type)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 with prometheus-client");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the exposition does not parse as its declared {content_type}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every sample of the scrape's typed families, keyed `name{labels}`. Samples the
/// parser could only file under an untyped family (a counter's `_total` under a
/// `# TYPE` that names it differently) are left out: they are what went wrong.
fn typed_samples(parsed: &Value) -> Value {
    let mut samples = serde_json::Map::new();
    for family in parsed["families"].as_object().unwrap().values() {
        if !matches!(family["type"].as_str(), Some("unknown" | "untyped")) {
            for (k, v) in family["samples"].as_object().unwrap() {
                samples.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(samples)
}

/// [`typed_samples`] of a scrape, parsed as the format it declares.
fn parse_metrics(content_type: &str, text: &str) -> Value {
    typed_samples(&parse_as_declared(content_type, text))
}

#[tokio::test]
async fn metrics_and_stats_after_a_scripted_run() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let ok = Receiver::start(Vec::new()).await;
    let flaky = Receiver::start(vec![Reply::status(503), Reply::status(503)]).await;
    let gone = Receiver::start(vec![Reply::status(404)]).await;
    let fast = json!({"base_ms": 100, "jitter": "none"});
    gw.endpoint(
        "acme",
        &key,
        json!({"url": ok.url(), "event_types": ["ok"]}),
    )
    .await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": flaky.url(), "event_types": ["flaky"], "policy": fast}),
    )
    .await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": gone.url(), "event_types": ["gone"]}),
    )
    .await;
    let mut ids = Vec::new();
    for t in ["ok", "ok", "ok", "flaky", "flaky", "gone"] {
        ids.push(
            gw.event("acme", &key, t, json!({})).await["deliveries"][0]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for id in &ids {
        gw.wait_delivery("acme", &key, id, WAIT, is_final).await;
    }
    // Telemetry is updated right after each outcome is stored: poll until it settles.
    let deadline = tokio::time::Instant::now() + WAIT;
    let (mut content_type, mut text) = scrape(&gw, None).await;
    while !text.contains("hookgate_attempts_per_delivery_count 6")
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
        (content_type, text) = scrape(&gw, None).await;
    }
    assert!(
        !text.contains("acme") && !text.contains("ep_"),
        "no tenant data or ids in labels"
    );
    let m = parse_metrics(&content_type, &text);
    let want = [
        ("hookgate_events_ingested_total", 6.0),
        (
            "hookgate_attempts_total{error_kind=\"none\",outcome=\"2xx\"}",
            5.0,
        ),
        (
            "hookgate_attempts_total{error_kind=\"none\",outcome=\"5xx\"}",
            2.0,
        ),
        (
            "hookgate_attempts_total{error_kind=\"none\",outcome=\"4xx\"}",
            1.0,
        ),
        ("hookgate_deliveries_succeeded_total", 5.0),
        ("hookgate_deliveries_dead_total{reason=\"give_up\"}", 1.0),
        ("hookgate_retries_total", 2.0),
        ("hookgate_dlq_size", 1.0),
        ("hookgate_deliveries_pending", 0.0),
        ("hookgate_breakers_open", 0.0),
        ("hookgate_attempt_duration_seconds_count", 8.0),
        ("hookgate_delivery_latency_seconds_count", 5.0),
        ("hookgate_attempts_per_delivery_count", 6.0),
        ("hookgate_attempts_per_delivery_sum", 8.0),
        (
            "hookgate_policy_decisions_total{decided_by=\"builtin\"}",
            8.0,
        ),
    ];
    assert!(
        m["hookgate_deliveries_in_flight"].is_number(),
        "the in-flight gauge is exported"
    );
    for (name, value) in want {
        assert_eq!(m[name].as_f64(), Some(value), "{name} in {m}");
    }

    let (s, stats) = gw
        .call("GET", "/v1/tenants/acme/stats", Some(&key), None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(stats["success_rate"].as_f64(), Some(5.0 / 6.0), "{stats}");
    assert_eq!(stats["retry_rate"].as_f64(), Some(2.0 / 8.0), "{stats}");
    assert_eq!(stats["avg_attempts"].as_f64(), Some(8.0 / 6.0), "{stats}");
    assert_eq!(stats["dlq_size"], 1);
    assert!(stats["latency_ms"]["p95"].is_number() && stats["latency_ms"]["p99"].is_number());
    let (s, all) = gw.call("GET", "/v1/stats", Some(ADMIN), None).await;
    assert_eq!((s, &all["success_rate"]), (200, &stats["success_rate"]));
    assert_eq!(gw.call("GET", "/v1/stats", Some(&key), None).await.0, 403);
}

/// Issue 17, item 10: `/metrics` declares the format it sends. Prometheus's scrape
/// gets OpenMetrics; a scraper that names no format gets the classic text; each
/// parses, with the official parser for what was declared, to the exact counts.
#[tokio::test]
async fn metrics_declare_the_format_they_send() {
    const N: u32 = 7;
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let ok = Receiver::start(Vec::new()).await;
    gw.endpoint("acme", &key, json!({"url": ok.url()})).await;
    let mut ids = Vec::new();
    for _ in 0..N {
        let ev = gw.event("acme", &key, "ok", json!({})).await;
        ids.push(ev["deliveries"][0]["id"].as_str().unwrap().to_owned());
    }
    for id in &ids {
        let d = gw.wait_delivery("acme", &key, id, WAIT, is_final).await;
        assert_eq!(d["state"], "succeeded", "{d}");
    }
    // Telemetry is updated right after each outcome is stored: poll until it settles.
    let settled = format!("hookgate_attempts_per_delivery_count {N}");
    let deadline = tokio::time::Instant::now() + WAIT;
    while !scrape(&gw, None).await.1.contains(&settled) {
        assert!(tokio::time::Instant::now() < deadline, "never settled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let openmetrics = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    let text = "text/plain; version=0.0.4; charset=utf-8";
    let cases = [
        (Some(PROMETHEUS_ACCEPT), openmetrics),
        (None, text),
        (Some("*/*"), text),
        (Some("text/plain"), text),
        (Some("application/openmetrics-text"), openmetrics),
        (
            Some("application/openmetrics-text; version=0.0.1"),
            "application/openmetrics-text; version=0.0.1; charset=utf-8",
        ),
        // Nothing we can send is acceptable: the classic text, not a 406.
        (Some("application/json"), text),
    ];
    let n = f64::from(N);
    let want = [
        (
            "hookgate_events_ingested",
            "counter",
            "hookgate_events_ingested_total",
            n,
        ),
        (
            "hookgate_deliveries_succeeded",
            "counter",
            "hookgate_deliveries_succeeded_total",
            n,
        ),
        (
            "hookgate_attempts",
            "counter",
            "hookgate_attempts_total{error_kind=\"none\",outcome=\"2xx\"}",
            n,
        ),
        (
            "hookgate_policy_decisions",
            "counter",
            "hookgate_policy_decisions_total{decided_by=\"builtin\"}",
            n,
        ),
        ("hookgate_retries", "counter", "hookgate_retries_total", 0.0),
        (
            "hookgate_attempts_per_delivery",
            "histogram",
            "hookgate_attempts_per_delivery_count",
            n,
        ),
        (
            "hookgate_attempts_per_delivery",
            "histogram",
            "hookgate_attempts_per_delivery_sum",
            n,
        ),
        (
            "hookgate_deliveries_pending",
            "gauge",
            "hookgate_deliveries_pending",
            0.0,
        ),
        ("hookgate_dlq_size", "gauge", "hookgate_dlq_size", 0.0),
    ];
    let mut parsed_by_format = Vec::new();
    for (accept, content_type) in cases {
        let (declared, body) = scrape(&gw, accept).await;
        assert_eq!(declared, content_type, "Content-Type for Accept {accept:?}");
        let parsed = parse_as_declared(&declared, &body);
        let families = parsed["families"].as_object().unwrap();
        for (name, family) in families {
            assert!(
                !matches!(family["type"].as_str(), Some("unknown" | "untyped")),
                "{name} parsed as an untyped family for Accept {accept:?}: the body is not \
                 the declared {declared}:\n{body}"
            );
        }
        for (family, kind, sample, value) in want {
            let f = &families[family];
            assert_eq!(f["type"], kind, "{family} for Accept {accept:?}: {f}");
            assert_eq!(
                f["samples"][sample].as_f64(),
                Some(value),
                "{sample} for Accept {accept:?}: {f}"
            );
        }
        parsed_by_format.push(parsed);
    }
    // Both formats carry the same families and samples.
    let (om, classic) = (&parsed_by_format[0], &parsed_by_format[1]);
    assert_eq!(
        (om["format"].as_str(), classic["format"].as_str()),
        (Some("openmetrics-1.0.0"), Some("text-0.0.4"))
    );
    assert_eq!(om["families"], classic["families"]);
}

#[tokio::test]
async fn a_failing_endpoint_alerts_once_and_resolves_once() {
    let alerts_rx = Receiver::start(Vec::new()).await;
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    config.alerts = AlertsConfig {
        url: Some(alerts_rx.url()),
        secret: Some(secret.to_owned()),
        window: 3_000,
        consecutive_failures: 3,
        failure_rate_min_attempts: 1_000,
        ..AlertsConfig::default()
    };
    let gw = TestGateway::start_with(config, dir, Default::default()).await;
    let rx = Receiver::start((0..6).map(|_| Reply::status(503)).collect()).await;
    let (key, _, dlv) = gw
        .one_delivery(
            &rx.url(),
            json!({"policy": {"base_ms": 100, "factor": 1.5, "jitter": "none"}}),
        )
        .await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    let got = alerts_rx.wait_for(2, WAIT).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got_all = alerts_rx.received();
    assert_eq!(
        got_all.len(),
        2,
        "exactly one alert and one resolution: {got:?}"
    );
    let bodies: Vec<Value> = got_all
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    // Each is an operator event: `{type, timestamp, data}`, the alert its data.
    assert_eq!(
        (
            bodies[0]["type"].as_str(),
            bodies[0]["data"]["rule"].as_str()
        ),
        (Some("alert.fired"), Some("endpoint_failing"))
    );
    assert_eq!(
        (
            bodies[1]["type"].as_str(),
            bodies[1]["data"]["state"].as_str()
        ),
        (Some("alert.resolved"), Some("resolved"))
    );
    assert_eq!(bodies[0]["data"]["tenant_id"], "acme");
    verify_with_official_library(secret, &got_all);
}
