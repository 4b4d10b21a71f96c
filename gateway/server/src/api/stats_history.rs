//! `GET /v1/stats/history` (admin) and `GET /v1/tenants/{t}/stats/history`:
//! the attempts of every endpoint (of the gateway, or of one tenant) over a
//! time range, in the buckets the endpoint stats keep, merged: what the
//! console's overview draws, and each endpoint's totals over the range, which
//! the endpoint list shows as a recent success rate.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Serialize;

use super::auth::Principal;
use super::bad_query;
use super::endpoint_stats::{EndpointStatsBucket, EndpointStatsCounts, StatsQuery};
use super::error::ApiError;
use super::openapi::TenantPath;
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::endpoint_stats::StatsWindow;
use crate::ids::{EndpointId, TenantId};
use crate::store::{StatsAcross, StatsCounts};

/// The most stored buckets one answer reads (an endpoint keeps 576 of them at
/// the default 5 minutes over 48 hours); past it the answer says `complete:
/// false`.
const BUCKETS_READ_CAP: usize = 100_000;

/// Attempts over time across endpoints.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct StatsHistoryView {
    /// The tenant counted; `null` for the whole gateway.
    tenant_id: Option<String>,
    /// The width of each bucket; buckets are aligned to the epoch.
    bucket_seconds: u64,
    /// The start of the first bucket.
    #[schema(format = DateTime)]
    since: String,
    /// The end of the last bucket (not included).
    #[schema(format = DateTime)]
    until: String,
    /// False when the range held more than 100 000 stored buckets: the figures
    /// then count the first 100 000 (by tenant, endpoint, time).
    complete: bool,
    /// The sum of the buckets.
    totals: EndpointStatsCounts,
    /// Every bucket of the range, oldest first; zeros where nothing happened.
    buckets: Vec<EndpointStatsBucket>,
    /// Each endpoint with attempts in the range, and its totals over it, by
    /// tenant then endpoint id.
    endpoints: Vec<EndpointTotals>,
}

/// One endpoint's attempts over the range.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EndpointTotals {
    tenant_id: String,
    endpoint_id: String,
    #[serde(flatten)]
    counts: EndpointStatsCounts,
}

/// Attempts of every endpoint of the gateway over a time range, in buckets.
#[utoipa::path(get, path = "/v1/stats/history", tag = "stats",
    operation_id = "get_stats_history", params(StatsQuery),
    responses((status = 200, description = "The history", body = StatsHistoryView)))]
pub(super) async fn all(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    q: Result<Query<StatsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<StatsHistoryView>, ApiError> {
    who.require_admin()?;
    history(&ctx, &who, None, q).await
}

/// Attempts of every endpoint of a tenant over a time range, in buckets.
#[utoipa::path(get, path = "/v1/tenants/{t}/stats/history", tag = "stats",
    operation_id = "get_tenant_stats_history", params(TenantPath, StatsQuery),
    responses((status = 200, description = "The history", body = StatsHistoryView)))]
pub(super) async fn tenant(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    q: Result<Query<StatsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<StatsHistoryView>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    history(&ctx, &who, Some(&t), q).await
}

/// A portal session limited to some endpoints counts only theirs.
async fn history(
    ctx: &AppContext,
    who: &Principal,
    tenant: Option<&TenantId>,
    q: Result<Query<StatsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<StatsHistoryView>, ApiError> {
    let Query(q) = q.map_err(bad_query)?;
    let window = StatsWindow::of(&ctx.config.stats);
    let range = q.range(&window, ctx.clock.now_ms())?;
    let read = ctx
        .store
        .stats_across(tenant, range.start_ms, range.end_ms, BUCKETS_READ_CAP)
        .await?;
    let StatsAcross { buckets, complete } = read;
    let mut per_endpoint: BTreeMap<(TenantId, EndpointId), StatsCounts> = BTreeMap::new();
    let mut merged = Vec::with_capacity(buckets.len());
    for b in buckets
        .into_iter()
        .filter(|b| who.reaches_endpoint(&b.endpoint_id))
    {
        per_endpoint
            .entry((b.tenant_id, b.endpoint_id))
            .or_default()
            .add(&b.bucket.counts);
        merged.push(b.bucket);
    }
    let series = window.series(range, merged);
    Ok(Json(StatsHistoryView {
        tenant_id: tenant.map(ToString::to_string),
        bucket_seconds: window.bucket_ms / 1_000,
        since: rfc3339_ms(series.range.start_ms),
        until: rfc3339_ms(series.range.end_ms),
        complete,
        totals: EndpointStatsCounts::of(&series.totals),
        buckets: series
            .buckets
            .iter()
            .map(|(start, counts)| EndpointStatsBucket::of(*start, counts))
            .collect(),
        endpoints: per_endpoint
            .into_iter()
            .filter(|(_, c)| c.attempts > 0)
            .map(|((t, ep), c)| EndpointTotals {
                tenant_id: t.to_string(),
                endpoint_id: ep.to_string(),
                counts: EndpointStatsCounts::of(&c),
            })
            .collect(),
    }))
}
