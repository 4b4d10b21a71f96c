//! What the disk-full drill found: the run's observations judged against its
//! checks, and the summary printed at the end of a run.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use super::disk_full_load::{Answer, Outcome};
use super::disk_full_watch::Probe;
use super::settle::{Extras, Settled};
use super::{DrillReport, secs};

/// How long the gateway may take, once space is back, to answer `/healthz` 200
/// and acknowledge an event again.
pub(super) const RECOVER_LIMIT: Duration = Duration::from_secs(30);
/// Requests per `webhook-id` allowed at most: the receiver answers 200 at once
/// to every request, so one, and one more for an outcome the full disk kept
/// from being recorded.
const MAX_REQUESTS_PER_ID: u32 = 2;

/// What a run observed, before it is judged.
pub(super) struct Observed {
    pub(super) answers: Vec<Answer>,
    /// When the filler began, when the disk was full, when it was freed.
    pub(super) fill_at: Instant,
    pub(super) full_at: Instant,
    pub(super) freed_at: Instant,
    pub(super) filler_bytes: u64,
    pub(super) in_flight_at_fill: usize,
    /// Requests that reached the receiver from the first refusal until the
    /// disk was freed.
    pub(super) requests_while_full: u64,
    /// Probes from the disk being full until it was freed.
    pub(super) full_probes: Vec<Probe>,
    pub(super) healthy_after: Option<Duration>,
    pub(super) acked_after: Option<Duration>,
    /// `hookgate_store_failing` once ingest acknowledged again.
    pub(super) failing_after_recovery: Option<f64>,
    pub(super) store_errors: Option<u64>,
    pub(super) settled: Settled,
    pub(super) settle: Duration,
    pub(super) extras: Extras,
    /// The most requests one `webhook-id` got, and how many ids got two or more.
    pub(super) max_requests_per_id: u32,
    pub(super) ids_repeated: usize,
    /// Ids the receiver got that no 202 named: events stored though refused
    /// (the first few with what their ingest call got).
    pub(super) delivered_unacknowledged: Vec<String>,
    /// Whether the gateway started at the beginning still ran at the end.
    pub(super) same_process: bool,
    pub(super) final_exit: Option<i32>,
    pub(super) settled_in: Duration,
}

/// The drill's settings, as the report states them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Settings {
    pub(super) seed: u64,
    pub(super) disk_mib: u64,
    pub(super) max_in_flight: u32,
    pub(super) full_for: Duration,
    pub(super) pid: u32,
}

/// What the disk-full drill found.
#[derive(Debug, Clone)]
pub struct DiskFullReport {
    pub seed: u64,
    pub disk_mib: u64,
    pub filler_mib: f64,
    /// How long writing the filler took.
    pub fill_took: Duration,
    /// The endpoint's `max_in_flight`: the bound on requests while full.
    pub max_in_flight: u32,
    pub full_for: Duration,
    pub pid: u32,
    /// Events acknowledged in all, and before the fill, while full (from the
    /// fill's start until it was freed) and after.
    pub acknowledged: usize,
    pub acked_before_fill: usize,
    pub acked_while_full: usize,
    pub acked_after_free: usize,
    /// 503 answers, by error code.
    pub refused: BTreeMap<String, usize>,
    /// Answers neither 202 nor 503, or no answer, one line each.
    pub other_answers: Vec<String>,
    /// From the fill's start to the first 503.
    pub first_refusal: Option<Duration>,
    pub in_flight_at_fill: usize,
    pub requests_while_full: u64,
    /// `/healthz` while full: 200s, 503s, 503s after the first refusal, no answer.
    pub healthz_ok_while_full: usize,
    pub healthz_503_while_full: usize,
    pub healthz_503_after_refusal: usize,
    pub healthz_silent_while_full: usize,
    pub failing_seen_while_full: bool,
    pub failing_after_recovery: Option<f64>,
    pub store_errors: Option<u64>,
    pub healthy_after: Option<Duration>,
    pub acked_after: Option<Duration>,
    pub delivered: usize,
    pub settled: Settled,
    pub extras: Extras,
    pub max_requests_per_id: u32,
    pub ids_repeated: usize,
    /// Events delivered though no 202 named them: every call was answered,
    /// so each was answered 503 and stored nevertheless (allowed: a sender
    /// that retries it makes a duplicate, which at-least-once allows).
    pub delivered_unacknowledged: Vec<String>,
    pub same_process: bool,
    pub final_exit: Option<i32>,
    pub settled_in: Duration,
    pub elapsed: Duration,
    pub violations: Vec<String>,
}

impl DrillReport for DiskFullReport {
    fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl DiskFullReport {
    /// Judges what a run observed.
    pub(super) fn judge(set: Settings, seen: Observed, elapsed: Duration) -> Self {
        let acked_at = |keep: &dyn Fn(&Answer) -> bool| {
            seen.answers
                .iter()
                .filter(|a| matches!(a.outcome, Outcome::Acked(_)) && keep(a))
                .count()
        };
        let mut refused = BTreeMap::new();
        let mut other_answers = Vec::new();
        for a in &seen.answers {
            match &a.outcome {
                Outcome::Acked(_) => {}
                Outcome::Refused(code) => *refused.entry(code.clone()).or_insert(0) += 1,
                Outcome::Other(status, body) => other_answers.push(format!("{status}: {body}")),
                Outcome::NoAnswer(why) => other_answers.push(format!("no answer: {why}")),
            }
        }
        let first_refusal_at = seen
            .answers
            .iter()
            .filter(|a| a.sent >= seen.fill_at && matches!(a.outcome, Outcome::Refused(_)))
            .map(|a| a.answered)
            .min();
        let count_probes =
            |keep: &dyn Fn(&Probe) -> bool| seen.full_probes.iter().filter(|p| keep(p)).count();
        let after_refusal = |p: &Probe| first_refusal_at.is_some_and(|r| p.at >= r);
        let mut report = Self {
            seed: set.seed,
            disk_mib: set.disk_mib,
            filler_mib: seen.filler_bytes as f64 / (1024.0 * 1024.0),
            fill_took: seen.full_at.saturating_duration_since(seen.fill_at),
            max_in_flight: set.max_in_flight,
            full_for: set.full_for,
            pid: set.pid,
            acknowledged: acked_at(&|_| true),
            acked_before_fill: acked_at(&|a| a.answered < seen.fill_at),
            acked_while_full: acked_at(&|a| a.answered >= seen.fill_at && a.sent < seen.freed_at),
            acked_after_free: acked_at(&|a| a.sent >= seen.freed_at),
            refused,
            other_answers,
            first_refusal: first_refusal_at.map(|r| r.saturating_duration_since(seen.fill_at)),
            in_flight_at_fill: seen.in_flight_at_fill,
            requests_while_full: seen.requests_while_full,
            healthz_ok_while_full: count_probes(&|p| p.healthz == Some(200)),
            healthz_503_while_full: count_probes(&|p| p.healthz == Some(503)),
            healthz_503_after_refusal: count_probes(&|p| {
                p.healthz == Some(503) && after_refusal(p)
            }),
            healthz_silent_while_full: count_probes(&|p| p.healthz.is_none()),
            failing_seen_while_full: seen.full_probes.iter().any(|p| p.failing == Some(1.0)),
            failing_after_recovery: seen.failing_after_recovery,
            store_errors: seen.store_errors,
            healthy_after: seen.healthy_after,
            acked_after: seen.acked_after,
            delivered: 0,
            settled: seen.settled,
            extras: seen.extras,
            max_requests_per_id: seen.max_requests_per_id,
            ids_repeated: seen.ids_repeated,
            delivered_unacknowledged: seen.delivered_unacknowledged,
            same_process: seen.same_process,
            final_exit: seen.final_exit,
            settled_in: seen.settled_in,
            elapsed,
            violations: Vec::new(),
        };
        report.delivered = report.acknowledged - report.settled.lost.len();
        report.violations = report.checks(first_refusal_at.is_some(), seen.settle);
        report
    }

    /// The checks that failed, one line each.
    fn checks(&self, refused_while_full: bool, settle: Duration) -> Vec<String> {
        let mut out = Vec::new();
        if self.acked_before_fill == 0 {
            out.push("no event was acknowledged before the fill: the drill proved nothing".into());
        }
        if !refused_while_full {
            out.push("ingest never answered 503 once the disk was full".into());
        }
        if !self.other_answers.is_empty() {
            out.push(format!(
                "{} ingest answers were neither 202 nor 503, e.g. {:?}",
                self.other_answers.len(),
                &self.other_answers[..self.other_answers.len().min(3)]
            ));
        }
        out.extend(super::settle::violations(&self.settled, settle));
        if self.max_requests_per_id > MAX_REQUESTS_PER_ID {
            out.push(format!(
                "a webhook-id reached the receiver {} times (at most {MAX_REQUESTS_PER_ID} allowed)",
                self.max_requests_per_id
            ));
        }
        if self.requests_while_full > u64::from(self.max_in_flight) {
            out.push(format!(
                "{} requests reached the receiver while the store refused (at most max_in_flight, {}, allowed)",
                self.requests_while_full, self.max_in_flight
            ));
        }
        if refused_while_full && self.healthz_503_after_refusal == 0 {
            out.push(format!(
                "/healthz never answered 503 while the disk was full ({} answers 200)",
                self.healthz_ok_while_full
            ));
        }
        if refused_while_full && !self.failing_seen_while_full {
            out.push("hookgate_store_failing was never 1 while the disk was full".into());
        }
        match self.healthy_after {
            None => out.push(format!(
                "/healthz did not answer 200 within {} of the space coming back",
                secs(RECOVER_LIMIT)
            )),
            Some(_) if self.failing_after_recovery != Some(0.0) => out.push(format!(
                "hookgate_store_failing was {:?} after recovery, not 0",
                self.failing_after_recovery
            )),
            Some(_) => {}
        }
        if self.acked_after.is_none() {
            out.push(format!(
                "ingest acknowledged nothing within {} of the space coming back",
                secs(RECOVER_LIMIT)
            ));
        }
        if !self.same_process {
            out.push(format!(
                "the gateway (pid {}) did not run to the end",
                self.pid
            ));
        }
        if self.final_exit != Some(0) {
            out.push(format!(
                "the gateway's SIGTERM exit was {:?}, not 0",
                self.final_exit
            ));
        }
        out
    }
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("never".to_owned(), |d| format!("{} ms", d.as_millis()))
}

impl fmt::Display for DiskFullReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "disk-full drill (seed {})", self.seed)?;
        writeln!(
            f,
            "  disk               {} MiB tmpfs, filled with {:.1} MiB (in {} ms), full for {}; {} requests in flight at the fill",
            self.disk_mib,
            self.filler_mib,
            self.fill_took.as_millis(),
            secs(self.full_for),
            self.in_flight_at_fill
        )?;
        writeln!(
            f,
            "  acknowledged       {} events: {} before the fill, {} while full, {} after the space came back",
            self.acknowledged, self.acked_before_fill, self.acked_while_full, self.acked_after_free
        )?;
        let refused: Vec<String> = self
            .refused
            .iter()
            .map(|(code, n)| format!("{n} {code}"))
            .collect();
        writeln!(
            f,
            "  refused            503: {}; first {} after the fill began; {} other answers",
            if refused.is_empty() {
                "none".to_owned()
            } else {
                refused.join(", ")
            },
            ms(self.first_refusal),
            self.other_answers.len()
        )?;
        writeln!(
            f,
            "  while full         {} requests reached the receiver after the first refusal (bound: max_in_flight {})",
            self.requests_while_full, self.max_in_flight
        )?;
        writeln!(
            f,
            "  /healthz full      {} x 503 ({} after the first refusal), {} x 200, {} unanswered; hookgate_store_failing 1 seen: {}",
            self.healthz_503_while_full,
            self.healthz_503_after_refusal,
            self.healthz_ok_while_full,
            self.healthz_silent_while_full,
            if self.failing_seen_while_full {
                "yes"
            } else {
                "no"
            }
        )?;
        writeln!(
            f,
            "  recovered          /healthz 200 {} and ingest 202 {} after the space came back (same process, pid {}: {})",
            ms(self.healthy_after),
            ms(self.acked_after),
            self.pid,
            if self.same_process { "yes" } else { "no" }
        )?;
        if let Some(n) = self.store_errors {
            writeln!(
                f,
                "  store errors       {n} counted (hookgate_store_errors_total)"
            )?;
        }
        writeln!(
            f,
            "  delivered          {} of {} acknowledged, {} lost, {} missing from the store, {} not shown succeeded",
            self.delivered,
            self.acknowledged,
            self.settled.lost.len(),
            self.settled.missing.len(),
            self.settled.not_succeeded.len()
        )?;
        writeln!(
            f,
            "  per webhook-id     at most {} requests; {} ids sent more than once; {} extra 2xx",
            self.max_requests_per_id, self.ids_repeated, self.extras.duplicates
        )?;
        if !self.delivered_unacknowledged.is_empty() {
            let ids = &self.delivered_unacknowledged;
            writeln!(
                f,
                "  also delivered     {} events no 202 named (refused, yet stored):",
                ids.len()
            )?;
            for id in ids.iter().take(3) {
                writeln!(f, "                     {id}")?;
            }
        }
        writeln!(
            f,
            "  receiver           {} requests, {} answered 2xx",
            self.extras.receiver_requests, self.extras.receiver_ok
        )?;
        writeln!(
            f,
            "  settled            {} after ingest stopped",
            secs(self.settled_in)
        )?;
        let exit = self
            .final_exit
            .map_or("none (killed)".to_owned(), |c| c.to_string());
        writeln!(f, "  final SIGTERM exit {exit}")?;
        writeln!(f, "  time taken         {}", secs(self.elapsed))
    }
}
