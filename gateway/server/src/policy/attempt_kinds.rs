//! The names an attempt is recorded under: its verdict's kind and its error kind.
//!
//! Both are stored in the attempt log and shown by the API as snake_case strings:
//! a variant's serialised name is the string data dirs hold, so it never changes.

use serde::de::IntoDeserializer;
use serde::{Deserialize, Serialize};

use super::FailureKind;

/// A [`Verdict`] without its details: what the attempt log records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    Delivered,
    Retry,
    GiveUp,
    DisableEndpoint,
    Skipped,
}

impl VerdictKind {
    /// The snake_case name recorded in the attempt log.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retry => "retry",
            Self::GiveUp => "give_up",
            Self::DisableEndpoint => "disable_endpoint",
            Self::Skipped => "skipped",
        }
    }
}

/// Why an attempt got no usable response: the transport failed, or hookgate refused
/// the address it resolved to. Recorded as the attempt's `error_kind` and the
/// delivery's `last_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum ErrorKind {
    /// The request failed on the way (a 3xx reports `redirect` too).
    Failure(FailureKind),
    /// The endpoint resolved to a non-global address; nothing was sent.
    BlockedAddress,
}

impl ErrorKind {
    /// The snake_case name used in the attempt log and the metrics' `error_kind` label.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Failure(kind) => kind.as_str(),
            Self::BlockedAddress => "blocked_address",
        }
    }
}

impl From<FailureKind> for ErrorKind {
    fn from(kind: FailureKind) -> Self {
        Self::Failure(kind)
    }
}

impl From<ErrorKind> for &'static str {
    fn from(kind: ErrorKind) -> Self {
        kind.as_str()
    }
}

/// A name that is no [`ErrorKind`].
#[derive(Debug, thiserror::Error)]
#[error("unknown error kind {0:?}")]
pub struct UnknownErrorKind(String);

impl TryFrom<String> for ErrorKind {
    type Error = UnknownErrorKind;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        if name == Self::BlockedAddress.as_str() {
            return Ok(Self::BlockedAddress);
        }
        let failure = FailureKind::deserialize(
            IntoDeserializer::<serde::de::value::Error>::into_deserializer(name.as_str()),
        );
        failure
            .map(Self::Failure)
            .map_err(|_| UnknownErrorKind(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Verdict;

    const FAILURES: [FailureKind; 13] = FailureKind::ALL;

    #[test]
    fn error_kinds_serialise_as_their_names_and_read_back() {
        let kinds = FAILURES.map(ErrorKind::from);
        for kind in kinds.into_iter().chain([ErrorKind::BlockedAddress]) {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::from(kind.as_str()));
            assert_eq!(serde_json::from_value::<ErrorKind>(json).unwrap(), kind);
        }
        assert_eq!(ErrorKind::BlockedAddress.as_str(), "blocked_address");
        assert!(serde_json::from_str::<ErrorKind>(r#""gremlins""#).is_err());
    }

    #[test]
    fn verdict_kinds_are_the_verdicts_names() {
        let verdicts = [
            Verdict::Delivered,
            Verdict::Retry,
            Verdict::GiveUp { reason: "x".into() },
            Verdict::DisableEndpoint,
            Verdict::Skipped { reason: "x".into() },
        ];
        for verdict in verdicts {
            let kind = verdict.kind();
            assert_eq!(kind.as_str(), verdict.as_str());
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::from(kind.as_str()));
            assert_eq!(serde_json::from_value::<VerdictKind>(json).unwrap(), kind);
        }
    }
}
