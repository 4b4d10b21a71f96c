//! `[cluster]`: this gateway's place among the others that share its
//! PostgreSQL database: its node id, and how much it takes on at once.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// The largest `max_in_flight` an endpoint may ever have.
const TENANT_MAX_IN_FLIGHT_CEILING: usize = 1024;

/// The longest node id.
const NODE_ID_MAX: usize = 64;

/// Half the default node's places: the most an endpoint's `max_in_flight`
/// may be unless the operator says otherwise.
const DEFAULT_TENANT_MAX_IN_FLIGHT: usize = 128;

/// `[cluster]`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterConfig {
    /// This node's id in leases, attempts, logs, `/metrics` and `GET
    /// /v1/cluster`; a fresh one at each start when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// Most attempts this node has in flight at once, over all endpoints, so
    /// that work spreads across nodes and no backlog holds every place.
    pub node_max_in_flight: usize,
    /// Most of this node's places one tenant holds at once, so that one
    /// tenant's slow receivers never take every place from the others; and the
    /// most an endpoint's `max_in_flight` may be.
    pub tenant_max_in_flight: usize,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self {
            node_id: None,
            node_max_in_flight: 256,
            tenant_max_in_flight: DEFAULT_TENANT_MAX_IN_FLIGHT,
        }
    }
}

impl ClusterConfig {
    /// Checks each key, naming the one refused.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if let Some(id) = &self.node_id {
            let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
            if id.is_empty() || id.len() > NODE_ID_MAX || !id.chars().all(allowed) {
                return Err(super::invalid(
                    "cluster.node_id",
                    format!("must be 1 to {NODE_ID_MAX} letters, digits, '-', '_' or '.'"),
                ));
            }
        }
        if self.node_max_in_flight == 0 {
            return Err(super::invalid(
                "cluster.node_max_in_flight",
                "must be at least 1",
            ));
        }
        if self.tenant_max_in_flight == 0
            || self.tenant_max_in_flight > TENANT_MAX_IN_FLIGHT_CEILING
        {
            return Err(super::invalid(
                "cluster.tenant_max_in_flight",
                format!("must be from 1 to {TENANT_MAX_IN_FLIGHT_CEILING}"),
            ));
        }
        Ok(())
    }

    /// The places one tenant may hold of this node: its share, within the node.
    pub fn tenant_places(&self) -> usize {
        self.tenant_max_in_flight.min(self.node_max_in_flight)
    }

    /// The node id: the configured one, or a fresh ULID.
    pub fn resolved_node_id(&self) -> String {
        self.node_id
            .clone()
            .unwrap_or_else(|| ulid::Ulid::new().to_string().to_ascii_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_keys_load_from_the_environment() {
        let env = [
            ("HOOKGATE_CLUSTER__NODE_ID", "node-a"),
            ("HOOKGATE_CLUSTER__NODE_MAX_IN_FLIGHT", "64"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let config = super::super::Config::load(None, env).unwrap();
        assert_eq!(config.cluster.node_id.as_deref(), Some("node-a"));
        assert_eq!(config.cluster.node_max_in_flight, 64);
        assert_eq!(
            config.store.node_id.as_deref(),
            Some("node-a"),
            "the store's id too"
        );
    }

    #[test]
    fn node_ids_are_checked() {
        let with = |id: &str| ClusterConfig {
            node_id: Some(id.into()),
            ..ClusterConfig::default()
        };
        assert!(with("node-a.eu_1").validate().is_ok());
        for bad in ["", "a b", "ä", &"x".repeat(65)] {
            let e = with(bad).validate().unwrap_err().to_string();
            assert!(e.contains("cluster.node_id"), "{e}");
        }
        let zero = ClusterConfig {
            node_max_in_flight: 0,
            ..ClusterConfig::default()
        };
        let e = zero.validate().unwrap_err().to_string();
        assert!(e.contains("cluster.node_max_in_flight"), "{e}");
        for bad in [0, 1025] {
            let e = ClusterConfig {
                tenant_max_in_flight: bad,
                ..ClusterConfig::default()
            };
            let e = e.validate().unwrap_err().to_string();
            assert!(e.contains("cluster.tenant_max_in_flight"), "{e}");
        }
        let small_node = ClusterConfig {
            node_max_in_flight: 64,
            ..ClusterConfig::default()
        };
        assert_eq!(
            small_node.tenant_places(),
            64,
            "a tenant's share is within its node"
        );
        assert_eq!(ClusterConfig::default().resolved_node_id().len(), 26);
    }
}
