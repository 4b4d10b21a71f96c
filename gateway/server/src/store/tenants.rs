//! Tenants and their API keys.

use super::{Change, Store, StoreError, TenantRecord};
use crate::ids::TenantId;

impl Store {
    /// Creates a tenant whose key hashes to `key_hash`. Returns `None` if the id is taken.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn create_tenant(
        &self,
        id: &TenantId,
        key_hash: [u8; 32],
        now_ms: u64,
    ) -> Result<Option<TenantRecord>, StoreError> {
        let created = on_backend!(self, s => s.create_tenant(id, key_hash, now_ms).await)?;
        if created.is_some() {
            self.feed.publish(Change::tenant(id));
        }
        Ok(created)
    }

    /// One tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn tenant(&self, id: &TenantId) -> Result<Option<TenantRecord>, StoreError> {
        on_backend!(self, s => sync s.tenant(id))
    }

    /// Tenants in reverse id order, after `cursor` if given; `true` if more follow.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn list_tenants(
        &self,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<(Vec<TenantRecord>, bool), StoreError> {
        on_backend!(self, s => sync s.list_tenants(limit, cursor))
    }

    /// The tenant whose API key hashes to `key_hash`.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn tenant_by_key(&self, key_hash: &[u8; 32]) -> Result<Option<String>, StoreError> {
        on_backend!(self, s => sync s.tenant_by_key(key_hash))
    }

    /// Replaces a tenant's key; the old one stops working at once. `false` if no such tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn rotate_tenant_key(
        &self,
        id: &TenantId,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError> {
        let rotated = on_backend!(self, s => s.rotate_tenant_key(id, key_hash).await)?;
        if rotated {
            self.feed.publish(Change::tenant(id));
        }
        Ok(rotated)
    }
}
