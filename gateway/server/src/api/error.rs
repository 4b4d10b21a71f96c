//! The one place errors become HTTP: `{"error":{"code","message","field"?}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

pub(crate) use super::error_code::{ErrorBody, ErrorCode, ErrorDetail};

use crate::endpoint_stats::RangeError;
use crate::plugins::PluginServiceError;
use crate::policy::BudgetExceeded;
use crate::store::{Failure, StoreError};

/// An API error: a stable code (which decides the status), a message for
/// people and, for validation errors, the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    kind: ErrorCode,
    pub message: String,
    pub field: Option<String>,
}

impl ApiError {
    fn new(kind: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            field: None,
        }
    }

    /// The code, typed.
    pub fn kind(&self) -> ErrorCode {
        self.kind
    }

    /// The HTTP status the code answers with.
    pub fn status(&self) -> StatusCode {
        self.kind.status()
    }

    /// The code as the body spells it.
    pub fn code(&self) -> &'static str {
        self.kind.as_str()
    }

    /// 400 `invalid_json`: the body is not JSON.
    pub fn invalid_json(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidJson, message)
    }

    /// 400 `invalid_field`: a field has the wrong type, or is unknown.
    pub fn invalid_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(ErrorCode::InvalidField, message)
        }
    }

    /// 401 `unauthorized`.
    pub fn unauthorized() -> Self {
        Self::new(ErrorCode::Unauthorized, "missing or invalid bearer token")
    }

    /// 401 `unauthorized` saying why a token that parses is refused.
    pub fn unauthorized_because(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unauthorized, message)
    }

    /// 403 `forbidden`: a tenant key on an admin route.
    pub fn forbidden() -> Self {
        Self::new(ErrorCode::Forbidden, "this route needs the admin token")
    }

    /// 403 `forbidden` saying what the caller lacks.
    pub fn forbidden_because(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }

    /// 404 `not_found`, also for another tenant's resources.
    pub fn not_found(what: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("{what} not found"))
    }

    /// 405: the route exists, not with this method.
    pub fn method_not_allowed() -> Self {
        Self::new(
            ErrorCode::MethodNotAllowed,
            "this route does not take this method; the API reference lists those it takes",
        )
    }

    /// 409 `conflict`.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Conflict, message)
    }

    /// 409 `too_many_secrets`: an endpoint has its most live signing secrets; a
    /// rotation must wait until the oldest grace period ends.
    pub fn too_many_secrets(live: usize) -> Self {
        Self::new(
            ErrorCode::TooManySecrets,
            format!(
                "this endpoint has {live} live secrets, the most allowed; retry after the oldest expires"
            ),
        )
    }

    /// 408 `request_timeout`: the body did not arrive within
    /// `limits.body_read_timeout`. The connection is closed after the answer.
    pub fn request_timeout() -> Self {
        Self::new(
            ErrorCode::RequestTimeout,
            "the request body did not arrive in time",
        )
    }

    /// 413 `payload_too_large`.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            ErrorCode::PayloadTooLarge,
            format!("body exceeds {limit} bytes"),
        )
    }

    /// 422 `validation_failed` naming the field.
    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(ErrorCode::ValidationFailed, message)
        }
    }

    /// 422 `url_blocked`.
    pub fn url_blocked(message: impl Into<String>) -> Self {
        Self {
            field: Some("url".into()),
            ..Self::new(ErrorCode::UrlBlocked, message)
        }
    }

    /// 422 `idempotency_key_reused`.
    pub fn idempotency_key_reused() -> Self {
        Self::new(
            ErrorCode::IdempotencyKeyReused,
            "this Idempotency-Key was used with a different body",
        )
    }

    /// 422 `plugin_rejected`: an upload check refused the plugin; the message names
    /// the check.
    pub fn plugin_rejected(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::PluginRejected, message)
    }

    /// 429 `rate_limited`: too many requests of one kind (plugin uploads: 10 per
    /// tenant per hour); the message says when to try again.
    pub fn rate_limited(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::RateLimited, message)
    }

    /// 500 `internal_error`: a bug in hookgate, logged where it happened.
    pub fn internal() -> Self {
        Self::new(
            ErrorCode::InternalError,
            "internal error; the gateway's log has the details",
        )
    }

    /// 503 `busy`: a shared resource (the plugin compiler) stayed taken; try again.
    pub fn busy(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Busy, message)
    }

    /// 507 `insufficient_storage`.
    pub fn insufficient_storage() -> Self {
        Self::new(
            ErrorCode::InsufficientStorage,
            "free disk is below min_free_disk",
        )
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        if e.failure() == Failure::Refused {
            // The request's own value, which the API's checks should have caught.
            tracing::warn!(error = %e, "the store refused a value the request carried");
            return Self::invalid_field(
                "request",
                "the request carries a value that cannot be stored or looked up \
                 (such as a NUL character)",
            );
        }
        tracing::error!(error = %e, "store error");
        Self::new(
            ErrorCode::StoreUnavailable,
            "storage is unavailable; retry later",
        )
    }
}

impl From<RangeError> for ApiError {
    fn from(e: RangeError) -> Self {
        match e {
            // A rule across fields, refused as recover refuses it.
            RangeError::Empty => Self::validation("until", e.to_string()),
        }
    }
}

impl From<BudgetExceeded> for ApiError {
    /// 422 `simulation_too_large`: a policy simulation over its work budget.
    fn from(e: BudgetExceeded) -> Self {
        Self::new(
            ErrorCode::SimulationTooLarge,
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
        let status = self.status();
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.kind,
                field: self.field,
                message: self.message,
            },
        };
        let mut response = (status, axum::Json(body)).into_response();
        if status == StatusCode::REQUEST_TIMEOUT {
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
mod tests;
