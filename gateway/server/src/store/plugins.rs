//! Uploaded retry-policy plugins: each (tenant, name) has its versions and the
//! active one; version numbers are never reused while the plugin exists, and a
//! rollback only moves the active pointer.

use crate::ids::TenantId;
use serde::{Deserialize, Serialize};

use super::{Change, Store, StoreError};

/// One uploaded version of a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginVersionRecord {
    /// 1 for the first upload, then one more per upload.
    pub version: u32,
    /// SHA-256 of the bytes as uploaded, hex.
    pub sha256: String,
    /// Size of the bytes as uploaded.
    pub size: u64,
    pub created_at_ms: u64,
    /// Disabled after 20 counted failures in a row; stays disabled across restarts.
    #[serde(default)]
    pub disabled: bool,
    /// What the upload checks found; `None` for versions stored by older builds.
    #[serde(default)]
    pub checks: Option<StoredChecks>,
}

/// What a version's upload checks found, as stored with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredChecks {
    /// The checks passed, by name, in the order they ran.
    pub passed: Vec<String>,
    /// The most fuel one conformance sample used.
    pub fuel_used: u64,
    /// The fuel a decision may use.
    pub fuel_limit: u64,
    /// The most memory one conformance sample used, in bytes.
    pub memory_used_bytes: u64,
    /// The memory a decision may use, in bytes.
    pub memory_limit_bytes: u64,
}

/// A version about to be stored: its bytes, their SHA-256 (hex), and what the
/// upload checks found.
#[derive(Debug, Clone, Copy)]
pub struct NewPluginVersion<'a> {
    pub bytes: &'a [u8],
    pub sha256: &'a str,
    pub checks: Option<&'a StoredChecks>,
}

/// A tenant's plugin: its versions, oldest first, and which one endpoints that
/// bind the bare name use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginRecord {
    pub tenant_id: crate::ids::TenantId,
    pub name: String,
    pub versions: Vec<PluginVersionRecord>,
    pub active: u32,
}

/// A tenant's recent plugin uploads, kept in the store so the upload rate
/// limit holds across the nodes of a cluster and across restarts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct UploadTimes {
    /// When each upload within the window was made, oldest first.
    pub(crate) times_ms: Vec<u64>,
}

/// How many uploads a tenant may make within a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UploadRate {
    pub(crate) most: usize,
    pub(crate) window_ms: u64,
}

impl UploadTimes {
    /// Counts an upload at `now_ms`, unless `rate.most` were made within the
    /// window before it: then the milliseconds until the oldest ages out.
    pub(crate) fn admit(&mut self, now_ms: u64, rate: UploadRate) -> Result<(), u64> {
        self.times_ms
            .retain(|t| now_ms.saturating_sub(*t) < rate.window_ms);
        if self.times_ms.len() >= rate.most {
            let oldest = self.times_ms.first().copied().unwrap_or(now_ms);
            return Err((oldest + rate.window_ms).saturating_sub(now_ms));
        }
        self.times_ms.push(now_ms);
        Ok(())
    }
}

impl PluginRecord {
    /// A plugin with no versions yet.
    pub(crate) fn empty(tenant: &str, name: &str) -> Self {
        Self {
            tenant_id: tenant.into(),
            name: name.to_owned(),
            versions: Vec::new(),
            active: 0,
        }
    }

    /// Adds `new` as the next version and makes it active; returns its number.
    pub(crate) fn add_version(&mut self, new: &NewPluginVersion<'_>, now_ms: u64) -> u32 {
        let version = self.versions.last().map_or(1, |v| v.version + 1);
        self.versions.push(PluginVersionRecord {
            version,
            sha256: new.sha256.to_owned(),
            size: new.bytes.len() as u64,
            created_at_ms: now_ms,
            disabled: false,
            checks: new.checks.cloned(),
        });
        self.active = version;
        version
    }

    /// Removes the [`PluginRecord::prunable`] versions; returns them.
    pub(crate) fn prune(&mut self, keep: usize, pinned: &[u32]) -> Vec<PluginVersionRecord> {
        let doomed = self.prunable(keep, pinned);
        let (dropped, kept) = std::mem::take(&mut self.versions)
            .into_iter()
            .partition(|v| doomed.contains(&v.version));
        self.versions = kept;
        dropped
    }

    /// The version before the active one, if any (what a rollback moves to).
    pub fn previous(&self) -> Option<u32> {
        let at = self
            .versions
            .iter()
            .position(|v| v.version == self.active)?;
        at.checked_sub(1).map(|i| self.versions[i].version)
    }

    /// The versions past the newest `keep` that may go: never the active one, nor
    /// one in `pinned` (bound by an endpoint as `name@version`).
    pub fn prunable(&self, keep: usize, pinned: &[u32]) -> Vec<u32> {
        let older = self.versions.len().saturating_sub(keep);
        self.versions[..older]
            .iter()
            .map(|v| v.version)
            .filter(|v| *v != self.active && !pinned.contains(v))
            .collect()
    }
}

impl Store {
    /// Counts a plugin upload by `tenant` at `now_ms` against `rate`, durably
    /// and for every gateway on the store; `Err(wait_ms)` inside the result
    /// when the tenant made its most within the window.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn admit_plugin_upload(
        &self,
        tenant: &TenantId,
        now_ms: u64,
        rate: UploadRate,
    ) -> Result<Result<(), u64>, StoreError> {
        on_backend!(self, s => s.admit_plugin_upload(tenant, now_ms, rate).await)
    }

    /// One plugin of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn plugin(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<Option<PluginRecord>, StoreError> {
        on_backend!(self, s => sync s.plugin(tenant, name))
    }

    /// A tenant's plugins, by name.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn plugins_of(&self, tenant: &TenantId) -> Result<Vec<PluginRecord>, StoreError> {
        on_backend!(self, s => sync s.plugins_of(tenant))
    }

    /// Every tenant's plugins (to load them at start).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn all_plugins(&self) -> Result<Vec<PluginRecord>, StoreError> {
        on_backend!(self, s => sync s.all_plugins())
    }

    /// The bytes of one version, as uploaded.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn plugin_bytes(
        &self,
        tenant: &TenantId,
        name: &str,
        version: u32,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        on_backend!(self, s => sync s.plugin_bytes(tenant, name, version))
    }

    /// Stores `new.bytes` as the next version of `tenant`'s `name` and makes it active,
    /// atomically and durably (upload step 10). A new name is refused (`None`)
    /// when the tenant already has `max_plugins`.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn add_plugin_version(
        &self,
        tenant: &TenantId,
        name: &str,
        new: NewPluginVersion<'_>,
        now_ms: u64,
        max_plugins: usize,
    ) -> Result<Option<PluginRecord>, StoreError> {
        let added = on_backend!(self, s => s.add_plugin_version(tenant, name, new, now_ms, max_plugins).await)?;
        if added.is_some() {
            self.feed.publish(Change::plugin(tenant, name));
        }
        Ok(added)
    }

    /// Changes one plugin record in place; `None` if there is no such plugin.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn update_plugin(
        &self,
        tenant: &TenantId,
        name: &str,
        change: impl FnOnce(&mut PluginRecord),
    ) -> Result<Option<PluginRecord>, StoreError> {
        let updated = on_backend!(self, s => s.update_plugin(tenant, name, change).await)?;
        if updated.is_some() {
            self.feed.publish(Change::plugin(tenant, name));
        }
        Ok(updated)
    }

    /// Drops the [`PluginRecord::prunable`] versions of a plugin and their bytes, in
    /// one batch; returns the dropped versions (none if there is no such plugin).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn prune_plugin_versions(
        &self,
        tenant: &TenantId,
        name: &str,
        keep: usize,
        pinned: &[u32],
    ) -> Result<Vec<PluginVersionRecord>, StoreError> {
        let pruned =
            on_backend!(self, s => s.prune_plugin_versions(tenant, name, keep, pinned).await)?;
        if !pruned.is_empty() {
            self.feed.publish(Change::plugin(tenant, name));
        }
        Ok(pruned)
    }

    /// Deletes a plugin with every version's bytes; `None` if there was none.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn delete_plugin(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<Option<PluginRecord>, StoreError> {
        let deleted = on_backend!(self, s => s.delete_plugin(tenant, name).await)?;
        if deleted.is_some() {
            self.feed.publish(Change::plugin(tenant, name));
        }
        Ok(deleted)
    }
}
