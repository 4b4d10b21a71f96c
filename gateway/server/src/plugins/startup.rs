//! Plugins at gateway start: the host is made from the config's
//! `[[plugins.preload]]` before the store opens; then the data dir's artifact
//! cache is attached and uploaded plugins are restored from the store; once the
//! store takes writes, [`PluginService::prune_stored`] applies
//! `plugins.keep_versions`, so a lowered cap takes effect at start rather than at
//! the next upload. While the gateway runs, a disabled version is stored so it
//! stays disabled after a restart.
//!
//! Preloaded plugins are config-owned: a stored plugin of the same tenant and name
//! is left unloaded, with a warning, and the service refuses to change it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc::UnboundedReceiver;

use super::uploads::UploadGate;
use super::{PluginLimits, PluginService};
use crate::clock::Clock;
use crate::config::Config;
use crate::ids::TenantId;
use crate::operator_events::{OperatorEvent, OperatorEvents};
use crate::plugin_runtime::{
    ArtifactCache, MissingBytes, PluginError, PluginEvent, PluginHost, PluginSource, PreloadFile,
    StoredPlugin, StoredVersion,
};
use crate::store::{PluginRecord, Store, StoreError};

/// The `meta` key of the per-install artifact key.
const ARTIFACT_KEY_META: &str = "plugin_artifact_key";

/// A host with the config's `[[plugins.preload]]` loaded, in order.
///
/// # Errors
/// As [`PluginHost::preloaded`]: `Preload` names the entry that failed.
pub(crate) fn host_from_config(config: &Config) -> Result<PluginHost, PluginError> {
    let files = config.plugins.preload.iter().map(|p| PreloadFile {
        tenant: &p.tenant,
        name: &p.name,
        path: &p.path,
    });
    PluginHost::preloaded(
        config.limits.plugin_upload_bytes,
        config.plugins.slots,
        files,
    )
}

/// A stored version without its bytes is a corrupt store.
impl From<MissingBytes> for StoreError {
    fn from(e: MissingBytes) -> Self {
        StoreError::corrupt(e.to_string())
    }
}

/// A stored record as the host restores it.
pub(super) fn stored(record: &PluginRecord) -> StoredPlugin {
    StoredPlugin {
        tenant_id: record.tenant_id.to_string(),
        name: record.name.clone(),
        versions: record
            .versions
            .iter()
            .map(|v| StoredVersion {
                version: v.version,
                sha256: v.sha256.clone(),
                size: v.size,
                created_at_ms: v.created_at_ms,
                disabled: v.disabled,
            })
            .collect(),
        active: record.active,
    }
}

/// The data dir's artifact cache, creating its key on first use.
async fn artifact_cache(store: &Store, dir: &Path) -> Result<ArtifactCache, StoreError> {
    let key = match store
        .meta_get(ARTIFACT_KEY_META)
        .await?
        .map(<[u8; 32]>::try_from)
    {
        Some(Ok(key)) => key,
        _ => {
            let key: [u8; 32] = rand::random();
            store.meta_put(ARTIFACT_KEY_META, &key).await?;
            key
        }
    };
    Ok(ArtifactCache::new(dir, key))
}

impl PluginService {
    /// The service over `host` and `store`: the artifact cache is attached and
    /// every stored plugin is loaded into `host` (from verified artifacts where
    /// cached), except where a preloaded plugin has its name.
    ///
    /// # Errors
    /// On a storage failure; a version that no longer loads is logged and skipped.
    pub(crate) async fn start(
        host: Arc<PluginHost>,
        store: Store,
        clock: Arc<dyn Clock>,
        limits: PluginLimits,
        artifact_dir: &Path,
    ) -> Result<Self, StoreError> {
        host.attach_artifacts(artifact_cache(&store, artifact_dir).await?);
        for record in store.all_plugins().await? {
            let (tenant, name) = (&record.tenant_id, &record.name);
            if host.source(tenant, name) == Some(PluginSource::Preload) {
                tracing::warn!(
                    tenant = %tenant, plugin = %name,
                    "a stored plugin has the name of a [[plugins.preload]] entry; the preloaded one is used"
                );
                continue;
            }
            let bytes_of = |v| store.plugin_bytes(tenant, name, v);
            let loaded = host.restore(&stored(&record), bytes_of).await?;
            tracing::info!(tenant = %tenant, plugin = %name, versions = loaded, active = record.active, "plugin restored");
        }
        Ok(Self {
            store,
            host,
            gate: UploadGate::default(),
            clock,
            limits,
        })
    }

    /// Keeps the newest `plugins.keep_versions` versions of every stored plugin
    /// (with the active one and those an endpoint pins), as each upload does.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn prune_stored(&self) -> Result<(), StoreError> {
        let _changes = self.gate.changes().await;
        for record in self.store.all_plugins().await? {
            let (tenant, name) = (&record.tenant_id, &record.name);
            if record.versions.len() > self.limits.keep_versions
                && self.source(tenant, name) != Some(PluginSource::Preload)
            {
                self.prune(tenant, name).await?;
            }
        }
        Ok(())
    }

    /// Stores each version the host disables, until the host is gone. Spawn it
    /// before the delivery engine starts, so no event is missed.
    pub(crate) fn spawn_disabled_recorder(
        &self,
        events: OperatorEvents,
    ) -> tokio::task::JoinHandle<()> {
        let clock = Arc::clone(&self.clock);
        tokio::spawn(record_disabled(
            self.store.clone(),
            clock,
            self.host.subscribe(),
            events,
        ))
    }
}

/// Marks each disabled version in its stored record; the gateway whose write
/// disables it tells operators (`plugin.disabled`), so a cluster tells it once.
async fn record_disabled(
    store: Store,
    clock: Arc<dyn Clock>,
    mut events: UnboundedReceiver<PluginEvent>,
    operator: OperatorEvents,
) {
    while let Some(event) = events.recv().await {
        let PluginEvent::Disabled {
            tenant,
            name,
            version,
            ..
        } = event;
        let tenant = TenantId::from(tenant.as_str());
        let newly = AtomicBool::new(false);
        let marked = store
            .update_plugin(&tenant, &name, |rec| {
                newly.store(false, Ordering::Relaxed);
                for v in rec.versions.iter_mut().filter(|v| v.version == version) {
                    newly.store(!v.disabled, Ordering::Relaxed);
                    v.disabled = true;
                }
            })
            .await;
        if marked.is_ok() && newly.load(Ordering::Relaxed) {
            let now = clock.now_ms();
            operator.emit(OperatorEvent::plugin_disabled(&tenant, &name, version, now));
        }
        if let Err(e) = marked {
            tracing::warn!(error = %e, tenant = %tenant, plugin = name, "cannot store that a plugin was disabled");
        }
    }
}
