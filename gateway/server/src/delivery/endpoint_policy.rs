//! An endpoint's retry policy as the scheduler keeps it: resolved once when the
//! endpoint is loaded, not on every attempt, and shared by its attempts.

use crate::plugin_runtime::PluginBinding;
use crate::policy::{EffectivePolicy, PolicySpec};
use crate::store::EndpointRecord;

/// What decides an endpoint's attempts: its effective policy, the label naming
/// it in the attempt log, and its plugin binding, if any.
#[derive(Debug, Clone)]
pub(crate) struct EndpointPolicy {
    pub(crate) effective: EffectivePolicy,
    /// `endpoint:svix`, `config:default`, `builtin:default`...
    pub(crate) label: String,
    plugin: Option<OwnedBinding>,
}

/// A parsed `plugin` field, owned so the slot can keep it.
#[derive(Debug, Clone)]
struct OwnedBinding {
    tenant: String,
    name: String,
    version: Option<u32>,
}

/// `ep`'s effective policy over the config's `default`, and its label (see
/// [`PolicySpec::effective_for`]).
pub(crate) fn effective_policy(
    ep: &EndpointRecord,
    default: &PolicySpec,
) -> (EffectivePolicy, String) {
    PolicySpec::effective_for(ep.policy.as_ref(), &ep.tenant_id, &ep.id, default)
}

impl EndpointPolicy {
    /// Resolves `ep`'s policy over the config's `default` and parses its plugin
    /// binding.
    pub(crate) fn load(ep: &EndpointRecord, default: &PolicySpec) -> Self {
        let (effective, label) = effective_policy(ep, default);
        let plugin = ep
            .plugin
            .as_deref()
            .and_then(|p| PluginBinding::parse(&ep.tenant_id, p))
            .map(|b| OwnedBinding {
                tenant: b.tenant.to_owned(),
                name: b.name.to_owned(),
                version: b.version,
            });
        Self {
            effective,
            label,
            plugin,
        }
    }

    /// The plugin binding, when the endpoint names a plugin.
    pub(crate) fn plugin(&self) -> Option<PluginBinding<'_>> {
        self.plugin.as_ref().map(|b| PluginBinding {
            tenant: &b.tenant,
            name: &b.name,
            version: b.version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::endpoint;

    #[test]
    fn a_load_resolves_the_policy_and_parses_the_binding() {
        let mut ep = endpoint("acme", "ep_1");
        ep.policy = Some(serde_json::json!({"preset": "svix"}));
        ep.plugin = Some("backoff@2".into());
        let p = EndpointPolicy::load(&ep, &PolicySpec::default());
        assert_eq!(p.label, "endpoint:svix");
        assert_eq!(p.effective.preset, "svix");
        let b = p.plugin().unwrap();
        assert_eq!((b.tenant, b.name, b.version), ("acme", "backoff", Some(2)));
        (ep.policy, ep.plugin) = (None, None);
        let p = EndpointPolicy::load(&ep, &PolicySpec::default());
        assert!(p.plugin().is_none());
        assert_eq!(p.label, "builtin:default");
    }
}
