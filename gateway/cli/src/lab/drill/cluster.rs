//! The cluster drill: three gateways on one PostgreSQL database lose nothing when
//! one of them is SIGKILLed, and what the killed one had claimed comes back.
//!
//! Three `hookgate serve` processes (node ids `drill-node-1..3`, each with its own
//! port and data dir, one admin token) share a scratch database with a 2 s
//! `lease_margin` and a 2 s endpoint timeout. Senders post events to every node's
//! API against a flaky receiver. Repeatedly a random node is picked, the drill
//! waits (bounded) until it holds leases with requests in progress at the receiver,
//! SIGKILLs it and starts it again under the same id. Then ingest stops, the
//! receiver heals, and the drill waits (bounded) until every acknowledged event is
//! delivered and shown succeeded by every node's API.
//!
//! The receiver names the killed node's requests by their client ports (read from
//! `/proc` just before the kill). The gateway never heard their answers, so each
//! must arrive again once the lease expires: the drill checks that it does within
//! the lease (timeout + margin) plus a slack, and reports the delay from the kill.
//!
//! Checks: nothing acknowledged lost, missing or not succeeded on any node;
//! duplicates at most the attempts in flight on the killed nodes plus the ingest
//! calls cut by the kills; every request cut by a kill attempted again; every node
//! in `GET /v1/cluster` at the end; each node exits 0 on SIGTERM.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::cluster_kill;
pub use super::cluster_kill::AttemptLogs;
pub use super::cluster_report::{ClusterReport, Kill};
use super::crash_store::{CrashStore, LEASE_MARGIN};
use super::ingest_load::{Sender, flaky, gap};
use super::nodes::DrillNodes;
use super::receiver::Receiver;
use super::settle::wait_delivered;
pub use super::settle::{Extras, Settled};
use super::{DrillArgs, DrillError, DrillOptions, WorkDir, drill_gateway, fresh_seed};

/// Gateways in the cluster.
const NODES: usize = 3;
/// Ingest senders per node.
const SENDERS_PER_NODE: u32 = 3;
/// The endpoint's timeout: with the margin, how long a claim lasts.
const TIMEOUT: Duration = Duration::from_secs(2);
/// The receiver's latency while flaky, in ms: long enough that a kill finds
/// requests in progress.
const LATENCY_MS: (u64, u64) = (100, 400);
/// How long to wait for the picked node to hold leases before killing it anyway.
pub(super) const LEASE_WAIT: Duration = Duration::from_secs(10);
/// How much later than its lease's expiry a cut request may be attempted again.
pub(super) const REATTEMPT_SLACK: Duration = Duration::from_secs(10);

/// Options of `hookgate drill cluster`.
#[derive(Args, Debug)]
pub struct ClusterArgs {
    /// The PostgreSQL server: a scratch database is made on it (a URL of any
    /// database there) and dropped afterwards.
    #[arg(long, value_name = "URL")]
    store_url: String,
    /// How many times a node is SIGKILLed (and restarted).
    #[arg(long, default_value_t = 5)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..=50))]
    kills: u32,
    /// Events per second sent during the drill, over all nodes.
    #[arg(long, default_value_t = 90)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..=2000))]
    rate: u32,
    /// Shortest time between a restart and picking the next node, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    min_gap_ms: u64,
    /// Longest time between a restart and picking the next node, in milliseconds.
    #[arg(long, default_value_t = 4000)]
    max_gap_ms: u64,
    #[command(flatten)]
    run: DrillOptions,
}

impl ClusterArgs {
    /// The drill these options describe, run against the `gateway` executable.
    pub fn drill(&self, gateway: PathBuf) -> ClusterDrill {
        ClusterDrill {
            gateway,
            server: self.store_url.clone(),
            kills: self.kills,
            rate: self.rate,
            gap_ms: (self.min_gap_ms, self.max_gap_ms.max(self.min_gap_ms)),
            settle: self.run.settle,
            seed: self.run.seed(),
            work_dir: self.run.work_dir.clone(),
        }
    }
}

impl DrillArgs for ClusterArgs {
    type Report = ClusterReport;

    fn describe(&self) -> String {
        format!(
            "cluster drill: {NODES} gateways on one PostgreSQL database; {} SIGKILLs of a random node holding leases, {}-{} ms apart, under ingest at {}/s against a flaky receiver",
            self.kills, self.min_gap_ms, self.max_gap_ms, self.rate
        )
    }

    async fn run(&self, gateway: PathBuf) -> Result<ClusterReport, DrillError> {
        run(&self.drill(gateway)).await
    }
}

/// The cluster drill's parameters.
#[derive(Debug, Clone)]
pub struct ClusterDrill {
    /// The `hookgate` executable.
    pub gateway: PathBuf,
    /// The PostgreSQL server the scratch database is made on.
    pub server: String,
    /// SIGKILLs (each followed by a restart of the same node).
    pub kills: u32,
    /// Events per second, over all nodes.
    pub rate: u32,
    /// Random time between a restart and picking the next node, in milliseconds.
    pub gap_ms: (u64, u64),
    /// The longest wait for every delivery once the receiver has healed.
    pub settle: Duration,
    pub seed: u64,
    /// A directory to keep the data dirs in; a scratch dir otherwise.
    pub work_dir: Option<PathBuf>,
}

impl ClusterDrill {
    /// The short form: 2 kills, quick gaps.
    pub fn short(gateway: PathBuf, server: String) -> Self {
        Self {
            gateway,
            server,
            kills: 2,
            rate: 60,
            gap_ms: (500, 1500),
            settle: Duration::from_secs(120),
            seed: fresh_seed(),
            work_dir: None,
        }
    }
}

/// How long a claim lasts: the endpoint's timeout plus the lease margin.
pub(super) fn lease() -> Duration {
    TIMEOUT + LEASE_MARGIN
}

/// Runs the cluster drill.
///
/// # Errors
/// When the drill cannot run: no scratch database, a gateway does not start, setup
/// calls fail.
pub async fn run(drill: &ClusterDrill) -> Result<ClusterReport, DrillError> {
    let started = Instant::now();
    let work = WorkDir::new(drill.work_dir.as_deref(), "cluster")?;
    let base = drill_gateway(drill.gateway.clone(), work.data_dir());
    let postgres = CrashStore::Postgres {
        server: drill.server.clone(),
        restart_database: false,
    };
    let mut rng = StdRng::seed_from_u64(drill.seed);

    let healed = Arc::new(AtomicBool::new(false));
    let receiver = Receiver::start(flaky(drill.seed, LATENCY_MS, Arc::clone(&healed))).await?;
    let mut cluster = DrillNodes::start(base, NODES, &postgres, drill.kills, &work.path).await?;
    let endpoint = json!({
        "url": receiver.url,
        "description": "cluster drill",
        "timeout_ms": TIMEOUT.as_millis() as u64,
        "max_in_flight": 64,
        "policy": {"base_ms": 200, "factor": 2, "max_delay_ms": 2_000, "jitter": "equal",
                   "max_attempts": 100, "retry_window_ms": 3_600_000}
    });
    let token = cluster.admin()?.setup(&endpoint).await?.token().to_owned();
    for node in &cluster.nodes {
        node.open_to_senders(&token)?;
    }

    let stop = CancellationToken::new();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let unacked = Arc::new(AtomicU64::new(0));
    let seq = Arc::new(AtomicU64::new(0));
    let senders_in_all = SENDERS_PER_NODE * NODES as u32;
    let pace =
        Duration::from_micros(1_000_000 * u64::from(senders_in_all) / u64::from(drill.rate.max(1)));
    let mut senders = tokio::task::JoinSet::new();
    for (n, node) in cluster.nodes.iter().enumerate() {
        for s in 0..SENDERS_PER_NODE {
            let sending = Sender {
                current: node.follow(),
                stop: stop.clone(),
                acked: Arc::clone(&acked),
                unacked: Arc::clone(&unacked),
                seq: Arc::clone(&seq),
                sending_now: Arc::clone(&node.sending_now),
                call_started: Arc::clone(&node.call_started),
                pace,
            };
            senders.spawn(sending.run(n as u32 * SENDERS_PER_NODE + s));
        }
    }

    let mut kills = Vec::new();
    for _ in 0..drill.kills {
        tokio::time::sleep(gap(&mut rng, drill.gap_ms)).await;
        let victim = &mut cluster.nodes[rng.random_range(0..NODES)];
        let killed = cluster_kill::kill_and_restart(victim, &cluster.store, &receiver, &token);
        kills.push(killed.await?);
    }
    // Ingest goes on for one more gap after the last restart, then stops.
    tokio::time::sleep(gap(&mut rng, drill.gap_ms)).await;
    stop.cancel();
    while senders.join_next().await.is_some() {}
    healed.store(true, Ordering::SeqCst);
    let healed_at = Instant::now();

    let acked: Vec<String> = acked.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let apis = cluster.apis(&token)?;
    let settled = wait_delivered(&acked, &receiver.tally, &apis, healed_at + drill.settle).await?;
    let settled_in = healed_at.elapsed();
    cluster_kill::reattempts(&mut kills, &receiver.tally).await;
    let attempt_logs = cluster_kill::attempt_logs(&apis[0], &acked).await?;
    let cluster_view = cluster_kill::cluster_view(&cluster.nodes).await?;
    let final_exits = cluster.terminate().await;

    let report = ClusterReport {
        seed: drill.seed,
        nodes: cluster.nodes.iter().map(|n| n.id.clone()).collect(),
        store: cluster.store.outcome(),
        timeout: TIMEOUT,
        lease: lease(),
        slack: REATTEMPT_SLACK,
        kills,
        acknowledged: acked.len(),
        unacknowledged_sends: unacked.load(Ordering::SeqCst),
        delivered: acked.len() - settled.lost.len(),
        extras: Extras::count(&receiver.tally, &acked),
        settled,
        settle: drill.settle,
        attempt_logs,
        cluster_view,
        settled_in,
        final_exits,
        elapsed: started.elapsed(),
        violations: Vec::new(),
    };
    Ok(report.checked())
}
