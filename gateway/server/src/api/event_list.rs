//! `GET /v1/tenants/{t}/events`: a tenant's events, newest or oldest first,
//! paged both ways, filtered by type patterns, channel, tag and time, each
//! page reading a bounded number of stored events.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::auth::Principal;
use super::deliveries::time_param;
use super::error::ApiError;
use super::events::raw_json;
use super::list_paging::{cursor_of, cursor_text, order_of};
use super::openapi::TenantPath;
use super::{Page, bad_query};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::event_type;
use crate::ids::TenantId;
use crate::store::{EventQuery, EventRecord};

/// The list's filters, order and paging; filters combine.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct EventListQuery {
    /// Event type patterns, comma-separated (`order.*,refund.made`); any may match.
    #[param(pattern = r"^[A-Za-z0-9._:*,-]*$", example = "order.*")]
    event_types: Option<String>,
    /// Only events on this channel.
    #[param(pattern = r"^[A-Za-z0-9._:-]+$")]
    channel: Option<String>,
    /// Only events with this tag.
    #[param(pattern = r"^[A-Za-z0-9._:/#-]+$")]
    tag: Option<String>,
    /// Created at or after this time (RFC 3339).
    #[param(format = DateTime)]
    since: Option<String>,
    /// Created before this time (RFC 3339).
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

/// An event in a list (its deliveries are on the event itself).
#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct EventSummary<'a> {
    channels: &'a [String],
    #[schema(format = DateTime)]
    created_at: String,
    #[schema(format = DateTime)]
    deliver_at: Option<String>,
    /// How many deliveries it made (one per endpoint it reached).
    deliveries: usize,
    event_type: &'a str,
    id: &'a str,
    /// When its payload was expunged (`payload` is `null` since).
    #[schema(format = DateTime)]
    payload_expunged_at: Option<String>,
    /// As it was received, byte for byte.
    #[schema(value_type = serde_json::Value)]
    payload: &'a RawValue,
    tags: &'a [String],
    uid: Option<&'a str>,
}

impl<'a> EventSummary<'a> {
    fn new(ev: &'a EventRecord) -> Self {
        Self {
            channels: &ev.labels.channels,
            created_at: rfc3339_ms(ev.created_at_ms),
            deliver_at: ev.labels.deliver_at_ms.map(rfc3339_ms),
            deliveries: ev.deliveries.len(),
            event_type: &ev.event_type,
            id: &ev.id,
            payload_expunged_at: ev.labels.expunged_at_ms.map(rfc3339_ms),
            payload: &ev.payload,
            tags: &ev.labels.tags,
            uid: ev.labels.uid.as_deref(),
        }
    }
}

/// A page of events, with cursors both ways.
#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct EventList<'a> {
    data: Vec<EventSummary<'a>>,
    /// Pass as `cursor` for the page after this one; `null` on the last.
    next_cursor: Option<String>,
    /// Pass as `cursor` for the page before this one (on a newest-first list,
    /// the events that arrived since); `null` when the page has no start.
    prev_cursor: Option<String>,
    /// How many stored events this page read (at most 2 500, so a page of a
    /// narrow filter may hold few items and still have a next page).
    scanned: usize,
}

/// Lists the tenant's events with their payloads.
#[utoipa::path(get, path = "/v1/tenants/{t}/events", tag = "events", operation_id = "list_events",
    params(TenantPath, EventListQuery),
    responses((status = 200, description = "A page of events", body = EventList<'_>)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    q: Result<Query<EventListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let Query(q) = q.map_err(bad_query)?;
    let limit = Page::sized(q.limit.clone()).limit()?;
    let patterns: Vec<String> = q
        .event_types
        .as_deref()
        .map(|s| {
            s.split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    for p in &patterns {
        event_type::validate_pattern(p, ctx.config.limits.event_type_len)
            .map_err(|e| ApiError::invalid_field("event_types", format!("pattern {p:?}: {e}")))?;
    }
    let order = order_of(q.order.as_deref())?;
    let query = EventQuery {
        order,
        cursor: q.cursor.as_deref().map(cursor_of).transpose()?,
        since_ms: time_param("since", q.since.as_deref())?,
        until_ms: time_param("until", q.until.as_deref())?,
        limit,
    };
    for (field, given) in [("channel", &q.channel), ("tag", &q.tag)] {
        if given.as_ref().is_some_and(String::is_empty) {
            return Err(ApiError::invalid_field(
                field,
                format!("{field} must not be empty"),
            ));
        }
    }
    let keep = |ev: &EventRecord| {
        (patterns.is_empty() || event_type::any_matches(&patterns, &ev.event_type))
            && q.channel
                .as_ref()
                .is_none_or(|c| ev.labels.channels.contains(c))
            && q.tag
                .as_ref()
                .is_none_or(|tag| ev.labels.tags.contains(tag))
            && who.sees_event_type(&ev.event_type)
    };
    let page = ctx.store.list_events(&t, &query, keep).await?;
    let body = EventList {
        data: page.data.iter().map(EventSummary::new).collect(),
        next_cursor: page.next.as_ref().map(cursor_text),
        prev_cursor: page.prev.as_ref().map(cursor_text),
        scanned: page.scanned,
    };
    raw_json(&body)
}
