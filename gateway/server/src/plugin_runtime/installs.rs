//! The loaded plugins, and changing them: installing a checked version,
//! loading a preloaded file, restoring stored versions at start through the
//! artifact cache, moving the active pointer, dropping versions, and what the
//! API lists. [`Installs`] holds the registry, the artifact cache and the engine
//! it compiles with. What is stored is the caller's business; the host only
//! holds what is loaded.

use std::sync::{Arc, OnceLock};

use wasmtime::component::Component;

use super::artifacts::ArtifactCache;
use super::checks::CheckedPlugin;
use super::engine::Sandbox;
use super::health::PluginStatus;
use super::registry::{LoadedPlugin, PluginRegistry, PluginSource, PluginView, VersionInfo};
use super::versions::PluginPre;
use super::{PluginError, prepare};

/// A stored plugin as the host restores it: its versions, oldest first, and the
/// active one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPlugin {
    pub tenant_id: String,
    pub name: String,
    pub versions: Vec<StoredVersion>,
    pub active: u32,
}

/// One stored version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredVersion {
    pub version: u32,
    /// SHA-256 of the bytes as uploaded, hex (the artifact's name).
    pub sha256: String,
    pub size: u64,
    pub created_at_ms: u64,
    /// Disabled before a restart; stays disabled.
    pub disabled: bool,
}

/// A stored version whose bytes are gone: the store is corrupt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin {tenant}/{name} version {version} has no bytes")]
pub struct MissingBytes {
    pub tenant: String,
    pub name: String,
    pub version: u32,
}

/// The loaded plugins, the compiled-artifact cache (once the data dir is known)
/// and the engine that compiles stored versions.
pub(super) struct Installs {
    sandbox: Arc<Sandbox>,
    plugins: PluginRegistry,
    artifacts: OnceLock<ArtifactCache>,
}

impl Installs {
    pub(super) fn new(sandbox: Arc<Sandbox>) -> Self {
        Self {
            sandbox,
            plugins: PluginRegistry::default(),
            artifacts: OnceLock::new(),
        }
    }

    /// The loaded version of `tenant`'s `name` (the active one for `None`).
    pub(super) fn loaded(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> Option<Arc<LoadedPlugin>> {
        self.plugins.get(tenant, name, version)
    }

    /// The health of a loaded version (the active one for `None`).
    pub(super) fn status(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> Option<PluginStatus> {
        self.plugins.status(tenant, name, version)
    }

    /// Adds a preloaded file's version, active; returns its number.
    pub(super) fn add_preloaded(
        &self,
        tenant: &str,
        name: &str,
        pre: PluginPre,
        info: VersionInfo,
    ) -> u32 {
        self.plugins
            .add(tenant, name, pre, info, PluginSource::Preload)
    }

    /// Makes a checked plugin version `version` of `tenant`'s `name`, active, and
    /// caches its compiled artifact. The caller stored it first (step 10).
    pub(super) fn install(
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
        tracing::info!(tenant = %tenant, plugin = name, version, "plugin uploaded");
    }

    /// Gives the host the data dir's artifact cache; only the first call counts.
    pub(super) fn attach_artifacts(&self, cache: ArtifactCache) {
        let _ = self.artifacts.set(cache);
    }

    /// Loads a stored plugin's versions at start, from the artifact cache when a
    /// verified artifact exists, else from the bytes `bytes_of` reads (steps 1–8;
    /// conformance passed at upload). A version that no longer loads is skipped
    /// with an error logged; returns how many loaded.
    ///
    /// # Errors
    /// What `bytes_of` fails with, or [`MissingBytes`] when it finds none.
    pub(super) async fn restore<E, F>(
        &self,
        record: &StoredPlugin,
        bytes_of: impl Fn(u32) -> F,
    ) -> Result<usize, E>
    where
        E: From<MissingBytes>,
        F: Future<Output = Result<Option<Vec<u8>>, E>>,
    {
        let (tenant, name) = (record.tenant_id.as_str(), record.name.as_str());
        let mut loaded = 0;
        for v in &record.versions {
            let component = match self
                .artifacts
                .get()
                .and_then(|c| c.load(self.sandbox.engine(), &v.sha256))
            {
                Some(component) => Ok(component),
                None => {
                    let bytes = bytes_of(v.version).await?;
                    self.compile_stored(tenant, name, v.version, bytes)?
                }
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
                    tenant = %tenant, plugin = name, version = v.version, error = %e,
                    "a stored plugin version no longer loads; its bindings fall back"
                ),
            }
        }
        self.plugins.set_active(tenant, name, record.active);
        Ok(loaded)
    }

    /// A stored version compiled from its bytes (`None`: the store has none),
    /// and cached.
    fn compile_stored<E: From<MissingBytes>>(
        &self,
        tenant: &str,
        name: &str,
        version: u32,
        bytes: Option<Vec<u8>>,
    ) -> Result<Result<Component, PluginError>, E> {
        let Some(bytes) = bytes else {
            return Err(MissingBytes {
                tenant: tenant.to_owned(),
                name: name.to_owned(),
                version,
            }
            .into());
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

    /// Forgets `versions` of `tenant`'s `name` (never the active one) and drops the
    /// artifacts of `unused` sha256s. The caller dropped them from the store first.
    pub(super) fn remove_versions(
        &self,
        tenant: &str,
        name: &str,
        versions: &[u32],
        unused: &[String],
    ) {
        self.plugins.remove_versions(tenant, name, versions);
        self.remove_artifacts(unused);
    }

    /// Disables `version` of `tenant`'s `name` as stored elsewhere (another
    /// gateway counted its failures); `false` if not loaded.
    pub(super) fn force_disable(&self, tenant: &str, name: &str, version: u32) -> bool {
        let Some(p) = self.plugins.get(tenant, name, Some(version)) else {
            return false;
        };
        p.health.force_disable();
        true
    }

    /// Points bindings of the bare name at `version`; `false` if not loaded.
    pub(super) fn set_active(&self, tenant: &str, name: &str, version: u32) -> bool {
        self.plugins.set_active(tenant, name, version)
    }

    /// Unloads every version of a plugin and drops the artifacts of `unused`
    /// sha256s; `false` if it was not loaded.
    pub(super) fn unload(&self, tenant: &str, name: &str, unused: &[String]) -> bool {
        self.remove_artifacts(unused);
        self.plugins.remove(tenant, name)
    }

    fn remove_artifacts(&self, unused: &[String]) {
        if let Some(cache) = self.artifacts.get() {
            for sha in unused {
                cache.remove(sha);
            }
        }
    }

    /// Where a loaded plugin came from.
    pub(super) fn source(&self, tenant: &str, name: &str) -> Option<PluginSource> {
        self.plugins.source(tenant, name)
    }

    /// One of `tenant`'s plugins, with its versions and their health.
    pub(super) fn view(&self, tenant: &str, name: &str) -> Option<PluginView> {
        self.plugins.view(tenant, name)
    }

    /// `tenant`'s plugins (uploaded and preloaded), by name.
    pub(super) fn views(&self, tenant: &str) -> Vec<PluginView> {
        self.plugins.views(tenant)
    }
}
