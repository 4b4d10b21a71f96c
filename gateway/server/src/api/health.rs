//! `GET /healthz`: liveness, and 503 when free disk is low or storage fails.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::json;

use crate::context::AppContext;

pub(super) async fn healthz(State(ctx): State<Arc<AppContext>>) -> impl IntoResponse {
    if ctx.disk.is_low() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "insufficient_storage"})),
        );
    }
    if ctx.store.meta_get("schema_version").is_err() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "store_unavailable"})),
        );
    }
    (StatusCode::OK, Json(json!({"status": "ok"})))
}
