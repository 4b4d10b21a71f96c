//! Per-endpoint rate limit: at most `rate_limit_per_s` attempts start in any window
//! of one second (plus a small margin, so that a receiver counting arrivals per
//! second never sees more, whatever the network jitter).

use std::collections::VecDeque;

/// The window, with its margin.
const WINDOW_MS: u64 = 1_050;

/// A sliding log of recent starts.
#[derive(Debug, Clone)]
pub(crate) struct RateWindow {
    per_window: usize,
    starts: VecDeque<u64>,
}

impl RateWindow {
    /// A limit of `per_s` starts per second.
    pub(crate) fn new(per_s: u32) -> Self {
        Self {
            per_window: per_s.max(1) as usize,
            starts: VecDeque::new(),
        }
    }

    /// The same log of starts under a new limit (an endpoint reloaded with a
    /// changed `rate_limit_per_s`): what started this second still counts.
    pub(crate) fn with_limit(mut self, per_s: u32) -> Self {
        self.per_window = per_s.max(1) as usize;
        self
    }

    /// The window every node shares, from its starts.
    pub(crate) fn from_starts(per_s: u32, starts: &[u64]) -> Self {
        Self {
            per_window: per_s.max(1) as usize,
            starts: starts.iter().copied().collect(),
        }
    }

    /// The starts still in the window at `now_ms`, oldest first, to share.
    pub(crate) fn starts(&mut self, now_ms: u64) -> Vec<u64> {
        self.available(now_ms);
        self.starts.iter().copied().collect()
    }

    /// How many attempts may start at `now_ms`.
    pub(crate) fn available(&mut self, now_ms: u64) -> usize {
        while self
            .starts
            .front()
            .is_some_and(|t| t.saturating_add(WINDOW_MS) <= now_ms)
        {
            self.starts.pop_front();
        }
        self.per_window.saturating_sub(self.starts.len())
    }

    /// When the next start becomes possible.
    pub(crate) fn next_free_at(&self, now_ms: u64) -> u64 {
        if self.starts.len() < self.per_window {
            return now_ms;
        }
        self.starts.front().map_or(now_ms, |t| t + WINDOW_MS)
    }

    /// Records a start.
    pub(crate) fn started(&mut self, now_ms: u64) {
        self.starts.push_back(now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_window_holds_more_than_the_limit() {
        let mut w = RateWindow::new(3);
        let mut starts = Vec::new();
        let mut now = 0;
        while starts.len() < 30 {
            if w.available(now) > 0 {
                w.started(now);
                starts.push(now);
            } else {
                now = w.next_free_at(now);
            }
        }
        for (i, t) in starts.iter().enumerate() {
            let in_window = starts[i..].iter().take_while(|s| **s < t + 1000).count();
            assert!(in_window <= 3, "{in_window} starts within a second of {t}");
        }
        assert!(
            now > 9 * 1000,
            "30 starts at 3/s take about 10 s, got {now}"
        );
    }
}
