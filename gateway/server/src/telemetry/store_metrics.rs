//! The store's own metrics: which node this is (`hookgate_node_info`), its
//! errors by kind and whether storage is failing now, on every backend; and, on
//! a backend that has them (PostgreSQL), its pool's connections, read at scrape
//! time, and how long each operation held a connection.

use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::metrics::{PoolGauges, SlotStateLabel};
use crate::store::Store;

/// The store's metrics that are read at scrape time: the database pool's
/// connections, on a backend that has one.
#[derive(Default)]
pub(crate) struct StoreMetrics {
    pool: Option<PoolGauges>,
}

impl StoreMetrics {
    /// Adds `store`'s metrics to `registry`.
    pub(super) fn register(registry: &mut Registry, store: &Store) -> Self {
        // A gauge of 1 rather than an info metric, which the classic text
        // format does not have.
        let node = Family::<Vec<(&'static str, String)>, Gauge>::default();
        let labels = vec![
            ("node_id", store.node_id().to_owned()),
            ("backend", store.backend_name().to_owned()),
        ];
        node.get_or_create(&labels).set(1);
        registry.register("node_info", "This gateway: its node id and backend", node);
        registry.register(
            "store_errors",
            "Storage errors by kind: unavailable, conflict, full, corrupt",
            crate::store::error_counters(),
        );
        registry.register(
            "store_failing",
            "1 while storage fails (deliveries pause, /healthz answers 503) until a probe write succeeds",
            store.health().gauge(),
        );
        let Some(pg) = store.postgres() else {
            return Self::default();
        };
        let pool = PoolGauges::default();
        registry.register(
            "store_pool_connections",
            "Database connections: open, in use, and the most the pool opens",
            pool.clone(),
        );
        registry.register(
            "store_operation_seconds",
            "Time each store operation held its database connection",
            pg.operation_seconds(),
        );
        let batches = pg.batch_counters();
        let counters = [
            ("store_claims", "Claims of due work", batches.claims),
            (
                "store_claimed_rows",
                "Due rows the claims took",
                batches.claimed_rows,
            ),
            (
                "store_ingest_batches",
                "Ingest transactions",
                batches.ingest_batches,
            ),
            (
                "store_ingest_batched_events",
                "Events written by batched ingest transactions",
                batches.ingested_events,
            ),
            (
                "store_outcome_batches",
                "Statements that wrote attempt outcomes together",
                batches.outcome_batches,
            ),
            (
                "store_batched_outcomes",
                "Attempt outcomes written by those statements",
                batches.batched_outcomes,
            ),
        ];
        for (name, help, counter) in counters {
            registry.register(name, help, counter);
        }
        Self { pool: Some(pool) }
    }

    /// Reads the pool's use at scrape time.
    pub(crate) fn observe(&self, store: &Store) {
        let (Some(gauges), Some(pg)) = (&self.pool, store.postgres()) else {
            return;
        };
        let (open, in_use, max) = pg.pool_status();
        for (state, n) in [("open", open), ("in_use", in_use), ("max", max)] {
            let n = i64::try_from(n).unwrap_or(i64::MAX);
            gauges.get_or_create(&SlotStateLabel { state }).set(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::alerts::AlertMonitor;
    use crate::ids::TenantId;
    use crate::store::testing::TestStore;
    use crate::telemetry::Telemetry;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_on_postgres_reports_its_pool_operations_and_errors() {
        let t = TestStore::postgres().await;
        let (monitor, _alerts) = AlertMonitor::new(crate::config::Config::default().alerts);
        let mut telemetry = Telemetry::new(false, monitor);
        telemetry.register_store(&t.store);
        t.store.tenant(&TenantId::from("acme")).await.unwrap();
        telemetry.store_metrics().observe(&t.store);
        let metrics = telemetry.render_metrics(0);
        for sample in [
            "hookgate_store_pool_connections{state=\"max\"} 8\n",
            "hookgate_store_pool_connections{state=\"in_use\"} ",
            "# TYPE hookgate_store_operation_seconds histogram\n",
            "# TYPE hookgate_store_errors counter\n",
            &format!(
                "hookgate_node_info{{node_id=\"{}\",backend=\"postgres\"}} 1\n",
                t.store.node_id()
            ),
        ] {
            assert!(metrics.contains(sample), "{sample} in:\n{metrics}");
        }
        let count = metrics
            .lines()
            .find_map(|l| l.strip_prefix("hookgate_store_operation_seconds_count "))
            .and_then(|n| n.parse::<u64>().ok());
        assert!(count.is_some_and(|n| n >= 1), "{metrics}");
    }

    #[tokio::test]
    async fn the_embedded_store_adds_the_node_its_errors_and_its_state() {
        let t = TestStore::sled().await;
        let (monitor, _alerts) = AlertMonitor::new(crate::config::Config::default().alerts);
        let mut telemetry = Telemetry::new(false, monitor);
        telemetry.register_store(&t.store);
        telemetry.store_metrics().observe(&t.store);
        let metrics = telemetry.render_metrics(0);
        assert!(!metrics.contains("hookgate_store_pool"), "{metrics}");
        assert!(metrics.contains("hookgate_store_failing 0\n"), "{metrics}");
        assert!(
            metrics.contains("hookgate_store_errors_total{kind=\"full\"} "),
            "{metrics}"
        );
        let node = format!(
            "hookgate_node_info{{node_id=\"{}\",backend=\"sled\"}} 1\n",
            t.store.node_id()
        );
        assert!(metrics.contains(&node), "{metrics}");
    }
}
