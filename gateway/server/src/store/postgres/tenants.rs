//! Tenants and their API keys: one row each, looked up by the key's hash or
//! the uid, and removing a deleted tenant's rows.
//!
//! A tenant's id and uid share one namespace (a path names a tenant by
//! either): writes that set one check both columns in a serializable
//! transaction, so two racing for one name cannot both pass.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use super::{PgStore, from_json, ms, pg_error, retry_conflicts, to_json, unms};
use crate::store::{StoreError, TaskRecord, TenantRecord, TenantWrite};

/// The columns [`tenant_from_row`] reads, in its order.
const COLUMNS: &str = "id, key_sha256, created_at_ms, record";

/// A tenant's row read back: its record, or (a row written before schema 6)
/// the columns. The key hash is always the column's.
fn tenant_from_row(row: &Row) -> Result<TenantRecord, StoreError> {
    let id: String = row.get(0);
    let mut rec = match row.get::<_, Option<String>>(3) {
        Some(text) => from_json::<TenantRecord>(&text, "tenant")?,
        None => {
            let created = unms(row.get(2));
            TenantRecord {
                name: id.clone(),
                updated_at_ms: created,
                ..TenantRecord::new(id.as_str().into(), [0; 32], created)
            }
        }
    };
    rec.key_sha256 = row.get(1);
    Ok(rec)
}

/// Whether `name` (an id or a uid) names a tenant other than `me`.
async fn names_another(
    client: &impl GenericClient,
    name: &str,
    me: &str,
) -> Result<bool, StoreError> {
    Ok(client
        .query_opt(
            "SELECT 1 FROM tenants WHERE (id = $1 OR uid = $1) AND id <> $2 LIMIT 1",
            &[&name, &me],
        )
        .await
        .map_err(pg_error)?
        .is_some())
}

impl PgStore {
    pub async fn create_tenant(&self, rec: &TenantRecord) -> Result<TenantWrite, StoreError> {
        retry_conflicts(move || async move {
            let mut client = self.client().await?;
            let tx = super::serializable(&mut client).await?;
            let exists = tx
                .query_opt("SELECT 1 FROM tenants WHERE id = $1", &[&rec.id])
                .await
                .map_err(pg_error)?
                .is_some();
            if exists || names_another(&tx, &rec.id, &rec.id).await? {
                return Ok(TenantWrite::IdTaken);
            }
            if let Some(uid) = &rec.uid
                && names_another(&tx, uid, &rec.id).await?
            {
                return Ok(TenantWrite::UidTaken);
            }
            tx.execute(
                "INSERT INTO tenants (id, key_sha256, created_at_ms, uid, record)
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    &rec.id,
                    &rec.key_sha256,
                    &ms(rec.created_at_ms),
                    &rec.uid,
                    &to_json(rec),
                ],
            )
            .await
            .map_err(pg_error)?;
            tx.commit().await.map_err(pg_error)?;
            Ok(TenantWrite::Written(rec.clone()))
        })
        .await
    }

    pub async fn tenant(&self, id: &str) -> Result<Option<TenantRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM tenants WHERE id = $1");
        let row = self
            .client()
            .await?
            .query_opt(&sql, &[&id])
            .await
            .map_err(pg_error)?;
        row.as_ref().map(tenant_from_row).transpose()
    }

    pub async fn tenant_by_uid(&self, uid: &str) -> Result<Option<TenantRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM tenants WHERE uid = $1");
        let row = self
            .client()
            .await?
            .query_opt(&sql, &[&uid])
            .await
            .map_err(pg_error)?;
        row.as_ref().map(tenant_from_row).transpose()
    }

    pub async fn list_tenants(
        &self,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<(Vec<TenantRecord>, bool), StoreError> {
        // A deleting tenant's key is empty: the list leaves it out.
        let sql = format!(
            "SELECT {COLUMNS} FROM tenants
             WHERE ($1::text IS NULL OR id < $1) AND key_sha256 <> ''
             ORDER BY id DESC LIMIT $2"
        );
        let rows = self
            .client()
            .await?
            .query(&sql, &[&cursor, &(limit as i64 + 1)])
            .await
            .map_err(pg_error)?;
        let mut out = rows
            .iter()
            .map(tenant_from_row)
            .collect::<Result<Vec<_>, _>>()?;
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

    /// Changes a live tenant, its key and uid columns with its record.
    pub async fn update_tenant(
        &self,
        id: &str,
        change: impl Fn(&mut TenantRecord) + Sync,
    ) -> Result<TenantWrite, StoreError> {
        let change = &change;
        let written = retry_conflicts(move || async move {
            let mut client = self.client().await?;
            let tx = super::serializable(&mut client).await?;
            let sql = format!("SELECT {COLUMNS} FROM tenants WHERE id = $1 FOR UPDATE");
            let Some(row) = tx.query_opt(&sql, &[&id]).await.map_err(pg_error)? else {
                return Ok(TenantWrite::Missing);
            };
            let old = tenant_from_row(&row)?;
            if !old.is_live() {
                return Ok(TenantWrite::Missing);
            }
            let mut rec = old.clone();
            change(&mut rec);
            if let Some(uid) = &rec.uid
                && old.uid.as_ref() != Some(uid)
                && names_another(&tx, uid, id).await?
            {
                return Ok(TenantWrite::UidTaken);
            }
            tx.execute(
                "UPDATE tenants SET key_sha256 = $2, uid = $3, record = $4 WHERE id = $1",
                &[&id, &rec.key_sha256, &rec.uid, &to_json(&rec)],
            )
            .await
            .map_err(pg_error)?;
            tx.commit().await.map_err(pg_error)?;
            Ok(TenantWrite::Written(rec))
        })
        .await?;
        self.inner.cache.forget_tenant(id);
        Ok(written)
    }

    /// Marks a live tenant deleting and stores the task that deletes it, in
    /// one transaction: its key and uid stop naming it at once.
    pub async fn begin_tenant_delete(
        &self,
        id: &str,
        task: &TaskRecord,
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let sql = format!("SELECT {COLUMNS} FROM tenants WHERE id = $1 FOR UPDATE");
        let Some(row) = tx.query_opt(&sql, &[&id]).await.map_err(pg_error)? else {
            return Ok(false);
        };
        let mut rec = tenant_from_row(&row)?;
        if !rec.is_live() {
            return Ok(false);
        }
        rec.key_sha256.clear();
        rec.uid = None;
        rec.deleting = Some(task.id.clone());
        rec.updated_at_ms = task.created_at_ms;
        tx.execute(
            "UPDATE tenants SET key_sha256 = '', uid = NULL, record = $2 WHERE id = $1",
            &[&id, &to_json(&rec)],
        )
        .await
        .map_err(pg_error)?;
        super::tasks::insert_task(&tx, task).await?;
        tx.commit().await.map_err(pg_error)?;
        self.inner.cache.forget_tenant(id);
        Ok(true)
    }

    /// Removes up to `limit` of a deleting tenant's rows; answers how many.
    /// Zero: only the tenant's own row is left.
    pub async fn purge_tenant(&self, id: &str, limit: usize) -> Result<usize, StoreError> {
        let limit = limit as i64;
        let client = self.client().await?;
        let mut removed = 0;
        // Deliveries with their attempt logs and queue rows, one statement.
        let row = client
            .query_one(
                "WITH doomed AS (
                     SELECT id FROM deliveries WHERE tenant_id = $1 LIMIT $2),
                 a AS (DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM doomed)),
                 l AS (DELETE FROM late_attempts WHERE delivery_id IN (SELECT id FROM doomed)),
                 q AS (DELETE FROM queue WHERE delivery_id IN (SELECT id FROM doomed)),
                 d AS (DELETE FROM deliveries WHERE id IN (SELECT id FROM doomed) RETURNING 1)
                 SELECT count(*) FROM d",
                &[&id, &limit],
            )
            .await
            .map_err(pg_error)?;
        removed += row.get::<_, i64>(0);
        for table in [
            "events",
            "idempotency",
            "endpoints",
            "plugin_bytes",
            "plugins",
            "endpoint_stats",
        ] {
            if removed >= limit {
                break;
            }
            let sql = format!(
                "WITH doomed AS (SELECT ctid FROM {table} WHERE tenant_id = $1 LIMIT $2)
                 DELETE FROM {table} WHERE ctid IN (SELECT ctid FROM doomed)"
            );
            removed += client
                .execute(&sql, &[&id, &(limit - removed)])
                .await
                .map_err(pg_error)? as i64;
        }
        removed += client
            .execute("DELETE FROM plugin_uploads WHERE tenant_id = $1", &[&id])
            .await
            .map_err(pg_error)? as i64;
        self.inner.cache.forget_endpoints(id);
        Ok(removed as usize)
    }

    /// Removes a deleting tenant's own row, the last of it.
    pub async fn remove_tenant(&self, id: &str) -> Result<(), StoreError> {
        self.client()
            .await?
            .execute("DELETE FROM tenants WHERE id = $1", &[&id])
            .await
            .map_err(pg_error)?;
        self.inner.cache.forget_tenant(id);
        Ok(())
    }
}

#[cfg(any(test, feature = "lab"))]
impl PgStore {
    /// One fingerprint per row of `tables` (see `Store::census`).
    pub(crate) async fn census(
        &self,
        tables: &[&str],
    ) -> Result<std::collections::BTreeSet<String>, StoreError> {
        let client = self.client().await?;
        let mut out = std::collections::BTreeSet::new();
        for table in tables {
            let sql = format!("SELECT t::text FROM {table} t");
            for row in client.query(&sql, &[]).await.map_err(pg_error)? {
                out.insert(format!("{table}:{}", row.get::<_, String>(0)));
            }
        }
        Ok(out)
    }
}
