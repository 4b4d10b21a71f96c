//! A plugin version's health: counted failures in a row, whether 20 of them
//! disabled it, and its runs since this gateway started (decisions or
//! transforms, failed and skipped ones, and their time). An epoch deadline counts only when the plugin spent it
//! spinning on the CPU (`CallFailure::Spinning`), never when it was starved.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use super::chain::CallFailure;

/// Counted failures in a row after which a plugin is disabled.
pub(crate) const DISABLE_AFTER_FAILURES: u32 = 20;

/// How a loaded plugin is doing, as operators see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginStatus {
    /// The version this status is about (the active one, for a bare name).
    pub version: u32,
    /// Disabled after [`DISABLE_AFTER_FAILURES`] counted failures in a row; its
    /// endpoints fall back to the built-in policy.
    pub disabled: bool,
    /// Counted failures since its last clean decision.
    pub consecutive_failures: u32,
    /// Its runs on this gateway since it started.
    pub runs: RunCounts,
}

/// A version's runs on this gateway since it started: every decision or
/// transform, those that failed, those that skipped (transforms only), and
/// the time they took in all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunCounts {
    pub count: u64,
    pub failed: u64,
    pub skipped: u64,
    pub time_us: u64,
}

/// How one run ended, for [`RunCounts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunEnd {
    /// Answered: a decision, or a transform's request to send.
    Answered,
    /// A transform's skip.
    Skipped,
    /// Failed, for whatever reason.
    Failed,
}

/// A plugin's failure streak and whether it is disabled.
#[derive(Debug, Default)]
pub(crate) struct PluginHealth {
    failures: AtomicU32,
    disabled: AtomicBool,
    runs: AtomicU64,
    failed: AtomicU64,
    skipped: AtomicU64,
    time_us: AtomicU64,
}

impl PluginHealth {
    /// Records one decision's result. A clean decision resets the streak; a counted
    /// failure extends it and disables the plugin at the threshold (returning
    /// `true` that once); an uncounted failure (a starved epoch deadline, pool full)
    /// changes nothing.
    pub(crate) fn record(&self, result: Result<(), &CallFailure>) -> bool {
        match result {
            Ok(()) => {
                self.failures.store(0, Ordering::Relaxed);
                false
            }
            Err(f) if f.counts() => {
                let streak = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
                streak >= DISABLE_AFTER_FAILURES && !self.disabled.swap(true, Ordering::Relaxed)
            }
            Err(_) => false,
        }
    }

    /// Counts one run that ended `end` after `time_us`.
    pub(crate) fn count_run(&self, end: RunEnd, time_us: u64) {
        self.runs.fetch_add(1, Ordering::Relaxed);
        self.time_us.fetch_add(time_us, Ordering::Relaxed);
        match end {
            RunEnd::Answered => {}
            RunEnd::Skipped => {
                self.skipped.fetch_add(1, Ordering::Relaxed);
            }
            RunEnd::Failed => {
                self.failed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Whether the plugin is disabled.
    pub(crate) fn is_disabled(&self) -> bool {
        self.disabled.load(Ordering::Relaxed)
    }

    /// The status as operators see it.
    pub(crate) fn status(&self, version: u32) -> PluginStatus {
        PluginStatus {
            version,
            disabled: self.is_disabled(),
            consecutive_failures: self.failures.load(Ordering::Relaxed),
            runs: RunCounts {
                count: self.runs.load(Ordering::Relaxed),
                failed: self.failed.load(Ordering::Relaxed),
                skipped: self.skipped.load(Ordering::Relaxed),
                time_us: self.time_us.load(Ordering::Relaxed),
            },
        }
    }

    /// Disables the plugin without a streak: it was disabled before a restart.
    pub(crate) fn force_disable(&self) {
        self.disabled.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_counted_failures_in_a_row_disable() {
        let h = PluginHealth::default();
        let trap = CallFailure::Trap("unreachable".into());
        for _ in 0..19 {
            assert!(!h.record(Err(&trap)));
        }
        // An epoch deadline neither counts nor breaks the streak.
        for _ in 0..50 {
            assert!(!h.record(Err(&CallFailure::EpochDeadline)));
            assert!(!h.record(Err(&CallFailure::PoolFull)));
        }
        assert!(!h.is_disabled());
        assert_eq!(h.status(1).consecutive_failures, 19);
        assert!(h.record(Err(&CallFailure::OutOfFuel)), "the 20th disables");
        assert!(h.is_disabled());
        assert!(!h.record(Err(&trap)), "disabling is reported once");
    }

    #[test]
    fn a_clean_decision_resets_the_streak() {
        let h = PluginHealth::default();
        for _ in 0..19 {
            h.record(Err(&CallFailure::MemoryLimit));
        }
        h.record(Ok(()));
        for _ in 0..19 {
            h.record(Err(&CallFailure::InvalidOutput("bad".into())));
        }
        assert_eq!(
            h.status(2),
            PluginStatus {
                version: 2,
                disabled: false,
                consecutive_failures: 19,
                runs: RunCounts::default(),
            }
        );
    }

    #[test]
    fn runs_are_counted_by_how_they_ended() {
        let h = PluginHealth::default();
        h.count_run(RunEnd::Answered, 5);
        h.count_run(RunEnd::Skipped, 7);
        h.count_run(RunEnd::Failed, 11);
        assert_eq!(
            h.status(1).runs,
            RunCounts {
                count: 3,
                failed: 1,
                skipped: 1,
                time_us: 23
            }
        );
    }

    #[test]
    fn spinning_until_the_deadline_disables_and_starvation_does_not_break_the_run() {
        let h = PluginHealth::default();
        for i in 0..DISABLE_AFTER_FAILURES {
            // Starved deadlines in between neither count nor reset the streak.
            h.record(Err(&CallFailure::EpochDeadline));
            let disabled = h.record(Err(&CallFailure::Spinning { cpu_ms: 48 }));
            assert_eq!(disabled, i + 1 == DISABLE_AFTER_FAILURES, "failure {i}");
        }
        assert!(h.is_disabled());
    }

    #[test]
    fn starved_epoch_deadlines_alone_never_disable() {
        let h = PluginHealth::default();
        for _ in 0..1_000 {
            h.record(Err(&CallFailure::EpochDeadline));
        }
        assert!(!h.is_disabled());
        assert_eq!(h.status(1).consecutive_failures, 0);
    }
}
