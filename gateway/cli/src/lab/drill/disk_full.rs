//! The disk-full drill: storage that fills up is a state the gateway reports
//! and leaves by itself, not a loop.
//!
//! The gateway runs on sled, its data dir on a small tmpfs the drill mounts
//! (root only; otherwise the drill cannot run, exit 2), with the low-disk guard
//! off (`min_free_disk` 0) so that the disk really fills under the store. Its
//! one endpoint points at the drill's receiver, which answers 200 after some
//! latency, so that attempts are in flight when the disk fills. Paced senders
//! ingest throughout and log every answer. Once the warm-up is over and a
//! request is in progress at the receiver, the drill fills the disk with a
//! file, keeps ingesting and probes `/healthz` and `/metrics` for a while,
//! then removes the file and measures how soon `/healthz` answers 200 and
//! ingest 202 again. Ingest goes on a little longer, then stops, and the drill
//! waits, bounded, until every acknowledged event has been delivered.
//!
//! Checks: every ingest answer is a 202 or a 503, and a 503 comes once the disk
//! is full; every acknowledged event is delivered (2xx at the receiver,
//! `succeeded` in the API); no `webhook-id` reaches the receiver more than
//! twice; from the first refusal until the space comes back at most
//! `max_in_flight` requests reach the receiver (the attempts the scheduler may
//! have started before the store entered its failing state; it starts none
//! while it fails); `/healthz` answers 503 and `hookgate_store_failing` is 1
//! meanwhile, 200 and 0 after; ingest acknowledges again within 30 s; the same
//! process serves throughout and exits 0 on SIGTERM.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use http::Method;
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::{Value, json};

use super::api::{GatewayApi, TENANT};
use super::disk_full_disk::SmallDisk;
use super::disk_full_load::{Answer, Load, Outcome};
pub use super::disk_full_report::DiskFullReport;
use super::disk_full_report::{Observed, RECOVER_LIMIT, Settings};
use super::disk_full_watch::Watch;
use super::drill_gateway;
use super::receiver::{Behavior, Receiver, Reply, ReplyBody};
use super::settle::{Extras, wait_delivered};
use super::{DrillArgs, DrillError, DrillOptions, WorkDir, fresh_seed};

/// Concurrent ingest senders.
const SENDERS: u32 = 4;
/// The receiver's latency, in milliseconds: attempts stay in flight a while.
const LATENCY_MS: (u64, u64) = (50, 250);
/// How often `/healthz` and `/metrics` are probed.
const PROBE_EVERY: Duration = Duration::from_millis(100);
/// How long the fill waits, at most, for a request in progress at the receiver.
const IN_FLIGHT_WAIT: Duration = Duration::from_secs(10);

/// Options of `hookgate drill disk-full`.
#[derive(Args, Debug)]
pub struct DiskFullArgs {
    /// The size of the tmpfs the gateway's data dir is on, in MiB.
    #[arg(long, default_value_t = 64)]
    #[arg(value_parser = clap::value_parser!(u64).range(16..=4096))]
    disk_mib: u64,
    /// Events per second sent throughout, over all senders.
    #[arg(long, default_value_t = 50)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..=1000))]
    rate: u32,
    /// Ingest before the disk is filled.
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    warm_up: Duration,
    /// How long the disk stays full.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    full_for: Duration,
    /// Ingest after the gateway acknowledges again, before it stops.
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    after: Duration,
    /// The endpoint's `max_in_flight` (the bound on requests while full).
    #[arg(long, default_value_t = 8)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..=1024))]
    max_in_flight: u32,
    #[command(flatten)]
    run: DrillOptions,
}

impl DiskFullArgs {
    /// The drill these options describe, run against the `gateway` executable.
    pub fn drill(&self, gateway: PathBuf) -> DiskFullDrill {
        DiskFullDrill {
            gateway,
            disk_mib: self.disk_mib,
            rate: self.rate,
            warm_up: self.warm_up,
            full_for: self.full_for,
            after: self.after,
            max_in_flight: self.max_in_flight,
            settle: self.run.settle,
            seed: self.run.seed(),
            work_dir: self.run.work_dir.clone(),
        }
    }
}

impl DrillArgs for DiskFullArgs {
    type Report = DiskFullReport;

    fn describe(&self) -> String {
        format!(
            "disk-full drill: sled on a {} MiB tmpfs (min_free_disk 0), ingest at {}/s, the disk filled after {} for {}; max_in_flight {}",
            self.disk_mib,
            self.rate,
            humantime::format_duration(self.warm_up),
            humantime::format_duration(self.full_for),
            self.max_in_flight
        )
    }

    async fn run(&self, gateway: PathBuf) -> Result<DiskFullReport, DrillError> {
        run(&self.drill(gateway)).await
    }
}

/// The disk-full drill's parameters.
#[derive(Debug, Clone)]
pub struct DiskFullDrill {
    /// The `hookgate` executable.
    pub gateway: PathBuf,
    pub disk_mib: u64,
    /// Events per second, over all senders.
    pub rate: u32,
    pub warm_up: Duration,
    pub full_for: Duration,
    pub after: Duration,
    pub max_in_flight: u32,
    /// The longest wait for every delivery once ingest stops.
    pub settle: Duration,
    pub seed: u64,
    /// Where the tmpfs is mounted (under it); a scratch dir otherwise.
    pub work_dir: Option<PathBuf>,
}

impl DiskFullDrill {
    /// The short form: a few seconds of fill.
    pub fn short(gateway: PathBuf) -> Self {
        Self {
            gateway,
            disk_mib: 64,
            rate: 40,
            warm_up: Duration::from_millis(1500),
            full_for: Duration::from_secs(3),
            after: Duration::from_secs(1),
            max_in_flight: 8,
            settle: Duration::from_secs(120),
            seed: fresh_seed(),
            work_dir: None,
        }
    }
}

/// 200 after a latency drawn from [`LATENCY_MS`].
fn slow_ok(seed: u64) -> Behavior {
    let rng = Mutex::new(StdRng::seed_from_u64(seed ^ 0xd15c_f011));
    Arc::new(move |_| {
        let (low, high) = LATENCY_MS;
        let delay = rng
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .random_range(low..=high);
        Reply::Answer {
            status: 200,
            retry_after_s: None,
            delay: Duration::from_millis(delay),
            body: ReplyBody::Small,
        }
    })
}

/// The drill's one endpoint.
fn endpoint(url: &str, max_in_flight: u32) -> Value {
    json!({
        "url": url,
        "description": "disk-full drill",
        "timeout_ms": 5_000,
        "max_in_flight": max_in_flight,
        "policy": {"base_ms": 200, "factor": 2, "max_delay_ms": 2_000, "jitter": "equal",
                   "max_attempts": 100, "retry_window_ms": 3_600_000}
    })
}

/// Runs the disk-full drill.
///
/// # Errors
/// When the drill cannot run: the tmpfs cannot be mounted (not root), the
/// gateway does not start, setup calls fail.
pub async fn run(drill: &DiskFullDrill) -> Result<DiskFullReport, DrillError> {
    let started = Instant::now();
    // Declared in this order so that the gateway stops before the disk is
    // unmounted, and the disk is unmounted before the work dir is removed.
    let work = WorkDir::new(drill.work_dir.as_deref(), "disk-full")?;
    let disk = SmallDisk::mount(&work.path.join("disk"), drill.disk_mib)?;
    let mut spec = drill_gateway(drill.gateway.clone(), disk.data_dir());
    // The low-disk guard off: the disk really fills under the store.
    spec.set("HOOKGATE_STORE__MIN_FREE_DISK", "0");
    let receiver = Receiver::start(slow_ok(drill.seed)).await?;
    let mut gateway = spec.spawn().await?;
    let pid = gateway.pid();
    let admin = GatewayApi::new(gateway.addr, &spec.admin)?;
    let tenant = admin
        .setup(&endpoint(&receiver.url, drill.max_in_flight))
        .await?;
    let watch = Watch::new(admin.clone());
    let load = Load::start(&tenant, SENDERS, drill.rate);

    tokio::time::sleep(drill.warm_up).await;
    let by = Instant::now() + IN_FLIGHT_WAIT;
    while receiver.tally.in_flight() == 0 && Instant::now() < by {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let in_flight_at_fill = receiver.tally.in_flight();
    let fill_at = Instant::now();
    // Written on this thread: a tmpfs takes its few MiB in tens of
    // milliseconds, and the senders go on on the runtime's other threads.
    let filler_bytes = disk.fill()?;
    let full_at = Instant::now();
    let full_probes = watch.until(full_at + drill.full_for, PROBE_EVERY).await;
    disk.free()?;
    let freed_at = Instant::now();
    let recover_by = freed_at + RECOVER_LIMIT;
    let (healthy_after, _) = watch.until_healthy(freed_at, recover_by, PROBE_EVERY).await;
    let acked_after = load.first_ack_after(freed_at, recover_by).await;
    let failing_after_recovery = watch.probe().await.failing;
    tokio::time::sleep(drill.after).await;
    let answers = load.stop().await;
    let stopped_at = Instant::now();

    let first_refusal = answers
        .iter()
        .filter(|a| a.sent >= fill_at && matches!(a.outcome, Outcome::Refused(_)))
        .map(|a| a.answered)
        .min();
    let requests_while_full =
        first_refusal.map_or(0, |r| receiver.tally.arrived_between(r, freed_at));
    let acked: Vec<String> = answers
        .iter()
        .filter_map(|a| match &a.outcome {
            Outcome::Acked(id) => Some(id.clone()),
            _ => None,
        })
        .collect();
    let settled = wait_delivered(
        &acked,
        &receiver.tally,
        std::slice::from_ref(&tenant),
        stopped_at + drill.settle,
    )
    .await?;
    let settled_in = stopped_at.elapsed();
    let per_id = receiver.tally.per_id();
    let acked_ids: HashSet<&String> = acked.iter().collect();
    let mut delivered_unacknowledged: Vec<String> = receiver
        .tally
        .delivered()
        .into_iter()
        .filter(|id| !acked_ids.contains(id))
        .collect();
    delivered_unacknowledged.sort();
    let delivered_unacknowledged =
        describe_unacknowledged(&tenant, delivered_unacknowledged, &answers, fill_at).await;
    let store_errors = watch.store_errors().await;
    let same_process = gateway.running();
    let final_exit = gateway.terminate().await.map(|s| s.code().unwrap_or(-1));

    let settings = Settings {
        seed: drill.seed,
        disk_mib: disk.mib(),
        max_in_flight: drill.max_in_flight,
        full_for: drill.full_for,
        pid,
    };
    let observed = Observed {
        extras: Extras::count(&receiver.tally, &acked),
        max_requests_per_id: per_id.values().map(|n| n.requests).max().unwrap_or(0),
        ids_repeated: per_id.values().filter(|n| n.requests > 1).count(),
        delivered_unacknowledged,
        answers,
        fill_at,
        full_at,
        freed_at,
        filler_bytes,
        in_flight_at_fill,
        requests_while_full,
        full_probes,
        healthy_after,
        acked_after,
        failing_after_recovery,
        store_errors,
        settled,
        settle: drill.settle,
        same_process,
        final_exit,
        settled_in,
    };
    Ok(DiskFullReport::judge(settings, observed, started.elapsed()))
}

/// Events shown in the report at most among those delivered though refused.
const UNACKNOWLEDGED_SHOWN: usize = 5;

/// For each event the receiver got though no 202 named it (the first few),
/// what its ingest call got and when, found by the `seq` in its payload.
async fn describe_unacknowledged(
    api: &GatewayApi,
    ids: Vec<String>,
    answers: &[Answer],
    fill_at: Instant,
) -> Vec<String> {
    let since_fill = |t: Instant| {
        let (ms, sign) = match t.checked_duration_since(fill_at) {
            Some(d) => (d.as_millis(), "+"),
            None => (fill_at.saturating_duration_since(t).as_millis(), "-"),
        };
        format!("{sign}{ms} ms")
    };
    let mut out = Vec::with_capacity(ids.len());
    for (i, id) in ids.into_iter().enumerate() {
        if i >= UNACKNOWLEDGED_SHOWN {
            out.push(id);
            continue;
        }
        let path = format!("/v1/tenants/{TENANT}/events/{id}");
        let seq = match api.call(Method::GET, &path, None).await {
            Ok((_, event)) => event["payload"]["seq"].as_u64(),
            Err(_) => None,
        };
        let call = seq.and_then(|seq| answers.iter().find(|a| a.seq == seq));
        out.push(match call {
            Some(a) => format!(
                "{id} (seq {}: sent {} from the fill's start, answered {:?} at {})",
                a.seq,
                since_fill(a.sent),
                a.outcome,
                since_fill(a.answered)
            ),
            None => format!("{id} (its ingest call not found)"),
        });
    }
    out
}
