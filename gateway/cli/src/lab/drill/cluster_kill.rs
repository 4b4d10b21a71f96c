//! The cluster drill's moves and readings: killing a node while it holds leases
//! (and starting it again), waiting for the requests a kill cut to be attempted
//! again, and what the attempt logs and `GET /v1/cluster` show at the end.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::DrillError;
use super::api::{GatewayApi, fetch_deliveries};
use super::cluster::{LEASE_WAIT, REATTEMPT_SLACK, lease};
use super::cluster_node::Node;
use super::cluster_report::Kill;
use super::crash_store::RunStore;
use super::receiver::{Receiver, Tally};

/// How often a node is asked for its leases while the drill waits to kill it.
const POLL_EVERY: Duration = Duration::from_millis(20);
/// How long to wait for an ingest call to the node before killing it anyway.
const INGEST_WAIT: Duration = Duration::from_secs(1);
/// Attempt logs read at most for the per-node counts.
const MAX_LOGS: usize = 20_000;
/// Attempt logs read at once.
const LOG_CONCURRENCY: usize = 8;

/// Waits (at most [`LEASE_WAIT`]) until `node` holds leases and has requests in
/// progress at the receiver, then (at most [`INGEST_WAIT`]) for an ingest call to
/// it, SIGKILLs it, starts it again under the same id and
/// points its senders (with `token`) at it.
pub(super) async fn kill_and_restart(
    node: &mut Node,
    store: &RunStore,
    receiver: &Receiver,
    token: &str,
) -> Result<Kill, DrillError> {
    let began = Instant::now();
    let (leases, cut) = loop {
        let leases = loop {
            // A node that cannot answer now holds nothing we could see.
            let leases = node.leases().await.unwrap_or(0);
            let ports = node.ports_to(receiver.port());
            let caught = !receiver.tally.in_progress_from(&ports).is_empty();
            if (leases > 0 && caught) || began.elapsed() >= LEASE_WAIT {
                break leases;
            }
            tokio::time::sleep(POLL_EVERY).await;
        };
        // Then, as the crash drill does, as soon as an ingest call to it is
        // under way (waiting at most a second): kills land during commits too.
        let call_started = std::sync::Arc::clone(&node.call_started);
        let mut call = std::pin::pin!(call_started.notified());
        call.as_mut().enable();
        if node.sending_now.load(Ordering::SeqCst) == 0 {
            let _ = tokio::time::timeout(INGEST_WAIT, call).await;
        }
        // Read again just before the kill: its leases and the requests it
        // cuts. Those caught may have ended while the ingest call was awaited
        // (on a loaded machine): then catch some again, within the wait.
        let leases = node.leases().await.unwrap_or(leases);
        let ports = node.ports_to(receiver.port());
        let cut = receiver.tally.in_progress_from(&ports);
        if !cut.is_empty() || began.elapsed() >= LEASE_WAIT {
            break (leases, cut);
        }
    };
    let waited = began.elapsed();
    let ingest_calls = node.sending_now.load(Ordering::SeqCst);
    let at = receiver.tally.elapsed();
    let node_id = node.id.clone();
    node.kill();
    // What it held is in the database: its engine's count, read before the kill,
    // misses a claim made in between.
    let leases = store.leased_by(&node_id).await.unwrap_or(0).max(leases);
    let restart = node.start().await?;
    node.open_to_senders(token)?;
    Ok(Kill {
        node: node.name.clone(),
        node_id,
        waited,
        leases,
        cut,
        ingest_calls,
        at,
        restart,
        reattempted: Vec::new(),
    })
}

/// Fills in when each request cut by a kill arrived again, waiting until all
/// have or the last kill's lease plus the slack has passed.
pub(super) async fn reattempts(kills: &mut [Kill], tally: &Tally) {
    let last = kills.iter().map(|k| k.at).max().unwrap_or_default();
    let deadline = last + lease() + REATTEMPT_SLACK;
    loop {
        for kill in kills.iter_mut() {
            kill.reattempted = kill
                .cut
                .iter()
                .map(|id| tally.arrival_after(id, kill.at).map(|t| t - kill.at))
                .collect();
        }
        let all = kills
            .iter()
            .all(|k| k.reattempted.iter().all(Option::is_some));
        if all || tally.elapsed() >= deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What the attempt logs show.
#[derive(Debug, Clone, Default)]
pub struct AttemptLogs {
    /// Attempts per node id (`-` for none).
    pub by_node: BTreeMap<String, u64>,
    /// For each attempt after the first, how long after the time the one before
    /// set for it (`next_attempt_at`) it started, sorted. A request cut by a kill
    /// leaves no entry, so its re-attempt shows here as late by about the lease.
    pub lateness: Vec<Duration>,
}

/// The attempt logs of the deliveries of `acked` (at most [`MAX_LOGS`] of
/// them), as `api` shows them.
pub(super) async fn attempt_logs(
    api: &GatewayApi,
    acked: &[String],
) -> Result<AttemptLogs, DrillError> {
    let deliveries = api.deliveries_by_event().await?;
    let ids: Vec<String> = acked
        .iter()
        .filter_map(|event| deliveries.get(event)?["id"].as_str().map(str::to_owned))
        .take(MAX_LOGS)
        .collect();
    let mut logs = AttemptLogs::default();
    let at = |v: &serde_json::Value| humantime::parse_rfc3339_weak(v.as_str()?).ok();
    for detail in fetch_deliveries(api, ids, LOG_CONCURRENCY).await? {
        let log = detail["attempt_log"].as_array().map(Vec::as_slice);
        let log = log.unwrap_or(&[]);
        for attempt in log {
            let node = attempt["node_id"].as_str().unwrap_or("-").to_owned();
            *logs.by_node.entry(node).or_insert(0) += 1;
        }
        for pair in log.windows(2) {
            if let (Some(due), Some(started)) =
                (at(&pair[0]["next_attempt_at"]), at(&pair[1]["started_at"]))
            {
                logs.lateness
                    .push(started.duration_since(due).unwrap_or_default());
            }
        }
    }
    logs.lateness.sort();
    Ok(logs)
}

/// The node ids each node's `GET /v1/cluster` lists, by the node asked.
pub(super) async fn cluster_view(nodes: &[Node]) -> Result<Vec<(String, Vec<String>)>, DrillError> {
    let mut views = Vec::new();
    for node in nodes {
        let view = node.cluster().await?;
        let listed = view["nodes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let ids = listed
            .iter()
            .filter_map(|n| n["node_id"].as_str().map(str::to_owned))
            .collect();
        views.push((node.id.clone(), ids));
    }
    Ok(views)
}
