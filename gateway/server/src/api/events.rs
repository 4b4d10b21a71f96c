//! Event ingest (202 only once durable) and event reads.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::deliveries::delivery_view;
use super::delivery_view::DeliveryView;
use super::error::ApiError;
use super::openapi::{ItemPath, TenantPath};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::event_type;
use crate::ids::{EventId, TenantId};
use crate::store::{IngestOutcome, IngestReceipt, NewEvent};

/// How often an ingest is retried when endpoints are deleted under it.
const MAX_INGEST_TRIES: usize = 8;

/// The body of `POST .../events`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"event_type": "order.created", "payload": {"order_id": 42}}))]
pub struct IngestBody {
    /// Letters, digits, `.`, `_`, `-` and `:`, at most `limits.event_type_len` bytes.
    #[schema(pattern = r"^[A-Za-z0-9._:-]+$", example = "order.created")]
    pub event_type: String,
    /// Kept as the exact bytes received: no re-serialisation, no key reordering.
    /// Any JSON value.
    #[schema(value_type = serde_json::Value)]
    pub payload: Box<RawValue>,
}

/// The answer to an ingest: the event's id and one delivery per matching endpoint.
/// A repeat with the same `Idempotency-Key` and body gets the same answer. Fields
/// are in alphabetical order, as clients have always received them.
#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct IngestAnswer {
    deliveries: Vec<IngestedDeliveryView>,
    /// The event's id (`evt_...`): the `webhook-id` of every request made for it,
    /// on every delivery, retry and replay, so receivers deduplicate on it.
    id: String,
}

/// One delivery an ingest created.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = IngestedDelivery)]
pub(super) struct IngestedDeliveryView {
    endpoint_id: String,
    /// The delivery's id (`dlv_...`), to follow it under `/deliveries`.
    id: String,
}

impl From<IngestReceipt> for IngestAnswer {
    fn from(receipt: IngestReceipt) -> Self {
        Self {
            id: receipt.event_id.into(),
            deliveries: receipt
                .deliveries
                .into_iter()
                .map(|d| IngestedDeliveryView {
                    id: d.delivery_id.into(),
                    endpoint_id: d.endpoint_id.into(),
                })
                .collect(),
        }
    }
}

/// Parses and validates an ingest body (also the fuzzer's entry point).
///
/// # Errors
/// 400 for malformed JSON or wrong types, 422 for a bad event type.
pub fn parse_ingest_body(bytes: &[u8], max_event_type_len: usize) -> Result<IngestBody, ApiError> {
    let input: IngestBody = parse_json(bytes)?;
    event_type::validate_type(&input.event_type, max_event_type_len)
        .map_err(|e| ApiError::validation("event_type", format!("event_type {e}")))?;
    Ok(input)
}

fn idempotency_key(headers: &HeaderMap, max: usize) -> Result<Option<&str>, ApiError> {
    let Some(v) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let field = "Idempotency-Key";
    let k = v
        .to_str()
        .map_err(|_| ApiError::invalid_field(field, "Idempotency-Key must be visible ASCII"))?;
    if k.is_empty() || k.len() > max || !k.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ApiError::invalid_field(
            field,
            format!("Idempotency-Key must be 1 to {max} visible ASCII characters"),
        ));
    }
    Ok(Some(k))
}

/// Accepts an event for every matching endpoint; answers once it is durable.
/// With `Idempotency-Key`, a repeat of the same body answers the first answer.
#[utoipa::path(post, path = "/v1/tenants/{t}/events", tag = "events", operation_id = "ingest_event",
    params(TenantPath,
        ("Idempotency-Key" = Option<String>, Header, min_length = 1, max_length = 255, pattern = "^[!-~]+$",
            description = "1 to `limits.idempotency_key_len` (255) visible ASCII characters")),
    request_body = IngestBody,
    responses((status = 202, description = "Stored; deliveries follow", body = IngestAnswer)))]
pub(super) async fn ingest(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let limits = &ctx.config.limits;
    let key = idempotency_key(&headers, limits.idempotency_key_len)?;
    let bytes = read_limited(body, limits.json_body_bytes).await?;
    let input = parse_ingest_body(&bytes, limits.event_type_len)?;
    if ctx.store.space_low() {
        return Err(ApiError::insufficient_storage());
    }
    let idempotency = key.map(|k| (k, hex::encode(Sha256::digest(&bytes))));
    // An endpoint deleted after the list was read makes the store refuse the
    // write; the list is read again, a bounded number of times.
    let mut tries = 0;
    loop {
        let endpoints = ctx.store.endpoints_of(&t).await?;
        let matching = endpoints
            .iter()
            .filter(|ep| {
                !ep.disabled && event_type::any_matches(&ep.event_types, &input.event_type)
            })
            .collect();
        let outcome = ctx
            .writes
            .ingest(NewEvent {
                tenant_id: &t,
                event_type: &input.event_type,
                payload: &input.payload,
                idempotency: idempotency.clone(),
                endpoints: matching,
                now_ms: ctx.clock.now_ms(),
            })
            .await?;
        tries += 1;
        match outcome {
            IngestOutcome::Created { receipt, .. } | IngestOutcome::Replayed(receipt) => {
                let answer = IngestAnswer::from(receipt);
                return Ok((StatusCode::ACCEPTED, Json(answer)).into_response());
            }
            IngestOutcome::KeyReused => return Err(ApiError::idempotency_key_reused()),
            IngestOutcome::EndpointsChanged if tries < MAX_INGEST_TRIES => {}
            IngestOutcome::EndpointsChanged => {
                return Err(ApiError::conflict(
                    "the tenant's endpoints kept changing during ingest; nothing was stored, retry",
                ));
            }
        }
    }
}

/// An event with its payload and deliveries.
#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct EventView<'a> {
    id: &'a str,
    event_type: &'a str,
    /// The payload as it was received, byte for byte: any JSON value.
    #[schema(value_type = serde_json::Value)]
    payload: &'a RawValue,
    #[schema(format = DateTime)]
    created_at: String,
    deliveries: Vec<DeliveryView>,
}

/// One event with its payload and deliveries.
#[utoipa::path(get, path = "/v1/tenants/{t}/events/{id}", tag = "events", operation_id = "get_event",
    params(ItemPath),
    responses((status = 200, description = "The event", body = EventView<'_>)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EventId)>,
) -> Result<Response, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let ev = ctx
        .store
        .event(&t, &id)
        .await?
        .ok_or_else(|| ApiError::not_found("event"))?;
    let mut deliveries = Vec::with_capacity(ev.deliveries.len());
    for (dlv_id, _) in &ev.deliveries {
        if let Some(d) = ctx.store.delivery(&t, dlv_id).await? {
            deliveries.push(delivery_view(&ctx, &d).await?);
        }
    }
    let view = EventView {
        id: &ev.id,
        event_type: &ev.event_type,
        payload: &ev.payload,
        created_at: rfc3339_ms(ev.created_at_ms),
        deliveries,
    };
    // Serialised by hand so the payload's raw bytes pass through untouched.
    let body = serde_json::to_vec(&view).map_err(|e| ApiError::invalid_json(e.to_string()))?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response())
}
