//! Where the Svix face's errors become HTTP: `{"code","detail"}` as Svix
//! answers them, and a refused field as Svix's `HTTPValidationError`
//! (`{"detail":[{"loc","msg","type"}]}`, 422). API v1's answers are read back
//! into these, so each failure keeps one meaning on both faces, and so are
//! answers v1's layers make for the face ([`in_svix_shape`]).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::api::error::ApiError;

/// A failure as the Svix face tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SvixError {
    /// A status with Svix's `code` and a `detail` for people.
    Http {
        status: StatusCode,
        code: String,
        detail: String,
    },
    /// 422: `loc` says where (`["body", "url"]`, `["query", "limit"]`).
    Validation { loc: Vec<String>, msg: String },
}

impl SvixError {
    /// 404 naming what was not found.
    pub(super) fn not_found(what: &str) -> Self {
        Self::Http {
            status: StatusCode::NOT_FOUND,
            code: "not_found".into(),
            detail: format!("{what} not found"),
        }
    }

    /// 422 on a body field.
    pub(super) fn body_field(field: &str, msg: impl Into<String>) -> Self {
        Self::Validation {
            loc: vec!["body".into(), field.into()],
            msg: msg.into(),
        }
    }

    /// 422 on a query parameter.
    pub(super) fn query_field(field: &str, msg: impl Into<String>) -> Self {
        Self::Validation {
            loc: vec!["query".into(), field.into()],
            msg: msg.into(),
        }
    }

    /// 500: API v1 answered what the face cannot read (a bug, never input).
    pub(super) fn internal(detail: impl Into<String>) -> Self {
        Self::Http {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: "internal_error".into(),
            detail: detail.into(),
        }
    }

    /// API v1's error answer (`{"error":{"code","message","field"?}}`) as the
    /// Svix face tells it: a refused field or value is 422 at that field, in
    /// `place` (`body` for a write, `query` for a read), its name as Svix
    /// spells it; the rest keeps its status and code.
    pub(super) fn from_v1(status: StatusCode, body: &Value, place: &str) -> Self {
        let error = &body["error"];
        let code = error["code"].as_str().unwrap_or("error").to_owned();
        let detail = error["message"].as_str().unwrap_or_default().to_owned();
        // Every 422 is Svix's `HTTPValidationError`, as its document says.
        if status == StatusCode::UNPROCESSABLE_ENTITY
            || matches!(
                code.as_str(),
                "invalid_field" | "validation_failed" | "invalid_json" | "url_blocked"
            )
        {
            let mut loc = vec![place.to_owned()];
            if let Some(field) = error["field"].as_str().filter(|f| !f.is_empty()) {
                loc.push(super::wire::camel_path(field));
            }
            return Self::Validation { loc, msg: detail };
        }
        Self::Http {
            status,
            code,
            detail,
        }
    }
}

impl SvixError {
    /// An API v1 refusal made in this process, as the face tells it; a
    /// refused field in `place` (`body`, `query`, `header`).
    pub(super) fn from_api(e: &ApiError, place: &str) -> Self {
        let body = json!({"error": {"code": e.code(), "message": e.message, "field": e.field}});
        Self::from_v1(e.status(), &body, place)
    }
}

impl From<ApiError> for SvixError {
    fn from(e: ApiError) -> Self {
        Self::from_api(&e, "body")
    }
}

/// An answer made for the face by API v1's own layers (the idempotent-call
/// middleware's 409 and 422) in Svix's shape: `{"error":{…}}` becomes
/// `{"code","detail"}`, or a 422 `HTTPValidationError`.
pub(super) async fn in_svix_shape(answer: Response) -> Response {
    let status = answer.status();
    if status.as_u16() < 400 {
        return answer;
    }
    let (parts, body) = answer.into_parts();
    let bytes = axum::body::to_bytes(body, 64 * 1024)
        .await
        .unwrap_or_default();
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(v1) if v1["error"].is_object() => {
            let mut shaped = SvixError::from_v1(status, &v1, "header").into_response();
            for (name, value) in &parts.headers {
                if name != axum::http::header::CONTENT_LENGTH {
                    shaped.headers_mut().insert(name, value.clone());
                }
            }
            shaped
        }
        _ => Response::from_parts(parts, axum::body::Body::from(bytes)),
    }
}

impl IntoResponse for SvixError {
    fn into_response(self) -> Response {
        match self {
            Self::Http {
                status,
                code,
                detail,
            } => (status, Json(json!({"code": code, "detail": detail}))).into_response(),
            Self::Validation { loc, msg } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                Json(json!({"detail": [{"loc": loc, "msg": msg, "type": "value_error"}]})),
            )
                .into_response(),
        }
    }
}
