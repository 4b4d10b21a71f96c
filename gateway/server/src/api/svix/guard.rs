//! What the face refuses before any handler reads the request, in Svix's
//! shapes: a control character in the path or query (as API v1's guard
//! does, `request_guard.rs`), and a POST's `Idempotency-Key` that is not
//! 1 to `limits.idempotency_key_len` visible ASCII characters, which v1
//! refuses too but some operations answer without a v1 write.

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::SvixError;
use super::forward::V1;
use crate::api::events::idempotency_key;
use crate::api::request_guard;

pub(super) async fn refuse_unreadable(State(v1): State<V1>, req: Request, next: Next) -> Response {
    if let Err(e) = request_guard::check(req.uri()) {
        // Query names as Svix spells them (snake_case), not camelCased.
        let refused = match &e.field {
            Some(field) => SvixError::query_field(field, e.message.clone()),
            None => SvixError::from_api(&e, "query"),
        };
        return refused.into_response();
    }
    if req.method() == Method::POST {
        let max = v1.ctx.config.limits.idempotency_key_len;
        if let Err(e) = idempotency_key(req.headers(), max) {
            return SvixError::from_api(&e, "header").into_response();
        }
    }
    next.run(req).await
}
