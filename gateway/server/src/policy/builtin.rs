//! The built-in retry decision: classification, backoff with a `Retry-After` floor, and
//! the limits.
//!
//! The pieces are public so the wasm plugin host can compose them: it needs the
//! built-in verdict and delay as inputs for the plugin, the honoured `Retry-After` to
//! floor a plugin's delay, and [`next_step`] to apply the limits that always win.

use rand::SeedableRng;
use rand::rngs::StdRng;

use super::{
    AttemptFacts, DeadReason, Decision, EffectivePolicy, FailureKind, NextStep, Outcome,
    RetryDecider, Verdict, backoff_delay, classify, parse_retry_after,
};

/// The `decided_by` of a decision made by the built-in policy alone.
pub(crate) const BUILTIN_DECIDER: &str = "builtin";

/// The built-in decider: the classification table and the policy's backoff.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinPolicy;

impl RetryDecider for BuiltinPolicy {
    fn decide(&self, policy: &EffectivePolicy, facts: &AttemptFacts<'_>) -> Decision {
        let verdict = classify(policy, facts.outcome, facts.attempt);
        let next = match verdict {
            Verdict::Retry => next_step(policy, facts, &verdict, builtin_delay_ms(policy, facts)),
            _ => next_step(policy, facts, &verdict, 0),
        };
        Decision {
            verdict,
            next,
            decided_by: BUILTIN_DECIDER.to_owned(),
        }
    }
}

/// The `Retry-After` floor in ms, when the policy honours it and the status is 429 or
/// 503 or a service throttled (a broker's back-off hint); `None` when absent,
/// ignored or unparseable.
pub(crate) fn honored_retry_after_ms(
    policy: &EffectivePolicy,
    facts: &AttemptFacts<'_>,
) -> Option<u64> {
    if !policy.honor_retry_after {
        return None;
    }
    match facts.outcome {
        Outcome::Status(429 | 503) | Outcome::Failure(FailureKind::Throttled) => {
            parse_retry_after(facts.retry_after?, facts.date, facts.now_ms)
        }
        _ => None,
    }
}

/// The built-in delay after this attempt: `min(max_delay, max(retry_after, jittered
/// backoff))`, drawn from `StdRng::seed_from_u64(facts.seed)`. Computed whatever the
/// verdict, since the plugin host passes it to plugins even on a give-up.
pub fn builtin_delay_ms(policy: &EffectivePolicy, facts: &AttemptFacts<'_>) -> u64 {
    let mut rng = StdRng::seed_from_u64(facts.seed);
    let backoff = backoff_delay(policy, facts.attempt, facts.prev_delay_ms, &mut rng);
    let floor = honored_retry_after_ms(policy, facts).unwrap_or(0);
    backoff.max(floor).min(policy.max_delay_ms)
}

/// Turns a verdict and a delay into the next step, applying the limits to a retry: at
/// `max_attempts` attempts, or a retry landing past `retry_window` from the first
/// attempt, the delivery is dead instead.
pub(crate) fn next_step(
    policy: &EffectivePolicy,
    facts: &AttemptFacts<'_>,
    verdict: &Verdict,
    delay_ms: u64,
) -> NextStep {
    match verdict {
        Verdict::Delivered => NextStep::Done,
        Verdict::GiveUp { .. } => NextStep::Dead(DeadReason::GiveUp),
        Verdict::DisableEndpoint => NextStep::Dead(DeadReason::EndpointDisabled),
        Verdict::Skipped { .. } => NextStep::Skipped,
        Verdict::Retry if facts.attempt >= policy.max_attempts => {
            NextStep::Dead(DeadReason::MaxAttempts)
        }
        Verdict::Retry => {
            let retry_at = facts.now_ms.saturating_add(delay_ms);
            let window_end = facts
                .first_attempt_at_ms
                .saturating_add(policy.retry_window_ms);
            if retry_at > window_end {
                NextStep::Dead(DeadReason::RetryWindow)
            } else {
                NextStep::RetryAt { delay_ms }
            }
        }
    }
}

#[cfg(test)]
mod tests;
