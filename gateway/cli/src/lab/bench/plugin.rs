//! The `plugin` scenario: delivery throughput with a plugin bound against the same
//! run without it. The receiver answers 503, then 200, so the plugin is consulted.

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::json;

use super::harness::{BenchGateway, CountingReceiver, call, tenant_and_endpoint, upload_plugin};
use super::{Common, with_and_without};

/// Concurrent clients that ingest the backlog.
const INGEST_CLIENTS: usize = 64;

/// Deliveries/s for `n` events that each take two attempts, with `plugin` bound if given.
async fn run_once(n: usize, plugin: Option<&[u8]>) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let rx = CountingReceiver::start_fail_once().await?;
    let gw =
        BenchGateway::start(dir.path(), |cfg| cfg.breaker.failure_threshold = u32::MAX).await?;
    // Held by a 1/s rate limit while the backlog is ingested. Retries follow after
    // 50 ms, so the run measures attempts, not the wait between them.
    let policy = json!({"base_ms": 50, "jitter": "none"});
    let ep = json!({"url": rx.url(), "max_in_flight": 64, "rate_limit_per_s": 1, "policy": policy});
    let (key, ep_id) = tenant_and_endpoint(&gw, ep).await?;
    let ep_url = format!("{}/v1/tenants/bench/endpoints/{ep_id}", gw.base);
    if let Some(wasm) = plugin {
        upload_plugin(&gw, "bench", &key, "policy", wasm).await?;
        let (s, b) = call(
            &gw.api,
            "PATCH",
            &ep_url,
            &key,
            Some(&json!({"plugin": "policy"})),
        )
        .await?;
        if s != 200 {
            bail!("binding the plugin: {s} {b}");
        }
    }
    let url = format!("{}/v1/tenants/bench/events", gw.base);
    let body = json!({"event_type": "bench.event", "payload": {"pad": "x".repeat(960)}});
    let mut senders = Vec::new();
    for _ in 0..INGEST_CLIENTS {
        let (api, url, key, body) = (gw.api.clone(), url.clone(), key.clone(), body.clone());
        senders.push(tokio::spawn(async move {
            for _ in 0..n / INGEST_CLIENTS {
                let (s, b) = call(&api, "POST", &url, &key, Some(&body)).await?;
                if s != 202 {
                    bail!("ingest answered {s}: {b}");
                }
            }
            anyhow::Ok(())
        }));
    }
    for s in senders {
        s.await??;
    }
    let n = n / INGEST_CLIENTS * INGEST_CLIENTS;
    let held = rx.count();
    let started = Instant::now();
    call(
        &gw.api,
        "PATCH",
        &ep_url,
        &key,
        Some(&json!({"rate_limit_per_s": null})),
    )
    .await?;
    let want = 2 * n;
    while rx.count() < want && started.elapsed() < Duration::from_secs(300) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if rx.count() < want {
        bail!("only {} of {want} requests arrived", rx.count());
    }
    let rate = (rx.count() - held) as f64 / 2.0 / started.elapsed().as_secs_f64();
    gw.stop().await?;
    Ok(rate)
}

/// `hookgate bench plugin --plugin FILE`.
pub(super) async fn plugin(c: &Common, file: &std::path::Path) -> anyhow::Result<()> {
    let wasm = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let n = if c.smoke { 256 } else { 20_000 };
    let wasm = &wasm;
    with_and_without(c, n, "events", "plugin", |with| async move {
        run_once(n, with.then_some(&wasm[..])).await
    })
    .await
}
