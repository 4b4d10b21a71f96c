//! What the fault drill found: the report, its check of each delivery against its
//! plan, and the violations it turns the findings into.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde_json::Value;

use super::super::{DrillReport, secs};
use super::RETRY_AFTER_S;
use super::plan::{Step, names};

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

impl FaultReport {
    /// Compares one delivery with its plan.
    pub(super) fn check(&mut self, id: &str, plan: &[Step], d: &Value) {
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
    pub(super) fn judge(&mut self) {
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
