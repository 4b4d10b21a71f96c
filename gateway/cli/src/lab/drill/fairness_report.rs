//! What the fairness drill found: the trickling endpoints' lateness on one node
//! and on several, and each node's share of the attempts.

use std::fmt;
use std::time::Duration;

use super::nodes::shares;
use super::{DrillReport, secs};

/// One run of the fairness drill.
#[derive(Debug, Clone)]
pub struct FairnessRun {
    pub nodes: usize,
    pub trickle_sent: usize,
    pub trickle_delivered: usize,
    /// Each trickle event's lateness at the receiver, sorted.
    pub lateness_ms: Vec<u64>,
    /// How long each trickle event took to be acknowledged (202), sorted: the
    /// ingest's part of the lateness.
    pub ack_ms: Vec<u64>,
    /// Backlog deliveries that had arrived when the run ended, of `backlog`.
    pub backlog_delivered: usize,
    /// Backlog deliveries that had arrived when the trickle ended (about: the
    /// trickle's own are taken off).
    pub backlog_during_trickle: usize,
    pub backlog: usize,
    pub attempts_per_node: Vec<u64>,
    pub elapsed: Duration,
}

impl FairnessRun {
    /// The `q` quantile of the lateness, in ms.
    pub fn lateness_quantile(&self, q: f64) -> Option<u64> {
        quantile(&self.lateness_ms, q)
    }
}

/// The `q` quantile of `sorted`.
pub(super) fn quantile(sorted: &[u64], q: f64) -> Option<u64> {
    let n = sorted.len();
    let i = ((n as f64 * q).ceil() as usize).clamp(1, n.max(1)) - 1;
    sorted.get(i).copied()
}

/// Both runs, and the checks that failed.
#[derive(Debug, Clone)]
pub struct FairnessReport {
    pub single: FairnessRun,
    pub cluster: FairnessRun,
    pub violations: Vec<String>,
}

impl DrillReport for FairnessReport {
    fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl fmt::Display for FairnessRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |ms: Option<u64>| ms.map_or_else(|| "-".to_owned(), |ms| format!("{ms} ms"));
        let q = |q| show(self.lateness_quantile(q));
        let ack = |q| show(quantile(&self.ack_ms, q));
        writeln!(f, "  on {} node(s):", self.nodes)?;
        writeln!(
            f,
            "    trickle lateness  p50 {}, p99 {}, max {} ({} of {} delivered)",
            q(0.5),
            q(0.99),
            q(1.0),
            self.trickle_delivered,
            self.trickle_sent
        )?;
        writeln!(
            f,
            "    of which ingest   202 after p50 {}, p99 {}",
            ack(0.5),
            ack(0.99)
        )?;
        writeln!(
            f,
            "    backlog           {} of {} delivered when the trickle ended, {} by the end",
            self.backlog_during_trickle, self.backlog, self.backlog_delivered
        )?;
        let shares: Vec<String> = shares(&self.attempts_per_node)
            .iter()
            .map(|s| format!("{s:.0} %"))
            .collect();
        writeln!(
            f,
            "    attempts per node {:?} ({})",
            self.attempts_per_node,
            shares.join(", ")
        )?;
        writeln!(f, "    time taken        {}", secs(self.elapsed))
    }
}

impl fmt::Display for FairnessReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "fairness drill")?;
        write!(f, "{}{}", self.single, self.cluster)?;
        if let (Some(one), Some(many)) = (
            self.single.lateness_quantile(0.99),
            self.cluster.lateness_quantile(0.99),
        ) {
            let ratio = many as f64 / one.max(1) as f64;
            writeln!(
                f,
                "  trickle p99 on {} nodes against 1: {ratio:.2}x",
                self.cluster.nodes
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_sorted_lateness() {
        let run = FairnessRun {
            nodes: 1,
            trickle_sent: 100,
            trickle_delivered: 100,
            lateness_ms: (1..=100).collect(),
            ack_ms: Vec::new(),
            backlog_delivered: 0,
            backlog_during_trickle: 0,
            backlog: 0,
            attempts_per_node: vec![1],
            elapsed: Duration::ZERO,
        };
        assert_eq!(run.lateness_quantile(0.5), Some(50));
        assert_eq!(run.lateness_quantile(0.99), Some(99));
        assert_eq!(run.lateness_quantile(1.0), Some(100));
        let empty = FairnessRun {
            lateness_ms: Vec::new(),
            ..run
        };
        assert_eq!(empty.lateness_quantile(0.99), None);
    }
}
