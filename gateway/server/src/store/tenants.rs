//! Tenants: their records, API keys and uids, and deleting one whole.

use super::{Change, Store, StoreError, TaskRecord, TenantRecord};
use crate::ids::TenantId;

/// What a tenant write did.
#[derive(Debug, Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "one per tenant write, answered at once: a box would buy nothing"
)]
pub enum TenantWrite {
    /// Stored as now.
    Written(TenantRecord),
    /// The id already names a tenant (by its id or its uid).
    IdTaken,
    /// The uid already names another tenant (by its id or its uid).
    UidTaken,
    /// No such live tenant.
    Missing,
}

impl TenantWrite {
    /// The tenant written, if it was.
    pub fn written(self) -> Option<TenantRecord> {
        match self {
            Self::Written(t) => Some(t),
            _ => None,
        }
    }
}

impl Store {
    /// Creates a tenant; its id and uid must name no other tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn create_tenant(&self, rec: &TenantRecord) -> Result<TenantWrite, StoreError> {
        let created = on_backend!(self, s => s.create_tenant(rec).await)?;
        if matches!(created, TenantWrite::Written(_)) {
            self.feed.publish(Change::tenant(&rec.id));
        }
        Ok(created)
    }

    /// One tenant by id, live or being deleted.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn tenant(&self, id: &TenantId) -> Result<Option<TenantRecord>, StoreError> {
        on_backend!(self, s => sync s.tenant(id))
    }

    /// A live tenant by its id or, failing that, its uid.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn find_tenant(&self, id_or_uid: &str) -> Result<Option<TenantRecord>, StoreError> {
        let by_id = on_backend!(self, s => sync s.tenant(id_or_uid))?;
        let found = match by_id {
            Some(t) => Some(t),
            None => on_backend!(self, s => sync s.tenant_by_uid(id_or_uid))?,
        };
        Ok(found.filter(TenantRecord::is_live))
    }

    /// Live tenants in reverse id order, after `cursor` if given; `true` if more follow.
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

    /// Changes a live tenant (its name, uid, metadata or key); a new uid must
    /// name no other tenant. A changed key works at once and the old one stops.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn update_tenant(
        &self,
        id: &TenantId,
        change: impl Fn(&mut TenantRecord) + Send + Sync,
    ) -> Result<TenantWrite, StoreError> {
        let written = on_backend!(self, s => s.update_tenant(id, &change).await)?;
        if matches!(written, TenantWrite::Written(_)) {
            self.feed.publish(Change::tenant(id));
        }
        Ok(written)
    }

    /// Accepts a tenant's delete: marks it deleting and stores `task`, which
    /// removes the rest, in one write. From then on its key, uid and id name
    /// nothing any caller can use. `false` if there is no such live tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn begin_tenant_delete(
        &self,
        id: &TenantId,
        task: &TaskRecord,
    ) -> Result<bool, StoreError> {
        let begun = on_backend!(self, s => s.begin_tenant_delete(id, task).await)?;
        if begun {
            self.feed.publish(Change::tenant(id));
        }
        Ok(begun)
    }

    /// Removes up to `limit` of a deleting tenant's records: deliveries with
    /// their attempt logs, events, idempotency keys, and whatever endpoint or
    /// plugin records their own deletes left. Zero: only its record is left.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn purge_tenant(&self, id: &TenantId, limit: usize) -> Result<usize, StoreError> {
        on_backend!(self, s => s.purge_tenant(id, limit).await)
    }

    /// Removes a deleting tenant's own record, the last of it.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn remove_tenant(&self, id: &TenantId) -> Result<(), StoreError> {
        on_backend!(self, s => s.remove_tenant(id).await)?;
        self.feed.publish(Change::tenant(id));
        Ok(())
    }
}
