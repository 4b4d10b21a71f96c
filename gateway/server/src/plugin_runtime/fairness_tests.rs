//! Issue 18, item 3: one tenant's plugin spinning until the epoch deadline must
//! neither push another tenant's decisions into `fallback:pool_full` nor escape
//! being disabled.
//!
//! The hostile guest loops on `memory.fill`, taken to cost one unit of fuel
//! whatever its size. wasmtime 48 charges it per byte, so production fuel stops
//! that loop in about a millisecond (checked below); the pool test lifts the fuel
//! limit instead, standing for any guest whose work fuel undercounts, so that only
//! the epoch deadline stops it, as in the issue.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::tests::{facts, module, policy};
use super::*;
use crate::policy::Outcome;

const HOSTILE: &str = "tenant-a";
const WELL_BEHAVED: &str = "tenant-b";
/// A bound for a failing run only; a passing one ends when the plugin is disabled.
const GIVE_UP_AFTER: Duration = Duration::from_secs(60);
/// Decision threads: A's share is one, so a single thread spins.
const POOL_THREADS: u32 = 2;
/// CPU time from which A's deadlines count: low, so that A's spinning thread is
/// counted however busy the machine (the production threshold, `SPINNING_CPU`, is
/// tested with injected numbers in `chain_tests`).
const SPINNING: Duration = Duration::from_millis(5);
/// Tenant B's deciders at once: within the pool's other half, so none of them
/// ever has to wait for a thread.
const WELL_BEHAVED_DECIDERS: usize = 1;

async fn decide(host: &PluginHost, tenant: &'static str, plugin: &'static str) -> String {
    let outcome = Outcome::Status(503);
    let binding = PluginBinding {
        tenant,
        name: plugin,
        version: None,
    };
    let input = PluginInput::default();
    host.decide(&binding, &policy(), &facts(&outcome, 7), &input)
        .await
        .decided_by
}

fn hostile_disabled(host: &PluginHost) -> bool {
    host.status(HOSTILE, "fill_loop")
        .is_some_and(|status| status.disabled)
}

#[tokio::test]
async fn a_memory_fill_loop_runs_out_of_production_fuel_and_counts() {
    let host = PluginHost::new(512 * 1024).unwrap();
    host.load(HOSTILE, "fill_loop", &module("fill_loop", ""))
        .unwrap();
    let decided_by = decide(&host, HOSTILE, "fill_loop").await;
    let status = host.status(HOSTILE, "fill_loop").unwrap();
    // The epoch deadline is the backstop on a starved machine; otherwise fuel.
    if decided_by != "fallback:epoch_deadline" {
        assert_eq!(decided_by, "fallback:out_of_fuel");
        assert_eq!(status.consecutive_failures, 1);
    }
}

#[tokio::test]
async fn one_plugin_cannot_monopolise_the_decision_pool() {
    let host = PluginHost::with_limits(512 * 1024, u64::MAX / 2, POOL_THREADS, 2, SPINNING);
    let host = Arc::new(host.unwrap());
    host.load(HOSTILE, "fill_loop", &module("fill_loop", ""))
        .unwrap();
    host.load(WELL_BEHAVED, "seeded", &module("seeded", ""))
        .unwrap();
    let started = Instant::now();
    // More hostile deciders than the pool has threads: without a fair share they
    // would hold every one of them.
    let hostile: Vec<_> = (0..POOL_THREADS as usize + 2)
        .map(|_| {
            let host = Arc::clone(&host);
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while !hostile_disabled(&host) && started.elapsed() < GIVE_UP_AFTER {
                    seen.push(decide(&host, HOSTILE, "fill_loop").await);
                }
                seen
            })
        })
        .collect();
    let well_behaved_decisions = Arc::new(AtomicUsize::new(0));
    let well_behaved: Vec<_> = (0..WELL_BEHAVED_DECIDERS)
        .map(|_| {
            let (host, well_behaved_decisions) =
                (Arc::clone(&host), Arc::clone(&well_behaved_decisions));
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while !hostile_disabled(&host) && started.elapsed() < GIVE_UP_AFTER {
                    seen.push(decide(&host, WELL_BEHAVED, "seeded").await);
                    well_behaved_decisions.fetch_add(1, Ordering::Relaxed);
                    // B decides inline, without waiting: like a delivery worker,
                    // which awaits its next attempt in between, it lets the other
                    // tasks on this one-thread runtime run.
                    tokio::task::yield_now().await;
                }
                seen
            })
        })
        .collect();

    let mut hostile_seen = Vec::new();
    for task in hostile {
        hostile_seen.extend(task.await.unwrap());
    }
    let mut well_behaved_seen = Vec::new();
    for task in well_behaved {
        well_behaved_seen.extend(task.await.unwrap());
    }

    assert!(
        well_behaved_seen.iter().all(|d| d != "fallback:pool_full"),
        "B was pushed into fallback: {well_behaved_seen:?}"
    );
    // On a starved machine B's own deadline is the backstop; never anything else.
    assert!(
        well_behaved_seen
            .iter()
            .all(|d| d == "plugin:seeded@1" || d == "fallback:epoch_deadline"),
        "{well_behaved_seen:?}"
    );
    assert!(
        well_behaved_seen.iter().any(|d| d == "plugin:seeded@1"),
        "{well_behaved_seen:?}"
    );
    assert!(well_behaved_decisions.load(Ordering::Relaxed) > 0);
    let status = host.status(HOSTILE, "fill_loop").unwrap();
    assert!(
        status.disabled,
        "A was never disabled: {status:?}, answers {:?}",
        &hostile_seen[hostile_seen.len().saturating_sub(10)..]
    );
    assert!(status.consecutive_failures >= DISABLE_AFTER_FAILURES);
    assert!(
        hostile_seen.iter().all(|d| [
            "fallback:epoch_deadline",
            "fallback:pool_full",
            "fallback:disabled"
        ]
        .contains(&d.as_str())),
        "{hostile_seen:?}"
    );
    // Once disabled, A no longer runs at all.
    assert_eq!(
        decide(&host, HOSTILE, "fill_loop").await,
        "fallback:disabled"
    );
    assert_eq!(
        decide(&host, WELL_BEHAVED, "seeded").await,
        "plugin:seeded@1"
    );
}
