//! The document against the code: every operation described with its errors and
//! security, no schema that says nothing, the policy's bounds present, and the
//! committed copy in `docs/` equal to what the code generates.

use serde_json::Value;

use super::document_json;
use super::operations::{OPERATIONS, codes_of};
use crate::api::error::ErrorCode;

fn doc() -> Value {
    serde_json::from_str(&document_json()).unwrap()
}

/// Every operation of the document: (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if ["get", "put", "post", "delete", "patch"].contains(&method.as_str()) {
                out.push((method.clone(), path.clone(), op.clone()));
            }
        }
    }
    out
}

#[test]
fn every_operation_has_one_row_and_every_row_one_operation() {
    let doc = doc();
    let ops = operations(&doc);
    let mut ids: Vec<&str> = ops
        .iter()
        .map(|(m, p, op)| {
            op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{m} {p} has no operationId"))
        })
        .collect();
    for id in &ids {
        assert!(
            OPERATIONS.iter().any(|row| row.id == *id),
            "{id} has no row in operations::OPERATIONS"
        );
    }
    for row in OPERATIONS {
        assert!(ids.contains(&row.id), "row {} names no operation", row.id);
    }
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "operation ids are unique");
    assert_eq!(count, 69, "API v1 has 69 operations");
}

#[test]
fn every_error_answer_is_the_error_body_and_lists_its_codes() {
    let doc = doc();
    for (method, path, op) in operations(&doc) {
        let id = op["operationId"].as_str().unwrap();
        let keyed = matches!(method.as_str(), "post" | "put");
        for code in codes_of(id, op.get("requestBody").is_some(), keyed) {
            let status = code.status().as_u16().to_string();
            let response = &op["responses"][&status];
            assert!(response.is_object(), "{method} {path}: no {status} answer");
            if id == "healthz" && status == "503" {
                continue;
            }
            let schema = &response["content"]["application/json"]["schema"]["$ref"];
            assert_eq!(
                schema, "#/components/schemas/ErrorBody",
                "{method} {path} {status}"
            );
            let description = response["description"].as_str().unwrap();
            assert!(
                description.contains(&format!("`{}`", code.as_str())),
                "{method} {path} {status}: {description}"
            );
        }
        let public = ["healthz", "metrics", "get_openapi"].contains(&id);
        assert_eq!(
            op.get("security").is_none(),
            public,
            "{method} {path}: security"
        );
        if !public {
            assert!(op["responses"]["401"].is_object(), "{method} {path}: 401");
        }
    }
    let codes = doc["components"]["schemas"]["ErrorCode"]["enum"].clone();
    let names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(
        codes,
        serde_json::json!(names),
        "the code enum is every code"
    );
    let schemes = &doc["components"]["securitySchemes"];
    for scheme in ["admin_token", "tenant_key"] {
        assert_eq!(schemes[scheme]["scheme"], "bearer", "{scheme}");
    }
}

/// Whether `schema` is an object that says nothing of its contents.
fn is_bare_object(schema: &Value) -> bool {
    let is_object = schema["type"] == "object"
        || schema["type"]
            .as_array()
            .is_some_and(|t| t.contains(&Value::from("object")));
    is_object
        && schema
            .get("properties")
            .is_none_or(|p| p.as_object().unwrap().is_empty())
        && schema.get("additionalProperties").is_none_or(|a| a == true)
        && ["allOf", "oneOf", "anyOf", "$ref"]
            .iter()
            .all(|k| schema.get(k).is_none())
}

/// Walks every schema in `value`, with its location.
fn walk<'a>(value: &'a Value, at: &str, found: &mut Vec<(String, &'a Value)>) {
    match value {
        Value::Object(map) => {
            found.push((at.to_owned(), value));
            for (k, v) in map {
                walk(v, &format!("{at}/{k}"), found);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn no_request_or_response_schema_is_a_bare_object() {
    let doc = doc();
    let mut found = Vec::new();
    walk(&doc["paths"], "paths", &mut found);
    walk(&doc["components"]["schemas"], "schemas", &mut found);
    let bare: Vec<&String> = found
        .iter()
        .filter(|(_, v)| is_bare_object(v))
        .map(|(at, _)| at)
        .collect();
    assert!(bare.is_empty(), "bare objects at {bare:#?}");
    // The check itself sees one.
    assert!(is_bare_object(&serde_json::json!({"type": "object"})));
}

#[test]
fn the_policy_object_carries_its_bounds() {
    let doc = doc();
    let spec = &doc["components"]["schemas"]["PolicySpec"]["properties"];
    let attempts = &spec["max_attempts"];
    assert_eq!(
        (&attempts["minimum"], &attempts["maximum"]),
        (&1.into(), &100.into())
    );
    assert_eq!(spec["factor"]["minimum"].as_f64(), Some(1.0));
    let ratio = &spec["jitter_ratio"];
    assert_eq!(ratio["exclusiveMinimum"].as_f64(), Some(0.0));
    assert_eq!(ratio["maximum"].as_f64(), Some(1.0));
    let duration = &doc["components"]["schemas"]["DurationMs"]["oneOf"][0];
    assert_eq!(duration["maximum"], crate::policy::MAX_DURATION_MS);
    let presets = &doc["components"]["schemas"]["PresetName"]["enum"];
    assert_eq!(presets, &serde_json::json!(crate::policy::PRESET_NAMES));
}

#[test]
fn the_committed_copy_in_docs_is_the_generated_document() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == document_json(),
        "docs/openapi.json differs from the document the code generates; \
         regenerate it with `cargo run -p hookgate -- openapi > docs/openapi.json`"
    );
    assert_eq!(doc()["openapi"], "3.1.0");
}

#[test]
fn the_resolved_policy_is_one_flat_object_covering_every_preset() {
    let doc = doc();
    let shape = &doc["components"]["schemas"]["EffectivePolicy"];
    assert_eq!(shape["type"], "object", "flat, not allOf/oneOf: {shape}");
    let properties = shape["properties"].as_object().unwrap();
    let required: Vec<&str> = shape["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for name in crate::policy::PRESET_NAMES {
        let policy = crate::policy::EffectivePolicy::preset(name).unwrap();
        let shown = serde_json::to_value(&policy).unwrap();
        let shown = shown.as_object().unwrap();
        for key in shown.keys() {
            assert!(
                properties.contains_key(key),
                "{name}: {key} is not described"
            );
        }
        for key in &required {
            assert!(shown.contains_key(*key), "{name}: required {key} is absent");
        }
    }
}

#[test]
fn every_tenant_operation_says_what_a_portal_session_needs() {
    use crate::api::portal_access::PORTAL_ACCESS;
    for op in super::operations::OPERATIONS {
        let named = PORTAL_ACCESS.iter().any(|(id, _)| *id == op.id);
        let reachable = matches!(
            op.access,
            super::operations::Access::Tenant | super::operations::Access::Caller
        );
        assert_eq!(
            named, reachable,
            "{}: a row iff a tenant may call it",
            op.id
        );
    }
    for (id, _) in PORTAL_ACCESS {
        let known = super::operations::OPERATIONS.iter().any(|op| op.id == *id);
        assert!(known, "{id} is no operation");
    }
}
