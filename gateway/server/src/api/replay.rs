//! DLQ replay: one delivery, or every dead delivery a filter matches. A replay
//! starts a new series with the same `webhook-id`; the log keeps earlier series.

use std::collections::BTreeSet;
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
use crate::delivery::ScheduleChange;
use crate::store::{BreakerState, DeliveryFilter, DeliveryState, ReplayOutcome};

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

/// A replay is the operator saying the receiver is fixed: the scheduler serves the
/// endpoint now, and an open breaker lets its half-open probe go at once.
fn schedule(ctx: &AppContext, endpoint_id: &str) {
    ctx.delivery.notify(ScheduleChange::Replayed {
        endpoint_id: endpoint_id.to_owned(),
    });
}

/// The replayed deliveries' endpoints whose breaker is not closed: their probe
/// goes at once, and the rest of their work follows only once it succeeds.
fn open_breakers(
    ctx: &AppContext,
    tenant: &str,
    endpoints: &BTreeSet<String>,
) -> Result<Vec<Value>, ApiError> {
    let mut out = Vec::new();
    for id in endpoints {
        if let Some(ep) = ctx.store.endpoint(tenant, id)?
            && ep.breaker.state != BreakerState::Closed
        {
            out.push(json!({
                "endpoint_id": ep.id,
                "state": ep.breaker.state,
                "open_until": ep.breaker.open_until_ms.map(rfc3339_ms),
            }));
        }
    }
    Ok(out)
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
        .store
        .replay_delivery(&t, &id, input.force, ctx.clock.now_ms())
        .await?
    {
        ReplayOutcome::Replayed(d) => {
            schedule(&ctx, &d.endpoint_id);
            Ok(Json(delivery_summary(&ctx, &d)?))
        }
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
        .store
        .replay_matching(&t, &filter, ctx.clock.now_ms())
        .await?;
    let breakers = open_breakers(&ctx, &t, &replayed.endpoints)?;
    for endpoint_id in &replayed.endpoints {
        schedule(&ctx, endpoint_id);
    }
    Ok(Json(json!({
        "replayed": replayed.replayed,
        "open_breakers": breakers,
    })))
}
