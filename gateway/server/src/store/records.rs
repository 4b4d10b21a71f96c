//! What the store keeps, and how each record is encoded.
//!
//! Each value is one version byte followed by JSON. The version byte lets a later
//! schema migrate records in place; JSON keeps the payload's raw bytes verbatim.

use crate::ids::{AttemptId, DeliveryId, EndpointId, EventId, TaskId, TenantId};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::value::RawValue;

use super::{Recorded, StoreError};
use crate::policy::{DeadReason, ErrorKind, VerdictKind};
use crate::signing::{HeaderSet, SignatureSettings};

/// The current record encoding.
const RECORD_VERSION: u8 = 1;

/// Encodes a record: version byte + JSON.
pub(crate) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = vec![RECORD_VERSION];
    // Serialising our own plain structs into a Vec cannot fail.
    serde_json::to_writer(&mut out, value).expect("records serialise");
    out
}

/// Decodes a record written by [`encode`].
///
/// # Errors
/// `Corrupt` for an unknown version byte or bytes that do not parse.
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, StoreError> {
    match bytes.split_first() {
        Some((&RECORD_VERSION, json)) => serde_json::from_slice(json)
            .map_err(|e| StoreError::corrupt(format!("record does not parse: {e}"))),
        Some((v, _)) => Err(StoreError::corrupt(format!("unknown record version {v}"))),
        None => Err(StoreError::corrupt("empty record")),
    }
}

/// A tenant: an isolated set of endpoints, events and plugins.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TenantRecord {
    pub id: TenantId,
    /// SHA-256 of the tenant's current API key, hex; empty once its delete
    /// was accepted.
    pub key_sha256: String,
    pub created_at_ms: u64,
    /// Shown to people; records written before names were kept read as empty,
    /// which views show as the id.
    #[serde(default)]
    pub name: String,
    /// The platform's own identifier for the tenant, accepted wherever its id is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The platform's own strings about the tenant; hookgate never reads them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub metadata: std::collections::BTreeMap<String, String>,
    /// When it last changed (its creation until then).
    #[serde(default)]
    pub updated_at_ms: u64,
    /// The task deleting it, from the moment the delete was accepted: the
    /// tenant takes no more work and is gone to every reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleting: Option<TaskId>,
    /// Who may frame its customers' portal, and how it looks.
    #[serde(default, skip_serializing_if = "super::PortalSettings::is_empty")]
    pub portal: super::PortalSettings,
}

impl TenantRecord {
    /// A new tenant whose key hashes to `key_hash`, named after its id.
    pub(crate) fn new(id: TenantId, key_hash: [u8; 32], now_ms: u64) -> Self {
        Self {
            name: id.to_string(),
            id,
            key_sha256: hex::encode(key_hash),
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            uid: None,
            metadata: std::collections::BTreeMap::new(),
            deleting: None,
            portal: super::PortalSettings::default(),
        }
    }

    /// Whether it is live: its delete has not been accepted.
    pub(crate) fn is_live(&self) -> bool {
        self.deleting.is_none()
    }
}

/// A signing secret and, during a rotation's grace period, when it stops signing.
/// A rotation replaces both keys: the `whsec_` secret and the `whsk_` key
/// stop signing together.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredSecret {
    pub secret: String,
    #[serde(default)]
    pub expires_at_ms: Option<u64>,
    /// The `v1a` ed25519 key (`whsk_`), made when the endpoint first signs
    /// with `v1a` and at each rotation after; absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_key: Option<String>,
}

/// Where an endpoint's circuit breaker stands, as stored and shown on the endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    /// A breaker that never changed since its endpoint was created may be stored
    /// with an empty state: it reads as closed.
    #[default]
    #[serde(alias = "")]
    Closed,
    Open,
    HalfOpen,
}

/// Circuit breaker state as shown on the endpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct BreakerRecord {
    pub state: Recorded<BreakerState>,
    pub open_until_ms: Option<u64>,
    pub trips: u32,
    /// Consecutive failed attempts since the last success.
    #[serde(default)]
    pub failure_streak: u32,
    /// When the current run of failures began (drives `disable_after`).
    #[serde(default)]
    pub failing_since_ms: Option<u64>,
}

/// A tenant's endpoint: where deliveries go, and how they are retried.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndpointRecord {
    pub id: EndpointId,
    pub tenant_id: TenantId,
    /// The normalized URL.
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    /// The policy as the tenant gave it (the policy object of docs/policies.md), if any.
    pub policy: Option<serde_json::Value>,
    pub plugin: Option<String>,
    /// The transform bound (`name` or `name@version`), run before each
    /// attempt is signed. Absent in records made before transforms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<String>,
    pub timeout_ms: u64,
    pub max_in_flight: u32,
    pub rate_limit_per_s: Option<u32>,
    pub disabled: bool,
    pub disabled_reason: Option<String>,
    /// When it was disabled (pending deliveries end `dlq_retention` after).
    #[serde(default)]
    pub disabled_at_ms: Option<u64>,
    /// Newest first; more than one only during a rotation's grace period.
    pub secrets: Vec<StoredSecret>,
    #[serde(default)]
    pub breaker: BreakerRecord,
    /// hookgate's own alert endpoint: exempt from the private-address block and
    /// from the alert rules. Never set through the API.
    #[serde(default)]
    pub trusted: bool,
    /// Unix ms of the last successful delivery (drives `disable_after`).
    #[serde(default)]
    pub last_success_ms: Option<u64>,
    pub created_at_ms: u64,
    /// Unix ms of the last change made through the API; 0 for a record from
    /// before it was kept (read as its creation), and then not written, so
    /// such a record reads back byte for byte.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_at_ms: u64,
    /// Headers sent with every attempt, names in lower case, in name order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<EndpointHeader>,
    /// The platform's own strings about the endpoint; hookgate never reads them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub metadata: std::collections::BTreeMap<String, String>,
    /// The tenant's own identifier for the endpoint, unique within the tenant,
    /// accepted wherever its id is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Channels it listens on: an event with channels reaches it only if they
    /// share one. None: it hears every event its types match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<String>,
    /// The payload filter (docs/payload-filters.md) as the tenant gave it, checked
    /// when it was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<serde_json::Value>,
    /// Signature schemes and header names; absent (the default, `v1` under
    /// `webhook-*`) in records written before the setting existed.
    #[serde(default, skip_serializing_if = "SignatureSettings::is_default")]
    pub signature: SignatureSettings,
    /// A broker destination (docs/destinations.md); none: `http`, to `url`.
    /// Then `url` is the broker's address, without credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) destination: Option<crate::destination::BrokerDestination>,
}

impl EndpointRecord {
    /// Its destination's kind.
    pub fn destination_kind(&self) -> crate::destination::DestinationKind {
        self.destination
            .as_ref()
            .map_or(crate::destination::DestinationKind::Http, |d| d.kind())
    }

    /// A new endpoint of `tenant` signing with `secret`, every other field
    /// empty, for an API create to fill from its input.
    pub(crate) fn blank(tenant: TenantId, secret: &str, now_ms: u64) -> Self {
        Self {
            id: EndpointId::generate(now_ms),
            tenant_id: tenant,
            url: String::new(),
            description: String::new(),
            event_types: Vec::new(),
            policy: None,
            plugin: None,
            transform: None,
            timeout_ms: 0,
            max_in_flight: 0,
            rate_limit_per_s: None,
            disabled: false,
            disabled_reason: None,
            disabled_at_ms: None,
            trusted: false,
            secrets: vec![StoredSecret {
                secret: secret.to_owned(),
                expires_at_ms: None,
                signing_key: None,
            }],
            breaker: BreakerRecord::default(),
            last_success_ms: None,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            headers: Vec::new(),
            metadata: std::collections::BTreeMap::new(),
            uid: None,
            channels: Vec::new(),
            filter: None,
            signature: Default::default(),
            destination: None,
        }
    }
}

/// A header an endpoint's receiver expects on every request (an API key of
/// its own, a routing tag). A sensitive one is sent as stored and shown masked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndpointHeader {
    pub name: String,
    pub value: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sensitive: bool,
}

impl EndpointHeader {
    /// What every view and log shows for a sensitive header's value.
    pub const MASK: &'static str = "********";
}

/// An accepted event, with the exact payload bytes it was given.
#[derive(Debug, Serialize, Deserialize)]
pub struct EventRecord {
    pub id: EventId,
    pub tenant_id: TenantId,
    pub event_type: String,
    pub payload: Box<RawValue>,
    pub created_at_ms: u64,
    /// (delivery id, endpoint id) for each endpoint the event fanned out to.
    pub deliveries: Vec<(DeliveryId, EndpointId)>,
    /// What the platform said of it besides its type and payload (nested, not
    /// flattened: a flattened record could not carry the payload's raw bytes).
    #[serde(default, skip_serializing_if = "EventLabels::is_empty")]
    pub labels: EventLabels,
}

/// What a platform may say of an event besides its type and payload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventLabels {
    /// The platform's own id for the event: a repeat of it within the
    /// idempotency period answers this event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Only endpoints that listen on one of these (or on none) hear it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<String>,
    /// Names to find it by; hookgate routes nothing by them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// When its deliveries were first due, if later than its arrival.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliver_at_ms: Option<u64>,
    /// When its payload was expunged (it reads as `null` since).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expunged_at_ms: Option<u64>,
    /// Sent by hand to try an endpoint (`send-example`), not by the platform.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub test: bool,
    /// The trace its attempts continue (W3C trace context), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceContext>,
}

/// A W3C trace context as it is sent: `traceparent` (checked when it was
/// taken) and the sender's `tracestate`, passed on unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceContext {
    pub traceparent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
}

/// What an attempt sends: the event's payload, and the trace it continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventBody {
    pub payload: String,
    pub trace: Option<TraceContext>,
    /// The event's channels, tags and arrival, when the read that found the
    /// payload had them at hand (an endpoint's transform is told them);
    /// `None` where the payload came without them.
    pub seen: Option<EventSeen>,
}

/// What a transform is told of an event besides its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSeen {
    pub channels: Vec<String>,
    pub tags: Vec<String>,
    pub created_at_ms: u64,
}

impl EventLabels {
    /// Whether it says nothing.
    pub(crate) fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Where a delivery stands. `in_flight` exists only in memory, never here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    Pending,
    Succeeded,
    Dead,
    /// The endpoint's transform skipped the event: nothing was sent.
    Skipped,
}

impl DeliveryState {
    /// The API's name for the state.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Succeeded => "succeeded",
            Self::Dead => "dead",
            Self::Skipped => "skipped",
        }
    }
}

/// One event's delivery to one endpoint, across every attempt and replay series.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeliveryRecord {
    pub id: DeliveryId,
    pub tenant_id: TenantId,
    pub event_id: EventId,
    pub endpoint_id: EndpointId,
    pub event_type: String,
    pub state: DeliveryState,
    /// Replay series, starting at 1.
    pub series: u32,
    /// Attempts made in the current series.
    pub attempts: u32,
    /// Unix ms when the current series made its first attempt.
    pub first_attempt_at_ms: Option<u64>,
    pub next_attempt_at_ms: Option<u64>,
    /// The delay chosen after the last attempt (for decorrelated jitter).
    pub last_delay_ms: Option<u64>,
    pub last_status: Option<u16>,
    pub last_error: Option<Recorded<ErrorKind>>,
    pub dead_reason: Option<Recorded<DeadReason>>,
    pub created_at_ms: u64,
    pub updated_at_ms: u64,
    /// Attempts of the current series that failed inside hookgate (a panic), not
    /// at the receiver: not counted toward `max_attempts` or by the breaker.
    #[serde(default)]
    pub internal_errors: u32,
    /// The ids of its attempts, in order, where the embedded store keeps each
    /// attempt under its endpoint's attempt order rather than under the
    /// delivery (one key per attempt, listed by endpoint and tenant without
    /// an index beside it). Empty on PostgreSQL, whose attempts table is
    /// indexed, and for attempts made before attempts had ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempt_ids: Vec<AttemptId>,
    /// A delivery of a test event (`send-example`); its attempts say so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub test: bool,
}

impl DeliveryRecord {
    /// A new delivery of `event` (of type `event_type`) to `endpoint`: pending,
    /// its first attempt due at `due_ms`.
    pub(crate) fn first(
        event: (&TenantId, &EventId, &str),
        endpoint: &EndpointId,
        due_ms: u64,
        now_ms: u64,
    ) -> Self {
        let (tenant, event_id, event_type) = event;
        Self {
            id: DeliveryId::generate(now_ms),
            tenant_id: tenant.clone(),
            event_id: event_id.clone(),
            endpoint_id: endpoint.clone(),
            event_type: event_type.to_owned(),
            state: DeliveryState::Pending,
            series: 1,
            attempts: 0,
            first_attempt_at_ms: None,
            next_attempt_at_ms: Some(due_ms),
            last_delay_ms: None,
            last_status: None,
            last_error: None,
            dead_reason: None,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            internal_errors: 0,
            attempt_ids: Vec::new(),
            test: false,
        }
    }

    /// Starts a new series of attempts (a replay): pending, due at `now_ms`, with
    /// the last series' outcome cleared.
    pub(crate) fn begin_series(&mut self, now_ms: u64) {
        self.series += 1;
        self.attempts = 0;
        self.state = DeliveryState::Pending;
        self.first_attempt_at_ms = None;
        self.next_attempt_at_ms = Some(now_ms);
        self.last_delay_ms = None;
        self.last_status = None;
        self.last_error = None;
        self.dead_reason = None;
        self.internal_errors = 0;
        self.updated_at_ms = now_ms;
    }

    /// Ends the delivery `dead` with `reason`, with nothing more scheduled.
    pub fn end(&mut self, reason: DeadReason, now_ms: u64) {
        self.state = DeliveryState::Dead;
        self.dead_reason = Some(reason.into());
        self.next_attempt_at_ms = None;
        self.updated_at_ms = now_ms;
    }
}

/// One attempt, as the attempt log shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// Absent in attempts made before attempts had ids: those are in their
    /// delivery's log only, not in attempt lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<AttemptId>,
    /// What it was an attempt of (absent, like `id`, in older attempts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<AttemptOf>,
    /// What its request carried that the rest of the record does not say
    /// (absent in attempts made before it was kept): see
    /// [`AttemptRecord::request_headers`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<SentRequest>,
    pub series: u32,
    pub attempt: u32,
    pub started_at_ms: u64,
    pub duration_ms: u64,
    pub status: Option<u16>,
    pub error_kind: Option<Recorded<ErrorKind>>,
    /// The first 1 KiB of the response body, lossily decoded.
    pub response_snippet: String,
    pub verdict: Recorded<VerdictKind>,
    pub delay_ms: Option<u64>,
    pub next_attempt_at_ms: Option<u64>,
    pub dead_reason: Option<Recorded<DeadReason>>,
    pub decided_by: String,
    /// The policy that chose the delay (`endpoint:svix`, `config:default`, ...).
    #[serde(default)]
    pub policy: String,
    /// The gateway that made the attempt (absent in attempts made before nodes
    /// had ids).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// The attempt reached the receiver after its lease had been given to
    /// another attempt (its node was paused): logged, but its outcome changed
    /// nothing. Absent in records written before late attempts were logged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub late: bool,
    /// What the endpoint's transform did, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<TransformNote>,
}

/// What a transform did in an attempt: which version ran, how long it took,
/// and the body it answered (its hash and size; the body itself is not kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransformNote {
    /// `name@version`, or the binding as given when nothing loaded ran.
    pub plugin: String,
    pub run_us: u64,
    /// Hex SHA-256 of the body sent; absent when nothing was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_bytes: Option<u64>,
    /// The method and path sent, when the transform changed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The content type sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
}

/// The delivery, endpoint and event an attempt was made for: an attempt read
/// by its id alone says where it belongs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptOf {
    pub delivery_id: DeliveryId,
    pub endpoint_id: EndpointId,
    pub event_id: EventId,
    pub event_type: String,
    /// Made for a test event (`send-example`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub test: bool,
}

/// One header of a request as sent. A sensitive endpoint header's value is
/// kept masked: the log never holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentHeader {
    pub name: String,
    pub value: String,
}

/// What an attempt's request carried beyond what its record already says:
/// the signature (every entry), the header names it went under, and the
/// endpoint's own headers (sensitive values masked). The rest of the headers
/// follow from the record, so the log keeps only this: every byte of an
/// attempt record is written on the delivery path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentRequest {
    pub signature: String,
    /// Absent for `webhook-*`, as in records written before header sets.
    #[serde(default, skip_serializing_if = "HeaderSet::is_default")]
    pub header_set: HeaderSet,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<SentHeader>,
}

impl SentRequest {
    /// The `user-agent` every request is sent with.
    pub const USER_AGENT: &'static str = concat!("hookgate/", env!("CARGO_PKG_VERSION"));
    /// The `content-type` every request is sent with.
    pub const CONTENT_TYPE: &'static str = "application/json";
}

impl AttemptRecord {
    /// The request's headers as sent: hookgate's own (the `user-agent` this
    /// build sends), then the endpoint's, sensitive values masked. Empty for
    /// an attempt made before they were kept.
    pub fn request_headers(&self) -> Vec<SentHeader> {
        let (Some(sent), Some(of)) = (&self.sent, &self.of) else {
            return Vec::new();
        };
        let header = |name: &str, value: String| SentHeader {
            name: name.to_owned(),
            value,
        };
        let content_type = self
            .transform
            .as_ref()
            .and_then(|t| t.content_type.clone())
            .unwrap_or_else(|| SentRequest::CONTENT_TYPE.to_owned());
        let mut out = vec![
            header("content-type", content_type),
            header("user-agent", SentRequest::USER_AGENT.to_owned()),
        ];
        for [id, timestamp, signature] in sent.header_set.names() {
            out.push(header(id, of.event_id.to_string()));
            out.push(header(timestamp, (self.started_at_ms / 1000).to_string()));
            out.push(header(signature, sent.signature.clone()));
        }
        out.extend(sent.headers.iter().cloned());
        out
    }
}

/// The first answer to an `Idempotency-Key`, replayed to repeats.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct IdempotencyRecord {
    /// SHA-256 of the request body, hex: a repeat with another body is refused.
    pub body_sha256: String,
    /// What the first request created (the field keeps its old name).
    #[serde(rename = "response")]
    pub receipt: IngestReceipt,
    pub created_at_ms: u64,
}

/// What an ingest created: the event and each delivery with its endpoint. The
/// API answers it; an idempotent repeat gets it again. Kept as JSON under the
/// names the 202 body uses, as earlier releases kept that body itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IngestReceipt {
    #[serde(rename = "id")]
    pub event_id: EventId,
    pub deliveries: Vec<IngestedDelivery>,
}

/// One delivery an ingest created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IngestedDelivery {
    #[serde(rename = "id")]
    pub delivery_id: DeliveryId,
    pub endpoint_id: EndpointId,
}

/// Whether `n` is 0 (a field left out of a record where it is).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_keep_payload_bytes() {
        let payload = r#"{ "b":1,  "a": 123456789012345678901234567890 }"#;
        let ev = EventRecord {
            id: "evt_1".into(),
            tenant_id: "t".into(),
            event_type: "x".into(),
            payload: RawValue::from_string(payload.into()).unwrap(),
            created_at_ms: 5,
            deliveries: vec![("dlv_1".into(), "ep_1".into())],
            labels: EventLabels::default(),
        };
        let back: EventRecord = decode(&encode(&ev)).unwrap();
        assert_eq!(back.payload.get(), payload);
        assert_eq!(back.deliveries, ev.deliveries);
        let labelled = EventRecord {
            labels: EventLabels {
                uid: Some("order-1".into()),
                channels: vec!["eu".into()],
                tags: vec!["t".into()],
                deliver_at_ms: Some(9),
                expunged_at_ms: None,
                test: false,
                trace: Some(TraceContext {
                    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into(),
                    tracestate: Some("congo=t61rcWkgMzE".into()),
                }),
            },
            ..ev
        };
        let back: EventRecord = decode(&encode(&labelled)).unwrap();
        assert_eq!(
            (back.payload.get(), back.labels),
            (payload, labelled.labels)
        );
    }

    #[test]
    fn breaker_states_keep_their_stored_names() {
        for (state, name) in [
            (BreakerState::Closed, "closed"),
            (BreakerState::Open, "open"),
            (BreakerState::HalfOpen, "half_open"),
        ] {
            let json = serde_json::to_value(state).unwrap();
            assert_eq!(json, serde_json::Value::from(name));
            assert_eq!(serde_json::from_value::<BreakerState>(json).unwrap(), state);
        }
        let never_changed: BreakerState = serde_json::from_str("\"\"").unwrap();
        assert_eq!(never_changed, BreakerState::Closed);
    }

    /// An attempt's log names the header set it was sent under and keeps the
    /// whole signature; an attempt written before header sets reads as
    /// `webhook-*`, and the default set adds no byte to the record.
    #[test]
    fn sent_requests_rebuild_the_header_names_used() {
        // From JSON, as stored: fields added to the record later take their defaults.
        let of = serde_json::json!({
            "delivery_id": "dlv_1", "endpoint_id": "ep_1", "event_id": "evt_1", "event_type": "x",
        });
        let old: SentRequest = serde_json::from_str(r#"{"signature":"v1,a="}"#).unwrap();
        assert_eq!(old.header_set, HeaderSet::Webhook);
        assert_eq!(
            serde_json::to_string(&old).unwrap(),
            r#"{"signature":"v1,a="}"#
        );
        let both = SentRequest {
            signature: "v1,a= v1a,b==".into(),
            header_set: HeaderSet::Both,
            headers: Vec::new(),
        };
        let json = serde_json::to_string(&both).unwrap();
        assert_eq!(json, r#"{"signature":"v1,a= v1a,b==","header_set":"both"}"#);
        let attempt: AttemptRecord = serde_json::from_value(serde_json::json!({
            "of": of, "sent": both, "series": 1, "attempt": 1, "started_at_ms": 9_000,
            "duration_ms": 1, "status": 200, "error_kind": null, "response_snippet": "",
            "verdict": "delivered", "delay_ms": null, "next_attempt_at_ms": null,
            "dead_reason": null, "decided_by": "policy",
        }))
        .unwrap();
        let names: Vec<(String, String)> = attempt
            .request_headers()
            .into_iter()
            .map(|h| (h.name, h.value))
            .skip(2)
            .collect();
        let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        assert_eq!(
            names,
            [
                pair("webhook-id", "evt_1"),
                pair("webhook-timestamp", "9"),
                pair("webhook-signature", "v1,a= v1a,b=="),
                pair("svix-id", "evt_1"),
                pair("svix-timestamp", "9"),
                pair("svix-signature", "v1,a= v1a,b=="),
            ]
        );
    }

    #[test]
    fn unknown_versions_are_refused() {
        for bytes in [&b"\x07{}"[..], b""] {
            let e = decode::<TenantRecord>(bytes).unwrap_err();
            assert_eq!(e.failure(), crate::store::Failure::Corrupt, "{e}");
        }
    }
}
