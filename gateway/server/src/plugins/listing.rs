//! What the API lists: a tenant's plugins, uploaded ones from the store (with
//! their health from the host) and preloaded ones from the host alone.

use crate::ids::TenantId;
use crate::plugin_runtime::{PluginSource, PluginView};
use crate::store::PluginRecord;

use super::{PluginService, PluginServiceError};

/// One plugin as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListedPlugin {
    /// From `[[plugins.preload]]`: known to the host only.
    Preloaded(PluginView),
    /// Uploaded: its record as stored.
    Uploaded(PluginRecord),
}

impl ListedPlugin {
    /// The plugin's name.
    pub(crate) fn name(&self) -> &str {
        match self {
            Self::Preloaded(view) => &view.name,
            Self::Uploaded(rec) => &rec.name,
        }
    }
}

impl PluginService {
    /// Every plugin of `tenant`, by name; a stored plugin with a preloaded one's
    /// name is not listed (the preloaded one is used).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn list(
        &self,
        tenant: &TenantId,
    ) -> Result<Vec<ListedPlugin>, PluginServiceError> {
        let mut items: Vec<ListedPlugin> = self
            .host
            .views(tenant)
            .into_iter()
            .filter(|v| v.source == PluginSource::Preload)
            .map(ListedPlugin::Preloaded)
            .collect();
        for rec in self.store.plugins_of(tenant).await? {
            if self.source(tenant, &rec.name) != Some(PluginSource::Preload) {
                items.push(ListedPlugin::Uploaded(rec));
            }
        }
        items.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(items)
    }

    /// One plugin of `tenant`.
    ///
    /// # Errors
    /// `NotFound`, or on a storage failure.
    pub(crate) async fn show(
        &self,
        tenant: &TenantId,
        name: &str,
    ) -> Result<ListedPlugin, PluginServiceError> {
        if self.source(tenant, name) == Some(PluginSource::Preload)
            && let Some(view) = self.host.view(tenant, name)
        {
            return Ok(ListedPlugin::Preloaded(view));
        }
        let rec = self
            .store
            .plugin(tenant, name)
            .await?
            .ok_or(PluginServiceError::NotFound)?;
        Ok(ListedPlugin::Uploaded(rec))
    }
}
