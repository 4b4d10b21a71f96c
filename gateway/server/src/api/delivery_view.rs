//! How deliveries look in the API: a delivery (in lists, events and replays), one
//! delivery with its attempt log, and one attempt.
//!
//! Fields are declared in alphabetical order: the `json!` bodies these replaced
//! serialised that way (serde_json without `preserve_order`), and clients may
//! compare bytes. A field that has no value is `null`, never left out.

use serde::Serialize;

use super::openapi::DeliveryStateName;
use crate::clock::rfc3339_ms;
use crate::policy::{DeadReason, ErrorKind, VerdictKind};
use crate::store::{AttemptRecord, DeliveryRecord, Recorded, TransformNote};

/// A delivery as events, lists and replays show it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(super) struct DeliveryView {
    attempts: u32,
    #[schema(format = DateTime)]
    created_at: String,
    /// One of the names of [`DeadReason`]; a name written by another build is shown as it is.
    #[schema(value_type = Option<String>)]
    dead_reason: Option<Recorded<DeadReason>>,
    endpoint_id: String,
    event_id: String,
    event_type: String,
    id: String,
    /// One of the names of [`ErrorKind`]; a name written by another build is shown as it is.
    #[schema(value_type = Option<String>)]
    last_error: Option<Recorded<ErrorKind>>,
    last_status: Option<u16>,
    /// From its endpoint's current policy; `null` once the endpoint is gone.
    max_attempts: Option<u32>,
    #[schema(format = DateTime)]
    next_attempt_at: Option<String>,
    series: u32,
    #[schema(value_type = DeliveryStateName)]
    state: &'static str,
    #[schema(format = DateTime)]
    updated_at: String,
}

impl DeliveryView {
    /// The view of `d`; what depends on the endpoint or the engine is given.
    pub(super) fn new(
        d: &DeliveryRecord,
        state: &'static str,
        max_attempts: Option<u32>,
        next_attempt_at_ms: Option<u64>,
    ) -> Self {
        Self {
            attempts: d.attempts,
            created_at: rfc3339_ms(d.created_at_ms),
            dead_reason: d.dead_reason.clone(),
            endpoint_id: d.endpoint_id.to_string(),
            event_id: d.event_id.to_string(),
            event_type: d.event_type.clone(),
            id: d.id.to_string(),
            last_error: d.last_error.clone(),
            last_status: d.last_status,
            max_attempts,
            next_attempt_at: next_attempt_at_ms.map(rfc3339_ms),
            series: d.series,
            state,
            updated_at: rfc3339_ms(d.updated_at_ms),
        }
    }
}

/// One delivery with every attempt of every series, oldest first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct DeliveryDetail {
    // First: `attempt_log` sorts before `attempts`.
    pub(super) attempt_log: Vec<AttemptView>,
    #[serde(flatten)]
    pub(super) delivery: DeliveryView,
}

/// One attempt in a delivery's attempt log.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct AttemptView {
    attempt: u32,
    /// One of the names of [`DeadReason`]; a name written by another build is shown as it is.
    #[schema(value_type = Option<String>)]
    dead_reason: Option<Recorded<DeadReason>>,
    decided_by: String,
    delay_ms: Option<u64>,
    duration_ms: u64,
    /// One of the names of [`ErrorKind`]; a name written by another build is shown as it is.
    #[schema(value_type = Option<String>)]
    error_kind: Option<Recorded<ErrorKind>>,
    /// `atm_…`; `null` for attempts made before attempts had ids.
    id: Option<String>,
    /// The attempt's lease had passed to another attempt when its outcome
    /// came (its gateway was paused): it reached the receiver, but its outcome
    /// changed nothing.
    late: bool,
    #[schema(format = DateTime)]
    next_attempt_at: Option<String>,
    /// The gateway that made the attempt (absent for attempts made before
    /// gateways had ids).
    node_id: Option<String>,
    /// How the attempt ended its turn: `delivered`, `retry` (another attempt
    /// was scheduled), `dead`, or `skipped` (its transform sent nothing).
    #[schema(pattern = "^(delivered|retry|dead|skipped)$")]
    outcome: &'static str,
    /// The policy that chose the delay (`endpoint:svix`, `config:default`, ...).
    policy: String,
    /// The request's headers as sent, signatures included; the values of the
    /// endpoint's sensitive headers are masked. Empty for attempts made
    /// before they were kept.
    request_headers: Vec<SentHeaderView>,
    response_snippet: String,
    series: u32,
    #[schema(format = DateTime)]
    started_at: String,
    status: Option<u16>,
    /// Made for a test event (`send-example`), not the platform's.
    test: bool,
    /// What the endpoint's transform did, when one ran.
    transform: Option<TransformNoteView>,
    /// One of the names of [`VerdictKind`]; a name written by another build is shown as it is.
    #[schema(value_type = String)]
    verdict: Recorded<VerdictKind>,
}

/// What an endpoint's transform did in an attempt: the version that ran, its
/// run time, and what was sent (all `null` when nothing was: a skip or a
/// failure). The body itself is not kept; its hash and size are.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct TransformNoteView {
    body_bytes: Option<u64>,
    /// Hex SHA-256 of the body sent.
    body_sha256: Option<String>,
    content_type: Option<String>,
    method: Option<String>,
    /// The path and query sent.
    path: Option<String>,
    /// `name@version`.
    plugin: String,
    run_us: u64,
}

impl From<&TransformNote> for TransformNoteView {
    fn from(t: &TransformNote) -> Self {
        Self {
            body_bytes: t.body_bytes,
            body_sha256: t.body_sha256.clone(),
            content_type: t.content_type.clone(),
            method: t.method.clone(),
            path: t.path.clone(),
            plugin: t.plugin.clone(),
            run_us: t.run_us,
        }
    }
}

/// One header of a request as sent.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct SentHeaderView {
    name: String,
    value: String,
}

impl From<&AttemptRecord> for AttemptView {
    fn from(a: &AttemptRecord) -> Self {
        Self {
            attempt: a.attempt,
            dead_reason: a.dead_reason.clone(),
            decided_by: a.decided_by.clone(),
            delay_ms: a.delay_ms,
            duration_ms: a.duration_ms,
            error_kind: a.error_kind.clone(),
            id: a.id.as_ref().map(ToString::to_string),
            late: a.late,
            next_attempt_at: a.next_attempt_at_ms.map(rfc3339_ms),
            node_id: a.node_id.clone(),
            outcome: a.outcome().as_str(),
            policy: a.policy.clone(),
            request_headers: a
                .request_headers()
                .into_iter()
                .map(|h| SentHeaderView {
                    name: h.name,
                    value: h.value,
                })
                .collect(),
            response_snippet: a.response_snippet.clone(),
            series: a.series,
            started_at: rfc3339_ms(a.started_at_ms),
            status: a.status,
            test: a.of.as_ref().is_some_and(|o| o.test),
            transform: a.transform.as_ref().map(TransformNoteView::from),
            verdict: a.verdict.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
