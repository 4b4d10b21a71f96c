//! `GET /v1/cluster` (admin): the gateways sharing this store, as their
//! heartbeats show them, with the leases each holds.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::Principal;
use super::error::ApiError;
use crate::clock::rfc3339_ms;
use crate::context::AppContext;

/// The cluster as this node sees it.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct ClusterView {
    /// The storage backend: `sled` (one node) or `postgres`.
    backend: &'static str,
    /// The node that answered.
    node_id: String,
    /// The nodes heard from in the last 10 seconds, by id.
    nodes: Vec<NodeView>,
}

/// One gateway.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct NodeView {
    node_id: String,
    /// When it started.
    #[schema(format = DateTime)]
    started_at: String,
    /// Its last heartbeat.
    #[schema(format = DateTime)]
    last_seen_at: String,
    /// The hookgate version it runs.
    version: String,
    /// Attempts it holds leases for (in flight, or claimed and not yet expired).
    leases: u64,
    /// It is the node that answered.
    this_node: bool,
}

/// The nodes sharing this store.
#[utoipa::path(get, path = "/v1/cluster", tag = "cluster", operation_id = "get_cluster",
    responses((status = 200, description = "The live nodes", body = ClusterView)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
) -> Result<Json<ClusterView>, ApiError> {
    who.require_admin()?;
    let now = ctx.clock.now_ms();
    let this = ctx.store.node_id();
    let nodes = ctx.store.cluster_nodes(now).await?;
    let mut nodes: Vec<NodeView> = nodes
        .into_iter()
        .map(|n| NodeView {
            this_node: n.node_id == this,
            // This node's own count is the engine's, exact and current.
            leases: if n.node_id == this {
                ctx.delivery.in_flight_count() as u64
            } else {
                n.leases
            },
            node_id: n.node_id,
            started_at: rfc3339_ms(n.started_at_ms),
            last_seen_at: rfc3339_ms(n.last_seen_at_ms),
            version: n.version,
        })
        .collect();
    if !nodes.iter().any(|n| n.this_node) {
        // Before this node's first heartbeat is stored (or while it cannot be).
        nodes.push(NodeView {
            node_id: this.to_owned(),
            started_at: rfc3339_ms(now),
            last_seen_at: rfc3339_ms(now),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            leases: ctx.delivery.in_flight_count() as u64,
            this_node: true,
        });
        nodes.sort_by(|a, b| a.node_id.cmp(&b.node_id));
    }
    Ok(Json(ClusterView {
        backend: ctx.store.backend_name(),
        node_id: this.to_owned(),
        nodes,
    }))
}
