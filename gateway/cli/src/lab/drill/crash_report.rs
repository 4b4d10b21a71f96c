//! What the crash drill found, and its summary as printed at the end of a run.

use std::fmt;
use std::time::Duration;

use super::crash_store::StoreOutcome;
use super::{DrillReport, secs};

/// What the crash drill found.
#[derive(Debug, Clone)]
pub struct CrashReport {
    pub seed: u64,
    pub kills: u32,
    /// The backend, and the database restart if there was one.
    pub store: StoreOutcome,
    /// Events acknowledged (202).
    pub acknowledged: usize,
    /// Sends that got no 202 (cut by a kill, or refused while the gateway was down).
    pub unacknowledged_sends: u64,
    /// Acknowledged events the receiver answered 2xx at least once.
    pub delivered: usize,
    /// Acknowledged events the receiver never answered 2xx.
    pub lost: Vec<String>,
    /// Acknowledged events the store does not know.
    pub missing_from_store: Vec<String>,
    /// Acknowledged events whose delivery the API does not show succeeded.
    pub not_succeeded: Vec<String>,
    /// Events delivered although their 202 never reached the sender.
    pub delivered_unacknowledged: usize,
    /// 2xx answers beyond the first for the same `webhook-id`.
    pub duplicates: u64,
    /// Ids answered 2xx more than once.
    pub duplicated_ids: usize,
    /// Requests the receiver got, and answered 2xx.
    pub receiver_requests: u64,
    pub receiver_ok: u64,
    /// Requests in progress at the receiver at each kill.
    pub in_flight_at_kills: Vec<usize>,
    /// Ingest calls awaiting their answer at each kill.
    pub ingest_at_kills: Vec<usize>,
    /// Time from each kill until the new gateway listened.
    pub restarts: Vec<Duration>,
    /// Time from healing the receiver until everything was delivered.
    pub settled_in: Duration,
    /// The last gateway's exit status on SIGTERM (`None`: it did not exit in time).
    pub final_exit: Option<i32>,
    pub elapsed: Duration,
    pub violations: Vec<String>,
}

impl DrillReport for CrashReport {
    fn violations(&self) -> &[String] {
        &self.violations
    }
}

impl fmt::Display for CrashReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "crash drill (seed {})", self.seed)?;
        writeln!(
            f,
            "  kills              {} (SIGKILL, then restart)",
            self.kills
        )?;
        write!(f, "{}", self.store)?;
        let list = |v: &[usize]| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        writeln!(
            f,
            "  in flight at kills {} receiver requests; {} ingest calls",
            list(&self.in_flight_at_kills),
            list(&self.ingest_at_kills)
        )?;
        let restart_max = self.restarts.iter().max().copied().unwrap_or_default();
        writeln!(
            f,
            "  restarts           longest {} ms to listen",
            restart_max.as_millis()
        )?;
        writeln!(
            f,
            "  acknowledged       {} events ({} sends unacknowledged)",
            self.acknowledged, self.unacknowledged_sends
        )?;
        writeln!(
            f,
            "  delivered          {} of {} acknowledged, {} lost, {} missing from the store, {} not shown succeeded",
            self.delivered,
            self.acknowledged,
            self.lost.len(),
            self.missing_from_store.len(),
            self.not_succeeded.len()
        )?;
        writeln!(
            f,
            "  also delivered     {} events whose 202 was lost in a kill",
            self.delivered_unacknowledged
        )?;
        writeln!(
            f,
            "  duplicates         {} extra 2xx answers over {} webhook-ids",
            self.duplicates, self.duplicated_ids
        )?;
        writeln!(
            f,
            "  receiver           {} requests, {} answered 2xx",
            self.receiver_requests, self.receiver_ok
        )?;
        writeln!(
            f,
            "  settled            {} after healing",
            secs(self.settled_in)
        )?;
        let exit = self
            .final_exit
            .map_or("none (killed)".to_owned(), |c| c.to_string());
        writeln!(f, "  final SIGTERM exit {exit}")?;
        writeln!(f, "  time taken         {}", secs(self.elapsed))
    }
}
