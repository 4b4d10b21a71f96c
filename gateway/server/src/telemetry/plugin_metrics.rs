//! The plugin host's gauges and counters, read from the host at scrape time:
//! its instance pool's slots, and where its decisions ran.

use std::sync::Mutex;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

use super::metrics::{PathLabel, SlotStateLabel};
use crate::plugin_runtime::{DecisionPaths, PoolUsage};

/// The plugin host's metrics: its pool's slots, and its decisions' paths with
/// what of them was already counted.
pub(crate) struct PluginMetrics {
    memory_slots: Family<SlotStateLabel, Gauge>,
    decision_paths: Family<PathLabel, Counter>,
    /// The decision paths already added to their counters.
    counted: Mutex<DecisionPaths>,
}

impl PluginMetrics {
    /// Over the registered families (shared with the registry).
    pub(super) fn new(
        memory_slots: Family<SlotStateLabel, Gauge>,
        decision_paths: Family<PathLabel, Counter>,
    ) -> Self {
        Self {
            memory_slots,
            decision_paths,
            counted: Mutex::default(),
        }
    }

    /// The plugin pool's slots and the decisions' paths, read at scrape time.
    pub(crate) fn observe(&self, usage: &PoolUsage, paths: &DecisionPaths) {
        self.count_paths(paths);
        let states = [
            ("capacity", u64::from(usage.slots)),
            ("in_use", usage.memories_in_use),
            ("warm", usage.memories_warm),
        ];
        for (state, n) in states {
            let gauge = self.memory_slots.get_or_create(&SlotStateLabel { state });
            gauge.set(i64::try_from(n).unwrap_or(i64::MAX));
        }
    }

    /// Adds to each path's counter what it gained since the last scrape.
    fn count_paths(&self, now: &DecisionPaths) {
        let Ok(mut guard) = self.counted.lock() else {
            return;
        };
        let counted = &mut *guard;
        // Concurrent scrapes may arrive with their snapshots out of order: only
        // what is beyond the most already counted is added, so nothing is
        // counted twice.
        let paths = [
            ("inline", now.inline, &mut counted.inline),
            ("escalated", now.escalated, &mut counted.escalated),
            ("pool", now.pool, &mut counted.pool),
        ];
        for (path, now, before) in paths {
            self.decision_paths
                .get_or_create(&PathLabel { path })
                .inc_by(now.saturating_sub(*before));
            *before = (*before).max(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::AlertMonitor;
    use crate::telemetry::Telemetry;

    #[test]
    fn scrapes_whose_snapshots_arrive_out_of_order_never_count_twice() {
        let (monitor, _alerts) = AlertMonitor::new(crate::config::Config::default().alerts);
        let telemetry = Telemetry::new(false, monitor);
        let paths = |inline| DecisionPaths {
            inline,
            escalated: 1,
            pool: 0,
        };
        // A second scrape's older snapshot lands after a newer one.
        for inline in [5, 3, 6] {
            telemetry.plugins().count_paths(&paths(inline));
        }
        let metrics = telemetry.render_metrics(0);
        for sample in [
            "hookgate_plugin_decision_paths_total{path=\"inline\"} 6\n",
            "hookgate_plugin_decision_paths_total{path=\"escalated\"} 1\n",
        ] {
            assert!(metrics.contains(sample), "{sample} in:\n{metrics}");
        }
    }
}
