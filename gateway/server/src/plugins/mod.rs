//! The plugin service: tenants' retry-policy plugins at the application level
//! (docs/plugins.md). It owns the store's plugin records and the [`PluginHost`]
//! that runs them, and keeps the two in step: upload, rollback, delete, and
//! restoring what is stored at start. The API is a thin HTTP layer over it; the
//! host stays runtime only.
//!
//! Files: `uploads` (the upload gate: rate, one compile at a time, the order of
//! changes), `changes` (upload, rollback, delete, and the one method each for
//! allocating a version, activating one and pruning), `startup` (the host from
//! the config, the artifact cache's key, restoring and pruning at start, and
//! storing that a version was disabled), `listing` (what the API shows).

mod changes;
mod listing;
mod startup;
mod sync;
#[cfg(test)]
mod tests;
mod uploads;

use std::sync::Arc;

use crate::clock::Clock;
use crate::ids::TenantId;
use crate::plugin_runtime::PluginKind;
use crate::plugin_runtime::{PluginError, PluginHost, PluginSource, PluginStatus};
use crate::store::{Store, StoreError};

pub(crate) use listing::ListedPlugin;
pub(crate) use startup::host_from_config;
pub(crate) use uploads::UPLOADS_PER_HOUR;
use uploads::UploadGate;

/// The limits the service applies, from `[limits]` and `[plugins]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PluginLimits {
    /// Most plugins a tenant may have.
    pub plugins_per_tenant: usize,
    /// Versions kept per plugin (with the active one and any an endpoint pins).
    pub keep_versions: usize,
}

impl PluginLimits {
    /// The limits of `config`.
    pub(crate) fn of(config: &crate::config::Config) -> Self {
        Self {
            plugins_per_tenant: config.limits.plugins_per_tenant,
            keep_versions: usize::try_from(config.plugins.keep_versions).unwrap_or(usize::MAX),
        }
    }
}

/// Why a plugin change was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum PluginServiceError {
    /// Not a name endpoints can bind.
    #[error("a plugin name is 1 to 63 of a-z, 0-9, _ and -, starting with a letter or digit")]
    InvalidName,
    /// The config owns this plugin.
    #[error("plugin {name:?} is loaded from [[plugins.preload]]; change it in the config")]
    Preloaded { name: String },
    /// A new name past the tenant's most plugins.
    #[error("a tenant may have at most {max} plugins")]
    TooManyPlugins { max: usize },
    /// The tenant made [`UPLOADS_PER_HOUR`] uploads within the hour.
    #[error(
        "at most {UPLOADS_PER_HOUR} plugin uploads per tenant per hour; try again in {} s",
        wait_ms.div_ceil(1_000)
    )]
    RateLimited { wait_ms: u64 },
    /// Another upload kept the compiler busy too long.
    #[error("the plugin compiler is busy; try again shortly")]
    Busy,
    /// A check refused the plugin (an overrun of the compile limit is a compile
    /// refusal).
    #[error("{}", rejection(.0))]
    Rejected(PluginError),
    /// No such plugin.
    #[error("plugin not found")]
    NotFound,
    /// Endpoints bind it, so it cannot go.
    #[error("plugin {name:?} is bound by endpoint(s) {}; unbind it first", endpoints.join(", "))]
    Bound {
        name: String,
        endpoints: Vec<String>,
    },
    /// The active version is the oldest.
    #[error("version {active} of plugin {name:?} is the oldest; there is nothing to roll back to")]
    NothingToRollBackTo { name: String, active: u32 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A refusal names the check that made it, when there is one.
fn rejection(e: &PluginError) -> String {
    match e.check() {
        Some(check) => format!("check {check}: {e}"),
        None => e.to_string(),
    }
}

/// Tenants' plugins: the stored records and the loaded host, changed together.
pub(crate) struct PluginService {
    store: Store,
    host: Arc<PluginHost>,
    gate: UploadGate,
    clock: Arc<dyn Clock>,
    limits: PluginLimits,
}

impl std::fmt::Debug for PluginService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginService")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl PluginService {
    /// The host that runs the plugins (the delivery engine decides with it).
    pub(crate) fn host(&self) -> &Arc<PluginHost> {
        &self.host
    }

    /// The kind of plugin `spec` names for `tenant`; `None` if none is loaded.
    pub(crate) fn kind_of(&self, tenant: &TenantId, spec: &str) -> Option<PluginKind> {
        self.host.kind_of(tenant, spec)
    }

    /// Where a loaded plugin came from.
    pub(crate) fn source(&self, tenant: &TenantId, name: &str) -> Option<PluginSource> {
        self.host.source(tenant, name)
    }

    /// The health of one loaded version; `None` if it is not loaded.
    pub(crate) fn version_status(
        &self,
        tenant: &TenantId,
        name: &str,
        version: u32,
    ) -> Option<PluginStatus> {
        self.host.version_status(tenant, name, version)
    }

    /// Refuses changes to a plugin the config owns.
    fn refuse_preloaded(&self, tenant: &TenantId, name: &str) -> Result<(), PluginServiceError> {
        if self.source(tenant, name) == Some(PluginSource::Preload) {
            return Err(PluginServiceError::Preloaded {
                name: name.to_owned(),
            });
        }
        Ok(())
    }
}
