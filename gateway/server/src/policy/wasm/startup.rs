//! Plugins at gateway start: the data dir's artifact cache is attached, uploaded
//! plugins are loaded from the store, and disabling a version is stored so it
//! survives a restart.
//!
//! `[[plugins.preload]]` entries load first (before the store opens) and are
//! config-owned: a stored plugin of the same tenant and name is left unloaded, with
//! a warning, and the API refuses to change a preloaded plugin.
//!
//! Once the store takes writes, [`prune_stored`] applies `plugins.keep_versions`,
//! so a lowered cap takes effect at start rather than at the next upload.

use std::sync::Arc;

use super::{ArtifactCache, PluginHost, PluginSource};
use crate::store::{Store, StoreError};

/// Attaches the artifact cache and loads every stored plugin into `host`.
///
/// # Errors
/// On a storage failure; a version that no longer loads is logged and skipped.
pub fn load_stored(host: &Arc<PluginHost>, store: &Store) -> Result<(), StoreError> {
    host.attach_artifacts(ArtifactCache::open(store)?);
    {
        let store = store.clone();
        host.on_version_disabled(move |tenant, name, version| {
            let (store, tenant, name) = (store.clone(), tenant.to_owned(), name.to_owned());
            tokio::spawn(async move {
                let marked = store
                    .update_plugin(&tenant, &name, |rec| {
                        for v in rec.versions.iter_mut().filter(|v| v.version == version) {
                            v.disabled = true;
                        }
                    })
                    .await;
                if let Err(e) = marked {
                    tracing::warn!(error = %e, tenant, plugin = name, "cannot store that a plugin was disabled");
                }
            });
        });
    }
    for record in store.all_plugins()? {
        let (tenant, name) = (&record.tenant_id, &record.name);
        if host.source(tenant, name) == Some(PluginSource::Preload) {
            tracing::warn!(
                tenant, plugin = %name,
                "a stored plugin has the name of a [[plugins.preload]] entry; the preloaded one is used"
            );
            continue;
        }
        let loaded = host.restore(&record, |v| store.plugin_bytes(tenant, name, v))?;
        tracing::info!(tenant, plugin = %name, versions = loaded, active = record.active, "plugin restored");
    }
    Ok(())
}

/// Keeps the newest `keep` versions of every stored plugin (with the active one
/// and those an endpoint pins), as each upload does.
///
/// # Errors
/// On a storage failure.
pub async fn prune_stored(host: &PluginHost, store: &Store, keep: usize) -> Result<(), StoreError> {
    for record in store.all_plugins()? {
        let (tenant, name) = (&record.tenant_id, &record.name);
        if record.versions.len() > keep && host.source(tenant, name) != Some(PluginSource::Preload)
        {
            host.prune_versions(store, tenant, name, keep).await?;
        }
    }
    Ok(())
}
