//! The `ingest` and `deliver` scenarios, each with its same-run reference.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::bail;
use bytes::Bytes;
use hookgate_server::lab::raw_sled_ingest_rate as raw_ingest_rate;
use http_body_util::Full;
use serde_json::json;

use super::harness::{
    BenchGateway, BenchPlugin, CountingReceiver, HttpClient, call, client, tenant_and_endpoint,
    tenant_with_plugin_and_endpoint, with_fields,
};
use super::{Common, median, quantile};

/// Concurrent senders (and, for `deliver`, the endpoint's `max_in_flight`).
pub(super) const CLIENTS: usize = 64;

pub(super) fn event_body() -> String {
    // About 1 KiB on the wire.
    json!({"event_type": "bench.event", "payload": {"pad": "x".repeat(960)}}).to_string()
}

/// Concurrent clients post events for `secs`; returns (events/s, ack latencies in ms, sorted).
pub(super) async fn post_for(
    http: &HttpClient,
    url: &str,
    key: &str,
    secs: f64,
) -> anyhow::Result<(f64, Vec<f64>)> {
    post_body_for(http, url, key, Bytes::from(event_body()), secs).await
}

/// [`post_for`] with `body` as each event.
pub(super) async fn post_body_for(
    http: &HttpClient,
    url: &str,
    key: &str,
    body: Bytes,
    secs: f64,
) -> anyhow::Result<(f64, Vec<f64>)> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    let started = Instant::now();
    for _ in 0..CLIENTS {
        let (http, url, key, body, stop) = (
            http.clone(),
            url.to_owned(),
            key.to_owned(),
            body.clone(),
            Arc::clone(&stop),
        );
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let req = http::Request::post(&url)
                    .header("authorization", format!("Bearer {key}"))
                    .header("content-type", "application/json")
                    .body(Full::new(body.clone()))?;
                let t = Instant::now();
                let resp = http.request(req).await?;
                if resp.status().as_u16() != 202 {
                    bail!("ingest answered {}", resp.status());
                }
                lat.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            Ok(lat)
        }));
    }
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    Ok((all.len() as f64 / elapsed, all))
}

/// `hookgate bench ingest`.
pub(super) async fn ingest(c: &Common) -> anyhow::Result<()> {
    if let Some(server) = &c.store_url {
        return super::on_postgres::ingest(c, server).await;
    }
    let secs = if c.smoke { 1.0 } else { 10.0 };
    println!("| run | events/s | p50 ack ms | p99 ack ms | raw sled events/s | ratio |");
    println!("|---|---|---|---|---|---|");
    let (mut rates, mut ratios, mut p50s, mut p99s) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 1..=c.runs {
        let dir = tempfile::tempdir()?;
        // The endpoint refuses connections and its breaker opens at once, so delivery
        // work stays out of the measurement while every event still gets its delivery.
        let gw = BenchGateway::start(dir.path(), |cfg| {
            cfg.breaker.failure_threshold = 1;
            cfg.breaker.cooldowns = vec![3_600_000];
        })
        .await?;
        let http = client(CLIENTS);
        let (key, _) = tenant_and_endpoint(&gw, json!({"url": "http://127.0.0.1:9/"})).await?;
        let url = format!("{}/v1/tenants/bench/events", gw.base);
        let (rate, lat) = post_for(&http, &url, &key, secs).await?;
        gw.stop().await?;
        let raw_dir = tempfile::tempdir()?;
        let reference = raw_ingest_rate(raw_dir.path(), secs, event_body().len(), CLIENTS).await?;
        let (p50, p99) = (quantile(&lat, 0.5), quantile(&lat, 0.99));
        println!(
            "| {run} | {rate:.0} | {p50:.1} | {p99:.1} | {reference:.0} | {:.2} |",
            rate / reference
        );
        rates.push(rate);
        ratios.push(rate / reference);
        p50s.push(p50);
        p99s.push(p99);
    }
    println!(
        "| median | {:.0} | {:.1} | {:.1} | | {:.2} |",
        median(rates),
        median(p50s),
        median(p99s),
        median(ratios)
    );
    Ok(())
}

/// `hookgate bench deliver`.
pub(super) async fn deliver(c: &Common) -> anyhow::Result<()> {
    if let Some(server) = &c.store_url {
        return super::on_postgres::deliver(c, server).await;
    }
    let n = backlog(c);
    println!("| run | backlog | deliveries/s | bare hyper req/s | ratio |");
    println!("|---|---|---|---|---|");
    let (mut rates, mut ratios) = (Vec::new(), Vec::new());
    for run in 1..=c.runs {
        let dir = tempfile::tempdir()?;
        let rx = CountingReceiver::start().await?;
        let gw = BenchGateway::start(dir.path(), |_| {}).await?;
        let (n, rate) = drain_backlog(&gw, &rx, "bench", n).await?;
        gw.stop().await?;
        let reference = bare_hyper(&rx, n).await?;
        println!(
            "| {run} | {n} | {rate:.0} | {reference:.0} | {:.2} |",
            rate / reference
        );
        rates.push(rate);
        ratios.push(rate / reference);
    }
    println!(
        "| median | {n} | {:.0} | | {:.2} |",
        median(rates),
        median(ratios)
    );
    Ok(())
}

/// The backlog `deliver` drains.
pub(super) fn backlog(c: &Common) -> usize {
    if c.smoke { 500 } else { 20_000 }
}

/// Ingests `n` events for one endpoint at `rx` while a rate limit of 1/s holds
/// them, then lifts it; returns the backlog (rounded to the senders) and the
/// deliveries per second it drained at.
pub(super) async fn drain_backlog(
    gw: &BenchGateway,
    rx: &CountingReceiver,
    tenant: &str,
    n: usize,
) -> anyhow::Result<(usize, f64)> {
    let body = json!({"event_type": "bench.event", "payload": {"pad": "x".repeat(960)}});
    drain_shaped_backlog(gw, rx, tenant, n, &json!({}), &body, None).await
}

/// [`drain_backlog`] with `endpoint_extra`'s fields on the endpoint, `body` as
/// each event, and `plugin` uploaded first for the endpoint to bind.
pub(super) async fn drain_shaped_backlog(
    gw: &BenchGateway,
    rx: &CountingReceiver,
    tenant: &str,
    n: usize,
    endpoint_extra: &serde_json::Value,
    body: &serde_json::Value,
    plugin: Option<BenchPlugin<'_>>,
) -> anyhow::Result<(usize, f64)> {
    let ep = with_fields(
        json!({"url": rx.url(), "max_in_flight": CLIENTS, "rate_limit_per_s": 1}),
        endpoint_extra,
    );
    let (key, ep_id) = tenant_with_plugin_and_endpoint(gw, tenant, plugin, ep).await?;
    let n = ingest_backlog(gw, tenant, &key, n, body).await?;
    let held = rx.count();
    let started = Instant::now();
    let patch = json!({"rate_limit_per_s": null});
    let path = format!("{}/v1/tenants/{tenant}/endpoints/{ep_id}", gw.base);
    call(&gw.api, "PATCH", &path, &key, Some(&patch)).await?;
    let deadline = started + Duration::from_secs(300);
    while rx.count() < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if rx.count() < n {
        bail!("only {} of {n} deliveries arrived", rx.count());
    }
    Ok((
        n,
        (rx.count() - held) as f64 / started.elapsed().as_secs_f64(),
    ))
}

/// `CLIENTS` senders ingest `n` events of `body` for `tenant` (rounded down
/// to the senders); returns how many.
pub(super) async fn ingest_backlog(
    gw: &BenchGateway,
    tenant: &str,
    key: &str,
    n: usize,
    body: &serde_json::Value,
) -> anyhow::Result<usize> {
    let url = format!("{}/v1/tenants/{tenant}/events", gw.base);
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (api, url, key, body) = (gw.api.clone(), url.clone(), key.to_owned(), body.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..n / CLIENTS {
                let (s, b) = call(&api, "POST", &url, &key, Some(&body)).await?;
                if s != 202 {
                    bail!("ingest answered {s}: {b}");
                }
            }
            anyhow::Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(n / CLIENTS * CLIENTS)
}

/// The reference: a bare hyper client posting the same bodies at concurrency 64.
async fn bare_hyper(rx: &CountingReceiver, n: usize) -> anyhow::Result<f64> {
    let http = client(CLIENTS);
    let body = Bytes::from(event_body());
    let per_task = n / CLIENTS;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (http, url, body) = (http.clone(), rx.url(), body.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..per_task {
                let req = http::Request::post(&url)
                    .header("content-type", "application/json")
                    .body(Full::new(body.clone()))?;
                let resp = http.request(req).await?;
                let _ = http_body_util::BodyExt::collect(resp.into_body()).await;
            }
            anyhow::Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok((per_task * CLIENTS) as f64 / started.elapsed().as_secs_f64())
}
