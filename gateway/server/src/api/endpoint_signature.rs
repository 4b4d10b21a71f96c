//! An endpoint's `signature` field: the schemes its requests are signed with
//! and the header names they go under, as given (create, PUT, merge patch)
//! and as kept, with the `v1a` key made when the endpoint first needs one.

use serde::{Deserialize, Serialize};

use super::error::ApiError;
use crate::signing::{Ed25519Key, HeaderSet, SignatureScheme, SignatureSettings};
use crate::store::EndpointRecord;

/// The signature setting as given: absent parts keep their defaults on
/// create and PUT, their stored values on a merge patch.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"schemes": ["v1", "v1a"], "headers": "svix"}))]
pub(super) struct SignatureInput {
    /// `v1` (HMAC-SHA256 with the `whsec_` secret), `v1a` (ed25519; receivers
    /// verify with the `whpk_` key of `GET .../secret`), or both; `["v1"]`
    /// when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(min_items = 1, max_items = 2)]
    pub(super) schemes: Option<Vec<SignatureScheme>>,
    /// `webhook` (`webhook-id`, `webhook-timestamp`, `webhook-signature`),
    /// `svix` (`svix-*`), or `both`; `webhook` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) headers: Option<HeaderSet>,
}

impl SignatureInput {
    /// The setting as stored, for a patch to start from.
    pub(super) fn of(settings: &SignatureSettings) -> Self {
        Self {
            schemes: Some(settings.schemes.clone()),
            headers: Some(settings.headers),
        }
    }

    /// The settings it gives.
    ///
    /// # Errors
    /// 422 `validation_failed` naming `signature.schemes` when it is empty.
    pub(super) fn settings(self) -> Result<SignatureSettings, ApiError> {
        let default = SignatureSettings::default();
        SignatureSettings::new(
            self.schemes.unwrap_or(default.schemes),
            self.headers.unwrap_or(default.headers),
        )
        .map_err(|e| ApiError::validation("signature.schemes", e.to_string()))
    }
}

/// Writes `settings` into `ep`, giving its newest secret a `v1a` key if it
/// signs with `v1a` and has none yet. A key once made is kept when `v1a` is
/// turned off, so turning it on again keeps the receiver's public key.
pub(super) fn apply(ep: &mut EndpointRecord, settings: SignatureSettings) {
    if settings.uses(SignatureScheme::V1a)
        && let Some(newest) = ep.secrets.first_mut()
        && newest.signing_key.is_none()
    {
        newest.signing_key = Some(Ed25519Key::generate().secret_text());
    }
    ep.signature = settings;
}

/// A `v1a` key for a secret made by a rotation of `ep`, if it signs with `v1a`.
pub(super) fn key_for_rotation(ep: &EndpointRecord) -> Option<String> {
    ep.signature
        .uses(SignatureScheme::V1a)
        .then(|| Ed25519Key::generate().secret_text())
}

/// The `whpk_` public key of a stored `whsk_` key, for the receiver.
pub(super) fn public_key(signing_key: Option<&str>) -> Option<String> {
    signing_key
        .and_then(|k| Ed25519Key::parse(k).ok())
        .map(|k| k.public_text())
}
