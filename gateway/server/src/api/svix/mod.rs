//! The Svix-compatible API under `/api/v1`: Svix's operations, names, paging,
//! statuses and errors, translated onto API v1 in this process (`forward.rs`),
//! so the official Svix SDKs drive hookgate unchanged while every check,
//! capability and record stays v1's. `wire.rs` holds Svix's shapes,
//! `error.rs` is where this face's errors become HTTP, `openapi/` its own
//! document, and each resource has its file.

mod applications;
mod attempts;
mod authentication;
mod destinations;
mod endpoint_actions;
mod endpoints;
mod error;
mod event_types;
mod forward;
mod guard;
mod health;
mod messages;
pub(crate) mod openapi;
mod wire;

use std::sync::Arc;

use axum::Router;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::context::AppContext;
use error::SvixError;
use forward::V1;

/// The face's operations, each with its document entry.
fn routes() -> OpenApiRouter<V1> {
    OpenApiRouter::new()
        .routes(routes!(health::health, health::health_head))
        .routes(routes!(openapi::serve))
        .routes(routes!(applications::list, applications::create))
        .routes(routes!(
            applications::get,
            applications::update,
            applications::patch,
            applications::delete
        ))
        .routes(routes!(authentication::app_portal_access))
        .routes(routes!(authentication::logout))
        .routes(routes!(authentication::expire_all))
        .routes(routes!(messages::list, messages::create))
        .routes(routes!(messages::get))
        .routes(routes!(messages::expunge_content))
        .routes(routes!(attempts::list_by_endpoint))
        .routes(routes!(attempts::list_by_msg))
        .routes(routes!(attempts::get))
        .routes(routes!(attempts::expunge_content))
        .routes(routes!(destinations::list_attempted_destinations))
        .routes(routes!(destinations::resend))
        .routes(routes!(destinations::list_attempted_messages))
        .routes(routes!(event_types::list, event_types::create))
        .routes(routes!(
            event_types::get,
            event_types::update,
            event_types::patch,
            event_types::delete
        ))
        .routes(routes!(endpoints::list, endpoints::create))
        .routes(routes!(
            endpoints::get,
            endpoints::update,
            endpoints::patch,
            endpoints::delete
        ))
        .routes(routes!(
            endpoint_actions::get_headers,
            endpoint_actions::update_headers,
            endpoint_actions::patch_headers
        ))
        .routes(routes!(endpoint_actions::secret))
        .routes(routes!(endpoint_actions::rotate_secret))
        .routes(routes!(endpoint_actions::recover))
        .routes(routes!(endpoint_actions::replay_missing))
        .routes(routes!(endpoint_actions::send_example))
        .routes(routes!(endpoint_actions::stats))
}

/// The Svix face, over `v1` (API v1's router).
pub(super) fn router(v1: Router, ctx: Arc<AppContext>) -> Router {
    let state = V1 { router: v1, ctx };
    let (api, _) = routes().split_for_parts();
    let api = api
        // Writes keep their first answer per idempotency key, as v1's do,
        // told in Svix's shape; then the guard, outermost.
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state.ctx),
            crate::api::idempotent_calls::keep_answers,
        ))
        .layer(axum::middleware::map_response(error::in_svix_shape))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::refuse_unreadable,
        ))
        .fallback(|| async { SvixError::not_found("route") })
        .method_not_allowed_fallback(|| async {
            SvixError::Http {
                status: axum::http::StatusCode::METHOD_NOT_ALLOWED,
                code: "method_not_allowed".into(),
                detail: "the route does not take this method".into(),
            }
        })
        .with_state(state);
    Router::new().nest(openapi::PREFIX, api)
}
