//! One API request under construction, and any answer as it came: what the
//! [`ApiClient`](super::ApiClient) sends and hands back.

use bytes::Bytes;
use http::Method;
use serde_json::Value;

/// Any answer, as it came.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// The body as JSON; `Null` when it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// Where a request goes under the client's base URL.
pub(super) enum Target {
    /// `/v1/` and these segments, percent-encoded.
    Api(Vec<String>),
    /// This path (and query), as given.
    Path(String),
}

/// One API request under construction.
pub struct ApiRequest {
    pub(super) method: Method,
    pub(super) target: Target,
    pub(super) query: Vec<(String, String)>,
    pub(super) headers: Vec<(String, String)>,
    pub(super) token: Option<Option<String>>,
    pub(super) body: Option<(Bytes, Option<&'static str>)>,
}

impl ApiRequest {
    /// A request for `/v1/...`; the segments are percent-encoded.
    pub fn new(method: Method, segments: &[&str]) -> Self {
        let segments = segments.iter().map(|s| (*s).to_owned()).collect();
        Self::to(method, Target::Api(segments))
    }

    /// A request for `path_and_query` (`/v1/tenants?limit=5`, `/healthz`) as given.
    pub fn path(method: Method, path_and_query: &str) -> Self {
        Self::to(method, Target::Path(path_and_query.to_owned()))
    }

    fn to(method: Method, target: Target) -> Self {
        Self {
            method,
            target,
            query: Vec::new(),
            headers: Vec::new(),
            token: None,
            body: None,
        }
    }

    /// Sends `token` (none at all for `None`) instead of the client's.
    pub fn token(mut self, token: Option<&str>) -> Self {
        self.token = Some(token.map(str::to_owned));
        self
    }

    /// Adds `name=value` to the query string when `value` is given.
    pub fn query(mut self, name: &str, value: Option<impl ToString>) -> Self {
        if let Some(v) = value {
            self.query.push((name.to_owned(), v.to_string()));
        }
        self
    }

    /// Adds a header when `value` is given.
    pub fn header(mut self, name: &str, value: Option<&str>) -> Self {
        if let Some(v) = value {
            self.headers.push((name.to_owned(), v.to_owned()));
        }
        self
    }

    /// A JSON body.
    pub fn json(mut self, body: &Value) -> Self {
        self.body = Some((Bytes::from(body.to_string()), Some("application/json")));
        self
    }

    /// A body of raw bytes, already serialised.
    pub fn bytes(mut self, body: Vec<u8>, content_type: &'static str) -> Self {
        self.body = Some((Bytes::from(body), Some(content_type)));
        self
    }

    /// A body of raw bytes with no `content-type` (add one with [`Self::header`]).
    pub fn raw_body(mut self, body: Vec<u8>) -> Self {
        self.body = Some((Bytes::from(body), None));
        self
    }
}
