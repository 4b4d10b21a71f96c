use http::HeaderMap;

use super::Traces;
use super::propagation::{from_headers, parent_of_stored, to_stored};
use crate::store::TraceContext;
use opentelemetry::trace::TraceContextExt;

const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

fn headers(traceparent: &str, tracestate: Option<&str>) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("traceparent", traceparent.parse().unwrap());
    if let Some(s) = tracestate {
        h.insert("tracestate", s.parse().unwrap());
    }
    h
}

#[test]
fn off_keeps_the_senders_context_as_it_came() {
    let (span, kept) = Traces::default().ingest(&headers(PARENT, Some("congo=t61rcWkgMzE")));
    assert!(!span.is_recording());
    let kept = kept.unwrap();
    assert_eq!(kept.traceparent, PARENT);
    assert_eq!(kept.tracestate.as_deref(), Some("congo=t61rcWkgMzE"));
    let (_, sent) = Traces::default().attempt(Some(&kept));
    assert_eq!(sent, Some(kept));
}

#[test]
fn off_keeps_nothing_without_a_valid_traceparent() {
    assert_eq!(from_headers(&HeaderMap::new()), None);
    for bad in [
        "garbage",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b71692033-01",
        "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01",
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
    ] {
        assert_eq!(from_headers(&headers(bad, None)), None, "{bad}");
    }
}

#[test]
fn a_kept_context_reads_back_as_the_same_parent() {
    let kept = TraceContext {
        traceparent: PARENT.to_owned(),
        tracestate: Some("a=1,b=2".to_owned()),
    };
    let cx = parent_of_stored(&kept);
    let span = cx.span();
    let back = to_stored(span.span_context()).unwrap();
    assert_eq!(back, kept);
}

#[test]
fn a_later_version_is_read_as_version_00() {
    let later = format!("01{}-more", &PARENT[2..]);
    let kept = from_headers(&headers(&later, None)).unwrap();
    assert_eq!(kept.traceparent, PARENT);
}
