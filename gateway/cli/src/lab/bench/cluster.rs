//! `hookgate bench cluster --store-url URL`: deliveries per second with 1, 2 and
//! 3 gateways (`hookgate serve` child processes) on one PostgreSQL database, each
//! node count on a fresh scratch database, in one run.
//!
//! Two variants. **Latency-bound**: the receiver answers 200 after 100 ms and
//! each node has `cluster.node_max_in_flight` 64, while the endpoints together
//! allow far more (16 × `max_in_flight` 64), so a node's cap is the limit: one
//! node can make at most 640 deliveries/s, and n nodes n times that. The targets
//! are 2 nodes ≥ 1.7× and 3 nodes ≥ 2.4× one node. **CPU-bound**: the receiver
//! answers at once and the node cap (1024) does not bind, so the machine's cores
//! are the limit; on a small machine more nodes cannot help, and the output says
//! so.
//!
//! Each measurement: a backlog is ingested (spread over the nodes' APIs) while a
//! 1/s rate limit on every endpoint holds it, the limits are lifted, and after a
//! warm-up the deliveries arriving at the receiver are counted for the set
//! duration, or until 90 % of the backlog has arrived if that comes first.

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use hookgate_server::store::scratch_database::ScratchDatabase;
use serde_json::json;
use tokio::task::JoinSet;

use super::harness::{CountingReceiver, call};
use super::{Common, median};
use crate::lab::child_gateway::{GatewayProcess, GatewaySpec};
use crate::lab::gateway_api::GatewayApi;

/// The node counts measured.
const NODE_COUNTS: [usize; 3] = [1, 2, 3];
/// Each endpoint's `max_in_flight`.
const ENDPOINT_MAX_IN_FLIGHT: usize = 64;
/// Ingest calls at once while the backlog is loaded.
const LOADERS: usize = 32;
/// The longest wait for the backlog to be ingested.
const LOAD_LIMIT: Duration = Duration::from_secs(300);

/// Options of `hookgate bench cluster`.
#[derive(clap::Args, Debug, Clone)]
pub struct ClusterOptions {
    /// How long each measurement counts deliveries (after a warm-up).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub duration: Duration,
    /// Events in the backlog; each is delivered to every endpoint.
    #[arg(long, default_value_t = 2000)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub backlog: u64,
    /// Endpoints of the tenant (all subscribed to every event).
    #[arg(long, default_value_t = 16)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=64))]
    pub endpoints: u64,
}

/// One variant: what the receiver does and what caps a node.
struct Variant {
    name: &'static str,
    latency: Duration,
    node_cap: usize,
}

/// What one run of a variant is, in figures the gateways get.
struct Shape {
    endpoints: usize,
    backlog: usize,
    warm_up: Duration,
    duration: Duration,
}

/// `hookgate bench cluster`.
pub(super) async fn cluster(c: &Common, o: &ClusterOptions) -> anyhow::Result<()> {
    let Some(server) = &c.store_url else {
        bail!("bench cluster needs --store-url: its nodes share one PostgreSQL database");
    };
    let bin = std::env::current_exe().context("finding the hookgate executable")?;
    let shape = if c.smoke {
        // No warm-up: a tiny backlog could drain during it and leave nothing to count.
        Shape {
            endpoints: 4,
            backlog: 200,
            warm_up: Duration::ZERO,
            duration: Duration::from_secs(2),
        }
    } else {
        Shape {
            endpoints: o.endpoints as usize,
            backlog: o.backlog as usize,
            warm_up: Duration::from_secs(1),
            duration: o.duration,
        }
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "cluster scaling on PostgreSQL: {} endpoints (max_in_flight {ENDPOINT_MAX_IN_FLIGHT} each), a backlog of {} events x {} endpoints, counted for {} after a {} warm-up; {cpus} CPUs",
        shape.endpoints,
        shape.backlog,
        shape.endpoints,
        humantime::format_duration(shape.duration),
        humantime::format_duration(shape.warm_up),
    );
    let latency_bound = Variant {
        name: "latency-bound",
        latency: Duration::from_millis(100),
        node_cap: 64,
    };
    let cpu_bound = Variant {
        name: "CPU-bound",
        latency: Duration::ZERO,
        node_cap: 1024,
    };
    println!(
        "\nlatency-bound: the receiver answers 200 after 100 ms; cluster.node_max_in_flight {} (at most {} deliveries/s per node)",
        latency_bound.node_cap,
        latency_bound.node_cap * 10
    );
    let (two, three) = variant(c, &bin, server, &shape, &latency_bound).await?;
    let met = |r: f64, target: f64| if r >= target { "met" } else { "NOT met" };
    println!(
        "targets: 2 nodes >= 1.7x one node ({}), 3 nodes >= 2.4x ({})",
        met(two, 1.7),
        met(three, 2.4)
    );
    println!(
        "\nCPU-bound: the receiver answers at once; cluster.node_max_in_flight {} (not binding)",
        cpu_bound.node_cap
    );
    variant(c, &bin, server, &shape, &cpu_bound).await?;
    println!(
        "{cpus} CPUs run every node, the receiver and PostgreSQL here: CPU-bound delivery cannot scale past them, so these ratios show what more nodes cost on the same cores, not how a cluster scales."
    );
    Ok(())
}

/// Runs one variant `c.runs` times at each node count; prints a row per run and a
/// median row; returns the median ratios (2 nodes, 3 nodes) to one node.
async fn variant(
    c: &Common,
    bin: &std::path::Path,
    server: &str,
    shape: &Shape,
    variant: &Variant,
) -> anyhow::Result<(f64, f64)> {
    println!(
        "| run | 1 node deliveries/s | 2 nodes deliveries/s | 3 nodes deliveries/s | 2/1 | 3/1 | most at the receiver at once (1/2/3 nodes) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut figures: Vec<[f64; 3]> = Vec::new();
    for run in 1..=c.runs.max(1) {
        let (mut rates, mut most) = ([0.0; 3], [0usize; 3]);
        for (i, nodes) in NODE_COUNTS.iter().enumerate() {
            (rates[i], most[i]) = measure(bin, server, shape, variant, *nodes)
                .await
                .with_context(|| format!("{} with {}", variant.name, node_count(*nodes)))?;
        }
        println!(
            "| {run} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} | {}/{}/{} |",
            rates[0],
            rates[1],
            rates[2],
            rates[1] / rates[0],
            rates[2] / rates[0],
            most[0],
            most[1],
            most[2]
        );
        figures.push(rates);
    }
    let column = |i: usize| median(figures.iter().map(|r| r[i]).collect());
    let ratio = |i: usize| median(figures.iter().map(|r| r[i] / r[0]).collect());
    let (two, three) = (ratio(1), ratio(2));
    println!(
        "| median | {:.0} | {:.0} | {:.0} | {two:.2} | {three:.2} | |",
        column(0),
        column(1),
        column(2)
    );
    Ok((two, three))
}

/// "1 node", "2 nodes".
fn node_count(n: usize) -> String {
    if n == 1 {
        "1 node".to_owned()
    } else {
        format!("{n} nodes")
    }
}

/// One measurement on a fresh scratch database with `nodes` gateways: the
/// deliveries per second, and the most requests the receiver held at once.
async fn measure(
    bin: &std::path::Path,
    server: &str,
    shape: &Shape,
    variant: &Variant,
    nodes: usize,
) -> anyhow::Result<(f64, usize)> {
    let db = ScratchDatabase::create_on(server).await?;
    let dir = tempfile::tempdir()?;
    let rx = CountingReceiver::start_after(variant.latency).await?;
    let admin = hookgate_server::token::generate();
    let mut gateways: Vec<GatewayProcess> = Vec::new();
    for n in 0..nodes {
        let mut spec = GatewaySpec::new(bin.to_path_buf(), dir.path().join(format!("node-{n}")));
        spec.admin.clone_from(&admin);
        spec.set("HOOKGATE_STORE__BACKEND", "postgres")
            .set("HOOKGATE_STORE__URL", &db.url)
            .set(
                "HOOKGATE_CLUSTER__NODE_MAX_IN_FLIGHT",
                &variant.node_cap.to_string(),
            )
            .set("HOOKGATE_LOG", "warn,hookgate=info");
        gateways.push(spec.spawn().await?);
    }
    let apis = gateways
        .iter()
        .map(|g| GatewayApi::new(g.addr, &admin))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let result = load_and_count(&apis, &rx, shape).await;
    for g in gateways {
        // The measurement is over: no need to wait for a clean shutdown.
        g.kill();
    }
    result
}

/// Sets up the tenant and its endpoints (each held by a 1/s rate limit), loads
/// the backlog over every node's API, lifts the limits and counts.
async fn load_and_count(
    apis: &[GatewayApi],
    rx: &CountingReceiver,
    shape: &Shape,
) -> anyhow::Result<(f64, usize)> {
    let admin = &apis[0];
    let (s, tenant) = call(
        admin,
        "POST",
        "/v1/tenants",
        admin.token(),
        Some(&json!({"id": "bench"})),
    )
    .await?;
    if s != 201 {
        bail!("creating the tenant: {s} {tenant}");
    }
    let key = tenant["api_key"].as_str().unwrap_or_default().to_owned();
    let mut endpoints = Vec::new();
    for _ in 0..shape.endpoints {
        let body = json!({"url": rx.url(), "max_in_flight": ENDPOINT_MAX_IN_FLIGHT, "rate_limit_per_s": 1});
        let (s, e) = call(
            admin,
            "POST",
            "/v1/tenants/bench/endpoints",
            &key,
            Some(&body),
        )
        .await?;
        if s != 201 {
            bail!("creating an endpoint: {s} {e}");
        }
        endpoints.push(e["id"].as_str().unwrap_or_default().to_owned());
    }
    // Every node's read cache forgets the tenant's endpoints within a second.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    tokio::time::timeout(LOAD_LIMIT, load(apis, &key, shape.backlog))
        .await
        .context("loading the backlog took too long")??;
    let total = shape.backlog * shape.endpoints;
    let held = rx.count();
    for id in &endpoints {
        let path = format!("/v1/tenants/bench/endpoints/{id}");
        let (s, e) = call(
            admin,
            "PATCH",
            &path,
            &key,
            Some(&json!({"rate_limit_per_s": null})),
        )
        .await?;
        if s != 200 {
            bail!("lifting a rate limit: {s} {e}");
        }
    }
    tokio::time::sleep(shape.warm_up).await;
    let (from, counted_from) = (rx.count(), Instant::now());
    // Before the backlog runs low, the node caps (or the cores) still bind.
    let enough = held + total * 9 / 10;
    while counted_from.elapsed() < shape.duration && rx.count() < enough {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let counted = rx.count().saturating_sub(from);
    Ok((
        counted as f64 / counted_from.elapsed().as_secs_f64(),
        rx.most_in_flight(),
    ))
}

/// Ingests `backlog` events, round robin over the nodes, [`LOADERS`] at a time;
/// each must be acknowledged.
async fn load(apis: &[GatewayApi], key: &str, backlog: usize) -> anyhow::Result<()> {
    let event = json!({"event_type": "bench.event", "payload": {"pad": "x".repeat(960)}});
    let mut sending = JoinSet::new();
    for i in 0..backlog {
        if sending.len() >= LOADERS
            && let Some(sent) = sending.join_next().await
        {
            sent??;
        }
        let (api, key, event) = (apis[i % apis.len()].clone(), key.to_owned(), event.clone());
        sending.spawn(async move {
            let (s, answer) =
                call(&api, "POST", "/v1/tenants/bench/events", &key, Some(&event)).await?;
            if s != 202 {
                bail!("ingest answered {s}: {answer}");
            }
            anyhow::Ok(())
        });
    }
    while let Some(sent) = sending.join_next().await {
        sent??;
    }
    Ok(())
}
