//! Svix's event types into hookgate's catalog (`/v1/event-types`): `name`,
//! `description`, `archived`, `deprecated`, `groupName` as `group`, and
//! `schemas` by version, as they are. A type missing is created, one that
//! differs is patched (only what differs; its schema versions replaced whole),
//! one the same is left alone. Feature flags have no place in hookgate (every
//! caller sees every type) and are reported as not imported.
//!
//! hookgate refuses a new subscription to an archived type, and a Svix
//! endpoint may still subscribe to a type archived since: such a type is
//! written unarchived first and archived once the endpoints are in
//! ([`archive_held`]).

use std::collections::BTreeSet;

use http::Method;
use serde_json::{Map, Value, json};

use super::model::{SvixEventType, unknown_keys};
use super::report::{Item, Kind, Note, Outcome, Report};
use super::target::Target;
use crate::client::error::CliError;

/// The fields compared and written, in hookgate's names.
const FIELDS: [&str; 5] = ["description", "group", "archived", "deprecated", "schemas"];

/// Why a feature flag is not imported.
const NO_FLAGS: &str = "hookgate has no feature flags: every caller sees every event type";

/// Imports one type. `subscribed` names the types some imported endpoint
/// subscribes to; a type archived in the source that one of them needs is
/// added to `held` rather than archived now.
///
/// # Errors
/// A failure that ends the import.
pub(super) async fn import(
    target: &Target,
    source: &SvixEventType,
    subscribed: &BTreeSet<String>,
    held: &mut Vec<String>,
) -> Result<Item, CliError> {
    let (wanted, notes) = wanted(source);
    let name = source.name.as_str();
    let current = target.find(&["event-types", name]).await?;
    let changed: Vec<&'static str> = match &current {
        None => Vec::new(),
        Some(now) => FIELDS
            .into_iter()
            .filter(|f| now.get(*f).unwrap_or(&Value::Null) != &wanted[*f])
            .collect(),
    };
    let now_archived = current.as_ref().is_some_and(|c| c["archived"] == true);
    let hold = wanted["archived"] == true && !now_archived && subscribed.contains(name);
    let outcome = match &current {
        None => {
            let mut body = wanted.clone();
            body.insert("name".into(), json!(name));
            body.retain(|_, v| !v.is_null() && v != &json!({}));
            if hold {
                body.insert("archived".into(), json!(false));
            }
            let written = target
                .write(Method::POST, &["event-types"], &Value::Object(body))
                .await?;
            written.map(|_| Outcome::Created)
        }
        Some(_) if changed.is_empty() => Ok(Outcome::Unchanged),
        Some(now) => {
            let mut patch: Map<String, Value> = changed
                .iter()
                .filter(|f| !(hold && **f == "archived"))
                .map(|f| ((*f).to_owned(), wanted[*f].clone()))
                .collect();
            if patch.contains_key("schemas") {
                patch.insert(
                    "schemas".into(),
                    replacing(&now["schemas"], &wanted["schemas"]),
                );
            }
            let written = if patch.is_empty() {
                Ok(Value::Null)
            } else {
                let path = ["event-types", name];
                target
                    .write(Method::PATCH, &path, &Value::Object(patch))
                    .await?
            };
            written.map(|_| Outcome::Updated(changed))
        }
    };
    let outcome = outcome.unwrap_or_else(|refused| Outcome::Failed(refused.message));
    if hold && !matches!(outcome, Outcome::Failed(_)) {
        held.push(name.to_owned());
    }
    let mut ids = Map::new();
    ids.insert("name".into(), json!(name));
    Ok(Item {
        kind: Kind::EventType,
        label: name.to_owned(),
        ids,
        outcome,
        notes,
    })
}

/// Archives the types [`import`] held back, now that the endpoints that
/// subscribe to them are in; a refusal marks the type's record failed.
///
/// # Errors
/// A failure that ends the import.
pub(super) async fn archive_held(
    target: &Target,
    held: &[String],
    report: &mut Report,
) -> Result<(), CliError> {
    for name in held {
        let patch = json!({"archived": true});
        let written = target
            .write(Method::PATCH, &["event-types", name], &patch)
            .await?;
        if let Err(refused) = written {
            let of_type = |i: &&mut Item| i.kind == Kind::EventType && i.label == *name;
            if let Some(item) = report.items.iter_mut().find(of_type) {
                item.outcome = Outcome::Failed(format!("archiving it: {}", refused.message));
            }
        }
    }
    Ok(())
}

/// The type as hookgate should hold it, and the parts of it not imported.
fn wanted(source: &SvixEventType) -> (Map<String, Value>, Vec<Note>) {
    let mut fields = Map::new();
    fields.insert("description".into(), json!(source.description));
    fields.insert("group".into(), json!(source.group_name));
    fields.insert("archived".into(), json!(source.archived.unwrap_or(false)));
    fields.insert(
        "deprecated".into(),
        json!(source.deprecated.unwrap_or(false)),
    );
    let schemas = source.schemas.clone().unwrap_or_default();
    fields.insert("schemas".into(), Value::Object(schemas));
    let mut notes = Vec::new();
    if let Some(flag) = &source.feature_flag {
        notes.push(Note::new(format!("featureFlag {flag:?}"), NO_FLAGS));
    }
    if let Some(flags) = source.feature_flags.as_ref().filter(|f| !f.is_empty()) {
        notes.push(Note::new(format!("featureFlags {flags:?}"), NO_FLAGS));
    }
    for (key, _) in unknown_keys(&source.other, &[]) {
        notes.push(Note::new(
            key,
            "not a field of Svix's event type this import knows",
        ));
    }
    (fields, notes)
}

/// A `schemas` merge patch that leaves exactly `wanted`'s versions: the ones
/// only `now` has are removed (`null`); hookgate replaces each version given
/// whole.
fn replacing(now: &Value, wanted: &Value) -> Value {
    let mut patch: Map<String, Value> = now
        .as_object()
        .map(|o| o.keys().map(|k| (k.clone(), Value::Null)).collect())
        .unwrap_or_default();
    if let Some(versions) = wanted.as_object() {
        patch.extend(versions.clone());
    }
    Value::Object(patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svix_fields_become_hookgates_and_flags_are_reported() {
        let source: SvixEventType = serde_json::from_value(json!({
            "name": "order.paid", "description": "Paid", "deprecated": true,
            "groupName": "orders", "featureFlag": "beta", "featureFlags": [],
            "schemas": {"1": {"type": "object"}}, "createdAt": "2024-01-01T00:00:00Z",
        }))
        .unwrap();
        let (fields, notes) = wanted(&source);
        assert_eq!(
            Value::Object(fields),
            json!({"description": "Paid", "group": "orders", "archived": false,
                   "deprecated": true, "schemas": {"1": {"type": "object"}}})
        );
        assert_eq!(notes, [Note::new("featureFlag \"beta\"", NO_FLAGS)]);
    }

    #[test]
    fn schemas_are_replaced_whole() {
        let now = json!({"1": {"a": 1}, "2": {"b": 2}});
        let patch = replacing(&now, &json!({"1": {"c": 3}}));
        assert_eq!(patch, json!({"1": {"c": 3}, "2": null}));
    }
}
