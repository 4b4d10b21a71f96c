//! The fault drill: every fault ends delivered or correctly dead, and memory stays
//! bounded.
//!
//! Each event carries a plan in its payload: a few transient faults (500, 502, 503,
//! 429 with `Retry-After: 1`, a 307 redirect, a 503 with a 1 MiB body, a hang past
//! the endpoint's timeout, a connection reset), then a final answer: 200, 200 with a
//! body that trickles on past the timeout, 200 with a 4 MiB body, or a permanent 4xx
//! (400, 401, 403, 404, 422). The receiver answers attempt n of an event with step n
//! of its plan, so the outcome of every event is known in advance.
//!
//! Checks, per event: the receiver saw it (nothing lost); it ended `succeeded`, or
//! `dead` with `dead_reason` `give_up` when the plan ends in a permanent 4xx; it took
//! exactly as many attempts as its plan has steps; each attempt-log entry shows the
//! step's status or error kind (`timeout` for a hang, `reset` for a reset) and
//! verdict; a 429 was retried no sooner than its `Retry-After`. And the gateway's
//! RSS, sampled every 100 ms through the run, never grows more than a bound (48 MiB
//! by default) over its baseline after setup; its sled cache is set to 16 MiB so
//! that the bound is about what faults could pile up, not about the cache filling.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use rand::SeedableRng as _;
use rand::rngs::StdRng;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::api::{GatewayApi, fetch_deliveries, ingest_all};
use super::drill_gateway;
use super::receiver::Receiver;
use super::{DrillArgs, DrillError, DrillOptions, WorkDir, fresh_seed};
use crate::lab::child_gateway::rss_kib;

mod plan;
mod report;

use plan::{Step, follow_plan, plan};
pub use report::FaultReport;

const EVENT_TYPE: &str = "drill.fault";
/// Events sent at once.
const SEND_CONCURRENCY: usize = 16;
/// The endpoint's `timeout_ms`; hangs and slow bodies run past it.
const TIMEOUT_MS: u64 = 1_000;
/// How long a hang lasts at most (the gateway gives up after [`TIMEOUT_MS`]).
const HANG: Duration = Duration::from_secs(3);
/// The `Retry-After` of a 429, in seconds.
const RETRY_AFTER_S: u64 = 1;
const KIB: u64 = 1024;
/// The gateway's sled cache during the drill.
const CACHE_CAPACITY: &str = "16MiB";
/// How much the gateway's RSS may grow over its baseline by default, in MiB.
const RSS_GROWTH_MIB: u64 = 48;

/// Options of `hookgate drill fault`.
#[derive(Args, Debug)]
pub struct FaultArgs {
    /// Events, each with its own plan of faults.
    #[arg(long, default_value_t = 1000)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=20_000))]
    events: u64,
    /// How much the gateway's RSS may grow over its baseline, in MiB.
    #[arg(long, default_value_t = RSS_GROWTH_MIB)]
    rss_growth_mib: u64,
    #[command(flatten)]
    run: DrillOptions,
}

impl FaultArgs {
    /// The drill these options describe, run against the `gateway` executable.
    pub fn drill(&self, gateway: PathBuf) -> FaultDrill {
        FaultDrill {
            gateway,
            events: usize::try_from(self.events).unwrap_or(usize::MAX),
            rss_growth_kib: self.rss_growth_mib * KIB,
            settle: self.run.settle,
            seed: self.run.seed(),
            work_dir: self.run.work_dir.clone(),
        }
    }
}

impl DrillArgs for FaultArgs {
    type Report = FaultReport;

    fn describe(&self) -> String {
        format!(
            "fault drill: {} events, each with a plan of faults; RSS may grow {} MiB at most",
            self.events, self.rss_growth_mib
        )
    }

    async fn run(&self, gateway: PathBuf) -> Result<FaultReport, DrillError> {
        run(&self.drill(gateway)).await
    }
}

/// The fault drill's parameters.
#[derive(Debug, Clone)]
pub struct FaultDrill {
    /// The `hookgate` executable.
    pub gateway: PathBuf,
    pub events: usize,
    /// How much the gateway's RSS may grow over its baseline, in KiB.
    pub rss_growth_kib: u64,
    /// The longest wait for every event to finish.
    pub settle: Duration,
    pub seed: u64,
    /// A data dir to keep; a scratch dir otherwise.
    pub work_dir: Option<PathBuf>,
}

impl FaultDrill {
    /// The short form: 150 events.
    pub fn short(gateway: PathBuf) -> Self {
        Self {
            gateway,
            events: 150,
            rss_growth_kib: RSS_GROWTH_MIB * KIB,
            settle: Duration::from_secs(120),
            seed: fresh_seed(),
            work_dir: None,
        }
    }
}

/// Runs the fault drill.
///
/// # Errors
/// When the drill cannot run: the gateway does not start, setup calls fail.
pub async fn run(drill: &FaultDrill) -> Result<FaultReport, DrillError> {
    let started = Instant::now();
    let work = WorkDir::new(drill.work_dir.as_deref(), "fault")?;
    let mut spec = drill_gateway(drill.gateway.clone(), work.data_dir());
    // sled's page cache (64 MiB by default) fills as data grows; a small one keeps
    // the RSS bound about what faults might pile up (bodies, hung connections).
    spec.env.push((
        "HOOKGATE_STORE__CACHE_CAPACITY".into(),
        CACHE_CAPACITY.into(),
    ));
    let gateway = spec.spawn().await?;
    let receiver = Receiver::start(follow_plan()).await?;
    let endpoint = json!({
        "url": receiver.url,
        "description": "fault drill",
        "timeout_ms": TIMEOUT_MS,
        "max_in_flight": 32,
        "policy": {"base_ms": 200, "factor": 2, "max_delay_ms": 2_000, "jitter": "equal",
                   "max_attempts": 10, "retry_window_ms": 600_000}
    });
    let api = GatewayApi::new(gateway.addr, &spec.admin)?
        .setup(&endpoint)
        .await?;

    let pid = gateway.pid();
    let baseline = rss_kib(pid).unwrap_or(0);
    let (peak, samples) = (
        Arc::new(AtomicU64::new(baseline)),
        Arc::new(AtomicU64::new(0)),
    );
    let sampling = CancellationToken::new();
    let sampler = tokio::spawn(sample_rss(
        pid,
        Arc::clone(&peak),
        Arc::clone(&samples),
        sampling.clone(),
    ));

    let mut rng = StdRng::seed_from_u64(drill.seed);
    let plans: Vec<Vec<Step>> = (0..drill.events).map(|_| plan(&mut rng)).collect();
    let payloads = plans
        .iter()
        .enumerate()
        .map(|(i, p)| json!({"i": i, "plan": p.iter().map(|s| s.name()).collect::<Vec<_>>()}))
        .collect();
    let burst = Instant::now();
    let ids = ingest_all(&api, EVENT_TYPE, payloads, SEND_CONCURRENCY).await?;

    let deadline = burst + drill.settle;
    let mut states;
    loop {
        states = api.deliveries_by_event().await?;
        let finished = ids
            .iter()
            .filter(|id| {
                states
                    .get(*id)
                    .is_some_and(|d| matches!(d["state"].as_str(), Some("succeeded" | "dead")))
            })
            .count();
        if finished == ids.len() || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let finished_in = burst.elapsed();
    sampling.cancel();
    let _ = sampler.await;
    let rss_end = rss_kib(pid).unwrap_or(0);
    let delivery_ids: Vec<String> = ids
        .iter()
        .filter_map(|id| {
            states
                .get(id)
                .and_then(|d| d["id"].as_str())
                .map(str::to_owned)
        })
        .collect();
    let details = fetch_deliveries(&api, delivery_ids, 8).await?;
    let _ = gateway.terminate().await;
    let by_event: BTreeMap<&str, &Value> = details
        .iter()
        .map(|d| (d["event_id"].as_str().unwrap_or_default(), d))
        .collect();

    let per_id = receiver.tally.per_id();
    let mut report = FaultReport {
        seed: drill.seed,
        events: ids.len(),
        succeeded: 0,
        dead: 0,
        dead_reasons: BTreeMap::new(),
        lost: Vec::new(),
        wrong_outcomes: Vec::new(),
        wrong_attempts: Vec::new(),
        served: BTreeMap::new(),
        attempts: 0,
        min_delay_after_429_ms: None,
        rss_baseline_kib: baseline,
        rss_peak_kib: peak.load(Ordering::SeqCst).max(rss_end),
        rss_end_kib: rss_end,
        rss_growth_limit_kib: drill.rss_growth_kib,
        rss_samples: samples.load(Ordering::SeqCst),
        finished_in,
        elapsed: Duration::ZERO,
        violations: Vec::new(),
    };
    for (id, plan) in ids.iter().zip(&plans) {
        let seen = per_id.get(id).copied().unwrap_or_default();
        if seen.requests == 0 {
            report.lost.push(id.clone());
        }
        for step in plan.iter().take(seen.requests as usize) {
            *report.served.entry(step.name()).or_default() += 1;
        }
        match by_event.get(id.as_str()) {
            None => report
                .wrong_outcomes
                .push(format!("{id}: no delivery in the store")),
            Some(d) => report.check(id, plan, d),
        }
    }
    report.elapsed = started.elapsed();
    report.judge();
    Ok(report)
}

/// Samples the RSS of `pid` every 100 ms into `peak` until cancelled.
async fn sample_rss(
    pid: u32,
    peak: Arc<AtomicU64>,
    samples: Arc<AtomicU64>,
    stop: CancellationToken,
) {
    loop {
        if let Some(kib) = rss_kib(pid) {
            peak.fetch_max(kib, Ordering::SeqCst);
            samples.fetch_add(1, Ordering::SeqCst);
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}
