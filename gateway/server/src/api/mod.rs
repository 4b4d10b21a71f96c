//! HTTP API v1: routing, authentication, one file per resource, and the one
//! place errors become HTTP ([`error`]).

mod answer_headers;
mod attempts;
pub(crate) mod auth;
pub(crate) mod body;
mod cluster;
mod console;
mod deliveries;
mod delivery_view;
mod dlq;
mod endpoint_destination;
mod endpoint_headers;
mod endpoint_input;
mod endpoint_recovery;
mod endpoint_schema;
mod endpoint_secrets;
mod endpoint_signature;
mod endpoint_stats;
mod endpoint_view;
mod endpoints;
pub(crate) mod error;
mod error_code;
mod event_list;
mod event_type_import;
mod event_types;
pub(crate) mod events;
mod health;
mod idempotent_calls;
mod labels;
mod lingering_close;
mod list_paging;
mod metadata;
mod observability;
pub(crate) mod openapi;
mod operator_endpoints;
mod peer_connections;
mod plugin_view;
mod plugins;
mod portal_access;
mod portal_sessions;
mod replay;
mod request_guard;
mod send_example;
pub(crate) mod server;
pub(crate) mod simulate;
mod stats_history;
mod svix;
mod tasks;
mod tenants;

use std::sync::Arc;

use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::context::AppContext;
use error::ApiError;

pub use openapi::document_json;
pub use svix::openapi::document_json as svix_document_json;

/// Every route of the API, each with its path item: a route cannot exist without
/// its description.
fn routes() -> OpenApiRouter<Arc<AppContext>> {
    OpenApiRouter::new()
        .routes(routes!(health::healthz))
        .routes(routes!(observability::metrics))
        .routes(routes!(openapi::serve))
        .routes(routes!(observability::all_stats))
        .routes(routes!(observability::tenant_stats))
        .routes(routes!(stats_history::all))
        .routes(routes!(stats_history::tenant))
        .routes(routes!(simulate::simulate))
        .routes(routes!(tenants::create, tenants::list))
        .routes(routes!(tenants::show, tenants::update, tenants::delete))
        .routes(routes!(tenants::rotate_key))
        .routes(routes!(tasks::list))
        .routes(routes!(tasks::show))
        .routes(routes!(tasks::list_all))
        .routes(routes!(tasks::show_any))
        .routes(routes!(endpoints::create, endpoints::list))
        .routes(routes!(
            endpoints::show,
            endpoints::put,
            endpoints::update,
            endpoints::delete
        ))
        .routes(routes!(endpoint_secrets::secret))
        .routes(routes!(endpoint_secrets::rotate_secret))
        .routes(routes!(endpoints::reset_breaker))
        .routes(routes!(endpoint_recovery::recover))
        .routes(routes!(endpoint_recovery::replay_missing))
        .routes(routes!(endpoint_stats::show))
        .routes(routes!(send_example::send_example))
        .routes(routes!(event_types::create, event_types::list))
        .routes(routes!(event_type_import::import))
        .routes(routes!(
            event_types::show,
            event_types::update,
            event_types::delete
        ))
        .routes(routes!(events::ingest, event_list::list))
        .routes(routes!(events::show))
        .routes(routes!(events::expunge))
        .routes(routes!(deliveries::list))
        .routes(routes!(deliveries::show))
        .routes(routes!(attempts::list))
        .routes(routes!(attempts::show))
        .routes(routes!(replay::replay_one))
        .routes(routes!(replay::replay_many))
        .routes(routes!(dlq::tenant_summary))
        .routes(routes!(dlq::all_summary))
        .routes(routes!(cluster::show))
        .routes(routes!(portal_sessions::create, portal_sessions::revoke))
        .routes(routes!(portal_sessions::current, portal_sessions::end))
        .routes(routes!(
            operator_endpoints::create,
            operator_endpoints::list
        ))
        .routes(routes!(
            operator_endpoints::show,
            operator_endpoints::update,
            operator_endpoints::delete
        ))
        .routes(routes!(
            operator_endpoints::tenant_create,
            operator_endpoints::tenant_list
        ))
        .routes(routes!(
            operator_endpoints::tenant_show,
            operator_endpoints::tenant_update,
            operator_endpoints::tenant_delete
        ))
        .routes(routes!(plugins::list))
        .routes(routes!(plugins::upload, plugins::show, plugins::delete))
        .routes(routes!(plugins::rollback))
}

/// The whole API: v1, the console, and the Svix face, which calls v1; each
/// face refuses unreadable requests in its own shape.
pub(crate) fn router(ctx: Arc<AppContext>) -> axum::Router {
    let v1 = v1_router(Arc::clone(&ctx));
    let guarded = v1.clone().layer(axum::middleware::from_fn(
        request_guard::refuse_control_characters,
    ));
    svix::router(v1, ctx)
        .merge(guarded)
        .layer(axum::middleware::map_response(answer_headers::nosniff))
}

/// API v1 and the console.
fn v1_router(ctx: Arc<AppContext>) -> axum::Router {
    let (router, _) = routes().split_for_parts();
    router
        // Only on a route and method that exist: a method the path lacks is
        // 405 whatever its key.
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&ctx),
            idempotent_calls::keep_answers,
        ))
        .merge(console::routes(&ctx.config.console.embed_origins))
        .fallback(|| async { ApiError::not_found("route") })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .with_state(ctx)
}

/// `limit` and `cursor` of list routes.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct Page {
    /// Items per page, 1 to 250; 50 when absent.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 250)]
    limit: Option<String>,
    /// The `next_cursor` of the page before (no control characters).
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    cursor: Option<String>,
}

impl Page {
    /// A page of `limit` items (as the query gave it) from the start.
    fn sized(limit: Option<String>) -> Self {
        Self {
            limit,
            cursor: None,
        }
    }

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
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(super) struct ListPage<T> {
    data: Vec<T>,
    /// Pass as `cursor` for the next page; `null` on the last. A filtered
    /// list reads a bounded number of records per request, so a page may hold
    /// fewer items than `limit`, even none, and still have a next page.
    next_cursor: Option<String>,
}

/// A list body of any item type.
fn list_body<T: serde::Serialize>(
    data: Vec<T>,
    next_cursor: Option<String>,
) -> axum::Json<ListPage<T>> {
    axum::Json(ListPage { data, next_cursor })
}
