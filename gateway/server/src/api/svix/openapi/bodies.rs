//! Every request body the face reads is checked against its schema in the
//! face's own document before it is translated, so what the document
//! refuses is refused (422 at the place, as Svix's `HTTPValidationError`)
//! and the document and the server cannot drift apart on input.
//!
//! Each schema is compiled once, as the catalog compiles payload schemas:
//! references resolve only within the document, nothing is fetched.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::event_catalog::PayloadSchema;

use super::super::error::SvixError;

/// The document's schemas, as written (for their descriptions) and each
/// compiled with the others beside it.
struct Schemas {
    written: Value,
    compiled: BTreeMap<String, PayloadSchema>,
}

fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let doc = serde_json::to_value(super::document()).expect("the document serialises");
        let written = doc["components"]["schemas"].clone();
        let mut components = written.clone();
        precise_nullables(&mut components);
        let compiled = components
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, _)| {
                let schema = json!({
                    "$ref": format!("#/components/schemas/{name}"),
                    "components": {"schemas": &components},
                });
                let compiled = PayloadSchema::compile(name, &schema)
                    .unwrap_or_else(|e| panic!("the document's schema {name} compiles: {e}"));
                (name.clone(), compiled)
            })
            .collect();
        Schemas { written, compiled }
    })
}

/// The description the document gives the field at `path` of schema `name`,
/// following references, nullable wrappers and array items.
fn description(name: &str, path: &[String]) -> Option<String> {
    let resolve = |mut node: &'static Value| {
        for _ in 0..8 {
            if let Some(target) = node["$ref"].as_str() {
                let name = target.rsplit('/').next().unwrap_or_default();
                node = &schemas().written[name];
            } else if let Some([inner, _]) = node["oneOf"].as_array().map(Vec::as_slice) {
                node = inner;
            } else {
                break;
            }
        }
        node
    };
    let mut node: &'static Value = &schemas().written[name];
    let mut field = node;
    for step in path {
        let here = resolve(node);
        field = if step.parse::<usize>().is_ok() && here["items"].is_object() {
            &here["items"]
        } else {
            &here["properties"][step.as_str()]
        };
        node = field;
    }
    let text = field["description"]
        .as_str()
        .or_else(|| resolve(field)["description"].as_str())?;
    // Doc comments keep their line breaks; one line reads better in an error.
    (!path.is_empty()).then(|| text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Rewrites each `oneOf: [S, {"type": "null"}]` (utoipa's nullable field)
/// as `if null, else S`: the same values pass, and a refusal inside S is
/// told at its own place, not as "matches none of oneOf" at the field.
fn precise_nullables(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let nullable =
                map.get("oneOf")
                    .and_then(Value::as_array)
                    .and_then(|one| match one.as_slice() {
                        [s, null] if null == &json!({"type": "null"}) => Some(s.clone()),
                        _ => None,
                    });
            if let Some(inner) = nullable {
                map.remove("oneOf");
                map.insert("if".into(), json!({"type": "null"}));
                map.insert("else".into(), inner);
            }
            map.values_mut().for_each(precise_nullables);
        }
        Value::Array(items) => items.iter_mut().for_each(precise_nullables),
        _ => {}
    }
}

/// Checks `body` against the document's schema `name`.
///
/// # Errors
/// 422 at the first place the schema refuses.
pub(in crate::api::svix) fn check(name: &str, body: &Value) -> Result<(), SvixError> {
    let Some(schema) = schemas().compiled.get(name) else {
        return Err(SvixError::internal(format!(
            "no schema {name} in the document"
        )));
    };
    schema.check(name, body).map_err(|refused| {
        let mut loc = vec!["body".to_owned()];
        loc.extend(
            refused
                .at
                .split('/')
                .filter(|s| !s.is_empty() && *s != "(root)")
                .map(|s| s.replace("~1", "/").replace("~0", "~")),
        );
        // A missing field is named where it is missing, as Svix names it.
        loc.extend(refused.missing);
        // The document's word on the field, when it has one, says why.
        let msg = match description(name, &loc[1..]) {
            Some(why) => format!("{}: {why}", refused.message),
            None => refused.message,
        };
        SvixError::Validation { loc, msg }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_body_the_document_refuses_is_a_422_at_its_place() {
        assert!(check("ApplicationIn", &json!({"name": "Acme"})).is_ok());
        let Err(SvixError::Validation { loc, .. }) = check("ApplicationIn", &json!({"name": ""}))
        else {
            panic!("an empty name is refused");
        };
        assert_eq!(loc, ["body", "name"]);
        let Err(SvixError::Validation { loc, .. }) = check("ApplicationIn", &json!({})) else {
            panic!("a missing name is refused");
        };
        assert_eq!(loc, ["body", "name"]);
        let Err(SvixError::Validation { loc, .. }) = check(
            "MessageIn",
            &json!({"eventType": "a.b", "payload": {}, "application": {"name": 5}}),
        ) else {
            panic!("a name that is no string is refused");
        };
        assert_eq!(loc, ["body", "application", "name"]);
        assert!(check("AppPortalAccessIn", &json!({})).is_ok());
        let Err(SvixError::Validation { loc, msg }) =
            check("ApplicationIn", &json!({"name": "a", "throttleRate": 5}))
        else {
            panic!("an application's rate is refused");
        };
        assert_eq!(loc, ["body", "throttleRate"]);
        assert!(msg.contains("set `throttleRate` on its endpoints"), "{msg}");
    }
}
