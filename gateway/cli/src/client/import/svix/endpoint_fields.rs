//! A Svix endpoint's fields in hookgate's names, and how a stored endpoint
//! differs from them: `url`, `uid` (the Svix uid, else the Svix id, which a
//! later run finds it by), `description`, `disabled`, `filterTypes` as
//! `event_types` (none: every type), `channels`, `metadata`, `throttleRate`
//! (or `rateLimit`) as `rate_limit_per_s`, the signature header set, the
//! custom headers (Svix's sensitive ones marked sensitive in hookgate too) and
//! the secret.
//!
//! A header whose value the source does not give (a Svix server never shows a
//! sensitive header's value) is reported and left as the gateway has it; a
//! sensitive value the gateway holds cannot be read back, so it counts as the
//! same as the source's.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::model::{SvixEndpoint, unknown_keys};
use super::report::Note;

/// The headers Svix treats as sensitive (its `EndpointHeadersOut`).
const SVIX_SENSITIVE: [&str; 6] = [
    "x-auth-token",
    "x-api-key",
    "www-authenticate",
    "authorization",
    "proxy-authenticate",
    "proxy-authorization",
];

/// What hookgate shows in place of a sensitive header's value.
const MASK: &str = "********";

/// The plain fields compared, in hookgate's names.
const FIELDS: [&str; 9] = [
    "url",
    "uid",
    "description",
    "disabled",
    "event_types",
    "channels",
    "metadata",
    "rate_limit_per_s",
    "signature",
];

/// An endpoint as hookgate should hold it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Wanted {
    /// [`FIELDS`], as written on create.
    pub(super) fields: Map<String, Value>,
    /// The custom headers by lower-case name; `None` when the source gives none
    /// (the gateway's are then left alone).
    pub(super) headers: Option<BTreeMap<String, String>>,
    /// The names among `headers` to mark sensitive.
    pub(super) sensitive: BTreeSet<String>,
    /// The headers the source names without a value.
    pub(super) redacted: BTreeSet<String>,
    /// The signing secret, `whsec_`-prefixed.
    pub(super) secret: Option<String>,
    /// The parts not imported.
    pub(super) notes: Vec<Note>,
}

/// `source` as hookgate should hold it, signing under `signature_headers`.
pub(super) fn wanted(source: &SvixEndpoint, signature_headers: &str) -> Wanted {
    let mut notes = Vec::new();
    let rate = match source.rate() {
        Some(0) => {
            notes.push(Note::new(
                "throttleRate 0",
                "hookgate's rate limit is at least 1 per second; the endpoint is left unlimited",
            ));
            None
        }
        rate => rate,
    };
    let mut fields = Map::new();
    // As the gateway stores it (a path added, the fragment dropped, the host
    // lowercased), so a repeat run finds it unchanged; a URL the gateway
    // refuses goes as given, for its refusal to be reported.
    let url = hookgate_server::normalize_endpoint_url(&source.url, usize::MAX)
        .map_or_else(|_| source.url.clone(), |u| u.to_string());
    fields.insert("url".into(), json!(url));
    fields.insert("uid".into(), json!(source.key()));
    fields.insert(
        "description".into(),
        json!(source.description.clone().unwrap_or_default()),
    );
    fields.insert("disabled".into(), json!(source.disabled.unwrap_or(false)));
    let types = source
        .subscribed()
        .map_or_else(|| vec!["*".to_owned()], <[String]>::to_vec);
    fields.insert("event_types".into(), json!(types));
    fields.insert(
        "channels".into(),
        json!(source.channels.clone().unwrap_or_default()),
    );
    fields.insert(
        "metadata".into(),
        json!(source.metadata.clone().unwrap_or_default()),
    );
    fields.insert("rate_limit_per_s".into(), json!(rate));
    fields.insert("signature".into(), json!({"headers": signature_headers}));
    let (mut headers, mut sensitive, mut redacted) = (None, BTreeSet::new(), BTreeSet::new());
    if let Some(given) = &source.headers {
        let mut values = BTreeMap::new();
        for (name, value) in &given.headers {
            let lower = name.to_ascii_lowercase();
            if values.insert(lower.clone(), value.clone()).is_some() {
                notes.push(Note::new(
                    format!("header {name}"),
                    "given twice (names are case-insensitive); the last value is kept",
                ));
            }
        }
        let marked: BTreeSet<String> = given
            .sensitive
            .iter()
            .map(|n| n.to_ascii_lowercase())
            .collect();
        for name in &marked {
            if !values.contains_key(name) {
                redacted.insert(name.clone());
                notes.push(Note::new(
                    format!("header {name}"),
                    "the source does not give its value (Svix never shows a sensitive header's); \
                     set it with `hookgate endpoints update --header NAME=VALUE --sensitive-header NAME`",
                ));
            }
        }
        sensitive = values
            .keys()
            .filter(|n| marked.contains(*n) || SVIX_SENSITIVE.contains(&n.as_str()))
            .cloned()
            .collect();
        headers = Some(values);
    }
    let secret = source.secret.as_ref().map(|s| {
        if s.starts_with("whsec_") {
            s.clone()
        } else {
            format!("whsec_{s}")
        }
    });
    if secret.is_none() {
        notes.push(Note::new(
            "secret",
            "not in the source: hookgate signs with one of its own; give it to the receiver \
             (`hookgate endpoints secret`)",
        ));
    }
    for (key, _) in unknown_keys(&source.other, &[]) {
        notes.push(Note::new(
            key,
            "not a field of Svix's endpoint this import knows",
        ));
    }
    Wanted {
        fields,
        headers,
        sensitive,
        redacted,
        secret,
        notes,
    }
}

impl Wanted {
    /// The body that creates the endpoint.
    pub(super) fn create_body(&self) -> Map<String, Value> {
        let mut body = self.fields.clone();
        body.retain(|_, v| !v.is_null());
        if let Some(headers) = &self.headers {
            body.insert("headers".into(), json!(headers));
            body.insert("sensitive_headers".into(), json!(self.sensitive));
        }
        if let Some(secret) = &self.secret {
            body.insert("secret".into(), json!(secret));
        }
        body
    }

    /// What differs in `now` (the endpoint as the gateway shows it), in
    /// hookgate's names, and the merge patch that makes it the same (the
    /// secret aside: it changes by rotation).
    pub(super) fn differences(&self, now: &Value) -> (Vec<&'static str>, Map<String, Value>) {
        let mut changed = Vec::new();
        let mut patch = Map::new();
        for field in FIELDS {
            let wanted = &self.fields[field];
            let stored = now.get(field).unwrap_or(&Value::Null);
            let same = match field {
                "event_types" | "channels" => sorted(stored) == sorted(wanted),
                "signature" => stored["headers"] == wanted["headers"],
                _ => stored == wanted,
            };
            if !same {
                changed.push(field);
                patch.insert(field.to_owned(), wanted.clone());
            }
        }
        if let (Some(Value::Object(given)), Some(old)) =
            (patch.get_mut("metadata"), now["metadata"].as_object())
        {
            for key in old.keys() {
                given.entry(key.clone()).or_insert(Value::Null);
            }
        }
        if let Some(headers) = self.header_patch(now) {
            changed.push("headers");
            patch.insert("headers".into(), headers);
        }
        let marked: BTreeSet<&str> = now["sensitive_headers"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if self.sensitive.iter().any(|n| !marked.contains(n.as_str())) {
            changed.push("sensitive_headers");
            patch.insert("sensitive_headers".into(), json!(self.sensitive));
        }
        (changed, patch)
    }

    /// The `headers` merge patch, if any header differs: a value the gateway
    /// masks counts as the same; one the source does not have is removed,
    /// unless the source named it without its value.
    fn header_patch(&self, now: &Value) -> Option<Value> {
        let wanted = self.headers.as_ref()?;
        let empty = Map::new();
        let stored = now["headers"].as_object().unwrap_or(&empty);
        let mut patch = Map::new();
        for (name, value) in wanted {
            match stored.get(name).and_then(Value::as_str) {
                Some(v) if v == value || v == MASK => {}
                _ => {
                    patch.insert(name.clone(), json!(value));
                }
            }
        }
        for name in stored.keys() {
            if !wanted.contains_key(name) && !self.redacted.contains(name) {
                patch.insert(name.clone(), Value::Null);
            }
        }
        (!patch.is_empty()).then_some(Value::Object(patch))
    }
}

/// A list of strings, sorted, to compare without order.
fn sorted(v: &Value) -> Vec<String> {
    let mut items: Vec<String> = v
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    items.sort();
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> SvixEndpoint {
        serde_json::from_value(json!({
            "id": "ep_1", "url": "https://r.test/", "description": "d",
            "filterTypes": ["b", "a"], "channels": ["eu"], "metadata": {"k": "v"},
            "throttleRate": 0, "secret": "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3",
            "headers": {"headers": {"X-Api-Key": "k", "X-Plain": "p"}, "sensitive": ["Authorization"]},
        }))
        .unwrap()
    }

    #[test]
    fn svix_fields_become_hookgates() {
        let w = wanted(&source(), "both");
        assert_eq!(w.fields["uid"], "ep_1");
        assert_eq!(w.fields["rate_limit_per_s"], Value::Null);
        assert_eq!(
            w.secret.as_deref(),
            Some("whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3")
        );
        assert_eq!(w.sensitive, BTreeSet::from(["x-api-key".to_owned()]));
        assert_eq!(w.redacted, BTreeSet::from(["authorization".to_owned()]));
        let what: Vec<&str> = w.notes.iter().map(|n| n.what.as_str()).collect();
        assert_eq!(what, ["throttleRate 0", "header authorization"]);
        let body = w.create_body();
        assert!(!body.contains_key("rate_limit_per_s"));
        assert_eq!(body["headers"], json!({"x-api-key": "k", "x-plain": "p"}));
    }

    #[test]
    fn the_gateways_view_is_compared_field_by_field() {
        let w = wanted(&source(), "both");
        let now = json!({
            "url": "https://r.test/", "uid": "ep_1", "description": "d", "disabled": false,
            "event_types": ["a", "b"], "channels": ["eu"], "metadata": {"k": "v", "old": "1"},
            "rate_limit_per_s": null, "signature": {"headers": "both", "schemes": ["v1"]},
            "headers": {"x-api-key": MASK, "x-plain": "p", "authorization": MASK, "x-gone": "g"},
            "sensitive_headers": ["authorization", "x-api-key"],
        });
        let (changed, patch) = w.differences(&now);
        assert_eq!(changed, ["metadata", "headers"]);
        assert_eq!(
            Value::Object(patch),
            json!({"metadata": {"k": "v", "old": null}, "headers": {"x-gone": null}})
        );
    }
}
