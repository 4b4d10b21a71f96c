//! Isolation between decisions: a plugin that leaves markers in its stack,
//! `.data`, `.bss`, heap and a global (`tests/fixtures/plugins/isolation.wat`)
//! must never see them in its next decision, though the pool has a single memory
//! slot and so hands it the very slot the first decision used. The control reuses
//! one instance and does see them, so the fixture is shown to detect a leak.

use crate::plugin_runtime::PluginKind;
use crate::plugin_runtime::engine::Decide;
use std::time::Duration;

use super::bindings::{Delay, Verdict};
use super::budget::{Budget, Deadline};
use super::conformance::samples;
use super::engine::{FUEL_PER_DECISION, Sandbox};
use super::instance_pool::{PoolShape, ResetMode};
use super::prepare;

/// Every marker the fixture writes, as the bits of its `after-ms`.
const ALL_MARKERS: u64 = 0b11_1111;

fn fixture() -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/plugins/isolation.wat",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    wat::parse_str(text).unwrap()
}

/// A sandbox whose pool has one slot, reset in `reset` mode.
fn one_slot_sandbox(reset: ResetMode) -> Sandbox {
    let shape = PoolShape { slots: 1, reset };
    Sandbox::new(shape, FUEL_PER_DECISION, Duration::from_secs(1)).unwrap()
}

/// The markers one decision saw, from its delay.
fn markers_seen(delay: Option<Delay>) -> u64 {
    match delay {
        Some(Delay::AfterMs(bits)) => bits,
        other => panic!("the fixture answers after-ms, got {other:?}"),
    }
}

/// The modes to check: the one this host would choose, and every one it can run.
fn modes() -> Vec<ResetMode> {
    let mut modes = vec![ResetMode::detect().0, ResetMode::Classic];
    if wasmtime::PoolingAllocationConfig::is_pagemap_scan_available() {
        modes.push(ResetMode::DirtyPages);
    }
    modes.dedup();
    modes
}

#[test]
fn a_fresh_decision_never_sees_the_markers_of_the_last_one_in_its_slot() {
    let component = prepare(&fixture(), 512 * 1024).unwrap().component;
    let (_, attempt, builtin_retry) = samples().swap_remove(0);
    for reset in modes() {
        let sandbox = one_slot_sandbox(reset);
        let pre = sandbox.prepare(&component).unwrap();
        let decide = Decide {
            attempt: pre.attempt(attempt.clone()).unwrap(),
            builtin_retry,
        };
        // Inline and pool runs alike: only their limits differ. The fixture grows
        // its heap past the inline budget, so that one gets room for it, and time
        // enough on however busy a machine.
        let inline = Budget {
            growth_cap: Some(4 << 20),
            deadline: Deadline::After(Duration::from_secs(60)),
            ..Budget::inline()
        };
        let budgets = [inline, sandbox.full_budget(PluginKind::Policy)];
        for (decision, budget) in budgets.iter().cycle().take(4).enumerate() {
            let (answer, _) = sandbox.run_within(&pre, &decide, *budget);
            let answer = answer.unwrap();
            assert_eq!(answer.verdict, Verdict::Retry);
            assert_eq!(
                markers_seen(answer.delay),
                0,
                "{reset:?}: decision {decision} saw an earlier decision's markers"
            );
            // The one slot is free again and warm: the next decision reuses it.
            let usage = sandbox.pool_usage();
            assert_eq!((usage.memories_in_use, usage.memories_warm), (0, 1));
        }
    }
}

#[test]
fn a_reused_instance_sees_every_marker() {
    let component = prepare(&fixture(), 512 * 1024).unwrap().component;
    let (_, attempt, builtin_retry) = samples().swap_remove(0);
    let sandbox = one_slot_sandbox(ResetMode::detect().0);
    let pre = sandbox.prepare(&component).unwrap();
    let attempt = pre.attempt(attempt).unwrap();
    let once = Decide {
        attempt,
        builtin_retry,
    };
    let twice = [once.clone(), once];
    let answers = sandbox.run_reused(&pre, &twice).unwrap();
    assert_eq!(markers_seen(answers[0].delay.clone()), 0);
    assert_eq!(markers_seen(answers[1].delay.clone()), ALL_MARKERS);
}
