//! The Svix face's bodies as its OpenAPI document describes them, in Svix's
//! names (`ApplicationIn`, `EndpointOut`, ...). The handlers read and build
//! JSON maps (a Svix body is read field by field, to refuse what hookgate
//! cannot honour by name), so these types are described only, never built;
//! Schemathesis checks every answer against them.

#![allow(
    dead_code,
    reason = "described only; the handlers read and build JSON maps"
)]

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::api::endpoint_schema::{MetadataSchema, PayloadFilterSchema};
use crate::api::endpoint_signature::SignatureInput;
use crate::policy::PolicySpec;

/// Svix's list page: `iterator` continues it, `done` says it is the last.
#[derive(Serialize, ToSchema)]
#[schema(bound = "T: ToSchema")]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListResponse<T> {
    data: Vec<T>,
    /// Pass as `iterator` for the next page; `null` on the last.
    iterator: Option<String>,
    /// Where the list reads both ways, the iterator of the page before.
    prev_iterator: Option<String>,
    done: bool,
}

/// An error: a stable `code` and a `detail` for people.
#[derive(Serialize, ToSchema)]
pub(crate) struct HttpErrorOut {
    code: String,
    detail: String,
}

/// A refused field or parameter.
#[derive(Serialize, ToSchema)]
pub(crate) struct ValidationError {
    /// Where: `["body", "url"]`, `["query", "limit"]`.
    loc: Vec<String>,
    msg: String,
    /// Always `value_error`.
    #[serde(rename = "type")]
    kind: String,
}

/// 422: what was refused, and where.
#[derive(Serialize, ToSchema)]
#[schema(as = HTTPValidationError)]
pub(crate) struct HttpValidationError {
    detail: Vec<ValidationError>,
}

/// An answer with nothing to say.
#[derive(Serialize, ToSchema)]
pub(crate) struct EmptyResponse {}

/// An application: a hookgate tenant.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApplicationIn {
    /// Shown to people, 1 to 256 characters.
    #[schema(
        min_length = 1,
        max_length = 256,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$"
    )]
    name: String,
    /// The platform's own identifier; names the application in paths.
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,256}$")]
    uid: Option<String>,
    #[schema(value_type = Option<MetadataSchema>)]
    metadata: Option<Value>,
    /// hookgate has no rate per application: only `null` is taken (set
    /// `throttleRate` on its endpoints).
    #[schema(value_type = AlwaysNull, required = false)]
    throttle_rate: Option<Value>,
}

/// The fields of an application to change; those left out stay.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApplicationPatch {
    #[schema(
        min_length = 1,
        max_length = 256,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$"
    )]
    name: Option<String>,
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,256}$")]
    uid: Option<String>,
    #[schema(value_type = Option<MetadataSchema>)]
    metadata: Option<Value>,
    /// As in `ApplicationIn`: only `null` (set `throttleRate` on its endpoints).
    #[schema(value_type = AlwaysNull, required = false)]
    throttle_rate: Option<Value>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApplicationOut {
    /// `app_…` when made through this API; the tenant's id.
    id: String,
    uid: Option<String>,
    name: String,
    metadata: BTreeMap<String, String>,
    /// Always `null`: endpoints carry the rate.
    #[schema(value_type = AlwaysNull)]
    throttle_rate: Option<Value>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

/// hookgate's own endpoint fields, as API v1 names and checks them; any
/// other is refused by name (`hookgate.<name>`).
#[derive(Serialize, ToSchema)]
pub(crate) struct HookgateEndpointIn {
    /// The retry policy, laid over the operator's default.
    #[schema(value_type = Option<PolicySpec>)]
    policy: Option<Value>,
    /// A plugin of the tenant that decides retries before the policy.
    plugin: Option<String>,
    #[schema(minimum = 100, maximum = 300_000)]
    timeout_ms: Option<u64>,
    #[schema(minimum = 1, maximum = 128)]
    max_in_flight: Option<u32>,
    /// A payload filter (docs/payload-filters.md).
    #[schema(value_type = Option<PayloadFilterSchema>)]
    filter: Option<Value>,
    /// Signature schemes and header names; `v1` under both `svix-*` and
    /// `webhook-*` for an endpoint made here.
    signature: Option<SignatureInput>,
    /// Headers whose values are secrets.
    sensitive_headers: Option<Vec<String>>,
}

/// An endpoint to create, or (`PUT`) its whole new state.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointIn {
    /// `http` or `https`; a private address only where the operator allows.
    #[schema(pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#@]+([/?#]\S*)?$")]
    url: String,
    description: Option<String>,
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,256}$")]
    uid: Option<String>,
    disabled: Option<bool>,
    /// Event types (or patterns) it receives; `null`, `[]` or left out:
    /// every type.
    filter_types: Option<Vec<String>>,
    /// The older name of `filterTypes`.
    event_types: Option<Vec<String>>,
    /// At most 10.
    #[schema(max_items = 10)]
    channels: Option<Vec<String>>,
    #[schema(value_type = Option<MetadataSchema>)]
    metadata: Option<Value>,
    /// Attempts started per second at most.
    #[schema(minimum = 1)]
    throttle_rate: Option<u32>,
    /// The older name of `throttleRate`.
    #[schema(minimum = 1)]
    rate_limit: Option<u32>,
    /// Custom headers sent with every attempt.
    headers: Option<BTreeMap<String, String>>,
    /// `whsec_` and the base64 of 24 to 64 bytes; generated when absent.
    secret: Option<String>,
    hookgate: Option<HookgateEndpointIn>,
}

/// The fields of an endpoint to change; `null` resets one.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointPatch {
    #[schema(pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#@]+([/?#]\S*)?$")]
    url: Option<String>,
    description: Option<String>,
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,256}$")]
    uid: Option<String>,
    disabled: Option<bool>,
    filter_types: Option<Vec<String>>,
    event_types: Option<Vec<String>>,
    #[schema(max_items = 10)]
    channels: Option<Vec<String>>,
    #[schema(value_type = Option<MetadataSchema>)]
    metadata: Option<Value>,
    #[schema(minimum = 1)]
    throttle_rate: Option<u32>,
    #[schema(minimum = 1)]
    rate_limit: Option<u32>,
    hookgate: Option<HookgateEndpointIn>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointOut {
    /// `ep_…`.
    id: String,
    uid: Option<String>,
    url: String,
    description: Option<String>,
    /// Always 1.
    version: u32,
    disabled: bool,
    throttle_rate: Option<u32>,
    rate_limit: Option<u32>,
    /// `null`: every type.
    event_types: Option<Vec<String>>,
    filter_types: Option<Vec<String>>,
    channels: Option<Vec<String>>,
    metadata: BTreeMap<String, String>,
    created_at: Timestamp,
    updated_at: Timestamp,
    /// hookgate's own fields as API v1 shows them (policy, plugin, limits,
    /// filter, signature, breaker, effective policy).
    hookgate: BTreeMap<String, Value>,
}

/// Custom headers: `PUT` replaces them all.
#[derive(Serialize, ToSchema)]
pub(crate) struct EndpointHeadersIn {
    headers: BTreeMap<String, String>,
}

/// Custom headers to merge: a `null` value, or a name in `deleteHeaders`,
/// removes one.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointHeadersPatchIn {
    headers: BTreeMap<String, Option<String>>,
    delete_headers: Option<Vec<String>>,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct EndpointHeadersOut {
    /// The headers whose values may be shown.
    headers: BTreeMap<String, String>,
    /// The names of those whose values are secret.
    sensitive: Vec<String>,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct EndpointSecretOut {
    /// `whsec_…`: the newest signing secret.
    key: String,
}

/// A new secret, or one generated when `key` is left out.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointSecretRotateIn {
    /// `whsec_` and the padded base64 of 24 to 64 bytes.
    #[schema(
        pattern = r"^(?:whsec_)?(?:(?:[A-Za-z0-9+/]{4}){8,20}(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?|(?:[A-Za-z0-9+/]{4}){21}(?:[A-Za-z0-9+/][AQgw]==)?)$"
    )]
    key: Option<String>,
}

/// Recover (or replay) from `since`, up to `until` or now.
#[derive(Serialize, ToSchema)]
pub(crate) struct RecoverIn {
    since: Timestamp,
    until: Option<Timestamp>,
}

/// The task the request started.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecoverOut {
    /// `task_…`.
    id: String,
    /// `running`, `finished` or `failed`.
    status: String,
    /// `endpoint.recover` or `endpoint.replay`.
    task: String,
    updated_at: Option<Timestamp>,
}

/// The catalog type whose example to send.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventExampleIn {
    #[schema(pattern = r"^[A-Za-z0-9._:-]+$", max_length = 256)]
    event_type: String,
}

/// Delivered and failed attempts over the range, deliveries pending now.
#[derive(Serialize, ToSchema)]
pub(crate) struct EndpointStats {
    success: u64,
    fail: u64,
    pending: u64,
    /// hookgate has no such state: 0.
    sending: u64,
    /// hookgate has no such state: 0.
    canceled: u64,
}

/// A message: a hookgate event.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageIn {
    #[schema(pattern = r"^[A-Za-z0-9._:-]+$", max_length = 256)]
    event_type: String,
    /// A JSON object.
    payload: BTreeMap<String, Value>,
    /// The event's uid: a repeat is a 409.
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,256}$")]
    event_id: Option<String>,
    #[schema(max_items = 10)]
    channels: Option<Vec<String>>,
    tags: Option<Vec<String>>,
    /// Up to 30 days ahead.
    deliver_at: Option<Timestamp>,
    /// The application to create when the path names none yet.
    application: Option<ApplicationIn>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageOut {
    /// `evt_…`.
    id: String,
    event_type: String,
    /// `{}` without content, or once expunged. A message made through this
    /// face has an object; one ingested through API v1 may hold any JSON value.
    payload: Value,
    event_id: Option<String>,
    channels: Option<Vec<String>>,
    tags: Option<Vec<String>>,
    timestamp: Timestamp,
    deliver_at: Option<Timestamp>,
}

/// A message sent to an endpoint, with its delivery's status there.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointMessageOut {
    id: String,
    event_type: String,
    /// As in `MessageOut`.
    payload: Value,
    event_id: Option<String>,
    channels: Option<Vec<String>>,
    tags: Option<Vec<String>>,
    timestamp: Timestamp,
    deliver_at: Option<Timestamp>,
    /// 0 success, 1 pending, 2 fail, 3 sending.
    #[schema(minimum = 0, maximum = 3)]
    status: u8,
    status_text: MessageStatusText,
    next_attempt: Option<Timestamp>,
}

/// An endpoint a message went to, with the status of its delivery there.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageEndpointOut {
    id: String,
    uid: Option<String>,
    url: String,
    description: Option<String>,
    disabled: bool,
    throttle_rate: Option<u32>,
    event_types: Option<Vec<String>>,
    channels: Option<Vec<String>>,
    created_at: Timestamp,
    updated_at: Timestamp,
    /// 0 success, 1 pending, 2 fail, 3 sending.
    #[schema(minimum = 0, maximum = 3)]
    status: u8,
    status_text: MessageStatusText,
    next_attempt: Option<Timestamp>,
}

/// `status` in words.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MessageStatusText {
    Success,
    Pending,
    Fail,
    Sending,
}

/// One attempt to send a message to an endpoint.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageAttemptOut {
    /// `atm_…`.
    id: String,
    msg_id: String,
    endpoint_id: String,
    url: String,
    /// The first KiB of the answer, `""` without content.
    response: String,
    /// 0 when no answer came.
    response_status_code: u16,
    response_duration_ms: u64,
    /// 0 success, 2 fail.
    #[schema(minimum = 0, maximum = 3)]
    status: u8,
    status_text: MessageStatusText,
    /// 0 scheduled, 1 manual (a replay).
    #[schema(minimum = 0, maximum = 1)]
    trigger_type: u8,
    timestamp: Timestamp,
    /// The message, with `with_msg=true`.
    msg: Option<MessageOut>,
}

/// A catalog event type.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventTypeIn {
    /// Letters, digits and `. _ - :`: `invoice.paid`.
    #[schema(pattern = r"^[A-Za-z0-9._:-]+$", max_length = 256)]
    name: String,
    description: String,
    archived: Option<bool>,
    deprecated: Option<bool>,
    /// JSON Schemas by version (`"1"`, `"2"`, ...).
    schemas: Option<BTreeMap<String, Value>>,
    group_name: Option<String>,
}

/// The whole new state of a type (`PUT`), or a new one.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventTypeUpdate {
    description: String,
    archived: Option<bool>,
    deprecated: Option<bool>,
    schemas: Option<BTreeMap<String, Value>>,
    group_name: Option<String>,
}

/// The fields of a type to change; `schemas` replaces them whole.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventTypePatch {
    description: Option<String>,
    archived: Option<bool>,
    deprecated: Option<bool>,
    schemas: Option<BTreeMap<String, Value>>,
    group_name: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventTypeOut {
    name: String,
    description: String,
    archived: bool,
    deprecated: bool,
    /// With content only.
    schemas: Option<BTreeMap<String, Value>>,
    group_name: Option<String>,
    /// hookgate has no feature flags: `null`.
    #[schema(value_type = AlwaysNull)]
    feature_flag: Option<Value>,
    #[schema(value_type = AlwaysNull)]
    feature_flags: Option<Value>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

/// A portal session for the application's customer.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AppPortalAccessIn {
    /// `ViewBase`, `ViewEndpointSecret`, `ManageEndpointSecret`,
    /// `ManageEndpoint`, `CreateAttempts`; all of them when left out.
    capabilities: Option<Vec<PortalCapability>>,
    /// Only what `ViewBase` allows.
    read_only: Option<bool>,
    /// Seconds, 3600 to 604800; 604800 when left out.
    #[schema(minimum = 3600, maximum = 604_800)]
    expiry: Option<u64>,
    /// The application to create when the path names none yet.
    application: Option<ApplicationIn>,
}

/// Svix's portal capabilities hookgate maps onto its own.
#[derive(Serialize, ToSchema)]
pub(crate) enum PortalCapability {
    ViewBase,
    ViewEndpointSecret,
    ManageEndpointSecret,
    ManageEndpoint,
    CreateAttempts,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct AppPortalAccessOut {
    /// The console, signed in from the URL's fragment.
    url: String,
    /// `hgp_…`: the session's token, for the API too.
    token: String,
}

/// Ends every portal session of the application now.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApplicationTokenExpireIn {
    /// Only `null` or 0: the sessions end at once.
    #[schema(minimum = 0, maximum = 0)]
    expiry: Option<u64>,
    /// Only empty: every session ends together.
    #[schema(max_items = 0)]
    session_ids: Option<Vec<String>>,
}

/// An RFC 3339 time in UTC, to the millisecond, as Svix writes times.
#[derive(Serialize, ToSchema)]
#[schema(value_type = String, format = DateTime)]
pub(crate) struct Timestamp(String);

/// Always `null`: a Svix field hookgate has nothing for.
pub(crate) enum AlwaysNull {}

impl utoipa::PartialSchema for AlwaysNull {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new().schema_type(Type::Null).into()
    }
}

impl ToSchema for AlwaysNull {}
