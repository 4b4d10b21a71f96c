//! Due attempts that could not be made: the delivery ends with a reason naming
//! the cause, or, when hookgate itself failed (a panic), is retried later
//! without the failure counting as an attempt.

use crate::store::DueEntry;
use crate::store::sled::keys::ScheduleKey as _;
use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::{
    DeliveryRecord, DeliveryState, Interrupted, Interruption, Lane, Lease, SledStore, StoreError,
    keys, records,
};

impl SledStore {
    /// Settles a due entry whose attempt could not be made (see [`Interruption`]),
    /// in one transaction, if the entry is still its delivery's current one.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn interrupt(
        &self,
        tenant: &str,
        lease: &Lease,
        now_ms: u64,
        what: Interruption,
    ) -> Result<Interrupted, StoreError> {
        let entry = &lease.0;
        let (ekey, dkey) = (entry.encode(), keys::delivery(tenant, &entry.delivery_id));
        let (done, seq) = {
            let db = self.held()?;
            let done = db.records.transaction(|tx| {
                let current = tx
                    .get(&dkey)?
                    .and_then(|v| records::decode::<DeliveryRecord>(&v).ok())
                    .filter(|d| {
                        d.state == DeliveryState::Pending
                            && d.next_attempt_at_ms == Some(entry.due_ms)
                    });
                let (Some(mut d), Some(_)) = (current, tx.get(&ekey)?) else {
                    return Ok(Interrupted::NotCurrent);
                };
                tx.remove(ekey.as_slice())?;
                let result = what.settle(&mut d, now_ms);
                if let Interrupted::Requeued { due_ms } = result {
                    let next = DueEntry {
                        lane: Lane::Retry,
                        due_ms,
                        ..entry.clone()
                    };
                    tx.insert(next.encode(), tenant.as_bytes())?;
                }
                tx.insert(dkey.as_slice(), records::encode(&d))?;
                Ok::<_, ConflictableTransactionError<()>>(result)
            });
            let seq =
                matches!(&done, Ok(r) if *r != Interrupted::NotCurrent).then(|| self.sequence(&db));
            (done, seq)
        };
        match done {
            Ok(Interrupted::NotCurrent) => Ok(Interrupted::NotCurrent),
            Ok(r) => {
                if let Some(seq) = seq {
                    self.wait_written(seq).await?;
                }
                Ok(r)
            }
            Err(TransactionError::Abort(())) => Ok(Interrupted::NotCurrent),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }
}
