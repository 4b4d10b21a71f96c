//! `GET /metrics` (open, no tenant data; OpenMetrics or the classic Prometheus
//! text, as the scraper's `Accept` asks) and the stats routes.

mod exposition;

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, CONTENT_TYPE, VARY};
use axum::response::IntoResponse;

use super::auth::Principal;
use super::error::ApiError;
use super::openapi::TenantPath;
use crate::context::AppContext;
use crate::ids::TenantId;
use crate::telemetry::StatsView;
use exposition::Exposition;

/// Prometheus metrics, no tenant data: OpenMetrics or the classic text format, as
/// `Accept` asks.
#[utoipa::path(get, path = "/metrics", tag = "health", operation_id = "metrics",
    responses((status = 200, description = "The metrics", content(
        (String = "text/plain; version=0.0.4; charset=utf-8"),
        (String = "application/openmetrics-text; version=1.0.0; charset=utf-8"),
        (String = "application/openmetrics-text; version=0.0.1; charset=utf-8")))))]
pub(super) async fn metrics(
    State(ctx): State<Arc<AppContext>>,
    headers: HeaderMap,
) -> impl IntoResponse {
    // Several `Accept` lines are one list; a value that is not visible ASCII
    // cannot name a format and is left out.
    let accept: Vec<&str> = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let accept = (!accept.is_empty()).then(|| accept.join(","));
    let format = exposition::negotiate(accept.as_deref());
    let host = ctx.plugins.host();
    ctx.telemetry
        .plugins()
        .observe(&host.pool_usage(), &host.decision_paths());
    ctx.telemetry.store_metrics().observe(&ctx.store);
    // prometheus-client encodes OpenMetrics only; the classic text is made from it.
    let openmetrics = ctx.telemetry.render_metrics(ctx.delivery.in_flight_count());
    let body = match format {
        Exposition::Text => exposition::to_classic_text(&openmetrics),
        Exposition::OpenMetrics | Exposition::OpenMetricsDraft => openmetrics,
    };
    (
        [(CONTENT_TYPE, format.content_type()), (VARY, "accept")],
        body,
    )
}

/// Delivery statistics across tenants since the gateway started.
#[utoipa::path(get, path = "/v1/stats", tag = "stats", operation_id = "get_stats",
    responses((status = 200, description = "The statistics", body = StatsView)))]
pub(super) async fn all_stats(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
) -> Result<Json<StatsView>, ApiError> {
    who.require_admin()?;
    Ok(Json(ctx.telemetry.stats(None)))
}

/// One tenant's delivery statistics since the gateway started.
#[utoipa::path(get, path = "/v1/tenants/{t}/stats", tag = "stats", operation_id = "get_tenant_stats",
    params(TenantPath),
    responses((status = 200, description = "The statistics", body = StatsView)))]
pub(super) async fn tenant_stats(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
) -> Result<Json<StatsView>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    Ok(Json(ctx.telemetry.stats(Some(&t))))
}
