//! The loaded plugins: each (tenant, name) has numbered versions and an active
//! one; each version keeps its compiled [`PluginPre`], what it was made from and
//! its health. A plugin comes either from `[[plugins.preload]]` (config-owned) or
//! from an upload (stored, restored at start).

use super::versions::PluginKind;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use super::budget::InlineHistory;
use super::health::{PluginHealth, PluginStatus};
use super::versions::PluginPre;

/// Where a plugin came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginSource {
    /// `[[plugins.preload]]` in the config: in memory only, managed by the config.
    Preload,
    /// `PUT /v1/tenants/{t}/plugins/{name}`: stored, restored at start.
    Upload,
}

/// What one version was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionInfo {
    pub version: u32,
    /// SHA-256 of the bytes as given, hex.
    pub sha256: String,
    pub size: u64,
    /// Unix ms when it was uploaded (or preloaded).
    pub created_at_ms: u64,
}

/// One version as the API lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionView {
    pub info: VersionInfo,
    pub status: PluginStatus,
}

/// A plugin as the API lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginView {
    pub name: String,
    pub source: PluginSource,
    /// The version a binding of the bare name uses.
    pub active: u32,
    /// What the active version is: a policy or a transform.
    pub kind: PluginKind,
    /// Oldest first.
    pub versions: Vec<VersionView>,
}

/// `plugin:<name>@<version>`: how a version names itself in `decided_by` and
/// in alerts.
pub(crate) fn plugin_label(name: &str, version: u32) -> String {
    format!("plugin:{name}@{version}")
}

/// One version of one tenant's plugin, ready to instantiate.
pub(crate) struct LoadedPlugin {
    pub(crate) tenant: String,
    pub(crate) name: String,
    pub(crate) version: u32,
    /// `plugin:<name>@<version>`, the `decided_by` of its decisions.
    pub(crate) label: String,
    pub(crate) pre: PluginPre,
    pub(crate) health: PluginHealth,
    /// Whether its recent decisions fit the inline budget: where the next runs.
    pub(crate) inline: InlineHistory,
    pub(crate) info: VersionInfo,
}

/// A plugin's versions, oldest first, and its active one.
struct Entry {
    versions: Vec<Arc<LoadedPlugin>>,
    active: u32,
    source: PluginSource,
}

/// Every loaded plugin, by (tenant, name).
#[derive(Default)]
pub(crate) struct PluginRegistry {
    plugins: RwLock<HashMap<(String, String), Entry>>,
}

type Key = (String, String);

fn key(tenant: &str, name: &str) -> Key {
    (tenant.to_owned(), name.to_owned())
}

impl PluginRegistry {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<Key, Entry>> {
        self.plugins.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<Key, Entry>> {
        self.plugins.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `pre` as version `info.version` of `tenant`'s `name` (0 means "the next
    /// one") and makes it active; returns the version.
    pub(crate) fn add(
        &self,
        tenant: &str,
        name: &str,
        pre: PluginPre,
        mut info: VersionInfo,
        source: PluginSource,
    ) -> u32 {
        let mut plugins = self.write();
        let entry = plugins.entry(key(tenant, name)).or_insert_with(|| Entry {
            versions: Vec::new(),
            active: 0,
            source,
        });
        if info.version == 0 {
            info.version = entry.versions.last().map_or(1, |p| p.version + 1);
        }
        let version = info.version;
        entry.versions.retain(|p| p.version != version);
        let at = entry.versions.partition_point(|p| p.version < version);
        entry.versions.insert(
            at,
            Arc::new(LoadedPlugin {
                tenant: tenant.to_owned(),
                name: name.to_owned(),
                version,
                label: plugin_label(name, version),
                pre,
                health: PluginHealth::default(),
                inline: InlineHistory::default(),
                info,
            }),
        );
        entry.active = version;
        version
    }

    /// Points a binding of the bare name at `version`; `false` if it is not loaded.
    pub(crate) fn set_active(&self, tenant: &str, name: &str, version: u32) -> bool {
        match self.write().get_mut(&key(tenant, name)) {
            Some(e) if e.versions.iter().any(|p| p.version == version) => {
                e.active = version;
                true
            }
            _ => false,
        }
    }

    /// Forgets the listed versions of a plugin, never its active one; returns
    /// how many went.
    pub(crate) fn remove_versions(&self, tenant: &str, name: &str, versions: &[u32]) -> usize {
        let mut plugins = self.write();
        let Some(entry) = plugins.get_mut(&key(tenant, name)) else {
            return 0;
        };
        let before = entry.versions.len();
        let active = entry.active;
        entry
            .versions
            .retain(|p| p.version == active || !versions.contains(&p.version));
        before - entry.versions.len()
    }

    /// Forgets every version of a plugin; `false` if there was none.
    pub(crate) fn remove(&self, tenant: &str, name: &str) -> bool {
        self.write().remove(&key(tenant, name)).is_some()
    }

    /// Where a loaded plugin came from.
    pub(crate) fn source(&self, tenant: &str, name: &str) -> Option<PluginSource> {
        self.read().get(&key(tenant, name)).map(|e| e.source)
    }

    /// The plugin a binding names: `version` exactly, or the active one.
    pub(crate) fn get(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> Option<Arc<LoadedPlugin>> {
        let plugins = self.read();
        let entry = plugins.get(&key(tenant, name))?;
        let want = version.unwrap_or(entry.active);
        entry.versions.iter().find(|p| p.version == want).cloned()
    }

    /// The status of the named version, or of the active one.
    pub(crate) fn status(
        &self,
        tenant: &str,
        name: &str,
        version: Option<u32>,
    ) -> Option<PluginStatus> {
        self.get(tenant, name, version)
            .map(|p| p.health.status(p.version))
    }

    /// One plugin as the API shows it.
    pub(crate) fn view(&self, tenant: &str, name: &str) -> Option<PluginView> {
        self.read().get(&key(tenant, name)).map(|e| view(name, e))
    }

    /// A tenant's plugins, by name.
    pub(crate) fn views(&self, tenant: &str) -> Vec<PluginView> {
        let mut out: Vec<PluginView> = self
            .read()
            .iter()
            .filter(|((t, _), _)| t == tenant)
            .map(|((_, name), e)| view(name, e))
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

fn view(name: &str, e: &Entry) -> PluginView {
    PluginView {
        name: name.to_owned(),
        source: e.source,
        active: e.active,
        kind: e
            .versions
            .iter()
            .find(|p| p.version == e.active)
            .map_or(PluginKind::Policy, |p| p.pre.version().kind()),
        versions: e
            .versions
            .iter()
            .map(|p| VersionView {
                info: p.info.clone(),
                status: p.health.status(p.version),
            })
            .collect(),
    }
}
