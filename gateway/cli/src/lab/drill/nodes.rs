//! The gateways a drill runs: one, or several nodes sharing a scratch
//! PostgreSQL database (cluster mode), each with its own data dir and node id
//! and the same admin token; and how much of the work each one did.

use std::path::Path;

use http::Method;

use super::DrillError;
use super::api::Api;
use super::crash_store::{CrashStore, RunStore};
use crate::client::ApiRequest;
use crate::lab::child_gateway::{GatewayProcess, GatewaySpec};

/// The running nodes; the scratch database lives as long as this does.
pub(super) struct DrillNodes {
    pub(super) gateways: Vec<GatewayProcess>,
    pub(super) admin: String,
    _store: RunStore,
}

impl DrillNodes {
    /// Starts `count` nodes from `spec` (data dirs `node-N` under `work`) on
    /// `store`; more than one needs PostgreSQL.
    pub(super) async fn start(
        mut spec: GatewaySpec,
        count: usize,
        store: &CrashStore,
        work: &Path,
    ) -> Result<Self, DrillError> {
        if count > 1 && matches!(store, CrashStore::Sled) {
            return Err(DrillError::Database(
                "several nodes share one PostgreSQL database: give --store-url".into(),
            ));
        }
        let run_store = RunStore::prepare(store, 0, &mut spec).await?;
        let mut gateways = Vec::with_capacity(count);
        for n in 0..count {
            let mut node = spec.clone();
            node.data_dir = work.join(format!("node-{n}"));
            node.set("HOOKGATE_CLUSTER__NODE_ID", &format!("node-{n}"));
            gateways.push(node.spawn().await?);
        }
        Ok(Self {
            gateways,
            admin: spec.admin,
            _store: run_store,
        })
    }

    /// A client per node, sending `token`.
    pub(super) fn apis(&self, token: &str) -> Result<Vec<Api>, DrillError> {
        let apis = self.gateways.iter().map(|g| Api::new(g.addr, token));
        Ok(apis.collect::<Result<_, _>>()?)
    }

    /// Attempts each node made, from its `/metrics`.
    pub(super) async fn attempts_per_node(&self) -> Result<Vec<u64>, DrillError> {
        let mut made = Vec::with_capacity(self.gateways.len());
        for api in self.apis(&self.admin)? {
            let answer = api
                .client()
                .exchange(ApiRequest::path(Method::GET, "/metrics"))
                .await
                .map_err(|e| DrillError::Api(format!("GET /metrics: {e}")))?;
            made.push(attempts_total(&String::from_utf8_lossy(&answer.body)));
        }
        Ok(made)
    }

    /// Stops every node (SIGTERM).
    pub(super) async fn terminate(self) {
        for g in self.gateways {
            let _ = g.terminate().await;
        }
    }
}

/// The sum of `hookgate_attempts_total` over its labels.
fn attempts_total(metrics: &str) -> u64 {
    metrics
        .lines()
        .filter(|l| l.starts_with("hookgate_attempts_total"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// Each node's share of `made`, as percentages.
pub(super) fn shares(made: &[u64]) -> Vec<f64> {
    let total = made.iter().sum::<u64>().max(1) as f64;
    made.iter().map(|n| *n as f64 * 100.0 / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_summed_over_labels() {
        let text = "# TYPE hookgate_attempts counter\n\
            hookgate_attempts_total{error_kind=\"none\",outcome=\"2xx\"} 7\n\
            hookgate_attempts_total{error_kind=\"none\",outcome=\"5xx\"} 3\n\
            hookgate_attempts_per_delivery_count 4\n";
        assert_eq!(attempts_total(text), 10);
        assert_eq!(shares(&[1, 3]), [25.0, 75.0]);
    }
}
