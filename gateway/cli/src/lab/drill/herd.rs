//! The herd drill: retries never flood a recovering receiver.
//!
//! One endpoint with `max_in_flight` and `rate_limit_per_s` set. The receiver
//! answers 503 while all the events are sent, so every delivery fails together; it
//! recovers after a set time (and not before each delivery has failed at least once,
//! within a bound), then answers 200 after some latency. The drill waits, bounded,
//! until everything is delivered.
//!
//! Checks: the receiver never has more than `max_in_flight` requests in progress;
//! no second (counted from the receiver's start) holds more than `rate_limit_per_s`
//! requests; every event is delivered (2xx at the receiver, succeeded in the API),
//! none dead; every delivery failed at least once before the recovery. Reported: the
//! per-second histogram of requests and 2xx answers.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::json;

use super::api::ingest_all;
use super::crash_store::CrashStore;
use super::drill_gateway;
pub use super::herd_report::HerdReport;
use super::nodes::DrillNodes;
use super::receiver::{Behavior, Receiver, Reply, ReplyBody};
use super::{DrillArgs, DrillError, DrillOptions, WorkDir, fresh_seed, secs};

const EVENT_TYPE: &str = "drill.herd";
/// Events sent at once.
const SEND_CONCURRENCY: usize = 16;
/// How much longer than `recover_after` the receiver stays down waiting for every
/// delivery to have failed once.
const FAIL_ALL_LIMIT: Duration = Duration::from_secs(120);

/// Options of `hookgate drill herd`.
#[derive(Args, Debug)]
pub struct HerdArgs {
    /// Deliveries that fail together.
    #[arg(long, default_value_t = 1000)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=20_000))]
    events: u64,
    /// The endpoint's `max_in_flight`.
    #[arg(long, default_value_t = 8)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..=1024))]
    max_in_flight: u32,
    /// The endpoint's `rate_limit_per_s`.
    #[arg(long, default_value_t = 50)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..=10_000))]
    rate_limit: u32,
    /// How long the receiver answers 503, from the start of the burst.
    #[arg(long, default_value = "25s", value_parser = humantime::parse_duration)]
    recover_after: Duration,
    /// Run the gateways on PostgreSQL: a scratch database made on this server (a
    /// URL of any database on it) and dropped afterwards, instead of sled.
    #[arg(long, value_name = "URL")]
    store_url: Option<String>,
    /// Gateways sharing the work (cluster mode; more than one needs --store-url).
    #[arg(long, default_value_t = 1)]
    #[arg(value_parser = clap::value_parser!(u64).range(1..=5))]
    nodes: u64,
    #[command(flatten)]
    run: DrillOptions,
}

impl HerdArgs {
    /// The drill these options describe, run against the `gateway` executable.
    pub fn drill(&self, gateway: PathBuf) -> HerdDrill {
        HerdDrill {
            gateway,
            events: usize::try_from(self.events).unwrap_or(usize::MAX),
            max_in_flight: self.max_in_flight,
            rate_limit_per_s: self.rate_limit,
            recover_after: self.recover_after,
            latency_ms: (50, 250),
            settle: self.run.settle,
            seed: self.run.seed(),
            work_dir: self.run.work_dir.clone(),
            store: match &self.store_url {
                None => CrashStore::Sled,
                Some(server) => CrashStore::Postgres {
                    server: server.clone(),
                    restart_database: false,
                },
            },
            nodes: usize::try_from(self.nodes).unwrap_or(1),
        }
    }
}

impl DrillArgs for HerdArgs {
    type Report = HerdReport;

    fn describe(&self) -> String {
        format!(
            "herd drill: {} deliveries fail together on {} node(s) {}; the receiver recovers after {} (once each has failed); max_in_flight {}, rate_limit_per_s {}",
            self.events,
            self.nodes,
            if self.store_url.is_some() {
                "on PostgreSQL"
            } else {
                "on sled"
            },
            humantime::format_duration(self.recover_after),
            self.max_in_flight,
            self.rate_limit
        )
    }

    async fn run(&self, gateway: PathBuf) -> Result<HerdReport, DrillError> {
        run(&self.drill(gateway)).await
    }
}

/// The herd drill's parameters.
#[derive(Debug, Clone)]
pub struct HerdDrill {
    /// The `hookgate` executable.
    pub gateway: PathBuf,
    pub events: usize,
    pub max_in_flight: u32,
    pub rate_limit_per_s: u32,
    /// How long the receiver answers 503, from the start of the burst.
    pub recover_after: Duration,
    /// The receiver's latency once recovered, in milliseconds (a range).
    pub latency_ms: (u64, u64),
    /// The longest wait for every delivery after the recovery.
    pub settle: Duration,
    pub seed: u64,
    /// A data dir to keep; a scratch dir otherwise.
    pub work_dir: Option<PathBuf>,
    /// Where the gateways keep their state.
    pub store: CrashStore,
    /// Gateways sharing the work (more than one needs PostgreSQL).
    pub nodes: usize,
}

impl HerdDrill {
    /// The short form: 200 deliveries, a 3 s outage.
    pub fn short(gateway: PathBuf) -> Self {
        Self {
            gateway,
            events: 200,
            max_in_flight: 8,
            rate_limit_per_s: 50,
            recover_after: Duration::from_secs(3),
            latency_ms: (50, 250),
            settle: Duration::from_secs(120),
            seed: fresh_seed(),
            work_dir: None,
            store: CrashStore::Sled,
            nodes: 1,
        }
    }
}

/// Runs the herd drill.
///
/// # Errors
/// When the drill cannot run: the gateway does not start, setup calls fail.
pub async fn run(drill: &HerdDrill) -> Result<HerdReport, DrillError> {
    let started = Instant::now();
    let work = WorkDir::new(drill.work_dir.as_deref(), "herd")?;
    let spec = drill_gateway(drill.gateway.clone(), work.data_dir());
    let mut nodes =
        DrillNodes::start(spec, drill.nodes.max(1), &drill.store, 0, &work.path).await?;

    let recovered = Arc::new(AtomicBool::new(false));
    let behavior = down_then_up(drill.seed, drill.latency_ms, Arc::clone(&recovered));
    let receiver = Receiver::start(behavior).await?;
    let endpoint = json!({
        "url": receiver.url,
        "description": "herd drill",
        "timeout_ms": 10_000,
        "max_in_flight": drill.max_in_flight,
        "rate_limit_per_s": drill.rate_limit_per_s,
        "policy": {"base_ms": 1_000, "factor": 2, "max_delay_ms": 8_000, "jitter": "full",
                   "max_attempts": 100, "retry_window_ms": 3_600_000}
    });
    let api = nodes.admin()?.setup(&endpoint).await?;
    let burst = Instant::now();
    // The events go to every node in turn.
    let mut ids = Vec::with_capacity(drill.events);
    let apis = nodes.apis(api.token())?;
    let share = drill.events.div_ceil(apis.len());
    for (n, node) in apis.iter().enumerate() {
        let range = (n * share)..((n + 1) * share).min(drill.events);
        let payloads = range.map(|i| json!({"i": i})).collect();
        ids.extend(ingest_all(node, EVENT_TYPE, payloads, SEND_CONCURRENCY).await?);
    }

    // Down for the set time, and until every delivery has failed once (bounded).
    let hard_limit = drill.recover_after + FAIL_ALL_LIMIT;
    while burst.elapsed() < hard_limit
        && (burst.elapsed() < drill.recover_after || receiver.tally.distinct() < ids.len())
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let failed_before_recovery = receiver.tally.distinct();
    recovered.store(true, Ordering::SeqCst);
    let (recovered_at, recovery) = (receiver.tally.elapsed(), Instant::now());

    let deadline = recovery + drill.settle;
    let (mut delivered, mut succeeded, mut dead);
    loop {
        let seen = receiver.tally.delivered();
        delivered = ids.iter().filter(|id| seen.contains(*id)).count();
        (succeeded, dead) = (0, 0);
        if delivered == ids.len() {
            for d in api.deliveries_by_event().await?.values() {
                match d["state"].as_str() {
                    Some("succeeded") => succeeded += 1,
                    Some("dead") => dead += 1,
                    _ => {}
                }
            }
        }
        if succeeded + dead == ids.len() || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let drained_in = recovery.elapsed();
    let attempts_per_node = nodes.attempts_per_node().await?;
    nodes.terminate().await;

    let histogram = receiver.tally.per_second();
    let max_per_second = histogram.iter().map(|s| s.requests).max().unwrap_or(0);
    let max_concurrency = receiver.tally.max_in_flight();
    let (requests, _) = receiver.tally.totals();
    let mut violations = Vec::new();
    if max_concurrency > drill.max_in_flight as usize {
        violations.push(format!(
            "the receiver had {max_concurrency} requests in progress at once; max_in_flight is {}",
            drill.max_in_flight
        ));
    }
    for (s, n) in histogram.iter().enumerate() {
        if n.requests > u64::from(drill.rate_limit_per_s) {
            violations.push(format!(
                "second {s} held {} requests; rate_limit_per_s is {}",
                n.requests, drill.rate_limit_per_s
            ));
        }
    }
    if delivered < ids.len() {
        violations.push(format!(
            "{} of {} events never answered 2xx within {}",
            ids.len() - delivered,
            ids.len(),
            secs(drill.settle)
        ));
    }
    if succeeded < ids.len() {
        violations.push(format!(
            "the API shows {succeeded} of {} deliveries succeeded ({dead} dead)",
            ids.len()
        ));
    }
    if failed_before_recovery < ids.len() {
        violations.push(format!(
            "only {failed_before_recovery} of {} deliveries had failed when the receiver recovered",
            ids.len()
        ));
    }
    Ok(HerdReport {
        seed: drill.seed,
        events: ids.len(),
        max_in_flight: drill.max_in_flight,
        rate_limit_per_s: drill.rate_limit_per_s,
        failed_before_recovery,
        recovered_at,
        delivered,
        succeeded_in_api: succeeded,
        dead_in_api: dead,
        max_concurrency,
        max_per_second,
        histogram,
        attempts_per_node,
        requests,
        drained_in,
        elapsed: started.elapsed(),
        violations,
    })
}

/// 503 at once until recovered, then 200 after a latency drawn from `latency_ms`.
fn down_then_up(seed: u64, latency_ms: (u64, u64), recovered: Arc<AtomicBool>) -> Behavior {
    let rng = Mutex::new(StdRng::seed_from_u64(seed));
    Arc::new(move |_| {
        if !recovered.load(Ordering::SeqCst) {
            return Reply::status(503);
        }
        let mut rng = rng.lock().unwrap_or_else(|p| p.into_inner());
        let (low, high) = latency_ms;
        Reply::Answer {
            status: 200,
            retry_after_s: None,
            delay: Duration::from_millis(rng.random_range(low..=high.max(low))),
            body: ReplyBody::Small,
        }
    })
}
