//! The Svix face calls API v1 in this process: each Svix operation becomes one
//! or a few v1 requests, carrying the caller's token and request context, so
//! both faces share one model, one set of checks and one capability table.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap, Method, Request, StatusCode, header};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;
use tower_service::Service;

use super::error::SvixError;
use crate::api::body::read_guard::ReadClaim;
use crate::context::AppContext;

/// What a path segment keeps unescaped: the characters ids and uids use.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

/// A path segment (an id or a uid) as it goes into a v1 path.
pub(super) fn seg(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT).to_string()
}

/// API v1, and the context the facade reads its limits from.
#[derive(Clone)]
pub(super) struct V1 {
    pub(super) router: axum::Router,
    pub(super) ctx: Arc<AppContext>,
}

/// Who called, as the v1 requests made for them carry it: the token, and the
/// request's context (its body-read claim).
#[derive(Debug, Clone)]
pub(super) struct Caller {
    headers: HeaderMap,
    extensions: Extensions,
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        // The token only: the face keeps its own answers per idempotency
        // key (`idempotent_calls.rs` wraps its writes), so a v1 call made for
        // it carries none, and v1's own repeat (an event's uid) is told apart.
        let mut headers = HeaderMap::new();
        if let Some(v) = parts.headers.get(header::AUTHORIZATION) {
            headers.insert(header::AUTHORIZATION, v.clone());
        }
        // Only the body-read claim goes on: v1's router sets its own route
        // and path parameters.
        let mut extensions = Extensions::new();
        if let Some(claim) = parts.extensions.get::<ReadClaim>() {
            extensions.insert(claim.clone());
        }
        Ok(Self {
            headers,
            extensions,
        })
    }
}

/// A v1 answer.
#[derive(Debug)]
pub(super) struct Answer {
    pub(super) status: StatusCode,
    /// Its headers (`idempotent-replayed` tells a repeat from a first).
    pub(super) headers: HeaderMap,
    pub(super) body: Value,
}

impl V1 {
    /// The largest JSON body a request may carry.
    pub(super) fn body_limit(&self) -> usize {
        self.ctx.config.limits.json_body_bytes
    }

    /// Sends one v1 request (`path` with its query) for `caller`; answers
    /// whatever status came back.
    ///
    /// # Errors
    /// 500 when v1's answer is not JSON (a bug, never the caller's input).
    pub(super) async fn call(
        &self,
        caller: &Caller,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, SvixError> {
        let mut req = Request::builder().method(method).uri(path);
        for (name, value) in &caller.headers {
            req = req.header(name, value);
        }
        let body = match body {
            Some(v) => {
                req = req.header(header::CONTENT_TYPE, "application/json");
                Body::from(serde_json::to_vec(v).map_err(|e| SvixError::internal(e.to_string()))?)
            }
            None => Body::empty(),
        };
        let mut req = req
            .body(body)
            .map_err(|e| SvixError::internal(e.to_string()))?;
        *req.extensions_mut() = caller.extensions.clone();
        let mut router = self.router.clone();
        let res = router
            .call(req)
            .await
            .map_err(|e| SvixError::internal(e.to_string()))?;
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
            .await
            .map_err(|e| SvixError::internal(e.to_string()))?;
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).map_err(|e| {
                SvixError::internal(format!(
                    "API v1 answered {status} with no JSON ({e}): {}",
                    String::from_utf8_lossy(&bytes)
                ))
            })?
        };
        Ok(Answer {
            status,
            headers,
            body,
        })
    }

    /// As [`V1::call`], for an answer that must succeed: its body.
    ///
    /// # Errors
    /// v1's refusal in Svix's terms, a refused field at `place`.
    pub(super) async fn ok(
        &self,
        caller: &Caller,
        method: Method,
        path: &str,
        body: Option<&Value>,
        place: &str,
    ) -> Result<Value, SvixError> {
        let answer = self.call(caller, method, path, body).await?;
        if answer.status.is_success() {
            Ok(answer.body)
        } else {
            Err(SvixError::from_v1(answer.status, &answer.body, place))
        }
    }
}

/// `path` with `query` (names and values) appended, the values escaped.
pub(super) fn with_query(path: &str, query: &[(&str, String)]) -> String {
    if query.is_empty() {
        return path.to_owned();
    }
    let pairs: Vec<String> = query
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, NON_ALPHANUMERIC)))
        .collect();
    format!("{path}?{}", pairs.join("&"))
}
