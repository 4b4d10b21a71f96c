//! The endpoint object: what a tenant may set and how it is validated. Create and
//! merge-patch share one validation; `endpoint_view.rs` shows the endpoint.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::auth::Principal;
use super::endpoint_destination;
use super::endpoint_headers;
use super::endpoint_schema::{EventTypePattern, MetadataSchema, PayloadFilterSchema};
use super::endpoint_signature::{self, SignatureInput};
use super::labels::Label;
use super::metadata;
use serde_json::Value;

use super::error::ApiError;
use crate::address_guard::{UrlError, normalize_endpoint_url};
use crate::context::AppContext;
use crate::event_type;
use crate::payload_filter::PayloadFilter;
use crate::plugin_runtime::PluginKind;
use crate::policy::PolicySpec;
use crate::store::EndpointRecord;

/// Default request timeout of an endpoint.
pub(super) const DEFAULT_TIMEOUT_MS: u64 = 15_000;
/// Default in-flight cap of an endpoint.
pub(super) const DEFAULT_MAX_IN_FLIGHT: u32 = 16;

/// The settable fields. Absent means "the default" on create and "unchanged" on PATCH
/// (where RFC 7396 `null` resets a field to its default).
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "url": "https://hooks.example.com/hookgate",
    "description": "orders service",
    "event_types": ["order.*"],
    "policy": {"preset": "svix", "max_attempts": 6},
    "timeout_ms": 10000,
    "max_in_flight": 16,
    "rate_limit_per_s": 50
}))]
pub(super) struct EndpointInput {
    /// Where deliveries go: `http` or `https`, at most `limits.url_len` bytes. Its host
    /// must not be a private address unless the operator allows it. With a broker
    /// `destination`, leave it out or give the destination's url.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = true, value_type = String, pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://[^\s/?#@]+([/?#]\S*)?$", example = "https://hooks.example.com/hookgate")]
    pub(super) url: Option<String>,
    /// Free text for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) description: Option<String>,
    /// Event type patterns (`order.created`, `order.*`, `*`); `["*"]` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<EventTypePattern>>, min_items = 1, example = json!(["order.*"]))]
    pub(super) event_types: Option<Vec<String>>,
    /// The retry policy, laid over the operator's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<PolicySpec>)]
    pub(super) policy: Option<Value>,
    /// A retry-policy plugin of this tenant (`name`, or `name@version` to pin
    /// one) that decides retries before the policy does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) plugin: Option<String>,
    /// A transform plugin of this tenant (`name`, or `name@version` to pin one)
    /// that shapes each attempt's request before it is signed, or skips it
    /// (docs/transforms.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) transform: Option<String>,
    /// How long one attempt may take; 15000 when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 100, maximum = 300_000)]
    pub(super) timeout_ms: Option<u64>,
    /// Attempts in flight at once; 16 when absent. At most the gateway's
    /// `cluster.tenant_max_in_flight` (128 unless its operator set another),
    /// the share of a gateway's places one tenant may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 128)]
    pub(super) max_in_flight: Option<u32>,
    /// Attempts started per second at most; unlimited when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub(super) rate_limit_per_s: Option<u32>,
    /// A disabled endpoint gets nothing new; its pending deliveries wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) disabled: Option<bool>,
    /// Headers sent with every attempt, name → value (at most 20, 4 096 bytes
    /// in all). Names are case-insensitive and shown in lower case; those
    /// hookgate sets (`webhook-*`, `svix-*`, `content-type`, `host`, `user-agent`, the
    /// connection's own) are refused. On a merge patch, a null value removes
    /// one header; `********` keeps the stored value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<BTreeMap<String, String>>, example = json!({"x-api-key": "k-123"}))]
    pub(super) headers: Option<BTreeMap<String, Option<String>>>,
    /// Names of headers whose values are secrets: shown as `********`, never
    /// again in clear. `authorization`, `proxy-authorization` and `cookie`
    /// always are.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = json!(["x-api-key"]))]
    pub(super) sensitive_headers: Option<Vec<String>>,
    /// The platform's own strings about the endpoint (at most 50 keys of up to
    /// 64 bytes, values up to 512 bytes); hookgate stores and shows them and
    /// never reads them. On a merge patch, a null value removes one key.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<MetadataSchema>, example = json!({"team": "orders"}))]
    pub(super) metadata: Option<BTreeMap<String, Option<String>>>,
    /// The tenant's own identifier for the endpoint, unique within the tenant,
    /// accepted in paths wherever its id is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,256}$", example = "orders-eu")]
    pub(super) uid: Option<String>,
    /// Channels the endpoint listens on (at most 10): an event that names
    /// channels reaches it only if they share one. Without channels it hears
    /// every event its types match.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = json!(["eu", "account:42"]))]
    pub(super) channels: Option<Vec<String>>,
    /// A payload filter (docs/payload-filters.md): an event whose payload does
    /// not match creates no delivery for this endpoint. On a merge patch the
    /// filter is replaced whole, and `null` removes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<PayloadFilterSchema>, example = json!({"data.amount": {"$gte": 100}}))]
    pub(super) filter: Option<Value>,
    /// How requests are signed and under which header names; `v1` under
    /// `webhook-*` when absent. On a merge patch, absent parts keep their
    /// stored values and `null` resets the whole setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) signature: Option<SignatureInput>,
    /// Where attempts go: `{"type": "http"}` (the default: a POST to `url`) or
    /// a broker (`rabbitmq`, `nats`, `redis`) with its settings, whose address
    /// is then `destination.url` (docs/destinations.md). Credentials are never
    /// shown again; `********` given back keeps the stored ones. On a merge
    /// patch, `null` returns to `http`, with `url`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<super::endpoint_destination::DestinationSchema>, example = json!({"type": "rabbitmq", "url": "amqp://rabbit.example.com:5672/%2f", "exchange": "orders", "credentials": {"username": "hookgate", "password": "s3cret"}}))]
    pub(super) destination: Option<Value>,
    /// A tenant-chosen signing secret, on create only (rotation has its own route):
    /// `whsec_` + padded standard base64 of 24 to 64 bytes (the prefix may be
    /// left out; it is added); generated when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        pattern = r"^(?:whsec_)?(?:(?:[A-Za-z0-9+/]{4}){8,20}(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?|(?:[A-Za-z0-9+/]{4}){21}(?:[A-Za-z0-9+/][AQgw]==)?)$"
    )]
    pub(super) secret: Option<String>,
}

/// A tenant-supplied secret (on create and on rotate): `whsec_` + canonical, padded
/// standard base64 of 24 to 64 bytes, so receivers with strict decoders can use it.
///
/// # Errors
/// 422 `validation_failed` naming `secret`.
pub(super) fn tenant_secret(
    given: Option<&str>,
) -> Result<crate::signing::SigningSecret, ApiError> {
    use crate::signing::SigningSecret;
    match given {
        None => Ok(SigningSecret::generate()),
        Some(s) => SigningSecret::parse_given(s).map_err(|e| {
            ApiError::validation(
                "secret",
                format!("secret must be whsec_ + padded standard base64 of 24 to 64 bytes: {e}"),
            )
        }),
    }
}

/// An endpoint's URL as given, normalized, and checked against the address
/// guard and `outbound.allow_only` as they are now.
///
/// # Errors
/// 422 `validation_failed` naming `url`, or 422 `url_blocked`.
pub(super) async fn checked_url(
    ctx: &AppContext,
    given: Option<&str>,
) -> Result<url::Url, ApiError> {
    let raw_url = given.ok_or_else(|| ApiError::validation("url", "url is required"))?;
    let url = normalize_endpoint_url(raw_url, ctx.config.limits.url_len).map_err(|e| match e {
        UrlError::Blocked { .. } => ApiError::url_blocked(e.to_string()),
        other => ApiError::validation("url", other.to_string()),
    })?;
    ctx.guard
        .check_at_creation(&url)
        .await
        .map_err(|e| match e {
            UrlError::Blocked { .. } | UrlError::NotAllowListed { .. } => {
                ApiError::url_blocked(e.to_string())
            }
            other => ApiError::validation("url", other.to_string()),
        })?;
    Ok(url)
}

/// A description as given (empty when absent), within `limits.description_len`.
///
/// # Errors
/// 422 `validation_failed` naming `description`.
pub(super) fn checked_description(
    ctx: &AppContext,
    given: Option<String>,
) -> Result<String, ApiError> {
    let description = given.unwrap_or_default();
    let max = ctx.config.limits.description_len;
    if description.chars().count() > max {
        return Err(ApiError::validation(
            "description",
            format!("description must be at most {max} characters"),
        ));
    }
    Ok(description)
}

/// Event-type patterns as given (`["*"]` when absent): 1 to
/// `limits.event_types_per_endpoint`, each a valid pattern.
///
/// # Errors
/// 422 `validation_failed` naming `event_types` or the pattern.
pub(super) fn checked_patterns(
    ctx: &AppContext,
    given: Option<Vec<String>>,
) -> Result<Vec<String>, ApiError> {
    let limits = &ctx.config.limits;
    let event_types = given.unwrap_or_else(|| vec!["*".to_owned()]);
    if event_types.is_empty() || event_types.len() > limits.event_types_per_endpoint {
        return Err(ApiError::validation(
            "event_types",
            format!(
                "event_types must hold 1 to {} patterns",
                limits.event_types_per_endpoint
            ),
        ));
    }
    for (i, p) in event_types.iter().enumerate() {
        event_type::validate_pattern(p, limits.event_type_len).map_err(|e| {
            ApiError::validation(format!("event_types[{i}]"), format!("pattern {p:?}: {e}"))
        })?;
    }
    Ok(event_types)
}

/// Disables `ep` by hand (its reason `manual`, its time now), or enables it
/// again: then pending deliveries resume, with a fresh breaker.
pub(super) fn set_disabled(ctx: &AppContext, ep: &mut EndpointRecord, disabled: bool) {
    if !disabled && ep.disabled {
        (ep.disabled_reason, ep.disabled_at_ms) = (None, None);
        ep.breaker = crate::store::BreakerRecord::default();
    } else if disabled && !ep.disabled {
        ep.disabled_reason = Some("manual".into());
        ep.disabled_at_ms = Some(ctx.clock.now_ms());
    }
    ep.disabled = disabled;
}

impl EndpointInput {
    /// The settable fields of an existing endpoint, as a PATCH starts from.
    pub(super) fn of(ep: &EndpointRecord) -> Self {
        Self {
            // A broker's address is its destination's url.
            url: ep.destination.is_none().then(|| ep.url.clone()),
            destination: ep
                .destination
                .as_ref()
                .and_then(|d| serde_json::to_value(d.masked()).ok()),
            description: Some(ep.description.clone()),
            event_types: Some(ep.event_types.clone()),
            policy: ep.policy.clone(),
            plugin: ep.plugin.clone(),
            transform: ep.transform.clone(),
            timeout_ms: Some(ep.timeout_ms),
            max_in_flight: Some(ep.max_in_flight),
            rate_limit_per_s: ep.rate_limit_per_s,
            disabled: Some(ep.disabled),
            secret: None,
            headers: Some(
                endpoint_headers::stored(&ep.headers)
                    .into_iter()
                    .map(|(k, v)| (k, Some(v)))
                    .collect(),
            ),
            sensitive_headers: Some(endpoint_headers::sensitive_names(&ep.headers)),
            metadata: Some(
                ep.metadata
                    .iter()
                    .map(|(k, v)| (k.clone(), Some(v.clone())))
                    .collect(),
            ),
            uid: ep.uid.clone(),
            channels: Some(ep.channels.clone()),
            filter: ep.filter.clone(),
            signature: Some(SignatureInput::of(&ep.signature)),
        }
    }

    /// Validates every field and writes the result into `ep` (whose id, tenant,
    /// secrets and breaker are kept).
    ///
    /// # Errors
    /// 422 `validation_failed` naming the field, or 422 `url_blocked`.
    pub(super) async fn apply_to(
        self,
        ctx: &AppContext,
        who: &Principal,
        ep: &mut EndpointRecord,
    ) -> Result<(), ApiError> {
        let (url, destination) =
            endpoint_destination::checked(ctx, self.url.as_deref(), self.destination.as_ref(), ep)
                .await?;
        let description = checked_description(ctx, self.description)?;
        let event_types = checked_patterns(ctx, self.event_types)?;
        who.check_subscription(&event_types, &ep.event_types)?;
        ep.updated_at_ms = ctx.clock.now_ms();
        // Names it already had stay, even if archived or gone from the catalog.
        let strict = ctx.config.event_types.strict;
        ctx.catalog
            .check_subscription(&event_types, &ep.event_types, strict)
            .map_err(|e| {
                let name = e.name();
                let i = event_types.iter().position(|n| n == name).unwrap_or(0);
                ApiError::validation(format!("event_types[{i}]"), e.to_string())
            })?;
        // A PATCH that leaves the policy as stored does not re-check it: a policy
        // stored before today's bounds keeps working (clamped when loaded).
        if let Some(policy) = &self.policy
            && ep.policy.as_ref() != Some(policy)
        {
            let spec = PolicySpec::from_json(policy)
                .map_err(|e| ApiError::validation(e.field, e.message))?;
            spec.layered_over(&ctx.config.policy.default)
                .resolve()
                .map_err(|e| ApiError::validation(e.field, e.message))?;
        }
        for (field, spec, kind) in [
            ("plugin", &self.plugin, PluginKind::Policy),
            ("transform", &self.transform, PluginKind::Transform),
        ] {
            let Some(spec) = spec else { continue };
            // `name` or `name@version` of a plugin of that kind loaded for this tenant.
            match ctx.plugins.kind_of(&ep.tenant_id, spec) {
                None => {
                    return Err(ApiError::validation(
                        field,
                        format!("no plugin named {spec:?}"),
                    ));
                }
                Some(found) if found != kind => {
                    return Err(ApiError::validation(
                        field,
                        format!(
                            "plugin {spec:?} is a {}, not a {}: bind it as `{}`",
                            found.as_str(),
                            kind.as_str(),
                            match found {
                                PluginKind::Policy => "plugin",
                                PluginKind::Transform => "transform",
                            }
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        let timeout_ms = self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if !(100..=300_000).contains(&timeout_ms) {
            return Err(ApiError::validation(
                "timeout_ms",
                "timeout_ms must be from 100 to 300000",
            ));
        }
        let tenant_places = ctx.config.cluster.tenant_max_in_flight;
        // Absent, the default, within what the gateway lets a tenant hold: a
        // field the caller never sent is never the reason for a refusal.
        let max_in_flight = self
            .max_in_flight
            .unwrap_or(DEFAULT_MAX_IN_FLIGHT.min(u32::try_from(tenant_places).unwrap_or(u32::MAX)));
        if !(1..=tenant_places).contains(&(max_in_flight as usize)) {
            return Err(ApiError::validation(
                "max_in_flight",
                format!(
                    "max_in_flight must be from 1 to {tenant_places}: one tenant holds at most \
                     {tenant_places} of a gateway's delivery places (cluster.tenant_max_in_flight), \
                     so that no tenant's receivers can hold every place"
                ),
            ));
        }
        if self.rate_limit_per_s == Some(0) {
            return Err(ApiError::validation(
                "rate_limit_per_s",
                "rate_limit_per_s must be at least 1, or null",
            ));
        }
        let given: BTreeMap<String, String> = self
            .headers
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?)))
            .collect();
        let headers = endpoint_headers::validate(
            &given,
            &self.sensitive_headers.unwrap_or_default(),
            &ep.headers,
        )?;
        let metadata = metadata::validate(self.metadata.unwrap_or_default())?;
        if let Some(uid) = &self.uid
            && !crate::ids::is_valid_uid(uid)
        {
            return Err(ApiError::validation(
                "uid",
                "a uid is 1 to 256 of A-Z, a-z, 0-9, _, . and -",
            ));
        }
        let channels = Label::Channel.validate(self.channels.unwrap_or_default())?;
        if let Some(filter) = &self.filter {
            PayloadFilter::parse(filter)
                .map_err(|e| ApiError::validation(e.at(), e.to_string()))?;
        }
        let signature = self.signature.unwrap_or_default().settings()?;
        set_disabled(ctx, ep, self.disabled.unwrap_or(false));
        ep.url = url;
        ep.destination = destination;
        ep.description = description;
        ep.event_types = event_types;
        ep.policy = self.policy;
        ep.plugin = self.plugin;
        ep.transform = self.transform;
        ep.timeout_ms = timeout_ms;
        ep.max_in_flight = max_in_flight;
        ep.rate_limit_per_s = self.rate_limit_per_s;
        ep.headers = headers;
        ep.metadata = metadata;
        ep.uid = self.uid;
        ep.channels = channels;
        ep.filter = self.filter;
        endpoint_signature::apply(ep, signature);
        Ok(())
    }
}

/// Writes a merge patch's header names in lower case, as they are stored, so
/// that `X-Api-Key` in a patch replaces the stored `x-api-key`.
pub(super) fn lower_header_names(patch: &mut Value) {
    if let Some(Value::Object(headers)) = patch.get_mut("headers") {
        let lowered = std::mem::take(headers)
            .into_iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v))
            .collect();
        *headers = lowered;
    }
}

/// RFC 7396 JSON merge patch.
pub(super) fn merge_patch(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Item 9 of issue 17: an unpadded secret is refused, naming the field.
    #[test]
    fn tenant_secrets_without_base64_padding_are_refused() {
        use base64::Engine;
        let padded = format!(
            "whsec_{}",
            base64::engine::general_purpose::STANDARD.encode([7u8; 32])
        );
        let unpadded = padded.trim_end_matches('=');
        let err = tenant_secret(Some(unpadded)).map(|_| ()).unwrap_err();
        assert_eq!(
            (err.status().as_u16(), err.code(), err.field.as_deref()),
            (422, "validation_failed", Some("secret")),
            "{err:?}"
        );
        assert!(err.message.contains("padding"), "{}", err.message);
        assert!(!err.message.contains(unpadded), "the secret is not echoed");
        let accepted = tenant_secret(Some(&padded)).unwrap();
        assert_eq!(accepted.as_str(), padded);
        assert!(tenant_secret(None).is_ok());
    }

    #[test]
    fn merge_patch_follows_rfc_7396() {
        // The RFC's own example.
        let mut doc = json!({"title":"Goodbye!","author":{"givenName":"John","familyName":"Doe"},"tags":["example","sample"],"content":"This will be unchanged"});
        let patch = json!({"title":"Hello!","phoneNumber":"+01-234-567-8901","author":{"familyName":null},"tags":["example"]});
        merge_patch(&mut doc, &patch);
        assert_eq!(
            doc,
            json!({"title":"Hello!","author":{"givenName":"John"},"tags":["example"],"content":"This will be unchanged","phoneNumber":"+01-234-567-8901"})
        );
    }
}
