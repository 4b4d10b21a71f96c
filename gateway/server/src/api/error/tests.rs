//! The unit tests of `error.rs`.

use super::*;
use http_body_util::BodyExt;

async fn render(e: ApiError) -> (StatusCode, serde_json::Value) {
    let resp = e.into_response();
    let status = resp.status();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap())
}

#[tokio::test]
async fn errors_map_to_status_code_and_shape() {
    let cases = [
        (ApiError::invalid_json("x"), 400, "invalid_json"),
        (ApiError::invalid_field("a.b", "x"), 400, "invalid_field"),
        (ApiError::unauthorized(), 401, "unauthorized"),
        (ApiError::forbidden(), 403, "forbidden"),
        (ApiError::not_found("tenant"), 404, "not_found"),
        (ApiError::conflict("x"), 409, "conflict"),
        (ApiError::too_many_secrets(5), 409, "too_many_secrets"),
        (ApiError::request_timeout(), 408, "request_timeout"),
        (ApiError::too_large(10), 413, "payload_too_large"),
        (ApiError::validation("url", "x"), 422, "validation_failed"),
        (ApiError::url_blocked("x"), 422, "url_blocked"),
        (
            ApiError::idempotency_key_reused(),
            422,
            "idempotency_key_reused",
        ),
        (
            StoreError::unavailable("disk").into(),
            503,
            "store_unavailable",
        ),
        (
            ApiError::insufficient_storage(),
            507,
            "insufficient_storage",
        ),
        (ApiError::plugin_rejected("x"), 422, "plugin_rejected"),
        (ApiError::rate_limited("x"), 429, "rate_limited"),
        (ApiError::busy("x"), 503, "busy"),
        (ApiError::internal(), 500, "internal_error"),
        (BudgetExceeded::Time.into(), 422, "simulation_too_large"),
    ];
    for (err, status, code) in cases {
        let field = err.field.clone();
        let (s, body) = render(err).await;
        assert_eq!(s.as_u16(), status);
        assert_eq!(body["error"]["code"], code);
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        assert_eq!(
            body["error"].get("field").and_then(|f| f.as_str()),
            field.as_deref()
        );
    }
}

#[tokio::test]
async fn the_typed_error_body_has_the_bytes_of_its_json_form() {
    use serde_json::json;
    for (err, before) in [
        (
            ApiError::validation("url", "bad"),
            json!({"error": {"code": "validation_failed", "message": "bad", "field": "url"}}),
        ),
        (
            ApiError::unauthorized(),
            json!({"error": {"code": "unauthorized", "message": "missing or invalid bearer token"}}),
        ),
    ] {
        let body = err.into_response().into_body().collect().await.unwrap();
        assert_eq!(
            String::from_utf8(body.to_bytes().to_vec()).unwrap(),
            serde_json::to_string(&before).unwrap()
        );
    }
}

#[test]
fn every_code_is_named_and_statused_once() {
    let names: std::collections::HashSet<&str> =
        ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(names.len(), ErrorCode::ALL.len());
    for code in ErrorCode::ALL {
        assert_eq!(
            serde_json::to_value(code).unwrap(),
            code.as_str(),
            "serialised as named"
        );
        assert!(code.status().is_client_error() || code.status().is_server_error());
    }
}

#[test]
fn a_value_the_store_refused_is_the_clients_error_not_an_outage() {
    let refused = StoreError::Backend {
        failure: Failure::Refused,
        source: "ERROR: invalid byte sequence for encoding \"UTF8\": 0x00".into(),
    };
    let e = ApiError::from(refused);
    assert_eq!((e.status().as_u16(), e.code()), (400, "invalid_field"));
    let down = StoreError::unavailable("connection refused");
    assert_eq!(ApiError::from(down).code(), "store_unavailable");
}
