//! Deliveries: filtered, paged lists (`state=dead` is the DLQ) and one delivery
//! with its attempt log across every series.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Deserialize;

use super::auth::Principal;
use super::delivery_view::{AttemptView, DeliveryDetail, DeliveryView};
use super::error::ApiError;
use super::openapi::{DeliveryStateName, ItemPath, TenantPath};
use super::{ListPage, bad_query, list_body};
use crate::clock::parse_rfc3339_ms;
use crate::context::AppContext;
use crate::delivery::effective_policy;
use crate::ids::{DeliveryId, TenantId};
use crate::policy::DeadReason;
use crate::store::{BreakerState, DeliveryFilter, DeliveryRecord, DeliveryState, EndpointRecord};

/// The delivery list's filters and paging; filters combine.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct ListQuery {
    /// Only deliveries in this state; `dead` is the dead-letter queue.
    #[param(value_type = Option<DeliveryStateName>)]
    state: Option<String>,
    /// Only this endpoint's (no control characters).
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    endpoint_id: Option<String>,
    /// Only this event type (exact; no control characters).
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    event_type: Option<String>,
    /// Only the deliveries of this event (its id or uid; no control
    /// characters): one page holding all of them, the other filters applied.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    event_id: Option<String>,
    /// Created at or after this time (RFC 3339).
    #[param(format = DateTime)]
    since: Option<String>,
    /// Created before this time (RFC 3339).
    #[param(format = DateTime)]
    until: Option<String>,
    /// Only dead deliveries that died for this reason.
    #[param(value_type = Option<DeadReason>)]
    dead_reason: Option<String>,
    /// Items per page, 1 to 250; 50 when absent.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 250)]
    limit: Option<String>,
    /// The `next_cursor` of the page before (no control characters).
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    cursor: Option<String>,
}

/// When a pending delivery is next attempted: its due time, but never before its
/// endpoint's open breaker lets anything through.
fn next_attempt_at_ms(d: &DeliveryRecord, ep: Option<&EndpointRecord>) -> Option<u64> {
    let due = d
        .next_attempt_at_ms
        .filter(|_| d.state == DeliveryState::Pending)?;
    let open_until = ep
        .filter(|ep| ep.breaker.state == BreakerState::Open)
        .and_then(|ep| ep.breaker.open_until_ms);
    Some(open_until.map_or(due, |until| due.max(until)))
}

fn state_of(ctx: &AppContext, d: &DeliveryRecord) -> &'static str {
    if d.state == DeliveryState::Pending && ctx.delivery.is_in_flight(&d.id) {
        "in_flight"
    } else {
        d.state.as_str()
    }
}

/// A delivery as events, lists and replays show it.
pub(super) async fn delivery_view(
    ctx: &AppContext,
    d: &DeliveryRecord,
) -> Result<DeliveryView, ApiError> {
    let ep = ctx.store.endpoint(&d.tenant_id, &d.endpoint_id).await?;
    // The `max_attempts` that governs it now: its endpoint's current policy.
    let max_attempts = ep.as_ref().map(|ep| {
        effective_policy(ep, &ctx.config.policy.default)
            .0
            .max_attempts
    });
    Ok(DeliveryView::new(
        d,
        state_of(ctx, d),
        max_attempts,
        next_attempt_at_ms(d, ep.as_ref()),
    ))
}

pub(super) fn time_param(name: &str, v: Option<&str>) -> Result<Option<u64>, ApiError> {
    v.map(|s| {
        parse_rfc3339_ms(s).ok_or_else(|| {
            ApiError::invalid_field(name, format!("{name} must be an RFC 3339 time"))
        })
    })
    .transpose()
}

/// The dead reason named `name`, or a message listing the names there are.
pub(super) fn dead_reason_named(name: &str) -> Result<DeadReason, String> {
    DeadReason::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = DeadReason::ALL.iter().map(|r| r.as_str()).collect();
        format!("dead_reason must be one of {}", names.join(", "))
    })
}

/// Lists deliveries, newest first, filtered; `state=dead` is the dead-letter queue.
#[utoipa::path(get, path = "/v1/tenants/{t}/deliveries", tag = "deliveries",
    operation_id = "list_deliveries", params(TenantPath, ListQuery),
    responses((status = 200, description = "A page of deliveries", body = ListPage<DeliveryView>)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    q: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ListPage<DeliveryView>>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let Query(q) = q.map_err(bad_query)?;
    let page = super::Page {
        limit: q.limit.clone(),
        cursor: None,
    };
    let (state, in_flight_only) = match q.state.as_deref() {
        None => (None, false),
        Some("pending") => (Some(DeliveryState::Pending), false),
        Some("in_flight") => (Some(DeliveryState::Pending), true),
        Some("succeeded") => (Some(DeliveryState::Succeeded), false),
        Some("dead") => (Some(DeliveryState::Dead), false),
        Some("skipped") => (Some(DeliveryState::Skipped), false),
        Some(_) => {
            return Err(ApiError::invalid_field(
                "state",
                "state must be pending, in_flight, succeeded, dead or skipped",
            ));
        }
    };
    let filter = DeliveryFilter {
        state,
        endpoint_id: q.endpoint_id,
        event_type: q.event_type,
        since_ms: time_param("since", q.since.as_deref())?,
        until_ms: time_param("until", q.until.as_deref())?,
        dead_reason: q
            .dead_reason
            .as_deref()
            .map(dead_reason_named)
            .transpose()
            .map_err(|m| ApiError::invalid_field("dead_reason", m))?,
    };
    let handle = ctx.delivery.clone();
    let seer = who.clone();
    let in_flight = move |d: &DeliveryRecord| {
        (!in_flight_only || handle.is_in_flight(&d.id)) && seer.sees(&d.endpoint_id, &d.event_type)
    };
    let limit = page.limit()?;
    if let Some(event) = q.event_id.as_deref() {
        let found = of_event(&ctx, &t, event, |d| filter.matches(d) && in_flight(d)).await?;
        let mut data = Vec::with_capacity(found.len());
        for d in &found {
            data.push(delivery_view(&ctx, d).await?);
        }
        return Ok(list_body(data, None));
    }
    let result = ctx
        .store
        .list_deliveries(&t, &filter, in_flight, limit, q.cursor.as_deref())
        .await?;
    let mut data = Vec::with_capacity(result.data.len());
    for d in &result.data {
        data.push(delivery_view(&ctx, d).await?);
    }
    Ok(list_body(data, result.next_cursor))
}

/// The deliveries of the event `given` names (by id or uid) that `keep`
/// admits, newest first; none for an unknown event. An event has one
/// delivery per endpoint it reached, so this reads a bounded few.
async fn of_event(
    ctx: &AppContext,
    t: &TenantId,
    given: &str,
    keep: impl Fn(&DeliveryRecord) -> bool,
) -> Result<Vec<DeliveryRecord>, ApiError> {
    if given.is_empty() {
        return Err(ApiError::invalid_field(
            "event_id",
            "event_id must not be empty",
        ));
    }
    let Some(ev) = ctx.store.find_event(t, given).await? else {
        return Ok(Vec::new());
    };
    let mut found = Vec::with_capacity(ev.deliveries.len());
    for (id, _) in &ev.deliveries {
        if let Some(d) = ctx.store.delivery(t, id).await?
            && keep(&d)
        {
            found.push(d);
        }
    }
    found.sort_by(|a, b| b.id.cmp(&a.id));
    Ok(found)
}

/// One delivery with every attempt of every series, oldest first.
#[utoipa::path(get, path = "/v1/tenants/{t}/deliveries/{id}", tag = "deliveries",
    operation_id = "get_delivery", params(ItemPath),
    responses((status = 200, description = "The delivery", body = DeliveryDetail)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, DeliveryId)>,
) -> Result<Json<DeliveryDetail>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let d = ctx
        .store
        .delivery(&t, &id)
        .await?
        .filter(|d| who.sees(&d.endpoint_id, &d.event_type))
        .ok_or_else(|| ApiError::not_found("delivery"))?;
    Ok(Json(DeliveryDetail {
        attempt_log: ctx
            .store
            .attempt_log(&t, &d.id)
            .await?
            .iter()
            .map(AttemptView::from)
            .collect(),
        delivery: delivery_view(&ctx, &d).await?,
    }))
}
