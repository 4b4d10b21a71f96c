//! Sending a catalog type's example to one endpoint: a real event, stored,
//! signed and delivered with retries like any other, but to that endpoint
//! alone and marked as a test (on the event, its delivery and each attempt),
//! so a receiver's owner can try their endpoint before real traffic.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::endpoints::load;
use super::error::ApiError;
use super::events::IngestAnswer;
use super::openapi::ItemPath;
use crate::context::AppContext;
use crate::ids::{EndpointId, TenantId};
use crate::store::{EventLabels, IngestOutcome, NewEvent};

/// The body of `send-example`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SendExample {
    /// A type of the catalog that has an example.
    #[schema(example = "order.paid")]
    event_type: String,
}

/// Sends the example of a catalog type to this endpoint, whatever it
/// subscribes to, as a test event.
#[utoipa::path(post, path = "/v1/tenants/{t}/endpoints/{id}/send-example", tag = "endpoints",
    operation_id = "send_endpoint_example", params(ItemPath),
    request_body = SendExample,
    responses((status = 202, description = "Stored; the delivery follows", body = IngestAnswer)))]
pub(super) async fn send_example(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
    body: Body,
) -> Result<(StatusCode, Json<IngestAnswer>), ApiError> {
    let ep = load(&ctx, &who, &t, &id).await?;
    let input: SendExample =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    let known = ctx.store.event_type(&input.event_type).await?;
    let Some(ty) = known.filter(|ty| who.sees_event_type(&ty.name)) else {
        return Err(ApiError::validation(
            "event_type",
            format!("event type {:?} is not in the catalog", input.event_type),
        ));
    };
    if ty.archived {
        return Err(ApiError::validation(
            "event_type",
            format!("event type {} is archived", ty.name),
        ));
    }
    let Some(example) = &ty.example else {
        return Err(ApiError::validation(
            "event_type",
            format!("event type {} has no example", ty.name),
        ));
    };
    if ep.disabled {
        return Err(ApiError::conflict(
            "the endpoint is disabled; enable it to send it an example",
        ));
    }
    if ctx.store.space_low() {
        return Err(ApiError::insufficient_storage());
    }
    let payload = RawValue::from_string(example.to_string())
        .map_err(|e| ApiError::validation("event_type", format!("its example: {e}")))?;
    let outcome = ctx
        .writes
        .ingest(NewEvent {
            labels: EventLabels {
                test: true,
                ..EventLabels::default()
            },
            tenant_id: &ep.tenant_id,
            event_type: &ty.name,
            payload: &payload,
            idempotency: None,
            endpoints: vec![&ep],
            now_ms: ctx.clock.now_ms(),
        })
        .await?;
    match outcome {
        IngestOutcome::Created { receipt, .. } | IngestOutcome::Replayed(receipt) => {
            Ok((StatusCode::ACCEPTED, Json(IngestAnswer::from(receipt))))
        }
        // Deleted since it was read.
        IngestOutcome::EndpointsChanged | IngestOutcome::KeyReused => {
            Err(ApiError::not_found("endpoint"))
        }
    }
}
