//! Tenants and their API keys: one row each, looked up by the key's hash.

use super::{PgStore, ms, pg_error, unms};
use crate::store::{StoreError, TenantRecord};

impl PgStore {
    pub async fn create_tenant(
        &self,
        id: &str,
        key_hash: [u8; 32],
        now_ms: u64,
    ) -> Result<Option<TenantRecord>, StoreError> {
        let rec = TenantRecord {
            id: id.into(),
            key_sha256: hex::encode(key_hash),
            created_at_ms: now_ms,
        };
        let n = self
            .client()
            .await?
            .execute(
                "INSERT INTO tenants (id, key_sha256, created_at_ms) VALUES ($1, $2, $3)
                 ON CONFLICT (id) DO NOTHING",
                &[&rec.id, &rec.key_sha256, &ms(now_ms)],
            )
            .await
            .map_err(pg_error)?;
        Ok((n == 1).then_some(rec))
    }

    pub async fn tenant(&self, id: &str) -> Result<Option<TenantRecord>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT key_sha256, created_at_ms FROM tenants WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(pg_error)?;
        Ok(row.map(|r| TenantRecord {
            id: id.into(),
            key_sha256: r.get(0),
            created_at_ms: unms(r.get(1)),
        }))
    }

    pub async fn list_tenants(
        &self,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<(Vec<TenantRecord>, bool), StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT id, key_sha256, created_at_ms FROM tenants
                 WHERE $1::text IS NULL OR id < $1 ORDER BY id DESC LIMIT $2",
                &[&cursor, &(limit as i64 + 1)],
            )
            .await
            .map_err(pg_error)?;
        let mut out: Vec<TenantRecord> = rows
            .iter()
            .map(|r| TenantRecord {
                id: r.get(0),
                key_sha256: r.get(1),
                created_at_ms: unms(r.get(2)),
            })
            .collect();
        let more = out.len() > limit;
        out.truncate(limit);
        Ok((out, more))
    }

    pub async fn tenant_by_key(&self, key_hash: &[u8; 32]) -> Result<Option<String>, StoreError> {
        if let Some(tenant) = self.inner.cache.tenant(key_hash) {
            return Ok(Some(tenant));
        }
        let read_at = self.inner.cache.tenants_read();
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT id FROM tenants WHERE key_sha256 = $1 LIMIT 1",
                &[&hex::encode(key_hash)],
            )
            .await
            .map_err(pg_error)?;
        let tenant: Option<String> = row.map(|r| r.get(0));
        if let Some(t) = &tenant {
            self.inner.cache.keep_tenant(*key_hash, t.clone(), read_at);
        }
        Ok(tenant)
    }

    pub async fn rotate_tenant_key(
        &self,
        id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError> {
        let n = self
            .client()
            .await?
            .execute(
                "UPDATE tenants SET key_sha256 = $2 WHERE id = $1",
                &[&id, &hex::encode(key_hash)],
            )
            .await
            .map_err(pg_error)?;
        self.inner.cache.forget_tenant(id);
        Ok(n == 1)
    }
}
