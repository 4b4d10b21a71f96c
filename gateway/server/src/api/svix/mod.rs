//! The Svix-compatible API under `/api/v1`: Svix's operations, names, paging,
//! statuses and errors, translated onto API v1 in this process (`forward.rs`),
//! so the official Svix SDKs drive hookgate unchanged while every check,
//! capability and record stays v1's. `wire.rs` holds Svix's shapes,
//! `error.rs` is where this face's errors become HTTP, and each resource has
//! its file.

mod applications;
mod error;
mod forward;
mod health;
mod wire;

use std::sync::Arc;

use axum::Router;
use axum::routing::get;

use crate::context::AppContext;
use error::SvixError;
use forward::V1;

/// The Svix face, over `v1` (API v1's router).
pub(super) fn router(v1: Router, ctx: Arc<AppContext>) -> Router {
    let state = V1 { router: v1, ctx };
    let api = Router::new()
        .route("/health", get(health::health).head(health::health))
        .route("/app", get(applications::list).post(applications::create))
        .route(
            "/app/{app_id}",
            get(applications::get)
                .put(applications::update)
                .patch(applications::patch)
                .delete(applications::delete),
        )
        .fallback(|| async { SvixError::not_found("route") })
        .method_not_allowed_fallback(|| async {
            SvixError::Http {
                status: axum::http::StatusCode::METHOD_NOT_ALLOWED,
                code: "method_not_allowed".into(),
                detail: "the route does not take this method".into(),
            }
        })
        .with_state(state);
    Router::new().nest("/api/v1", api)
}
