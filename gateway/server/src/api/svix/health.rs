//! `GET`/`HEAD /api/v1/health`: 204 while the gateway serves, as Svix answers.

use axum::http::{Method, StatusCode};

use super::error::SvixError;
use super::forward::{Caller, V1};

/// v1's `/healthz`: its 503 (storage failing) stays a 503.
#[utoipa::path(get, path = "/health", tag = "Health", operation_id = "v1.health.get",
    responses((status = 204, description = "The gateway serves"),
        (status = 503, description = "Its store is failing")))]
pub(super) async fn health(
    axum::extract::State(v1): axum::extract::State<V1>,
    caller: Caller,
) -> Result<StatusCode, SvixError> {
    let answer = v1.call(&caller, Method::GET, "/healthz", None).await?;
    if answer.status.is_success() {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Ok(StatusCode::SERVICE_UNAVAILABLE)
    }
}

/// `HEAD`: the same answer without a body.
#[utoipa::path(head, path = "/health", tag = "Health", operation_id = "v1.health.head",
    responses((status = 204, description = "The gateway serves"),
        (status = 503, description = "Its store is failing")))]
pub(super) async fn health_head(
    state: axum::extract::State<V1>,
    caller: Caller,
) -> Result<StatusCode, SvixError> {
    health(state, caller).await
}
