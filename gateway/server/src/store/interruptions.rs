//! Due attempts that could not be made: the delivery ends with a reason naming
//! the cause, or, when hookgate itself failed (a panic), is retried later
//! without the failure counting as an attempt.

use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::{DeliveryRecord, DeliveryState, Store, StoreError, keys, records};
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

/// What [`Store::interrupt`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupted {
    Ended(DeadReason),
    Requeued {
        due_ms: u64,
    },
    /// The entry was no longer the delivery's current one: nothing changed.
    NotCurrent,
}

impl Store {
    /// Settles a due entry whose attempt could not be made (see [`Interruption`]),
    /// in one transaction, if the entry is still its delivery's current one.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn interrupt(
        &self,
        tenant: &str,
        entry: &keys::ScheduleKey,
        now_ms: u64,
        what: Interruption,
    ) -> Result<Interrupted, StoreError> {
        let (ekey, dkey) = (entry.encode(), keys::delivery(tenant, &entry.delivery_id));
        let done = self.inner.records.transaction(|tx| {
            let current = tx
                .get(&dkey)?
                .and_then(|v| records::decode::<DeliveryRecord>(&v).ok())
                .filter(|d| {
                    d.state == DeliveryState::Pending && d.next_attempt_at_ms == Some(entry.due_ms)
                });
            let (Some(mut d), Some(_)) = (current, tx.get(&ekey)?) else {
                return Ok(Interrupted::NotCurrent);
            };
            tx.remove(ekey.as_slice())?;
            let result = match what {
                Interruption::End(reason) => {
                    d.end(reason, now_ms);
                    Interrupted::Ended(reason)
                }
                Interruption::InternalError { max, .. } if d.internal_errors + 1 >= max => {
                    d.internal_errors += 1;
                    d.end(DeadReason::InternalError, now_ms);
                    Interrupted::Ended(DeadReason::InternalError)
                }
                Interruption::InternalError { retry_at_ms, .. } => {
                    d.internal_errors += 1;
                    d.next_attempt_at_ms = Some(retry_at_ms);
                    d.updated_at_ms = now_ms;
                    let next = keys::ScheduleKey {
                        lane: keys::Lane::Retry,
                        due_ms: retry_at_ms,
                        ..entry.clone()
                    };
                    tx.insert(next.encode(), tenant.as_bytes())?;
                    Interrupted::Requeued {
                        due_ms: retry_at_ms,
                    }
                }
            };
            tx.insert(dkey.as_slice(), records::encode(&d))?;
            Ok::<_, ConflictableTransactionError<()>>(result)
        });
        match done {
            Ok(Interrupted::NotCurrent) => Ok(Interrupted::NotCurrent),
            Ok(r) => {
                self.wait_own_write().await?;
                Ok(r)
            }
            Err(TransactionError::Abort(())) => Ok(Interrupted::NotCurrent),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }
}
