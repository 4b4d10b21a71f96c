//! Tenant isolation: tenant B gets 404 on every tenant A resource, and nothing changes.

use hookgate_tests::TestGateway;
use serde_json::json;

#[tokio::test]
async fn another_tenants_resources_are_404_and_untouched() {
    let gw = TestGateway::start().await;
    let a = gw.tenant("alpha").await;
    let b = gw.tenant("beta").await;
    let ep = gw
        .endpoint("alpha", &a, json!({"url": "http://127.0.0.1:9/a"}))
        .await;
    let ep_id = ep["id"].as_str().unwrap();
    let ev = gw
        .event("alpha", &a, "x", json!({"secret": "alpha's"}))
        .await;
    let ev_id = ev["id"].as_str().unwrap();
    let dlv_id = ev["deliveries"][0]["id"].as_str().unwrap();

    let snapshot = |path: String| {
        let gw = &gw;
        let a = a.clone();
        async move { gw.call("GET", &path, Some(&a), None).await }
    };
    let ep_path = format!("/v1/tenants/alpha/endpoints/{ep_id}");
    let before_ep = snapshot(ep_path.clone()).await;
    let before_secret = snapshot(format!("{ep_path}/secret")).await;

    let attempts = [
        ("GET", "/v1/tenants/alpha/endpoints".to_owned(), None),
        (
            "POST",
            "/v1/tenants/alpha/endpoints".to_owned(),
            Some(json!({"url": "http://127.0.0.1:9/b"})),
        ),
        ("GET", ep_path.clone(), None),
        (
            "PATCH",
            ep_path.clone(),
            Some(json!({"description": "pwned"})),
        ),
        ("DELETE", ep_path.clone(), None),
        ("GET", format!("{ep_path}/secret"), None),
        ("POST", format!("{ep_path}/rotate-secret"), None),
        (
            "POST",
            "/v1/tenants/alpha/events".to_owned(),
            Some(json!({"event_type": "x", "payload": {}})),
        ),
        ("GET", format!("/v1/tenants/alpha/events/{ev_id}"), None),
        ("GET", "/v1/tenants/alpha/deliveries".to_owned(), None),
        (
            "GET",
            format!("/v1/tenants/alpha/deliveries/{dlv_id}"),
            None,
        ),
        ("POST", "/v1/tenants/alpha/rotate-key".to_owned(), None),
        (
            "POST",
            format!("/v1/tenants/alpha/deliveries/{dlv_id}/replay"),
            None,
        ),
        (
            "POST",
            "/v1/tenants/alpha/replay".to_owned(),
            Some(json!({"state": "dead"})),
        ),
        ("GET", "/v1/tenants/alpha/stats".to_owned(), None),
        ("GET", "/v1/tenants/alpha/dlq/summary".to_owned(), None),
        (
            "POST",
            format!("/v1/tenants/beta/deliveries/{dlv_id}/replay"),
            None,
        ),
        // Alpha's ids under beta's own path are unknown there too.
        ("GET", format!("/v1/tenants/beta/endpoints/{ep_id}"), None),
        ("GET", format!("/v1/tenants/beta/events/{ev_id}"), None),
        ("GET", format!("/v1/tenants/beta/deliveries/{dlv_id}"), None),
    ];
    for (method, path, body) in attempts {
        let (s, resp) = gw.call(method, &path, Some(&b), body).await;
        assert_eq!(
            (s, resp["error"]["code"].as_str()),
            (404, Some("not_found")),
            "{method} {path}"
        );
    }

    assert_eq!(snapshot(ep_path.clone()).await, before_ep);
    assert_eq!(snapshot(format!("{ep_path}/secret")).await, before_secret);
    let (_, eps) = gw
        .call("GET", "/v1/tenants/alpha/endpoints", Some(&a), None)
        .await;
    assert_eq!(eps["data"].as_array().unwrap().len(), 1);
    let (_, dl) = gw
        .call("GET", "/v1/tenants/alpha/deliveries", Some(&a), None)
        .await;
    assert_eq!(dl["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        gw.call("GET", "/v1/tenants/alpha/endpoints", Some(&a), None)
            .await
            .0,
        200,
        "alpha's key still works"
    );
    let (_, beta_eps) = gw
        .call("GET", "/v1/tenants/beta/endpoints", Some(&b), None)
        .await;
    assert_eq!(beta_eps["data"], json!([]));
}
