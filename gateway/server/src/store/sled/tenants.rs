//! Tenants, their API keys and uids, and removing a deleted tenant's records.
//!
//! A tenant's id and its uid share one namespace (a path names a tenant by
//! either), so each write checks both indexes under the write lock.

use super::{SledStore, StoreError, TenantRecord, keys, records};
use crate::store::{TaskRecord, TenantWrite};

/// Whether `name` (an id or a uid) already names a tenant other than `me`.
fn names_another(store: &SledStore, name: &str, me: &str) -> Result<bool, StoreError> {
    let records = store.records()?;
    let by_id = name != me && records.contains_key(keys::tenant(name))?;
    let by_uid = records
        .get(keys::tenant_uid(name))?
        .is_some_and(|owner| owner.as_ref() != me.as_bytes());
    Ok(by_id || by_uid)
}

impl SledStore {
    pub(crate) async fn create_tenant(
        &self,
        rec: &TenantRecord,
    ) -> Result<TenantWrite, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        if self.records()?.contains_key(keys::tenant(&rec.id))?
            || names_another(self, &rec.id, &rec.id)?
        {
            return Ok(TenantWrite::IdTaken);
        }
        if let Some(uid) = &rec.uid
            && names_another(self, uid, &rec.id)?
        {
            return Ok(TenantWrite::UidTaken);
        }
        let mut batch = super::Writes::default();
        batch.insert(keys::tenant(&rec.id), records::encode(rec));
        if let Ok(hash) = hex::decode(&rec.key_sha256)
            && let Ok(hash) = <[u8; 32]>::try_from(hash.as_slice())
        {
            batch.insert(keys::api_key(&hash), rec.id.as_bytes());
        }
        if let Some(uid) = &rec.uid {
            batch.insert(keys::tenant_uid(uid), rec.id.as_bytes());
        }
        self.commit(batch).await?;
        Ok(TenantWrite::Written(rec.clone()))
    }

    pub(crate) fn tenant(&self, id: &str) -> Result<Option<TenantRecord>, StoreError> {
        self.get(&keys::tenant(id))
    }

    pub(crate) fn tenant_by_uid(&self, uid: &str) -> Result<Option<TenantRecord>, StoreError> {
        match self.records()?.get(keys::tenant_uid(uid))? {
            Some(id) => self.tenant(&String::from_utf8_lossy(&id)),
            None => Ok(None),
        }
    }

    pub(crate) fn list_tenants(
        &self,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<(Vec<TenantRecord>, bool), StoreError> {
        let mut out = Vec::new();
        let mut more = false;
        for item in self.scan_rev::<TenantRecord>(&keys::tenants()) {
            let (_, t) = item?;
            if cursor.is_some_and(|c| t.id.as_str() >= c) || !t.is_live() {
                continue;
            }
            if out.len() == limit {
                more = true;
                break;
            }
            out.push(t);
        }
        Ok((out, more))
    }

    pub(crate) fn tenant_by_key(&self, key_hash: &[u8; 32]) -> Result<Option<String>, StoreError> {
        Ok(self
            .records()?
            .get(keys::api_key(key_hash))?
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Changes a live tenant; its key and uid indexes follow the record.
    pub(crate) async fn update_tenant(
        &self,
        id: &str,
        change: impl FnOnce(&mut TenantRecord),
    ) -> Result<TenantWrite, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let Some(old) = self.tenant(id)?.filter(TenantRecord::is_live) else {
            return Ok(TenantWrite::Missing);
        };
        let mut rec = old.clone();
        change(&mut rec);
        if let Some(uid) = &rec.uid
            && old.uid.as_ref() != Some(uid)
            && names_another(self, uid, id)?
        {
            return Ok(TenantWrite::UidTaken);
        }
        let mut batch = super::Writes::default();
        if old.key_sha256 != rec.key_sha256 {
            if let Some(old_hash) = key_hash(&old.key_sha256) {
                batch.remove(keys::api_key(&old_hash));
            }
            if let Some(new_hash) = key_hash(&rec.key_sha256) {
                batch.insert(keys::api_key(&new_hash), id.as_bytes());
            }
        }
        if old.uid != rec.uid {
            if let Some(uid) = &old.uid {
                batch.remove(keys::tenant_uid(uid));
            }
            if let Some(uid) = &rec.uid {
                batch.insert(keys::tenant_uid(uid), id.as_bytes());
            }
        }
        batch.insert(keys::tenant(id), records::encode(&rec));
        self.commit(batch).await?;
        Ok(TenantWrite::Written(rec))
    }

    /// Marks a live tenant deleting and stores the task that deletes it, in one
    /// write: its key and uid stop naming it at once.
    pub(crate) async fn begin_tenant_delete(
        &self,
        id: &str,
        task: &TaskRecord,
    ) -> Result<bool, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let Some(mut rec) = self.tenant(id)?.filter(TenantRecord::is_live) else {
            return Ok(false);
        };
        let mut batch = super::Writes::default();
        if let Some(hash) = key_hash(&rec.key_sha256) {
            batch.remove(keys::api_key(&hash));
        }
        if let Some(uid) = rec.uid.take() {
            batch.remove(keys::tenant_uid(&uid));
        }
        rec.key_sha256.clear();
        rec.deleting = Some(task.id.clone());
        rec.updated_at_ms = task.created_at_ms;
        batch.insert(keys::tenant(id), records::encode(&rec));
        batch.insert(keys::task(&task.id), records::encode(task));
        batch.insert(keys::running_task(&task.id), b"".to_vec());
        self.commit(batch).await?;
        Ok(true)
    }

    /// Removes up to `limit` of a deleting tenant's records (its endpoints and
    /// plugins are deleted through their own lifecycle first; what is left of
    /// them is removed here too); answers how many. Zero: only the tenant's own
    /// record is left.
    pub(crate) async fn purge_tenant(&self, id: &str, limit: usize) -> Result<usize, StoreError> {
        let id = id.to_owned();
        self.in_bulk(move |bulk| {
            let records = bulk.store().records()?;
            let mut gone = super::Writes::default();
            let mut n = 0;
            // Deliveries first, each with its attempt log, so none is left
            // without the delivery that leads to it.
            for kv in records.scan_prefix(keys::deliveries_of(&id)) {
                if n >= limit {
                    break;
                }
                let (k, v) = kv?;
                let d: crate::store::DeliveryRecord = records::decode(&v)?;
                for a in records.scan_prefix(keys::attempts_of(&d.id)).keys() {
                    gone.remove(a?);
                    n += 1;
                }
                gone.remove(k);
                n += 1;
            }
            let prefixes = [
                keys::event(&id, ""),
                keys::event_uids_of(&id),
                keys::idempotency(&id, ""),
                keys::endpoints_of(&id),
                keys::plugins_of(&id),
                keys::plugin_bytes_of_tenant(&id),
                keys::endpoint_attempts_of_tenant(&id),
                keys::endpoint_stats_of_tenant(&id),
            ];
            for prefix in prefixes {
                for k in records.scan_prefix(prefix).keys() {
                    if n >= limit {
                        break;
                    }
                    gone.remove(k?);
                    n += 1;
                }
            }
            if n < limit && records.contains_key(keys::plugin_uploads(&id))? {
                gone.remove(keys::plugin_uploads(&id));
                n += 1;
            }
            if n > 0 {
                bulk.apply_each(&[gone])?;
            }
            Ok(n)
        })
        .await
    }

    /// Removes a deleting tenant's own record, the last of it.
    pub(crate) async fn remove_tenant(&self, id: &str) -> Result<(), StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let mut batch = super::Writes::default();
        batch.remove(keys::tenant(id));
        self.commit(batch).await?;
        Ok(())
    }
}

/// A stored key hash read back; `None` for an empty (deleted) one.
fn key_hash(hex_hash: &str) -> Option<[u8; 32]> {
    let bytes = hex::decode(hex_hash).ok()?;
    <[u8; 32]>::try_from(bytes.as_slice()).ok()
}

#[cfg(any(test, feature = "lab"))]
impl SledStore {
    /// One fingerprint per record but tasks (see `Store::census`): the key's
    /// start, readable, and a hash of key and value.
    pub(crate) fn census(&self) -> Result<std::collections::BTreeSet<String>, StoreError> {
        use sha2::{Digest, Sha256};
        let (tasks, running) = (keys::tasks(), keys::running_tasks());
        let mut out = std::collections::BTreeSet::new();
        for kv in self.records()?.iter() {
            let (k, v) = kv?;
            if k.starts_with(&tasks) || k.starts_with(&running) {
                continue;
            }
            let mut h = Sha256::new();
            h.update(&k);
            h.update(&v);
            let start = String::from_utf8_lossy(&k[..k.len().min(40)]).into_owned();
            out.insert(format!("{start}:{}", hex::encode(h.finalize())));
        }
        Ok(out)
    }
}
