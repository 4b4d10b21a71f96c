//! DLQ replay: one delivery, or every dead delivery a filter matches. A replay
//! starts a new series with the same `webhook-id`; the log keeps earlier series.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::deliveries::{delivery_summary, time_param};
use super::error::ApiError;
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::store::{DeliveryFilter, DeliveryState, EndpointRecord, ReplayOutcome};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReplayOne {
    #[serde(default)]
    force: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReplayMany {
    state: String,
    endpoint_id: Option<String>,
    event_type: Option<String>,
    since: Option<String>,
    until: Option<String>,
}

/// An empty body means `{}`.
async fn body_or_default<T: serde::de::DeserializeOwned + Default>(
    ctx: &AppContext,
    body: Body,
) -> Result<T, ApiError> {
    let bytes = read_limited(body, ctx.config.limits.json_body_bytes).await?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        Ok(T::default())
    } else {
        parse_json(&bytes)
    }
}

/// A replayed endpoint whose breaker is not closed: its probe goes at once, and
/// the rest of its work follows only once it succeeds.
fn open_breaker_view(ep: &EndpointRecord) -> Value {
    json!({
        "endpoint_id": ep.id,
        "state": ep.breaker.state,
        "open_until": ep.breaker.open_until_ms.map(rfc3339_ms),
    })
}

pub(super) async fn replay_one(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(String, String)>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    who.require_tenant(&ctx, &t)?;
    let input: ReplayOne = body_or_default(&ctx, body).await?;
    match ctx
        .writes
        .replay_delivery(&t, &id, input.force, ctx.clock.now_ms())
        .await?
    {
        ReplayOutcome::Replayed(d) => Ok(Json(delivery_summary(&ctx, &d)?)),
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

pub(super) async fn replay_many(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    who.require_tenant(&ctx, &t)?;
    let input: ReplayMany =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    if input.state != "dead" {
        return Err(ApiError::validation(
            "state",
            "bulk replay takes \"state\": \"dead\"",
        ));
    }
    let filter = DeliveryFilter {
        state: Some(DeliveryState::Dead),
        endpoint_id: input.endpoint_id,
        event_type: input.event_type,
        since_ms: time_param("since", input.since.as_deref())?,
        until_ms: time_param("until", input.until.as_deref())?,
    };
    let replayed = ctx
        .writes
        .replay_matching(&t, &filter, ctx.clock.now_ms())
        .await?;
    Ok(Json(json!({
        "replayed": replayed.summary.replayed,
        "open_breakers": replayed.open_breakers.iter().map(open_breaker_view).collect::<Vec<_>>(),
    })))
}
