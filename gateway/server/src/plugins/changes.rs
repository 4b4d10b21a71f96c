//! Changing a tenant's uploaded plugins: upload a new version, roll the active
//! one back, delete the plugin. Each change holds the gate's change lock, writes
//! the store, then updates the host, so both change in the same order here.
//!
//! Allocating a version, activating one and pruning old ones are one method
//! each ([`PluginService::allocate_version`], [`PluginService::activate`],
//! [`PluginService::prune`]), and each is one store operation, atomic in the
//! store: the lock orders this process's host, it does not make the store safe.

use crate::plugin_runtime::PluginKind;
use std::sync::OnceLock;

use crate::ids::TenantId;
use crate::plugin_runtime::{PluginBinding, UploadChecks};
use crate::store::{NewPluginVersion, PluginRecord, StoreError, StoredChecks, UploadRate};

use super::uploads::{HOUR_MS, UPLOADS_PER_HOUR};
use super::{PluginService, PluginServiceError};

/// An upload that passed the name, ownership, plugin-count and rate checks; its
/// bytes come next.
#[derive(Debug)]
#[must_use = "an admitted upload counts against the tenant's rate"]
pub(crate) struct AdmittedUpload {
    tenant: TenantId,
    name: String,
}

/// A stored, active new version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UploadedPlugin {
    pub name: String,
    pub version: u32,
    /// SHA-256 of the bytes as uploaded, hex.
    pub sha256: String,
    pub size: u64,
    /// What the upload checks found, as stored with the version.
    pub checks: StoredChecks,
    /// A retry policy or a transform: what the plugin exports.
    pub kind: PluginKind,
}

/// The runtime's check results as the store keeps them.
fn stored_checks(checks: UploadChecks) -> StoredChecks {
    let UploadChecks {
        passed,
        fuel_used,
        fuel_limit,
        memory_used_bytes,
        memory_limit_bytes,
    } = checks;
    StoredChecks {
        passed,
        fuel_used,
        fuel_limit,
        memory_used_bytes,
        memory_limit_bytes,
    }
}

/// A name endpoints can bind: the tenant-id alphabet, 1 to 63 characters.
fn valid_name(name: &str) -> bool {
    crate::ids::is_valid_tenant_id(name)
}

impl PluginService {
    /// Admits an upload of `tenant`'s `name`: a bindable name, not a preloaded
    /// plugin, within the tenant's plugins and its uploads per hour (counted now).
    ///
    /// # Errors
    /// `InvalidName`, `Preloaded`, `TooManyPlugins`, `RateLimited`, or `Store`.
    pub(crate) async fn admit_upload(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<AdmittedUpload, PluginServiceError> {
        if !valid_name(name) {
            return Err(PluginServiceError::InvalidName);
        }
        self.refuse_preloaded(tenant, name)?;
        let max = self.limits.plugins_per_tenant;
        if self.store.plugin(tenant, name).await?.is_none()
            && self.store.plugins_of(tenant).await?.len() >= max
        {
            return Err(PluginServiceError::TooManyPlugins { max });
        }
        let rate = UploadRate {
            most: UPLOADS_PER_HOUR,
            window_ms: HOUR_MS,
        };
        self.store
            .admit_plugin_upload(tenant, self.clock.now_ms(), rate)
            .await?
            .map_err(|wait_ms| PluginServiceError::RateLimited { wait_ms })?;
        Ok(AdmittedUpload {
            tenant: tenant.clone(),
            name: name.to_owned(),
        })
    }

    /// Checks an admitted upload's bytes (checks 1–9), stores them as the next
    /// version and makes it active (step 10); older versions past
    /// `plugins.keep_versions` then go.
    ///
    /// # Errors
    /// `Busy` or `Rejected` from the checks, `TooManyPlugins` if another upload
    /// took the last place meanwhile, or `Store`.
    pub(crate) async fn upload(
        &self,
        admitted: AdmittedUpload,
        bytes: bytes::Bytes,
    ) -> Result<UploadedPlugin, PluginServiceError> {
        let AdmittedUpload { tenant, name } = admitted;
        let checked = self.gate.check(&self.host, bytes.clone()).await?;
        let _changes = self.gate.changes().await;
        let now = self.clock.now_ms();
        let (sha256, size, kind) = (checked.sha256.clone(), checked.size, checked.wit.kind());
        let checks = stored_checks(checked.results());
        let new = NewPluginVersion {
            bytes: &bytes,
            sha256: &sha256,
            checks: Some(&checks),
        };
        let rec = self
            .allocate_version(&tenant, &name, new, now)
            .await?
            .ok_or(PluginServiceError::TooManyPlugins {
                max: self.limits.plugins_per_tenant,
            })?;
        self.host.install(&tenant, &name, rec.active, now, checked);
        // The new version is stored and active; older ones past the cap go now.
        self.prune(&tenant, &name).await?;
        Ok(UploadedPlugin {
            name,
            version: rec.active,
            sha256,
            size,
            checks,
            kind,
        })
    }

    /// Moves the active version of `tenant`'s `name` to the one before it;
    /// returns the record as stored.
    ///
    /// # Errors
    /// `Preloaded`, `NotFound`, `NothingToRollBackTo` at the oldest, or `Store`.
    pub(crate) async fn rollback(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<PluginRecord, PluginServiceError> {
        self.refuse_preloaded(tenant, name)?;
        let _changes = self.gate.changes().await;
        let (rec, previous) = self
            .activate(tenant, name, PluginRecord::previous)
            .await?
            .ok_or(PluginServiceError::NotFound)?;
        let Some(previous) = previous else {
            return Err(PluginServiceError::NothingToRollBackTo {
                name: name.to_owned(),
                active: rec.active,
            });
        };
        tracing::info!(
            tenant = %tenant,
            plugin = name,
            active = previous,
            "plugin rolled back"
        );
        Ok(rec)
    }

    /// Deletes every version of `tenant`'s `name`.
    ///
    /// # Errors
    /// `Preloaded`, `NotFound`, `Bound` while an endpoint binds it, or `Store`.
    pub(crate) async fn delete(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<(), PluginServiceError> {
        self.refuse_preloaded(tenant, name)?;
        let _changes = self.gate.changes().await;
        if self.store.plugin(tenant, name).await?.is_none() {
            return Err(PluginServiceError::NotFound);
        }
        let endpoints: Vec<String> = self
            .store
            .endpoints_of(tenant)
            .await?
            .into_iter()
            .filter(|ep| {
                ep.plugin
                    .as_deref()
                    .and_then(|p| PluginBinding::parse(tenant, p))
                    .is_some_and(|b| b.name == name)
            })
            .map(|ep| ep.id.to_string())
            .collect();
        if !endpoints.is_empty() {
            return Err(PluginServiceError::Bound {
                name: name.to_owned(),
                endpoints,
            });
        }
        let Some(rec) = self.store.delete_plugin(tenant, name).await? else {
            return Err(PluginServiceError::NotFound);
        };
        let unused = self
            .unused_artifacts(rec.versions.iter().map(|v| &v.sha256))
            .await?;
        self.host.unload(tenant, name, &unused);
        tracing::info!(tenant = %tenant, plugin = name, "plugin deleted");
        Ok(())
    }

    /// Stores `new.bytes` as the next version of `tenant`'s `name` and makes it the
    /// active one in the store; `None` for a new name past the tenant's most
    /// plugins. The version number is allocated here.
    async fn allocate_version(
        &self,
        tenant: &TenantId,
        name: &str,
        new: NewPluginVersion<'_>,
        now_ms: u64,
    ) -> Result<Option<PluginRecord>, StoreError> {
        let max = self.limits.plugins_per_tenant;
        self.store
            .add_plugin_version(tenant, name, new, now_ms, max)
            .await
    }

    /// Makes the version `pick` chooses from the stored record the active one of
    /// `tenant`'s `name`, stored then loaded; `None` if there is no such plugin,
    /// and no version if `pick` chose none. The choice is made inside the store's
    /// write, so two changes made at once never choose from the same record.
    async fn activate(
        &self,
        tenant: &TenantId,
        name: &str,
        pick: impl FnOnce(&PluginRecord) -> Option<u32>,
    ) -> Result<Option<(PluginRecord, Option<u32>)>, StoreError> {
        let picked = OnceLock::new();
        let rec = self
            .store
            .update_plugin(tenant, name, |r| {
                if let Some(version) = pick(r) {
                    r.active = version;
                    let _ = picked.set(version);
                }
            })
            .await?;
        let Some(rec) = rec else {
            return Ok(None);
        };
        if let Some(&version) = picked.get() {
            self.host.set_active(tenant, name, version);
        }
        Ok(Some((rec, picked.get().copied())))
    }

    /// Keeps the newest `plugins.keep_versions` versions of `tenant`'s `name` and
    /// drops older ones from the store, from the host and from the artifact cache;
    /// never the active version, nor one an endpoint binds as `name@version`. The
    /// one place versions are pruned; callers hold the gate's change lock.
    /// Returns the versions dropped.
    ///
    /// # Errors
    /// On a storage failure; the host and the cache are then left as they were.
    pub(super) async fn prune(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<Vec<u32>, StoreError> {
        let pinned: Vec<u32> = self
            .store
            .endpoints_of(tenant)
            .await?
            .iter()
            .filter_map(|ep| PluginBinding::parse(tenant, ep.plugin.as_deref()?))
            .filter(|b| b.name == name)
            .filter_map(|b| b.version)
            .collect();
        let keep = self.limits.keep_versions;
        let dropped = self
            .store
            .prune_plugin_versions(tenant, name, keep, &pinned)
            .await?;
        if dropped.is_empty() {
            return Ok(Vec::new());
        }
        let versions: Vec<u32> = dropped.iter().map(|v| v.version).collect();
        let unused = self
            .unused_artifacts(dropped.iter().map(|v| &v.sha256))
            .await?;
        self.host.remove_versions(tenant, name, &versions, &unused);
        tracing::info!(
            tenant = %tenant,
            plugin = name,
            ?versions,
            "old plugin versions pruned"
        );
        Ok(versions)
    }

    /// The sha256s among `gone` that no stored version has any more: identical
    /// bytes may be another version's too, and its artifact stays.
    async fn unused_artifacts<'a>(
        &self,
        gone: impl Iterator<Item = &'a String>,
    ) -> Result<Vec<String>, StoreError> {
        let remaining = self.store.all_plugins().await?;
        let in_use = |sha: &str| {
            remaining
                .iter()
                .flat_map(|r| &r.versions)
                .any(|v| v.sha256 == sha)
        };
        Ok(gone.filter(|sha| !in_use(sha)).cloned().collect())
    }
}
