//! Issue 18, item 3, end to end: tenant A's plugin loops on `memory.fill` while
//! tenant B's well-behaved plugin decides B's retries at the same time. B's
//! attempt logs show its plugin deciding, never `fallback:pool_full`, and A's
//! plugin is disabled after its run of counted failures.
//!
//! In a real gateway the fuel budget is the production one, and wasmtime charges
//! `memory.fill` per byte, so here A's loop ends out of fuel rather than at the
//! epoch deadline; the host-level test (`policy::wasm::fairness_tests`) lifts
//! fuel to reach the deadline, where the pool's fair shares matter.

use std::sync::Arc;
use std::time::Duration;

use hookgate_server::PreloadPlugin;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{TestGateway, body_receiver, fixture_module, is_final, test_config};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);
const HOSTILE: &str = "alpha";
const WELL_BEHAVED: &str = "bravo";
/// Deliveries per tenant, all started together so their decisions overlap.
const DELIVERIES: usize = 5;

async fn gateway() -> TestGateway {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    // The breaker would pause A's endpoint after 20 failures; keep it out of the way.
    config.breaker.failure_threshold = 1_000;
    for (tenant, name) in [(HOSTILE, "fill_loop"), (WELL_BEHAVED, "tryagain")] {
        let path = dir.path().join(format!("{tenant}-{name}.wasm"));
        std::fs::write(&path, fixture_module(name)).unwrap();
        config.plugins.preload.push(PreloadPlugin {
            tenant: tenant.into(),
            name: name.into(),
            path,
        });
    }
    TestGateway::start_with(config, dir, hookgate_server::RunOptions::default()).await
}

/// Sends `DELIVERIES` events to a new endpoint of `tenant`; returns the delivery ids.
async fn deliveries(gw: &TestGateway, tenant: &str, key: &str, endpoint: Value) -> Vec<String> {
    gw.endpoint(tenant, key, endpoint).await;
    let mut ids = Vec::new();
    for n in 0..DELIVERIES {
        let ev = gw.event(tenant, key, "test.event", json!({"n": n})).await;
        ids.push(ev["deliveries"][0]["id"].as_str().unwrap().to_owned());
    }
    ids
}

/// A's deliveries to an endpoint that always answers 500, bound to the
/// `fill_loop` plugin and retried fast; returns the receiver and the ids.
async fn hostile_deliveries(gw: &TestGateway, key: &str) -> (Receiver, Vec<String>) {
    let receiver = Receiver::start(vec![Reply::status(500); 1_000]).await;
    let policy = json!({"strategy": "fixed", "base_ms": 20, "jitter": "none", "max_attempts": 23});
    let endpoint = json!({"url": receiver.url(), "plugin": "fill_loop", "policy": policy});
    let ids = deliveries(gw, HOSTILE, key, endpoint).await;
    (receiver, ids)
}

fn decided_by(d: &Value) -> Vec<String> {
    d["attempt_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["decided_by"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn one_plugin_cannot_monopolise_the_decision_pool() {
    let gw = gateway().await;
    let (a_key, b_key) = (gw.tenant(HOSTILE).await, gw.tenant(WELL_BEHAVED).await);
    let (_a_receiver, a_ids) = hostile_deliveries(&gw, &a_key).await;
    let b_url = body_receiver(vec![(400, r#"{"error":"try_again"}"#); DELIVERIES]).await;
    let b_ids = deliveries(
        &gw,
        WELL_BEHAVED,
        &b_key,
        json!({"url": b_url, "plugin": "tryagain"}),
    )
    .await;

    for id in &b_ids {
        let d = gw
            .wait_delivery(WELL_BEHAVED, &b_key, id, WAIT, is_final)
            .await;
        let by = decided_by(&d);
        assert!(!by.is_empty(), "{d}");
        // On a starved machine the epoch deadline is B's backstop; never pool_full.
        assert!(
            by[0] == "plugin:tryagain@1" || by[0] == "fallback:epoch_deadline",
            "{by:?}"
        );
        if by[0] == "plugin:tryagain@1" {
            assert_eq!(d["state"], "succeeded", "{d}");
        }
    }
    let mut a_seen = Vec::new();
    for id in &a_ids {
        let d = gw.wait_delivery(HOSTILE, &a_key, id, WAIT, is_final).await;
        assert_eq!(d["state"], "dead", "{d}");
        a_seen.extend(decided_by(&d));
    }
    let allowed = [
        "fallback:out_of_fuel",
        "fallback:epoch_deadline",
        "fallback:pool_full",
        "fallback:disabled",
    ];
    assert!(
        a_seen.iter().all(|by| allowed.contains(&by.as_str())),
        "{a_seen:?}"
    );
    assert!(
        a_seen.iter().any(|by| by == "fallback:disabled"),
        "{a_seen:?}"
    );
    let (s, plugin) = gw
        .call(
            "GET",
            &format!("/v1/tenants/{HOSTILE}/plugins/fill_loop"),
            Some(&a_key),
            None,
        )
        .await;
    assert_eq!(
        (s, plugin["disabled"].as_bool()),
        (200, Some(true)),
        "{plugin}"
    );
}

/// The value of `hookgate_plugin_decision_paths_total{path}` in a scrape.
fn decisions_on_path(metrics: &str, path: &str) -> u64 {
    let series = format!("hookgate_plugin_decision_paths_total{{path=\"{path}\"}} ");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series.as_str()))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {series} in:\n{metrics}"))
}

/// Issue 21, item 2: A's `memory.fill` loop runs inline first, overruns the
/// small budget and is rerun on the pool; after a few overruns its decisions go
/// straight to the pool, so it stops holding the worker that B's ingests share
/// (a current-thread runtime: one worker for everything). B's events are all
/// accepted while A's plugin runs; the bound on each is for a hang, not speed.
#[tokio::test]
async fn an_overrunning_plugin_leaves_the_worker_to_other_tenants_ingest() {
    const INGESTS: usize = 30;
    const HANG: Duration = Duration::from_secs(20);
    let gw = gateway().await;
    let (a_key, b_key) = (gw.tenant(HOSTILE).await, gw.tenant(WELL_BEHAVED).await);
    let (_a_receiver, a_ids) = hostile_deliveries(&gw, &a_key).await;
    let b_receiver = Receiver::start(vec![Reply::status(200); INGESTS]).await;
    gw.endpoint(WELL_BEHAVED, &b_key, json!({"url": b_receiver.url()}))
        .await;
    for n in 0..INGESTS {
        let body = json!({"event_type": "test.event", "payload": {"n": n}});
        let path = format!("/v1/tenants/{WELL_BEHAVED}/events");
        let ingest = gw.call("POST", &path, Some(&b_key), Some(body));
        let (status, answer) = tokio::time::timeout(HANG, ingest)
            .await
            .unwrap_or_else(|_| panic!("ingest {n} hung while A's plugin ran"));
        assert_eq!(status, 202, "ingest {n}: {answer}");
    }
    for id in &a_ids {
        let d = gw.wait_delivery(HOSTILE, &a_key, id, WAIT, is_final).await;
        assert_eq!(d["state"], "dead", "{d}");
    }
    let (status, metrics) = gw.call("GET", "/metrics", None, None).await;
    assert_eq!(status, 200, "{metrics}");
    let metrics = metrics.as_str().expect("the metrics text");
    let (inline, escalated, pool) = (
        decisions_on_path(metrics, "inline"),
        decisions_on_path(metrics, "escalated"),
        decisions_on_path(metrics, "pool"),
    );
    // No run of the loop fits inline. Four overruns among a version's last 32
    // send it to the pool; decisions already under way when that happens
    // escalate too, at most one per delivery.
    assert_eq!(inline, 0, "escalated {escalated}, pool {pool}");
    assert!(
        (4..=4 + DELIVERIES as u64).contains(&escalated),
        "escalated {escalated}, pool {pool}"
    );
    assert!(pool > 0, "A's later decisions go straight to the pool");
    assert_eq!(b_receiver.wait_for(INGESTS, WAIT).await.len(), INGESTS);
}
