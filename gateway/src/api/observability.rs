//! `GET /metrics` (Prometheus text, open, no tenant data) and the stats routes.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::IntoResponse;
use serde_json::Value;

use super::auth::Principal;
use super::error::ApiError;
use crate::context::AppContext;

pub(super) async fn metrics(State(ctx): State<Arc<AppContext>>) -> impl IntoResponse {
    let body = ctx.telemetry.render_metrics(ctx.delivery.in_flight_count());
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
}

pub(super) async fn all_stats(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
) -> Result<Json<Value>, ApiError> {
    who.require_admin()?;
    Ok(Json(ctx.telemetry.stats(None)))
}

pub(super) async fn tenant_stats(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<String>,
) -> Result<Json<Value>, ApiError> {
    who.require_tenant(&ctx, &t)?;
    Ok(Json(ctx.telemetry.stats(Some(&t))))
}
