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

use std::time::Duration;

use anyhow::{Context as _, bail};

use super::cluster_measure::{ENDPOINT_MAX_IN_FLIGHT, measure};
use super::{Common, median};

/// The node counts measured.
const NODE_COUNTS: [usize; 3] = [1, 2, 3];

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
pub(super) struct Variant {
    pub(super) name: &'static str,
    pub(super) latency: Duration,
    pub(super) node_cap: usize,
}

/// What one run of a variant is, in figures the gateways get.
pub(super) struct Shape {
    pub(super) endpoints: usize,
    pub(super) backlog: usize,
    pub(super) warm_up: Duration,
    pub(super) duration: Duration,
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
