//! The gateways a drill runs: one, or several nodes sharing a scratch
//! PostgreSQL database (cluster mode), each with its own data dir and node id
//! and the same admin token ([`Node`]); and how much of the work each one did.

use std::path::Path;

use http::Method;

use super::DrillError;
use super::api::GatewayApi;
use super::cluster_node::Node;
use super::crash_store::{CrashStore, RunStore};
use crate::client::ApiRequest;
use crate::lab::child_gateway::GatewaySpec;

/// The running nodes; the scratch database lives as long as this does.
pub(super) struct DrillNodes {
    /// Declared before the store, so stopped before the database is dropped.
    pub(super) nodes: Vec<Node>,
    pub(super) store: RunStore,
}

impl DrillNodes {
    /// Starts `count` nodes from `spec` (each with its own data dir under `work`
    /// and its own id) on `store`; more than one needs PostgreSQL. `kills` is
    /// what the store's preparation checks a database restart against.
    pub(super) async fn start(
        mut spec: GatewaySpec,
        count: usize,
        store: &CrashStore,
        kills: u32,
        work: &Path,
    ) -> Result<Self, DrillError> {
        if count > 1 && matches!(store, CrashStore::Sled) {
            return Err(DrillError::Database(
                "several nodes share one PostgreSQL database: give --store-url".into(),
            ));
        }
        let store = RunStore::prepare(store, kills, &mut spec).await?;
        let mut nodes: Vec<Node> = (0..count).map(|i| Node::new(i, &spec, work)).collect();
        for node in &mut nodes {
            node.start().await?;
        }
        Ok(Self { nodes, store })
    }

    /// A client of the first node with the admin token.
    pub(super) fn admin(&self) -> Result<GatewayApi, DrillError> {
        self.nodes[0].admin()
    }

    /// A client per node, sending `token`.
    pub(super) fn apis(&self, token: &str) -> Result<Vec<GatewayApi>, DrillError> {
        self.nodes.iter().map(|n| n.client(token)).collect()
    }

    /// Attempts each node made, from its `/metrics`.
    pub(super) async fn attempts_per_node(&self) -> Result<Vec<u64>, DrillError> {
        let mut made = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let answer = node
                .admin()?
                .client()
                .exchange(ApiRequest::path(Method::GET, "/metrics"))
                .await
                .map_err(|e| DrillError::Api(format!("GET /metrics: {e}")))?;
            made.push(attempts_total(&String::from_utf8_lossy(&answer.body)));
        }
        Ok(made)
    }

    /// Stops every node (SIGTERM); their exit codes, by node id.
    pub(super) async fn terminate(&mut self) -> Vec<(String, Option<i32>)> {
        let mut exits = Vec::with_capacity(self.nodes.len());
        for node in &mut self.nodes {
            exits.push((node.id.clone(), node.terminate().await));
        }
        exits
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
