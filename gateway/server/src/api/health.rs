//! `GET /healthz`: liveness, and 503 when free disk is low or storage fails.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Serialize;

use crate::context::AppContext;

/// The health body: `{"status":"..."}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct HealthView {
    status: HealthStatus,
}

/// Why the gateway is or is not healthy, as the body names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum HealthStatus {
    Ok,
    InsufficientStorage,
    StoreUnavailable,
}

/// Liveness: 200 while the gateway can take events; 503 when free disk is low or
/// storage fails.
#[utoipa::path(get, path = "/healthz", tag = "health", operation_id = "healthz",
    responses(
        (status = 200, description = "Healthy", body = HealthView),
        (status = 503, description = "Unhealthy, and why", body = HealthView)))]
pub(super) async fn healthz(State(ctx): State<Arc<AppContext>>) -> impl IntoResponse {
    let (code, status) = if ctx.store.space_low() {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            HealthStatus::InsufficientStorage,
        )
    } else if ctx.store.health().is_failing() || ctx.store.meta_get("schema_version").await.is_err()
    {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            HealthStatus::StoreUnavailable,
        )
    } else {
        (StatusCode::OK, HealthStatus::Ok)
    };
    (code, Json(HealthView { status }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn health_bodies_match_their_json_forms() {
        for (status, name) in [
            (HealthStatus::Ok, "ok"),
            (HealthStatus::InsufficientStorage, "insufficient_storage"),
            (HealthStatus::StoreUnavailable, "store_unavailable"),
        ] {
            assert_eq!(
                serde_json::to_string(&HealthView { status }).unwrap(),
                serde_json::to_string(&json!({"status": name})).unwrap()
            );
        }
    }
}
