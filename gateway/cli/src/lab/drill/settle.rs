//! The end of the drills that kill gateways (crash, cluster): waiting, bounded,
//! until every acknowledged event has been answered 2xx by the receiver and each
//! gateway's API shows its delivery succeeded, then counting what at-least-once
//! allowed on top: duplicates, and events delivered whose 202 was lost in a kill.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::DrillError;
use super::api::GatewayApi;
use super::receiver::Tally;

/// How often the receiver and the APIs are read while waiting.
const POLL_EVERY: Duration = Duration::from_millis(500);

/// Acknowledged events that were not (yet) where they should be when the wait ended.
#[derive(Debug, Default, Clone)]
pub struct Settled {
    /// Never answered 2xx by the receiver.
    pub lost: Vec<String>,
    /// Unknown to at least one gateway's API.
    pub missing: Vec<String>,
    /// Not shown succeeded by at least one gateway's API.
    pub not_succeeded: Vec<String>,
}

impl Settled {
    fn done(&self) -> bool {
        self.lost.is_empty() && self.missing.is_empty() && self.not_succeeded.is_empty()
    }
}

/// Waits until every id in `acked` was answered 2xx at the receiver and is shown
/// succeeded by every API in `apis` (one per gateway), or until `deadline`; what
/// was still wrong at the end.
///
/// # Errors
/// When an API call fails.
pub(super) async fn wait_delivered(
    acked: &[String],
    tally: &Tally,
    apis: &[GatewayApi],
    deadline: Instant,
) -> Result<Settled, DrillError> {
    loop {
        let delivered = tally.delivered();
        let mut settled = Settled {
            lost: acked
                .iter()
                .filter(|id| !delivered.contains(*id))
                .cloned()
                .collect(),
            ..Settled::default()
        };
        // Every API is read each round until all agree: a gateway that shows
        // another state than its peers is what the cluster drill looks for.
        let (mut missing, mut not_succeeded) = (HashSet::new(), HashSet::new());
        for api in apis {
            let stored = api.deliveries_by_event().await?;
            for id in acked {
                match stored.get(id) {
                    None => {
                        missing.insert(id);
                    }
                    Some(d) if d["state"] != "succeeded" => {
                        not_succeeded.insert(id);
                    }
                    Some(_) => {}
                }
            }
        }
        // In acknowledgement order, so the examples in a report are stable.
        settled.missing = acked
            .iter()
            .filter(|id| missing.contains(id))
            .cloned()
            .collect();
        settled.not_succeeded = acked
            .iter()
            .filter(|id| not_succeeded.contains(id))
            .cloned()
            .collect();
        if settled.done() || Instant::now() >= deadline {
            return Ok(settled);
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// What the receiver saw beyond one 2xx per acknowledged event.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras {
    /// 2xx answers beyond the first for the same `webhook-id`.
    pub duplicates: u64,
    /// Ids answered 2xx more than once.
    pub duplicated_ids: usize,
    /// Events delivered although their 202 never reached the sender.
    pub delivered_unacknowledged: usize,
    /// Requests the receiver got, and answered 2xx.
    pub receiver_requests: u64,
    pub receiver_ok: u64,
}

impl Extras {
    /// Counts them from the receiver's tally.
    pub(super) fn count(tally: &Tally, acked: &[String]) -> Self {
        let per_id = tally.per_id();
        let acked: HashSet<&String> = acked.iter().collect();
        let (receiver_requests, receiver_ok) = tally.totals();
        Self {
            duplicates: per_id
                .values()
                .map(|n| u64::from(n.ok.saturating_sub(1)))
                .sum(),
            duplicated_ids: per_id.values().filter(|n| n.ok > 1).count(),
            delivered_unacknowledged: per_id
                .iter()
                .filter(|(id, n)| n.ok > 0 && !acked.contains(id))
                .count(),
            receiver_requests,
            receiver_ok,
        }
    }
}

/// The violations for what [`wait_delivered`] left, naming `settle` (the wait).
pub(super) fn violations(settled: &Settled, settle: Duration) -> Vec<String> {
    let mut out = Vec::new();
    let examples = |v: &[String]| format!("{:?}", &v[..v.len().min(5)]);
    if !settled.lost.is_empty() {
        out.push(format!(
            "{} acknowledged events never delivered, e.g. {}",
            settled.lost.len(),
            examples(&settled.lost)
        ));
    }
    if !settled.missing.is_empty() {
        out.push(format!(
            "{} acknowledged events missing from the store, e.g. {}",
            settled.missing.len(),
            examples(&settled.missing)
        ));
    }
    if !settled.not_succeeded.is_empty() {
        out.push(format!(
            "{} acknowledged events not shown succeeded after {}, e.g. {}",
            settled.not_succeeded.len(),
            super::secs(settle),
            examples(&settled.not_succeeded)
        ));
    }
    out
}
