//! Plugins changed through another gateway that shares the store. Each
//! `Plugin` change on the feed is read back from the store, and this gateway's
//! host is made to match it:
//! - new versions are compiled from their stored bytes, or loaded from the
//!   artifact cache, which stays per gateway;
//! - dropped versions are forgotten;
//! - the active version is moved and versions disabled elsewhere are disabled;
//! - a deleted plugin is unloaded.
//!
//! This gateway's own changes arrive on the feed too. They wait for the change
//! that made them to finish, then find the host already matching and change
//! nothing.

use std::sync::Arc;

use super::PluginService;
use super::startup::stored;
use crate::ids::TenantId;
use crate::plugin_runtime::PluginSource;
use crate::store::{Change, StoreError};

impl PluginService {
    /// Follows the store's plugin changes until the store is gone.
    pub(crate) fn spawn_change_follower(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let (service, mut changes) = (Arc::clone(self), self.store.changes());
        tokio::spawn(async move {
            while let Some(change) = changes.recv().await {
                let Change::Plugin { tenant_id, name } = change else {
                    continue;
                };
                if let Err(e) = service.sync(&tenant_id, &name).await {
                    tracing::warn!(tenant = %tenant_id, plugin = %name, error = %e,
                        "cannot load a plugin changed through another gateway; it is read again at its next change or restart");
                }
            }
        })
    }

    /// Makes the host's `tenant`/`name` match the store.
    pub(super) async fn sync(&self, tenant: &TenantId, name: &str) -> Result<(), StoreError> {
        if self.host.source(tenant, name) == Some(PluginSource::Preload) {
            return Ok(());
        }
        // A change this gateway is making finishes first (it installs what it stored).
        let _changes = self.gate.changes().await;
        let Some(record) = self.store.plugin(tenant, name).await? else {
            self.host.unload(tenant, name, &[]);
            return Ok(());
        };
        let loaded: Vec<u32> = self
            .host
            .view(tenant, name)
            .map(|v| v.versions.iter().map(|v| v.info.version).collect())
            .unwrap_or_default();
        let mut missing = stored(&record);
        missing.versions.retain(|v| !loaded.contains(&v.version));
        // Loads what is missing and points the bare name at the active version.
        let bytes_of = |v| self.store.plugin_bytes(tenant, name, v);
        self.host.restore(&missing, bytes_of).await?;
        let gone: Vec<u32> = loaded
            .into_iter()
            .filter(|v| !record.versions.iter().any(|r| r.version == *v))
            .collect();
        if !gone.is_empty() {
            self.host.remove_versions(tenant, name, &gone, &[]);
        }
        for v in record.versions.iter().filter(|v| v.disabled) {
            self.host.force_disable(tenant, name, v.version);
        }
        Ok(())
    }
}
