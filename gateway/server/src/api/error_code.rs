//! The error codes of the API, each with its status, and the error body's shape.

use axum::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;

/// Every error code the API answers, each with the one status it comes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    InvalidJson,
    InvalidField,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    Conflict,
    TooManySecrets,
    PayloadTooLarge,
    ValidationFailed,
    UrlBlocked,
    IdempotencyKeyReused,
    PluginRejected,
    SimulationTooLarge,
    RateLimited,
    InternalError,
    StoreUnavailable,
    Busy,
    TooManyConnections,
    InsufficientStorage,
}

impl ErrorCode {
    /// Every code, in status order.
    pub const ALL: [Self; 21] = [
        Self::InvalidJson,
        Self::InvalidField,
        Self::Unauthorized,
        Self::Forbidden,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::RequestTimeout,
        Self::Conflict,
        Self::TooManySecrets,
        Self::PayloadTooLarge,
        Self::ValidationFailed,
        Self::UrlBlocked,
        Self::IdempotencyKeyReused,
        Self::PluginRejected,
        Self::SimulationTooLarge,
        Self::RateLimited,
        Self::InternalError,
        Self::StoreUnavailable,
        Self::Busy,
        Self::TooManyConnections,
        Self::InsufficientStorage,
    ];

    /// The code as the body spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidJson => "invalid_json",
            Self::InvalidField => "invalid_field",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::RequestTimeout => "request_timeout",
            Self::Conflict => "conflict",
            Self::TooManySecrets => "too_many_secrets",
            Self::PayloadTooLarge => "payload_too_large",
            Self::ValidationFailed => "validation_failed",
            Self::UrlBlocked => "url_blocked",
            Self::IdempotencyKeyReused => "idempotency_key_reused",
            Self::PluginRejected => "plugin_rejected",
            Self::SimulationTooLarge => "simulation_too_large",
            Self::RateLimited => "rate_limited",
            Self::InternalError => "internal_error",
            Self::StoreUnavailable => "store_unavailable",
            Self::Busy => "busy",
            Self::TooManyConnections => "too_many_connections",
            Self::InsufficientStorage => "insufficient_storage",
        }
    }

    /// The status every answer with this code has.
    pub fn status(self) -> StatusCode {
        match self {
            Self::InvalidJson | Self::InvalidField => StatusCode::BAD_REQUEST,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::Conflict | Self::TooManySecrets => StatusCode::CONFLICT,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::ValidationFailed
            | Self::UrlBlocked
            | Self::IdempotencyKeyReused
            | Self::PluginRejected
            | Self::SimulationTooLarge => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Self::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            Self::StoreUnavailable | Self::Busy | Self::TooManyConnections => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::InsufficientStorage => StatusCode::INSUFFICIENT_STORAGE,
        }
    }
}

/// The error body: `{"error": {...}}`.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorBody {
    pub(super) error: ErrorDetail,
}

/// What went wrong. Fields are in alphabetical order, as clients have always
/// received them.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ErrorDetail {
    pub(super) code: ErrorCode,
    /// The offending field of a validation error (`policy.base_ms`,
    /// `event_types[2]`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) field: Option<String>,
    /// For people; may change between releases, unlike `code`.
    pub(super) message: String,
}
