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
use super::labels::Label;
use super::openapi::{ItemPath, TenantPath};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::event_type;
use crate::ids::{EventId, TenantId};
use crate::policy::MAX_DURATION_MS;
use crate::routing::{self, EventRoute};
use crate::store::{EventLabels, Expunge, IngestOutcome, IngestReceipt, NewEvent};

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
    /// The platform's own id for the event (also accepted as `id`; Svix's
    /// `eventId`): a repeat with the same uid within 24 hours answers the first
    /// event, whatever its body, with `Idempotent-Replayed: true`. Usable in
    /// paths wherever the event's id is.
    #[serde(default, alias = "id")]
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,256}$", example = "order-42-paid")]
    pub uid: Option<String>,
    /// Channels (at most 10): only endpoints that listen on one of them, or on
    /// none, receive the event.
    #[serde(default)]
    #[schema(example = json!(["eu"]))]
    pub channels: Vec<String>,
    /// Names to find the event by (at most 10); they route nothing.
    #[serde(default)]
    #[schema(example = json!(["invoice:42"]))]
    pub tags: Vec<String>,
    /// A scheduled send: every delivery is pending until then (RFC 3339, at
    /// most 30 days ahead; a time past means now).
    #[serde(default)]
    #[schema(format = DateTime, example = "2026-12-24T18:00:00Z")]
    pub deliver_at: Option<String>,
}

/// The idempotency key an event's uid stands for. It holds a space, which no
/// `Idempotency-Key` header can, so the two never meet.
fn uid_key(uid: &str) -> String {
    format!("event uid {uid}")
}

/// What a uid's repeat is compared by: nothing, so any body answers the first.
const UID_BODY: &str = "";

impl IngestBody {
    /// The labels the body gives, checked.
    ///
    /// # Errors
    /// 422 `validation_failed` naming the field.
    fn labels(&mut self, now_ms: u64) -> Result<EventLabels, ApiError> {
        if let Some(uid) = &self.uid
            && !crate::ids::is_valid_uid(uid)
        {
            return Err(ApiError::validation(
                "uid",
                "a uid is 1 to 256 of A-Z, a-z, 0-9, _, . and -",
            ));
        }
        let deliver_at_ms = match &self.deliver_at {
            None => None,
            Some(at) => {
                let at = crate::clock::parse_rfc3339_ms(at).ok_or_else(|| {
                    ApiError::validation("deliver_at", "deliver_at must be an RFC 3339 time")
                })?;
                if at > now_ms.saturating_add(MAX_DURATION_MS) {
                    return Err(ApiError::validation(
                        "deliver_at",
                        "deliver_at may be at most 30 days ahead",
                    ));
                }
                (at > now_ms).then_some(at)
            }
        };
        Ok(EventLabels {
            uid: self.uid.take(),
            channels: Label::Channel.validate(std::mem::take(&mut self.channels))?,
            tags: Label::Tag.validate(std::mem::take(&mut self.tags))?,
            deliver_at_ms,
            expunged_at_ms: None,
            test: false,
            trace: None,
        })
    }
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

pub(super) fn idempotency_key(headers: &HeaderMap, max: usize) -> Result<Option<&str>, ApiError> {
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
            description = "1 to `limits.idempotency_key_len` (255) visible ASCII characters"),
        ("traceparent" = Option<String>, Header,
            description = "W3C Trace Context of the sender (`00-<trace id>-<parent id>-<flags>`): kept with the event and sent on every attempt, so the receiver's trace continues the sender's; one that does not parse is ignored and the gateway starts a trace"),
        ("tracestate" = Option<String>, Header,
            description = "W3C Trace Context vendor state, kept and sent with `traceparent`")),
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
    let mut input = parse_ingest_body(&bytes, limits.event_type_len)?;
    let mut labels = input.labels(ctx.clock.now_ms())?;
    // A catalog type that validates refuses a payload its schema does not
    // accept: nothing is stored.
    ctx.catalog
        .check_payload(&input.event_type, &input.payload)
        .map_err(|e| {
            let field = match e.at.as_str() {
                "(root)" => "payload".to_owned(),
                at => format!("payload{at}"),
            };
            ApiError::validation(field, e.to_string())
        })?;
    // The event keeps the trace its attempts continue: this ingest's span's, or
    // with traces off, the sender's as it came.
    let (span, trace) = ctx.traces.ingest(&headers);
    labels.trace = trace;
    span.set_str("hookgate.tenant", &t);
    span.set_str("hookgate.event_type", &input.event_type);
    if ctx.store.space_low() {
        return Err(ApiError::insufficient_storage());
    }
    // A uid is the event's own idempotency key; the header is then not consulted.
    let by_uid = labels.uid.as_deref().map(uid_key);
    let idempotency = match &by_uid {
        Some(k) => Some((k.as_str(), UID_BODY.to_owned())),
        None => key.map(|k| {
            let meaning = super::idempotent_calls::canonical(&bytes);
            (k, format!("c1:{}", hex::encode(Sha256::digest(meaning))))
        }),
    };
    // An endpoint deleted after the list was read makes the store refuse the
    // write; the list is read again, a bounded number of times.
    let mut tries = 0;
    loop {
        let endpoints = ctx.store.endpoints_of(&t).await?;
        let route = EventRoute {
            event_type: &input.event_type,
            channels: &labels.channels,
            payload: &input.payload,
        };
        let matching = routing::reached(&endpoints, &route);
        let commit = ctx.traces.child(&span, "store.commit");
        commit.set("hookgate.write", "ingest");
        let outcome = ctx
            .writes
            .ingest(NewEvent {
                labels: labels.clone(),
                tenant_id: &t,
                event_type: &input.event_type,
                payload: &input.payload,
                idempotency: idempotency.clone(),
                endpoints: matching,
                now_ms: ctx.clock.now_ms(),
            })
            .await;
        if let Err(e) = &outcome {
            commit.fail(e);
            span.fail(e);
        }
        commit.end();
        let outcome = outcome?;
        tries += 1;
        match outcome {
            IngestOutcome::Created { receipt, .. } => {
                span.set_str("hookgate.event_id", &receipt.event_id);
                span.set("hookgate.deliveries", receipt.deliveries.len() as i64);
                let answer = IngestAnswer::from(receipt);
                return Ok((StatusCode::ACCEPTED, Json(answer)).into_response());
            }
            IngestOutcome::Replayed(receipt) => {
                let answer = IngestAnswer::from(receipt);
                let replayed = [("idempotent-replayed", "true")];
                return Ok((StatusCode::ACCEPTED, replayed, Json(answer)).into_response());
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
    /// The platform's own id for it, if given.
    uid: Option<&'a str>,
    channels: &'a [String],
    tags: &'a [String],
    /// When its deliveries were first due, if it was a scheduled send.
    #[schema(format = DateTime)]
    deliver_at: Option<String>,
    /// When its payload was expunged (it reads as `null` since).
    #[schema(format = DateTime)]
    payload_expunged_at: Option<String>,
    /// Sent by hand to try an endpoint (`send-example`).
    test: bool,
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
        .find_event(&t, &id)
        .await?
        .filter(|ev| who.sees_event_type(&ev.event_type))
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
        uid: ev.labels.uid.as_deref(),
        channels: &ev.labels.channels,
        tags: &ev.labels.tags,
        deliver_at: ev.labels.deliver_at_ms.map(rfc3339_ms),
        payload_expunged_at: ev.labels.expunged_at_ms.map(rfc3339_ms),
        test: ev.labels.test,
    };
    raw_json(&view)
}

/// `view` as a JSON answer, serialised by hand so that the raw payload bytes it
/// holds pass through untouched.
pub(super) fn raw_json(view: &impl Serialize) -> Result<Response, ApiError> {
    let body = serde_json::to_vec(view).map_err(|e| ApiError::invalid_json(e.to_string()))?;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response())
}

/// Removes the event's payload for good: it reads as `null` from then on, and a
/// delivery of it replayed later ends `payload_expunged` without a request. The
/// event, its deliveries and their attempt logs stay. Refused (409) while a
/// delivery of it is pending, since that delivery would send it.
#[utoipa::path(delete, path = "/v1/tenants/{t}/events/{id}/payload", tag = "events",
    operation_id = "expunge_event_payload", params(ItemPath),
    responses((status = 204, description = "Expunged (or already)")))]
pub(super) async fn expunge(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EventId)>,
) -> Result<StatusCode, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let ev = ctx
        .store
        .find_event(&t, &id)
        .await?
        .ok_or_else(|| ApiError::not_found("event"))?;
    match ctx
        .store
        .expunge_payload(&t, &ev.id, ctx.clock.now_ms())
        .await?
    {
        Expunge::Expunged => Ok(StatusCode::NO_CONTENT),
        Expunge::Missing => Err(ApiError::not_found("event")),
        Expunge::Pending(n) => Err(ApiError::conflict(format!(
            "{n} deliveries of this event are pending and would send its payload; \
             expunge it once they have ended"
        ))),
    }
}
