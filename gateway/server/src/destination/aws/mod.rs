//! Amazon SQS, SNS and Kinesis, through the official AWS SDK for Rust.
//!
//! The SDK is given only what the destination holds: its region, its
//! endpoint override, the credentials as given or named (never the SDK's
//! default chain: no `~/.aws`, no `credential_process`, no instance metadata),
//! and the gateway's own HTTP client, whose connector passes every address
//! through the guard. It retries nothing and times nothing itself: an attempt
//! is one request, inside the attempt's deadline, and the engine's retry
//! chain decides what follows.

mod attributes;
mod kinesis;
mod settings;
mod sns;
mod sqs;

use aws_credential_types::provider::SharedCredentialsProvider;
use aws_smithy_runtime_api::client::behavior_version::BehaviorVersion;
use aws_smithy_runtime_api::client::http::SharedHttpClient;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::display::DisplayErrorContext;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;
use aws_smithy_types::retry::RetryConfig;
use aws_types::SdkConfig;
use aws_types::region::Region;
use aws_types::sdk_config::StalledStreamProtectionConfig;

pub(super) use kinesis::KinesisPublisher;
pub(crate) use settings::{
    Fault, KinesisSettings, SnsSettings, SqsSettings, check_credentials, check_pointer,
    check_queue_url, check_region, check_stream, check_topic_arn, service_url,
};
pub(super) use sns::SnsPublisher;
pub(super) use sqs::SqsPublisher;

use super::{Credentials, PublishFailure};
use crate::policy::FailureKind;

/// The SDK's config for one destination.
///
/// # Errors
/// `auth_refused` when the credentials lack a key id or its secret.
pub(super) fn sdk_config(
    region: &str,
    endpoint_url: Option<&str>,
    credentials: Option<&Credentials>,
    http: SharedHttpClient,
) -> Result<SdkConfig, PublishFailure> {
    let (Some(key_id), Some(secret)) = (
        credentials.and_then(|c| c.access_key_id.clone()),
        credentials.and_then(|c| c.secret_access_key.clone()),
    ) else {
        return Err(PublishFailure::new(
            FailureKind::AuthRefused,
            "the destination's credentials hold no access_key_id and secret_access_key",
        ));
    };
    let session = credentials.and_then(|c| c.session_token.clone());
    let keys = aws_credential_types::Credentials::new(key_id, secret, session, None, "hookgate");
    let mut config = SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region.to_owned()))
        .credentials_provider(SharedCredentialsProvider::new(keys))
        .http_client(http)
        .retry_config(RetryConfig::disabled())
        .stalled_stream_protection(StalledStreamProtectionConfig::disabled());
    if let Some(url) = endpoint_url {
        config = config.endpoint_url(url);
    }
    Ok(config.build())
}

/// The failure kind of an SDK error, and its words.
pub(super) fn classify<E>(e: &SdkError<E, HttpResponse>) -> PublishFailure
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    let (kind, message) = match e {
        SdkError::TimeoutError(_) => (
            FailureKind::Timeout,
            "the service did not answer in time".to_owned(),
        ),
        SdkError::DispatchFailure(d) => {
            // The gateway's own transport says what went wrong in its terms.
            let mut source = std::error::Error::source(e);
            while let Some(err) = source {
                if let Some(f) = err.downcast_ref::<PublishFailure>() {
                    return PublishFailure::new(f.kind, f.message.clone());
                }
                source = err.source();
            }
            let kind = if d.is_timeout() {
                FailureKind::Timeout
            } else {
                FailureKind::Connect
            };
            (kind, DisplayErrorContext(e).to_string())
        }
        SdkError::ServiceError(s) => {
            let status = s.raw().status().as_u16();
            let code = e.code().unwrap_or_default();
            let words = e.message().unwrap_or_default();
            (
                service_kind(code, words, status),
                format!("{status} {code}: {words}"),
            )
        }
        // An answer the SDK could not read (an emulator's XML 403 to a JSON
        // service, a proxy's page): its status alone says what it was.
        SdkError::ResponseError(r) => {
            let status = r.raw().status().as_u16();
            (
                by_status(status).unwrap_or(FailureKind::Protocol),
                format!("{status} with a body the SDK could not read"),
            )
        }
        _ => (FailureKind::Protocol, DisplayErrorContext(e).to_string()),
    };
    let mut failure = PublishFailure::new(kind, message);
    if kind == FailureKind::Throttled {
        failure.retry_after_s = retry_after(e.raw_response());
    }
    failure
}

/// What a status alone says, where it says something.
fn by_status(status: u16) -> Option<FailureKind> {
    match status {
        401 | 403 => Some(FailureKind::AuthRefused),
        404 => Some(FailureKind::NotFound),
        413 => Some(FailureKind::TooLarge),
        429 | 503 => Some(FailureKind::Throttled),
        _ => None,
    }
}

/// A service error's kind from its code, its words and its status.
fn service_kind(code: &str, message: &str, status: u16) -> FailureKind {
    const AUTH: [&str; 10] = [
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "SignatureDoesNotMatch",
        "IncompleteSignature",
        "InvalidAccessKeyId",
        "ExpiredToken",
        "ExpiredTokenException",
        "AccessDenied",
        "AccessDeniedException",
        "AuthorizationError",
    ];
    const NOT_FOUND: [&str; 5] = [
        "AWS.SimpleQueueService.NonExistentQueue",
        "QueueDoesNotExist",
        "NotFound",
        "NotFoundException",
        "ResourceNotFoundException",
    ];
    const THROTTLED: [&str; 8] = [
        "Throttling",
        "ThrottlingException",
        "RequestThrottled",
        "ProvisionedThroughputExceededException",
        "KMSThrottlingException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "ServiceUnavailable",
    ];
    let lower = message.to_ascii_lowercase();
    if AUTH.contains(&code) {
        FailureKind::AuthRefused
    } else if NOT_FOUND.contains(&code) {
        FailureKind::NotFound
    } else if THROTTLED.contains(&code) {
        FailureKind::Throttled
    } else if let Some(kind) = by_status(status) {
        kind
    } else if lower.contains("shorter than")
        || lower.contains("too long")
        || lower.contains("too large")
        || (lower.contains("length less than or equal to") && lower.contains("data"))
    {
        FailureKind::TooLarge
    } else {
        FailureKind::Rejected
    }
}

/// A `Retry-After` in seconds, should the service have sent one.
fn retry_after(raw: Option<&HttpResponse>) -> Option<u64> {
    raw?.headers()
        .get("retry-after")
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_errors_fall_into_the_broker_kinds() {
        let kind = |code, message, status| service_kind(code, message, status);
        assert_eq!(
            kind("InvalidClientTokenId", "", 403),
            FailureKind::AuthRefused
        );
        assert_eq!(
            kind("UnrecognizedClientException", "", 400),
            FailureKind::AuthRefused
        );
        assert_eq!(
            kind("AWS.SimpleQueueService.NonExistentQueue", "", 400),
            FailureKind::NotFound
        );
        assert_eq!(
            kind("NotFound", "Topic does not exist", 404),
            FailureKind::NotFound
        );
        assert_eq!(
            kind("ResourceNotFoundException", "", 400),
            FailureKind::NotFound
        );
        assert_eq!(
            kind("ProvisionedThroughputExceededException", "", 400),
            FailureKind::Throttled
        );
        assert_eq!(
            kind(
                "InvalidParameterValue",
                "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.",
                400
            ),
            FailureKind::TooLarge
        );
        assert_eq!(
            kind(
                "InvalidParameter",
                "Invalid parameter: Message too long",
                400
            ),
            FailureKind::TooLarge
        );
        assert_eq!(
            kind("InvalidParameterValue", "bad group", 400),
            FailureKind::Rejected
        );
    }
}
