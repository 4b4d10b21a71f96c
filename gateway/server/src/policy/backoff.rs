//! Backoff with jitter: the delay before the next attempt.
//!
//! The strategy gives a delay for the attempt n that just failed, capped at `max_delay`;
//! the jitter then spreads it and the result is capped again. Randomness comes from the
//! caller's RNG, so a seeded RNG gives reproducible delays (the herd simulator reuses
//! these functions).

use rand::{Rng, RngExt};

use super::{EffectivePolicy, Jitter, Strategy};

/// The strategy's delay after attempt `attempt` (1-based) failed, capped at
/// `max_delay_ms`, before jitter. Attempt 0 counts as 1. Never overflows: exponential
/// growth is computed in `f64` and saturates at the cap.
pub fn strategy_delay_ms(strategy: &Strategy, max_delay_ms: u64, attempt: u32) -> u64 {
    let steps = attempt.saturating_sub(1);
    let delay = match strategy {
        Strategy::Exponential { base_ms, factor } => {
            let delay = *base_ms as f64 * factor.powf(f64::from(steps));
            if delay.is_finite() && delay < max_delay_ms as f64 {
                delay.round() as u64
            } else {
                max_delay_ms
            }
        }
        Strategy::Linear { base_ms, step_ms } => {
            base_ms.saturating_add(step_ms.saturating_mul(u64::from(steps)))
        }
        Strategy::Fixed { base_ms } => *base_ms,
        Strategy::Schedule { schedule_ms } => {
            let index = usize::try_from(steps).unwrap_or(usize::MAX);
            schedule_ms
                .get(index)
                .or(schedule_ms.last())
                .copied()
                .unwrap_or(0)
        }
    };
    delay.min(max_delay_ms)
}

/// The jittered, capped backoff after attempt `attempt` failed.
///
/// `prev_delay_ms` is the delay chosen after the previous attempt; only decorrelated
/// jitter reads it (prev₀ = base when `None`). Pass `None` at the start of a series.
pub fn backoff_delay(
    policy: &EffectivePolicy,
    attempt: u32,
    prev_delay_ms: Option<u64>,
    rng: &mut impl Rng,
) -> u64 {
    let cap = policy.max_delay_ms;
    let delay = strategy_delay_ms(&policy.strategy, cap, attempt);
    let jittered = match policy.jitter {
        Jitter::None => delay,
        Jitter::Full => rng.random_range(0..=delay),
        Jitter::Equal => {
            let half = delay / 2;
            half + rng.random_range(0..=delay - half)
        }
        Jitter::Decorrelated => {
            let base = policy.base_ms();
            let prev = prev_delay_ms.unwrap_or(base);
            let upper = prev.saturating_mul(3).max(base);
            rng.random_range(base..=upper)
        }
        Jitter::Proportional { ratio } => {
            let scale = rng.random_range((1.0 - ratio)..=(1.0 + ratio));
            let scaled = delay as f64 * scale;
            if scaled.is_finite() && scaled < cap as f64 {
                scaled.max(0.0).round() as u64
            } else {
                cap
            }
        }
    };
    jittered.min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    const MINUTE: u64 = 60_000;
    const HOUR: u64 = 60 * MINUTE;

    fn policy(strategy: Strategy, jitter: Jitter, max_delay_ms: u64) -> EffectivePolicy {
        EffectivePolicy {
            strategy,
            jitter,
            max_delay_ms,
            ..EffectivePolicy::default_preset()
        }
    }

    /// `draws` delays for attempt `attempt`, one per seed.
    fn draws(policy: &EffectivePolicy, attempt: u32, prev: Option<u64>, draws: u64) -> Vec<u64> {
        (0..draws)
            .map(|seed| backoff_delay(policy, attempt, prev, &mut StdRng::seed_from_u64(seed)))
            .collect()
    }

    fn assert_spread_within(values: &[u64], low: u64, high: u64) {
        assert!(
            values.iter().all(|v| (low..=high).contains(v)),
            "outside [{low}, {high}]"
        );
        assert!(values.iter().any(|v| *v != values[0]), "all draws equal");
    }

    #[test]
    fn exponential_doubles_up_to_the_cap() {
        let exponential = Strategy::Exponential {
            base_ms: 1_000,
            factor: 2.0,
        };
        let delays: Vec<u64> = (1..=14)
            .map(|n| strategy_delay_ms(&exponential, HOUR, n))
            .collect();
        let expected = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048];
        assert_eq!(delays[..12], expected.map(|s| s * 1_000));
        assert_eq!(delays[12..], [HOUR, HOUR]);
        // No overflow far past the cap, nor with a huge cap.
        assert_eq!(strategy_delay_ms(&exponential, HOUR, u32::MAX), HOUR);
        assert_eq!(strategy_delay_ms(&exponential, u64::MAX, 10_000), u64::MAX);
        let fractional = Strategy::Exponential {
            base_ms: 1_000,
            factor: 1.5,
        };
        assert_eq!(strategy_delay_ms(&fractional, HOUR, 3), 2_250);
        assert_eq!(strategy_delay_ms(&exponential, HOUR, 0), 1_000);
    }

    #[test]
    fn linear_fixed_and_schedule() {
        let linear = Strategy::Linear {
            base_ms: 5_000,
            step_ms: 2_000,
        };
        let delays: Vec<u64> = (1..=4)
            .map(|n| strategy_delay_ms(&linear, HOUR, n))
            .collect();
        assert_eq!(delays, [5_000, 7_000, 9_000, 11_000]);
        assert_eq!(strategy_delay_ms(&linear, 8_000, 3), 8_000);
        assert_eq!(
            strategy_delay_ms(&linear, u64::MAX, u32::MAX),
            5_000 + 2_000 * (u64::from(u32::MAX) - 1)
        );

        let fixed = Strategy::Fixed { base_ms: 3_000 };
        assert!((1..=50).all(|n| strategy_delay_ms(&fixed, HOUR, n) == 3_000));

        let schedule = Strategy::Schedule {
            schedule_ms: vec![5 * MINUTE, 30 * MINUTE, 3 * HOUR],
        };
        let delays: Vec<u64> = (1..=5)
            .map(|n| strategy_delay_ms(&schedule, 24 * HOUR, n))
            .collect();
        assert_eq!(
            delays,
            [5 * MINUTE, 30 * MINUTE, 3 * HOUR, 3 * HOUR, 3 * HOUR]
        );
        assert_eq!(strategy_delay_ms(&schedule, HOUR, 3), HOUR);
    }

    #[test]
    fn no_jitter_is_exact() {
        let ladder = EffectivePolicy::preset("ladder").unwrap();
        let delays: Vec<u64> = (1..=7).map(|n| draws(&ladder, n, None, 1)[0]).collect();
        let day = 24 * HOUR;
        assert_eq!(
            delays,
            [5 * MINUTE, 30 * MINUTE, 3 * HOUR, 18 * HOUR, day, day, day]
        );
    }

    #[test]
    fn full_jitter_stays_in_zero_to_d() {
        let fixed = policy(Strategy::Fixed { base_ms: 10_000 }, Jitter::Full, HOUR);
        assert_spread_within(&draws(&fixed, 1, None, 1_000), 0, 10_000);
    }

    #[test]
    fn equal_jitter_stays_in_half_d_to_d() {
        let fixed = policy(Strategy::Fixed { base_ms: 10_001 }, Jitter::Equal, HOUR);
        assert_spread_within(&draws(&fixed, 1, None, 1_000), 5_000, 10_001);
    }

    #[test]
    fn decorrelated_jitter_grows_from_base_to_three_prev() {
        let fixed = policy(
            Strategy::Fixed { base_ms: 1_000 },
            Jitter::Decorrelated,
            20_000,
        );
        assert_spread_within(&draws(&fixed, 1, None, 1_000), 1_000, 3_000);
        assert_spread_within(&draws(&fixed, 2, Some(4_000), 1_000), 1_000, 12_000);
        // Capped at max_delay.
        let capped = draws(&fixed, 5, Some(15_000), 1_000);
        assert_spread_within(&capped, 1_000, 20_000);
        assert!(capped.contains(&20_000));
    }

    #[test]
    fn proportional_jitter_stays_in_ratio_band_and_under_the_cap() {
        let fixed = policy(
            Strategy::Fixed { base_ms: 10_000 },
            Jitter::Proportional { ratio: 0.3 },
            HOUR,
        );
        assert_spread_within(&draws(&fixed, 1, None, 1_000), 7_000, 13_000);
        let at_cap = policy(
            Strategy::Fixed { base_ms: HOUR },
            Jitter::Proportional { ratio: 0.2 },
            HOUR,
        );
        assert_spread_within(&draws(&at_cap, 1, None, 1_000), 48 * MINUTE, HOUR);
    }

    #[test]
    fn the_same_seed_gives_the_same_delay() {
        let default = EffectivePolicy::default_preset();
        assert_eq!(draws(&default, 7, None, 50), draws(&default, 7, None, 50));
    }
}
