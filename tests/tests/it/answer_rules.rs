//! Tenant fairness, item 5: what answers carry and what bodies may be. An
//! answer that shows a secret is never cached (`Cache-Control: no-store`);
//! every answer says `X-Content-Type-Options: nosniff`; a body the schema
//! forbids (a top-level array, a merge patch naming an unknown field, even as
//! null) is refused with 400 naming the problem.

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, Answer, ApiRequest, TestGateway};
use http::Method;
use serde_json::{Value, json};

async fn send(
    gw: &TestGateway,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> Answer {
    let mut request = ApiRequest::path(method, path).token(Some(token));
    if let Some(body) = body {
        request = request.json(&body);
    }
    gw.exchange(request).await
}

fn header<'a>(answer: &'a Answer, name: &str) -> Option<&'a str> {
    answer.headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn answers_with_secrets_are_never_cached_and_every_answer_says_nosniff() {
    let gw = TestGateway::start().await;
    let rx = Receiver::start(Vec::new()).await;
    let created = send(
        &gw,
        Method::POST,
        "/v1/tenants",
        ADMIN,
        Some(json!({"id": "acme"})),
    )
    .await;
    let key = created.json()["api_key"].as_str().unwrap().to_owned();
    let endpoint = send(
        &gw,
        Method::POST,
        "/v1/tenants/acme/endpoints",
        &key,
        Some(json!({"url": rx.url()})),
    )
    .await;
    let id = endpoint.json()["id"].as_str().unwrap().to_owned();
    let secrets = format!("/v1/tenants/acme/endpoints/{id}/secret");
    let rotate_secret = format!("/v1/tenants/acme/endpoints/{id}/rotate-secret");
    let with_secrets = [
        ("tenant create", created),
        ("endpoint create", endpoint),
        (
            "secret list",
            send(&gw, Method::GET, &secrets, &key, None).await,
        ),
        (
            "secret rotation",
            send(&gw, Method::POST, &rotate_secret, &key, None).await,
        ),
        (
            "key rotation",
            send(
                &gw,
                Method::POST,
                "/v1/tenants/acme/rotate-key",
                ADMIN,
                None,
            )
            .await,
        ),
    ];
    for (what, answer) in &with_secrets {
        assert!(answer.status < 300, "{what}: {}", answer.status);
        assert_eq!(header(answer, "cache-control"), Some("no-store"), "{what}");
        assert_eq!(
            header(answer, "x-content-type-options"),
            Some("nosniff"),
            "{what}"
        );
    }
    let plain = [
        (
            "tenant list",
            send(&gw, Method::GET, "/v1/tenants", ADMIN, None).await,
        ),
        (
            "an error",
            send(
                &gw,
                Method::GET,
                "/v1/tenants/acme/endpoints/ep_none",
                ADMIN,
                None,
            )
            .await,
        ),
        (
            "no route",
            send(&gw, Method::GET, "/v1/nowhere", ADMIN, None).await,
        ),
    ];
    for (what, answer) in &plain {
        assert_eq!(header(answer, "cache-control"), None, "{what}");
        assert_eq!(
            header(answer, "x-content-type-options"),
            Some("nosniff"),
            "{what}"
        );
    }
}

#[tokio::test]
async fn bodies_the_schema_forbids_are_refused() {
    let gw = TestGateway::start().await;
    let array = send(&gw, Method::POST, "/v1/tenants", ADMIN, Some(json!(["x"]))).await;
    assert_eq!(array.status, 400, "{}", array.json());
    assert!(
        array.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("array")
    );
    let (status, _) = gw.call("GET", "/v1/tenants/x", Some(ADMIN), None).await;
    assert_ne!(status, 200, "no tenant was made from the array");

    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/hook"}))
        .await;
    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    // Unknown top-level keys are 400 invalid_field, as on create; an unknown
    // policy key is the policy's own 422, as on create.
    for (patch, status, field) in [
        (json!({"": null}), 400, ""),
        (json!({"bogus": null}), 400, "bogus"),
        (json!({"policy": {"bogus": null}}), 422, "policy.bogus"),
    ] {
        let answer = send(&gw, Method::PATCH, &path, &key, Some(patch.clone())).await;
        let body = answer.json();
        assert_eq!(answer.status, status, "{patch}: {body}");
        let said = body["error"].to_string();
        assert!(said.contains("unknown"), "{patch}: {body}");
        assert!(said.contains(field), "{patch}: {body}");
    }
    let fine = send(
        &gw,
        Method::PATCH,
        &path,
        &key,
        Some(json!({"description": null})),
    )
    .await;
    assert_eq!(fine.status, 200, "{}", fine.json());
}
