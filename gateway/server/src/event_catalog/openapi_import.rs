//! Event types read from an OpenAPI document's webhooks: `webhooks` (3.1) or
//! `x-webhooks` (3.0), one type per webhook, named by its key. Each type takes
//! the operation's summary or description, `deprecated`, its first tag as the
//! group, the JSON request body's schema and an example.
//!
//! A stored schema may refer only within itself, so the component schemas a
//! webhook's schema refers to (`#/components/schemas/X`, followed
//! transitively) are copied under its `$defs` and the references rewritten.
//! A webhook that refers anywhere else, whose schema does not compile, or
//! whose example its schema refuses, is skipped with the reason.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::schema::PayloadSchema;
use crate::event_type;

/// Where component schemas are referred to from.
const COMPONENTS: &str = "#/components/schemas/";
/// Most component schemas one webhook's schema may pull in.
const MAX_COMPONENTS: usize = 500;

/// Why a document could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ImportError {
    #[error("is not an OpenAPI 3.0 or 3.1 document (no \"openapi\": \"3.x\")")]
    NotOpenApi,
    #[error("has no webhooks (neither \"webhooks\" nor \"x-webhooks\")")]
    NoWebhooks,
}

/// One type the document describes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ImportedType {
    pub name: String,
    pub description: String,
    pub group: Option<String>,
    pub deprecated: bool,
    pub schema: Option<Value>,
    pub example: Option<Value>,
}

/// What a document gives: its types, and the webhooks skipped with why.
#[derive(Debug, Default)]
pub(crate) struct Imported {
    pub types: Vec<ImportedType>,
    pub skipped: Vec<(String, String)>,
}

/// Reads the event types of `doc`; names longer than `max_name` are skipped.
///
/// # Errors
/// If it is not an OpenAPI 3 document, or has no webhooks.
pub(crate) fn types_of_document(doc: &Value, max_name: usize) -> Result<Imported, ImportError> {
    let version = doc.get("openapi").and_then(Value::as_str).unwrap_or("");
    if !version.starts_with("3.") {
        return Err(ImportError::NotOpenApi);
    }
    let hooks = doc
        .get("webhooks")
        .or_else(|| doc.get("x-webhooks"))
        .and_then(Value::as_object)
        .ok_or(ImportError::NoWebhooks)?;
    let mut out = Imported::default();
    for (name, item) in hooks {
        if let Err(e) = event_type::validate_type(name, max_name) {
            out.skipped
                .push((name.clone(), format!("not an event type name: {e}")));
            continue;
        }
        match type_of_webhook(doc, name, item) {
            Ok(t) => out.types.push(t),
            Err(reason) => out.skipped.push((name.clone(), reason)),
        }
    }
    Ok(out)
}

/// One webhook's type, or why it is skipped.
fn type_of_webhook(doc: &Value, name: &str, item: &Value) -> Result<ImportedType, String> {
    let op = ["post", "put", "patch"]
        .iter()
        .find_map(|m| item.get(*m))
        .ok_or("has no post, put or patch operation")?;
    let text = |k: &str| op.get(k).and_then(Value::as_str).map(str::to_owned);
    let description = text("description")
        .or_else(|| text("summary"))
        .unwrap_or_default();
    let group = op
        .get("tags")
        .and_then(|t| t.get(0))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let deprecated = op.get("deprecated").and_then(Value::as_bool) == Some(true);
    let media = match op.get("requestBody") {
        None => None,
        Some(body) => {
            let body = local_target(doc, body, "#/components/requestBodies/")?;
            body.get("content")
                .and_then(|c| c.get("application/json"))
                .cloned()
        }
    };
    let schema = match media.as_ref().and_then(|m| m.get("schema")) {
        None => None,
        Some(s) => Some(self_contained(doc, s)?),
    };
    let example = media.as_ref().and_then(|m| {
        m.get("example")
            .cloned()
            .or_else(|| first_example(m.get("examples")))
            .or_else(|| m.get("schema").and_then(|s| s.get("example")).cloned())
    });
    if let Some(s) = &schema {
        let compiled = PayloadSchema::compile("1", s).map_err(|e| format!("its schema {e}"))?;
        if let Some(example) = &example {
            compiled
                .check(name, example)
                .map_err(|e| format!("its example does not match its schema: {e}"))?;
        }
    }
    Ok(ImportedType {
        name: name.to_owned(),
        description,
        group,
        deprecated,
        schema,
        example,
    })
}

/// The first of a media type's `examples` (a map of Example objects).
fn first_example(examples: Option<&Value>) -> Option<Value> {
    let first = examples?.as_object()?.values().next()?;
    first.get("value").cloned()
}

/// `v` itself, or the object its `$ref` names under `prefix` in `doc`.
fn local_target<'a>(doc: &'a Value, v: &'a Value, prefix: &str) -> Result<&'a Value, String> {
    let Some(r) = v.get("$ref").and_then(Value::as_str) else {
        return Ok(v);
    };
    if !r.starts_with(prefix) {
        return Err(format!("refers to {r}, outside {prefix}"));
    }
    doc.pointer(&r[1..])
        .ok_or_else(|| format!("refers to {r}, which the document lacks"))
}

/// `schema` with every component schema it refers to copied under `$defs`.
fn self_contained(doc: &Value, schema: &Value) -> Result<Value, String> {
    let mut out = schema.clone();
    let mut wanted = BTreeSet::new();
    rewrite_refs(&mut out, &mut wanted)?;
    let mut defs = BTreeMap::new();
    let mut todo: Vec<String> = wanted.iter().cloned().collect();
    while let Some(name) = todo.pop() {
        if defs.contains_key(&name) {
            continue;
        }
        if defs.len() == MAX_COMPONENTS {
            return Err(format!(
                "its schema refers to more than {MAX_COMPONENTS} components"
            ));
        }
        let pointer = format!("/components/schemas/{name}");
        let mut def = doc
            .pointer(&pointer)
            .cloned()
            .ok_or_else(|| format!("refers to #{pointer}, which the document lacks"))?;
        let mut more = BTreeSet::new();
        rewrite_refs(&mut def, &mut more)?;
        todo.extend(more.into_iter().filter(|n| !defs.contains_key(n)));
        defs.insert(name, def);
    }
    if defs.is_empty() {
        return Ok(out);
    }
    let Value::Object(obj) = &mut out else {
        return Err("its schema is a $ref to a component but not an object".into());
    };
    let slot = obj
        .entry("$defs")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(slot) = slot else {
        return Err("its schema's $defs is not an object".into());
    };
    for (name, def) in defs {
        if slot.contains_key(&name) {
            return Err(format!("its schema's $defs already holds {name}"));
        }
        slot.insert(name, def);
    }
    Ok(out)
}

/// Rewrites `#/components/schemas/X` to `#/$defs/X` throughout `v`, noting
/// each `X` in `wanted`; any other `$ref` not within the schema is refused.
fn rewrite_refs(v: &mut Value, wanted: &mut BTreeSet<String>) -> Result<(), String> {
    match v {
        Value::Object(obj) => {
            if let Some(Value::String(r)) = obj.get_mut("$ref") {
                if let Some(rest) = r.strip_prefix(COMPONENTS) {
                    // The component's own name: the first pointer segment.
                    let name = rest.split('/').next().unwrap_or(rest);
                    wanted.insert(unescape(name));
                    *r = format!("#/$defs/{rest}");
                } else if r.starts_with("#/components/") || !r.starts_with('#') {
                    return Err(format!("refers to {r}, outside the document's schemas"));
                }
            }
            for child in obj.values_mut() {
                rewrite_refs(child, wanted)?;
            }
        }
        Value::Array(items) => {
            for child in items {
                rewrite_refs(child, wanted)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A JSON Pointer segment as the key it names.
fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc() -> Value {
        json!({
            "openapi": "3.1.0",
            "info": {"title": "shop", "version": "1"},
            "webhooks": {
                "order.paid": {"post": {
                    "summary": "An order was paid",
                    "tags": ["orders"],
                    "requestBody": {"content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Order"},
                        "example": {"id": "o1", "amount": {"value": 5, "currency": "EUR"}}
                    }}}
                }},
                "order.legacy": {"post": {"deprecated": true, "description": "old"}},
                "bad name!": {"post": {}},
                "order.remote": {"post": {"requestBody": {"content": {"application/json": {
                    "schema": {"$ref": "https://example.com/order.json"}
                }}}}}
            },
            "components": {"schemas": {
                "Order": {"type": "object", "required": ["id"], "properties": {
                    "id": {"type": "string"},
                    "amount": {"$ref": "#/components/schemas/Money"}
                }},
                "Money": {"type": "object", "properties": {"value": {"type": "integer"}}}
            }}
        })
    }

    #[test]
    fn webhooks_become_types_with_self_contained_schemas() {
        let got = types_of_document(&doc(), 128).unwrap();
        let names: Vec<&str> = got.types.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["order.legacy", "order.paid"]);
        let paid = &got.types[1];
        assert_eq!(paid.description, "An order was paid");
        assert_eq!(paid.group.as_deref(), Some("orders"));
        let schema = paid.schema.as_ref().unwrap();
        assert_eq!(schema["$ref"], "#/$defs/Order");
        assert_eq!(
            schema["$defs"]["Order"]["properties"]["amount"]["$ref"],
            "#/$defs/Money"
        );
        assert!(schema["$defs"]["Money"].is_object());
        let s = PayloadSchema::compile("1", schema).unwrap();
        assert!(
            s.check("order.paid", paid.example.as_ref().unwrap())
                .is_ok()
        );
        assert!(
            s.check("order.paid", &json!({"amount": {"value": "x"}, "id": "o"}))
                .is_err()
        );
        assert!(got.types[0].deprecated && got.types[0].schema.is_none());
        let skipped: Vec<&str> = got.skipped.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(skipped, ["bad name!", "order.remote"]);
    }

    #[test]
    fn a_document_that_is_not_openapi_3_with_webhooks_is_refused() {
        assert_eq!(
            types_of_document(&json!({"swagger": "2.0"}), 128).unwrap_err(),
            ImportError::NotOpenApi
        );
        assert_eq!(
            types_of_document(&json!({"openapi": "3.0.3", "paths": {}}), 128).unwrap_err(),
            ImportError::NoWebhooks
        );
        let x = json!({"openapi": "3.0.3", "x-webhooks": {"a.b": {"post": {}}}});
        assert_eq!(types_of_document(&x, 128).unwrap().types.len(), 1);
    }
}
