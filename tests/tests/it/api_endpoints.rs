//! Endpoints: create, list, show, merge-patch, delete, secrets, and bad input.

use hookgate_tests::{Backend, TestGateway};
use serde_json::json;

hookgate_tests::on_each_backend! {
    endpoint_lifecycle,
    bad_endpoint_input_gets_its_error,
    endpoint_metadata_is_kept_shown_and_patched_key_by_key,
}

const URL: &str = "http://127.0.0.1:9/hook";

async fn endpoint_lifecycle(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": "HTTP://127.1:9/hook", "event_types": ["order.*"]}),
        )
        .await;
    let id = ep["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("ep_"));
    assert_eq!(
        ep["url"], "http://127.0.0.1:9/hook",
        "the URL is stored normalized"
    );
    assert!(ep["secret"].as_str().unwrap().starts_with("whsec_"));
    for field in [
        "description",
        "policy",
        "policy_effective",
        "plugin",
        "timeout_ms",
        "max_in_flight",
        "rate_limit_per_s",
        "disabled",
        "disabled_reason",
        "breaker",
        "created_at",
    ] {
        assert!(ep.get(field).is_some(), "missing {field}");
    }
    assert_eq!(ep["timeout_ms"], 15000);
    assert_eq!(ep["max_in_flight"], 16);
    assert_eq!(ep["breaker"]["state"], "closed");
    assert_eq!(ep["policy_effective"]["max_attempts"], 40);

    let path = format!("/v1/tenants/acme/endpoints/{id}");
    let (s, shown) = gw.call("GET", &path, Some(&key), None).await;
    assert_eq!(s, 200);
    assert!(
        shown.get("secret").is_none(),
        "the secret shows only on create, rotate and /secret"
    );
    assert_eq!(shown["event_types"], json!(["order.*"]));

    // Merge patch: set some fields, null resets another to its default.
    let patch = json!({"description": "orders", "timeout_ms": 2000, "policy": {"max_attempts": 5, "jitter": "none"}});
    let (s, b) = gw.call("PATCH", &path, Some(&key), Some(patch)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        (b["description"].as_str(), b["timeout_ms"].as_u64()),
        (Some("orders"), Some(2000))
    );
    assert_eq!(b["policy_effective"]["max_attempts"], 5);
    let (s, b) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"timeout_ms": null, "event_types": null})),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        (b["timeout_ms"].as_u64(), b["description"].as_str()),
        (Some(15000), Some("orders"))
    );
    assert_eq!(b["event_types"], json!(["*"]));

    let (s, b) = gw
        .call("GET", "/v1/tenants/acme/endpoints", Some(&key), None)
        .await;
    assert_eq!((s, b["data"].as_array().unwrap().len()), (200, 1));

    // Secrets: read, rotate (both sign during the grace period).
    let (s, sec) = gw
        .call("GET", &format!("{path}/secret"), Some(&key), None)
        .await;
    assert_eq!((s, sec["secret"].as_str()), (200, ep["secret"].as_str()));
    let (s, rot) = gw
        .call("POST", &format!("{path}/rotate-secret"), Some(&key), None)
        .await;
    assert_eq!(s, 200);
    assert_ne!(rot["secret"], ep["secret"]);
    assert_eq!(rot["secrets"].as_array().unwrap().len(), 2);
    assert!(rot["secrets"][1]["expires_at"].is_string());

    let (s, _) = gw.call("DELETE", &path, Some(&key), None).await;
    assert_eq!(s, 204);
    assert_eq!(gw.call("GET", &path, Some(&key), None).await.0, 404);
    assert_eq!(gw.call("DELETE", &path, Some(&key), None).await.0, 404);
}

async fn bad_endpoint_input_gets_its_error(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let path = "/v1/tenants/acme/endpoints";
    let cases = [
        (
            json!({"url": "ftp://example.com/x"}),
            422,
            "validation_failed",
            Some("url"),
        ),
        (
            json!({"url": "not a url"}),
            422,
            "validation_failed",
            Some("url"),
        ),
        (
            json!({"description": "no url"}),
            422,
            "validation_failed",
            Some("url"),
        ),
        (
            json!({"url": "http://10.0.0.1/x"}),
            422,
            "url_blocked",
            Some("url"),
        ),
        (
            json!({"url": "http://[::1]/x"}),
            422,
            "url_blocked",
            Some("url"),
        ),
        (
            json!({"url": "http://169.254.169.254/latest"}),
            422,
            "url_blocked",
            Some("url"),
        ),
        (
            json!({"url": URL, "event_types": []}),
            422,
            "validation_failed",
            Some("event_types"),
        ),
        (
            json!({"url": URL, "event_types": ["a*b"]}),
            422,
            "validation_failed",
            Some("event_types[0]"),
        ),
        (
            json!({"url": URL, "timeout_ms": 0}),
            422,
            "validation_failed",
            Some("timeout_ms"),
        ),
        (
            json!({"url": URL, "max_in_flight": 0}),
            422,
            "validation_failed",
            Some("max_in_flight"),
        ),
        (
            json!({"url": URL, "plugin": "nope"}),
            422,
            "validation_failed",
            Some("plugin"),
        ),
        (
            json!({"url": URL, "policy": {"base_ms": 0}}),
            422,
            "validation_failed",
            Some("policy.base_ms"),
        ),
        (
            json!({"url": URL, "policy": {"factor": 0.5}}),
            422,
            "validation_failed",
            Some("policy.factor"),
        ),
        (
            json!({"url": URL, "policy": {"max_attempts": 101}}),
            422,
            "validation_failed",
            Some("policy.max_attempts"),
        ),
        (
            json!({"url": URL, "policy": {"jitter": "wobbly"}}),
            422,
            "validation_failed",
            Some("policy.jitter"),
        ),
        (
            json!({"url": URL, "timeout_ms": "soon"}),
            400,
            "invalid_field",
            Some("timeout_ms"),
        ),
        (
            json!({"url": URL, "colour": "red"}),
            400,
            "invalid_field",
            None,
        ),
        (json!({"url": 5}), 400, "invalid_field", Some("url")),
    ];
    for (body, status, code, field) in cases {
        let (s, b) = gw.call("POST", path, Some(&key), Some(body.clone())).await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (status, Some(code)),
            "{body} → {b}"
        );
        if let Some(f) = field {
            assert_eq!(b["error"]["field"].as_str(), Some(f), "{body} → {b}");
        }
    }
    let (s, b) = gw
        .call_raw(
            "POST",
            path,
            &key,
            b"{\"url\": ".to_vec(),
            &[("content-type", "application/json")],
        )
        .await;
    assert_eq!(s, 400, "{b}");
    assert!(b.contains("invalid_json"));
    let big = format!(
        "{{\"url\":\"{URL}\",\"description\":\"{}\"}}",
        "x".repeat(300 * 1024)
    );
    let (s, b) = gw.call_raw("POST", path, &key, big.into_bytes(), &[]).await;
    assert_eq!(s, 413, "{b}");
    assert!(b.contains("payload_too_large"));
    // Nothing half-written: no endpoint exists after all those refusals.
    let (_, b) = gw.call("GET", path, Some(&key), None).await;
    assert_eq!(b["data"], json!([]));

    // A patch with a bad value changes nothing.
    let ep = gw.endpoint("acme", &key, json!({"url": URL})).await;
    let ep_path = format!("{path}/{}", ep["id"].as_str().unwrap());
    let (s, _) = gw
        .call(
            "PATCH",
            &ep_path,
            Some(&key),
            Some(json!({"url": "http://10.1.2.3/"})),
        )
        .await;
    assert_eq!(s, 422);
    let (_, b) = gw.call("GET", &ep_path, Some(&key), None).await;
    assert_eq!(b["url"], URL);
}

/// Issue 39, item 2: an endpoint's `metadata`, a bounded string map the
/// platform keeps for itself, survives a reload and changes key by key.
async fn endpoint_metadata_is_kept_shown_and_patched_key_by_key(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": URL, "metadata": {"team": "orders", "tier": "gold"}}),
        )
        .await;
    assert_eq!(ep["metadata"], json!({"team": "orders", "tier": "gold"}));
    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    let patch = json!({"metadata": {"tier": null, "region": "eu"}});
    let (s, b) = gw.call("PATCH", &path, Some(&key), Some(patch)).await;
    assert_eq!(s, 200, "{b}");
    let (s, shown) = gw.call("GET", &path, Some(&key), None).await;
    assert_eq!(s, 200);
    assert_eq!(shown["metadata"], json!({"team": "orders", "region": "eu"}));
    let (s, b) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"metadata": {"k": "x".repeat(513)}})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("metadata.k")),
        "{b}"
    );
    let eps = "/v1/tenants/acme/endpoints";
    let (s, b) = gw
        .call(
            "POST",
            eps,
            Some(&key),
            Some(json!({"url": URL, "metadata": ["x"]})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (400, Some("metadata")),
        "{b}"
    );
}
