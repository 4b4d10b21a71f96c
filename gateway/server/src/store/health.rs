//! [`StoreHealth`]: whether storage is failing now, as a state rather than a
//! stream of errors. Any operation that finds storage unavailable or full puts
//! the store in the failing state; only a probe write that succeeds
//! (`recovery.rs`) takes it out. While it fails, `/healthz` answers 503 and the
//! scheduler starts no attempt whose outcome it could not record.
//!
//! Errors are also counted by kind (`hookgate_store_errors_total`), on every
//! backend, where they are mapped to store errors: one gateway per process, so
//! one count per process.

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;
use tokio::time::Instant;

use super::{Failure, StoreError};

/// The kind of a storage error: `unavailable`, `conflict`, `full` or `corrupt`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ErrorKindLabel {
    pub kind: &'static str,
}

/// Storage errors by kind, counted where they are mapped to store errors.
static ERRORS: LazyLock<Family<ErrorKindLabel, Counter>> = LazyLock::new(Family::default);

/// The kinds, as the label names them. A refused value is the client's error
/// and is not counted.
const KINDS: [(Failure, &str); 4] = [
    (Failure::Unavailable, "unavailable"),
    (Failure::Conflict, "conflict"),
    (Failure::Full, "full"),
    (Failure::Corrupt, "corrupt"),
];

/// Counts one error of `failure`'s kind.
pub(crate) fn count_error(failure: Failure) {
    if let Some((_, kind)) = KINDS.iter().find(|(f, _)| *f == failure) {
        ERRORS.get_or_create(&ErrorKindLabel { kind }).inc();
    }
}

/// The error counters, each kind shown from 0.
pub(crate) fn error_counters() -> Family<ErrorKindLabel, Counter> {
    for (_, kind) in KINDS {
        drop(ERRORS.get_or_create(&ErrorKindLabel { kind }));
    }
    ERRORS.clone()
}

/// Whether a failure means storage cannot take writes now (rather than one
/// record, one race or one request being at fault).
fn storage_down(failure: Failure) -> bool {
    matches!(failure, Failure::Unavailable | Failure::Full)
}

/// Whether this store's storage is failing, and since when.
pub(crate) struct StoreHealth {
    failing: watch::Sender<bool>,
    /// 1 while failing: `hookgate_store_failing`.
    gauge: Gauge,
    /// When the store last recovered, and the probes' pause by then.
    last_probing: Mutex<Option<(Instant, Duration)>>,
}

impl Default for StoreHealth {
    fn default() -> Self {
        Self {
            failing: watch::Sender::new(false),
            gauge: Gauge::default(),
            last_probing: Mutex::new(None),
        }
    }
}

impl StoreHealth {
    /// Counts an operation's error, and enters the failing state if it says
    /// storage is down; true if it was this error that entered it.
    pub(crate) fn note(&self, e: &StoreError) -> bool {
        count_error(e.failure());
        storage_down(e.failure()) && self.fail(e)
    }

    /// Enters the failing state; true if it was not failing already.
    pub(crate) fn fail(&self, cause: &StoreError) -> bool {
        let entered = self
            .failing
            .send_if_modified(|failing| !std::mem::replace(failing, true));
        if entered {
            self.gauge.set(1);
            tracing::error!(
                error = %cause,
                "storage is failing: deliveries pause and /healthz answers 503 until a probe write succeeds"
            );
        }
        entered
    }

    /// Leaves the failing state: a probe write succeeded, after probes
    /// `pause` apart.
    pub(crate) fn recovered(&self, pause: Duration) {
        *self.last_probing.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), pause));
        if self
            .failing
            .send_if_modified(|failing| std::mem::replace(failing, false))
        {
            self.gauge.set(0);
            tracing::info!("storage works again: deliveries resume");
        }
    }

    /// When the store last recovered, and the probes' pause by then.
    pub(crate) fn last_probing(&self) -> Option<(Instant, Duration)> {
        *self.last_probing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True while storage is failing.
    pub(crate) fn is_failing(&self) -> bool {
        *self.failing.borrow()
    }

    /// Follows the state: `true` while failing.
    pub(crate) fn watch(&self) -> watch::Receiver<bool> {
        self.failing.subscribe()
    }

    /// The `hookgate_store_failing` gauge.
    pub(crate) fn gauge(&self) -> Gauge {
        self.gauge.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_storage_that_is_down_puts_the_store_in_the_failing_state() {
        let health = StoreHealth::default();
        for failure in [Failure::Conflict, Failure::Refused, Failure::Corrupt] {
            let e = StoreError::Backend {
                failure,
                source: "x".into(),
            };
            assert!(!health.note(&e));
            assert!(!health.is_failing(), "{failure}");
        }
        let seen = health.watch();
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        assert!(
            health.note(&full.into()),
            "a full disk enters the failing state"
        );
        assert!(health.is_failing());
        assert!(seen.has_changed().unwrap());
        assert_eq!(health.gauge().get(), 1);
        // A second error is the same failure, not a second one.
        assert!(!health.note(&StoreError::unavailable("x")));
        assert!(health.is_failing(), "only recovery leaves the state");
        health.recovered(Duration::from_millis(100));
        assert!(!health.is_failing());
        assert_eq!(health.gauge().get(), 0);
    }
}
