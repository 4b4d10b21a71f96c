//! What one run of a plugin may spend, and where a decision runs.
//!
//! A decision first runs **inline**, on the calling tokio worker, with a small
//! [`Budget::inline`]: no hand-off to another thread, no wake-ups. Overrunning
//! it (fuel, memory growth, or [`INLINE_TIME`] of wall time) is not a failure:
//! the decision is rerun on the decision pool with the [`Budget::full`] limits,
//! in a fresh store, and plugins import nothing, so the rerun answers the same.
//! A version whose recent decisions often need more than the inline budget goes
//! straight to the pool ([`InlineHistory`]), so it does not pay for two runs or
//! hold a worker for a tick each time.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use wasmtime::{Store, Trap, UpdateDeadline};

use super::chain::CallFailure;
use super::clocks::{EPOCH_DEADLINE_TICKS, EPOCH_TICK};
use super::engine::{PluginState, Usage};

/// Fuel for an inline run: about 60 times what `json-error-code` burns.
pub(crate) const INLINE_FUEL: u64 = 200_000;
/// Memory an inline run may grow past what the instance starts with.
pub(crate) const INLINE_GROWTH_BYTES: usize = 1 << 20;
/// Wall time an inline run may take. The epoch is checked at every tick: a run
/// that started less than this long before a tick goes on to the next one, so a
/// tick that comes just after an inline run starts does not end it.
pub(crate) const INLINE_TIME: Duration = Duration::from_millis(2);
/// Decisions over the inline budget, among the last 32, from which a version
/// goes straight to the pool.
const POOL_AFTER_OVERRUNS: u32 = 4;

/// What one run may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) fuel: u64,
    /// Growth past the initial memory; `None`: up to the memory limit.
    pub(crate) growth_cap: Option<usize>,
    /// What ends a run that takes too long.
    pub(crate) deadline: Deadline,
}

/// What ends a run that takes too long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deadline {
    /// This many epoch ticks.
    Ticks(u64),
    /// The first epoch tick after this much wall time.
    After(Duration),
}

impl Budget {
    /// The small budget of a run on a tokio worker, which holds the worker for
    /// at most [`INLINE_TIME`] and one [`EPOCH_TICK`]. Fuel alone does not bound
    /// time: some work costs little fuel for what it does.
    pub(crate) const fn inline() -> Self {
        Self {
            fuel: INLINE_FUEL,
            growth_cap: Some(INLINE_GROWTH_BYTES),
            deadline: Deadline::After(INLINE_TIME),
        }
    }

    /// The full limits of a run on a decision thread, with `fuel`.
    pub(crate) const fn full(fuel: u64) -> Self {
        Self {
            fuel,
            growth_cap: None,
            deadline: Deadline::Ticks(EPOCH_DEADLINE_TICKS),
        }
    }

    /// Gives `store` this budget: its fuel and its epoch deadline (again, for a
    /// store that decides more than once).
    pub(crate) fn apply(self, store: &mut Store<PluginState>) -> Result<(), CallFailure> {
        store
            .set_fuel(self.fuel)
            .map_err(|e| CallFailure::Instantiate(e.to_string()))?;
        match self.deadline {
            Deadline::Ticks(ticks) => {
                store.set_epoch_deadline(ticks);
                store.epoch_deadline_trap();
            }
            Deadline::After(limit) => {
                let started = Instant::now();
                store.set_epoch_deadline(1);
                store.epoch_deadline_callback(move |_| {
                    if started.elapsed() < limit {
                        Ok(UpdateDeadline::Continue(1))
                    } else {
                        Err(Trap::Interrupt.into())
                    }
                });
            }
        }
        Ok(())
    }

    /// Whether a run that used `usage` and `cpu` of CPU time would have fit
    /// this budget.
    pub(crate) fn fits(&self, usage: &Usage, cpu: Duration) -> bool {
        usage.fuel <= self.fuel
            && self.growth_cap.is_none_or(|cap| usage.grown_bytes <= cap)
            && match self.deadline {
                Deadline::After(limit) => cpu < limit,
                Deadline::Ticks(ticks) => cpu < EPOCH_TICK * u32::try_from(ticks).unwrap_or(1),
            }
    }
}

/// Where a decision runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// On the calling worker with the inline budget, escalating on overrun.
    Inline,
    /// Straight to the decision pool.
    Pool,
}

/// Whether each of a version's last 32 decisions needed more than the inline
/// budget, one bit each, newest lowest. Pool runs count too, by what they used,
/// so a version that has become cheap again goes back inline by itself.
#[derive(Debug, Default)]
pub(crate) struct InlineHistory {
    overruns: AtomicU32,
}

impl InlineHistory {
    /// Records one decision.
    pub(crate) fn record(&self, over_budget: bool) {
        let bit = u32::from(over_budget);
        // The closure never declines, so this cannot fail.
        let _ = self
            .overruns
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((bits << 1) | bit)
            });
    }

    /// Where the next decision runs.
    pub(crate) fn route(&self) -> Route {
        if self.overruns.load(Ordering::Relaxed).count_ones() >= POOL_AFTER_OVERRUNS {
            Route::Pool
        } else {
            Route::Inline
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_that_often_overruns_goes_to_the_pool_until_it_fits_again() {
        let history = InlineHistory::default();
        assert_eq!(history.route(), Route::Inline);
        for _ in 1..POOL_AFTER_OVERRUNS {
            history.record(true);
            history.record(false);
        }
        assert_eq!(history.route(), Route::Inline, "a few overruns stay inline");
        history.record(true);
        assert_eq!(history.route(), Route::Pool);
        // Decisions that fit push the overruns out of the window.
        for _ in 0..25 {
            history.record(false);
        }
        assert_eq!(history.route(), Route::Pool, "still within the last 32");
        for _ in 0..7 {
            history.record(false);
        }
        assert_eq!(history.route(), Route::Inline);
    }

    #[test]
    fn fitting_counts_fuel_growth_and_time() {
        let inline = Budget::inline();
        let small = Usage {
            fuel: 3_000,
            memory_bytes: 2 << 20,
            grown_bytes: 0,
        };
        let quick = Duration::from_micros(30);
        assert!(inline.fits(&small, quick));
        let hungry = Usage {
            fuel: INLINE_FUEL + 1,
            ..small
        };
        assert!(!inline.fits(&hungry, quick));
        let growing = Usage {
            grown_bytes: INLINE_GROWTH_BYTES + 1,
            ..small
        };
        assert!(!inline.fits(&growing, quick));
        assert!(!inline.fits(&small, INLINE_TIME));
        assert!(Budget::full(10_000_000).fits(&growing, quick));
    }
}
