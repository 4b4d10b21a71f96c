//! How an attempt's outcome reaches the breaker that every gateway sharing the
//! store sees. The attempt's own task counts it under the endpoint's row lock,
//! in the transaction that writes its fenced outcome and only if that write
//! succeeded, so outcomes from all nodes add up to one streak, a stale one is
//! never counted, and exactly one node sees each transition. A success on a
//! breaker that was closed with no failures when the attempt was claimed
//! changes nothing and writes nothing.

use super::breaker::{Breaker, RawOutcome, Transition};
use crate::config::BreakerConfig;
use crate::store::RuntimeRecord;

/// What an attempt's task needs to count its outcome.
#[derive(Debug, Clone)]
pub(crate) struct SharedBreaker {
    pub(crate) config: BreakerConfig,
    /// The shared breaker was closed, with no failure counted, at the claim.
    pub(crate) pristine: bool,
    /// The attempt is the half-open probe.
    pub(crate) probe: bool,
}

/// The shared breaker after an outcome, and the transition it made, if any.
#[derive(Debug, Clone)]
pub(crate) struct SharedOutcome {
    pub(crate) breaker: Breaker,
    pub(crate) transition: Option<Transition>,
}

impl SharedBreaker {
    /// Whether `outcome` changes the shared breaker at all (a success on a
    /// pristine breaker does not, and need not lock its row).
    pub(crate) fn counts(&self, outcome: RawOutcome) -> bool {
        match outcome {
            RawOutcome::Success => !self.pristine || self.probe,
            RawOutcome::Neutral => self.probe,
            RawOutcome::Failure => true,
        }
    }

    /// Counts `outcome` on a shared breaker, as the store hands it over locked
    /// (with the fenced outcome that must be written first).
    pub(crate) fn count(
        &self,
        outcome: RawOutcome,
        now_ms: u64,
    ) -> impl FnOnce(&mut RuntimeRecord) -> SharedOutcome + Send + use<> {
        let config = self.config.clone();
        move |shared| {
            let mut breaker = Breaker::from_shared(&shared.breaker, shared.probe_until_ms, now_ms);
            let transition = breaker.record(outcome, now_ms, &config);
            shared.breaker = breaker.to_record();
            if !breaker.probing() {
                shared.probe_until_ms = None;
            }
            SharedOutcome {
                breaker,
                transition,
            }
        }
    }
}
