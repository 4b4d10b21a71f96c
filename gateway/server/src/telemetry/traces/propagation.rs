//! The W3C trace context (`traceparent`, `tracestate`): read from an ingest
//! request by the SDK's own propagator, kept with the event in the form it is
//! sent in, and read back for each attempt.

use std::collections::HashMap;

use http::HeaderMap;
use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanContext, TraceContextExt};
use opentelemetry_http::HeaderExtractor;
use opentelemetry_sdk::propagation::TraceContextPropagator;

use crate::store::TraceContext;

/// `tracestate` longer than this is not kept (the W3C limit is 32 members of
/// at most 256 characters; senders rarely come near).
const MAX_TRACESTATE: usize = 512;

/// The request's trace context as a parent, or an empty context (a new trace).
pub(super) fn parent_of_request(headers: &HeaderMap) -> Context {
    let given = headers.get("traceparent").and_then(|v| v.to_str().ok());
    // The SDK's propagator takes a short span id and pads it; W3C refuses it.
    if !given.is_some_and(well_formed) {
        return Context::new();
    }
    TraceContextPropagator::new().extract(&HeaderExtractor(headers))
}

/// Whether `traceparent` has the W3C shape: `vv-<32 hex>-<16 hex>-ff`, lower
/// case, version `ff` refused, and nothing after the flags at version `00`
/// (a later version may add fields).
fn well_formed(traceparent: &str) -> bool {
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let parts: Vec<&str> = traceparent.trim().split('-').collect();
    match parts.as_slice() {
        [version, trace, span, flags, rest @ ..] => {
            hex(version, 2)
                && *version != "ff"
                && (rest.is_empty() || *version != "00")
                && hex(trace, 32)
                && hex(span, 16)
                && hex(flags, 2)
        }
        _ => false,
    }
}

/// A kept trace context as a parent.
pub(super) fn parent_of_stored(kept: &TraceContext) -> Context {
    let mut fields = HashMap::with_capacity(2);
    fields.insert("traceparent".to_owned(), kept.traceparent.clone());
    if let Some(state) = &kept.tracestate {
        fields.insert("tracestate".to_owned(), state.clone());
    }
    TraceContextPropagator::new().extract(&fields)
}

/// The request's trace context checked and written out again, when it has a
/// valid one: what is kept while no spans are made.
pub(super) fn from_headers(headers: &HeaderMap) -> Option<TraceContext> {
    // Most ingests carry none: answer before building a context.
    if !headers.contains_key("traceparent") {
        return None;
    }
    to_stored(parent_of_request(headers).span().span_context())
}

/// `span`'s context as it is kept and sent, when it is valid.
pub(super) fn to_stored(span: &SpanContext) -> Option<TraceContext> {
    if !span.is_valid() {
        return None;
    }
    let traceparent = format!(
        "00-{:032x}-{:016x}-{:02x}",
        span.trace_id(),
        span.span_id(),
        span.trace_flags().to_u8()
    );
    let state = span.trace_state().header();
    let tracestate = (!state.is_empty() && state.len() <= MAX_TRACESTATE).then_some(state);
    Some(TraceContext {
        traceparent,
        tracestate,
    })
}
