//! Portal sessions (issue 41, item 1), on both backends: every operation of the
//! OpenAPI document, called with sessions that each lack one capability, is
//! refused (403 naming the capability) exactly where the table below says it
//! needs that capability, and reached with every capability, except the
//! platform's own and the admin's; a session expires on the gateway's clock and
//! a revocation, or a session's sign-out, holds on every node of a cluster at
//! once; the minted URL
//! carries the token only in its fragment; bad input is a 4xx naming the field.

use std::collections::BTreeMap;
use std::time::Duration;

use hookgate_server::lab::ManualClock;
use hookgate_server::{Clock, RunOptions, SystemClock};
use hookgate_tests::{ADMIN, Backend, TestGateway};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    every_route_asks_for_its_capability,
    a_session_expires_on_the_gateways_clock,
    a_revocation_holds_on_every_node_at_once,
    bad_sessions_are_refused_with_the_field_named,
    a_tenant_has_its_own_embed_origins_and_theme,
}

const CAPS: [&str; 5] = [
    "view",
    "manage_endpoints",
    "read_secrets",
    "replay",
    "manage_plugins",
];

/// What each operation a tenant key reaches asks of a portal session: its
/// capabilities, or `None` for the platform's own.
fn table() -> BTreeMap<&'static str, Option<Vec<&'static str>>> {
    let mut t = BTreeMap::new();
    let view = [
        "get_tenant_stats",
        "get_tenant_stats_history",
        "simulate_policy",
        "get_tenant",
        "list_tasks",
        "get_task",
        "list_endpoints",
        "get_endpoint",
        "get_endpoint_stats",
        "list_event_types",
        "get_event_type",
        "list_tenant_operator_endpoints",
        "get_tenant_operator_endpoint",
        "get_event",
        "list_events",
        "list_deliveries",
        "get_delivery",
        "list_attempts",
        "get_attempt",
        "get_tenant_dlq_summary",
        "list_plugins",
        "get_plugin",
    ];
    let manage = [
        "create_endpoint",
        "update_endpoint",
        "put_endpoint",
        "delete_endpoint",
        "reset_endpoint_breaker",
        "send_endpoint_example",
        "create_tenant_operator_endpoint",
        "update_tenant_operator_endpoint",
        "delete_tenant_operator_endpoint",
    ];
    let replay = [
        "recover_endpoint",
        "replay_missing",
        "replay_delivery",
        "replay_dead_deliveries",
    ];
    let plugins = ["upload_plugin", "delete_plugin", "rollback_plugin"];
    for (ops, cap) in [
        (&view[..], "view"),
        (&manage[..], "manage_endpoints"),
        (&replay[..], "replay"),
        (&plugins[..], "manage_plugins"),
    ] {
        for op in ops {
            t.insert(*op, Some(vec![cap]));
        }
    }
    t.insert("get_endpoint_secrets", Some(vec!["read_secrets"]));
    t.insert(
        "rotate_endpoint_secret",
        Some(vec!["manage_endpoints", "read_secrets"]),
    );
    t.insert("get_portal_session", Some(vec![]));
    t.insert("end_portal_session", Some(vec![]));
    for op in [
        "rotate_tenant_key",
        "ingest_event",
        "expunge_event_payload",
        "create_portal_session",
        "revoke_portal_sessions",
    ] {
        t.insert(op, None);
    }
    t
}

/// Mints a session of tenant `t` with `caps`; answers the whole answer.
async fn mint(gw: &TestGateway, t: &str, key: &str, body: Value) -> Value {
    let path = format!("/v1/tenants/{t}/portal-sessions");
    let (s, b) = gw.call("POST", &path, Some(key), Some(body)).await;
    assert_eq!(s, 201, "{b}");
    b
}

fn token(session: &Value) -> String {
    session["token"].as_str().unwrap().to_owned()
}

/// `template` with its parameters filled with names that exist nowhere, so a
/// call that is let through changes nothing.
fn fill(template: &str) -> String {
    template
        .replace("{t}", "acme")
        .replace("{id}", "nope")
        .replace("{name}", "nope")
}

async fn every_route_asks_for_its_capability(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let all = token(&mint(&gw, "acme", &key, json!({"capabilities": CAPS})).await);
    let mut lacking = BTreeMap::new();
    for cap in CAPS {
        let others: Vec<&str> = CAPS.iter().copied().filter(|c| *c != cap).collect();
        lacking.insert(
            cap,
            token(&mint(&gw, "acme", &key, json!({"capabilities": others})).await),
        );
    }
    let table = table();
    let doc: Value = serde_json::from_str(&hookgate_server::openapi_document()).unwrap();
    let mut checked = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let id = op["operationId"].as_str().unwrap();
            if ["healthz", "metrics", "get_openapi"].contains(&id) {
                continue; // public: no token at all
            }
            if id == "end_portal_session" {
                continue; // it ends the session calling it: a_revocation_holds_on_every_node_at_once
            }
            let method = method.to_uppercase();
            let path = fill(template);
            let body = (method != "GET" && method != "DELETE").then(|| json!({}));
            let call = |token: String| {
                let (method, path, body) = (method.clone(), path.clone(), body.clone());
                let gw = &gw;
                async move { gw.call(&method, &path, Some(&token), body).await }
            };
            match table.get(id) {
                // The admin's, or the platform's own: refused even with everything.
                None | Some(None) => {
                    let (s, b) = call(all.clone()).await;
                    assert_eq!(s, 403, "{method} {path} ({id}): {b}");
                }
                Some(Some(needs)) => {
                    let (s, b) = call(all.clone()).await;
                    assert!(
                        s != 401 && s != 403,
                        "{method} {path} ({id}) with every capability: {s} {b}"
                    );
                    for cap in CAPS {
                        let (s, b) = call(lacking[cap].clone()).await;
                        if needs.contains(&cap) {
                            assert_eq!(s, 403, "{method} {path} ({id}) without {cap}: {b}");
                            let message = b["error"]["message"].as_str().unwrap();
                            assert!(message.contains(cap), "{id}: {message}");
                        } else {
                            assert!(
                                s != 401 && s != 403,
                                "{method} {path} ({id}) without {cap}: {s} {b}"
                            );
                        }
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} operations were checked");
    // Every row of the table is an operation of the document.
    let ids: Vec<String> = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .map(|op| op["operationId"].as_str().unwrap().to_owned())
        .collect();
    for id in table.keys() {
        assert!(ids.iter().any(|i| i == id), "{id} is in no path");
    }
    // Creating an endpoint answers its secret only to a session that may read it.
    let body = json!({"url": "http://127.0.0.1:9/hook"});
    let (s, ep) = gw
        .call(
            "POST",
            "/v1/tenants/acme/endpoints",
            Some(&lacking["read_secrets"]),
            Some(body.clone()),
        )
        .await;
    assert_eq!((s, ep.get("secret")), (201, None), "{ep}");
    let (s, ep) = gw
        .call("POST", "/v1/tenants/acme/endpoints", Some(&all), Some(body))
        .await;
    assert!(
        s == 201 && ep["secret"].as_str().unwrap().starts_with("whsec_"),
        "{ep}"
    );
    // A session is its tenant's only.
    gw.tenant("other").await;
    let (s, b) = gw
        .call("GET", "/v1/tenants/other/endpoints", Some(&all), None)
        .await;
    assert_eq!(s, 404, "{b}");
}

async fn a_session_expires_on_the_gateways_clock(backend: Backend) {
    let clock = ManualClock::new(SystemClock.now_ms());
    let mut bed = backend.bed().await;
    bed.config.console.public_url = Some("https://hooks.example.com/console/".into());
    let options = RunOptions {
        clock: Some(clock.clone()),
        ..Default::default()
    };
    let gw = TestGateway::start_bed(bed, options).await;
    let key = gw.tenant("acme").await;
    let session = mint(&gw, "acme", &key, json!({"expires_in_s": 300})).await;
    let t = token(&session);
    assert!(t.starts_with("hgp_"), "{session}");
    assert_eq!(
        session["url"].as_str().unwrap(),
        format!("https://hooks.example.com/console/?tenant=acme#portal={t}"),
        "the token only in the fragment, which no server is sent"
    );
    assert_eq!(
        session["capabilities"],
        json!(["view"]),
        "view unless asked"
    );
    let (s, me) = gw.call("GET", "/v1/portal-session", Some(&t), None).await;
    assert_eq!((s, &me["tenant_id"]), (200, &json!("acme")), "{me}");
    assert!(me.get("token").is_none(), "shown once: {me}");
    clock.advance(Duration::from_secs(299));
    let (s, b) = gw
        .call("GET", "/v1/tenants/acme/endpoints", Some(&t), None)
        .await;
    assert_eq!(s, 200, "{b}");
    clock.advance(Duration::from_secs(2));
    let (s, b) = gw
        .call("GET", "/v1/tenants/acme/endpoints", Some(&t), None)
        .await;
    assert_eq!(
        (s, &b["error"]["code"]),
        (401, &json!("unauthorized")),
        "{b}"
    );
    assert!(
        b["error"]["message"].as_str().unwrap().contains("expired"),
        "{b}"
    );
    // A key or the admin token holds no session.
    let (s, b) = gw.call("GET", "/v1/portal-session", Some(&key), None).await;
    assert_eq!(s, 404, "{b}");
}

async fn a_revocation_holds_on_every_node_at_once(backend: Backend) {
    let bed = backend.bed().await;
    let other = bed.another_node();
    let a = TestGateway::start_bed(bed, RunOptions::default()).await;
    let b = match other {
        Some(o) => Some(TestGateway::start_bed(o, RunOptions::default()).await),
        None => None,
    };
    let b = b.as_ref().unwrap_or(&a);
    let key = a.tenant("acme").await;
    let beta = a.tenant("beta").await;
    let first = token(&mint(&a, "acme", &key, json!({})).await);
    let second = token(
        &mint(
            b,
            "acme",
            ADMIN,
            json!({"capabilities": ["view", "replay"]}),
        )
        .await,
    );
    let theirs = token(&mint(&a, "beta", &beta, json!({})).await);
    for t in [&first, &second] {
        let (s, body) = b
            .call("GET", "/v1/tenants/acme/deliveries", Some(t), None)
            .await;
        assert_eq!(s, 200, "{body}");
    }
    // A portal session cannot mint or revoke sessions.
    let path = "/v1/tenants/acme/portal-sessions";
    let (s, body) = b.call("DELETE", path, Some(&first), None).await;
    assert_eq!(s, 403, "{body}");
    let (s, body) = a.call("DELETE", path, Some(&key), None).await;
    assert_eq!((s, &body["revoked"]), (200, &json!(2)), "{body}");
    // The other node refuses both at once: it reads the session on each request.
    for t in [&first, &second] {
        let (s, body) = b
            .call("GET", "/v1/tenants/acme/deliveries", Some(t), None)
            .await;
        assert_eq!(s, 401, "{body}");
    }
    let (s, body) = b
        .call("GET", "/v1/tenants/beta/deliveries", Some(&theirs), None)
        .await;
    assert_eq!(s, 200, "another tenant's sessions stay: {body}");
    // A session signs itself out; the other node refuses it at once, and a
    // key has no session to end.
    let (s, body) = a
        .call("DELETE", "/v1/portal-session", Some(&theirs), None)
        .await;
    assert_eq!(s, 204, "{body}");
    let (s, body) = b
        .call("GET", "/v1/tenants/beta/deliveries", Some(&theirs), None)
        .await;
    assert_eq!(s, 401, "a signed-out session: {body}");
    let (s, body) = a
        .call("DELETE", "/v1/portal-session", Some(&beta), None)
        .await;
    assert_eq!(s, 404, "{body}");
}

async fn bad_sessions_are_refused_with_the_field_named(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let path = "/v1/tenants/acme/portal-sessions";
    for (body, status, field) in [
        (json!({"expires_in_s": 10}), 422, "expires_in_s"),
        (json!({"expires_in_s": 8 * 24 * 3600}), 422, "expires_in_s"),
        (
            json!({"theme": {"accent_color": "red"}}),
            422,
            "theme.accent_color",
        ),
        (json!({"theme": {"mode": "neon"}}), 422, "theme.mode"),
        (
            json!({"theme": {"logo_url": "https://cdn.example.com/logo.png"}}),
            422,
            "theme.logo_url",
        ),
        (
            json!({"theme": {"product_name": "x".repeat(101)}}),
            422,
            "theme.product_name",
        ),
    ] {
        let (s, b) = gw.call("POST", path, Some(&key), Some(body.clone())).await;
        assert_eq!(
            (s, b["error"]["field"].as_str()),
            (status, Some(field)),
            "{body}: {b}"
        );
    }
    let (s, b) = gw
        .call(
            "POST",
            path,
            Some(&key),
            Some(json!({"capabilities": ["root"]})),
        )
        .await;
    assert_eq!(s, 400, "an unknown capability: {b}");
    assert!(
        b["error"]["message"].as_str().unwrap().contains("root"),
        "{b}"
    );
    let themed = json!({"theme": {"product_name": "Acme Webhooks", "accent_color": "#0a7cff",
        "mode": "dark", "logo_url": "data:image/png;base64,iVBORw0KGgo="}});
    let session = mint(&gw, "acme", &key, themed.clone()).await;
    let (_, me) = gw
        .call("GET", "/v1/portal-session", Some(&token(&session)), None)
        .await;
    assert_eq!(me["theme"], themed["theme"], "{me}");
    let (s, b) = gw
        .call(
            "GET",
            "/v1/tenants/acme/endpoints",
            Some("hgp_forged"),
            None,
        )
        .await;
    assert_eq!(s, 401, "{b}");
}

/// The `Content-Security-Policy` and `X-Frame-Options` of the console page at `path`.
async fn framing(gw: &TestGateway, path: &str) -> (String, Option<String>) {
    let answer = gw
        .exchange(hookgate_tests::ApiRequest::path(http::Method::GET, path))
        .await;
    assert_eq!(answer.status, 200, "{path}");
    let header = |name: &str| {
        answer
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    (
        header("content-security-policy").unwrap(),
        header("x-frame-options"),
    )
}

async fn a_tenant_has_its_own_embed_origins_and_theme(backend: Backend) {
    let mut bed = backend.bed().await;
    bed.config.console.embed_origins = vec!["https://platform.example".into()];
    let gw = TestGateway::start_bed(bed, RunOptions::default()).await;
    let key = gw.tenant("acme").await;
    gw.tenant("beta").await;
    let portal = json!({"portal": {"embed_origins": ["https://app.acme.example"],
        "theme": {"product_name": "Acme Hooks", "accent_color": "#112233"}}});
    let (s, b) = gw
        .call(
            "PATCH",
            "/v1/tenants/acme",
            Some(ADMIN),
            Some(portal.clone()),
        )
        .await;
    assert_eq!((s, &b["portal"]), (200, &portal["portal"]), "{b}");
    // The page names the tenant's origins beside the config's, and only for it.
    let (csp, deny) = framing(&gw, "/console/?tenant=acme").await;
    assert!(
        csp.ends_with("frame-ancestors https://platform.example https://app.acme.example"),
        "{csp}"
    );
    assert_eq!(deny, None);
    for other in [
        "/console/?tenant=beta",
        "/console/",
        "/console/?tenant=nobody",
    ] {
        let (csp, _) = framing(&gw, other).await;
        assert!(
            csp.ends_with("frame-ancestors https://platform.example"),
            "{other}: {csp}"
        );
    }
    // A session starts from the tenant's theme; what it sets wins.
    let session = mint(
        &gw,
        "acme",
        &key,
        json!({"theme": {"mode": "dark", "accent_color": "#445566"}}),
    )
    .await;
    assert_eq!(
        session["theme"],
        json!({"product_name": "Acme Hooks", "accent_color": "#445566", "mode": "dark"})
    );
    assert!(
        session["url"]
            .as_str()
            .unwrap()
            .starts_with("/console/?tenant=acme#portal=hgp_")
    );
    // Bad settings are refused with the field named; a tenant cannot set them.
    for (body, field) in [
        (
            json!({"portal": {"embed_origins": ["https://a.example/path"]}}),
            "portal.embed_origins[0]",
        ),
        (
            json!({"portal": {"embed_origins": ["javascript:alert(1)"]}}),
            "portal.embed_origins[0]",
        ),
        (
            json!({"portal": {"theme": {"accent_color": "blue"}}}),
            "portal.theme.accent_color",
        ),
    ] {
        let (s, b) = gw
            .call("PATCH", "/v1/tenants/acme", Some(ADMIN), Some(body.clone()))
            .await;
        assert_eq!(
            (s, b["error"]["field"].as_str()),
            (422, Some(field)),
            "{body}: {b}"
        );
    }
    let (s, b) = gw
        .call("PATCH", "/v1/tenants/acme", Some(&key), Some(portal))
        .await;
    assert_eq!(s, 403, "{b}");
    // Removing them: the page is the config's again.
    let (s, b) = gw
        .call(
            "PATCH",
            "/v1/tenants/acme",
            Some(ADMIN),
            Some(json!({"portal": null})),
        )
        .await;
    assert_eq!(
        (s, &b["portal"]["embed_origins"]),
        (200, &Value::Null),
        "{b}"
    );
    let (csp, _) = framing(&gw, "/console/?tenant=acme").await;
    assert!(
        csp.ends_with("frame-ancestors https://platform.example"),
        "{csp}"
    );
}
