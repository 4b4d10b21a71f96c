//! `GET /v1/tenants/{t}/attempts` and `/attempts/{id}`: a tenant's attempts,
//! newest or oldest first, paged both ways, filtered by endpoint, event,
//! delivery, outcome, status class and time, each page reading a bounded
//! number of stored attempts; and one attempt with the request headers sent.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::auth::Principal;
use super::deliveries::time_param;
use super::delivery_view::AttemptView;
use super::error::ApiError;
use super::events::raw_json;
use super::list_paging::{cursor_of, cursor_text, order_of};
use super::openapi::{ItemPath, TenantPath};
use super::{Page, bad_query};
use crate::context::AppContext;
use crate::ids::{AttemptId, DeliveryId, EndpointId, EventId, TenantId};
use crate::store::{AttemptOutcome, AttemptQuery, AttemptScope, ListedAttempt, StatusClass};

/// The list's filters, order and paging; filters combine.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct AttemptListQuery {
    /// Only this endpoint's attempts (its id or uid; no control characters).
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    endpoint: Option<String>,
    /// Only attempts of this event's deliveries (its id or uid; no control
    /// characters).
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    event: Option<String>,
    /// Only this delivery's attempts (no control characters).
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    delivery: Option<String>,
    /// Only attempts that ended their turn so: `delivered`, `retry` or `dead`.
    #[param(pattern = "^(delivered|retry|dead)$")]
    outcome: Option<String>,
    /// Only attempts answered in this class: `2xx`, `3xx`, `4xx`, `5xx`, or
    /// `transport` (no answer: the connection, TLS or timeout failed).
    #[param(pattern = "^(2xx|3xx|4xx|5xx|transport)$")]
    status_class: Option<String>,
    /// Started at or after this time (RFC 3339).
    #[param(format = DateTime)]
    since: Option<String>,
    /// Started before this time (RFC 3339).
    #[param(format = DateTime)]
    until: Option<String>,
    /// `descending` (newest first, the default) or `ascending`.
    #[param(pattern = "^(ascending|descending)$")]
    order: Option<String>,
    /// Items per page, 1 to 250; 50 when absent.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 250)]
    limit: Option<String>,
    /// A page's `next_cursor` (the page after it) or `prev_cursor` (the page
    /// before it).
    #[param(pattern = r"^(after|before):[A-Za-z0-9_]+$")]
    cursor: Option<String>,
}

/// An attempt with what it was an attempt of.
#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct ListedAttemptView {
    #[serde(flatten)]
    attempt: AttemptView,
    delivery_id: String,
    endpoint_id: String,
    event_id: String,
    event_type: String,
}

impl From<&ListedAttempt> for ListedAttemptView {
    fn from(a: &ListedAttempt) -> Self {
        Self {
            attempt: AttemptView::from(&a.record),
            delivery_id: a.of.delivery_id.to_string(),
            endpoint_id: a.of.endpoint_id.to_string(),
            event_id: a.of.event_id.to_string(),
            event_type: a.of.event_type.clone(),
        }
    }
}

/// A page of attempts, with cursors both ways.
#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct AttemptList {
    data: Vec<ListedAttemptView>,
    /// Pass as `cursor` for the page after this one; `null` on the last.
    next_cursor: Option<String>,
    /// Pass as `cursor` for the page before this one (on a newest-first list,
    /// the attempts made since); `null` when the page has no start.
    prev_cursor: Option<String>,
    /// How many stored attempts this page read (at most 2 500, so a page of a
    /// narrow filter may hold few items and still have a next page).
    scanned: usize,
}

/// Lists the tenant's attempts. Attempts made before attempts had ids are not
/// listed; their deliveries still show them.
#[utoipa::path(get, path = "/v1/tenants/{t}/attempts", tag = "deliveries", operation_id = "list_attempts",
    params(TenantPath, AttemptListQuery),
    responses((status = 200, description = "A page of attempts", body = AttemptList)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    q: Result<Query<AttemptListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let Query(q) = q.map_err(bad_query)?;
    let query = AttemptQuery {
        order: order_of(q.order.as_deref())?,
        cursor: q.cursor.as_deref().map(cursor_of).transpose()?,
        since_ms: time_param("since", q.since.as_deref())?,
        until_ms: time_param("until", q.until.as_deref())?,
        limit: Page::sized(q.limit.clone()).limit()?,
    };
    let outcome = q
        .outcome
        .as_deref()
        .map(|name| {
            AttemptOutcome::from_name(name).ok_or_else(|| {
                ApiError::invalid_field(
                    "outcome",
                    "outcome must be delivered, retry, dead or skipped",
                )
            })
        })
        .transpose()?;
    let class = q
        .status_class
        .as_deref()
        .map(|name| {
            StatusClass::from_name(name).ok_or_else(|| {
                ApiError::invalid_field(
                    "status_class",
                    "status_class must be 2xx, 3xx, 4xx, 5xx or transport",
                )
            })
        })
        .transpose()?;
    let endpoint = match q.endpoint.as_deref() {
        None => None,
        Some(given) => Some(endpoint_named(&ctx, &t, given).await?),
    };
    let event = match q.event.as_deref() {
        None => None,
        Some(given) => Some(event_named(&ctx, &t, given).await?),
    };
    let delivery = q
        .delivery
        .as_deref()
        .map(|given| nonempty("delivery", given).map(DeliveryId::from))
        .transpose()?;
    // The narrowest scope is read; the other filters keep from it.
    let scope = match (&delivery, &event, &endpoint) {
        (Some(d), _, _) => AttemptScope::Delivery(d.clone()),
        (None, Some(ev), _) => AttemptScope::Event(ev.clone()),
        (None, None, Some(ep)) => AttemptScope::Endpoint(ep.clone()),
        (None, None, None) => AttemptScope::Tenant,
    };
    let keep = |a: &ListedAttempt| {
        delivery.as_ref().is_none_or(|d| a.of.delivery_id == *d)
            && event.as_ref().is_none_or(|ev| a.of.event_id == *ev)
            && endpoint.as_ref().is_none_or(|ep| a.of.endpoint_id == *ep)
            && outcome.is_none_or(|o| a.record.outcome() == o)
            && class.is_none_or(|c| a.record.status_class() == c)
            && who.sees(&a.of.endpoint_id, &a.of.event_type)
    };
    let page = ctx.store.list_attempts(&t, &scope, &query, keep).await?;
    raw_json(&AttemptList {
        data: page.data.iter().map(ListedAttemptView::from).collect(),
        next_cursor: page.next.as_ref().map(cursor_text),
        prev_cursor: page.prev.as_ref().map(cursor_text),
        scanned: page.scanned,
    })
}

/// One attempt, with the request headers sent (the endpoint's sensitive
/// header values masked) and the start of the response.
#[utoipa::path(get, path = "/v1/tenants/{t}/attempts/{id}", tag = "deliveries", operation_id = "get_attempt",
    params(ItemPath),
    responses((status = 200, description = "The attempt", body = ListedAttemptView)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, AttemptId)>,
) -> Result<Response, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let attempt = ctx
        .store
        .attempt(&t, &id)
        .await?
        .filter(|a| who.sees(&a.of.endpoint_id, &a.of.event_type))
        .ok_or_else(|| ApiError::not_found("attempt"))?;
    raw_json(&ListedAttemptView::from(&attempt))
}

fn nonempty<'a>(field: &str, given: &'a str) -> Result<&'a str, ApiError> {
    if given.is_empty() {
        Err(ApiError::invalid_field(
            field,
            format!("{field} must not be empty"),
        ))
    } else {
        Ok(given)
    }
}

/// The endpoint `given` names by id or uid; a deleted endpoint's id is taken
/// as given (its attempts outlive it).
async fn endpoint_named(
    ctx: &AppContext,
    t: &TenantId,
    given: &str,
) -> Result<EndpointId, ApiError> {
    let given = nonempty("endpoint", given)?;
    Ok(match ctx.store.find_endpoint(t, given).await? {
        Some(ep) => ep.id,
        None => EndpointId::from(given),
    })
}

/// The event `given` names by id or uid, as given when there is none.
async fn event_named(ctx: &AppContext, t: &TenantId, given: &str) -> Result<EventId, ApiError> {
    let given = nonempty("event", given)?;
    Ok(match ctx.store.find_event(t, given).await? {
        Some(ev) => ev.id,
        None => EventId::from(given),
    })
}
