//! What the delivery engine reads and writes: due work as leases, and each
//! attempt's outcome, written only while its lease is still current.

use super::{AttemptRecord, DeliveryRecord, Lane, Lease, Store, StoreError};
use crate::ids::{DeliveryId, EndpointId, TenantId};
use crate::policy::DeadReason;

/// Why a due attempt could not be made, and what becomes of its delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// End it `dead` with this reason (its event is missing, no request can be built).
    End(DeadReason),
    /// hookgate itself failed during the attempt (a panic): not an attempt, so
    /// retried at `retry_at_ms` without counting toward `max_attempts`; the
    /// `max`-th such failure of a series ends it `internal_error`.
    InternalError { retry_at_ms: u64, max: u32 },
}

/// What [`SledStore::interrupt`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupted {
    Ended(DeadReason),
    Requeued {
        due_ms: u64,
    },
    /// The entry was no longer the delivery's current one: nothing changed.
    NotCurrent,
}

/// The outcome of one attempt, to be written atomically.
pub struct AttemptWrite<'a> {
    /// The delivery as it should be stored after this attempt.
    pub delivery: &'a DeliveryRecord,
    /// The series and attempt count the worker started from; if the stored record
    /// moved on meanwhile (deleted endpoint, replay), the write is dropped.
    pub expected_series: u32,
    pub expected_attempts: u32,
    pub attempt: &'a AttemptRecord,
    /// The lease the attempt was made under; the write is `Stale` once it is not
    /// current.
    pub lease: &'a Lease,
    /// When the next attempt is due, for a retry.
    pub next_due_ms: Option<u64>,
    /// Disable the endpoint with this reason (410 Gone).
    pub disable_endpoint: Option<String>,
}

/// Whether an outcome was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteResult {
    Written,
    /// The delivery changed under the attempt; nothing was written.
    Stale,
}

impl Interruption {
    /// What this interruption makes of `d`, changed in place: ended, or due again
    /// at the retry time with the failure counted (the same for every backend).
    pub(crate) fn settle(self, d: &mut DeliveryRecord, now_ms: u64) -> Interrupted {
        match self {
            Self::End(reason) => {
                d.end(reason, now_ms);
                Interrupted::Ended(reason)
            }
            Self::InternalError { max, .. } if d.internal_errors + 1 >= max => {
                d.internal_errors += 1;
                d.end(DeadReason::InternalError, now_ms);
                Interrupted::Ended(DeadReason::InternalError)
            }
            Self::InternalError { retry_at_ms, .. } => {
                d.internal_errors += 1;
                d.next_attempt_at_ms = Some(retry_at_ms);
                d.updated_at_ms = now_ms;
                Interrupted::Requeued {
                    due_ms: retry_at_ms,
                }
            }
        }
    }
}

impl Store {
    /// Settles a due entry whose attempt could not be made (see [`Interruption`]),
    /// in one transaction, if the entry is still its delivery's current one.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn interrupt(
        &self,
        tenant: &TenantId,
        lease: &Lease,
        now_ms: u64,
        what: Interruption,
    ) -> Result<Interrupted, StoreError> {
        on_backend!(self, s => s.interrupt(tenant, lease, now_ms, what).await)
    }

    /// Whether [`Store::due_entries`] claims what it hands out, so a later scan
    /// no longer shows it (a backend several gateways share), rather than
    /// showing it again until its outcome is written (the embedded one, whose
    /// one process tracks its leases in memory).
    pub fn claims_due_work(&self) -> bool {
        matches!(self.backend, super::Backend::Postgres(_))
    }

    /// Up to `limit` entries of `endpoint_id` in `lane` due at or before `now_ms`,
    /// oldest first. On a backend that claims them, each is leased to the caller
    /// until its outcome is written or the lease expires.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn due_entries(
        &self,
        lane: Lane,
        endpoint_id: &EndpointId,
        now_ms: u64,
        limit: usize,
    ) -> Result<Vec<Lease>, StoreError> {
        on_backend!(self, s => sync s.due_entries(lane, endpoint_id, now_ms, limit))
    }

    /// How many first attempts of `endpoints` are due by `now_ms` and not yet
    /// started, counted up to `cap` (the backlog an ingest admission weighs).
    /// The embedded store also counts those in flight, at most each endpoint's
    /// `max_in_flight`.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn due_first_attempts(
        &self,
        endpoints: &[EndpointId],
        now_ms: u64,
        cap: usize,
    ) -> Result<usize, StoreError> {
        on_backend!(self, s => sync s.due_first_attempts(endpoints, now_ms, cap))
    }

    /// The earliest due time in either lane of `endpoint_id` after `after_ms`
    /// (`None`: from the start), if any.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn next_due(
        &self,
        endpoint_id: &EndpointId,
        after_ms: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        on_backend!(self, s => sync s.next_due(endpoint_id, after_ms))
    }

    /// The delivery a due schedule entry names, if the entry is still its current
    /// one: the entry exists, and the delivery is pending and due at the entry's
    /// time. An entry left behind (its delivery gone, finished or moved to another
    /// time) is removed, so it is never served again; `None` then.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn due_delivery(
        &self,
        tenant: &TenantId,
        lease: &Lease,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        on_backend!(self, s => sync s.due_delivery(tenant, lease))
    }

    /// Records an attempt: the delivery, its log entry, the schedule move and any
    /// endpoint change, in one transaction shared with the other writes of its round
    /// ([`super::writer`]). The next group commit (or sled's periodic flush) makes
    /// it durable; this neither triggers nor waits for one: an outcome lost in a
    /// crash only means the attempt is made again (at-least-once), and flushing per
    /// outcome made the disk, not the network, the limit on delivery throughput.
    ///
    /// # Errors
    /// `Unavailable` if the write failed.
    pub async fn record_attempt(&self, w: AttemptWrite<'_>) -> Result<WriteResult, StoreError> {
        on_backend!(self, s => s.record_attempt(w).await)
    }

    /// Appends an attempt whose outcome was `Stale` to its delivery's log,
    /// marked late: it reached the receiver, so the log shows it, but it
    /// changes nothing else (the fencing stands). Kept apart from the attempts
    /// written under their lease, so it never takes the place of the attempt
    /// with the same number that the current lease made. `Stale` if the
    /// delivery no longer exists.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn record_late_attempt(
        &self,
        tenant: &TenantId,
        delivery_id: &DeliveryId,
        attempt: &AttemptRecord,
    ) -> Result<WriteResult, StoreError> {
        let late = AttemptRecord {
            late: true,
            ..attempt.clone()
        };
        on_backend!(self, s => s.record_late_attempt(tenant, delivery_id, &late).await)
    }
}
