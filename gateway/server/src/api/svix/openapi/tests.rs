//! The Svix face's document: every operation the face serves, under Svix's
//! operation id, with its tokens and errors; the committed copy current.

use serde_json::Value;

use super::document_json;

fn doc() -> Value {
    serde_json::from_str(&document_json()).expect("the document is JSON")
}

/// Every operation served, as `METHOD path operationId`; Svix's ids, so a
/// client generated from either document names the calls alike.
const SERVED: &[(&str, &str, &str)] = &[
    ("get", "/api/v1/health", "v1.health.get"),
    ("head", "/api/v1/health", "v1.health.head"),
    ("get", "/api/v1/openapi.json", "get_svix_openapi"),
    ("get", "/api/v1/app", "v1.application.list"),
    ("post", "/api/v1/app", "v1.application.create"),
    ("get", "/api/v1/app/{app_id}", "v1.application.get"),
    ("put", "/api/v1/app/{app_id}", "v1.application.update"),
    ("patch", "/api/v1/app/{app_id}", "v1.application.patch"),
    ("delete", "/api/v1/app/{app_id}", "v1.application.delete"),
    ("get", "/api/v1/app/{app_id}/endpoint", "v1.endpoint.list"),
    (
        "post",
        "/api/v1/app/{app_id}/endpoint",
        "v1.endpoint.create",
    ),
    (
        "get",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}",
        "v1.endpoint.get",
    ),
    (
        "put",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}",
        "v1.endpoint.update",
    ),
    (
        "patch",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}",
        "v1.endpoint.patch",
    ),
    (
        "delete",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}",
        "v1.endpoint.delete",
    ),
    (
        "get",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/headers",
        "v1.endpoint.get-headers",
    ),
    (
        "put",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/headers",
        "v1.endpoint.update-headers",
    ),
    (
        "patch",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/headers",
        "v1.endpoint.patch-headers",
    ),
    (
        "get",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/secret",
        "v1.endpoint.get-secret",
    ),
    (
        "post",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/secret/rotate",
        "v1.endpoint.rotate-secret",
    ),
    (
        "post",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/recover",
        "v1.endpoint.recover",
    ),
    (
        "post",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/replay-missing",
        "v1.endpoint.replay-missing",
    ),
    (
        "post",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/send-example",
        "v1.endpoint.send-example",
    ),
    (
        "get",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/stats",
        "v1.endpoint.get-stats",
    ),
    (
        "get",
        "/api/v1/app/{app_id}/endpoint/{endpoint_id}/msg",
        "v1.message-attempt.list-attempted-messages",
    ),
    ("get", "/api/v1/app/{app_id}/msg", "v1.message.list"),
    ("post", "/api/v1/app/{app_id}/msg", "v1.message.create"),
    ("get", "/api/v1/app/{app_id}/msg/{msg_id}", "v1.message.get"),
    (
        "delete",
        "/api/v1/app/{app_id}/msg/{msg_id}/content",
        "v1.message.expunge-content",
    ),
    (
        "get",
        "/api/v1/app/{app_id}/attempt/endpoint/{endpoint_id}",
        "v1.message-attempt.list-by-endpoint",
    ),
    (
        "get",
        "/api/v1/app/{app_id}/attempt/msg/{msg_id}",
        "v1.message-attempt.list-by-msg",
    ),
    (
        "get",
        "/api/v1/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}",
        "v1.message-attempt.get",
    ),
    (
        "delete",
        "/api/v1/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}/content",
        "v1.message-attempt.expunge-content",
    ),
    (
        "get",
        "/api/v1/app/{app_id}/msg/{msg_id}/endpoint",
        "v1.message-attempt.list-attempted-destinations",
    ),
    (
        "post",
        "/api/v1/app/{app_id}/msg/{msg_id}/endpoint/{endpoint_id}/resend",
        "v1.message-attempt.resend",
    ),
    ("get", "/api/v1/event-type", "v1.event-type.list"),
    ("post", "/api/v1/event-type", "v1.event-type.create"),
    (
        "get",
        "/api/v1/event-type/{event_type_name}",
        "v1.event-type.get",
    ),
    (
        "put",
        "/api/v1/event-type/{event_type_name}",
        "v1.event-type.update",
    ),
    (
        "patch",
        "/api/v1/event-type/{event_type_name}",
        "v1.event-type.patch",
    ),
    (
        "delete",
        "/api/v1/event-type/{event_type_name}",
        "v1.event-type.delete",
    ),
    (
        "post",
        "/api/v1/auth/app-portal-access/{app_id}",
        "v1.authentication.app-portal-access",
    ),
    ("post", "/api/v1/auth/logout", "v1.authentication.logout"),
    (
        "post",
        "/api/v1/auth/app/{app_id}/expire-all",
        "v1.authentication.expire-all",
    ),
];

#[test]
fn every_served_operation_is_described_under_svixs_id() {
    let doc = doc();
    let mut described = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            let id = op["operationId"].as_str().unwrap_or_default();
            described.push((method.clone(), path.clone(), id.to_owned()));
        }
    }
    described.sort();
    let mut served: Vec<(String, String, String)> = SERVED
        .iter()
        .map(|(m, p, id)| ((*m).to_owned(), (*p).to_owned(), (*id).to_owned()))
        .collect();
    served.sort();
    assert_eq!(described, served);
}

#[test]
fn every_private_operation_takes_a_token_and_says_its_errors() {
    let doc = doc();
    for (method, path, _) in SERVED {
        let op = &doc["paths"][path][method];
        let responses = op["responses"].as_object().expect("responses");
        if path.ends_with("/health") || path.ends_with("/openapi.json") {
            assert!(op["security"].is_null(), "{method} {path} is public");
            continue;
        }
        assert_eq!(
            op["security"].as_array().map(Vec::len),
            Some(3),
            "{method} {path}: the organisation token, an application key or a portal token"
        );
        for status in ["401", "403", "404", "422", "429"] {
            let schema = &responses[status]["content"]["application/json"]["schema"]["$ref"];
            let want = if status == "422" {
                "#/components/schemas/HTTPValidationError"
            } else {
                "#/components/schemas/HttpErrorOut"
            };
            assert_eq!(schema, want, "{method} {path} {status}");
        }
        let keyed = op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header");
        assert_eq!(keyed, *method == "post", "{method} {path}: Idempotency-Key");
    }
}

#[test]
fn statuses_and_lists_are_svixs() {
    let doc = doc();
    let schemas = &doc["components"]["schemas"];
    let attempt = &schemas["MessageAttemptOut"]["properties"];
    assert_eq!(attempt["status"]["maximum"], 3, "{attempt}");
    assert!(attempt["statusText"].is_object(), "{attempt}");
    let list = &schemas["ListResponse_ApplicationOut"];
    let required: Vec<&str> = list["required"]
        .as_array()
        .expect("required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for field in ["data", "done"] {
        assert!(required.contains(&field), "{list}");
    }
    assert!(list["properties"]["prevIterator"].is_object(), "{list}");
}

#[test]
fn the_committed_copy_in_docs_is_the_generated_document() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/svix-openapi.json");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == document_json(),
        "docs/svix-openapi.json differs from the document the code generates; \
         regenerate it with `cargo run -p hookgate -- openapi --svix > docs/svix-openapi.json`"
    );
}
