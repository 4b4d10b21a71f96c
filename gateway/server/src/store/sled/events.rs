//! Event ingest (one atomic batch, durable before the ack) and event reads.

use crate::store::sled::keys::ScheduleKey as _;
use crate::store::{DueEntry, Expunge, IdOrder, IdWindow};
use std::hash::BuildHasher;

use super::bulk::BulkWrites;
use super::{
    DeliveryRecord, EndpointRecord, EventRecord, IDEMPOTENCY_TTL_MS, IdempotencyRecord,
    IngestOutcome, Lane, NewEvent, SledStore, StoreError, WriteResult, keys, records,
};
use crate::store::events::PreparedEvent;

/// A record as read: its key and its bytes.
type KeyBytes = (Vec<u8>, Vec<u8>);

/// Idempotency records looked at per sweep transaction.
const SWEEP_BATCH: usize = 512;

/// Stripes of the idempotency-key locks: repeats of one key serialise, others don't.
const KEY_LOCK_STRIPES: usize = 64;

pub(crate) struct KeyLocks(
    Vec<tokio::sync::Mutex<()>>,
    std::collections::hash_map::RandomState,
);

impl KeyLocks {
    pub(crate) fn new() -> Self {
        Self(
            (0..KEY_LOCK_STRIPES)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
            Default::default(),
        )
    }

    pub(super) fn stripe(&self, tenant: &str, key: &str) -> &tokio::sync::Mutex<()> {
        let h = self.1.hash_one((tenant, key));
        &self.0[(h as usize) % self.0.len()]
    }
}

impl SledStore {
    /// Ingests an event: event, deliveries, schedule entries and idempotency record in
    /// one batch, durable before this returns.
    ///
    /// # Errors
    /// `Unavailable` if the write or flush failed; nothing may be acknowledged then.
    pub(crate) async fn ingest(&self, ev: NewEvent<'_>) -> Result<IngestOutcome, StoreError> {
        // A concurrent repeat of the same key waits here for the first one's durable ack.
        let _guard = match &ev.idempotency {
            Some((key, _)) => Some(self.inner.key_locks.stripe(ev.tenant_id, key).lock().await),
            None => None,
        };
        if let Some((key, body_hash)) = &ev.idempotency
            && let Some(prev) =
                self.get::<IdempotencyRecord>(&keys::idempotency(ev.tenant_id, key))?
            && prev.created_at_ms.saturating_add(IDEMPOTENCY_TTL_MS) > ev.now_ms
        {
            if !crate::store::events::same_body(&prev.body_sha256, body_hash) {
                return Ok(IngestOutcome::KeyReused);
            }
            self.wait_durable().await?;
            return Ok(IngestOutcome::Replayed(prev.receipt));
        }

        let PreparedEvent {
            event,
            deliveries,
            receipt,
        } = PreparedEvent::new(&ev);
        let mut batch = super::Writes::default();
        for d in &deliveries {
            let entry = DueEntry {
                lane: Lane::First,
                endpoint_id: d.endpoint_id.clone(),
                due_ms: d.next_attempt_at_ms.unwrap_or(ev.now_ms),
                delivery_id: d.id.clone(),
            };
            // Checked inside the write: a delivery for an endpoint deleted since it
            // was read would be pending forever.
            batch.require(keys::endpoint(ev.tenant_id, &d.endpoint_id));
            batch.insert(keys::delivery(ev.tenant_id, &d.id), records::encode(d));
            batch.insert(entry.encode(), ev.tenant_id.as_bytes());
        }
        batch.insert(
            keys::event(ev.tenant_id, &event.id),
            records::encode(&event),
        );
        if let Some(uid) = &event.labels.uid {
            batch.insert(keys::event_uid(ev.tenant_id, uid), event.id.as_bytes());
        }
        if let Some((key, body_hash)) = &ev.idempotency {
            let rec = IdempotencyRecord {
                body_sha256: body_hash.clone(),
                receipt: receipt.clone(),
                created_at_ms: ev.now_ms,
            };
            batch.insert(keys::idempotency(ev.tenant_id, key), records::encode(&rec));
        }
        let written = if ev.idempotency.is_some() {
            // Applied before the key lock can be released, even if cancelled.
            self.commit(batch).await?
        } else {
            self.commit_queued(batch).await?
        };
        if written == WriteResult::Stale {
            return Ok(IngestOutcome::EndpointsChanged);
        }
        Ok(IngestOutcome::Created {
            receipt,
            deliveries,
        })
    }

    /// One event of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn event(&self, tenant: &str, id: &str) -> Result<Option<EventRecord>, StoreError> {
        self.get(&keys::event(tenant, id))
    }

    /// Up to `max` of `tenant`'s events with ids strictly inside `window`, in `order`.
    pub(crate) async fn events_between(
        &self,
        tenant: &str,
        window: &IdWindow,
        order: IdOrder,
        max: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let (tenant, window) = (tenant.to_owned(), window.clone());
        self.off_workers(move |store| {
            let prefix = keys::event(&tenant, "");
            let start = window
                .after
                .as_deref()
                .map_or_else(|| prefix.clone(), |a| keys::event(&tenant, a));
            let end = window
                .before
                .as_deref()
                .map_or_else(|| keys::prefix_end(&prefix), |b| keys::event(&tenant, b));
            if start >= end {
                return Ok(Vec::new());
            }
            let skip = window.after.as_deref().map(|a| keys::event(&tenant, a));
            let records = store.records()?;
            let range = records.range(start..end);
            let items: Box<dyn Iterator<Item = _>> = match order {
                IdOrder::Descending => Box::new(range.rev()),
                IdOrder::Ascending => Box::new(range),
            };
            let mut out = Vec::new();
            for kv in items {
                let (k, v) = kv?;
                if skip.as_deref() == Some(&*k) {
                    continue;
                }
                out.push(records::decode(&v)?);
                if out.len() == max {
                    break;
                }
            }
            Ok(out)
        })
        .await
    }

    /// Adds a delivery of an event to an endpoint it has none to: the event,
    /// the delivery and its schedule entry in one write, which requires the
    /// event as it was read and the endpoint to exist.
    pub(crate) async fn add_delivery(
        &self,
        tenant: &str,
        event_id: &str,
        endpoint: &EndpointRecord,
        now_ms: u64,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        let ekey = keys::event(tenant, event_id);
        let Some(bytes) = self.records()?.get(&ekey)? else {
            return Ok(None);
        };
        let mut event: EventRecord = records::decode(&bytes)?;
        if event.deliveries.iter().any(|(_, ep)| *ep == endpoint.id) {
            return Ok(None);
        }
        let d = DeliveryRecord::first(
            (&event.tenant_id, &event.id, &event.event_type),
            &endpoint.id,
            now_ms,
            now_ms,
        );
        event.deliveries.push((d.id.clone(), d.endpoint_id.clone()));
        let entry = DueEntry {
            lane: Lane::First,
            endpoint_id: d.endpoint_id.clone(),
            due_ms: now_ms,
            delivery_id: d.id.clone(),
        };
        let mut w = super::Writes::default();
        w.require_unchanged(&ekey, bytes.to_vec());
        w.require(keys::endpoint(tenant, &endpoint.id));
        w.insert(&ekey, records::encode(&event));
        w.insert(keys::delivery(tenant, &d.id), records::encode(&d));
        w.insert(entry.encode(), tenant.as_bytes());
        Ok((self.commit(w).await? == WriteResult::Written).then_some(d))
    }

    /// Expunges an event's payload in one write that requires the event and
    /// each of its deliveries as read (none pending), so a replay that came
    /// between makes it stale, and it is read again.
    pub(crate) async fn expunge_payload(
        &self,
        tenant: &str,
        event_id: &str,
        now_ms: u64,
    ) -> Result<Expunge, StoreError> {
        for _ in 0..8 {
            let ekey = keys::event(tenant, event_id);
            let Some(bytes) = self.records()?.get(&ekey)? else {
                return Ok(Expunge::Missing);
            };
            let mut event: EventRecord = records::decode(&bytes)?;
            if event.labels.expunged_at_ms.is_some() {
                return Ok(Expunge::Expunged);
            }
            let mut w = super::Writes::default();
            w.require_unchanged(&ekey, bytes.to_vec());
            let mut pending = 0;
            for (dlv, _) in &event.deliveries {
                let dkey = keys::delivery(tenant, dlv);
                if let Some(d) = self.records()?.get(&dkey)? {
                    let rec: DeliveryRecord = records::decode(&d)?;
                    pending += usize::from(rec.state == crate::store::DeliveryState::Pending);
                    w.require_unchanged(&dkey, d.to_vec());
                }
            }
            if pending > 0 {
                return Ok(Expunge::Pending(pending));
            }
            event.payload = serde_json::value::RawValue::from_string("null".into())
                .map_err(|e| StoreError::corrupt(e.to_string()))?;
            event.labels.expunged_at_ms = Some(now_ms);
            w.insert(&ekey, records::encode(&event));
            if self.commit(w).await? == WriteResult::Written {
                return Ok(Expunge::Expunged);
            }
        }
        Err(StoreError::unavailable(
            "the event kept changing while its payload was expunged",
        ))
    }

    pub(crate) fn event_by_uid(
        &self,
        tenant: &str,
        uid: &str,
    ) -> Result<Option<EventRecord>, StoreError> {
        match self.records()?.get(keys::event_uid(tenant, uid))? {
            Some(id) => self.event(tenant, &String::from_utf8_lossy(&id)),
            None => Ok(None),
        }
    }

    /// Forgets idempotency keys older than their 24 h, in bounded batches; returns
    /// how many went.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn sweep_idempotency(&self, now_ms: u64) -> Result<usize, StoreError> {
        self.in_bulk(move |bulk| {
            let mut removed = 0;
            let mut after = None;
            loop {
                let (planned, last) =
                    bulk.store()
                        .expired_idempotency(after.as_deref(), now_ms, SWEEP_BATCH)?;
                removed += remove_unchanged(bulk, planned)?;
                match last {
                    Some(k) => after = Some(k),
                    None => return Ok(removed),
                }
            }
        })
        .await
    }

    /// The idempotency records expired at `now_ms` among up to `limit` after the key
    /// `after`, as read (key, bytes); and the last key looked at, if the scan has
    /// more to go.
    fn expired_idempotency(
        &self,
        after: Option<&[u8]>,
        now_ms: u64,
        limit: usize,
    ) -> Result<(Vec<KeyBytes>, Option<Vec<u8>>), StoreError> {
        let prefix = keys::all_idempotency();
        let start = after.map_or_else(|| prefix.clone(), |k| [k, &[0]].concat());
        let mut planned = Vec::new();
        let mut seen = 0;
        let mut last = None;
        for item in self.records()?.range(start..keys::prefix_end(&prefix)) {
            let (k, v) = item?;
            seen += 1;
            // Ingest's records and kept API answers alike: only the age is read.
            let rec: Aged = records::decode(&v)?;
            if rec.created_at_ms.saturating_add(IDEMPOTENCY_TTL_MS) <= now_ms {
                planned.push((k.to_vec(), v.to_vec()));
            }
            if seen == limit {
                last = Some(k.to_vec());
                break;
            }
        }
        Ok((planned, last))
    }
}

/// What the sweep reads of an idempotency record.
#[derive(serde::Deserialize)]
struct Aged {
    created_at_ms: u64,
}

/// Removes each key that still holds the bytes it was read with: a key reused
/// since (a fresh record under it) stays.
fn remove_unchanged(
    bulk: &mut BulkWrites<'_>,
    planned: Vec<KeyBytes>,
) -> Result<usize, StoreError> {
    let groups: Vec<_> = planned
        .into_iter()
        .map(|(k, v)| {
            let mut w = super::Writes::default();
            w.require_unchanged(&k, v);
            w.remove(&k);
            w
        })
        .collect();
    let results = bulk.apply_each(&groups)?;
    Ok(results
        .iter()
        .filter(|r| **r == WriteResult::Written)
        .count())
}

#[cfg(test)]
mod tests;
