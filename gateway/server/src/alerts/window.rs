//! A sliding window of attempt counts in 60 buckets: bounded memory whatever the rate.

const BUCKETS: u64 = 60;

/// Attempts and failures per bucket of `window / 60`.
#[derive(Debug, Default)]
pub(super) struct FailureWindow {
    /// (bucket number, attempts, failures)
    buckets: Vec<(u64, u64, u64)>,
}

impl FailureWindow {
    fn bucket(now_ms: u64, window_ms: u64) -> u64 {
        now_ms / (window_ms / BUCKETS).max(1)
    }

    /// Counts one attempt.
    pub(super) fn record(&mut self, now_ms: u64, window_ms: u64, failed: bool) {
        let b = Self::bucket(now_ms, window_ms);
        self.buckets.retain(|(n, ..)| n + BUCKETS > b);
        match self.buckets.iter_mut().find(|(n, ..)| *n == b) {
            Some(e) => {
                e.1 += 1;
                e.2 += u64::from(failed);
            }
            None => self.buckets.push((b, 1, u64::from(failed))),
        }
    }

    /// (attempts, failures) within the window ending now.
    pub(super) fn totals(&self, now_ms: u64, window_ms: u64) -> (u64, u64) {
        let b = Self::bucket(now_ms, window_ms);
        self.buckets
            .iter()
            .filter(|(n, ..)| n + BUCKETS > b)
            .fold((0, 0), |(a, f), (_, x, y)| (a + x, f + y))
    }
}
