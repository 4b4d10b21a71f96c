//! What one delivery attempt produced, and the facts a retry decision needs about it.
//!
//! These are the inputs of every decision ([`decide`](super::decide)): the built-in
//! policy and a bound plugin read the same [`AttemptFacts`].

use serde::{Deserialize, Serialize};

/// Why an attempt ended without an HTTP status or a broker's confirmation;
/// recorded as the attempt's error kind. The last five come from brokers
/// (docs/destinations.md).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The whole request overran the endpoint's `timeout_ms`.
    Timeout,
    /// The TCP connection could not be established.
    Connect,
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake failed.
    Tls,
    /// The connection was reset or closed mid-request.
    Reset,
    /// A redirect; hookgate never follows them (3xx statuses report this kind too).
    Redirect,
    /// The peer spoke malformed HTTP, or a broker broke its protocol.
    Protocol,
    /// The broker refused the credentials or their rights.
    AuthRefused,
    /// No such exchange, queue, stream or topic, or nothing bound to route to.
    NotFound,
    /// The message is larger than the broker takes.
    TooLarge,
    /// The broker or service asked to slow down.
    Throttled,
    /// The broker took the message and refused it (a RabbitMQ nack).
    Rejected,
    /// The endpoint's transform trapped, overran its limits, or answered a
    /// request the host refuses: nothing was sent.
    TransformFailed,
}

impl FailureKind {
    /// Every kind, in declaration order.
    pub const ALL: [FailureKind; 13] = [
        Self::Timeout,
        Self::Connect,
        Self::Dns,
        Self::Tls,
        Self::Reset,
        Self::Redirect,
        Self::Protocol,
        Self::AuthRefused,
        Self::NotFound,
        Self::TooLarge,
        Self::Throttled,
        Self::Rejected,
        Self::TransformFailed,
    ];

    /// The snake_case name used in the attempt log, metrics and the WIT `failure-kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Connect => "connect",
            Self::Dns => "dns",
            Self::Tls => "tls",
            Self::Reset => "reset",
            Self::Redirect => "redirect",
            Self::Protocol => "protocol",
            Self::AuthRefused => "auth_refused",
            Self::NotFound => "not_found",
            Self::TooLarge => "too_large",
            Self::Throttled => "throttled",
            Self::Rejected => "rejected",
            Self::TransformFailed => "transform_failed",
        }
    }

    /// Whether only a broker reports this kind: plugins built against a world
    /// older than 0.3.0 have no name for it, so the built-in decides it.
    pub fn from_broker_only(self) -> bool {
        matches!(
            self,
            Self::AuthRefused | Self::NotFound | Self::TooLarge | Self::Throttled | Self::Rejected
        )
    }
}

/// What one attempt produced: a response status, a broker's confirmation, or a
/// failure.
///
/// A 3xx response is `Status(3xx)`; [`Outcome::error_kind`] reports it as `redirect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The receiver answered with this HTTP status.
    Status(u16),
    /// A broker confirmed the message (a destination of another kind than `http`).
    Published,
    /// No usable response arrived.
    Failure(FailureKind),
}

impl Outcome {
    /// The HTTP status, when a response arrived.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status(status) => Some(*status),
            Self::Published | Self::Failure(_) => None,
        }
    }

    /// Whether the attempt delivered: a 2xx, or a broker's confirmation.
    pub fn delivered(&self) -> bool {
        matches!(self, Self::Status(200..=299) | Self::Published)
    }

    /// The error kind to record for this attempt: the failure itself, or `redirect` for a
    /// 3xx (redirects are never followed). Other statuses have none.
    pub fn error_kind(&self) -> Option<FailureKind> {
        match self {
            Self::Status(300..=399) => Some(FailureKind::Redirect),
            Self::Status(_) | Self::Published => None,
            Self::Failure(kind) => Some(*kind),
        }
    }
}

/// Everything a policy needs about the attempt that just ended.
///
/// All times are Unix milliseconds read from the gateway's `Clock`, so the same facts
/// and seed always give the same decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptFacts<'a> {
    /// What the attempt produced.
    pub outcome: &'a Outcome,
    /// 1-based number of the attempt that just finished, within the current series.
    pub attempt: u32,
    /// When the series' first attempt started; `retry_window` runs from here.
    pub first_attempt_at_ms: u64,
    /// When this attempt ended; the next delay is measured from here.
    pub now_ms: u64,
    /// The raw `Retry-After` header of the response, if any.
    pub retry_after: Option<&'a str>,
    /// The raw `Date` header of the response, the reference for an HTTP-date Retry-After.
    pub date: Option<&'a str>,
    /// The delay chosen after the previous attempt (decorrelated jitter grows from it).
    pub prev_delay_ms: Option<u64>,
    /// Seed for the jitter draw: same facts and seed give the same delay.
    pub seed: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_report_the_redirect_kind() {
        assert_eq!(
            Outcome::Status(301).error_kind(),
            Some(FailureKind::Redirect)
        );
        assert_eq!(
            Outcome::Status(308).error_kind(),
            Some(FailureKind::Redirect)
        );
        assert_eq!(Outcome::Status(200).error_kind(), None);
        assert_eq!(Outcome::Status(503).error_kind(), None);
        assert_eq!(
            Outcome::Failure(FailureKind::Dns).error_kind(),
            Some(FailureKind::Dns)
        );
    }

    #[test]
    fn failure_kinds_serialise_as_snake_case() {
        for kind in FailureKind::ALL {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::from(kind.as_str()));
            assert_eq!(serde_json::from_value::<FailureKind>(json).unwrap(), kind);
        }
    }

    #[test]
    fn outcome_serialises_readably() {
        let status = serde_json::to_string(&Outcome::Status(503)).unwrap();
        assert_eq!(status, r#"{"status":503}"#);
        let failure = serde_json::to_string(&Outcome::Failure(FailureKind::Timeout)).unwrap();
        assert_eq!(failure, r#"{"failure":"timeout"}"#);
        assert_eq!(Outcome::Status(404).status(), Some(404));
        assert_eq!(Outcome::Failure(FailureKind::Tls).status(), None);
    }
}
