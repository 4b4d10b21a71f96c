//! What the chaos receiver counts: requests, the answers given, duplicates by
//! `webhook-id` and signature failures; the per-second status line and the summary.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

/// How one request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with this status.
    Status(u16),
    /// The connection was reset without an answer.
    Reset,
    /// Never answered.
    Hang,
}

/// The counters of one run, shared by every connection.
#[derive(Debug)]
pub struct Tally {
    started: Instant,
    state: Mutex<TallyState>,
}

#[derive(Debug, Default)]
struct TallyState {
    requests: u64,
    by_status: BTreeMap<u16, u64>,
    resets: u64,
    hangs: u64,
    duplicates: u64,
    redeliveries: u64,
    signature_failures: u64,
    seen: HashSet<String>,
    acknowledged: HashSet<String>,
}

/// The counters at one moment; the `--json-summary` object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// Every request read, whatever happened to it.
    pub requests: u64,
    /// Answers given, by status.
    pub by_status: BTreeMap<u16, u64>,
    /// Connections reset instead of answering.
    pub resets: u64,
    /// Requests never answered.
    pub hangs: u64,
    /// Requests whose `webhook-id` had already been answered with a 2xx: work a
    /// receiver that does not deduplicate would do twice.
    pub duplicates: u64,
    /// Requests whose `webhook-id` had been seen before, whatever it was answered:
    /// retries and duplicates together.
    pub redeliveries: u64,
    /// Distinct `webhook-id`s seen.
    pub distinct_ids: u64,
    /// Requests whose Standard Webhooks signature or timestamp did not verify
    /// (counted only with `--verify-secret`).
    pub signature_failures: u64,
    /// Milliseconds since the receiver started.
    pub elapsed_ms: u64,
}

impl Default for Tally {
    fn default() -> Self {
        Self::new()
    }
}

impl Tally {
    /// Empty counters; the clock starts now.
    pub fn new() -> Self {
        Self {
            started: Instant::now(),
            state: Mutex::default(),
        }
    }

    /// Counts a request as it arrives; `signature_ok` is `None` when nothing is
    /// verified. Returns whether it is a duplicate.
    pub fn arrived(&self, webhook_id: Option<&str>, signature_ok: Option<bool>) -> bool {
        let mut st = self.lock();
        st.requests += 1;
        if signature_ok == Some(false) {
            st.signature_failures += 1;
        }
        let Some(id) = webhook_id else { return false };
        if !st.seen.insert(id.to_owned()) {
            st.redeliveries += 1;
        }
        let duplicate = st.acknowledged.contains(id);
        if duplicate {
            st.duplicates += 1;
        }
        duplicate
    }

    /// Counts how a request ended; a 2xx acknowledges its `webhook-id`.
    pub fn ended(&self, webhook_id: Option<&str>, outcome: Outcome) {
        let mut st = self.lock();
        match outcome {
            Outcome::Status(status) => {
                *st.by_status.entry(status).or_default() += 1;
                if let Some(id) = webhook_id.filter(|_| (200..300).contains(&status)) {
                    st.acknowledged.insert(id.to_owned());
                }
            }
            Outcome::Reset => st.resets += 1,
            Outcome::Hang => st.hangs += 1,
        }
    }

    /// The counters now.
    pub fn snapshot(&self) -> Snapshot {
        let st = self.lock();
        Snapshot {
            requests: st.requests,
            by_status: st.by_status.clone(),
            resets: st.resets,
            hangs: st.hangs,
            duplicates: st.duplicates,
            redeliveries: st.redeliveries,
            distinct_ids: st.seen.len() as u64,
            signature_failures: st.signature_failures,
            elapsed_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TallyState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Snapshot {
    /// The answers given, as `200:84 503:24 reset:2 hang:1`.
    pub fn mix(&self) -> String {
        let mut out = String::new();
        for (status, n) in &self.by_status {
            let _ = write!(out, "{status}:{n} ");
        }
        if self.resets > 0 {
            let _ = write!(out, "reset:{} ", self.resets);
        }
        if self.hangs > 0 {
            let _ = write!(out, "hang:{} ", self.hangs);
        }
        let out = out.trim_end();
        if out.is_empty() {
            "-".to_owned()
        } else {
            out.to_owned()
        }
    }

    /// One status line: totals, the rate since `previous`, the mix, duplicates and
    /// signature failures.
    pub fn status_line(&self, previous: &Snapshot) -> String {
        let secs = Duration::from_millis(self.elapsed_ms.saturating_sub(previous.elapsed_ms));
        let rate = (self.requests - previous.requests) as f64 / secs.as_secs_f64().max(0.001);
        format!(
            "[{:>4}s] {} requests ({rate:.0}/s) | {} | duplicates {} | signature failures {}",
            self.elapsed_ms / 1000,
            self.requests,
            self.mix(),
            self.duplicates,
            self.signature_failures,
        )
    }

    /// The final summary, for people.
    pub fn summary(&self, verifying: bool) -> String {
        let mut out = format!(
            "chaos-receiver summary after {:.1} s\n",
            self.elapsed_ms as f64 / 1000.0
        );
        let mut row = |name: &str, value: String| {
            let _ = writeln!(out, "  {name:<20} {value}");
        };
        row("requests", self.requests.to_string());
        for (status, n) in &self.by_status {
            row(&format!("status {status}"), n.to_string());
        }
        row("resets", self.resets.to_string());
        row("hangs", self.hangs.to_string());
        row("distinct webhook-ids", self.distinct_ids.to_string());
        row(
            "duplicates",
            format!("{} (webhook-id already answered 2xx)", self.duplicates),
        );
        row(
            "redeliveries",
            format!("{} (webhook-id seen before)", self.redeliveries),
        );
        let sig = if verifying {
            self.signature_failures.to_string()
        } else {
            "not checked (no --verify-secret)".to_owned()
        };
        row("signature failures", sig);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_is_an_id_already_answered_2xx() {
        let t = Tally::new();
        assert!(!t.arrived(Some("evt_1"), Some(true)));
        t.ended(Some("evt_1"), Outcome::Status(503));
        assert!(!t.arrived(Some("evt_1"), Some(true)));
        t.ended(Some("evt_1"), Outcome::Status(200));
        assert!(t.arrived(Some("evt_1"), Some(false)));
        t.ended(Some("evt_1"), Outcome::Reset);
        t.arrived(None, None);
        t.ended(None, Outcome::Hang);
        let s = t.snapshot();
        assert_eq!(s.requests, 4);
        assert_eq!((s.duplicates, s.redeliveries, s.distinct_ids), (1, 2, 1));
        assert_eq!(s.signature_failures, 1);
        assert_eq!(s.mix(), "200:1 503:1 reset:1 hang:1");
    }
}
