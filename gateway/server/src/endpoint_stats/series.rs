//! The time axis of endpoint stats: buckets aligned to the epoch, the range a
//! query covers (whole buckets, clamped to the history kept and to now), and the
//! dense series answered: every bucket of the range, oldest first, zeros where
//! nothing happened, with the totals over them.

use crate::config::StatsConfig;
use crate::store::{StatsBucket, StatsCounts};

/// What a query covers when it names no start: this long before its end.
const DEFAULT_SPAN_MS: u64 = 24 * 3_600_000;

/// Bucket width and history, from `[stats]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatsWindow {
    pub(crate) bucket_ms: u64,
    pub(crate) history_ms: u64,
}

/// Whole buckets from `start_ms` (a bucket's start) to `end_ms` (exclusive, a
/// bucket's start too); empty when they are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BucketRange {
    pub(crate) start_ms: u64,
    pub(crate) end_ms: u64,
}

/// Why a range cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RangeError {
    /// The range ends where it starts, or before.
    #[error("until must be after since")]
    Empty,
}

/// The answer's series: one entry per bucket of the range, and their sum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Series {
    pub(crate) range: BucketRange,
    /// `(start, counts)` for every bucket of the range, oldest first.
    pub(crate) buckets: Vec<(u64, StatsCounts)>,
    pub(crate) totals: StatsCounts,
}

impl StatsWindow {
    pub(crate) fn of(config: &StatsConfig) -> Self {
        Self {
            bucket_ms: config.bucket_ms(),
            history_ms: config.history_ms(),
        }
    }

    /// The start of the bucket holding `at_ms`.
    pub(crate) fn bucket_start(&self, at_ms: u64) -> u64 {
        at_ms - at_ms % self.bucket_ms
    }

    /// The oldest bucket kept at `now_ms`: the one holding the moment the
    /// history reaches back to.
    pub(crate) fn history_start(&self, now_ms: u64) -> u64 {
        self.bucket_start(now_ms.saturating_sub(self.history_ms))
    }

    /// The buckets from `since` (default: a day before the end) to `until`
    /// (exclusive; default: now), widened to whole buckets, then clamped to the
    /// history kept and to the bucket holding now. A range the clamp empties
    /// (it lies wholly before the history) is empty, not an error.
    ///
    /// # Errors
    /// [`RangeError::Empty`] when `until` is not after `since`.
    pub(crate) fn range(
        &self,
        since_ms: Option<u64>,
        until_ms: Option<u64>,
        now_ms: u64,
    ) -> Result<BucketRange, RangeError> {
        let until = until_ms.unwrap_or(now_ms);
        let since = since_ms.unwrap_or_else(|| until.saturating_sub(DEFAULT_SPAN_MS));
        if until <= since {
            return Err(RangeError::Empty);
        }
        let now_end = self.bucket_start(now_ms).saturating_add(self.bucket_ms);
        let end = self.bucket_end(until).min(now_end);
        let start = self.bucket_start(since).max(self.history_start(now_ms));
        Ok(BucketRange {
            start_ms: start.min(end),
            end_ms: end,
        })
    }

    /// The first bucket start at or after `at_ms`.
    fn bucket_end(&self, at_ms: u64) -> u64 {
        match at_ms % self.bucket_ms {
            0 => at_ms,
            into => at_ms.saturating_add(self.bucket_ms - into),
        }
    }

    /// The dense series of `range` from the `stored` buckets in it. A stored
    /// bucket counts in the bucket holding its start, so buckets stored at
    /// another width (before `stats.bucket_seconds` changed) still add up.
    pub(crate) fn series(&self, range: BucketRange, stored: Vec<StatsBucket>) -> Series {
        let len = (range.end_ms - range.start_ms) / self.bucket_ms;
        let mut buckets: Vec<(u64, StatsCounts)> = (0..len)
            .map(|i| (range.start_ms + i * self.bucket_ms, StatsCounts::default()))
            .collect();
        let mut totals = StatsCounts::default();
        for b in stored {
            if !(range.start_ms..range.end_ms).contains(&b.start_ms) {
                continue;
            }
            let i = (self.bucket_start(b.start_ms) - range.start_ms) / self.bucket_ms;
            if let Some((_, counts)) = buckets.get_mut(i as usize) {
                counts.add(&b.counts);
                totals.add(&b.counts);
            }
        }
        Series {
            range,
            buckets,
            totals,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;
    const HOUR: u64 = 60 * MIN;

    /// 5-minute buckets kept 48 hours, as by default.
    fn window() -> StatsWindow {
        StatsWindow::of(&StatsConfig::default())
    }

    fn counts(attempts: u64, delivered: u64) -> StatsCounts {
        StatsCounts {
            attempts,
            delivered,
            failed: attempts - delivered,
            latency: vec![delivered, attempts - delivered],
        }
    }

    #[test]
    fn buckets_are_aligned_to_the_epoch() {
        let w = window();
        assert_eq!(w.bucket_ms, 5 * MIN);
        assert_eq!(w.bucket_start(0), 0);
        assert_eq!(w.bucket_start(5 * MIN - 1), 0);
        assert_eq!(w.bucket_start(5 * MIN), 5 * MIN);
        // 2026-12-04T10:07:31.250Z falls in the bucket of 10:05:00.
        let at = 1_796_378_851_250;
        assert_eq!(crate::clock::rfc3339_ms(at), "2026-12-04T10:07:31.250Z");
        assert_eq!(
            crate::clock::rfc3339_ms(w.bucket_start(at)),
            "2026-12-04T10:05:00.000Z"
        );
        assert_eq!(w.history_start(100 * HOUR + MIN), 52 * HOUR);
    }

    #[test]
    fn a_range_defaults_to_the_last_day_in_whole_buckets() {
        let w = window();
        let now = 100 * HOUR + 7 * MIN;
        let r = w.range(None, None, now).unwrap();
        // From the bucket holding a day ago to the end of the one holding now.
        assert_eq!(
            r,
            BucketRange {
                start_ms: 76 * HOUR + 5 * MIN,
                end_ms: 100 * HOUR + 10 * MIN,
            }
        );
        assert_eq!((r.end_ms - r.start_ms) / w.bucket_ms, 24 * 12 + 1);
        // An end given: a day before it.
        let r = w.range(None, Some(90 * HOUR), now).unwrap();
        assert_eq!((r.start_ms, r.end_ms), (66 * HOUR, 90 * HOUR));
    }

    #[test]
    fn a_range_is_widened_to_buckets_and_clamped_to_the_history_and_now() {
        let w = window();
        let now = 100 * HOUR + 7 * MIN;
        let r = w.range(Some(99 * HOUR + MIN), Some(99 * HOUR + 11 * MIN), now);
        assert_eq!(
            r.unwrap(),
            BucketRange {
                start_ms: 99 * HOUR,
                end_ms: 99 * HOUR + 15 * MIN,
            }
        );
        // Before the history, and past now.
        let r = w.range(Some(0), Some(200 * HOUR), now).unwrap();
        assert_eq!(
            (r.start_ms, r.end_ms),
            (52 * HOUR + 5 * MIN, 100 * HOUR + 10 * MIN)
        );
        // Wholly before the history: empty, at the end.
        let r = w.range(Some(0), Some(HOUR), now).unwrap();
        assert_eq!((r.start_ms, r.end_ms), (HOUR, HOUR));
        assert_eq!(w.series(r, Vec::new()).buckets, Vec::new());
        // An end not after the start is refused, whatever the clamp.
        assert_eq!(w.range(Some(HOUR), Some(HOUR), now), Err(RangeError::Empty));
        assert_eq!(w.range(Some(now + HOUR), None, now), Err(RangeError::Empty));
    }

    #[test]
    fn the_series_is_dense_oldest_first_and_totals_are_its_sum() {
        let w = window();
        let range = BucketRange {
            start_ms: 10 * HOUR,
            end_ms: 10 * HOUR + 20 * MIN,
        };
        let stored = vec![
            StatsBucket {
                start_ms: 10 * HOUR + 5 * MIN,
                counts: counts(3, 2),
            },
            StatsBucket {
                start_ms: 10 * HOUR + 15 * MIN,
                counts: counts(4, 1),
            },
            // Outside the range: left out.
            StatsBucket {
                start_ms: 10 * HOUR + 20 * MIN,
                counts: counts(9, 9),
            },
        ];
        let s = w.series(range, stored);
        let starts: Vec<u64> = s.buckets.iter().map(|(start, _)| *start).collect();
        assert_eq!(starts, [0, 5, 10, 15].map(|m| 10 * HOUR + m * MIN).to_vec());
        assert_eq!(s.buckets[0].1, StatsCounts::default());
        assert_eq!(s.buckets[1].1, counts(3, 2));
        assert_eq!(s.buckets[3].1, counts(4, 1));
        let mut sum = StatsCounts::default();
        for (_, c) in &s.buckets {
            sum.add(c);
        }
        assert_eq!(s.totals, sum);
        assert_eq!((s.totals.attempts, s.totals.delivered), (7, 3));
    }

    #[test]
    fn buckets_stored_at_another_width_add_into_the_bucket_holding_them() {
        let w = window();
        let range = BucketRange {
            start_ms: 0,
            end_ms: 10 * MIN,
        };
        let one_minute = (0..10)
            .map(|m| StatsBucket {
                start_ms: m * MIN,
                counts: counts(1, 1),
            })
            .collect();
        let s = w.series(range, one_minute);
        assert_eq!(
            s.buckets
                .iter()
                .map(|(_, c)| c.attempts)
                .collect::<Vec<_>>(),
            [5, 5]
        );
    }
}
