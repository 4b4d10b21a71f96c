//! `retry-conflicts`: the plugin built in hookgate's plugin tutorial. Our
//! receiver answers 409 Conflict while it is still writing the previous event of
//! the same order, so a 409 is worth another try ten seconds later; everything
//! else is left to the built-in policy.

use hookgate_plugin_sdk::{Attempt, Delay, RetryPolicy, Verdict, export_policy};

/// How long to give the receiver to finish what it was doing.
const CONFLICT_WAIT_MS: u64 = 10_000;

/// The policy. The gateway makes a fresh one for every decision.
#[derive(Default)]
pub struct RetryConflicts;

impl RetryPolicy for RetryConflicts {
    fn classify(&self, a: &Attempt) -> Verdict {
        match a.status() {
            Some(409) => Verdict::Retry,
            _ => Verdict::UseDefault,
        }
    }

    fn next_delay(&self, a: &Attempt) -> Delay {
        match a.status() {
            Some(409) => Delay::AfterMs(CONFLICT_WAIT_MS),
            _ => Delay::UseDefault,
        }
    }
}

export_policy!(RetryConflicts);

#[cfg(test)]
mod tests {
    use super::*;
    use hookgate_plugin_sdk::decide;

    #[test]
    fn a_conflict_is_retried_after_ten_seconds() {
        let d = decide(&RetryConflicts, &Attempt::builder().status(409).build());
        assert_eq!(d.verdict, Verdict::Retry);
        assert_eq!(d.delay, Some(Delay::AfterMs(10_000)));
    }

    #[test]
    fn anything_else_is_the_builtins_call() {
        let d = decide(&RetryConflicts, &Attempt::builder().status(400).build());
        assert_eq!((d.verdict, d.delay), (Verdict::UseDefault, None));
        let d = decide(&RetryConflicts, &Attempt::builder().status(503).build());
        assert_eq!(d.delay, Some(Delay::UseDefault));
    }
}
