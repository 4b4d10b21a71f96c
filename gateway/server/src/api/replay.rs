//! DLQ replay: one delivery, or every dead delivery a filter matches. A replay
//! starts a new series with the same `webhook-id`; the log keeps earlier series.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};

use super::auth::Principal;
use super::body::{body_or_default, parse_json, read_limited};
use super::deliveries::{dead_reason_named, delivery_view, time_param};
use super::delivery_view::DeliveryView;
use super::error::ApiError;
use super::openapi::{ItemPath, ReplayableState, TenantPath};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::delivery::BulkReplay;
use crate::ids::{DeliveryId, TenantId};
use crate::policy::DeadReason;
use crate::store::{
    BreakerState, DeliveryFilter, DeliveryState, EndpointRecord, Recorded, ReplayOutcome,
};

/// The body of a single replay; may be empty.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ReplayOne {
    /// Send a delivery that succeeded again.
    #[serde(default)]
    force: bool,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"state": "dead", "dead_reason": "max_attempts", "dry_run": true}))]
pub(super) struct ReplayMany {
    /// `dead` (replay the dead-letter queue) or `succeeded` (send delivered
    /// events again, as a new series each).
    #[schema(value_type = ReplayableState)]
    state: String,
    /// Only this endpoint's (no control characters).
    #[schema(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    endpoint_id: Option<String>,
    /// Only this event type (exact; no control characters).
    #[schema(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    event_type: Option<String>,
    /// Created at or after this time (RFC 3339).
    #[schema(format = DateTime)]
    since: Option<String>,
    /// Created before this time (RFC 3339).
    #[schema(format = DateTime)]
    until: Option<String>,
    /// Only those that died for this reason.
    #[schema(value_type = Option<DeadReason>)]
    dead_reason: Option<String>,
    /// Count what would be replayed, and change nothing.
    #[serde(default)]
    dry_run: bool,
}

/// A replayed endpoint whose breaker is not closed: its probe goes at once, and
/// the rest of its work follows only once it succeeds.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct OpenBreakerView {
    endpoint_id: String,
    /// One of the names of [`BreakerState`]; a name written by another build is shown as it is.
    #[schema(value_type = String)]
    state: Recorded<BreakerState>,
    #[schema(format = DateTime)]
    open_until: Option<String>,
}

impl OpenBreakerView {
    fn of(ep: &EndpointRecord) -> Self {
        Self {
            endpoint_id: ep.id.to_string(),
            state: ep.breaker.state.clone(),
            open_until: ep.breaker.open_until_ms.map(rfc3339_ms),
        }
    }
}

/// The answer of a bulk replay; a dry run has the same fields and `dry_run: true`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct BulkReplayView {
    /// Replayed, or for a dry run, would be replayed.
    replayed: usize,
    open_breakers: Vec<OpenBreakerView>,
    /// Only in a dry run's answer: a real replay answers as it always has.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    dry_run: bool,
}

impl BulkReplayView {
    fn of(replay: &BulkReplay, dry_run: bool) -> Self {
        Self {
            replayed: replay.summary.replayed,
            open_breakers: replay
                .open_breakers
                .iter()
                .map(OpenBreakerView::of)
                .collect(),
            dry_run,
        }
    }
}

/// Replays one finished delivery as a new series with the same `webhook-id`.
#[utoipa::path(post, path = "/v1/tenants/{t}/deliveries/{id}/replay", tag = "dlq",
    operation_id = "replay_delivery", params(ItemPath),
    request_body(content = Option<ReplayOne>, description = "Empty, or `force` to resend a delivered one"),
    responses((status = 200, description = "The delivery, pending again", body = DeliveryView)))]
pub(super) async fn replay_one(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, DeliveryId)>,
    body: Body,
) -> Result<Json<DeliveryView>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let input: ReplayOne = body_or_default(body, ctx.config.limits.json_body_bytes).await?;
    let found = ctx.store.delivery(&t, &id).await?;
    if found
        .as_ref()
        .is_some_and(|d| !who.sees(&d.endpoint_id, &d.event_type))
    {
        return Err(ApiError::not_found("delivery"));
    }
    if let Some(d) = found
        && let Some(ev) = ctx.store.event(&t, &d.event_id).await?
        && ev.labels.expunged_at_ms.is_some()
    {
        return Err(ApiError::conflict(
            "the event's payload was expunged: there is nothing to send",
        ));
    }
    match ctx
        .writes
        .replay_delivery(&t, &id, input.force, ctx.clock.now_ms())
        .await?
    {
        ReplayOutcome::Replayed(d, _) => Ok(Json(delivery_view(&ctx, &d).await?)),
        ReplayOutcome::NotFound => Err(ApiError::not_found("delivery")),
        ReplayOutcome::Pending => Err(ApiError::conflict(
            "the delivery is still pending; only finished deliveries replay",
        )),
        ReplayOutcome::NeedsForce => Err(ApiError::conflict(
            "the delivery succeeded; pass {\"force\": true} to send it again",
        )),
        ReplayOutcome::EndpointGone => {
            Err(ApiError::conflict("the delivery's endpoint was deleted"))
        }
    }
}

/// Replays every dead delivery the filter matches (with `"state": "succeeded"`,
/// every succeeded one: a bulk resend), or with `dry_run` counts them.
#[utoipa::path(post, path = "/v1/tenants/{t}/replay", tag = "dlq",
    operation_id = "replay_dead_deliveries", params(TenantPath), request_body = ReplayMany,
    responses((status = 200, description = "How many were (or would be) replayed", body = BulkReplayView)))]
pub(super) async fn replay_many(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    body: Body,
) -> Result<Json<BulkReplayView>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let input: ReplayMany =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    let state = match input.state.as_str() {
        "dead" => DeliveryState::Dead,
        "succeeded" => DeliveryState::Succeeded,
        _ => {
            return Err(ApiError::validation(
                "state",
                "bulk replay takes \"state\": \"dead\" or \"succeeded\"",
            ));
        }
    };
    if state == DeliveryState::Succeeded && input.dead_reason.is_some() {
        return Err(ApiError::validation(
            "dead_reason",
            "dead_reason applies to \"state\": \"dead\" only",
        ));
    }
    super::request_guard::plain_text("endpoint_id", input.endpoint_id.as_deref())?;
    super::request_guard::plain_text("event_type", input.event_type.as_deref())?;
    let filter = DeliveryFilter {
        state: Some(state),
        endpoint_id: input.endpoint_id,
        event_type: input.event_type,
        since_ms: time_param("since", input.since.as_deref())?,
        until_ms: time_param("until", input.until.as_deref())?,
        dead_reason: input
            .dead_reason
            .as_deref()
            .map(dead_reason_named)
            .transpose()
            .map_err(|m| ApiError::validation("dead_reason", m))?,
    };
    let now_ms = ctx.clock.now_ms();
    let replay = if input.dry_run {
        ctx.writes.plan_replay_matching(&t, &filter, now_ms).await?
    } else {
        ctx.writes.replay_matching(&t, &filter, now_ms).await?
    };
    Ok(Json(BulkReplayView::of(&replay, input.dry_run)))
}
