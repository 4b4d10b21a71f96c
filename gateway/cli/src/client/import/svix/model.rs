//! Svix's records as `hookgate import svix` reads them, from a Svix server's
//! answers or an environment export: an `EventTypeOut`, an `ApplicationOut`
//! and an `EndpointOut` (with the export's additions: an application's
//! `endpoints`, an endpoint's `secret` and `headers`), and the endpoint headers
//! answer (`EndpointHeadersOut`). Both of Svix's names are read where Svix
//! renamed a field (`filterTypes`/`eventTypes`, `rateLimit`/`throttleRate`).
//! Every key this import has no place for is kept, so the report can name it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// Keys Svix stamps on every record that hookgate stamps for itself (its own
/// times) or that carry nothing (`version`, always 1): not reported per record;
/// the report says once that they are not kept.
const STAMPED: [&str; 3] = ["createdAt", "updatedAt", "version"];

/// An event type (`EventTypeOut`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SvixEventType {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: String,
    #[serde(default)]
    pub(super) archived: Option<bool>,
    #[serde(default)]
    pub(super) deprecated: Option<bool>,
    #[serde(default)]
    pub(super) schemas: Option<Map<String, Value>>,
    #[serde(default)]
    pub(super) group_name: Option<String>,
    #[serde(default)]
    pub(super) feature_flag: Option<String>,
    #[serde(default)]
    pub(super) feature_flags: Option<Vec<String>>,
    #[serde(flatten)]
    pub(super) other: Map<String, Value>,
}

/// An application (`ApplicationOut`); in an export, with its endpoints.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SvixApplication {
    pub(super) id: String,
    #[serde(default)]
    pub(super) uid: Option<String>,
    pub(super) name: String,
    #[serde(default)]
    pub(super) metadata: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub(super) throttle_rate: Option<u64>,
    #[serde(default)]
    pub(super) rate_limit: Option<u64>,
    /// Only in an export; a server's are listed apart.
    #[serde(default)]
    pub(super) endpoints: Vec<SvixEndpoint>,
    #[serde(flatten)]
    pub(super) other: Map<String, Value>,
}

/// An endpoint (`EndpointOut`); in an export, with its secret and headers.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SvixEndpoint {
    pub(super) id: String,
    #[serde(default)]
    pub(super) uid: Option<String>,
    pub(super) url: String,
    #[serde(default)]
    pub(super) description: Option<String>,
    #[serde(default)]
    pub(super) disabled: Option<bool>,
    #[serde(default)]
    pub(super) filter_types: Option<Vec<String>>,
    #[serde(default)]
    pub(super) event_types: Option<Vec<String>>,
    #[serde(default)]
    pub(super) channels: Option<Vec<String>>,
    #[serde(default)]
    pub(super) metadata: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub(super) throttle_rate: Option<u64>,
    #[serde(default)]
    pub(super) rate_limit: Option<u64>,
    /// The signing secret (`whsec_…`), as `GET …/secret` answers its `key`.
    #[serde(default)]
    pub(super) secret: Option<String>,
    /// The custom headers, as `GET …/headers` answers them.
    #[serde(default)]
    pub(super) headers: Option<SvixHeaders>,
    #[serde(flatten)]
    pub(super) other: Map<String, Value>,
}

/// An endpoint's custom headers (`EndpointHeadersOut`): the values given, and
/// the names of sensitive ones (whose values a Svix server never shows).
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct SvixHeaders {
    pub(super) headers: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) sensitive: Vec<String>,
}

/// The answer of `GET …/secret` (`EndpointSecretOut`).
#[derive(Debug, Clone, Deserialize)]
pub(super) struct SvixSecret {
    pub(super) key: String,
}

impl SvixEndpoint {
    /// The event types it subscribes to; `None` is every type.
    pub(super) fn subscribed(&self) -> Option<&[String]> {
        self.filter_types
            .as_deref()
            .or(self.event_types.as_deref())
            .filter(|types| !types.is_empty())
    }

    /// Its rate limit per second, under either name.
    pub(super) fn rate(&self) -> Option<u64> {
        self.throttle_rate.or(self.rate_limit)
    }

    /// The uid it is found by in hookgate: its own, else its Svix id.
    pub(super) fn key(&self) -> &str {
        self.uid.as_deref().unwrap_or(&self.id)
    }
}

/// The keys of `other` with a value, leaving out those every record carries
/// ([`STAMPED`]) and the `expected` ones the caller handles.
pub(super) fn unknown_keys<'a>(
    other: &'a Map<String, Value>,
    expected: &[&str],
) -> Vec<(&'a str, &'a Value)> {
    other
        .iter()
        .filter(|(k, v)| {
            !v.is_null() && !STAMPED.contains(&k.as_str()) && !expected.contains(&k.as_str())
        })
        .map(|(k, v)| (k.as_str(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_of_svixs_names_are_read_and_unknown_keys_kept() {
        let ep: SvixEndpoint = serde_json::from_value(json!({
            "id": "ep_1", "url": "https://x.test/", "description": "",
            "eventTypes": ["a"], "throttleRate": 5, "createdAt": "2024-01-01T00:00:00Z",
            "version": 1, "hookgate": {"policy": null}, "nothing": null,
        }))
        .unwrap();
        assert_eq!(ep.subscribed(), Some(&["a".to_owned()][..]));
        assert_eq!((ep.rate(), ep.key()), (Some(5), "ep_1"));
        let unknown: Vec<&str> = unknown_keys(&ep.other, &[]).iter().map(|k| k.0).collect();
        assert_eq!(unknown, ["hookgate"]);
        let older: SvixEndpoint = serde_json::from_value(json!({
            "id": "ep_2", "uid": "u", "url": "https://x.test/", "filterTypes": [], "rateLimit": 3,
        }))
        .unwrap();
        assert_eq!(
            (older.subscribed(), older.rate(), older.key()),
            (None, Some(3), "u")
        );
    }
}
