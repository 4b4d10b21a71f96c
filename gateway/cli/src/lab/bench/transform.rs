//! Transforms measured two ways, each against a same-run reference:
//! - `bench deliver --transform FILE`: a backlog drained with the transform
//!   bound (renaming a field of each 1 KiB event) against the same backlog with
//!   none, runs alternating which goes first;
//! - `bench transform --plugin FILE --policy FILE`: one transform run of a
//!   1 KiB JSON event through the host, one at a time as `bench decision`
//!   measures a decision, against a decision of the policy plugin in the same
//!   host and run.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, bail};
use hookgate_server::{
    DestinationKind, PluginBinding, PluginHost, TransformFacts, TransformMethod, TransformRequest,
    Transformed,
};
use serde_json::json;

use super::decision::decide_n;
use super::harness::{BenchGateway, CountingReceiver};
use super::ingest::{backlog, drain_shaped_backlog};
use super::{Common, median, quantile, with_and_without};

/// The event every run carries: about 1 KiB of JSON, one field to rename.
fn payload() -> serde_json::Value {
    json!({"amt": 4200, "customer": "cus_9", "pad": "x".repeat(960)})
}

/// Deliveries/s of one drain, with `transform` bound when given.
async fn drain(n: usize, transform: Option<&[u8]>) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let rx = CountingReceiver::start().await?;
    let gw = BenchGateway::start(dir.path(), |_| {}).await?;
    let extra = match transform {
        Some(_) => json!({"transform": "shape", "metadata": {"rename.amt": "amount"}}),
        None => json!({}),
    };
    let body = json!({"event_type": "bench.event", "payload": payload()});
    let plugin = transform.map(|wasm| ("shape", wasm));
    let drained = drain_shaped_backlog(&gw, &rx, "bench", n, &extra, &body, plugin).await;
    gw.stop().await?;
    Ok(drained?.1)
}

/// `hookgate bench deliver --transform FILE`.
pub(super) async fn deliver(c: &Common, file: &Path) -> anyhow::Result<()> {
    let wasm = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let n = backlog(c);
    let wasm = &wasm;
    with_and_without(c, n, "backlog", "transform", |with| async move {
        drain(n, with.then_some(&wasm[..])).await
    })
    .await
}

/// Latencies in µs of `n` transform runs of the 1 KiB event, sorted.
async fn transform_n(host: &PluginHost, n: usize) -> anyhow::Result<Vec<f64>> {
    let body = payload().to_string().into_bytes();
    let metadata = BTreeMap::from([("rename.amt".to_owned(), "amount".to_owned())]);
    let url = url::Url::parse("https://receiver.example/hooks")?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let facts = TransformFacts {
            event_id: "evt_bench",
            event_type: "bench.event",
            timestamp_ms: 1_733_500_000_000,
            payload: &body,
            channels: &[],
            tags: &[],
            endpoint_id: "ep_bench",
            endpoint_uid: None,
            metadata: &metadata,
            destination: DestinationKind::Http,
            request: TransformRequest {
                method: TransformMethod::Post,
                path: "/hooks".into(),
                headers: Vec::new(),
                body: body.clone(),
                content_type: "application/json".into(),
            },
        };
        let t = Instant::now();
        let run = host.transform("bench", "shape", &facts, &url).await;
        out.push(t.elapsed().as_secs_f64() * 1e6);
        if !matches!(run.result, Ok(Transformed::Send(_))) {
            bail!("transform {i} did not send: {:?}", run.result);
        }
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

/// `hookgate bench transform --plugin FILE --policy FILE`.
pub(super) async fn latency(c: &Common, transform: &Path, policy: &Path) -> anyhow::Result<()> {
    let host = PluginHost::new(2 << 20)?;
    host.load_file("bench", "shape", transform)
        .with_context(|| format!("loading {}", transform.display()))?;
    host.load_file("bench", "policy", policy)
        .with_context(|| format!("loading {}", policy.display()))?;
    let binding = PluginBinding::parse("bench", "policy").context("the binding")?;
    let n = if c.smoke { 200 } else { 20_000 };
    println!(
        "| run | runs | transform p50 µs | transform p99 µs | decision p50 µs | decision p99 µs | p50 ratio |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut ratios = Vec::new();
    for run in 1..=c.runs {
        // Warm the instance slots and the caches before measuring.
        transform_n(&host, n / 10).await?;
        decide_n(&host, Some(&binding), n / 10).await?;
        let shaped = transform_n(&host, n).await?;
        let decided = decide_n(&host, Some(&binding), n).await?;
        let (t50, d50) = (quantile(&shaped, 0.5), quantile(&decided, 0.5));
        println!(
            "| {run} | {n} | {t50:.1} | {:.1} | {d50:.1} | {:.1} | {:.2} |",
            quantile(&shaped, 0.99),
            quantile(&decided, 0.99),
            t50 / d50
        );
        ratios.push(t50 / d50);
    }
    println!("| median | {n} | | | | | {:.2} |", median(ratios));
    Ok(())
}
