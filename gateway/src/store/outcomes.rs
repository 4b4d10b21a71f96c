//! What the delivery engine reads and writes: due schedule entries, and each
//! attempt's outcome recorded in one transaction.

use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::{
    AttemptRecord, DeliveryRecord, DeliveryState, EndpointRecord, Store, StoreError, keys, records,
};

/// The outcome of one attempt, to be written atomically.
pub struct AttemptWrite<'a> {
    /// The delivery as it should be stored after this attempt.
    pub delivery: &'a DeliveryRecord,
    /// The series and attempt count the worker started from; if the stored record
    /// moved on meanwhile (deleted endpoint, replay), the write is dropped.
    pub expected_series: u32,
    pub expected_attempts: u32,
    pub attempt: &'a AttemptRecord,
    /// The schedule entry that was due.
    pub entry: &'a keys::ScheduleKey,
    /// The next schedule entry, for a retry.
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

impl Store {
    /// Up to `limit` entries of `endpoint_id` in `lane` due at or before `now_ms`, oldest first.
    ///
    /// # Errors
    /// On a storage failure.
    pub fn due_entries(
        &self,
        lane: keys::Lane,
        endpoint_id: &str,
        now_ms: u64,
        limit: usize,
    ) -> Result<Vec<keys::ScheduleKey>, StoreError> {
        let range =
            keys::schedule_of(lane, endpoint_id)..keys::schedule_upto(lane, endpoint_id, now_ms);
        let mut out = Vec::new();
        for k in self.inner.records.range(range).keys().take(limit) {
            if let Some(entry) = keys::ScheduleKey::decode(&k?) {
                out.push(entry);
            }
        }
        Ok(out)
    }

    /// The earliest due time in either lane of `endpoint_id` after `after_ms`
    /// (`None`: from the start), if any.
    ///
    /// # Errors
    /// On a storage failure.
    pub fn next_due(
        &self,
        endpoint_id: &str,
        after_ms: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        let mut best: Option<u64> = None;
        for lane in keys::Lane::ALL {
            let start = match after_ms {
                Some(t) => keys::schedule_upto(lane, endpoint_id, t),
                None => keys::schedule_of(lane, endpoint_id),
            };
            let end = keys::schedule_end(lane, endpoint_id);
            if let Some(k) = self.inner.records.range(start..end).keys().next()
                && let Some(e) = keys::ScheduleKey::decode(&k?)
            {
                best = Some(best.map_or(e.due_ms, |b| b.min(e.due_ms)));
            }
        }
        Ok(best)
    }

    /// One event's payload bytes.
    ///
    /// # Errors
    /// On a storage failure.
    pub fn event_payload(
        &self,
        tenant: &str,
        event_id: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .event(tenant, event_id)?
            .map(|e| e.payload.get().to_owned()))
    }

    /// Records an attempt: the delivery, its log entry, the schedule move and any
    /// endpoint change, in one transaction. The next group commit (or sled's
    /// periodic flush) makes it durable; this neither triggers nor waits for one.
    ///
    /// # Errors
    /// `Unavailable` if the write or its flush failed.
    pub async fn record_attempt(&self, w: AttemptWrite<'_>) -> Result<WriteResult, StoreError> {
        let d = w.delivery;
        let dkey = keys::delivery(&d.tenant_id, &d.id);
        let ekey = keys::endpoint(&d.tenant_id, &d.endpoint_id);
        let old = w.entry;
        let result = self.inner.records.transaction(|tx| {
            let stale = || ConflictableTransactionError::Abort(WriteResult::Stale);
            let cur: DeliveryRecord = tx
                .get(&dkey)?
                .and_then(|v| records::decode(&v).ok())
                .ok_or_else(stale)?;
            if cur.state != DeliveryState::Pending
                || cur.series != w.expected_series
                || cur.attempts != w.expected_attempts
            {
                return Err(stale());
            }
            let Some(ep_bytes) = tx.get(&ekey)? else {
                return Err(stale());
            };
            if let Some(reason) = &w.disable_endpoint
                && let Ok(mut ep) = records::decode::<EndpointRecord>(&ep_bytes)
            {
                ep.disabled = true;
                ep.disabled_reason = Some(reason.clone());
                ep.disabled_at_ms = Some(d.updated_at_ms);
                tx.insert(ekey.as_slice(), records::encode(&ep))?;
            }
            tx.insert(dkey.as_slice(), records::encode(d))?;
            tx.insert(
                keys::attempt(&d.id, w.attempt.series, w.attempt.attempt),
                records::encode(w.attempt),
            )?;
            tx.remove(old.encode())?;
            if let Some(due_ms) = w.next_due_ms {
                let next = keys::ScheduleKey {
                    lane: keys::Lane::Retry,
                    due_ms,
                    ..old.clone()
                };
                tx.insert(next.encode(), d.tenant_id.as_bytes())?;
            }
            Ok(())
        });
        match result {
            Ok(()) => {
                // Not flushed here: an outcome lost in a crash only means the
                // attempt is made again (at-least-once). The next group commit, or
                // sled's own periodic flush, persists it; flushing per outcome made
                // the disk, not the network, the limit on delivery throughput.
                Ok(WriteResult::Written)
            }
            Err(TransactionError::Abort(r)) => Ok(r),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }
}
