//! Svix's applications as hookgate tenants: `name`, `uid` and `metadata` as
//! they are. The tenant's id is the application's id when that is a valid
//! tenant id (`app_…` ids made by hookgate's Svix face are), else the id in
//! lower case (Svix's own ids mix cases; a tenant id may not); and an
//! application without a uid then gets its Svix id as its uid, so that the
//! id it had in Svix still names it wherever an `app_id` goes. A later run
//! finds the tenant by that same id (or, failing a usable id, by the uid).
//! An application's rate has no place in hookgate (rates are its endpoints').

use std::collections::BTreeMap;

use http::Method;
use serde_json::{Map, Value, json};

use super::model::{SvixApplication, unknown_keys};
use super::report::{Item, Kind, Note, Outcome};
use super::target::Target;
use crate::client::error::CliError;

/// The fields compared and written.
const FIELDS: [&str; 3] = ["name", "uid", "metadata"];

/// The tenant an application became, for its endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tenant {
    pub(super) id: String,
    /// Whether it is in the gateway now (not on a dry run's create).
    pub(super) present: bool,
}

/// Imports one application; answers its record and, unless it failed, the
/// tenant its endpoints go to.
///
/// # Errors
/// A failure that ends the import.
pub(super) async fn import(
    target: &Target,
    source: &SvixApplication,
) -> Result<(Item, Option<Tenant>), CliError> {
    let derived = tenant_id_for(&source.id);
    let uid = source
        .uid
        .clone()
        .or_else(|| (derived.as_deref() != Some(source.id.as_str())).then(|| source.id.clone()));
    let wanted = wanted(source, uid.as_deref());
    // A usable id finds what an earlier run made; without one, the uid does.
    let key = derived.clone().or_else(|| uid.clone()).unwrap_or_default();
    let current = target.find(&["tenants", &key]).await?;
    let (outcome, tenant) = match &current {
        None => {
            let id = derived.unwrap_or_else(generated_id);
            let mut body = wanted.clone();
            body.insert("id".into(), json!(id));
            body.retain(|_, v| !v.is_null());
            let written = target
                .write(Method::POST, &["tenants"], &Value::Object(body))
                .await?;
            let present = !target.dry_run;
            (written.map(|_| Outcome::Created), Tenant { id, present })
        }
        Some(now) => {
            let id = now["id"].as_str().unwrap_or(&key).to_owned();
            let changed: Vec<&'static str> = FIELDS
                .into_iter()
                .filter(|f| now.get(*f).unwrap_or(&Value::Null) != &wanted[*f])
                .collect();
            let outcome = if changed.is_empty() {
                Ok(Outcome::Unchanged)
            } else {
                let patch = patch(now, &wanted, &changed);
                let written = target
                    .write(Method::PATCH, &["tenants", &id], &patch)
                    .await?;
                written.map(|_| Outcome::Updated(changed))
            };
            (outcome, Tenant { id, present: true })
        }
    };
    let outcome = outcome.unwrap_or_else(|refused| Outcome::Failed(refused.message));
    let label = match &uid {
        Some(uid) => format!("{} as tenant {} (uid {uid})", source.id, tenant.id),
        None => format!("{} as tenant {}", source.id, tenant.id),
    };
    let mut ids = Map::new();
    ids.insert("id".into(), json!(source.id));
    ids.insert("uid".into(), json!(uid));
    ids.insert("tenant".into(), json!(tenant.id));
    let usable = !matches!(outcome, Outcome::Failed(_));
    let item = Item {
        kind: Kind::Application,
        label,
        ids,
        outcome,
        notes: notes(source),
    };
    Ok((item, usable.then_some(tenant)))
}

/// The tenant's fields as hookgate should hold them.
fn wanted(source: &SvixApplication, uid: Option<&str>) -> Map<String, Value> {
    let metadata: BTreeMap<String, String> = source.metadata.clone().unwrap_or_default();
    let mut fields = Map::new();
    fields.insert("name".into(), json!(source.name));
    fields.insert("uid".into(), json!(uid));
    fields.insert("metadata".into(), json!(metadata));
    fields
}

/// A merge patch of the `changed` fields; metadata keys only `now` has are
/// removed.
fn patch(now: &Value, wanted: &Map<String, Value>, changed: &[&str]) -> Value {
    let mut patch = Map::new();
    for field in changed {
        patch.insert((*field).to_owned(), wanted[*field].clone());
    }
    if let Some(Value::Object(given)) = patch.get_mut("metadata")
        && let Some(old) = now["metadata"].as_object()
    {
        for key in old.keys() {
            given.entry(key.clone()).or_insert(Value::Null);
        }
    }
    Value::Object(patch)
}

/// The parts of the application not imported.
fn notes(source: &SvixApplication) -> Vec<Note> {
    let mut notes = Vec::new();
    let rate = source.throttle_rate.or(source.rate_limit);
    if let Some(rate) = rate {
        notes.push(Note::new(
            format!("throttleRate {rate}"),
            "a hookgate tenant has no rate of its own: set a rate limit on its endpoints",
        ));
    }
    for (key, _) in unknown_keys(&source.other, &[]) {
        notes.push(Note::new(
            key,
            "not a field of Svix's application this import knows",
        ));
    }
    notes
}

/// The tenant id for a Svix application id: the id itself, or in lower case,
/// when valid (1 to 63 of `a-z`, `0-9`, `_`, `-`, starting with a letter or
/// digit).
fn tenant_id_for(svix_id: &str) -> Option<String> {
    [svix_id.to_owned(), svix_id.to_ascii_lowercase()]
        .into_iter()
        .find(|id| is_tenant_id(id))
}

fn is_tenant_id(id: &str) -> bool {
    let mut bytes = id.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    first_ok
        && id.len() <= 63
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// A new tenant id as hookgate's Svix face makes them: `app_` and a
/// lowercase ULID.
fn generated_id() -> String {
    format!("app_{}", ulid::Ulid::new().to_string().to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svix_ids_become_tenant_ids_where_they_can() {
        assert_eq!(tenant_id_for("app_01jabc").as_deref(), Some("app_01jabc"));
        assert_eq!(
            tenant_id_for("app_2LxDwT8wZ0a1PZ8eZWcBf9S6vMe").as_deref(),
            Some("app_2lxdwt8wz0a1pz8ezwcbf9s6vme")
        );
        assert_eq!(tenant_id_for("_lead"), None);
        assert_eq!(tenant_id_for("has.dot"), None);
        assert_eq!(tenant_id_for(&"a".repeat(64)), None);
        assert!(is_tenant_id(&generated_id()));
    }

    #[test]
    fn a_patch_removes_metadata_keys_the_source_lacks() {
        let now = json!({"name": "A", "uid": null, "metadata": {"old": "1", "kept": "2"}});
        let mut wanted = Map::new();
        wanted.insert("metadata".into(), json!({"kept": "2", "new": "3"}));
        let patch = patch(&now, &wanted, &["metadata"]);
        assert_eq!(
            patch,
            json!({"metadata": {"kept": "2", "new": "3", "old": null}})
        );
    }
}
