//! `ladder`: AnyHook's fixed retry ladder — 5 minutes, 30 minutes, 3 hours,
//! 18 hours, then every 24 hours — whatever delay the built-in would pick.
//!
//! Whether to retry at all stays the built-in's call (a 404 still gives up). Bind
//! it with a policy whose `max_delay_ms` is at least 24 h (the `ladder` preset),
//! or the host clamps the later steps to the endpoint's `max_delay`.

use hookgate_plugin_sdk::{Attempt, Delay, RetryPolicy, export_policy};

const MINUTE_MS: u64 = 60 * 1_000;
const HOUR_MS: u64 = 60 * MINUTE_MS;

/// The ladder's steps; the last repeats.
pub const STEPS_MS: [u64; 5] = [
    5 * MINUTE_MS,
    30 * MINUTE_MS,
    3 * HOUR_MS,
    18 * HOUR_MS,
    24 * HOUR_MS,
];

/// The ladder policy.
#[derive(Debug, Default)]
pub struct Ladder;

impl RetryPolicy for Ladder {
    fn next_delay(&self, a: &Attempt) -> Delay {
        let step = usize::try_from(a.attempt.saturating_sub(1)).unwrap_or(usize::MAX);
        Delay::AfterMs(STEPS_MS[step.min(STEPS_MS.len() - 1)])
    }
}

export_policy!(Ladder);

#[cfg(test)]
mod tests {
    use super::*;
    use hookgate_plugin_sdk::{Verdict, decide};

    fn delay_after(attempt: u32) -> Option<Delay> {
        decide(
            &Ladder,
            &Attempt::builder().status(503).attempt(attempt).build(),
        )
        .delay
    }

    #[test]
    fn climbs_the_ladder_then_repeats_the_last_step() {
        let want = [
            300_000, 1_800_000, 10_800_000, 64_800_000, 86_400_000, 86_400_000, 86_400_000,
        ];
        for (i, ms) in want.into_iter().enumerate() {
            let attempt = u32::try_from(i).unwrap() + 1;
            assert_eq!(
                delay_after(attempt),
                Some(Delay::AfterMs(ms)),
                "attempt {attempt}"
            );
        }
        assert_eq!(delay_after(u32::MAX), Some(Delay::AfterMs(86_400_000)));
    }

    #[test]
    fn leaves_the_verdict_to_the_builtin() {
        let d = decide(&Ladder, &Attempt::builder().status(404).build());
        assert_eq!((d.verdict, d.delay), (Verdict::UseDefault, None));
        let d = decide(&Ladder, &Attempt::builder().status(500).build());
        assert_eq!(d.verdict, Verdict::UseDefault);
        assert_eq!(d.delay, Some(Delay::AfterMs(300_000)));
    }
}
