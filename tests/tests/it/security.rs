//! Security: the SSRF guard at creation and at connect time (DNS rebinding),
//! secret rotation checked by the official verifier, every limit answered with
//! its documented status, and hostile input that never yields a 5xx.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use hookgate_server::RunOptions;
use hookgate_server::lab::ManualClock;
use hookgate_server::{Clock, SystemClock};
use hookgate_tests::receiver::Receiver;
use hookgate_tests::resolvers::RebindingResolver;
use hookgate_tests::verify::official_verifier_accepts;
use hookgate_tests::{ApiRequest, TestGateway, is_final, test_config};
use http::Method;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

async fn strict_gateway(allow: &[&str], options: RunOptions) -> TestGateway {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    config.allow_private_subnets = allow.iter().map(|c| c.parse().unwrap()).collect();
    TestGateway::start_with(config, dir, options).await
}

#[tokio::test]
async fn non_global_targets_are_blocked_at_creation_unless_allowed() {
    let urls = [
        "http://127.0.0.1/",
        "http://127.1/",
        "http://2130706433/",
        "http://0.0.0.0/",
        "http://10.0.0.1/",
        "http://100.64.0.1/",
        "http://169.254.169.254/latest",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://localhost/",
    ];
    let gw = strict_gateway(&[], RunOptions::default()).await;
    let key = gw.tenant("acme").await;
    for url in urls {
        let (s, b) = gw
            .call(
                "POST",
                "/v1/tenants/acme/endpoints",
                Some(&key),
                Some(json!({"url": url})),
            )
            .await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (422, Some("url_blocked")),
            "{url}: {b}"
        );
    }
    let allow = [
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "::1/128",
    ];
    let gw = strict_gateway(&allow, RunOptions::default()).await;
    let key = gw.tenant("acme").await;
    for url in urls {
        let (s, b) = gw
            .call(
                "POST",
                "/v1/tenants/acme/endpoints",
                Some(&key),
                Some(json!({"url": url})),
            )
            .await;
        assert_eq!(s, 201, "{url}: {b}");
    }
}

#[tokio::test]
async fn dns_rebinding_is_refused_at_connect_time() {
    let rx = Receiver::start(Vec::new()).await;
    let loopback = [127, 0, 0, 1].into();
    let resolver = Arc::new(RebindingResolver::new(rx.addr.port(), loopback));
    let options = RunOptions {
        resolver: Some(resolver.clone()),
        ..Default::default()
    };
    let gw = strict_gateway(&[], options).await;
    let url = format!("http://rebind.example:{}/hook", rx.addr.port());
    let (key, _, dlv) = gw.one_delivery(&url, json!({})).await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("blocked_address")),
        "{d}"
    );
    assert_eq!(d["attempt_log"][0]["error_kind"], "blocked_address");
    assert!(
        resolver.calls() >= 2,
        "resolved at creation and again at connect time"
    );
    assert!(
        rx.received().is_empty(),
        "no connection reached the loopback receiver"
    );
}

#[tokio::test]
async fn rotated_secrets_sign_together_for_24_hours_then_only_the_new_one() {
    let clock = ManualClock::new(SystemClock.now_ms());
    let options = RunOptions {
        clock: Some(clock.clone()),
        ..Default::default()
    };
    let gw = TestGateway::start_with_options(options).await;
    let rx = Receiver::start(Vec::new()).await;
    let key = gw.tenant("acme").await;
    let ep = gw.endpoint("acme", &key, json!({"url": rx.url()})).await;
    let old = ep["secret"].as_str().unwrap().to_owned();
    let path = format!(
        "/v1/tenants/acme/endpoints/{}/rotate-secret",
        ep["id"].as_str().unwrap()
    );
    let (s, rotated) = gw.call("POST", &path, Some(&key), None).await;
    assert_eq!(s, 200);
    let new = rotated["secret"].as_str().unwrap().to_owned();

    gw.event("acme", &key, "a", json!({"n": 1})).await;
    let during = rx.wait_for(1, WAIT).await[0].clone();
    assert_eq!(
        during
            .header("webhook-signature")
            .unwrap()
            .split(' ')
            .count(),
        2
    );
    let now_s = || Some(clock.now_ms() / 1000);
    assert!(
        official_verifier_accepts(&old, &during, now_s()),
        "the old secret verifies during the grace period"
    );
    assert!(
        official_verifier_accepts(&new, &during, now_s()),
        "the new secret verifies during the grace period"
    );

    clock.advance(Duration::from_secs(24 * 3600 + 1));
    gw.event("acme", &key, "a", json!({"n": 2})).await;
    let after = rx.wait_for(2, WAIT).await[1].clone();
    assert!(official_verifier_accepts(&new, &after, now_s()));
    assert!(
        !official_verifier_accepts(&old, &after, now_s()),
        "the old secret stopped signing after 24 h"
    );

    // Tenant-chosen secrets must decode to 24-64 bytes.
    let short = format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode([7u8; 16])
    );
    let good = format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode([7u8; 32])
    );
    let (s, b) = gw
        .call("POST", &path, Some(&key), Some(json!({"secret": short})))
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("secret")),
        "{b}"
    );
    let body = json!({"url": rx.url(), "secret": good});
    let (s, b) = gw
        .call("POST", "/v1/tenants/acme/endpoints", Some(&key), Some(body))
        .await;
    assert_eq!((s, b["secret"].as_str()), (201, Some(good.as_str())));
}

#[tokio::test]
async fn every_limit_has_its_documented_status() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    (
        config.limits.endpoints_per_tenant,
        config.limits.event_types_per_endpoint,
    ) = (2, 3);
    (
        config.limits.url_len,
        config.limits.event_type_len,
        config.limits.max_headers,
    ) = (64, 16, 20);
    config.limits.json_body_bytes = 4096;
    config.limits.max_connections = 4;
    let gw = TestGateway::start_with(config, dir, Default::default()).await;
    let key = gw.tenant("acme").await;
    let eps = "/v1/tenants/acme/endpoints";
    let long_url = format!("http://127.0.0.1:9/{}", "a".repeat(64));
    let cases = [
        (json!({"url": long_url}), 422, "url"),
        (
            json!({"url": "http://127.0.0.1:9/", "event_types": ["a", "b", "c", "d"]}),
            422,
            "event_types",
        ),
    ];
    for (body, status, field) in cases {
        let (s, b) = gw.call("POST", eps, Some(&key), Some(body)).await;
        assert_eq!(
            (s, b["error"]["field"].as_str()),
            (status, Some(field)),
            "{b}"
        );
    }
    gw.endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/"}))
        .await;
    gw.endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/"}))
        .await;
    let (s, b) = gw
        .call(
            "POST",
            eps,
            Some(&key),
            Some(json!({"url": "http://127.0.0.1:9/"})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (422, Some("endpoints")),
        "endpoints per tenant: {b}"
    );
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/events",
            Some(&key),
            Some(json!({"event_type": "a".repeat(17), "payload": {}})),
        )
        .await;
    assert_eq!((s, b["error"]["field"].as_str()), (422, Some("event_type")));
    let big = json!({"event_type": "a", "payload": "x".repeat(5000)});
    assert_eq!(
        gw.call("POST", "/v1/tenants/acme/events", Some(&key), Some(big))
            .await
            .0,
        413
    );

    // Header count and size: 431 from the HTTP layer.
    let mut req = ApiRequest::path(Method::GET, "/healthz");
    for i in 0..30 {
        req = req.header(&format!("x-h{i}"), Some("v"));
    }
    assert_eq!(gw.exchange(req).await.status, 431);
    let huge = "v".repeat(40 * 1024);
    let req = ApiRequest::path(Method::GET, "/healthz").header("x-big", Some(&huge));
    assert_eq!(gw.exchange(req).await.status, 431);

    // Connections beyond the cap get a 503 and are closed.
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(tokio::net::TcpStream::connect(gw.addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut extra = tokio::net::TcpStream::connect(gw.addr).await.unwrap();
    let mut answer = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut extra, &mut answer)
        .await
        .unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 503") && answer.contains("too_many_connections"),
        "{answer}"
    );
    drop(held);
}

#[tokio::test]
async fn hostile_input_never_causes_a_5xx() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let bodies: Vec<Vec<u8>> = vec![
        format!(r#"{{"event_type":"a","payload":{deep}}}"#).into_bytes(),
        br#"{"url":"http://127.0.0.1:9/","timeout_ms":1e400}"#.to_vec(),
        br#"{"url":"http://127.0.0.1:9/","timeout_ms":123456789012345678901234567890}"#.to_vec(),
        br#"{"url":"http://127.0.0.1:9/","max_in_flight":-1}"#.to_vec(),
        b"{\"url\":\"http://127.0.0.1:9/\xff\xfe\"}".to_vec(),
        b"\xff\xfe\xfd".to_vec(),
        br#"{"url":"http://127.0.0.1:9/","policy":{"base_ms":-5,"factor":1e308,"schedule_ms":[1e30]}}"#.to_vec(),
        br#"{"url":"http://127.0.0.1:9/","policy":[[[[[]]]]]}"#.to_vec(),
        br#"{"event_type":"a","payload":{"n":123456789012345678901234567890123456789}}"#.to_vec(),
        b"".to_vec(),
        b"null".to_vec(),
    ];
    for path in [
        "/v1/tenants/acme/endpoints",
        "/v1/tenants/acme/events",
        "/v1/tenants",
    ] {
        for body in &bodies {
            let (s, b) = gw.call_raw("POST", path, &key, body.clone(), &[]).await;
            assert!(
                s < 500,
                "{path} answered {s} to {:?}: {b}",
                String::from_utf8_lossy(&body[..body.len().min(60)])
            );
        }
    }
    for q in [
        "limit=-5",
        "limit=99999999999999999999",
        "since=%FF",
        "state=%00",
    ] {
        let (s, _) = gw
            .call(
                "GET",
                &format!("/v1/tenants/acme/deliveries?{q}"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(s, 400, "{q}");
    }
    // A control character names no delivery (tenant fairness, item 3).
    let (s, b) = gw
        .call(
            "GET",
            "/v1/tenants/acme/deliveries?cursor=%00%01",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (400, Some("cursor")),
        "{b}"
    );
    let (s, _) = gw
        .call(
            "GET",
            "/v1/tenants/acme/deliveries?cursor=dlv_no-such-one",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(s, 200, "an unknown cursor is just an empty page");
    assert_eq!(
        gw.call("GET", "/healthz", None, None).await.0,
        200,
        "still serving"
    );
}
