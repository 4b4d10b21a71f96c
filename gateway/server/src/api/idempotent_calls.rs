//! `Idempotency-Key` on every POST and PUT: the first answer to a request made
//! with a key is kept for 24 hours, per caller (the admin's calls on a
//! tenant's routes with that tenant, so its delete takes them), and a repeat of the same
//! request gets it again with `Idempotent-Replayed: true`. Requests are the
//! same when their method, path and body mean the same: a JSON body by its
//! canonical form (object keys sorted, no insignificant whitespace), any other
//! body by its bytes. The same key with another request is refused (422
//! `idempotency_key_reused`); a repeat while the first still runs is told so
//! (409). Answers of 500 and above are not kept, so a failure can be retried.
//!
//! The Svix face's writes (`/api/v1`) are kept the same way, as the face
//! answers them, per the application the path names.
//!
//! An answer that carries a secret (an API key, a signing secret, a portal
//! token) is kept
//! without it: a repeat answers the rest, and the secret is read where it
//! always can be (`GET .../secret`) or made again (`rotate-key`). Event
//! ingest keeps its own answers (`store/events.rs`), compared the same way.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderValue, Method, header, request::Parts};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::auth::Principal;
use super::body::read_limited;
use super::error::ApiError;
use super::events::idempotency_key;
use crate::context::AppContext;
use crate::store::{ADMIN_SCOPE, ApiCall, KeptAnswer};

/// Largest answer kept for repeats; a larger one is answered once and not kept.
const MAX_KEPT_BYTES: usize = 256 * 1024;

/// The fields of an answer that are secrets, left out of what is kept: keys
/// and signing secrets, a portal session's token, and the Svix face's `key`
/// (an endpoint's secret).
const SECRET_FIELDS: [&str; 5] = ["api_key", "secret", "secrets", "token", "key"];

/// The middleware: runs the call once per key, and answers repeats.
pub(in crate::api) async fn keep_answers(
    State(ctx): State<Arc<AppContext>>,
    request: Request,
    next: Next,
) -> Response {
    match idempotent(&ctx, request, next).await {
        Ok(answer) | Err(answer) => answer,
    }
}

async fn idempotent(
    ctx: &Arc<AppContext>,
    request: Request,
    next: Next,
) -> Result<Response, Response> {
    let (mut parts, body) = request.into_parts();
    let applies = matches!(parts.method, Method::POST | Method::PUT)
        && parts.headers.contains_key("idempotency-key")
        && !is_ingest(&parts);
    if !applies {
        return Ok(next.run(Request::from_parts(parts, body)).await);
    }
    let limits = &ctx.config.limits;
    let key = idempotency_key(&parts.headers, limits.idempotency_key_len)
        .map_err(IntoResponse::into_response)?
        .map(str::to_owned)
        .unwrap_or_default();
    // A call without a valid token is the handler's to refuse.
    let Some((scope, mark)) = scope_of(ctx, &mut parts).await else {
        return Ok(next.run(Request::from_parts(parts, body)).await);
    };
    let key = format!("{mark}{key}");
    let bytes = read_limited(body, limits.json_body_bytes.max(limits.plugin_upload_bytes))
        .await
        .map_err(IntoResponse::into_response)?;
    let fingerprint = fingerprint(&parts, &bytes);
    let failed = |e: crate::store::StoreError| ApiError::from(e).into_response();
    match ctx
        .store
        .claim_api_call(&scope, &key, &fingerprint, ctx.clock.now_ms())
        .await
        .map_err(failed)?
    {
        ApiCall::Claimed => {}
        ApiCall::Answered(kept) => return Ok(replayed(kept)),
        ApiCall::Running => {
            return Err(ApiError::conflict(
                "a request with this Idempotency-Key is still being answered; retry shortly",
            )
            .into_response());
        }
        ApiCall::KeyReused => return Err(ApiError::idempotency_key_reused().into_response()),
    }
    let answer = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let (answer_parts, answer_body) = answer.into_parts();
    let answer_bytes = match http_body_util::Limited::new(answer_body, MAX_KEPT_BYTES)
        .collect()
        .await
    {
        Ok(collected) => Some(collected.to_bytes()),
        Err(_) => None,
    };
    let kept = answer_bytes
        .as_ref()
        .filter(|_| answer_parts.status.as_u16() < 500)
        .and_then(|b| kept_answer(&answer_parts, b));
    let now = ctx.clock.now_ms();
    if let Err(e) = ctx
        .store
        .answer_api_call(&scope, &key, &fingerprint, kept, now)
        .await
    {
        tracing::warn!(error = %e, "cannot keep an idempotent call's answer; a repeat runs again after a minute");
    }
    let body = answer_bytes.map_or_else(Body::empty, Body::from);
    Ok(Response::from_parts(answer_parts, body))
}

/// Whether the request is an event ingest, which keeps its answers itself.
fn is_ingest(parts: &Parts) -> bool {
    let segments: Vec<&str> = parts.uri.path().trim_matches('/').split('/').collect();
    parts.method == Method::POST && matches!(segments[..], ["v1", "tenants", _, "events"])
}

/// Where the caller's answers are kept, and the mark its keys carry there: a
/// tenant's key, with the tenant; the admin token on a tenant's routes, with
/// that tenant too (so the tenant's delete takes them) under keys of its own;
/// the admin token elsewhere, in the admin's scope.
async fn scope_of(ctx: &Arc<AppContext>, parts: &mut Parts) -> Option<(String, &'static str)> {
    match Principal::from_request_parts(parts, ctx).await.ok()? {
        Principal::Tenant(t) => Some((t, "")),
        // A portal session's keys are its tenant's, marked apart from the key's.
        Principal::Portal(s) => Some((s.tenant_id.to_string(), "portal ")),
        Principal::Admin => {
            let segments: Vec<&str> = parts.uri.path().trim_matches('/').split('/').collect();
            let named = match segments[..] {
                ["v1", "tenants", named, _, ..]
                | ["api", "v1", "app", named, _, ..]
                | ["api", "v1", "auth", "app-portal-access", named]
                | ["api", "v1", "auth", "app", named, ..] => Some(named),
                _ => None,
            };
            if let Some(named) = named
                && let Ok(Some(tenant)) = ctx.store.find_tenant(named).await
            {
                return Some((tenant.id.to_string(), "admin "));
            }
            Some((ADMIN_SCOPE.to_owned(), ""))
        }
    }
}

/// The request's method, path and body's meaning, hashed.
fn fingerprint(parts: &Parts, body: &[u8]) -> String {
    let mut hash = Sha256::new();
    hash.update(parts.method.as_str());
    hash.update(b" ");
    hash.update(parts.uri.path_and_query().map_or("", |p| p.as_str()));
    hash.update(b"\n");
    hash.update(canonical(body));
    hex::encode(hash.finalize())
}

/// A body's canonical form: its JSON meaning re-serialised (object keys
/// sorted, no whitespace), or its bytes when it is not JSON.
pub(super) fn canonical(body: &[u8]) -> Vec<u8> {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) => serde_json::to_vec(&v).unwrap_or_else(|_| body.to_vec()),
        Err(_) => body.to_vec(),
    }
}

/// What is kept of an answer: its status, type and body without secrets;
/// `None` for a body that is not text.
fn kept_answer(parts: &axum::http::response::Parts, body: &[u8]) -> Option<KeptAnswer> {
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(mut fields)) => {
            for secret in SECRET_FIELDS {
                fields.remove(secret);
            }
            Value::Object(fields).to_string()
        }
        _ => String::from_utf8(body.to_vec()).ok()?,
    };
    Some(KeptAnswer {
        status: parts.status.as_u16(),
        content_type,
        body,
    })
}

/// A kept answer, answered again.
fn replayed(kept: KeptAnswer) -> Response {
    let status =
        axum::http::StatusCode::from_u16(kept.status).unwrap_or(axum::http::StatusCode::OK);
    let mut answer = (status, kept.body).into_response();
    let headers = answer.headers_mut();
    headers.insert("idempotent-replayed", HeaderValue::from_static("true"));
    match kept
        .content_type
        .and_then(|c| HeaderValue::from_str(&c).ok())
    {
        Some(c) => headers.insert(header::CONTENT_TYPE, c),
        None => headers.remove(header::CONTENT_TYPE),
    };
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_that_mean_the_same_are_the_same() {
        let a = canonical(br#"{"b": 1, "a": [1, 2], "c": {"y": null, "x": "s"}}"#);
        let b = canonical(br#"{"a":[1,2],"c":{"x":"s","y":null},"b":1}"#);
        assert_eq!(a, b);
        assert_ne!(
            canonical(br#"{"a": [2, 1]}"#),
            canonical(br#"{"a": [1, 2]}"#)
        );
        assert_eq!(canonical(b"\0asm binary"), b"\0asm binary");
    }

    #[test]
    fn secrets_are_left_out_of_what_is_kept() {
        let answer = Response::builder()
            .status(201)
            .header("content-type", "application/json")
            .body(())
            .unwrap();
        let (parts, ()) = answer.into_parts();
        let body = br#"{"id":"ep_1","secret":"whsec_x","api_key":"hgk_y","url":"u"}"#;
        let kept = kept_answer(&parts, body).unwrap();
        assert_eq!(kept.status, 201);
        assert_eq!(kept.body, r#"{"id":"ep_1","url":"u"}"#);
        assert_eq!(kept.content_type.as_deref(), Some("application/json"));
    }
}
