//! How an endpoint looks in the API (never its secrets, but for the answer to
//! create), and the view of its live signing secrets (`GET .../secret`).
//!
//! Fields are declared in alphabetical order: the `json!` bodies these replaced
//! serialised that way (serde_json without `preserve_order`), and clients may
//! compare bytes. A field that has no value is `null`, never left out.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::endpoint_headers;
use super::endpoint_schema::PayloadFilterSchema;
use super::endpoint_signature::public_key;

use crate::clock::rfc3339_ms;
use crate::delivery::effective_policy;
use crate::policy::{EffectivePolicy, PolicySpec};
use crate::signing::SignatureSettings;
use crate::store::{BreakerState, EndpointRecord, Recorded, StoredSecret};

/// An endpoint as create, list, show, update and the breaker reset show it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EndpointView {
    breaker: BreakerView,
    /// The channels it listens on; empty: every event its types match.
    channels: Vec<String>,
    #[schema(format = DateTime)]
    created_at: String,
    description: String,
    /// Where attempts go, every secret masked.
    #[schema(value_type = super::endpoint_destination::DestinationSchema)]
    destination: serde_json::Value,
    disabled: bool,
    disabled_reason: Option<String>,
    event_types: Vec<String>,
    /// The payload filter, as set.
    #[schema(value_type = Option<PayloadFilterSchema>)]
    filter: Option<serde_json::Value>,
    /// Sent with every attempt; a sensitive value shows as `********`.
    headers: BTreeMap<String, String>,
    id: String,
    max_in_flight: u32,
    /// The platform's own strings about the endpoint.
    metadata: BTreeMap<String, String>,
    plugin: Option<String>,
    /// The policy as the tenant set it.
    policy: Option<serde_json::Value>,
    /// The policy in force: the tenant's laid over the configured default.
    #[serde(serialize_with = "sorted_keys")]
    policy_effective: EffectivePolicy,
    /// Only in the answer to create, for a `v1a` endpoint: the `whpk_` key its
    /// receiver verifies `v1a` signatures with (also at `GET .../secret`).
    #[serde(skip_serializing_if = "Option::is_none")]
    public_key: Option<String>,
    rate_limit_per_s: Option<u32>,
    /// Only in the answer to create: the signing secret (generated or given).
    /// The live secrets can be read again at `GET .../endpoints/{id}/secret`.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
    /// The headers whose values are masked.
    sensitive_headers: Vec<String>,
    /// The signature schemes and the header names requests are sent with.
    signature: SignatureSettings,
    timeout_ms: u64,
    /// The transform bound, run before each attempt is signed.
    transform: Option<String>,
    /// The tenant's own identifier for it.
    uid: Option<String>,
    /// The last change made through the API.
    #[schema(format = DateTime)]
    updated_at: String,
    url: String,
}

/// The endpoint's circuit breaker.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct BreakerView {
    #[schema(format = DateTime)]
    open_until: Option<String>,
    /// One of the names of [`BreakerState`]; a name written by another build is shown as it is.
    #[schema(value_type = String)]
    state: Recorded<BreakerState>,
    trips: u32,
}

impl EndpointView {
    pub(super) fn new(ep: &EndpointRecord, default: &PolicySpec) -> Self {
        Self {
            breaker: BreakerView {
                open_until: ep.breaker.open_until_ms.map(rfc3339_ms),
                state: ep.breaker.state.clone(),
                trips: ep.breaker.trips,
            },
            channels: ep.channels.clone(),
            created_at: rfc3339_ms(ep.created_at_ms),
            updated_at: rfc3339_ms(ep.updated_at_ms.max(ep.created_at_ms)),
            description: ep.description.clone(),
            destination: super::endpoint_destination::shown(ep),
            disabled: ep.disabled,
            disabled_reason: ep.disabled_reason.clone(),
            event_types: ep.event_types.clone(),
            filter: ep.filter.clone(),
            headers: endpoint_headers::shown(&ep.headers),
            id: ep.id.to_string(),
            max_in_flight: ep.max_in_flight,
            metadata: ep.metadata.clone(),
            plugin: ep.plugin.clone(),
            transform: ep.transform.clone(),
            policy: ep.policy.clone(),
            policy_effective: effective_policy(ep, default).0,
            public_key: None,
            rate_limit_per_s: ep.rate_limit_per_s,
            secret: None,
            sensitive_headers: endpoint_headers::sensitive_names(&ep.headers),
            signature: ep.signature.clone(),
            timeout_ms: ep.timeout_ms,
            uid: ep.uid.clone(),
            url: ep.url.clone(),
        }
    }

    /// The view for `who`: with the new endpoint's secret only if it may read
    /// secrets.
    pub(super) fn with_secret_for(self, ep: &EndpointRecord, who: &super::auth::Principal) -> Self {
        if who.may_read_secrets() {
            self.with_secret(ep)
        } else {
            self
        }
    }

    /// The view with the endpoint's new secret (and its `v1a` public key, if
    /// it signs with `v1a`), for the answer to create.
    pub(super) fn with_secret(self, ep: &EndpointRecord) -> Self {
        let newest = ep.secrets.first();
        let v1a = ep.signature.uses(crate::signing::SignatureScheme::V1a);
        Self {
            secret: newest.map(|s| s.secret.clone()),
            public_key: newest
                .filter(|_| v1a)
                .and_then(|s| public_key(s.signing_key.as_deref())),
            ..self
        }
    }
}

/// Writes `value` with its object keys sorted, as `json!` wrote the effective
/// policy (whose fields, some flattened, are not declared in that order).
fn sorted_keys<T: Serialize, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(value)
        .map_err(serde::ser::Error::custom)?
        .serialize(serializer)
}

/// The endpoint's live signing secrets, newest first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EndpointSecrets {
    /// The newest secret's `whpk_` ed25519 public key, which receivers verify
    /// `v1a` signatures with; `null` unless the endpoint signs with `v1a`.
    public_key: Option<String>,
    /// The newest, which signs first; `null` if none is live.
    secret: Option<String>,
    secrets: Vec<SecretView>,
    /// The signature schemes and header names in use.
    signature: SignatureSettings,
}

/// One live secret; a rotated-out one has the time it stops signing (its
/// `v1a` key stops with it).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct SecretView {
    #[schema(format = DateTime)]
    expires_at: Option<String>,
    /// Its `whpk_` public key while the endpoint signs with `v1a`, else `null`.
    public_key: Option<String>,
    secret: String,
}

impl EndpointSecrets {
    /// The secrets of `ep` still live at `now`.
    pub(super) fn new(ep: &EndpointRecord, now: u64) -> Self {
        let live: Vec<&StoredSecret> = ep
            .secrets
            .iter()
            .filter(|s| s.expires_at_ms.is_none_or(|e| e > now))
            .collect();
        let v1a = ep.signature.uses(crate::signing::SignatureScheme::V1a);
        let public = |s: &StoredSecret| v1a.then(|| public_key(s.signing_key.as_deref())).flatten();
        Self {
            public_key: live.first().and_then(|s| public(s)),
            secret: live.first().map(|s| s.secret.clone()),
            secrets: live
                .iter()
                .map(|s| SecretView {
                    expires_at: s.expires_at_ms.map(rfc3339_ms),
                    public_key: public(s),
                    secret: s.secret.clone(),
                })
                .collect(),
            signature: ep.signature.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
