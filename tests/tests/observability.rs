//! Observability after a scripted run: /metrics values (parsed by the official
//! Prometheus parser), /v1/stats rates, and alerts delivered as signed webhooks,
//! exactly one per incident plus one resolution.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use hookgate::config::AlertsConfig;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::verify::verify_with_official_library;
use hookgate_tests::{ADMIN, TestGateway, is_final, test_config};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// Every sample of a scrape, keyed `name{labels}`, via the official parser.
fn parse_metrics(text: &str) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/parse_openmetrics.py");
    let mut child = Command::new("python3")
        .arg(script)
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
        "the exposition does not parse: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
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
    let scrape = || async {
        gw.http
            .get(format!("{}/metrics", gw.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut text = scrape().await;
    while !text.contains("hookgate_attempts_per_delivery_count 6")
        && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
        text = scrape().await;
    }
    assert!(
        !text.contains("acme") && !text.contains("ep_"),
        "no tenant data or ids in labels"
    );
    let m = parse_metrics(&text);
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
    assert_eq!(
        (bodies[0]["rule"].as_str(), bodies[0]["state"].as_str()),
        (Some("endpoint_failing"), Some("fired"))
    );
    assert_eq!(
        (bodies[1]["rule"].as_str(), bodies[1]["state"].as_str()),
        (Some("endpoint_failing"), Some("resolved"))
    );
    assert_eq!(bodies[0]["tenant_id"], "acme");
    verify_with_official_library(secret, &got_all);
}
