//! The one trait every broker kind implements: connect once, publish many.

use std::future::Future;
use std::pin::Pin;

use super::BrokerMessage;
use crate::policy::FailureKind;

/// A boxed publish or connect, so kinds can sit behind `dyn`.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the broker answered when it confirmed a message, for the attempt log
/// (`confirmed`, `stream ORDERS seq 42`, `XADD 1733-0`).
pub(crate) type Receipt = String;

/// Why a publish was not confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PublishFailure {
    pub(crate) kind: FailureKind,
    /// The broker's or the transport's words.
    pub(crate) message: String,
    /// The service's back-off hint in seconds, when it throttled.
    pub(crate) retry_after_s: Option<u64>,
}

impl std::fmt::Display for PublishFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

/// So a transport under a client library can carry the failure up whole.
impl std::error::Error for PublishFailure {}

impl PublishFailure {
    /// A failure of `kind`, in `message`'s words.
    pub(crate) fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            retry_after_s: None,
        }
    }

    /// Whether the connection should be dropped and made again: after
    /// anything but a refusal of this one message, it may be broken.
    pub(crate) fn breaks_connection(&self) -> bool {
        !matches!(self.kind, FailureKind::TooLarge | FailureKind::Rejected)
    }
}

/// A connected publisher of one destination. Deadlines are the caller's:
/// a future it drops simply stops.
pub(crate) trait Publisher: Send + Sync {
    /// Publishes `message` and waits for the broker's confirmation.
    fn publish<'a>(
        &'a self,
        message: &'a BrokerMessage,
    ) -> BoxFuture<'a, Result<Receipt, PublishFailure>>;
}
