//! What the cluster drill found, its checks, and its summary as printed at the end
//! of a run.

use std::fmt;
use std::time::Duration;

use super::cluster_kill::AttemptLogs;
use super::crash_store::StoreOutcome;
use super::settle::{Extras, Settled};
use super::{DrillReport, secs};

/// One kill of a node.
#[derive(Debug, Clone)]
pub struct Kill {
    /// The node killed (and started again), and the id it ran under.
    pub node: String,
    pub node_id: String,
    /// How long the drill waited for it to hold leases.
    pub waited: Duration,
    /// The leases it reported itself just before the kill.
    pub leases: u64,
    /// The `webhook-id`s of its requests in progress at the receiver at the kill.
    pub cut: Vec<String>,
    /// Ingest calls to it awaiting their answer at the kill.
    pub ingest_calls: usize,
    /// When it was killed, since the receiver's start.
    pub at: Duration,
    /// From the kill until it listened again.
    pub restart: Duration,
    /// For each id in `cut`, how long after the kill it arrived again (`None`:
    /// not within the lease plus the slack after the last kill).
    pub reattempted: Vec<Option<Duration>>,
}

impl Kill {
    /// What this kill may add to the duplicates: each attempt in flight on the
    /// node (by its own count or the receiver's, whichever is larger) may be made
    /// again, and each ingest call cut may have committed without its 202.
    pub fn duplicate_allowance(&self) -> u64 {
        self.leases.max(self.cut.len() as u64) + self.ingest_calls as u64
    }
}

/// What the cluster drill found.
#[derive(Debug)]
pub struct ClusterReport {
    pub seed: u64,
    /// The node ids (at the end).
    pub nodes: Vec<String>,
    pub store: StoreOutcome,
    /// The endpoint's timeout, and the lease (timeout plus margin).
    pub timeout: Duration,
    pub lease: Duration,
    /// How much later than the lease a cut request may be attempted again.
    pub slack: Duration,
    pub kills: Vec<Kill>,
    /// Events acknowledged (202), over all nodes.
    pub acknowledged: usize,
    /// Sends that got no 202.
    pub unacknowledged_sends: u64,
    /// Acknowledged events the receiver answered 2xx at least once.
    pub delivered: usize,
    /// What was still wrong when the wait for delivery ended.
    pub settled: Settled,
    /// That wait's limit.
    pub settle: Duration,
    /// Duplicates, deliveries of unacknowledged events, receiver totals.
    pub extras: Extras,
    /// Attempts per node, and their lateness, from the attempt logs.
    pub attempt_logs: AttemptLogs,
    /// The node ids each node's `GET /v1/cluster` listed at the end.
    pub cluster_view: Vec<(String, Vec<String>)>,
    /// Time from healing the receiver until everything was delivered.
    pub settled_in: Duration,
    /// Each node's exit code on SIGTERM (`None`: it did not exit in time).
    pub final_exits: Vec<(String, Option<i32>)>,
    pub elapsed: Duration,
    pub violations: Vec<String>,
}

impl DrillReport for ClusterReport {
    fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl ClusterReport {
    /// The most duplicates the kills allow.
    pub fn duplicate_bound(&self) -> u64 {
        self.kills.iter().map(Kill::duplicate_allowance).sum()
    }

    /// Requests cut by kills, and how many of them were attempted again.
    pub fn cut_and_reattempted(&self) -> (usize, usize) {
        let cut = self.kills.iter().map(|k| k.cut.len()).sum();
        let again = self.kills.iter().flat_map(|k| &k.reattempted);
        (cut, again.filter(|d| d.is_some()).count())
    }

    /// The report with its violations filled in.
    pub(super) fn checked(mut self) -> Self {
        let mut v = Vec::new();
        if self.acknowledged == 0 {
            v.push("no event was acknowledged: the drill proved nothing".to_owned());
        }
        v.extend(super::settle::violations(&self.settled, self.settle));
        if self.extras.duplicates > self.duplicate_bound() {
            v.push(format!(
                "{} duplicates, more than the {} attempts in flight on killed nodes and ingest calls cut",
                self.extras.duplicates,
                self.duplicate_bound()
            ));
        }
        let (cut, _) = self.cut_and_reattempted();
        if cut == 0 {
            v.push("no kill cut a request in progress: lease expiry went unobserved".to_owned());
        }
        let limit = self.lease + self.slack;
        for kill in &self.kills {
            for (id, delay) in kill.cut.iter().zip(&kill.reattempted) {
                match delay {
                    None => v.push(format!(
                        "{id}, cut by the kill of {}, was not attempted again within {}",
                        kill.node,
                        secs(limit)
                    )),
                    Some(d) if *d > limit => v.push(format!(
                        "{id}, cut by the kill of {}, was attempted again only {} after it (lease {})",
                        kill.node,
                        secs(*d),
                        secs(self.lease)
                    )),
                    Some(_) => {}
                }
            }
        }
        for (asked, listed) in &self.cluster_view {
            let missing: Vec<&String> = self.nodes.iter().filter(|n| !listed.contains(n)).collect();
            if !missing.is_empty() {
                v.push(format!(
                    "GET /v1/cluster on {asked} does not list {missing:?}"
                ));
            }
        }
        for (node, exit) in &self.final_exits {
            if *exit != Some(0) {
                v.push(format!("{node}'s SIGTERM exit was {exit:?}, not 0"));
            }
        }
        self.violations = v;
        self
    }
}

impl fmt::Display for ClusterReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cluster drill (seed {})", self.seed)?;
        writeln!(f, "  nodes              {}", self.nodes.join(", "))?;
        write!(f, "{}", self.store)?;
        writeln!(
            f,
            "  lease              {} (endpoint timeout {} + lease_margin)",
            secs(self.lease),
            secs(self.timeout)
        )?;
        writeln!(
            f,
            "  kills              {} (SIGKILL, then restart under the same id)",
            self.kills.len(),
        )?;
        for (i, k) in self.kills.iter().enumerate() {
            let again: Vec<Duration> = k.reattempted.iter().flatten().copied().collect();
            let range = match (again.iter().min(), again.iter().max()) {
                (Some(lo), Some(hi)) => format!(" {}-{} after the kill", secs(*lo), secs(*hi)),
                _ => String::new(),
            };
            writeln!(
                f,
                "    {:<2} {} ({}) after {} ms: {} leases, {} requests at the receiver, {} ingest calls; back in {} ms; {} of {} attempted again{range}",
                i + 1,
                k.node,
                k.node_id,
                k.waited.as_millis(),
                k.leases,
                k.cut.len(),
                k.ingest_calls,
                k.restart.as_millis(),
                again.len(),
                k.cut.len()
            )?;
        }
        let mut delays: Vec<Duration> = self
            .kills
            .iter()
            .flat_map(|k| k.reattempted.iter().flatten().copied())
            .collect();
        delays.sort();
        let (cut, again) = self.cut_and_reattempted();
        let median = delays.get(delays.len() / 2).copied().unwrap_or_default();
        let longest = delays.last().copied().unwrap_or_default();
        writeln!(
            f,
            "  attempted again    {again} of {cut} requests cut by kills; from the kill: median {}, longest {} (allowed {})",
            secs(median),
            secs(longest),
            secs(self.lease + self.slack)
        )?;
        writeln!(
            f,
            "  acknowledged       {} events over all nodes ({} sends unacknowledged)",
            self.acknowledged, self.unacknowledged_sends
        )?;
        writeln!(
            f,
            "  delivered          {} of {} acknowledged, {} lost; through each node's API: {} missing, {} not shown succeeded",
            self.delivered,
            self.acknowledged,
            self.settled.lost.len(),
            self.settled.missing.len(),
            self.settled.not_succeeded.len()
        )?;
        writeln!(
            f,
            "  also delivered     {} events whose 202 was lost in a kill",
            self.extras.delivered_unacknowledged
        )?;
        let in_flight: u64 = self
            .kills
            .iter()
            .map(|k| k.leases.max(k.cut.len() as u64))
            .sum();
        let ingest: usize = self.kills.iter().map(|k| k.ingest_calls).sum();
        writeln!(
            f,
            "  duplicates         {} extra 2xx answers over {} webhook-ids; allowed {} ({in_flight} attempts in flight on killed nodes + {ingest} ingest calls cut)",
            self.extras.duplicates,
            self.extras.duplicated_ids,
            self.duplicate_bound()
        )?;
        let by_node: Vec<String> = self
            .attempt_logs
            .by_node
            .iter()
            .map(|(node, n)| format!("{node} {n}"))
            .collect();
        writeln!(f, "  attempts by node   {}", by_node.join(", "))?;
        let late = &self.attempt_logs.lateness;
        let at = |q: f64| {
            let i = ((late.len().saturating_sub(1)) as f64 * q).round() as usize;
            late.get(i).map_or(0, Duration::as_millis)
        };
        writeln!(
            f,
            "  retry lateness     started after their due time: p50 {} ms, p99 {} ms, max {} ms over {} retries (re-attempts after kills included)",
            at(0.5),
            at(0.99),
            at(1.0),
            late.len()
        )?;
        for (asked, listed) in &self.cluster_view {
            writeln!(f, "  GET /v1/cluster    on {asked}: {}", listed.join(", "))?;
        }
        writeln!(
            f,
            "  receiver           {} requests, {} answered 2xx",
            self.extras.receiver_requests, self.extras.receiver_ok
        )?;
        writeln!(
            f,
            "  settled            {} after healing",
            secs(self.settled_in)
        )?;
        let exits: Vec<String> = self
            .final_exits
            .iter()
            .map(|(node, code)| {
                format!(
                    "{node} {}",
                    code.map_or("none".to_owned(), |c| c.to_string())
                )
            })
            .collect();
        writeln!(f, "  SIGTERM exits      {}", exits.join(", "))?;
        writeln!(f, "  time taken         {}", secs(self.elapsed))
    }
}
