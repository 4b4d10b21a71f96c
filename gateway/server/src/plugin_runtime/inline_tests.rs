//! Decisions run inline first: a plugin within the small budget decides on the
//! calling worker, one over it but within the full limits is rerun on the pool
//! and still decides, and a version that keeps overrunning goes straight there.

use super::budget::Budget;
use super::chain::CallFailure;
use super::conformance::samples;
use super::tests::{TENANT, decide_with, fixture, host};
use super::{DecisionPaths, PluginHost};
use crate::plugin_runtime::engine::Decide;
use crate::policy::{NextStep, Verdict};

fn paths(inline: u64, escalated: u64, pool: u64) -> DecisionPaths {
    DecisionPaths {
        inline,
        escalated,
        pool,
    }
}

/// Asserts the plugin itself decided a retry after its 7 s.
async fn decides_retry_after_7s(host: &PluginHost, name: &str) {
    let d = decide_with(host, name, 503, b"").await;
    assert_eq!(d.decided_by, format!("plugin:{name}@1"));
    assert_eq!(d.verdict, Verdict::Retry, "{name}");
    assert_eq!(
        d.next,
        NextStep::RetryAt { delay_ms: 7_000 },
        "{name}: {d:?}"
    );
}

#[tokio::test]
async fn a_plugin_within_the_inline_budget_decides_inline() {
    let host = host(&["tryagain"]);
    let d = decide_with(&host, "tryagain", 400, br#"{"error":"try_again"}"#).await;
    assert_eq!(d.decided_by, "plugin:tryagain@1");
    assert_eq!(host.decision_paths(), paths(1, 0, 0));
}

#[tokio::test]
async fn a_plugin_over_the_inline_budget_but_within_the_limits_still_decides() {
    let host = host(&["busy", "grower"]);
    decides_retry_after_7s(&host, "busy").await;
    assert_eq!(host.decision_paths(), paths(0, 1, 0), "fuel escalates");
    decides_retry_after_7s(&host, "grower").await;
    assert_eq!(host.decision_paths(), paths(0, 2, 0), "growth escalates");
    assert_eq!(host.status(TENANT, "busy").unwrap().consecutive_failures, 0);
}

#[tokio::test]
async fn the_inline_growth_budget_counts_from_the_initial_memory() {
    // Starting with 4 MiB and growing by 2 MiB more is over the budget; starting
    // with 4 MiB and not growing is not.
    let text = |plugin: &str| {
        let prelude = fixture("prelude.wat").replace(
            "(memory (export \"memory\") 1)",
            "(memory (export \"memory\") 64)",
        );
        format!(
            "(module\n{prelude}\n{}\n)",
            fixture(&format!("{plugin}.wat"))
        )
    };
    let host = PluginHost::new(512 * 1024).unwrap();
    host.set_inline_time(std::time::Duration::from_secs(60));
    for plugin in ["tryagain", "grower"] {
        let bytes = wat::parse_str(text(plugin)).unwrap();
        host.load(TENANT, plugin, &bytes).unwrap();
    }
    let d = decide_with(&host, "tryagain", 400, br#"{"error":"try_again"}"#).await;
    assert_eq!(d.decided_by, "plugin:tryagain@1");
    assert_eq!(host.decision_paths(), paths(1, 0, 0));
    decides_retry_after_7s(&host, "grower").await;
    assert_eq!(host.decision_paths(), paths(1, 1, 0));
}

#[tokio::test]
async fn a_version_that_keeps_overrunning_goes_straight_to_the_pool() {
    let host = host(&["busy"]);
    for _ in 0..4 {
        decides_retry_after_7s(&host, "busy").await;
    }
    assert_eq!(host.decision_paths(), paths(0, 4, 0));
    for _ in 0..3 {
        decides_retry_after_7s(&host, "busy").await;
    }
    assert_eq!(host.decision_paths(), paths(0, 4, 3), "no second run");
}

#[tokio::test]
async fn with_inline_runs_off_every_decision_goes_to_the_pool() {
    let host = host(&["tryagain"]);
    host.set_inline_first(false);
    let d = decide_with(&host, "tryagain", 400, br#"{"error":"try_again"}"#).await;
    assert_eq!(d.decided_by, "plugin:tryagain@1");
    assert_eq!(host.decision_paths(), paths(0, 0, 1));
}

#[tokio::test]
async fn only_an_overrun_escalates_and_a_failure_inline_is_final() {
    let cases = [
        ("loop", true),
        ("memory_bomb", true),
        ("trap", false),
        ("unreachable", false),
        ("invalid_output", false),
    ];
    let host = host(&cases.map(|(name, _)| name));
    for (name, escalates) in cases {
        let before = host.decision_paths();
        let d = decide_with(&host, name, 500, b"").await;
        assert!(d.decided_by.starts_with("fallback:"), "{name}: {d:?}");
        let after = host.decision_paths();
        let moved = (
            after.inline - before.inline,
            after.escalated - before.escalated,
        );
        let expected = if escalates { (0, 1) } else { (1, 0) };
        assert_eq!(moved, expected, "{name}: (inline, escalated)");
    }
}

#[test]
fn work_that_fuel_does_not_stop_ends_at_the_inline_time_limit() {
    let host = host(&["loop"]);
    let plugin = host.installs.loaded(TENANT, "loop", None).unwrap();
    let (_, attempt, builtin_retry) = samples().swap_remove(0);
    let unlimited_fuel = Budget {
        fuel: u64::MAX / 2,
        ..Budget::inline()
    };
    let decide = Decide {
        attempt: plugin.pre.attempt(attempt).unwrap(),
        builtin_retry,
    };
    let (answer, _) = host
        .sandbox
        .run_within(&plugin.pre, &decide, unlimited_fuel);
    // An overrun, so the decision escalates; inline, the CPU clock is not read,
    // so it is never told apart as spinning.
    assert_eq!(answer, Err(CallFailure::EpochDeadline));
}
