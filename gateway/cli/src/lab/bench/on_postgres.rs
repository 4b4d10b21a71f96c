//! `hookgate bench ingest|deliver --store-url`: the same scenarios with the
//! gateway on PostgreSQL, each run on a scratch database of its own, against
//! the reference: the backend's own statements run through `tokio-postgres`
//! alone on another scratch database, with the backend's batch sizes,
//! connections and `synchronous_commit`. The ratio is what hookgate adds on top
//! of the database; the absolute figures are where it stands against the peers.

use hookgate_server::lab::ScratchDatabase;
use hookgate_server::lab::{
    raw_postgres_deliver_rate as raw_deliver_rate, raw_postgres_ingest_rate as raw_ingest_rate,
};
use hookgate_server::{Config, StoreBackend};
use serde_json::json;

use super::harness::{
    ADMIN, BenchGateway, CountingReceiver, HttpClient, client, tenant_and_endpoint,
};
use super::ingest::{CLIENTS, backlog, drain_backlog, event_body, post_for};
use super::{Common, median, quantile};

/// The gateway's connections (`store.pool_size`); a quarter of them write outcomes.
const POOL_SIZE: usize = 16;

/// A scratch database on `server`.
pub(super) async fn scratch(server: &str) -> anyhow::Result<ScratchDatabase> {
    Ok(ScratchDatabase::create_on(server).await?)
}

/// Points `cfg` at `db` with the default pool.
pub(super) fn on(db: &ScratchDatabase, cfg: &mut Config) {
    cfg.store.backend = StoreBackend::Postgres;
    cfg.store.url = Some(db.url.clone());
    cfg.store.pool_size = POOL_SIZE;
}

/// [`on`] as a child gateway's `HOOKGATE_*` settings.
pub(super) fn settings_on(db: &ScratchDatabase) -> Vec<(&'static str, String)> {
    vec![
        ("HOOKGATE_STORE__BACKEND", "postgres".to_owned()),
        ("HOOKGATE_STORE__URL", db.url.clone()),
        ("HOOKGATE_STORE__POOL_SIZE", POOL_SIZE.to_string()),
    ]
}

/// The gateway's counter `name` (its `_total` sample) from `/metrics`.
async fn counter(http: &HttpClient, gw: &BenchGateway, name: &str) -> anyhow::Result<f64> {
    let req = http::Request::get(format!("{}/metrics", gw.base))
        .header("authorization", format!("Bearer {ADMIN}"))
        .header("accept", "text/plain")
        .body(http_body_util::Full::new(bytes::Bytes::new()))?;
    let resp = http.request(req).await?;
    let body = http_body_util::BodyExt::collect(resp.into_body())
        .await?
        .to_bytes();
    let text = String::from_utf8_lossy(&body);
    let sample = format!("hookgate_{name}_total ");
    text.lines()
        .find_map(|l| l.strip_prefix(&sample))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no {sample} in /metrics"))
}

/// `total / count` of two of the gateway's counters, rounded, at least 1: the
/// average size of its batches, for the reference to run at.
pub(super) async fn average(gw: &BenchGateway, total: &str, count: &str) -> anyhow::Result<usize> {
    let http = client(1);
    let (total, count) = (
        counter(&http, gw, total).await?,
        counter(&http, gw, count).await?,
    );
    Ok(((total / count.max(1.0)).round() as usize).max(1))
}

/// `hookgate bench ingest --store-url`.
pub(super) async fn ingest(c: &Common, server: &str) -> anyhow::Result<()> {
    let secs = if c.smoke { 1.0 } else { 10.0 };
    // The backend's batchers: a quarter of the pool's ingest connections.
    let writers = (POOL_SIZE / 4).clamp(1, 4);
    println!(
        "| run | events/s | p50 ack ms | p99 ack ms | events per commit | reference events/s | ratio |"
    );
    println!("|---|---|---|---|---|---|---|");
    let (mut rates, mut ratios, mut p50s, mut p99s) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 1..=c.runs {
        let (dir, db) = (tempfile::tempdir()?, scratch(server).await?);
        // As on sled: the breaker keeps delivery work out of the measurement.
        let gw = BenchGateway::start(dir.path(), |cfg| {
            on(&db, cfg);
            cfg.breaker.failure_threshold = 1;
            cfg.breaker.cooldowns = vec![3_600_000];
        })
        .await?;
        let http = client(CLIENTS);
        let (key, _) = tenant_and_endpoint(&gw, json!({"url": "http://127.0.0.1:9/"})).await?;
        let url = format!("{}/v1/tenants/bench/events", gw.base);
        let (rate, lat) = post_for(&http, &url, &key, secs).await?;
        let batch = average(&gw, "store_ingest_batched_events", "store_ingest_batches").await?;
        gw.stop().await?;
        let reference_db = scratch(server).await?;
        let payload_len = event_body().len();
        let reference =
            raw_ingest_rate(&reference_db.url, secs, payload_len, writers, batch).await?;
        let (p50, p99) = (quantile(&lat, 0.5), quantile(&lat, 0.99));
        println!(
            "| {run} | {rate:.0} | {p50:.1} | {p99:.1} | {batch} | {reference:.0} | {:.2} |",
            rate / reference
        );
        rates.push(rate);
        ratios.push(rate / reference);
        p50s.push(p50);
        p99s.push(p99);
    }
    println!(
        "| median | {:.0} | {:.1} | {:.1} | | | {:.2} |",
        median(rates),
        median(p50s),
        median(p99s),
        median(ratios)
    );
    Ok(())
}

/// How the gateway batched its delivery work in a run, for the reference to
/// run at: rows per claim, and outcomes per outcome statement (1 for a build
/// that does not count them).
#[derive(Debug, Clone, Copy)]
pub(super) struct DeliveryBatches {
    pub(super) per_claim: usize,
    pub(super) per_statement: usize,
}

impl DeliveryBatches {
    /// Read from the gateway's counters.
    pub(super) async fn of(gw: &BenchGateway) -> anyhow::Result<Self> {
        Ok(Self {
            per_claim: average(gw, "store_claimed_rows", "store_claims").await?,
            per_statement: average(gw, "store_batched_outcomes", "store_outcome_batches")
                .await
                .unwrap_or(1),
        })
    }
}

/// The reference drain: deliveries per second of a backlog of `n` on the
/// database at `url`, through `tokio-postgres` alone, with the backend's claim
/// and outcome statements on as many connections as the gateway's pool, in the
/// gateway's batch sizes.
pub(super) async fn reference_drain(
    url: &str,
    n: usize,
    batches: DeliveryBatches,
) -> anyhow::Result<f64> {
    let writers = (POOL_SIZE / 4).max(2);
    let claimers = POOL_SIZE - writers;
    let DeliveryBatches {
        per_claim,
        per_statement,
    } = batches;
    Ok(raw_deliver_rate(url, n, claimers, writers, per_claim, per_statement).await?)
}

/// `hookgate bench deliver --store-url`.
pub(super) async fn deliver(c: &Common, server: &str) -> anyhow::Result<()> {
    let n = backlog(c);
    println!("| run | backlog | deliveries/s | rows per claim | reference deliveries/s | ratio |");
    println!("|---|---|---|---|---|---|");
    let (mut rates, mut ratios) = (Vec::new(), Vec::new());
    for run in 1..=c.runs {
        let (dir, db) = (tempfile::tempdir()?, scratch(server).await?);
        let rx = CountingReceiver::start().await?;
        let gw = BenchGateway::start(dir.path(), |cfg| on(&db, cfg)).await?;
        let (n, rate) = drain_backlog(&gw, &rx, "bench", n).await?;
        let batches = DeliveryBatches::of(&gw).await?;
        gw.stop().await?;
        let reference_db = scratch(server).await?;
        let reference = reference_drain(&reference_db.url, n, batches).await?;
        println!(
            "| {run} | {n} | {rate:.0} | {} ({} per outcome statement) | {reference:.0} | {:.2} |",
            batches.per_claim,
            batches.per_statement,
            rate / reference
        );
        rates.push(rate);
        ratios.push(rate / reference);
    }
    println!(
        "| median | {n} | {:.0} | | | {:.2} |",
        median(rates),
        median(ratios)
    );
    Ok(())
}
