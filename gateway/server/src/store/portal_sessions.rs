//! Portal sessions: short-lived, scoped tokens a platform mints for one of its
//! tenants' customers, stored only as the token's SHA-256, like API keys. Every
//! request with one reads its record here, so a revocation (every session of a
//! tenant at once) holds on every gateway sharing the store as soon as it
//! commits.

use serde::{Deserialize, Serialize};

use super::{Store, StoreError};
use crate::ids::{EndpointId, TenantId};

/// What a portal session may do, beyond nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortalCapability {
    /// Read the tenant's endpoints, events, deliveries, attempts, stats and
    /// plugins, and the catalog.
    View,
    /// Create, change and delete endpoints; send them test events.
    ManageEndpoints,
    /// Reveal and rotate endpoints' signing secrets.
    ReadSecrets,
    /// Replay deliveries and recover endpoints.
    Replay,
    /// Upload, roll back and delete retry plugins.
    ManagePlugins,
}

impl PortalCapability {
    /// Every capability, as the API names them.
    pub const ALL: [Self; 5] = [
        Self::View,
        Self::ManageEndpoints,
        Self::ReadSecrets,
        Self::Replay,
        Self::ManagePlugins,
    ];

    /// Its name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::View => "view",
            Self::ManageEndpoints => "manage_endpoints",
            Self::ReadSecrets => "read_secrets",
            Self::Replay => "replay",
            Self::ManagePlugins => "manage_plugins",
        }
    }
}

/// How the portal looks for one session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortalTheme {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_name: Option<String>,
    /// An `https:` URL or a `data:image/...` URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_url: Option<String>,
    /// `#rrggbb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accent_color: Option<String>,
    /// `light` or `dark`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

impl PortalTheme {
    /// `self`, with what `over` sets laid over it.
    pub fn overlaid(&self, over: &Self) -> Self {
        Self {
            product_name: over
                .product_name
                .clone()
                .or_else(|| self.product_name.clone()),
            logo_url: over.logo_url.clone().or_else(|| self.logo_url.clone()),
            accent_color: over
                .accent_color
                .clone()
                .or_else(|| self.accent_color.clone()),
            mode: over.mode.clone().or_else(|| self.mode.clone()),
        }
    }
}

/// A tenant's own portal settings: origins that may frame its customers'
/// portal (beside `console.embed_origins`), and the theme its sessions start
/// from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortalSettings {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub embed_origins: Vec<String>,
    #[serde(default)]
    pub theme: PortalTheme,
}

impl PortalSettings {
    /// Whether nothing is set (so records without it stay as they were).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One portal session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortalSessionRecord {
    /// `pss_` + ULID of its creation: names it without revealing the token.
    pub id: String,
    pub tenant_id: TenantId,
    /// Hex SHA-256 of the token.
    pub token_hash: String,
    pub capabilities: Vec<PortalCapability>,
    #[serde(default)]
    pub theme: PortalTheme,
    /// The only endpoints it reaches (by id); every endpoint when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<EndpointId>,
    /// The only event types it sees and subscribes to (names or patterns);
    /// every type when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event_types: Vec<String>,
    pub created_at_ms: u64,
    pub expires_at_ms: u64,
}

impl PortalSessionRecord {
    /// Whether the session may do what `cap` allows.
    pub fn allows(&self, cap: PortalCapability) -> bool {
        self.capabilities.contains(&cap)
    }

    /// Whether it reaches `endpoint`.
    pub fn reaches_endpoint(&self, endpoint: &EndpointId) -> bool {
        self.endpoints.is_empty() || self.endpoints.contains(endpoint)
    }
}

impl Store {
    /// Stores a new session.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn create_portal_session(&self, rec: &PortalSessionRecord) -> Result<(), StoreError> {
        on_backend!(self, s => s.create_portal_session(rec).await)
    }

    /// The session whose token hashes to `token_hash`, expired or not.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn portal_session(
        &self,
        token_hash: &[u8; 32],
    ) -> Result<Option<PortalSessionRecord>, StoreError> {
        let hash = hex::encode(token_hash);
        on_backend!(self, s => sync s.portal_session(&hash))
    }

    /// Ends the one session `rec` (a sign-out); answers whether it was there.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn end_portal_session(&self, rec: &PortalSessionRecord) -> Result<bool, StoreError> {
        on_backend!(self, s => s.end_portal_session(rec).await)
    }

    /// Ends every session of `tenant` (and forgets expired ones with them);
    /// answers how many were removed.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn revoke_portal_sessions(&self, tenant: &TenantId) -> Result<usize, StoreError> {
        on_backend!(self, s => s.revoke_portal_sessions(tenant).await)
    }

    /// Removes up to `limit` sessions that expired before `now_ms`; answers
    /// how many.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn sweep_portal_sessions(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> Result<usize, StoreError> {
        on_backend!(self, s => s.sweep_portal_sessions(now_ms, limit).await)
    }
}
