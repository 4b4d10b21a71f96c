//! Transforms: a tenant's code that reshapes, reroutes or skips one attempt's
//! request before hookgate signs it (`hookgate:transform@0.1.0`).
//!
//! The types mirror the WIT record for record, in plain Rust, so a transform is
//! written and tested natively; [`crate::export_transform!`] binds it to the
//! WIT on `wasm32`.

use crate::DestinationKind;
use crate::json_fields::{self, ObjectFields};

/// The HTTP methods a transform may choose. A `Get` carries no body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Method {
    /// hookgate's own method.
    #[default]
    Post,
    Put,
    Patch,
    /// What the receiver needs goes into the query; the body must be empty.
    Get,
}

impl Method {
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

/// The event being delivered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The event's id, `evt_…`.
    pub id: String,
    /// Its type, e.g. `invoice.paid`.
    pub event_type: String,
    /// When it was accepted, in Unix milliseconds.
    pub timestamp_ms: u64,
    /// The payload exactly as the platform sent it (JSON text).
    pub payload: Vec<u8>,
    /// The channels it was sent on.
    pub channels: Vec<String>,
    /// The platform's tags on it.
    pub tags: Vec<String>,
}

impl Event {
    /// The payload parsed as JSON; `None` if it is not JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.payload).ok()
    }

    /// The payload's top-level fields in their order, each value as written
    /// (not parsed); `None` if the payload is not a JSON object. With
    /// [`Request::set_fields`], renaming, dropping or adding fields costs a
    /// fraction of [`Event::json`] and [`Request::set_json`].
    pub fn fields(&self) -> Option<Vec<(String, &serde_json::value::RawValue)>> {
        serde_json::from_slice::<ObjectFields<'_>>(&self.payload)
            .ok()
            .map(|f| f.0)
    }
}

/// The endpoint the event is delivered to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Endpoint {
    /// The endpoint's id, `ep_…`.
    pub id: String,
    /// The tenant's own id for it.
    pub uid: Option<String>,
    /// The tenant's metadata on it, sorted by key.
    pub metadata: Vec<(String, String)>,
    /// The kind of destination.
    pub destination: DestinationKind,
}

impl Endpoint {
    /// The metadata value under `key`.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A request: the one hookgate would send, or the one to send instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: Method,
    /// The path and query, e.g. `/hooks/in?team=7`. An answer's path must begin
    /// with the endpoint URL's path.
    pub path: String,
    /// The headers, names in lower case, without the signature headers.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body's media type.
    pub content_type: String,
}

impl Default for Request {
    fn default() -> Self {
        Self {
            method: Method::Post,
            path: "/".to_owned(),
            headers: Vec::new(),
            body: Vec::new(),
            content_type: "application/json".to_owned(),
        }
    }
}

impl Request {
    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Sets header `name` (stored in lower case) to `value`, replacing any.
    pub fn set_header(&mut self, name: &str, value: impl Into<String>) {
        self.remove_header(name);
        self.headers.push((name.to_ascii_lowercase(), value.into()));
    }

    /// Removes header `name` (any case).
    pub fn remove_header(&mut self, name: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    /// Makes `value` the body, as JSON.
    pub fn set_json(&mut self, value: &serde_json::Value) {
        self.body = value.to_string().into_bytes();
        self.content_type = "application/json".to_owned();
    }

    /// Makes `fields` the body: one JSON object, the fields in their order,
    /// each value as written (see [`Event::fields`]).
    pub fn set_fields<K: AsRef<str>>(&mut self, fields: &[(K, &serde_json::value::RawValue)]) {
        self.body = json_fields::encode(fields);
        self.content_type = "application/json".to_owned();
    }

    /// Makes `pairs` the body, form-encoded.
    pub fn set_form<K: AsRef<str>, V: AsRef<str>>(&mut self, pairs: &[(K, V)]) {
        self.body = form_encode(pairs).into_bytes();
        self.content_type = "application/x-www-form-urlencoded".to_owned();
    }

    /// The path without its query.
    pub fn path_only(&self) -> &str {
        self.path.split_once('?').map_or(&self.path, |(p, _)| p)
    }

    /// Replaces the query with `pairs`, form-encoded (none removes it).
    pub fn set_query<K: AsRef<str>, V: AsRef<str>>(&mut self, pairs: &[(K, V)]) {
        let path = self.path_only().to_owned();
        self.path = if pairs.is_empty() {
            path
        } else {
            format!("{path}?{}", form_encode(pairs))
        };
    }

    /// Appends `segment` to the path, before the query (`/hooks` + `slack`
    /// gives `/hooks/slack`).
    pub fn push_path(&mut self, segment: &str) {
        let (path, query) = match self.path.split_once('?') {
            Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
            None => (self.path.clone(), None),
        };
        let mut next = path.trim_end_matches('/').to_owned();
        next.push('/');
        next.push_str(segment.trim_start_matches('/'));
        if let Some(q) = query {
            next.push('?');
            next.push_str(&q);
        }
        self.path = next;
    }
}

/// `application/x-www-form-urlencoded`: letters, digits and `*-._` stay, a
/// space is `+`, every other byte of the UTF-8 is `%XX`.
pub fn form_encode<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode_component(k.as_ref(), &mut out);
        out.push('=');
        encode_component(v.as_ref(), &mut out);
    }
    out
}

fn encode_component(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => {
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        }
    }
}

/// Everything a transform is told about one attempt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransformInput {
    pub event: Event,
    pub endpoint: Endpoint,
    /// What hookgate would send without a transform.
    pub request: Request,
}

impl TransformInput {
    /// An input for native tests: an `http` endpoint at `/`, the payload
    /// `payload` (JSON) as both the event's payload and the request's body.
    pub fn of_json(event_type: &str, payload: &serde_json::Value) -> Self {
        let body = payload.to_string().into_bytes();
        Self {
            event: Event {
                id: "evt_test".to_owned(),
                event_type: event_type.to_owned(),
                timestamp_ms: 1_733_500_000_000,
                payload: body.clone(),
                channels: Vec::new(),
                tags: Vec::new(),
            },
            endpoint: Endpoint {
                id: "ep_test".to_owned(),
                ..Endpoint::default()
            },
            request: Request {
                body,
                headers: vec![("hookgate-event-type".to_owned(), event_type.to_owned())],
                ..Request::default()
            },
        }
    }
}

/// What a transform answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Send this request (hookgate signs it) instead.
    Send(Request),
    /// Send nothing to this endpoint; the reason is recorded on the delivery.
    Skip(String),
}

/// A transform. The gateway creates it with `Default` for every attempt, in a
/// fresh instance, so it keeps no state between calls.
pub trait Transform {
    /// Shapes the attempt's request (`input.request` is what hookgate would
    /// send), or skips it.
    fn transform(&self, input: TransformInput) -> Answer;
}

/// Exports a [`Transform`] (which must implement `Default`) as the plugin's
/// `hookgate:transform/transform@0.1.0` interface. Use it once per plugin
/// crate, at the top level; it expands to nothing unless the target is `wasm32`.
#[macro_export]
macro_rules! export_transform {
    ($transform:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[allow(unsafe_code, reason = "wit-bindgen's generated export glue")]
        const _: () = {
            struct HookgateTransformExport;
            impl $crate::__private_transform::Guest for HookgateTransformExport {
                fn transform(
                    input: $crate::__private_transform::WitInput,
                ) -> $crate::__private_transform::WitAnswer {
                    $crate::__private_transform::transform::<$transform>(input)
                }
            }
            $crate::__private_transform::bindings::export_transform_plugin!(
                HookgateTransformExport with_types_in $crate::__private_transform::bindings
            );
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding_follows_the_whatwg_rules() {
        assert_eq!(
            form_encode(&[("a b", "c&d=é"), ("x", "*-._~")]),
            "a+b=c%26d%3D%C3%A9&x=*-._%7E"
        );
        assert_eq!(form_encode::<&str, &str>(&[]), "");
    }

    #[test]
    fn headers_paths_and_bodies_change_as_asked() {
        let mut r = TransformInput::of_json("a.b", &serde_json::json!({"k": 1})).request;
        r.set_header("X-Team", "7");
        r.set_header("x-team", "8");
        assert_eq!(r.header("X-TEAM"), Some("8"));
        assert_eq!(r.headers.iter().filter(|(n, _)| n == "x-team").count(), 1);
        r.remove_header("x-team");
        assert_eq!(r.header("x-team"), None);
        r.path = "/hooks/?token=1".to_owned();
        r.push_path("slack");
        assert_eq!(r.path, "/hooks/slack?token=1");
        r.set_query(&[("a", "1 2")]);
        assert_eq!(r.path, "/hooks/slack?a=1+2");
        r.set_query::<&str, &str>(&[]);
        assert_eq!(r.path, "/hooks/slack");
        r.set_form(&[("text", "hi")]);
        assert_eq!(
            (r.body.as_slice(), r.content_type.as_str()),
            (&b"text=hi"[..], "application/x-www-form-urlencoded")
        );
        r.set_json(&serde_json::json!({"ok": true}));
        assert_eq!(r.body, br#"{"ok":true}"#);
        assert_eq!(Method::Patch.as_str(), "PATCH");
    }

    #[test]
    fn the_test_input_carries_the_payload_twice() {
        let input = TransformInput::of_json("order.paid", &serde_json::json!({"id": 3}));
        assert_eq!(input.event.json(), Some(serde_json::json!({"id": 3})));
        assert_eq!(input.request.body, input.event.payload);
        assert_eq!(input.endpoint.metadata("none"), None);
    }

    #[test]
    fn fields_read_and_write_an_object_without_parsing_its_values() {
        let mut input = TransformInput::of_json("a.b", &serde_json::json!({}));
        input.event.payload = br#" {"a\nb": "x\u0041", "n": [1,  2], "n": 3} "#.to_vec();
        let fields = input.event.fields().expect("an object");
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a\nb", "n", "n"]);
        assert_eq!(fields[0].1.get(), r#""x\u0041""#);
        let mut r = input.request;
        r.set_fields(&fields);
        assert_eq!(r.body, br#"{"a\nb":"x\u0041","n":[1,  2],"n":3}"#);
        assert_eq!(r.content_type, "application/json");
        let empty: [(&str, &serde_json::value::RawValue); 0] = [];
        r.set_fields(&empty);
        assert_eq!(r.body, b"{}");
    }

    #[test]
    fn fields_of_what_is_not_an_object_are_none() {
        let mut event = TransformInput::of_json("a.b", &serde_json::json!([1])).event;
        assert!(event.fields().is_none());
        for payload in [&b"not json"[..], b"", b"{\"a\": }", b"{} trailing"] {
            event.payload = payload.to_vec();
            assert!(event.fields().is_none(), "{payload:?}");
        }
    }
}
