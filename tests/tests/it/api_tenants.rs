//! Tenants and auth: create, list, rotate-key, and the 401/403/404/405/409/422
//! answers.

use hookgate_tests::{ADMIN, Backend, TestGateway};
use serde_json::json;

hookgate_tests::on_each_backend! {
    tenants_are_created_listed_and_guarded,
    rotate_key_replaces_the_old_key,
    unknown_routes_and_health,
}

async fn tenants_are_created_listed_and_guarded(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants",
            Some(ADMIN),
            Some(json!({"id": "acme"})),
        )
        .await;
    assert_eq!(s, 201);
    assert_eq!(b["id"], "acme");
    let key = b["api_key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("hgk_"));

    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants",
            Some(ADMIN),
            Some(json!({"id": "acme"})),
        )
        .await;
    assert_eq!((s, b["error"]["code"].as_str()), (409, Some("conflict")));

    for bad in ["", "Acme", "-x", "a b", &"a".repeat(64)] {
        let (s, b) = gw
            .call("POST", "/v1/tenants", Some(ADMIN), Some(json!({"id": bad})))
            .await;
        assert_eq!(
            (s, b["error"]["code"].as_str(), b["error"]["field"].as_str()),
            (422, Some("validation_failed"), Some("id")),
            "{bad}"
        );
    }
    let (s, b) = gw
        .call("POST", "/v1/tenants", Some(ADMIN), Some(json!({"id": 7})))
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (400, Some("invalid_field"))
    );

    gw.tenant("beta").await;
    let (s, b) = gw.call("GET", "/v1/tenants", Some(ADMIN), None).await;
    assert_eq!(s, 200);
    let ids: Vec<_> = b["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["beta", "acme"]);
    assert!(b["next_cursor"].is_null());

    let (s, b) = gw
        .call("GET", "/v1/tenants?limit=1", Some(ADMIN), None)
        .await;
    assert_eq!((s, b["data"].as_array().unwrap().len()), (200, 1));
    let cursor = b["next_cursor"].as_str().unwrap().to_owned();
    let (_, b) = gw
        .call(
            "GET",
            &format!("/v1/tenants?limit=1&cursor={cursor}"),
            Some(ADMIN),
            None,
        )
        .await;
    assert_eq!(b["data"][0]["id"], "acme");
    let (s, b) = gw
        .call("GET", "/v1/tenants?limit=0", Some(ADMIN), None)
        .await;
    assert_eq!((s, b["error"]["field"].as_str()), (400, Some("limit")));

    // A tenant key on an admin route is 403; no or a bad token is 401.
    let (s, b) = gw.call("GET", "/v1/tenants", Some(&key), None).await;
    assert_eq!((s, b["error"]["code"].as_str()), (403, Some("forbidden")));
    let (s, b) = gw.call("GET", "/v1/tenants", None, None).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (401, Some("unauthorized"))
    );
    let (s, _) = gw
        .call("GET", "/v1/tenants", Some("hgk_not-a-real-token"), None)
        .await;
    assert_eq!(s, 401);
    let (s, _) = gw
        .call("GET", "/v1/tenants/acme/endpoints", Some("Basic abc"), None)
        .await;
    assert_eq!(s, 401);
}

async fn rotate_key_replaces_the_old_key(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let old = gw.tenant("acme").await;
    let (s, b) = gw
        .call("POST", "/v1/tenants/acme/rotate-key", Some(&old), None)
        .await;
    assert_eq!(s, 200);
    let new = b["api_key"].as_str().unwrap().to_owned();
    assert_ne!(old, new);
    assert_eq!(
        gw.call("GET", "/v1/tenants/acme/endpoints", Some(&old), None)
            .await
            .0,
        401
    );
    assert_eq!(
        gw.call("GET", "/v1/tenants/acme/endpoints", Some(&new), None)
            .await
            .0,
        200
    );
    // The admin may rotate any tenant's key; an unknown tenant is 404.
    assert_eq!(
        gw.call("POST", "/v1/tenants/acme/rotate-key", Some(ADMIN), None)
            .await
            .0,
        200
    );
    assert_eq!(
        gw.call("GET", "/v1/tenants/acme/endpoints", Some(&new), None)
            .await
            .0,
        401
    );
    assert_eq!(
        gw.call("POST", "/v1/tenants/nobody/rotate-key", Some(ADMIN), None)
            .await
            .0,
        404
    );
}

async fn unknown_routes_and_health(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let (s, b) = gw.call("GET", "/healthz", None, None).await;
    assert_eq!((s, b["status"].as_str()), (200, Some("ok")));
    let (s, b) = gw.call("GET", "/v2/nothing", Some(ADMIN), None).await;
    assert_eq!((s, b["error"]["code"].as_str()), (404, Some("not_found")));
    // A route called with a method it does not take: the one error body, not
    // an empty 405 (issue 39, item 9).
    let (s, b) = gw.call("DELETE", "/healthz", Some(ADMIN), None).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (405, Some("method_not_allowed")),
        "{b}"
    );
    assert!(
        b["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{b}"
    );
}
