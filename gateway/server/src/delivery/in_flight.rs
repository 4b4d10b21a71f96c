//! Per-endpoint count of attempts in flight.
//!
//! A counter, not a semaphore with the limit baked in: each start is checked
//! against the endpoint's current `max_in_flight`, so a limit lowered while
//! attempts are out applies to the live count at once, and a reload of the
//! endpoint never resets what is in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Attempts in flight to one endpoint; cheap to clone (shared count).
#[derive(Debug, Clone, Default)]
pub(crate) struct InFlight(Arc<AtomicUsize>);

/// One attempt's place in the count; given back on drop, however the attempt ends.
#[derive(Debug)]
pub(crate) struct InFlightGuard(Arc<AtomicUsize>);

impl InFlight {
    /// How many are in flight.
    pub(crate) fn count(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }

    /// How many more may start under `limit`.
    pub(crate) fn free(&self, limit: usize) -> usize {
        limit.saturating_sub(self.0.load(Ordering::Acquire))
    }

    /// Counts one more attempt if that stays within `limit`. Only the scheduler
    /// starts attempts, so the check and the increment do not race each other.
    pub(crate) fn try_start(&self, limit: usize) -> Option<InFlightGuard> {
        if self.free(limit) == 0 {
            return None;
        }
        self.0.fetch_add(1, Ordering::AcqRel);
        Some(InFlightGuard(Arc::clone(&self.0)))
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lowered_limit_applies_to_attempts_already_out() {
        let count = InFlight::default();
        let held: Vec<_> = (0..8).map(|_| count.try_start(8).unwrap()).collect();
        assert!(count.try_start(8).is_none());
        // The limit drops to 1 with 8 out: nothing starts until 7 have ended.
        assert_eq!(count.free(1), 0);
        let mut held = held.into_iter();
        for _ in 0..7 {
            drop(held.next());
            assert!(count.try_start(1).is_none());
        }
        drop(held.next());
        assert!(count.try_start(1).is_some());
    }
}
