//! Managing tenants' plugins on the host: the upload checks (steps 1–9), installing
//! a checked plugin, restoring stored plugins at start through the artifact cache,
//! the active pointer, and what the API lists.

use std::time::Instant;

use wasmtime::component::Component;

use super::artifacts::ArtifactCache;
use super::bindings::PluginPre;
use super::conformance::{self, ConformanceReport};
use super::registry::{PluginSource, PluginView, VersionInfo};
use super::state::PluginState;
use super::{PluginBinding, PluginError, PluginHost, prepare};
use crate::store::{PluginRecord, Store, StoreError};

/// A plugin that passed upload checks 1–9, ready to be stored and installed.
pub struct CheckedPlugin {
    /// SHA-256 of the bytes as uploaded, hex.
    pub sha256: String,
    /// Size of the bytes as uploaded.
    pub size: u64,
    /// Whether a core module was made a component of the host's world (step 4).
    pub componentized: bool,
    /// How long step 5 took.
    pub compile_ms: u64,
    /// The largest initial linear memory, in bytes (step 8).
    pub initial_memory: u64,
    /// What the conformance samples used (step 9).
    pub conformance: ConformanceReport,
    component: Component,
    pre: PluginPre<PluginState>,
}

impl std::fmt::Debug for CheckedPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedPlugin")
            .field("sha256", &self.sha256)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl PluginHost {
    /// Upload checks 1–9 (docs/plugins.md), in order: size, sha256, validation, componentizing a
    /// core module with the host's own world, compile, no imports, `instantiate_pre`
    /// with the typed exports, memory, and conformance. No tenant code runs before
    /// step 9. Blocking: callers run it on a blocking thread (see
    /// [`super::uploads::check_upload`]).
    ///
    /// # Errors
    /// The [`PluginError`] of the first check that failed; see
    /// [`PluginError::check`].
    pub fn check(&self, bytes: &[u8]) -> Result<CheckedPlugin, PluginError> {
        let prepared = prepare(bytes, self.max_bytes)?;
        let started = Instant::now();
        let component = self.sandbox.compile(&prepared.component)?;
        let compile_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let pre = self.sandbox.pre(&component)?;
        let conformance = conformance::check(&self.sandbox, &pre)?;
        Ok(CheckedPlugin {
            sha256: prepared.sha256,
            size: bytes.len() as u64,
            componentized: prepared.componentized,
            compile_ms,
            initial_memory: super::componentize::largest_initial_memory(&prepared.component)
                .unwrap_or(0),
            conformance,
            component,
            pre,
        })
    }

    /// Makes a checked plugin version `version` of `tenant`'s `name`, active, and
    /// caches its compiled artifact. The caller stored it first (step 10).
    pub fn install(
        &self,
        tenant: &str,
        name: &str,
        version: u32,
        created_at_ms: u64,
        checked: CheckedPlugin,
    ) {
        if let Some(cache) = self.artifacts.get() {
            cache.save(&checked.sha256, &checked.component);
        }
        let info = VersionInfo {
            version,
            sha256: checked.sha256,
            size: checked.size,
            created_at_ms,
        };
        self.plugins
            .add(tenant, name, checked.pre, info, PluginSource::Upload);
        tracing::info!(tenant, plugin = name, version, "plugin uploaded");
    }

    /// Gives the host the data dir's artifact cache; only the first call counts.
    pub fn attach_artifacts(&self, cache: ArtifactCache) {
        let _ = self.artifacts.set(cache);
    }

    /// Tells `hook` `(tenant, name, version)` whenever a plugin version is disabled,
    /// so it can be stored; only the first call counts.
    pub fn on_version_disabled(&self, hook: impl Fn(&str, &str, u32) + Send + Sync + 'static) {
        let _ = self.on_version_disabled.set(Box::new(hook));
    }

    /// Loads a stored plugin's versions at start, from the artifact cache when a
    /// verified artifact exists, else from its bytes (steps 1–8; conformance passed
    /// at upload). A version that no longer loads is skipped with an error logged;
    /// returns how many loaded.
    ///
    /// # Errors
    /// A storage failure reading the bytes.
    pub fn restore(
        &self,
        record: &PluginRecord,
        bytes_of: impl Fn(u32) -> Result<Option<Vec<u8>>, StoreError>,
    ) -> Result<usize, StoreError> {
        let (tenant, name) = (record.tenant_id.as_str(), record.name.as_str());
        let mut loaded = 0;
        for v in &record.versions {
            let component = match self
                .artifacts
                .get()
                .and_then(|c| c.load(self.sandbox.engine(), &v.sha256))
            {
                Some(component) => Ok(component),
                None => self.compile_stored(tenant, name, v.version, &bytes_of)?,
            };
            let pre = component.and_then(|c| self.sandbox.pre(&c));
            match pre {
                Ok(pre) => {
                    let info = VersionInfo {
                        version: v.version,
                        sha256: v.sha256.clone(),
                        size: v.size,
                        created_at_ms: v.created_at_ms,
                    };
                    self.plugins
                        .add(tenant, name, pre, info, PluginSource::Upload);
                    if v.disabled
                        && let Some(p) = self.plugins.get(tenant, name, Some(v.version))
                    {
                        p.health.force_disable();
                    }
                    loaded += 1;
                }
                Err(e) => tracing::error!(
                    tenant, plugin = name, version = v.version, error = %e,
                    "a stored plugin version no longer loads; its bindings fall back"
                ),
            }
        }
        self.plugins.set_active(tenant, name, record.active);
        Ok(loaded)
    }

    /// A stored version compiled from its bytes, and cached.
    fn compile_stored(
        &self,
        tenant: &str,
        name: &str,
        version: u32,
        bytes_of: &impl Fn(u32) -> Result<Option<Vec<u8>>, StoreError>,
    ) -> Result<Result<Component, PluginError>, StoreError> {
        let Some(bytes) = bytes_of(version)? else {
            return Err(StoreError::Corrupt(format!(
                "plugin {tenant}/{name} version {version} has no bytes"
            )));
        };
        let compiled = prepare(&bytes, usize::MAX).and_then(|p| {
            let component = self.sandbox.compile(&p.component)?;
            if let Some(cache) = self.artifacts.get() {
                cache.save(&p.sha256, &component);
            }
            Ok(component)
        });
        Ok(compiled)
    }

    /// Keeps the newest `keep` versions of `tenant`'s `name` and drops older ones
    /// from the store, from memory and from the artifact cache; never the active
    /// version, nor one an endpoint binds as `name@version`. The one place plugin
    /// versions are pruned; callers hold [`super::uploads::UploadGate::changes`].
    /// Returns the versions dropped.
    ///
    /// # Errors
    /// On a storage failure; memory and the cache are then left as they were.
    pub async fn prune_versions(
        &self,
        store: &Store,
        tenant: &str,
        name: &str,
        keep: usize,
    ) -> Result<Vec<u32>, StoreError> {
        let pinned: Vec<u32> = store
            .endpoints_of(tenant)?
            .iter()
            .filter_map(|ep| PluginBinding::parse(tenant, ep.plugin.as_deref()?))
            .filter(|b| b.name == name)
            .filter_map(|b| b.version)
            .collect();
        let dropped = store
            .prune_plugin_versions(tenant, name, keep, &pinned)
            .await?;
        if dropped.is_empty() {
            return Ok(Vec::new());
        }
        let versions: Vec<u32> = dropped.iter().map(|v| v.version).collect();
        self.plugins.remove_versions(tenant, name, &versions);
        if let Some(cache) = self.artifacts.get() {
            // Identical bytes may be another version's too: keep what is still used.
            let remaining = store.all_plugins()?;
            let in_use = |sha: &str| {
                remaining
                    .iter()
                    .flat_map(|r| &r.versions)
                    .any(|v| v.sha256 == sha)
            };
            for v in dropped.iter().filter(|v| !in_use(&v.sha256)) {
                cache.remove(&v.sha256);
            }
        }
        tracing::info!(
            tenant,
            plugin = name,
            ?versions,
            "old plugin versions pruned"
        );
        Ok(versions)
    }

    /// Points bindings of the bare name at `version`; `false` if not loaded.
    pub fn set_active(&self, tenant: &str, name: &str, version: u32) -> bool {
        self.plugins.set_active(tenant, name, version)
    }

    /// Unloads every version of a plugin and drops the artifacts of `unused`
    /// sha256s; `false` if it was not loaded.
    pub fn unload(&self, tenant: &str, name: &str, unused: &[String]) -> bool {
        if let Some(cache) = self.artifacts.get() {
            for sha in unused {
                cache.remove(sha);
            }
        }
        self.plugins.remove(tenant, name)
    }

    /// Where a loaded plugin came from.
    pub fn source(&self, tenant: &str, name: &str) -> Option<PluginSource> {
        self.plugins.source(tenant, name)
    }

    /// One of `tenant`'s plugins, with its versions and their health.
    pub fn view(&self, tenant: &str, name: &str) -> Option<PluginView> {
        self.plugins.view(tenant, name)
    }

    /// `tenant`'s plugins (uploaded and preloaded), by name.
    pub fn views(&self, tenant: &str) -> Vec<PluginView> {
        self.plugins.views(tenant)
    }

    /// The upload limits.
    pub fn uploads(&self) -> &super::uploads::UploadGate {
        &self.uploads
    }
}
