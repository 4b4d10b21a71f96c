//! The one place errors become HTTP: `{"error":{"code","message","field"?}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::plugins::PluginServiceError;
use crate::policy::BudgetExceeded;
use crate::store::StoreError;

/// An API error: a status, a stable code, a message for people and, for
/// validation errors, the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub field: Option<String>,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            field: None,
        }
    }

    /// 400 `invalid_json`: the body is not JSON.
    pub fn invalid_json(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_json", message)
    }

    /// 400 `invalid_field`: a field has the wrong type, or is unknown.
    pub fn invalid_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(StatusCode::BAD_REQUEST, "invalid_field", message)
        }
    }

    /// 401 `unauthorized`.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "missing or invalid bearer token",
        )
    }

    /// 403 `forbidden`: a tenant key on an admin route.
    pub fn forbidden() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "this route needs the admin token",
        )
    }

    /// 404 `not_found`, also for another tenant's resources.
    pub fn not_found(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("{what} not found"),
        )
    }

    /// 409 `conflict`.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }

    /// 409 `too_many_secrets`: an endpoint has its most live signing secrets; a
    /// rotation must wait until the oldest grace period ends.
    pub fn too_many_secrets(live: usize) -> Self {
        Self::new(
            StatusCode::CONFLICT,
            "too_many_secrets",
            format!(
                "this endpoint has {live} live secrets, the most allowed; retry after the oldest expires"
            ),
        )
    }

    /// 408 `request_timeout`: the body did not arrive within
    /// `limits.body_read_timeout`. The connection is closed after the answer.
    pub fn request_timeout() -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            "the request body did not arrive in time",
        )
    }

    /// 413 `payload_too_large`.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("body exceeds {limit} bytes"),
        )
    }

    /// 422 `validation_failed` naming the field.
    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "validation_failed",
                message,
            )
        }
    }

    /// 422 `url_blocked`.
    pub fn url_blocked(message: impl Into<String>) -> Self {
        Self {
            field: Some("url".into()),
            ..Self::new(StatusCode::UNPROCESSABLE_ENTITY, "url_blocked", message)
        }
    }

    /// 422 `idempotency_key_reused`.
    pub fn idempotency_key_reused() -> Self {
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "idempotency_key_reused",
            "this Idempotency-Key was used with a different body",
        )
    }

    /// 422 `plugin_rejected`: an upload check refused the plugin; the message names
    /// the check.
    pub fn plugin_rejected(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "plugin_rejected", message)
    }

    /// 429 `rate_limited`: too many requests of one kind (plugin uploads: 10 per
    /// tenant per hour); the message says when to try again.
    pub fn rate_limited(message: impl Into<String>) -> Self {
        Self::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", message)
    }

    /// 500 `internal_error`: a bug in hookgate, logged where it happened.
    pub fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "internal error; the gateway's log has the details",
        )
    }

    /// 503 `busy`: a shared resource (the plugin compiler) stayed taken; try again.
    pub fn busy(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "busy", message)
    }

    /// 507 `insufficient_storage`.
    pub fn insufficient_storage() -> Self {
        Self::new(
            StatusCode::INSUFFICIENT_STORAGE,
            "insufficient_storage",
            "free disk is below min_free_disk",
        )
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        tracing::error!(error = %e, "store error");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "storage is unavailable; retry later",
        )
    }
}

impl From<BudgetExceeded> for ApiError {
    /// 422 `simulation_too_large`: a policy simulation over its work budget.
    fn from(e: BudgetExceeded) -> Self {
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "simulation_too_large",
            format!(
                "{e}; simulate fewer events, a shorter outage or fewer max_attempts, \
                 or run `hookgate policy simulate` on your own machine"
            ),
        )
    }
}

impl From<PluginServiceError> for ApiError {
    fn from(e: PluginServiceError) -> Self {
        use PluginServiceError as E;
        let message = e.to_string();
        match e {
            E::InvalidName | E::TooManyPlugins { .. } => Self::validation("name", message),
            E::Preloaded { .. } | E::Bound { .. } | E::NothingToRollBackTo { .. } => {
                Self::conflict(message)
            }
            E::RateLimited { .. } => Self::rate_limited(message),
            E::Busy => Self::busy(message),
            E::Rejected(_) => Self::plugin_rejected(message),
            E::NotFound => Self::not_found("plugin"),
            E::Store(e) => e.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut err = json!({"code": self.code, "message": self.message});
        if let Some(f) = self.field {
            err["field"] = json!(f);
        }
        let mut response = (self.status, axum::Json(json!({ "error": err }))).into_response();
        if self.status == StatusCode::REQUEST_TIMEOUT {
            // The rest of a slow body may still be coming: close rather than read it.
            response.headers_mut().insert(
                axum::http::header::CONNECTION,
                axum::http::HeaderValue::from_static("close"),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    async fn render(e: ApiError) -> (StatusCode, serde_json::Value) {
        let resp = e.into_response();
        let status = resp.status();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&body).unwrap())
    }

    #[tokio::test]
    async fn errors_map_to_status_code_and_shape() {
        let cases = [
            (ApiError::invalid_json("x"), 400, "invalid_json"),
            (ApiError::invalid_field("a.b", "x"), 400, "invalid_field"),
            (ApiError::unauthorized(), 401, "unauthorized"),
            (ApiError::forbidden(), 403, "forbidden"),
            (ApiError::not_found("tenant"), 404, "not_found"),
            (ApiError::conflict("x"), 409, "conflict"),
            (ApiError::too_many_secrets(5), 409, "too_many_secrets"),
            (ApiError::request_timeout(), 408, "request_timeout"),
            (ApiError::too_large(10), 413, "payload_too_large"),
            (ApiError::validation("url", "x"), 422, "validation_failed"),
            (ApiError::url_blocked("x"), 422, "url_blocked"),
            (
                ApiError::idempotency_key_reused(),
                422,
                "idempotency_key_reused",
            ),
            (
                StoreError::Unavailable("disk".into()).into(),
                503,
                "store_unavailable",
            ),
            (
                ApiError::insufficient_storage(),
                507,
                "insufficient_storage",
            ),
            (ApiError::plugin_rejected("x"), 422, "plugin_rejected"),
            (ApiError::rate_limited("x"), 429, "rate_limited"),
            (ApiError::busy("x"), 503, "busy"),
            (ApiError::internal(), 500, "internal_error"),
            (BudgetExceeded::Time.into(), 422, "simulation_too_large"),
        ];
        for (err, status, code) in cases {
            let field = err.field.clone();
            let (s, body) = render(err).await;
            assert_eq!(s.as_u16(), status);
            assert_eq!(body["error"]["code"], code);
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
            assert_eq!(
                body["error"].get("field").and_then(|f| f.as_str()),
                field.as_deref()
            );
        }
    }
}
