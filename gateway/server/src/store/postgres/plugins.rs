//! Plugins: one row per (tenant, name) holding its versions and the active one,
//! and each version's bytes as uploaded in `plugin_bytes`.

use deadpool_postgres::GenericClient;

use super::{PgStore, from_json, pg_error, retry_conflicts, to_json};
use crate::store::{
    NewPluginVersion, PluginRecord, PluginVersionRecord, StoreError, UploadRate, UploadTimes,
};

/// Stores a plugin's record over its row (or as a new row).
async fn write_plugin(client: &impl GenericClient, rec: &PluginRecord) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO plugins (tenant_id, name, record) VALUES ($1, $2, $3)
             ON CONFLICT (tenant_id, name) DO UPDATE SET record = EXCLUDED.record",
            &[&rec.tenant_id, &rec.name, &to_json(rec)],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

/// One plugin's record, locked until the transaction ends when `lock`.
async fn read_plugin(
    client: &impl GenericClient,
    tenant: &str,
    name: &str,
    lock: bool,
) -> Result<Option<PluginRecord>, StoreError> {
    let sql = if lock {
        "SELECT record FROM plugins WHERE tenant_id = $1 AND name = $2 FOR UPDATE"
    } else {
        "SELECT record FROM plugins WHERE tenant_id = $1 AND name = $2"
    };
    let row = client
        .query_opt(sql, &[&tenant, &name])
        .await
        .map_err(pg_error)?;
    row.map(|r| from_json(r.get(0), "plugin")).transpose()
}

impl PgStore {
    /// Counts a plugin upload of `tenant` under its row's lock, so the nodes
    /// of a cluster count one at a time.
    pub(crate) async fn admit_plugin_upload(
        &self,
        tenant: &str,
        now_ms: u64,
        rate: UploadRate,
    ) -> Result<Result<(), u64>, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        tx.execute(
            "INSERT INTO plugin_uploads (tenant_id, record) VALUES ($1, '{\"times_ms\":[]}')
             ON CONFLICT (tenant_id) DO NOTHING",
            &[&tenant],
        )
        .await
        .map_err(pg_error)?;
        let row = tx
            .query_one(
                "SELECT record FROM plugin_uploads WHERE tenant_id = $1 FOR UPDATE",
                &[&tenant],
            )
            .await
            .map_err(pg_error)?;
        let mut times: UploadTimes = from_json(row.get(0), "plugin uploads")?;
        let admitted = times.admit(now_ms, rate);
        if admitted.is_ok() {
            let record = to_json(&times);
            tx.execute(
                "UPDATE plugin_uploads SET record = $2 WHERE tenant_id = $1",
                &[&tenant, &record],
            )
            .await
            .map_err(pg_error)?;
        }
        tx.commit().await.map_err(pg_error)?;
        Ok(admitted)
    }

    pub async fn plugin(
        &self,
        tenant: &str,
        name: &str,
    ) -> Result<Option<PluginRecord>, StoreError> {
        read_plugin(&*self.client().await?, tenant, name, false).await
    }

    pub async fn plugins_of(&self, tenant: &str) -> Result<Vec<PluginRecord>, StoreError> {
        self.select_plugins(Some(tenant)).await
    }

    pub async fn all_plugins(&self) -> Result<Vec<PluginRecord>, StoreError> {
        self.select_plugins(None).await
    }

    async fn select_plugins(&self, tenant: Option<&str>) -> Result<Vec<PluginRecord>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT record FROM plugins WHERE $1::text IS NULL OR tenant_id = $1
                 ORDER BY tenant_id, name",
                &[&tenant],
            )
            .await
            .map_err(pg_error)?;
        rows.iter().map(|r| from_json(r.get(0), "plugin")).collect()
    }

    pub async fn plugin_bytes(
        &self,
        tenant: &str,
        name: &str,
        version: u32,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT bytes FROM plugin_bytes WHERE tenant_id = $1 AND name = $2 AND version = $3",
                &[&tenant, &name, &(version as i32)],
            )
            .await
            .map_err(pg_error)?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Adds a version. Serializable: the cap on names counts every plugin of the
    /// tenant, and two uploads racing for the last place cannot both pass.
    pub async fn add_plugin_version(
        &self,
        tenant: &str,
        name: &str,
        new: NewPluginVersion<'_>,
        now_ms: u64,
        max_plugins: usize,
    ) -> Result<Option<PluginRecord>, StoreError> {
        retry_conflicts(move || async move {
            let mut client = self.client().await?;
            let tx = super::serializable(&mut client).await?;
            let mut rec = match read_plugin(&tx, tenant, name, true).await? {
                Some(rec) => rec,
                None => {
                    let count: i64 = tx
                        .query_one("SELECT count(*) FROM plugins WHERE tenant_id = $1", &[&tenant])
                        .await
                        .map_err(pg_error)?
                        .get(0);
                    if count as usize >= max_plugins {
                        return Ok(None);
                    }
                    PluginRecord::empty(tenant, name)
                }
            };
            let version = rec.add_version(&new, now_ms);
            tx.execute(
                "INSERT INTO plugin_bytes (tenant_id, name, version, bytes) VALUES ($1, $2, $3, $4)",
                &[&tenant, &name, &(version as i32), &new.bytes],
            )
            .await
            .map_err(pg_error)?;
            write_plugin(&tx, &rec).await?;
            tx.commit().await.map_err(pg_error)?;
            Ok(Some(rec))
        })
        .await
    }

    pub async fn update_plugin(
        &self,
        tenant: &str,
        name: &str,
        change: impl FnOnce(&mut PluginRecord),
    ) -> Result<Option<PluginRecord>, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let Some(mut rec) = read_plugin(&tx, tenant, name, true).await? else {
            return Ok(None);
        };
        change(&mut rec);
        write_plugin(&tx, &rec).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(Some(rec))
    }

    pub async fn prune_plugin_versions(
        &self,
        tenant: &str,
        name: &str,
        keep: usize,
        pinned: &[u32],
    ) -> Result<Vec<PluginVersionRecord>, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let Some(mut rec) = read_plugin(&tx, tenant, name, true).await? else {
            return Ok(Vec::new());
        };
        let dropped = rec.prune(keep, pinned);
        if dropped.is_empty() {
            return Ok(Vec::new());
        }
        let versions: Vec<i32> = dropped.iter().map(|v| v.version as i32).collect();
        tx.execute(
            "DELETE FROM plugin_bytes WHERE tenant_id = $1 AND name = $2 AND version = ANY($3)",
            &[&tenant, &name, &versions],
        )
        .await
        .map_err(pg_error)?;
        write_plugin(&tx, &rec).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(dropped)
    }

    pub async fn delete_plugin(
        &self,
        tenant: &str,
        name: &str,
    ) -> Result<Option<PluginRecord>, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let Some(rec) = read_plugin(&tx, tenant, name, true).await? else {
            return Ok(None);
        };
        for sql in [
            "DELETE FROM plugin_bytes WHERE tenant_id = $1 AND name = $2",
            "DELETE FROM plugins WHERE tenant_id = $1 AND name = $2",
        ] {
            tx.execute(sql, &[&tenant, &name]).await.map_err(pg_error)?;
        }
        tx.commit().await.map_err(pg_error)?;
        Ok(Some(rec))
    }
}
