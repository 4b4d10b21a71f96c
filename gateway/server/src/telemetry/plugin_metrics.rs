//! The plugin host's gauges and counters, read from the host at scrape time:
//! its instance pool's slots, and where its decisions ran.

use super::Telemetry;
use super::metrics::{PathLabel, SlotStateLabel};
use crate::policy::wasm::{DecisionPaths, PoolUsage};

impl Telemetry {
    /// The plugin pool's slots and the decisions' paths, read at scrape time.
    pub fn observe_plugins(&self, usage: &PoolUsage, paths: &DecisionPaths) {
        self.count_paths(paths);
        let states = [
            ("capacity", u64::from(usage.slots)),
            ("in_use", usage.memories_in_use),
            ("warm", usage.memories_warm),
        ];
        for (state, n) in states {
            let gauge = self
                .metrics
                .plugin_memory_slots
                .get_or_create(&SlotStateLabel { state });
            gauge.set(i64::try_from(n).unwrap_or(i64::MAX));
        }
    }

    /// Adds to each path's counter what it gained since the last scrape.
    fn count_paths(&self, now: &DecisionPaths) {
        let Ok(mut counted) = self.paths_counted.lock() else {
            return;
        };
        let paths = [
            ("inline", now.inline, counted.inline),
            ("escalated", now.escalated, counted.escalated),
            ("pool", now.pool, counted.pool),
        ];
        for (path, now, before) in paths {
            self.metrics
                .plugin_decision_paths
                .get_or_create(&PathLabel { path })
                .inc_by(now.saturating_sub(before));
        }
        *counted = *now;
    }
}
