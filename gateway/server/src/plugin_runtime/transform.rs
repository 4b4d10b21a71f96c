//! Transforms in the host's words: what the delivery worker tells one
//! ([`TransformFacts`]), what it may answer once checked ([`Transformed`]), and
//! why a run gave nothing to send ([`TransformFailure`]).
//!
//! A transform's answer is checked here, never trusted: the method is one of
//! four and a `GET` has no body; the path stays on the endpoint's host and
//! under its path; headers are valid, not hookgate's own, and bounded; the body
//! is at most [`MAX_BODY_BYTES`]. Anything else ends the attempt as
//! `transform_failed`: the untransformed payload is never sent instead.

use std::collections::BTreeMap;

use super::bindings::{TransformAnswer, TransformInput, t0_1};
use super::chain::CallFailure;
use super::engine::Reshape;
use super::registry::LoadedPlugin;
use crate::destination::DestinationKind;

use t0_1::exports::hookgate::transform::transform as wit;

/// The largest body a transform may answer.
pub(crate) const MAX_BODY_BYTES: usize = 1 << 20;
/// The most headers a transform may answer.
pub(crate) const MAX_HEADERS: usize = 64;
/// The longest header value a transform may answer, in bytes.
const MAX_HEADER_VALUE: usize = 8 * 1024;
/// The longest path and query a transform may answer, in bytes.
const MAX_PATH: usize = 2048;
/// The longest skip reason kept, in bytes (longer ones are cut).
pub(crate) const MAX_SKIP_REASON: usize = 1024;

/// Headers hookgate sets itself, which an answer may not: the signature's
/// (both header sets), the body's framing, the trace, and hop-by-hop ones.
const RESERVED_HEADERS: [&str; 19] = [
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "svix-id",
    "svix-timestamp",
    "svix-signature",
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
    "user-agent",
    "traceparent",
    "tracestate",
];

/// The HTTP methods a transform may choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransformMethod {
    Post,
    Put,
    Patch,
    Get,
}

impl TransformMethod {
    /// The method as HTTP spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Get => "GET",
        }
    }
}

/// A request as a transform sees and answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransformRequest {
    pub method: TransformMethod,
    /// The path and query, e.g. `/hooks?team=7`.
    pub path: String,
    /// Names in lower case; never the signature headers.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub content_type: String,
}

/// What the worker tells a transform about one attempt.
#[derive(Debug, Clone)]
pub struct TransformFacts<'a> {
    pub event_id: &'a str,
    pub event_type: &'a str,
    pub timestamp_ms: u64,
    pub payload: &'a [u8],
    pub channels: &'a [String],
    pub tags: &'a [String],
    pub endpoint_id: &'a str,
    pub endpoint_uid: Option<&'a str>,
    pub metadata: &'a BTreeMap<String, String>,
    pub destination: DestinationKind,
    /// What hookgate would send without the transform.
    pub request: TransformRequest,
}

/// A checked answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transformed {
    /// Send this instead (hookgate signs it).
    Send(TransformRequest),
    /// Send nothing; the reason, at most [`MAX_SKIP_REASON`] bytes.
    Skip(String),
}

/// Why a transform gave nothing to send.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransformFailure {
    /// The binding names no loaded plugin.
    #[error("transform {0:?} is not loaded")]
    NotLoaded(String),
    /// The binding names a retry policy.
    #[error("plugin {0:?} is a retry policy, not a transform")]
    NotATransform(String),
    /// Disabled after failing too often in a row.
    #[error("transform {0} is disabled after repeated failures")]
    Disabled(String),
    /// It trapped, overran its fuel, memory or time, or could not run;
    /// `reason` is the short name (`trap`, `out_of_fuel`, ...).
    #[error("transform {label} failed ({reason}): {detail}")]
    Failed {
        label: String,
        reason: &'static str,
        detail: String,
    },
    /// It answered something the host refuses.
    #[error("transform {label} answered an invalid request: {why}")]
    Invalid { label: String, why: String },
}

impl TransformFacts<'_> {
    /// The WIT input record.
    pub(crate) fn input(&self) -> TransformInput {
        TransformInput {
            event: wit::Event {
                id: self.event_id.to_owned(),
                event_type: self.event_type.to_owned(),
                timestamp_ms: self.timestamp_ms,
                payload: self.payload.to_vec(),
                channels: self.channels.to_vec(),
                tags: self.tags.to_vec(),
            },
            endpoint: wit::Endpoint {
                id: self.endpoint_id.to_owned(),
                uid: self.endpoint_uid.map(str::to_owned),
                metadata: self
                    .metadata
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                destination: wit_destination(self.destination),
            },
            request: wit_request(&self.request),
        }
    }
}

fn wit_destination(kind: DestinationKind) -> wit::DestinationKind {
    match kind {
        DestinationKind::Http => wit::DestinationKind::Http,
        DestinationKind::Rabbitmq => wit::DestinationKind::Rabbitmq,
        DestinationKind::Nats => wit::DestinationKind::Nats,
        DestinationKind::Redis => wit::DestinationKind::Redis,
        DestinationKind::Sqs => wit::DestinationKind::Sqs,
        DestinationKind::Sns => wit::DestinationKind::Sns,
        DestinationKind::Kinesis => wit::DestinationKind::Kinesis,
    }
}

fn wit_request(r: &TransformRequest) -> wit::Request {
    wit::Request {
        method: match r.method {
            TransformMethod::Post => wit::Method::Post,
            TransformMethod::Put => wit::Method::Put,
            TransformMethod::Patch => wit::Method::Patch,
            TransformMethod::Get => wit::Method::Get,
        },
        path: r.path.clone(),
        headers: r
            .headers
            .iter()
            .map(|(name, value)| wit::Header {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        body: r.body.clone(),
        content_type: r.content_type.clone(),
    }
}

/// One transform run: which version ran, what it answered (checked), and how
/// long it took.
#[derive(Debug, Clone)]
pub struct TransformRun {
    /// `name@version`, when a loaded transform was found.
    pub label: Option<String>,
    pub result: Result<Transformed, TransformFailure>,
    /// The run's wall time, in µs.
    pub run_us: u64,
}

impl TransformFailure {
    /// The failure as the plugin's health counts it: `None` for what is not
    /// the plugin's doing (not loaded, disabled, the pool full).
    pub(crate) fn of_call(label: &str, failure: &CallFailure) -> Self {
        Self::Failed {
            label: label.to_owned(),
            reason: failure.reason(),
            detail: failure.to_string(),
        }
    }
}

/// The call that asks `plugin` to transform `facts`, or why it cannot be asked.
pub(crate) fn reshape_for(
    plugin: &LoadedPlugin,
    facts: &TransformFacts<'_>,
) -> Result<Reshape, TransformFailure> {
    if plugin.pre.version().kind() != super::PluginKind::Transform {
        return Err(TransformFailure::NotATransform(plugin.name.clone()));
    }
    if plugin.health.is_disabled() {
        return Err(TransformFailure::Disabled(transform_label(plugin)));
    }
    Ok(Reshape(facts.input()))
}

/// `name@version`.
pub(crate) fn transform_label(plugin: &LoadedPlugin) -> String {
    format!("{}@{}", plugin.name, plugin.version)
}

/// Checks `answer` for an endpoint at `endpoint_url`.
///
/// # Errors
/// Why the answer is refused, in a sentence.
pub(crate) fn check_answer(
    answer: TransformAnswer,
    endpoint_url: &url::Url,
) -> Result<Transformed, String> {
    let request = match answer {
        TransformAnswer::Skip(reason) => {
            let cut = reason.floor_char_boundary(MAX_SKIP_REASON);
            return Ok(Transformed::Skip(reason[..cut].to_owned()));
        }
        TransformAnswer::Send(request) => request,
    };
    let method = match request.method {
        wit::Method::Post => TransformMethod::Post,
        wit::Method::Put => TransformMethod::Put,
        wit::Method::Patch => TransformMethod::Patch,
        wit::Method::Get => TransformMethod::Get,
    };
    if method == TransformMethod::Get && !request.body.is_empty() {
        return Err(format!(
            "a GET carries no body, and it answered {} bytes",
            request.body.len()
        ));
    }
    if request.body.len() > MAX_BODY_BYTES {
        return Err(format!(
            "the body is {} bytes; the limit is {MAX_BODY_BYTES}",
            request.body.len()
        ));
    }
    check_path(&request.path, endpoint_url)?;
    if request.content_type.is_empty() || request.content_type.len() > 256 {
        return Err("content-type must be 1 to 256 bytes".into());
    }
    if http::HeaderValue::from_str(&request.content_type).is_err() {
        return Err(format!(
            "content-type {:?} is not a valid header value",
            request.content_type
        ));
    }
    let headers = check_headers(request.headers)?;
    Ok(Transformed::Send(TransformRequest {
        method,
        path: request.path,
        headers,
        body: request.body,
        content_type: request.content_type,
    }))
}

/// The path must stay on the endpoint's scheme, host and port, and under its
/// path once `.` and `..` are resolved.
fn check_path(path: &str, endpoint_url: &url::Url) -> Result<(), String> {
    if !path.starts_with('/') || path.starts_with("//") {
        return Err(format!("path {path:?} must begin with a single /"));
    }
    if path.len() > MAX_PATH {
        return Err(format!(
            "the path is {} bytes; the limit is {MAX_PATH}",
            path.len()
        ));
    }
    if path.contains('#')
        || path
            .chars()
            .any(|c| c.is_control() || c == ' ' || c == '\\')
    {
        return Err(format!(
            "path {path:?} holds a fragment, a space, a backslash or a control character"
        ));
    }
    let joined = endpoint_url
        .join(path)
        .map_err(|e| format!("path {path:?} does not make a URL: {e}"))?;
    let same_origin = joined.scheme() == endpoint_url.scheme()
        && joined.host() == endpoint_url.host()
        && joined.port_or_known_default() == endpoint_url.port_or_known_default();
    let base = endpoint_url.path();
    let under = joined.path() == base
        || joined.path().starts_with(base)
            && (base.ends_with('/') || joined.path()[base.len()..].starts_with('/'));
    if !same_origin || !under {
        return Err(format!(
            "path {path:?} leaves the endpoint's path {base:?} (it resolves to {:?})",
            joined.path()
        ));
    }
    Ok(())
}

/// Headers with valid names and values, none of hookgate's own, within the
/// limits; names lower-cased.
fn check_headers(headers: Vec<wit::Header>) -> Result<Vec<(String, String)>, String> {
    if headers.len() > MAX_HEADERS {
        return Err(format!(
            "it answered {} headers; the limit is {MAX_HEADERS}",
            headers.len()
        ));
    }
    let mut out = Vec::with_capacity(headers.len());
    for h in headers {
        let name = http::HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|_| format!("header name {:?} is not valid", h.name))?;
        if RESERVED_HEADERS.contains(&name.as_str()) {
            return Err(format!("header {:?} is hookgate's to set", name.as_str()));
        }
        if h.value.len() > MAX_HEADER_VALUE || http::HeaderValue::from_str(&h.value).is_err() {
            return Err(format!(
                "header {:?}'s value is not a valid value of at most {MAX_HEADER_VALUE} bytes",
                name.as_str()
            ));
        }
        out.push((name.as_str().to_owned(), h.value));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "transform_tests.rs"]
mod tests;
