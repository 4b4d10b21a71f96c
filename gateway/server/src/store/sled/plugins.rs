//! Uploaded retry-policy plugins. Each (tenant, name) has one record listing its
//! versions and the active one (`pl␀{tenant}␀{name}`), and each version's bytes
//! are kept exactly as uploaded under their own key (`pb␀{tenant}␀{name}␀{version}`),
//! so the gateway can load them again at start. Version numbers are never reused
//! while the plugin exists; a rollback only moves the active pointer.

use super::{
    NewPluginVersion, PluginRecord, PluginVersionRecord, SledStore, StoreError, keys, records,
};
use crate::store::{UploadRate, UploadTimes};

impl SledStore {
    /// One plugin of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn plugin(
        &self,
        tenant: &str,
        name: &str,
    ) -> Result<Option<PluginRecord>, StoreError> {
        self.get(&keys::plugin(tenant, name))
    }

    /// A tenant's plugins, by name.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn plugins_of(&self, tenant: &str) -> Result<Vec<PluginRecord>, StoreError> {
        self.scan_plugins(&keys::plugins_of(tenant))
    }

    /// Every tenant's plugins (to load them at start).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn all_plugins(&self) -> Result<Vec<PluginRecord>, StoreError> {
        self.scan_plugins(&keys::all_plugins())
    }

    fn scan_plugins(&self, prefix: &[u8]) -> Result<Vec<PluginRecord>, StoreError> {
        let mut out: Vec<PluginRecord> = self
            .scan_rev::<PluginRecord>(prefix)
            .map(|r| r.map(|(_, p)| p))
            .collect::<Result<_, _>>()?;
        out.reverse();
        Ok(out)
    }

    /// The bytes of one version, as uploaded.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn plugin_bytes(
        &self,
        tenant: &str,
        name: &str,
        version: u32,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .records()?
            .get(keys::plugin_bytes(tenant, name, version))?
            .map(|v| v.to_vec()))
    }

    /// Stores `new.bytes` as the next version of `tenant`'s `name` and makes it active,
    /// atomically and durably (upload step 10). A new name is refused (`None`)
    /// when the tenant already has `max_plugins`.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn add_plugin_version(
        &self,
        tenant: &str,
        name: &str,
        new: NewPluginVersion<'_>,
        now_ms: u64,
        max_plugins: usize,
    ) -> Result<Option<PluginRecord>, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let mut rec = match self.plugin(tenant, name)? {
            Some(rec) => rec,
            None => {
                let count = self
                    .records()?
                    .scan_prefix(keys::plugins_of(tenant))
                    .keys()
                    .take(max_plugins)
                    .count();
                if count >= max_plugins {
                    return Ok(None);
                }
                PluginRecord::empty(tenant, name)
            }
        };
        let version = rec.add_version(&new, now_ms);
        let mut batch = super::Writes::default();
        batch.insert(keys::plugin_bytes(tenant, name, version), new.bytes);
        batch.insert(keys::plugin(tenant, name), records::encode(&rec));
        self.commit(batch).await?;
        Ok(Some(rec))
    }

    /// Counts a plugin upload of `tenant` (the upload rate limit), durably.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn admit_plugin_upload(
        &self,
        tenant: &str,
        now_ms: u64,
        rate: UploadRate,
    ) -> Result<Result<(), u64>, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let key = keys::plugin_uploads(tenant);
        let mut times: UploadTimes = self.get(&key)?.unwrap_or_default();
        let admitted = times.admit(now_ms, rate);
        if admitted.is_ok() {
            let mut batch = super::Writes::default();
            batch.insert(key, records::encode(&times));
            self.commit(batch).await?;
        }
        Ok(admitted)
    }

    /// Changes one plugin record in place; `None` if there is no such plugin.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn update_plugin(
        &self,
        tenant: &str,
        name: &str,
        change: impl FnOnce(&mut PluginRecord),
    ) -> Result<Option<PluginRecord>, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let Some(mut rec) = self.plugin(tenant, name)? else {
            return Ok(None);
        };
        change(&mut rec);
        let mut batch = super::Writes::default();
        batch.insert(keys::plugin(tenant, name), records::encode(&rec));
        self.commit(batch).await?;
        Ok(Some(rec))
    }

    /// Drops the [`PluginRecord::prunable`] versions of a plugin and their bytes, in
    /// one batch; returns the dropped versions (none if there is no such plugin).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn prune_plugin_versions(
        &self,
        tenant: &str,
        name: &str,
        keep: usize,
        pinned: &[u32],
    ) -> Result<Vec<PluginVersionRecord>, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let Some(mut rec) = self.plugin(tenant, name)? else {
            return Ok(Vec::new());
        };
        let dropped = rec.prune(keep, pinned);
        if dropped.is_empty() {
            return Ok(Vec::new());
        }
        let mut batch = super::Writes::default();
        for v in &dropped {
            batch.remove(keys::plugin_bytes(tenant, name, v.version));
        }
        batch.insert(keys::plugin(tenant, name), records::encode(&rec));
        self.commit(batch).await?;
        Ok(dropped)
    }

    /// Deletes a plugin with every version's bytes; `None` if there was none.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn delete_plugin(
        &self,
        tenant: &str,
        name: &str,
    ) -> Result<Option<PluginRecord>, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let Some(rec) = self.plugin(tenant, name)? else {
            return Ok(None);
        };
        let mut batch = super::Writes::default();
        for key in self
            .records()?
            .scan_prefix(keys::plugin_bytes_of(tenant, name))
            .keys()
        {
            batch.remove(key?);
        }
        batch.remove(keys::plugin(tenant, name));
        self.commit(batch).await?;
        Ok(Some(rec))
    }
}

#[cfg(test)]
mod tests;
