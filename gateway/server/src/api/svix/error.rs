//! Where the Svix face's errors become HTTP: `{"code","detail"}` as Svix
//! answers them, and a refused field as Svix's `HTTPValidationError`
//! (`{"detail":[{"loc","msg","type"}]}`, 422). API v1's answers are read back
//! into these, so each failure keeps one meaning on both faces.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

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
        if matches!(
            code.as_str(),
            "invalid_field" | "validation_failed" | "invalid_json" | "url_blocked"
        ) {
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
