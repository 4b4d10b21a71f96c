//! `GET /v1/tenants/{t}/endpoints/{id}/stats`: an endpoint's deliveries counted
//! by state, and its attempts over time in buckets (`[stats]`: 5 minutes, kept
//! 48 hours by default), each with its latency percentiles, as every gateway
//! sharing the store counted them.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};

use super::auth::Principal;
use super::bad_query;
use super::deliveries::time_param;
use super::endpoints::load;
use super::error::ApiError;
use super::openapi::ItemPath;
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::endpoint_stats::{BucketRange, Percentile, StatsWindow, percentile_ms};
use crate::ids::{EndpointId, TenantId};
use crate::store::{SUMMARY_SCAN_LIMIT, StatsCounts};

/// The most pending deliveries the answer counts: the count reads the
/// endpoint's schedule, at most this many entries of it.
const PENDING_COUNT_CAP: usize = 10_000;

/// The time range asked for.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct StatsQuery {
    /// From this time (RFC 3339), widened to the start of its bucket; 24 hours
    /// before `until` when absent. Clamped to the history kept.
    #[param(format = DateTime, example = "2026-12-04T09:00:00Z")]
    since: Option<String>,
    /// Up to this time (RFC 3339, not included), widened to the end of its
    /// bucket; now when absent. Clamped to the bucket holding now.
    #[param(format = DateTime)]
    until: Option<String>,
}

impl StatsQuery {
    /// The buckets asked for, in `window` at `now_ms`.
    pub(super) fn range(&self, window: &StatsWindow, now_ms: u64) -> Result<BucketRange, ApiError> {
        let since = time_param("since", self.since.as_deref())?;
        let until = time_param("until", self.until.as_deref())?;
        Ok(window.range(since, until, now_ms)?)
    }
}

/// An endpoint's stats over a range of buckets.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EndpointStatsView {
    endpoint_id: String,
    /// The width of each bucket; buckets are aligned to the epoch.
    bucket_seconds: u64,
    /// The start of the first bucket.
    #[schema(format = DateTime)]
    since: String,
    /// The end of the last bucket (not included); equal to `since` when the
    /// range asked for lies wholly before the history kept.
    #[schema(format = DateTime)]
    until: String,
    states: EndpointStates,
    /// The sum of the buckets.
    totals: EndpointStatsCounts,
    /// Every bucket of the range, oldest first; zeros where nothing happened.
    buckets: Vec<EndpointStatsBucket>,
}

/// The endpoint's deliveries by state, now.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EndpointStates {
    /// Deliveries waiting for an attempt (in flight ones included), counted
    /// from the endpoint's schedule up to 10 000: a larger backlog reads 10000.
    pending: u64,
    /// Dead deliveries, counted as the DLQ summary counts them: among the
    /// tenant's newest 50 000 deliveries (a lower bound past that).
    dead: u64,
}

/// Attempts and their latency.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EndpointStatsCounts {
    /// Attempts made: requests sent, and connect, DNS or TLS failures.
    attempts: u64,
    /// Attempts answered 2xx.
    delivered: u64,
    /// The other attempts.
    failed: u64,
    /// Half of the attempts took at most this long: the upper bound of the
    /// latency slot holding the median (slots end at 1, 2, 5, 10, 20, 50 ms ...
    /// 60 s, 120 s, 300 s). `null` without attempts.
    p50_ms: Option<u64>,
    /// 99 % of the attempts took at most this long, read the same way.
    p99_ms: Option<u64>,
}

/// One bucket.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EndpointStatsBucket {
    /// The bucket's start; it holds the attempts that started in it.
    #[schema(format = DateTime)]
    start: String,
    #[serde(flatten)]
    counts: EndpointStatsCounts,
}

impl EndpointStatsCounts {
    pub(super) fn of(c: &StatsCounts) -> Self {
        Self {
            attempts: c.attempts,
            delivered: c.delivered,
            failed: c.failed,
            p50_ms: percentile_ms(&c.latency, Percentile::P50),
            p99_ms: percentile_ms(&c.latency, Percentile::P99),
        }
    }
}

impl EndpointStatsBucket {
    pub(super) fn of(start_ms: u64, counts: &StatsCounts) -> Self {
        Self {
            start: rfc3339_ms(start_ms),
            counts: EndpointStatsCounts::of(counts),
        }
    }
}

/// The endpoint's deliveries by state and its attempts per bucket over a time
/// range, with latency percentiles.
#[utoipa::path(get, path = "/v1/tenants/{t}/endpoints/{id}/stats", tag = "endpoints",
    operation_id = "get_endpoint_stats", params(ItemPath, StatsQuery),
    responses((status = 200, description = "The endpoint's stats", body = EndpointStatsView)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
    q: Result<Query<StatsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<EndpointStatsView>, ApiError> {
    let ep = load(&ctx, &who, &t, &id).await?;
    let Query(q) = q.map_err(bad_query)?;
    let window = StatsWindow::of(&ctx.config.stats);
    let range = q.range(&window, ctx.clock.now_ms())?;
    let stored = ctx
        .store
        .endpoint_stats(&ep.tenant_id, &ep.id, range.start_ms, range.end_ms)
        .await?;
    let series = window.series(range, stored);
    let pending = ctx.store.count_pending(&ep.id, PENDING_COUNT_CAP).await?;
    let dead = ctx
        .store
        .dead_counts(&ep.tenant_id, SUMMARY_SCAN_LIMIT)
        .await?
        .by_endpoint
        .get(&(ep.tenant_id.clone(), ep.id.clone()))
        .copied()
        .unwrap_or(0);
    Ok(Json(EndpointStatsView {
        endpoint_id: ep.id.to_string(),
        bucket_seconds: window.bucket_ms / 1_000,
        since: rfc3339_ms(series.range.start_ms),
        until: rfc3339_ms(series.range.end_ms),
        states: EndpointStates {
            pending: pending as u64,
            dead,
        },
        totals: EndpointStatsCounts::of(&series.totals),
        buckets: series
            .buckets
            .iter()
            .map(|(start, counts)| EndpointStatsBucket::of(*start, counts))
            .collect(),
    }))
}
