//! OpenTelemetry traces end to end: spans decoded by a collector on the
//! official `opentelemetry-proto` messages (`scripts/otlp_receiver.py`), and
//! the W3C trace context carried from the sender's ingest to the receiver,
//! kept with the event on both backends, across a restart.

use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::otlp_collector::OtlpCollector;
use hookgate_tests::receiver::Receiver;
use hookgate_tests::{Backend, TestGateway, on_each_backend};
use serde_json::{Value, json};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const SENDER_SPAN: &str = "00f067aa0ba902b7";
const WAIT: Duration = Duration::from_secs(20);

/// Trace id, parent span id and flags of a `traceparent`.
fn parts(traceparent: &str) -> (String, String, String) {
    let p: Vec<_> = traceparent.split('-').collect();
    assert_eq!((p.len(), p[0]), (4, "00"), "{traceparent}");
    assert_eq!(
        (p[1].len(), p[2].len(), p[3].len()),
        (32, 16, 2),
        "{traceparent}"
    );
    (p[1].to_owned(), p[2].to_owned(), p[3].to_owned())
}

fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

/// Sends one event on `gw` as tenant `t`, with `headers`; returns its id.
async fn ingest(gw: &TestGateway, t: &str, key: &str, headers: &[(&str, &str)]) -> String {
    let body = json!({"event_type": "order.paid", "payload": {"n": 1}});
    let path = format!("/v1/tenants/{t}/events");
    let (status, answer) = gw
        .call_raw("POST", &path, key, body.to_string().into_bytes(), headers)
        .await;
    assert_eq!(status, 202, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    answer["id"].as_str().unwrap().to_owned()
}

async fn traced_gateway(backend: Backend, collector: &OtlpCollector, service: &str) -> TestGateway {
    let mut bed = backend.bed().await;
    bed.config.telemetry.otlp.endpoint = Some(collector.endpoint.clone());
    bed.config.telemetry.otlp.service_name = service.to_owned();
    bed.config.telemetry.otlp.export_interval = 50;
    TestGateway::start_bed(bed, RunOptions::default()).await
}

/// The sender's trace continues through the gateway to the receiver: the
/// receiver's `traceparent` names the sender's trace and the attempt's span;
/// the collector has the ingest (child of the sender's span), its commit, and
/// the attempt (child of the ingest) with their attributes.
async fn sender_trace_reaches_the_receiver(backend: Backend) {
    let collector = OtlpCollector::start().await;
    let gw = traced_gateway(backend, &collector, "hookgate-e2e").await;
    let receiver = Receiver::start(vec![]).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint("acme", &key, json!({"url": receiver.url()}))
        .await;
    let parent = format!("00-{TRACE_ID}-{SENDER_SPAN}-01");
    let headers = [
        ("traceparent", parent.as_str()),
        ("tracestate", "congo=t61rcWkgMzE"),
    ];
    let event_id = ingest(&gw, "acme", &key, &headers).await;

    let got = receiver.wait_for(1, WAIT).await;
    let sent = got[0]
        .header("traceparent")
        .expect("a traceparent on the attempt");
    let (trace, attempt_span, flags) = parts(sent);
    assert_eq!((trace.as_str(), flags.as_str()), (TRACE_ID, "01"));
    assert_ne!(attempt_span, SENDER_SPAN);
    assert_eq!(got[0].header("tracestate"), Some("congo=t61rcWkgMzE"));

    let spans = collector
        .wait_for(WAIT, |s| {
            !named(s, "attempt").is_empty() && named(s, "store.commit").len() >= 2
        })
        .await;
    let ingest_span = named(&spans, "ingest");
    assert_eq!(ingest_span.len(), 1, "{spans:#?}");
    let ingest_span = ingest_span[0];
    assert_eq!(ingest_span["trace_id"], TRACE_ID);
    assert_eq!(ingest_span["parent_span_id"], SENDER_SPAN);
    assert_eq!(ingest_span["kind"], "SPAN_KIND_SERVER");
    assert_eq!(ingest_span["service"], "hookgate-e2e");
    let a = &ingest_span["attributes"];
    assert_eq!(a["hookgate.event_id"], event_id.as_str());
    assert_eq!(a["hookgate.tenant"], "acme");
    assert_eq!(a["hookgate.event_type"], "order.paid");

    let attempt = named(&spans, "attempt")[0];
    assert_eq!(attempt["trace_id"], TRACE_ID);
    assert_eq!(attempt["parent_span_id"], ingest_span["span_id"]);
    assert_eq!(
        attempt["span_id"],
        attempt_span.as_str(),
        "the receiver's parent is the attempt"
    );
    assert_eq!(attempt["kind"], "SPAN_KIND_CLIENT");
    let a = &attempt["attributes"];
    assert_eq!(a["hookgate.endpoint_id"], ep["id"]);
    assert_eq!(a["hookgate.event_id"], event_id.as_str());
    assert_eq!(a["hookgate.tenant"], "acme");
    assert_eq!(a["http.response.status_code"], 200);
    assert_eq!(a["hookgate.verdict"], "delivered");
    assert_eq!(a["hookgate.decided_by"], "builtin");
    assert_eq!(a["hookgate.attempt"], 1);
    assert!(a["hookgate.duration_ms"].is_i64(), "{a}");

    let commits = named(&spans, "store.commit");
    let under = |parent: &Value, write: &str| {
        commits.iter().any(|c| {
            c["parent_span_id"] == parent["span_id"] && c["attributes"]["hookgate.write"] == write
        })
    };
    assert!(under(ingest_span, "ingest"), "{commits:#?}");
    assert!(under(attempt, "attempt"), "{commits:#?}");
    gw.stop().await;
}

/// With no trace on the ingest request the gateway starts one, and the
/// receiver still gets a `traceparent` in it.
async fn a_fresh_trace_without_one(backend: Backend) {
    let collector = OtlpCollector::start().await;
    let gw = traced_gateway(backend, &collector, "hookgate-fresh").await;
    let receiver = Receiver::start(vec![]).await;
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": receiver.url()}))
        .await;
    ingest(&gw, "acme", &key, &[]).await;
    let got = receiver.wait_for(1, WAIT).await;
    let (trace, span, _) = parts(got[0].header("traceparent").expect("a traceparent"));
    assert_ne!(trace, "0".repeat(32));
    assert_eq!(got[0].header("tracestate"), None);
    let spans = collector
        .wait_for(WAIT, |s| !named(s, "attempt").is_empty())
        .await;
    let ingest_span = named(&spans, "ingest")[0];
    assert_eq!(ingest_span["trace_id"], trace.as_str());
    assert_eq!(ingest_span["parent_span_id"], "", "a root span");
    assert_eq!(named(&spans, "attempt")[0]["span_id"], span.as_str());
    gw.stop().await;
}

/// The trace context is kept with the event: a gateway stopped between the
/// ingest and the delivery sends it after its restart. Traces are off here,
/// so what arrives is exactly what the sender gave.
async fn the_context_survives_a_restart(backend: Backend) {
    let bed = backend.bed().await;
    let gw = TestGateway::start_bed(bed.clone(), RunOptions::default()).await;
    let receiver = Receiver::start(vec![]).await;
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": receiver.url()}))
        .await;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let at = hookgate_server::rfc3339_ms(now_ms + 3_000);
    let body = json!({"event_type": "order.paid", "payload": {"n": 1}, "deliver_at": at});
    let parent = format!("00-{TRACE_ID}-{SENDER_SPAN}-01");
    let (status, answer) = gw
        .call_raw(
            "POST",
            "/v1/tenants/acme/events",
            &key,
            body.to_string().into_bytes(),
            &[("traceparent", &parent), ("tracestate", "a=1")],
        )
        .await;
    assert_eq!(status, 202, "{answer}");
    gw.stop().await;
    assert!(
        receiver.received().is_empty(),
        "delivered before the restart"
    );

    let gw = TestGateway::start_bed(bed, RunOptions::default()).await;
    let got = receiver.wait_for(1, WAIT).await;
    assert_eq!(got[0].header("traceparent"), Some(parent.as_str()));
    assert_eq!(got[0].header("tracestate"), Some("a=1"));
    gw.stop().await;
}

on_each_backend!(
    sender_trace_reaches_the_receiver,
    a_fresh_trace_without_one,
    the_context_survives_a_restart,
);

/// Two gateways in one process each export their own spans only: each has its
/// own tracer provider, none is the process's global one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateways_in_one_process_keep_their_spans_apart() {
    let (one, two) = (OtlpCollector::start().await, OtlpCollector::start().await);
    let gw1 = traced_gateway(Backend::Sled, &one, "hookgate-one").await;
    let gw2 = traced_gateway(Backend::Sled, &two, "hookgate-two").await;
    let receiver = Receiver::start(vec![]).await;
    let mut ids = Vec::new();
    for (gw, tenant) in [(&gw1, "one"), (&gw2, "two")] {
        let key = gw.tenant(tenant).await;
        gw.endpoint(tenant, &key, json!({"url": receiver.url()}))
            .await;
        ids.push(ingest(gw, tenant, &key, &[]).await);
    }
    receiver.wait_for(2, WAIT).await;
    for (collector, (service, (tenant, id))) in [&one, &two].into_iter().zip(
        ["hookgate-one", "hookgate-two"]
            .into_iter()
            .zip(["one", "two"].into_iter().zip(&ids)),
    ) {
        let spans = collector
            .wait_for(WAIT, |s| !named(s, "attempt").is_empty())
            .await;
        for span in &spans {
            assert_eq!(span["service"], service, "{span}");
            let a = &span["attributes"];
            if let Some(t) = a.get("hookgate.tenant") {
                assert_eq!(t, tenant, "{span}");
            }
            if let Some(e) = a.get("hookgate.event_id") {
                assert_eq!(e, id.as_str(), "{span}");
            }
        }
        assert_eq!(named(&spans, "ingest").len(), 1, "{spans:#?}");
    }
    gw1.stop().await;
    gw2.stop().await;
}

/// A tiny run of `bench ingest --traced` and `bench deliver --traced`: both
/// legs run and export (speed is never asserted here; `BENCHMARKS.md` has it).
#[test]
fn the_traced_bench_scenarios_run() {
    use hookgate::lab::bench::{BenchCommand, Common, run};
    let smoke = || Common {
        runs: 1,
        smoke: true,
        store_url: None,
        traced: true,
        destination: None,
        transform: None,
        validated: false,
    };
    assert_eq!(
        run(BenchCommand::Ingest(smoke())),
        0,
        "bench ingest --traced --smoke"
    );
    assert_eq!(
        run(BenchCommand::Deliver(smoke())),
        0,
        "bench deliver --traced --smoke"
    );
}
