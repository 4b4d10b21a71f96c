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
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::api::{Api, fetch_deliveries, ingest_all};
use super::gateway::{GatewaySpec, rss_kib};
use super::receiver::{Arrival, Behavior, Receiver, Reply, ReplyBody};
use super::{DrillError, DrillReport, WorkDir, fresh_seed, secs};

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

/// One answer of the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A transient status: 5xx, 429 (with `Retry-After`), 307.
    Transient(u16),
    /// A 503 with a 1 MiB body.
    Big503,
    /// No answer for longer than the timeout.
    Hang,
    /// RST after reading the request.
    Reset,
    /// 200.
    Ok,
    /// 200 whose body trickles on past the timeout.
    SlowOk,
    /// 200 with a 4 MiB body.
    BigOk,
    /// A 4xx the gateway must give up on.
    Permanent(u16),
}

const TRANSIENT: [Step; 8] = [
    Step::Transient(500),
    Step::Transient(502),
    Step::Transient(503),
    Step::Transient(429),
    Step::Transient(307),
    Step::Big503,
    Step::Hang,
    Step::Reset,
];
const PERMANENT: [u16; 5] = [400, 401, 403, 404, 422];

impl Step {
    fn name(self) -> String {
        match self {
            Self::Transient(s) | Self::Permanent(s) => s.to_string(),
            Self::Big503 => "503-big".into(),
            Self::Hang => "hang".into(),
            Self::Reset => "reset".into(),
            Self::Ok => "200".into(),
            Self::SlowOk => "200-slow".into(),
            Self::BigOk => "200-big".into(),
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "503-big" => Self::Big503,
            "hang" => Self::Hang,
            "reset" => Self::Reset,
            "200" => Self::Ok,
            "200-slow" => Self::SlowOk,
            "200-big" => Self::BigOk,
            s => match s.parse().ok()? {
                s @ (400 | 401 | 403 | 404 | 422) => Self::Permanent(s),
                s => Self::Transient(s),
            },
        })
    }

    fn reply(self) -> Reply {
        let answer = |status, body| Reply::Answer {
            status,
            retry_after_s: (status == 429).then_some(RETRY_AFTER_S),
            delay: Duration::ZERO,
            body,
        };
        match self {
            Self::Transient(s) | Self::Permanent(s) => answer(s, ReplyBody::Small),
            Self::Big503 => answer(503, ReplyBody::Big(1 << 20)),
            Self::Hang => Reply::Hang(HANG),
            Self::Reset => Reply::Reset,
            Self::Ok => answer(200, ReplyBody::Small),
            Self::SlowOk => answer(
                200,
                ReplyBody::Slow {
                    chunks: 20,
                    every: Duration::from_millis(100),
                },
            ),
            Self::BigOk => answer(200, ReplyBody::Big(4 << 20)),
        }
    }

    /// The attempt-log status, error kind and verdict this step must produce.
    fn expected(self) -> (Option<u16>, Option<&'static str>, &'static str) {
        match self {
            Self::Transient(307) => (Some(307), Some("redirect"), "retry"),
            Self::Transient(s) => (Some(s), None, "retry"),
            Self::Big503 => (Some(503), None, "retry"),
            Self::Hang => (None, Some("timeout"), "retry"),
            Self::Reset => (None, Some("reset"), "retry"),
            Self::Ok | Self::SlowOk | Self::BigOk => (Some(200), None, "delivered"),
            Self::Permanent(s) => (Some(s), None, "give_up"),
        }
    }

    fn is_final_ok(self) -> bool {
        matches!(self, Self::Ok | Self::SlowOk | Self::BigOk)
    }
}

/// A random plan: 0-3 transient faults, then a final answer.
fn plan(rng: &mut StdRng) -> Vec<Step> {
    let faults = match rng.random_range(0..100) {
        0..30 => 0,
        30..60 => 1,
        60..85 => 2,
        _ => 3,
    };
    let mut steps: Vec<Step> = (0..faults)
        .map(|_| TRANSIENT[rng.random_range(0..TRANSIENT.len())])
        .collect();
    steps.push(match rng.random_range(0..100) {
        0..55 => Step::Ok,
        55..65 => Step::SlowOk,
        65..75 => Step::BigOk,
        _ => Step::Permanent(PERMANENT[rng.random_range(0..PERMANENT.len())]),
    });
    steps
}

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
    /// How long to wait for every event to finish.
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    settle: Duration,
    /// Seed of the plans [default: from the clock].
    #[arg(long)]
    seed: Option<u64>,
    /// Keep the data dir here instead of a scratch dir that is removed afterwards.
    #[arg(long)]
    work_dir: Option<PathBuf>,
}

impl FaultArgs {
    /// The drill these options describe, run against the `gateway` executable.
    pub fn drill(&self, gateway: PathBuf) -> FaultDrill {
        FaultDrill {
            gateway,
            events: usize::try_from(self.events).unwrap_or(usize::MAX),
            rss_growth_kib: self.rss_growth_mib * KIB,
            settle: self.settle,
            seed: self.seed.unwrap_or_else(fresh_seed),
            work_dir: self.work_dir.clone(),
        }
    }

    /// One line on what is about to happen.
    pub fn describe(&self) -> String {
        format!(
            "fault drill: {} events, each with a plan of faults; RSS may grow {} MiB at most",
            self.events, self.rss_growth_mib
        )
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

/// What the fault drill found.
#[derive(Debug, Clone)]
pub struct FaultReport {
    pub seed: u64,
    pub events: usize,
    /// Events that ended succeeded, and dead.
    pub succeeded: usize,
    pub dead: usize,
    /// Dead deliveries by `dead_reason`.
    pub dead_reasons: BTreeMap<String, usize>,
    /// Events the receiver never saw.
    pub lost: Vec<String>,
    /// Events that did not end as their plan says (one line each).
    pub wrong_outcomes: Vec<String>,
    /// Attempt-log entries that do not match their plan step (one line each).
    pub wrong_attempts: Vec<String>,
    /// Answers served, by step.
    pub served: BTreeMap<String, u64>,
    /// Attempts made in all.
    pub attempts: u64,
    /// The shortest delay the gateway chose after a 429 (ms).
    pub min_delay_after_429_ms: Option<u64>,
    /// The gateway's RSS: after setup, at its highest, at the end (KiB).
    pub rss_baseline_kib: u64,
    pub rss_peak_kib: u64,
    pub rss_end_kib: u64,
    pub rss_growth_limit_kib: u64,
    pub rss_samples: u64,
    /// Time from the first event until every event had finished.
    pub finished_in: Duration,
    pub elapsed: Duration,
    pub violations: Vec<String>,
}

impl DrillReport for FaultReport {
    fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl fmt::Display for FaultReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "fault drill (seed {})", self.seed)?;
        let served: Vec<String> = self
            .served
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        writeln!(f, "  answers served     {}", served.join(", "))?;
        writeln!(f, "  attempts           {} in all", self.attempts)?;
        let reasons: Vec<String> = self
            .dead_reasons
            .iter()
            .map(|(k, n)| format!("{k}: {n}"))
            .collect();
        writeln!(
            f,
            "  outcome            {} of {} succeeded, {} dead ({}) in {}",
            self.succeeded,
            self.events,
            self.dead,
            reasons.join(", "),
            secs(self.finished_in)
        )?;
        writeln!(
            f,
            "  as planned         {} lost, {} wrong outcomes, {} attempt-log mismatches",
            self.lost.len(),
            self.wrong_outcomes.len(),
            self.wrong_attempts.len()
        )?;
        if let Some(d) = self.min_delay_after_429_ms {
            writeln!(
                f,
                "  after a 429        shortest delay {d} ms (Retry-After: {RETRY_AFTER_S} s)"
            )?;
        }
        writeln!(
            f,
            "  gateway RSS        {} MiB after setup, {} MiB at peak, {} MiB at the end ({} samples; growth limit {} MiB)",
            mib(self.rss_baseline_kib),
            mib(self.rss_peak_kib),
            mib(self.rss_end_kib),
            self.rss_samples,
            mib(self.rss_growth_limit_kib)
        )?;
        writeln!(f, "  time taken         {}", secs(self.elapsed))
    }
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

/// Runs the fault drill.
///
/// # Errors
/// When the drill cannot run: the gateway does not start, setup calls fail.
pub async fn run(drill: &FaultDrill) -> Result<FaultReport, DrillError> {
    let started = Instant::now();
    let work = WorkDir::new(drill.work_dir.as_deref(), "fault")?;
    let mut spec = GatewaySpec::new(drill.gateway.clone(), work.data_dir());
    // sled's page cache (64 MiB by default) fills as data grows; a small one keeps
    // the RSS bound about what faults might pile up (bodies, hung connections).
    spec.env
        .push(("HOOKGATE_CACHE_CAPACITY".into(), CACHE_CAPACITY.into()));
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
    let api = Api::new(gateway.addr, &spec.admin).setup(&endpoint).await?;

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

impl FaultReport {
    /// Compares one delivery with its plan.
    fn check(&mut self, id: &str, plan: &[Step], d: &Value) {
        let last = plan.last().copied().unwrap_or(Step::Ok);
        let state = d["state"].as_str().unwrap_or_default();
        let reason = d["dead_reason"].as_str();
        match state {
            "succeeded" => self.succeeded += 1,
            "dead" => {
                self.dead += 1;
                *self
                    .dead_reasons
                    .entry(reason.unwrap_or("?").to_owned())
                    .or_default() += 1;
            }
            _ => {}
        }
        let want = if last.is_final_ok() {
            ("succeeded", None)
        } else {
            ("dead", Some("give_up"))
        };
        if (state, reason) != want {
            self.wrong_outcomes.push(format!(
                "{id}: plan {:?} ended {state} ({reason:?}), expected {} ({:?})",
                names(plan),
                want.0,
                want.1
            ));
        }
        let attempts = d["attempts"].as_u64().unwrap_or(0);
        self.attempts += attempts;
        if attempts != plan.len() as u64 {
            self.wrong_outcomes.push(format!(
                "{id}: plan {:?} took {attempts} attempts, expected {}",
                names(plan),
                plan.len()
            ));
        }
        let log = d["attempt_log"].as_array().map_or(&[][..], Vec::as_slice);
        for (entry, step) in log.iter().zip(plan) {
            let (status, kind, verdict) = step.expected();
            let got_status = entry["status"].as_u64().and_then(|s| u16::try_from(s).ok());
            let got_kind = entry["error_kind"].as_str();
            let got_verdict = entry["verdict"].as_str().unwrap_or_default();
            let kind_ok = kind.is_none_or(|k| got_kind == Some(k));
            if got_status != status || !kind_ok || got_verdict != verdict {
                self.wrong_attempts.push(format!(
                    "{id} attempt {}: step {} gave status {got_status:?}, error {got_kind:?}, verdict {got_verdict}",
                    entry["attempt"],
                    step.name()
                ));
            }
            if *step == Step::Transient(429) {
                let delay = entry["delay_ms"].as_u64().unwrap_or(0);
                self.min_delay_after_429_ms =
                    Some(self.min_delay_after_429_ms.map_or(delay, |m| m.min(delay)));
                if delay < RETRY_AFTER_S * 1000 {
                    self.wrong_attempts.push(format!(
                        "{id} attempt {}: retried {delay} ms after a 429 with Retry-After: {RETRY_AFTER_S}",
                        entry["attempt"]
                    ));
                }
            }
        }
    }

    /// Turns what was found into violations.
    fn judge(&mut self) {
        let sample = |v: &[String]| v.iter().take(5).cloned().collect::<Vec<_>>().join("; ");
        if !self.lost.is_empty() {
            self.violations.push(format!(
                "{} events never reached the receiver: {}",
                self.lost.len(),
                sample(&self.lost)
            ));
        }
        if !self.wrong_outcomes.is_empty() {
            self.violations.push(format!(
                "{} events did not end as planned: {}",
                self.wrong_outcomes.len(),
                sample(&self.wrong_outcomes)
            ));
        }
        if !self.wrong_attempts.is_empty() {
            self.violations.push(format!(
                "{} attempts were not recorded as their step says: {}",
                self.wrong_attempts.len(),
                sample(&self.wrong_attempts)
            ));
        }
        if self.rss_baseline_kib == 0 {
            self.violations
                .push("the gateway's RSS could not be read from /proc".to_owned());
        }
        let growth = self.rss_peak_kib.saturating_sub(self.rss_baseline_kib);
        if growth > self.rss_growth_limit_kib {
            self.violations.push(format!(
                "the gateway's RSS grew {} MiB over its baseline; the bound is {} MiB",
                mib(growth),
                mib(self.rss_growth_limit_kib)
            ));
        }
    }
}

fn names(plan: &[Step]) -> Vec<String> {
    plan.iter().map(|s| s.name()).collect()
}

/// Answers attempt n of an event with step n of the plan in its payload (200 when
/// the plan is missing or already used up: such an extra attempt shows up in the
/// attempt count).
fn follow_plan() -> Behavior {
    Arc::new(|arrival: &Arrival<'_>| {
        let payload: Value = serde_json::from_slice(arrival.body).unwrap_or(Value::Null);
        payload["plan"]
            .get(arrival.attempt as usize)
            .and_then(Value::as_str)
            .and_then(Step::parse)
            .unwrap_or(Step::Ok)
            .reply()
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names_round_trip() {
        let all = TRANSIENT
            .into_iter()
            .chain([Step::Ok, Step::SlowOk, Step::BigOk])
            .chain(PERMANENT.map(Step::Permanent));
        for step in all {
            assert_eq!(Step::parse(&step.name()), Some(step), "{step:?}");
        }
    }

    #[test]
    fn plans_end_in_a_final_answer_after_at_most_three_faults() {
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..1000 {
            let p = plan(&mut rng);
            assert!((1..=4).contains(&p.len()), "{p:?}");
            let (last, faults) = p.split_last().unwrap();
            assert!(last.is_final_ok() || matches!(last, Step::Permanent(_)));
            assert!(faults.iter().all(|s| TRANSIENT.contains(s)), "{p:?}");
        }
    }
}
