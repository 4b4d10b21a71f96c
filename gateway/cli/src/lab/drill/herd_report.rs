//! What the herd drill found: whether the retries flooded the recovering
//! receiver, and the per-second histogram of what it saw.

use std::fmt;
use std::time::Duration;

use super::receiver::PerSecond;
use super::{DrillReport, secs};

/// Width of the longest histogram bar.
const BAR: u64 = 50;

/// What the herd drill found.
#[derive(Debug, Clone)]
pub struct HerdReport {
    pub seed: u64,
    pub events: usize,
    pub max_in_flight: u32,
    pub rate_limit_per_s: u32,
    /// Deliveries that had failed at least once when the receiver recovered.
    pub failed_before_recovery: usize,
    /// When the receiver recovered, since its start.
    pub recovered_at: Duration,
    /// Events answered 2xx by the receiver.
    pub delivered: usize,
    /// Deliveries the API shows succeeded, and dead.
    pub succeeded_in_api: usize,
    pub dead_in_api: usize,
    /// The most requests the receiver had in progress at once.
    pub max_concurrency: usize,
    /// The most requests in one second.
    pub max_per_second: u64,
    /// Requests and 2xx answers per second since the receiver started.
    pub histogram: Vec<PerSecond>,
    /// Attempts each gateway made.
    pub attempts_per_node: Vec<u64>,
    pub requests: u64,
    /// Time from the recovery until everything was delivered.
    pub drained_in: Duration,
    pub elapsed: Duration,
    pub violations: Vec<String>,
}

impl DrillReport for HerdReport {
    fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl fmt::Display for HerdReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "herd drill (seed {})", self.seed)?;
        writeln!(
            f,
            "  failed together    {} of {} deliveries before the receiver recovered at {}",
            self.failed_before_recovery,
            self.events,
            secs(self.recovered_at)
        )?;
        writeln!(
            f,
            "  delivered          {} of {} ({} succeeded, {} dead in the API) in {} after recovery",
            self.delivered,
            self.events,
            self.succeeded_in_api,
            self.dead_in_api,
            secs(self.drained_in)
        )?;
        writeln!(
            f,
            "  concurrency        at most {} at the receiver (max_in_flight {})",
            self.max_concurrency, self.max_in_flight
        )?;
        writeln!(
            f,
            "  rate               at most {} requests in a second (rate_limit_per_s {})",
            self.max_per_second, self.rate_limit_per_s
        )?;
        writeln!(f, "  requests           {} in all", self.requests)?;
        if self.attempts_per_node.len() > 1 {
            let shares = super::nodes::shares(&self.attempts_per_node);
            let shares: Vec<String> = shares.iter().map(|s| format!("{s:.0} %")).collect();
            writeln!(
                f,
                "  attempts per node  {:?} ({})",
                self.attempts_per_node,
                shares.join(", ")
            )?;
        }
        writeln!(
            f,
            "  per second since the receiver started (requests arrived, 2xx answers given):"
        )?;
        let recovered = self.recovered_at.as_secs();
        for (s, n) in self.histogram.iter().enumerate() {
            let bar = n.requests * BAR / u64::from(self.rate_limit_per_s.max(1));
            let bar = "#".repeat(usize::try_from(bar.min(BAR * 2)).unwrap_or(0));
            let mark = if s as u64 == recovered {
                "  <- recovered"
            } else {
                ""
            };
            writeln!(f, "    {s:>4}s {:>4} {:>4}  {bar}{mark}", n.requests, n.ok)?;
        }
        writeln!(f, "  time taken         {}", secs(self.elapsed))
    }
}
