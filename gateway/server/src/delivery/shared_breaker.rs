//! How an attempt's outcome reaches the breaker that every gateway sharing the
//! store sees. The attempt's own task counts it under the endpoint's row lock,
//! so outcomes from all nodes add up to one streak, and exactly one node sees
//! each transition. A success on a breaker that was closed with no failures
//! when the attempt was claimed changes nothing and writes nothing.

use super::breaker::{Breaker, RawOutcome, Transition};
use crate::config::BreakerConfig;
use crate::ids::EndpointId;
use crate::store::Store;

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
    /// Counts `outcome` on the shared breaker of `endpoint_id`; `None` when there
    /// was nothing to count, or it could not be stored (logged).
    pub(crate) async fn count(
        &self,
        store: &Store,
        endpoint_id: &EndpointId,
        outcome: RawOutcome,
        now_ms: u64,
    ) -> Option<SharedOutcome> {
        let nothing = match outcome {
            RawOutcome::Success => self.pristine && !self.probe,
            RawOutcome::Neutral => !self.probe,
            RawOutcome::Failure => false,
        };
        if nothing {
            return None;
        }
        let counted = store
            .update_runtime(endpoint_id, |shared| {
                let mut breaker =
                    Breaker::from_shared(&shared.breaker, shared.probe_until_ms, now_ms);
                let transition = breaker.record(outcome, now_ms, &self.config);
                shared.breaker = breaker.to_record();
                if !breaker.probing() {
                    shared.probe_until_ms = None;
                }
                SharedOutcome {
                    breaker,
                    transition,
                }
            })
            .await;
        match counted {
            Ok(outcome) => Some(outcome),
            Err(e) => {
                tracing::warn!(error = %e, endpoint_id = %endpoint_id, "cannot count the outcome on the shared breaker");
                None
            }
        }
    }
}
