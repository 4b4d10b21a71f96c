//! Endpoints: create, read, list, compare-and-swap, delete.

use super::{
    DeliveryRecord, DeliveryState, EndpointRecord, EndpointVersion, Lane, SledStore, StoreError,
    Swap, WriteResult, keys, records,
};
use crate::policy::DeadReason;
use crate::store::DueEntry;
use crate::store::sled::keys::ScheduleKey as _;
use crate::store::{EndpointCreate, uid_taken};

/// Schedule entries ended per transaction when an endpoint is deleted.
const DELETE_BATCH: usize = 256;

impl SledStore {
    /// Stores a new endpoint unless the tenant already has `max` of them or
    /// another has its uid. Under the write lock, as every write that sets a uid.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn create_endpoint(
        &self,
        ep: &EndpointRecord,
        max: usize,
    ) -> Result<EndpointCreate, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let existing = self.endpoints_of(&ep.tenant_id)?;
        if existing.len() >= max {
            return Ok(EndpointCreate::TooMany);
        }
        if uid_taken(ep.uid.as_deref(), &ep.id, &existing) {
            return Ok(EndpointCreate::UidTaken);
        }
        self.put_endpoint(ep).await?;
        Ok(EndpointCreate::Created)
    }

    /// Replaces an endpoint record.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn put_endpoint(&self, ep: &EndpointRecord) -> Result<(), StoreError> {
        let mut batch = super::Writes::default();
        batch.insert(keys::endpoint(&ep.tenant_id, &ep.id), records::encode(ep));
        self.commit(batch).await?;
        Ok(())
    }

    /// One endpoint as stored now, for a read-modify-write ([`SledStore::swap_endpoint`]).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn endpoint_version(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<EndpointVersion>, StoreError> {
        let Some(bytes) = self.records()?.get(keys::endpoint(tenant, id))? else {
            return Ok(None);
        };
        Ok(Some(EndpointVersion {
            record: records::decode(&bytes)?,
            bytes: bytes.to_vec(),
        }))
    }

    /// Replaces the endpoint with `new` only if it is still exactly as `read`:
    /// a change made meanwhile (a breaker save, a 410 disabling it, another
    /// request) is never undone; the caller reads again and redoes its change.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn swap_endpoint(
        &self,
        read: &EndpointVersion,
        new: &EndpointRecord,
    ) -> Result<Swap, StoreError> {
        let key = keys::endpoint(&new.tenant_id, &new.id);
        // A new uid is checked against the others under the write lock, which
        // every write that sets a uid holds.
        let old: EndpointRecord = records::decode(&read.bytes)?;
        let _guard = match (&new.uid, old.uid == new.uid) {
            (Some(_), false) => {
                let guard = self.inner.write_lock.lock().await;
                if uid_taken(
                    new.uid.as_deref(),
                    &new.id,
                    &self.endpoints_of(&new.tenant_id)?,
                ) {
                    return Ok(Swap::UidTaken);
                }
                Some(guard)
            }
            _ => None,
        };
        let mut w = super::Writes::default();
        w.require_unchanged(&key, read.bytes.clone());
        w.insert(&key, records::encode(new));
        if self.commit(w).await? == WriteResult::Written {
            return Ok(Swap::Swapped);
        }
        Ok(if self.records()?.contains_key(&key)? {
            Swap::Changed
        } else {
            Swap::Gone
        })
    }

    /// One endpoint of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn endpoint(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<EndpointRecord>, StoreError> {
        self.get(&keys::endpoint(tenant, id))
    }

    /// A tenant's endpoints, newest first, after `cursor`; `true` if more follow.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn list_endpoints(
        &self,
        tenant: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<(Vec<EndpointRecord>, bool), StoreError> {
        let mut out = Vec::new();
        for item in self.scan_rev::<EndpointRecord>(&keys::endpoints_of(tenant)) {
            let (_, ep) = item?;
            if cursor.is_some_and(|c| ep.id.as_str() >= c) {
                continue;
            }
            if out.len() == limit {
                return Ok((out, true));
            }
            out.push(ep);
        }
        Ok((out, false))
    }

    /// All of a tenant's endpoints (for fan-out).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn endpoints_of(&self, tenant: &str) -> Result<Vec<EndpointRecord>, StoreError> {
        self.scan_rev::<EndpointRecord>(&keys::endpoints_of(tenant))
            .map(|r| r.map(|(_, ep)| ep))
            .collect()
    }

    /// Every endpoint of every tenant (for the scheduler at start).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn all_endpoints(&self) -> Result<Vec<EndpointRecord>, StoreError> {
        self.scan_rev::<EndpointRecord>(&keys::all_endpoints())
            .map(|r| r.map(|(_, ep)| ep))
            .collect()
    }

    /// Deletes an endpoint; its pending deliveries become dead (`endpoint_deleted`).
    /// Returns how many deliveries that ended.
    ///
    /// The endpoint goes first, so no ingest, replay or outcome can add or move its
    /// work afterwards; then its stats buckets go, and its schedule is emptied in
    /// bounded batches, each a transaction that ends a delivery only if it is
    /// still as it was read. Work left behind by a crash in between is ended by
    /// the retention sweep, and buckets by the stats sweep once past the history.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn delete_endpoint(
        &self,
        ep: &EndpointRecord,
        now_ms: u64,
    ) -> Result<usize, StoreError> {
        let (tenant, id) = (ep.tenant_id.clone(), ep.id.clone());
        self.in_bulk(move |bulk| {
            let mut gone = super::Writes::default();
            gone.remove(keys::endpoint(&tenant, &id));
            bulk.apply_each(&[gone])?;
            super::endpoint_stats::remove_endpoint_stats(bulk, &tenant, &id)?;
            let mut ended = 0;
            loop {
                let planned = bulk.store().plan_schedule_end(&tenant, &id, now_ms)?;
                if planned.is_empty() {
                    return Ok(ended);
                }
                let (groups, ends): (Vec<_>, Vec<_>) = planned.into_iter().unzip();
                let results = bulk.apply_each(&groups)?;
                ended += results
                    .iter()
                    .zip(ends)
                    .filter(|(r, ends)| **r == WriteResult::Written && *ends)
                    .count();
            }
        })
        .await
    }

    /// One batch of a deleted endpoint's schedule entries, each with the write that
    /// removes it and ends its delivery if pending (`true` then).
    fn plan_schedule_end(
        &self,
        tenant: &str,
        endpoint_id: &str,
        now_ms: u64,
    ) -> Result<Vec<(super::Writes, bool)>, StoreError> {
        let records = self.records()?;
        let entries = Lane::ALL.map(|lane| {
            records
                .scan_prefix(keys::schedule_of(lane, endpoint_id))
                .keys()
        });
        let mut planned = Vec::new();
        for key in entries.into_iter().flatten().take(DELETE_BATCH) {
            let key = key?;
            let mut w = super::Writes::default();
            w.remove(&key);
            let mut ends = false;
            if let Some(entry) = DueEntry::decode(&key) {
                let dkey = keys::delivery(tenant, &entry.delivery_id);
                if let Some(bytes) = self.records()?.get(&dkey)? {
                    let mut d: DeliveryRecord = records::decode(&bytes)?;
                    w.require_unchanged(&dkey, bytes.to_vec());
                    if d.state == DeliveryState::Pending {
                        d.end(DeadReason::EndpointDeleted, now_ms);
                        w.insert(&dkey, records::encode(&d));
                        ends = true;
                    }
                }
            }
            planned.push((w, ends));
        }
        Ok(planned)
    }

    /// Changes one endpoint in place (breaker transitions, automatic disabling);
    /// `false` if it no longer exists.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn update_endpoint(
        &self,
        tenant: &str,
        id: &str,
        change: impl Fn(&mut EndpointRecord),
    ) -> Result<bool, StoreError> {
        let key = keys::endpoint(tenant, id);
        self.update_endpoint_bytes(&key, |bytes| {
            let mut ep = records::decode::<EndpointRecord>(bytes).ok()?;
            change(&mut ep);
            Some(records::encode(&ep))
        })
        .await
    }

    /// Rewrites the endpoint at `key` with what `change` makes of its bytes, in one
    /// transaction, and waits until that is durable; `false` if it does not exist
    /// (or `change` declines).
    async fn update_endpoint_bytes(
        &self,
        key: &[u8],
        change: impl Fn(&[u8]) -> Option<Vec<u8>>,
    ) -> Result<bool, StoreError> {
        let (done, seq) = {
            let db = self.held()?;
            let done = db.records.transaction(|tx| {
                let Some(new) = tx.get(key)?.and_then(|old| change(&old)) else {
                    return Ok(false);
                };
                tx.insert(key, new)?;
                Ok::<_, sled::transaction::ConflictableTransactionError<()>>(true)
            });
            let seq = matches!(done, Ok(true)).then(|| self.sequence(&db));
            (done, seq)
        };
        match done {
            Ok(true) => {
                if let Some(seq) = seq {
                    self.wait_written(seq).await?;
                }
                Ok(true)
            }
            Ok(false) | Err(sled::transaction::TransactionError::Abort(())) => Ok(false),
            Err(sled::transaction::TransactionError::Storage(e)) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests;
