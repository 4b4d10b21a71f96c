//! What an endpoint's requests are signed with and under which header names:
//! decided once when the endpoint is written, carried as types to the worker
//! and the attempt log.

use serde::{Deserialize, Serialize};

/// A signature scheme of the Standard Webhooks spec, named by its identifier.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SignatureScheme {
    /// HMAC-SHA256 with the endpoint's `whsec_` secret.
    V1,
    /// ed25519 with the endpoint's `whsk_` key; receivers verify with its `whpk_`.
    V1a,
}

impl SignatureScheme {
    /// The identifier each signature entry starts with.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1 => "v1",
            Self::V1a => "v1a",
        }
    }
}

/// Which names the id, timestamp and signature headers are sent under.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum HeaderSet {
    /// `webhook-id`, `webhook-timestamp`, `webhook-signature` (Standard Webhooks).
    #[default]
    Webhook,
    /// `svix-id`, `svix-timestamp`, `svix-signature`, as receivers built for Svix read.
    Svix,
    /// Both sets, with the same values.
    Both,
}

/// The three names of one header set, in the order id, timestamp, signature.
type HeaderNames = [&'static str; 3];

const WEBHOOK_NAMES: HeaderNames = ["webhook-id", "webhook-timestamp", "webhook-signature"];
const SVIX_NAMES: HeaderNames = ["svix-id", "svix-timestamp", "svix-signature"];

impl HeaderSet {
    /// The names sent, one triple per set.
    pub fn names(self) -> &'static [[&'static str; 3]] {
        match self {
            Self::Webhook => &[WEBHOOK_NAMES],
            Self::Svix => &[SVIX_NAMES],
            Self::Both => &[WEBHOOK_NAMES, SVIX_NAMES],
        }
    }

    /// Whether it is the default, `webhook` (records leave it out then).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// An endpoint's signature settings (fields in name order, as views show them). `v1` under `webhook-*` by default, which
/// is what records written before the setting existed read as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SignatureSettings {
    /// The header names used.
    #[serde(default)]
    pub headers: HeaderSet,
    /// The schemes each request is signed with, in the order their entries
    /// appear in the signature header; one or both of `v1`, `v1a`.
    #[serde(default = "default_schemes")]
    #[schema(min_items = 1, max_items = 2, example = json!(["v1", "v1a"]))]
    pub schemes: Vec<SignatureScheme>,
}

fn default_schemes() -> Vec<SignatureScheme> {
    vec![SignatureScheme::V1]
}

impl Default for SignatureSettings {
    fn default() -> Self {
        Self {
            schemes: default_schemes(),
            headers: HeaderSet::default(),
        }
    }
}

impl SignatureSettings {
    /// Settings with `schemes` in their canonical order (`v1` before `v1a`),
    /// each once.
    ///
    /// # Errors
    /// [`SettingsError::NoScheme`] when `schemes` is empty.
    pub fn new(
        mut schemes: Vec<SignatureScheme>,
        headers: HeaderSet,
    ) -> Result<Self, SettingsError> {
        schemes.sort_unstable();
        schemes.dedup();
        if schemes.is_empty() {
            return Err(SettingsError::NoScheme);
        }
        Ok(Self { schemes, headers })
    }

    /// Whether requests carry `scheme`'s signatures.
    pub fn uses(&self, scheme: SignatureScheme) -> bool {
        self.schemes.contains(&scheme)
    }

    /// Whether it is today's default (records leave it out then).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Why signature settings are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// No scheme: a request would carry no signature.
    #[error("signature.schemes must name at least one of \"v1\", \"v1a\"")]
    NoScheme,
}
