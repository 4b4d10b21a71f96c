//! The Svix-compatible API under `/api/v1`: Svix's operations, names, paging,
//! statuses and errors, translated onto API v1 in this process (`forward.rs`),
//! so the official Svix SDKs drive hookgate unchanged while every check,
//! capability and record stays v1's. `wire.rs` holds Svix's shapes,
//! `error.rs` is where this face's errors become HTTP, and each resource has
//! its file.

mod applications;
mod attempts;
mod authentication;
mod endpoint_actions;
mod endpoints;
mod error;
mod event_types;
mod forward;
mod health;
mod messages;
mod wire;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

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
            "/auth/app-portal-access/{app_id}",
            post(authentication::app_portal_access),
        )
        .route("/auth/logout", post(authentication::logout))
        .route(
            "/auth/app/{app_id}/expire-all",
            post(authentication::expire_all),
        )
        .route(
            "/app/{app_id}",
            get(applications::get)
                .put(applications::update)
                .patch(applications::patch)
                .delete(applications::delete),
        )
        .route(
            "/app/{app_id}/msg",
            get(messages::list).post(messages::create),
        )
        .route("/app/{app_id}/msg/{msg_id}", get(messages::get))
        .route(
            "/app/{app_id}/msg/{msg_id}/content",
            axum::routing::delete(messages::expunge_content),
        )
        .route(
            "/app/{app_id}/attempt/endpoint/{endpoint_id}",
            get(attempts::list_by_endpoint),
        )
        .route(
            "/app/{app_id}/attempt/msg/{msg_id}",
            get(attempts::list_by_msg),
        )
        .route(
            "/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}",
            get(attempts::get),
        )
        .route(
            "/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}/content",
            axum::routing::delete(attempts::expunge_content),
        )
        .route(
            "/app/{app_id}/msg/{msg_id}/endpoint",
            get(attempts::list_attempted_destinations),
        )
        .route(
            "/app/{app_id}/msg/{msg_id}/endpoint/{endpoint_id}/resend",
            post(attempts::resend),
        )
        .route(
            "/app/{app_id}/endpoint/{endpoint_id}/msg",
            get(attempts::list_attempted_messages),
        )
        .route(
            "/event-type",
            get(event_types::list).post(event_types::create),
        )
        .route(
            "/event-type/{event_type_name}",
            get(event_types::get)
                .put(event_types::update)
                .patch(event_types::patch)
                .delete(event_types::delete),
        )
        .route(
            "/app/{app_id}/endpoint",
            get(endpoints::list).post(endpoints::create),
        )
        .route(
            "/app/{app_id}/endpoint/{endpoint_id}",
            get(endpoints::get)
                .put(endpoints::update)
                .patch(endpoints::patch)
                .delete(endpoints::delete),
        )
        .route(
            "/app/{app_id}/endpoint/{endpoint_id}/headers",
            get(endpoint_actions::get_headers)
                .put(endpoint_actions::update_headers)
                .patch(endpoint_actions::patch_headers),
        )
        .route(
            "/app/{app_id}/endpoint/{endpoint_id}/secret",
            get(endpoint_actions::secret),
        )
        .route(
            "/app/{app_id}/endpoint/{endpoint_id}/secret/rotate",
            post(endpoint_actions::rotate_secret),
        )
        .route(
            "/app/{app_id}/endpoint/{endpoint_id}/recover",
            post(endpoint_actions::recover),
        )
        .route(
            "/app/{app_id}/endpoint/{endpoint_id}/replay-missing",
            post(endpoint_actions::replay_missing),
        )
        .route(
            "/app/{app_id}/endpoint/{endpoint_id}/send-example",
            post(endpoint_actions::send_example),
        )
        .route(
            "/app/{app_id}/endpoint/{endpoint_id}/stats",
            get(endpoint_actions::stats),
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
