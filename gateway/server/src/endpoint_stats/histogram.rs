//! The latency histogram: attempts counted in slots with fixed, log-scale upper
//! bounds, the same for every bucket and every gateway, so histograms add slot by
//! slot; percentiles are read from the sum (they would not add themselves).
//!
//! A percentile is the upper bound of the slot holding it: p50 is the bound of
//! the slot where the ⌈0.5·n⌉-th fastest of n attempts fell, so the true value
//! is at most that and above the slot before it. The last slot has no upper
//! bound; a percentile that falls there reads as the largest bound, 300 000 ms,
//! the longest timeout an endpoint may have.

use crate::store::StatsCounts;

/// Upper bounds, in milliseconds and inclusive, of the latency slots; one more
/// slot, open-ended, holds slower attempts.
pub(crate) const LATENCY_BOUNDS_MS: [u64; 17] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 60_000, 120_000,
    300_000,
];

/// How many slots a histogram has: one per bound, and the open-ended one.
pub(crate) const SLOTS: usize = LATENCY_BOUNDS_MS.len() + 1;

/// A percentile, in thousandths (so p99.9 can be said exactly, and no float
/// rounding moves a rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Percentile(u64);

impl Percentile {
    pub(crate) const P50: Self = Self(500);
    pub(crate) const P99: Self = Self(990);
}

/// The slot an attempt that took `ms` falls in.
pub(crate) fn slot_of(ms: u64) -> usize {
    LATENCY_BOUNDS_MS
        .iter()
        .position(|bound| ms <= *bound)
        .unwrap_or(LATENCY_BOUNDS_MS.len())
}

/// Counts one attempt into `counts`: delivered (answered 2xx) or failed, and
/// its latency.
pub(crate) fn count_attempt(counts: &mut StatsCounts, delivered: bool, duration_ms: u64) {
    counts.attempts += 1;
    if delivered {
        counts.delivered += 1;
    } else {
        counts.failed += 1;
    }
    if counts.latency.len() < SLOTS {
        counts.latency.resize(SLOTS, 0);
    }
    counts.latency[slot_of(duration_ms)] += 1;
}

/// The latency at percentile `p` of the attempts `slots` counts (module docs:
/// the upper bound of its slot); `None` when it counts none. Slots past the
/// known ones (from a build with more bounds) read as the open-ended slot.
pub(crate) fn percentile_ms(slots: &[u64], p: Percentile) -> Option<u64> {
    let total: u64 = slots.iter().sum();
    if total == 0 {
        return None;
    }
    // The rank of the attempt at p: ⌈p·n⌉, at least the first.
    let rank = (u128::from(total) * u128::from(p.0)).div_ceil(1_000).max(1);
    let mut seen: u128 = 0;
    for (i, n) in slots.iter().enumerate() {
        seen += u128::from(*n);
        if seen >= rank {
            let last = LATENCY_BOUNDS_MS.len() - 1;
            return Some(LATENCY_BOUNDS_MS[i.min(last)]);
        }
    }
    LATENCY_BOUNDS_MS.last().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A histogram of attempts that took each of `latencies`.
    fn histogram(latencies: &[u64]) -> Vec<u64> {
        let mut counts = StatsCounts::default();
        for ms in latencies {
            count_attempt(&mut counts, true, *ms);
        }
        counts.latency
    }

    #[test]
    fn a_latency_falls_in_the_first_slot_whose_bound_holds_it() {
        assert_eq!(slot_of(0), 0);
        assert_eq!(slot_of(1), 0);
        assert_eq!(slot_of(2), 1);
        assert_eq!(slot_of(3), 2);
        assert_eq!(slot_of(1_000), 9);
        assert_eq!(slot_of(1_001), 10);
        assert_eq!(slot_of(300_000), 16);
        assert_eq!(slot_of(300_001), 17);
        assert_eq!(slot_of(u64::MAX), SLOTS - 1);
        assert!(LATENCY_BOUNDS_MS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn counting_splits_delivered_from_failed_and_fills_the_histogram() {
        let mut counts = StatsCounts::default();
        count_attempt(&mut counts, true, 7);
        count_attempt(&mut counts, false, 7);
        count_attempt(&mut counts, false, 4_000);
        assert_eq!(
            (counts.attempts, counts.delivered, counts.failed),
            (3, 1, 2)
        );
        assert_eq!(counts.latency.len(), SLOTS);
        assert_eq!((counts.latency[3], counts.latency[11]), (2, 1));
    }

    #[test]
    fn percentiles_are_the_bound_of_the_slot_holding_their_rank() {
        assert_eq!(percentile_ms(&histogram(&[]), Percentile::P50), None);
        assert_eq!(percentile_ms(&[], Percentile::P99), None);
        // One attempt: every percentile is its slot's bound.
        let one = histogram(&[30]);
        assert_eq!(percentile_ms(&one, Percentile::P50), Some(50));
        assert_eq!(percentile_ms(&one, Percentile::P99), Some(50));
        // 100 attempts: 50 at 3 ms, 49 at 150 ms, 1 at 9 s. The 50th is the
        // last fast one; the 99th the last of the 150 ms ones; the slowest is
        // beyond p99.
        let mut latencies = vec![3; 50];
        latencies.extend([150; 49]);
        latencies.push(9_000);
        let h = histogram(&latencies);
        assert_eq!(percentile_ms(&h, Percentile::P50), Some(5));
        assert_eq!(percentile_ms(&h, Percentile::P99), Some(200));
        // One more slow attempt moves p99 (rank ⌈0.99·101⌉ = 100) to its slot.
        latencies.push(9_000);
        let h = histogram(&latencies);
        assert_eq!(percentile_ms(&h, Percentile::P99), Some(10_000));
        assert_eq!(
            percentile_ms(&h, Percentile::P50),
            Some(200),
            "rank 51 of 101 is a 150 ms one"
        );
    }

    #[test]
    fn histograms_added_give_the_percentiles_of_all_their_attempts() {
        // Two gateways' histograms of one bucket: the sum's p50 is neither's.
        let fast = histogram(&[1; 10]);
        let slow = histogram(&[800; 12]);
        let mut merged = StatsCounts {
            latency: fast.clone(),
            ..StatsCounts::default()
        };
        merged.add(&StatsCounts {
            latency: slow.clone(),
            ..StatsCounts::default()
        });
        assert_eq!(percentile_ms(&fast, Percentile::P50), Some(1));
        assert_eq!(percentile_ms(&slow, Percentile::P50), Some(1_000));
        assert_eq!(percentile_ms(&merged.latency, Percentile::P50), Some(1_000));
        assert_eq!(percentile_ms(&merged.latency, Percentile::P99), Some(1_000));
        let mut fast_heavy = merged.clone();
        fast_heavy.add(&StatsCounts {
            latency: histogram(&[1; 4]),
            ..StatsCounts::default()
        });
        assert_eq!(percentile_ms(&fast_heavy.latency, Percentile::P50), Some(1));
    }

    #[test]
    fn the_open_ended_slot_reads_as_the_largest_bound() {
        let h = histogram(&[400_000, 400_000]);
        assert_eq!(percentile_ms(&h, Percentile::P50), Some(300_000));
        // A histogram with more slots than this build knows reads the same.
        let mut longer = h.clone();
        longer.push(5);
        assert_eq!(percentile_ms(&longer, Percentile::P99), Some(300_000));
    }
}
