//! HTTP API v1: routing, authentication, one file per resource, and the one
//! place errors become HTTP ([`error`]).

pub mod auth;
pub mod body;
mod deliveries;
mod delivery_view;
mod dlq;
mod endpoint_input;
mod endpoint_view;
mod endpoints;
pub mod error;
pub mod events;
mod health;
mod observability;
mod plugin_view;
mod plugins;
mod replay;
pub mod server;
pub mod simulate;
mod tenants;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post, put};
use serde::Deserialize;

use crate::context::AppContext;
use error::ApiError;

/// The whole API.
pub fn router(ctx: Arc<AppContext>) -> Router {
    let t = "/v1/tenants/{t}";
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/metrics", get(observability::metrics))
        .route("/v1/stats", get(observability::all_stats))
        .route(&format!("{t}/stats"), get(observability::tenant_stats))
        .route("/v1/policy/simulate", post(simulate::simulate))
        .route("/v1/tenants", post(tenants::create).get(tenants::list))
        .route(&format!("{t}/rotate-key"), post(tenants::rotate_key))
        .route(
            &format!("{t}/endpoints"),
            post(endpoints::create).get(endpoints::list),
        )
        .route(
            &format!("{t}/endpoints/{{id}}"),
            get(endpoints::show)
                .patch(endpoints::update)
                .delete(endpoints::delete),
        )
        .route(
            &format!("{t}/endpoints/{{id}}/secret"),
            get(endpoints::secret),
        )
        .route(
            &format!("{t}/endpoints/{{id}}/rotate-secret"),
            post(endpoints::rotate_secret),
        )
        .route(
            &format!("{t}/endpoints/{{id}}/breaker/reset"),
            post(endpoints::reset_breaker),
        )
        .route(&format!("{t}/events"), post(events::ingest))
        .route(&format!("{t}/events/{{id}}"), get(events::show))
        .route(&format!("{t}/deliveries"), get(deliveries::list))
        .route(&format!("{t}/deliveries/{{id}}"), get(deliveries::show))
        .route(
            &format!("{t}/deliveries/{{id}}/replay"),
            post(replay::replay_one),
        )
        .route(&format!("{t}/replay"), post(replay::replay_many))
        .route(&format!("{t}/dlq/summary"), get(dlq::tenant_summary))
        .route("/v1/dlq/summary", get(dlq::all_summary))
        .route(&format!("{t}/plugins"), get(plugins::list))
        .route(
            &format!("{t}/plugins/{{name}}"),
            put(plugins::upload)
                .get(plugins::show)
                .delete(plugins::delete),
        )
        .route(
            &format!("{t}/plugins/{{name}}/rollback"),
            post(plugins::rollback),
        )
        .fallback(|| async { ApiError::not_found("route") })
        .with_state(ctx)
}

/// `limit` and `cursor` of list routes.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Page {
    limit: Option<String>,
    cursor: Option<String>,
}

impl Page {
    /// The page size: 50 by default, 1 to 250.
    fn limit(&self) -> Result<usize, ApiError> {
        match &self.limit {
            None => Ok(50),
            Some(s) => match s.parse::<usize>() {
                Ok(n) if (1..=250).contains(&n) => Ok(n),
                _ => Err(ApiError::invalid_field(
                    "limit",
                    "limit must be an integer from 1 to 250",
                )),
            },
        }
    }
}

/// Maps a query-string rejection to our error shape.
fn bad_query(e: axum::extract::rejection::QueryRejection) -> ApiError {
    ApiError::invalid_field("query", e.body_text())
}

/// A page of a list: `{"data":[...],"next_cursor":...}`, the cursor `null` on
/// the last page.
#[derive(Debug, serde::Serialize)]
pub(super) struct ListPage<T> {
    data: Vec<T>,
    next_cursor: Option<String>,
}

/// A list body of any item type.
fn list_body<T: serde::Serialize>(
    data: Vec<T>,
    next_cursor: Option<String>,
) -> axum::Json<ListPage<T>> {
    axum::Json(ListPage { data, next_cursor })
}
