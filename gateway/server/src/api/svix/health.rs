//! `GET`/`HEAD /api/v1/health`: 204 while the gateway serves, as Svix answers.

use axum::http::{Method, StatusCode};

use super::error::SvixError;
use super::forward::{Caller, V1};

/// v1's `/healthz`: its 503 (storage failing) stays a 503.
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
