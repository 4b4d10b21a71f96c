//! What the delivery engine reads and writes: due schedule entries, and each
//! attempt's outcome recorded in one transaction.

use crate::ids::EndpointId;
use crate::store::DueEntry;
use crate::store::sled::keys::ScheduleKey as _;
use sled::transaction::{
    ConflictableTransactionError, TransactionError, TransactionalTree, UnabortableTransactionError,
};

use super::writer::Job;
use super::{
    AttemptRecord, AttemptWrite, DeliveryRecord, DeliveryState, EndpointRecord, Lane, Lease,
    SledStore, StoreError, WriteResult, keys, records,
};

impl SledStore {
    /// Up to `limit` entries of `endpoint_id` in `lane` due at or before `now_ms`, oldest first.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn due_entries(
        &self,
        lane: Lane,
        endpoint_id: &str,
        now_ms: u64,
        limit: usize,
    ) -> Result<Vec<Lease>, StoreError> {
        let range =
            keys::schedule_of(lane, endpoint_id)..keys::schedule_upto(lane, endpoint_id, now_ms);
        let mut out = Vec::new();
        for k in self.records()?.range(range).keys().take(limit) {
            if let Some(entry) = DueEntry::decode(&k?) {
                out.push(Lease(entry, 0, None));
            }
        }
        Ok(out)
    }

    /// See [`crate::store::Store::due_first_attempts`].
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn due_first_attempts(
        &self,
        endpoints: &[EndpointId],
        now_ms: u64,
        cap: usize,
    ) -> Result<usize, StoreError> {
        let records = self.records()?;
        let mut counted = 0;
        for ep in endpoints {
            if counted >= cap {
                break;
            }
            let range =
                keys::schedule_of(Lane::First, ep)..keys::schedule_upto(Lane::First, ep, now_ms);
            counted += records.range(range).keys().take(cap - counted).count();
        }
        Ok(counted)
    }

    /// The earliest due time in either lane of `endpoint_id` after `after_ms`
    /// (`None`: from the start), if any.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn next_due(
        &self,
        endpoint_id: &str,
        after_ms: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        let mut best: Option<u64> = None;
        for lane in Lane::ALL {
            let start = match after_ms {
                Some(t) => keys::schedule_upto(lane, endpoint_id, t),
                None => keys::schedule_of(lane, endpoint_id),
            };
            let end = keys::schedule_end(lane, endpoint_id);
            if let Some(k) = self.records()?.range(start..end).keys().next()
                && let Some(e) = DueEntry::decode(&k?)
            {
                best = Some(best.map_or(e.due_ms, |b| b.min(e.due_ms)));
            }
        }
        Ok(best)
    }

    /// The delivery a due schedule entry names, if the entry is still its current
    /// one: the entry exists, and the delivery is pending and due at the entry's
    /// time. An entry left behind (its delivery gone, finished or moved to another
    /// time) is removed, so it is never served again; `None` then.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn due_delivery(
        &self,
        tenant: &str,
        lease: &Lease,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        let entry = &lease.0;
        let ekey = entry.encode();
        if !self.records()?.contains_key(&ekey)? {
            // Already attempted and moved on (another lease got there first).
            return Ok(None);
        }
        let dkey = keys::delivery(tenant, &entry.delivery_id);
        let current = |d: &DeliveryRecord| {
            d.state == DeliveryState::Pending && d.next_attempt_at_ms == Some(entry.due_ms)
        };
        if let Some(d) = self.get::<DeliveryRecord>(&dkey)?
            && current(&d)
        {
            return Ok(Some(d));
        }
        // Re-checked in a transaction, so a concurrent re-schedule is never undone.
        let removed = self.records()?.transaction(|tx| {
            let d = tx.get(&dkey)?.and_then(|v| records::decode(&v).ok());
            if !d.as_ref().is_some_and(current) {
                tx.remove(ekey.as_slice())?;
            }
            Ok::<_, ConflictableTransactionError<()>>(())
        });
        match removed {
            Ok(()) | Err(TransactionError::Abort(())) => Ok(None),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }

    /// One event's payload bytes.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn event_payload(
        &self,
        tenant: &str,
        event_id: &str,
    ) -> Result<Option<crate::store::EventBody>, StoreError> {
        Ok(self.event(tenant, event_id)?.map(|e| {
            let payload = match e.labels.expunged_at_ms {
                Some(_) => crate::store::EXPUNGED.to_owned(),
                None => e.payload.get().to_owned(),
            };
            crate::store::EventBody {
                payload,
                trace: e.labels.trace,
                seen: Some(crate::store::EventSeen {
                    channels: e.labels.channels,
                    tags: e.labels.tags,
                    created_at_ms: e.created_at_ms,
                }),
            }
        }))
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
    pub(crate) async fn record_attempt(
        &self,
        w: AttemptWrite<'_>,
    ) -> Result<WriteResult, StoreError> {
        let (written, _) = self
            .apply(Job::Attempt(Box::new(PreparedAttempt::new(&w))))
            .await?;
        Ok(written)
    }

    /// See [`crate::store::Store::record_late_attempt`]: through the write
    /// queue, like any outcome.
    ///
    /// # Errors
    /// `Unavailable` if the write failed.
    pub(crate) async fn record_late_attempt(
        &self,
        tenant: &str,
        delivery_id: &str,
        late: &AttemptRecord,
    ) -> Result<WriteResult, StoreError> {
        let node = late.node_id.as_deref().unwrap_or_default();
        let prepared = PreparedLateAttempt {
            delivery_key: keys::delivery(tenant, delivery_id),
            key: keys::late_attempt(delivery_id, late.series, late.attempt, node),
            attempt: records::encode(late),
            copy: super::attempts::record_key(tenant, late),
        };
        let (written, _) = self.apply(Job::LateAttempt(Box::new(prepared))).await?;
        Ok(written)
    }
}

/// A late attempt's log entry, encoded ahead of its round.
pub(crate) struct PreparedLateAttempt {
    delivery_key: Vec<u8>,
    key: Vec<u8>,
    attempt: Vec<u8>,
    /// Where its copy under its endpoint goes, for the attempt lists.
    copy: Option<Vec<u8>>,
}

impl PreparedLateAttempt {
    /// Writes the entry while the delivery exists (a deleted one keeps no log).
    pub(crate) fn apply(
        &self,
        tx: &TransactionalTree,
    ) -> Result<WriteResult, UnabortableTransactionError> {
        if tx.get(&self.delivery_key)?.is_none() {
            return Ok(WriteResult::Stale);
        }
        tx.insert(self.key.as_slice(), self.attempt.as_slice())?;
        if let Some(copy) = &self.copy {
            tx.insert(copy.as_slice(), self.attempt.as_slice())?;
        }
        Ok(WriteResult::Written)
    }
}

/// An [`AttemptWrite`] encoded ahead of its round, so the round does no encoding.
pub(crate) struct PreparedAttempt {
    delivery_key: Vec<u8>,
    delivery: Vec<u8>,
    endpoint_key: Vec<u8>,
    expected_series: u32,
    expected_attempts: u32,
    attempt_key: Vec<u8>,
    attempt: Vec<u8>,
    old_entry: Vec<u8>,
    next_entry: Option<Vec<u8>>,
    tenant: Vec<u8>,
    /// The reason and time to disable the endpoint with.
    disable: Option<(String, u64)>,
}

impl PreparedAttempt {
    fn new(w: &AttemptWrite<'_>) -> Self {
        let d = w.delivery;
        // An attempt with an id is kept under its endpoint, and its delivery
        // records the id; one without, under its delivery's log.
        let (attempt_key, delivery) = match super::attempts::record_key(&d.tenant_id, w.attempt) {
            Some(key) => {
                let mut with_id = d.clone();
                with_id.attempt_ids.extend(w.attempt.id.clone());
                (key, records::encode(&with_id))
            }
            None => (
                keys::attempt(&d.id, w.attempt.series, w.attempt.attempt),
                records::encode(d),
            ),
        };
        Self {
            delivery_key: keys::delivery(&d.tenant_id, &d.id),
            delivery,
            endpoint_key: keys::endpoint(&d.tenant_id, &d.endpoint_id),
            expected_series: w.expected_series,
            expected_attempts: w.expected_attempts,
            attempt_key,
            attempt: records::encode(w.attempt),
            old_entry: w.lease.0.encode(),
            next_entry: w.next_due_ms.map(|due_ms| {
                DueEntry {
                    lane: Lane::Retry,
                    due_ms,
                    ..w.lease.0.clone()
                }
                .encode()
            }),
            tenant: d.tenant_id.as_bytes().to_vec(),
            disable: w
                .disable_endpoint
                .clone()
                .map(|reason| (reason, d.updated_at_ms)),
        }
    }

    /// Writes the outcome unless the delivery moved on meanwhile (deleted endpoint,
    /// replay, or another lease that consumed the same schedule entry).
    pub(crate) fn apply(
        &self,
        tx: &TransactionalTree,
    ) -> Result<WriteResult, UnabortableTransactionError> {
        let current = tx
            .get(&self.delivery_key)?
            .and_then(|v| records::decode::<DeliveryRecord>(&v).ok());
        let moved_on = current.is_none_or(|cur| {
            cur.state != DeliveryState::Pending
                || cur.series != self.expected_series
                || cur.attempts != self.expected_attempts
        });
        if moved_on || tx.get(&self.old_entry)?.is_none() {
            return Ok(WriteResult::Stale);
        }
        let Some(ep_bytes) = tx.get(&self.endpoint_key)? else {
            return Ok(WriteResult::Stale);
        };
        if let Some((reason, at_ms)) = &self.disable
            && let Ok(mut ep) = records::decode::<EndpointRecord>(&ep_bytes)
            && !ep.disabled
        {
            ep.disabled = true;
            ep.disabled_reason = Some(reason.clone());
            ep.disabled_at_ms = Some(*at_ms);
            tx.insert(self.endpoint_key.as_slice(), records::encode(&ep))?;
        }
        tx.insert(self.delivery_key.as_slice(), self.delivery.as_slice())?;
        tx.insert(self.attempt_key.as_slice(), self.attempt.as_slice())?;
        tx.remove(self.old_entry.as_slice())?;
        if let Some(next) = &self.next_entry {
            tx.insert(next.as_slice(), self.tenant.as_slice())?;
        }
        Ok(WriteResult::Written)
    }
}

#[cfg(test)]
mod tests;
