//! Operator events (issue 40, item 2), on both backends and, on PostgreSQL,
//! in a two-node cluster whose nodes share the work: each event type arrives
//! at the admin's operator endpoint exactly once, a tenant's operator endpoint
//! hears only that tenant's events, every request verifies with the official
//! `standardwebhooks` library, and `alerts.url` keeps working beside them.

use std::collections::BTreeMap;
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::verify::verify_with_official_library;
use hookgate_tests::{ADMIN, Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    every_operator_event_arrives_once_and_only_where_it_belongs,
    a_disabled_plugin_is_told_once,
    alerts_reach_alerts_url_and_the_tenants_operator_endpoint,
}

const WAIT: Duration = Duration::from_secs(40);
/// Long enough for a duplicate, had one been queued, to arrive too.
const SETTLE: Duration = Duration::from_millis(1_500);

/// One gateway on sled; two sharing the database on PostgreSQL. `tune`
/// changes the config of each.
async fn nodes(backend: Backend, tune: impl Fn(&mut hookgate_server::Config)) -> Vec<TestGateway> {
    let mut bed = backend.bed().await;
    tune(&mut bed.config);
    let other = bed.another_node();
    let mut gws = vec![TestGateway::start_bed(bed, RunOptions::default()).await];
    if let Some(other) = other {
        gws.push(TestGateway::start_bed(other, RunOptions::default()).await);
    }
    gws
}

/// Adds an operator endpoint at `path` listening for `types`; returns its secret.
async fn operator_endpoint(
    gw: &TestGateway,
    path: &str,
    key: &str,
    url: &str,
    types: Value,
) -> String {
    let body = json!({"url": url, "event_types": types, "description": "on-call"});
    let (s, b) = gw.call("POST", path, Some(key), Some(body)).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["event_types"], types, "{b}");
    b["secret"].as_str().unwrap().to_owned()
}

/// Each request's `(type, subject)` and body, in arrival order; the subject
/// is the delivery, else the plugin, else the endpoint it is about.
fn told(rx: &Receiver) -> Vec<((String, String), Value)> {
    rx.received()
        .iter()
        .map(|r| {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            let data = &body["data"];
            let subject = ["delivery_id", "plugin", "endpoint_id"]
                .iter()
                .find_map(|k| data[*k].as_str())
                .unwrap_or_default()
                .to_owned();
            let kind = body["type"].as_str().unwrap().to_owned();
            ((kind, subject), body)
        })
        .collect()
}

/// Waits until `rx` has heard every one of `want`, then a little longer;
/// answers how often it heard each `(type, subject)`.
async fn heard(rx: &Receiver, want: &[(String, String)]) -> BTreeMap<(String, String), usize> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let got: Vec<_> = told(rx).into_iter().map(|(k, _)| k).collect();
        if want.iter().all(|w| got.contains(w)) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still missing {:?}; heard {got:?}",
            want.iter().filter(|w| !got.contains(w)).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(SETTLE).await;
    let mut counts = BTreeMap::new();
    for (k, _) in told(rx) {
        *counts.entry(k).or_insert(0) += 1;
    }
    counts
}

fn pair(kind: &str, subject: &Value) -> (String, String) {
    (kind.to_owned(), subject.as_str().unwrap().to_owned())
}

/// Sends one event to the endpoint and waits for its delivery to end.
async fn delivered(gw: &TestGateway, tenant: &str, key: &str) -> Value {
    let ev = gw.event(tenant, key, "order.paid", json!({"n": 1})).await;
    let id = ev["deliveries"][0]["id"].as_str().unwrap().to_owned();
    gw.wait_delivery(tenant, key, &id, WAIT, is_final).await
}

async fn every_operator_event_arrives_once_and_only_where_it_belongs(backend: Backend) {
    let gws = nodes(backend, |c| {
        c.breaker.failure_threshold = 3;
        c.breaker.cooldowns = vec![300];
        // One period for the whole test: a rule two nodes fire is told once.
        c.alerts.cooldown = 30 * 24 * 3_600_000;
    })
    .await;
    let at = |i: usize| &gws[i % gws.len()];
    let (admin_rx, acme_rx, beta_rx) = (
        Receiver::start(Vec::new()).await,
        Receiver::start(Vec::new()).await,
        Receiver::start(Vec::new()).await,
    );
    let acme = at(0).tenant("acme").await;
    let beta = at(1).tenant("beta").await;
    let ops = "/v1/operator-endpoints";
    operator_endpoint(at(0), ops, ADMIN, &admin_rx.url(), json!(["*"])).await;
    let acme_ops = "/v1/tenants/acme/operator-endpoints";
    let acme_secret = operator_endpoint(at(1), acme_ops, &acme, &acme_rx.url(), json!(["*"])).await;
    let beta_ops = "/v1/tenants/beta/operator-endpoints";
    let types = json!(["endpoint.*", "delivery.*", "breaker.*", "alert.*"]);
    operator_endpoint(at(0), beta_ops, &beta, &beta_rx.url(), types).await;

    // Who may do what, and names that are no operator event type.
    let (s, b) = at(0).call("GET", ops, Some(&acme), None).await;
    assert_eq!((s, &b["error"]["code"]), (403, &json!("forbidden")), "{b}");
    let bad = json!({"url": acme_rx.url(), "event_types": ["order.paid"]});
    let (s, b) = at(0).call("POST", acme_ops, Some(&acme), Some(bad)).await;
    assert_eq!(
        (s, &b["error"]["field"]),
        (422, &json!("event_types[0]")),
        "{b}"
    );
    let (s, b) = at(1).call("GET", beta_ops, Some(&acme), None).await;
    assert_eq!(s, 404, "another tenant's operator endpoints: {b}");
    let (s, b) = at(1).call("GET", acme_ops, Some(&acme), None).await;
    assert_eq!(
        (s, b["data"].as_array().map(Vec::len)),
        (200, Some(1)),
        "{b}"
    );

    // acme: an endpoint that fails four times (its breaker opens), then
    // recovers (it closes); one that answers 400 (its delivery is dead).
    let policy = json!({"strategy": "fixed", "base_ms": 100, "jitter": "none", "max_attempts": 10});
    let flaky = Receiver::start(vec![Reply::status(503); 4]).await;
    let e1 = at(0)
        .endpoint("acme", &acme, json!({"url": flaky.url(), "policy": policy}))
        .await;
    let path = format!("/v1/tenants/acme/endpoints/{}", e1["id"].as_str().unwrap());
    let (s, b) = at(1)
        .call(
            "PATCH",
            &path,
            Some(&acme),
            Some(json!({"description": "orders"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let d1 = delivered(at(1), "acme", &acme).await;
    assert_eq!(
        (d1["state"].as_str(), d1["attempts"].as_u64()),
        (Some("succeeded"), Some(5)),
        "{d1}"
    );
    let refusing = Receiver::start(vec![Reply::status(400)]).await;
    let e2 = at(1)
        .endpoint(
            "acme",
            &acme,
            json!({"url": refusing.url(), "event_types": ["invoice.*"]}),
        )
        .await;
    let ev = at(0).event("acme", &acme, "invoice.sent", json!({})).await;
    let d2_id = ev["deliveries"][0]["id"].as_str().unwrap().to_owned();
    let d2 = at(0)
        .wait_delivery("acme", &acme, &d2_id, WAIT, is_final)
        .await;
    assert_eq!(d2["state"], "dead", "{d2}");

    // beta: an endpoint a 410 disables; one disabled by hand, then deleted.
    let gone = Receiver::start(vec![Reply::status(410)]).await;
    let e3 = at(1)
        .endpoint("beta", &beta, json!({"url": gone.url()}))
        .await;
    let d3 = delivered(at(0), "beta", &beta).await;
    assert_eq!(d3["state"], "dead", "{d3}");
    let spare = Receiver::start(Vec::new()).await;
    let e4 = at(0)
        .endpoint(
            "beta",
            &beta,
            json!({"url": spare.url(), "event_types": ["none.*"]}),
        )
        .await;
    let path = format!("/v1/tenants/beta/endpoints/{}", e4["id"].as_str().unwrap());
    let (s, b) = at(1)
        .call("PATCH", &path, Some(&beta), Some(json!({"disabled": true})))
        .await;
    assert_eq!((s, &b["disabled"]), (200, &json!(true)), "{b}");
    let (s, b) = at(0).call("DELETE", &path, Some(&beta), None).await;
    assert_eq!(s, 204, "{b}");

    let acme_want = vec![
        pair("endpoint.created", &e1["id"]),
        pair("endpoint.updated", &e1["id"]),
        pair("breaker.opened", &e1["id"]),
        pair("breaker.closed", &e1["id"]),
        pair("delivery.failing", &d1["id"]),
        pair("delivery.recovered", &d1["id"]),
        pair("endpoint.created", &e2["id"]),
        pair("delivery.exhausted", &d2["id"]),
        pair("alert.fired", &e2["id"]),
    ];
    let beta_want = vec![
        pair("endpoint.created", &e3["id"]),
        pair("endpoint.disabled", &e3["id"]),
        pair("delivery.exhausted", &d3["id"]),
        pair("endpoint.created", &e4["id"]),
        pair("endpoint.updated", &e4["id"]),
        pair("endpoint.disabled", &e4["id"]),
        pair("endpoint.deleted", &e4["id"]),
    ];
    let all: Vec<_> = acme_want.iter().chain(&beta_want).cloned().collect();
    for (rx, want, tenant) in [
        (&admin_rx, &all, None),
        (&acme_rx, &acme_want, Some("acme")),
        (&beta_rx, &beta_want, Some("beta")),
    ] {
        let counts = heard(rx, want).await;
        let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "told more than once: {twice:?}");
        for (_, body) in told(rx) {
            let data = &body["data"];
            if let Some(t) = tenant {
                assert_eq!(data["tenant_id"], t, "a tenant hears only its own: {body}");
            }
            assert!(body["timestamp"].as_str().unwrap().ends_with('Z'), "{body}");
        }
    }
    // Every event type the tenants made reached the admin's endpoint.
    let kinds: std::collections::BTreeSet<String> =
        told(&admin_rx).into_iter().map(|((k, _), _)| k).collect();
    for k in [
        "endpoint.created",
        "endpoint.updated",
        "endpoint.deleted",
        "endpoint.disabled",
        "delivery.failing",
        "delivery.exhausted",
        "delivery.recovered",
        "breaker.opened",
        "breaker.closed",
        "alert.fired",
    ] {
        assert!(kinds.contains(k), "{k} missing from {kinds:?}");
    }
    verify_with_official_library(&acme_secret, &acme_rx.received());
    // Operator deliveries make no operator events of their own, and the
    // tenants' endpoint lists do not show operator endpoints.
    let (_, list) = at(0)
        .call("GET", "/v1/tenants/acme/endpoints", Some(&acme), None)
        .await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(2), "{list}");
}

async fn a_disabled_plugin_is_told_once(backend: Backend) {
    let gws = nodes(backend, |c| c.breaker.failure_threshold = 1_000).await;
    let at = |i: usize| &gws[i % gws.len()];
    let key = at(0).tenant("acme").await;
    let rx = Receiver::start(Vec::new()).await;
    let path = "/v1/tenants/acme/operator-endpoints";
    let secret = operator_endpoint(at(1), path, &key, &rx.url(), json!(["plugin.disabled"])).await;
    let teapot = hookgate_tests::fixture_module("teapot");
    let (s, b) = at(0).upload_plugin("acme", &key, "teapot", teapot).await;
    assert_eq!(s, 201, "{b}");
    // Enough failing decisions for one node's host to disable it, wherever
    // the attempts run.
    let teapots = Receiver::start(vec![Reply::status(418); 60]).await;
    let policy = json!({"strategy": "fixed", "base_ms": 10, "jitter": "none", "max_attempts": 45, "retry_on": ["418"]});
    // On the node that loaded it: the other loads it a moment later.
    at(0)
        .endpoint(
            "acme",
            &key,
            json!({"url": teapots.url(), "plugin": "teapot", "policy": policy}),
        )
        .await;
    let d = delivered(at(0), "acme", &key).await;
    assert_eq!(d["state"], "dead", "{d}");
    let counts = heard(&rx, &[("plugin.disabled".to_owned(), "teapot".to_owned())]).await;
    assert_eq!(counts.len(), 1, "only what it listens for: {counts:?}");
    assert_eq!(counts.values().sum::<usize>(), 1, "told once: {counts:?}");
    let (_, body) = told(&rx).remove(0);
    assert_eq!(
        (&body["data"]["version"], &body["data"]["tenant_id"]),
        (&json!(1), &json!("acme"))
    );
    verify_with_official_library(&secret, &rx.received());
}

async fn alerts_reach_alerts_url_and_the_tenants_operator_endpoint(backend: Backend) {
    let alerts_rx = Receiver::start(Vec::new()).await;
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let mut bed = backend.bed().await;
    bed.config.alerts.url = Some(alerts_rx.url());
    bed.config.alerts.secret = Some(secret.to_owned());
    bed.config.alerts.consecutive_failures = 3;
    let gw = TestGateway::start_bed(bed, RunOptions::default()).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start(Vec::new()).await;
    let path = "/v1/tenants/acme/operator-endpoints";
    let tenant_secret = operator_endpoint(&gw, path, &key, &rx.url(), json!(["alert.*"])).await;
    // The config's endpoint is not the admin's to list or change.
    let (_, list) = gw
        .call("GET", "/v1/operator-endpoints", Some(ADMIN), None)
        .await;
    assert_eq!(list["data"], json!([]), "{list}");
    let failing = Receiver::start(vec![Reply::status(503); 4]).await;
    let policy = json!({"strategy": "fixed", "base_ms": 50, "jitter": "none", "max_attempts": 10});
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": failing.url(), "policy": policy}),
        )
        .await;
    let d = delivered(&gw, "acme", &key).await;
    assert_eq!(d["state"], "succeeded", "{d}");
    let want = [
        pair("alert.fired", &ep["id"]),
        pair("alert.resolved", &ep["id"]),
    ];
    for (receiver, secret) in [(&alerts_rx, secret), (&rx, tenant_secret.as_str())] {
        let counts = heard(receiver, &want).await;
        assert_eq!(
            counts.values().sum::<usize>(),
            2,
            "one incident, one resolution: {counts:?}"
        );
        let (_, fired) = told(receiver).remove(0);
        assert_eq!(
            (
                &fired["data"]["rule"],
                &fired["data"]["state"],
                &fired["data"]["tenant_id"]
            ),
            (&json!("endpoint_failing"), &json!("fired"), &json!("acme")),
            "{fired}"
        );
        verify_with_official_library(secret, &receiver.received());
    }
}
