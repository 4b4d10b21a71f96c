//! The crash drill: acknowledged means durable, and delivery is at-least-once.
//!
//! Ingest runs continuously (a few senders, paced) against a flaky receiver (503,
//! 500, resets, some latency). At random moments the gateway is SIGKILLed, with
//! delivery attempts in flight and (each kill waits, bounded, for one to start)
//! ingest calls in flight, and started again on the same data dir. After the last restart ingest stops and the receiver heals (it answers
//! 200 from then on). The drill then waits, bounded, until every acknowledged
//! (202) event has been answered 2xx by the receiver and the API shows its delivery
//! succeeded.
//!
//! On PostgreSQL (`--store-url`) every gateway runs on one scratch database, and
//! `--restart-database` also restarts the server once between two kills, ingest
//! going on: calls refused meanwhile are not acknowledged, so not counted as lost.
//!
//! Checks: no acknowledged event is missing from the store or undelivered (lost);
//! the last gateway exits 0 on SIGTERM. Reported: duplicates (2xx answers beyond the
//! first per `webhook-id`, which at-least-once allows), events delivered whose 202
//! was lost in a kill, ingest calls and delivery requests in flight at each kill.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::json;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::api::GatewayApi;
use super::broker_receiver::BrokerReceiver;
pub use super::crash_report::CrashReport;
use super::crash_store::{CrashStore, RunStore, StoreArgs};
use super::drill_gateway;
use super::ingest_load::{Sender, flaky, gap};
use super::receiver::Receiver;
use super::settle::{Extras, wait_delivered};
use super::{DrillArgs, DrillError, DrillOptions, WorkDir, fresh_seed};

/// Concurrent ingest senders.
const SENDERS: u32 = 8;

/// Options of `hookgate drill crash`.
#[derive(Args, Debug)]
pub struct CrashArgs {
    /// How many times the gateway is SIGKILLed (and restarted).
    #[arg(long, default_value_t = 10)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..=100))]
    kills: u32,
    /// Events per second sent during the drill, over all senders.
    #[arg(long, default_value_t = 100)]
    #[arg(value_parser = clap::value_parser!(u32).range(1..=2000))]
    rate: u32,
    /// Shortest time between a (re)start and the next kill, in milliseconds.
    #[arg(long, default_value_t = 500)]
    min_gap_ms: u64,
    /// Longest time between a (re)start and the next kill, in milliseconds.
    #[arg(long, default_value_t = 4000)]
    max_gap_ms: u64,
    /// Where the endpoint delivers: the flaky HTTP receiver, or a queue of the
    /// run's own on the local RabbitMQ.
    #[arg(long, value_enum, default_value = "http")]
    destination: CrashDestination,
    #[command(flatten)]
    store: StoreArgs,
    #[command(flatten)]
    run: DrillOptions,
}

/// Where the crash drill's endpoint delivers.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashDestination {
    /// The flaky HTTP receiver (503, 500, resets, latency), healed at the end.
    Http,
    /// A queue on the local RabbitMQ (amqp://127.0.0.1:5672, guest), through
    /// publisher confirms.
    Rabbitmq,
}

impl CrashArgs {
    /// The drill these options describe, run against the `gateway` executable.
    pub fn drill(&self, gateway: PathBuf) -> CrashDrill {
        CrashDrill {
            gateway,
            kills: self.kills,
            rate: self.rate,
            gap_ms: (self.min_gap_ms, self.max_gap_ms.max(self.min_gap_ms)),
            settle: self.run.settle,
            seed: self.run.seed(),
            work_dir: self.run.work_dir.clone(),
            store: self.store.store(),
            destination: self.destination,
        }
    }
}

impl DrillArgs for CrashArgs {
    type Report = CrashReport;

    fn describe(&self) -> String {
        format!(
            "crash drill: {} SIGKILLs {}-{} ms apart under ingest at {}/s against a flaky receiver, {}",
            self.kills,
            self.min_gap_ms,
            self.max_gap_ms,
            self.rate,
            self.store.store().describe()
        )
    }

    async fn run(&self, gateway: PathBuf) -> Result<CrashReport, DrillError> {
        run(&self.drill(gateway)).await
    }
}

/// The crash drill's parameters.
#[derive(Debug, Clone)]
pub struct CrashDrill {
    /// The `hookgate` executable.
    pub gateway: PathBuf,
    /// SIGKILLs (each followed by a restart).
    pub kills: u32,
    /// Events per second, over all senders.
    pub rate: u32,
    /// Random time between a (re)start and the next kill, in milliseconds.
    pub gap_ms: (u64, u64),
    /// The longest wait for every delivery once the receiver has healed.
    pub settle: Duration,
    pub seed: u64,
    /// A data dir to keep; a scratch dir otherwise.
    pub work_dir: Option<PathBuf>,
    /// sled, or a scratch PostgreSQL database (and whether its server is restarted).
    pub store: CrashStore,
    /// Where the endpoint delivers.
    pub destination: CrashDestination,
}

impl CrashDrill {
    /// The short form: 3 kills, quick gaps.
    pub fn short(gateway: PathBuf) -> Self {
        Self {
            gateway,
            kills: 3,
            rate: 60,
            gap_ms: (300, 1200),
            settle: Duration::from_secs(120),
            seed: fresh_seed(),
            work_dir: None,
            store: CrashStore::Sled,
            destination: CrashDestination::Http,
        }
    }
}

/// Runs the crash drill.
///
/// # Errors
/// When the drill cannot run: the gateway does not start, setup calls fail.
pub async fn run(drill: &CrashDrill) -> Result<CrashReport, DrillError> {
    let started = Instant::now();
    let work = WorkDir::new(drill.work_dir.as_deref(), "crash")?;
    let mut spec = drill_gateway(drill.gateway.clone(), work.data_dir());
    // Declared before the gateways, so dropped after them.
    let store = RunStore::prepare(&drill.store, drill.kills, &mut spec).await?;
    let mut store_outcome = store.outcome();
    let mut rng = StdRng::seed_from_u64(drill.seed);

    let healed = Arc::new(AtomicBool::new(false));
    let (http, broker) = match drill.destination {
        CrashDestination::Http => {
            let flaky = flaky(drill.seed, (0, 80), Arc::clone(&healed));
            (Some(Receiver::start(flaky).await?), None)
        }
        CrashDestination::Rabbitmq => (None, Some(BrokerReceiver::start().await?)),
    };
    let (target, tally) = match (&http, &broker) {
        (Some(rx), _) => (json!({"url": rx.url}), Arc::clone(&rx.tally)),
        (None, Some(b)) => (
            json!({"destination": b.destination()}),
            Arc::clone(&b.tally),
        ),
        (None, None) => unreachable!("one receiver is always made"),
    };
    let mut gateway = spec.spawn().await?;
    let mut endpoint = json!({
        "description": "crash drill",
        "timeout_ms": 5_000,
        "max_in_flight": 16,
        "policy": {"base_ms": 200, "factor": 2, "max_delay_ms": 2_000, "jitter": "equal",
                   "max_attempts": 100, "retry_window_ms": 3_600_000}
    });
    if let (Some(e), Some(t)) = (endpoint.as_object_mut(), target.as_object()) {
        e.extend(t.clone());
    }
    let admin = GatewayApi::new(gateway.addr, &spec.admin)?;
    let tenant = admin.setup(&endpoint).await?;
    let token = tenant.token().to_owned();

    let (current_tx, current_rx) = watch::channel(Some(tenant.clone()));
    let stop = CancellationToken::new();
    let acked = Arc::new(Mutex::new(Vec::new()));
    let unacked = Arc::new(AtomicU64::new(0));
    let seq = Arc::new(AtomicU64::new(0));
    let sending_now = Arc::new(AtomicUsize::new(0));
    let call_started = Arc::new(Notify::new());
    let pace = Duration::from_micros(1_000_000 * u64::from(SENDERS) / u64::from(drill.rate.max(1)));
    let mut senders = tokio::task::JoinSet::new();
    for sender in 0..SENDERS {
        let sending = Sender {
            current: current_rx.clone(),
            stop: stop.clone(),
            acked: Arc::clone(&acked),
            unacked: Arc::clone(&unacked),
            seq: Arc::clone(&seq),
            sending_now: Arc::clone(&sending_now),
            call_started: Arc::clone(&call_started),
            pace,
        };
        senders.spawn(sending.run(sender));
    }

    let (mut in_flight_at_kills, mut ingest_at_kills, mut restarts) =
        (Vec::new(), Vec::new(), Vec::new());
    for kill in 0..drill.kills {
        if store.restart_before(kill, drill.kills) {
            let counts = || {
                let acked = acked.lock().unwrap_or_else(|p| p.into_inner()).len();
                (acked, unacked.load(Ordering::SeqCst))
            };
            store_outcome.restart = Some(store.restart_database(counts).await?);
        }
        tokio::time::sleep(gap(&mut rng, drill.gap_ms)).await;
        // Then, as soon as an ingest call is under way (waiting at most a second),
        // a random part of a call's time later: kills land before, during and after
        // commits, not only between calls.
        let mut started = std::pin::pin!(call_started.notified());
        started.as_mut().enable();
        if sending_now.load(Ordering::SeqCst) == 0 {
            let _ = tokio::time::timeout(Duration::from_secs(1), started).await;
        }
        std::thread::sleep(Duration::from_micros(rng.random_range(0..=1_500)));
        in_flight_at_kills.push(tally.in_flight());
        ingest_at_kills.push(sending_now.load(Ordering::SeqCst));
        gateway.kill();
        let _ = current_tx.send(None);
        let t = Instant::now();
        gateway = spec.spawn().await?;
        restarts.push(t.elapsed());
        let _ = current_tx.send(Some(GatewayApi::new(gateway.addr, &token)?));
    }
    // Ingest goes on for one more gap after the last restart, then stops.
    tokio::time::sleep(gap(&mut rng, drill.gap_ms)).await;
    stop.cancel();
    while senders.join_next().await.is_some() {}
    healed.store(true, Ordering::SeqCst);
    let healed_at = Instant::now();

    let acked: Vec<String> = acked.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let api = GatewayApi::new(gateway.addr, &token)?;
    let settled = wait_delivered(
        &acked,
        &tally,
        std::slice::from_ref(&api),
        healed_at + drill.settle,
    )
    .await?;
    let settled_in = healed_at.elapsed();
    let final_exit = gateway.terminate().await.map(|s| s.code().unwrap_or(-1));

    let extras = Extras::count(&tally, &acked);
    if let Some(broker) = broker {
        broker.remove().await;
    }
    let mut violations = store_outcome.violations();
    if acked.is_empty() {
        violations.push("no event was acknowledged: the drill proved nothing".to_owned());
    }
    violations.extend(super::settle::violations(&settled, drill.settle));
    if final_exit != Some(0) {
        violations.push(format!(
            "the last gateway's SIGTERM exit was {final_exit:?}, not 0"
        ));
    }
    Ok(CrashReport {
        seed: drill.seed,
        kills: drill.kills,
        store: store_outcome,
        acknowledged: acked.len(),
        unacknowledged_sends: unacked.load(Ordering::SeqCst),
        delivered: acked.len() - settled.lost.len(),
        lost: settled.lost,
        missing_from_store: settled.missing,
        not_succeeded: settled.not_succeeded,
        delivered_unacknowledged: extras.delivered_unacknowledged,
        duplicates: extras.duplicates,
        duplicated_ids: extras.duplicated_ids,
        receiver_requests: extras.receiver_requests,
        receiver_ok: extras.receiver_ok,
        in_flight_at_kills,
        ingest_at_kills,
        restarts,
        settled_in,
        final_exit,
        elapsed: started.elapsed(),
        violations,
    })
}
