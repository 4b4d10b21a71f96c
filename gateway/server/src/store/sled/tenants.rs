//! Tenants and their API keys.

use super::{SledStore, StoreError, TenantRecord, keys, records};

impl SledStore {
    /// Creates a tenant whose key hashes to `key_hash`. Returns `None` if the id is taken.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn create_tenant(
        &self,
        id: &str,
        key_hash: [u8; 32],
        now_ms: u64,
    ) -> Result<Option<TenantRecord>, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        if self.records()?.contains_key(keys::tenant(id))? {
            return Ok(None);
        }
        let rec = TenantRecord {
            id: id.into(),
            key_sha256: hex::encode(key_hash),
            created_at_ms: now_ms,
        };
        let mut batch = super::Writes::default();
        batch.insert(keys::tenant(id), records::encode(&rec));
        batch.insert(keys::api_key(&key_hash), id.as_bytes());
        self.commit(batch).await?;
        Ok(Some(rec))
    }

    /// One tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn tenant(&self, id: &str) -> Result<Option<TenantRecord>, StoreError> {
        self.get(&keys::tenant(id))
    }

    /// Tenants in reverse id order, after `cursor` if given; `true` if more follow.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn list_tenants(
        &self,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<(Vec<TenantRecord>, bool), StoreError> {
        let mut out = Vec::new();
        let mut more = false;
        for item in self.scan_rev::<TenantRecord>(&keys::tenants()) {
            let (_, t) = item?;
            if cursor.is_some_and(|c| t.id.as_str() >= c) {
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

    /// The tenant whose API key hashes to `key_hash`.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn tenant_by_key(&self, key_hash: &[u8; 32]) -> Result<Option<String>, StoreError> {
        Ok(self
            .records()?
            .get(keys::api_key(key_hash))?
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Replaces a tenant's key; the old one stops working at once. `false` if no such tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn rotate_tenant_key(
        &self,
        id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let Some(mut rec) = self.tenant(id)? else {
            return Ok(false);
        };
        let mut batch = super::Writes::default();
        if let Ok(old) = hex::decode(&rec.key_sha256)
            && let Ok(old) = <[u8; 32]>::try_from(old.as_slice())
        {
            batch.remove(keys::api_key(&old));
        }
        rec.key_sha256 = hex::encode(key_hash);
        batch.insert(keys::tenant(id), records::encode(&rec));
        batch.insert(keys::api_key(&key_hash), id.as_bytes());
        self.commit(batch).await?;
        Ok(true)
    }
}
