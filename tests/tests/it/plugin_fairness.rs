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

use hookgate_server::config::PreloadPlugin;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{TestGateway, body_receiver, is_final, test_config};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);
const HOSTILE: &str = "alpha";
const WELL_BEHAVED: &str = "bravo";
/// Deliveries per tenant, all started together so their decisions overlap.
const DELIVERIES: usize = 5;

fn plugin_module(name: &str) -> Vec<u8> {
    let fixture = |file: &str| {
        let path = format!("{}/fixtures/plugins/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let text = format!(
        "(module\n{}\n{}\n)",
        fixture("prelude.wat"),
        fixture(&format!("{name}.wat"))
    );
    wat::parse_str(text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

async fn gateway() -> TestGateway {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    // The breaker would pause A's endpoint after 20 failures; keep it out of the way.
    config.breaker.failure_threshold = 1_000;
    for (tenant, name) in [(HOSTILE, "fill_loop"), (WELL_BEHAVED, "tryagain")] {
        let path = dir.path().join(format!("{tenant}-{name}.wasm"));
        std::fs::write(&path, plugin_module(name)).unwrap();
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
    let a_receiver = Receiver::start(vec![Reply::status(500); 1_000]).await;
    let b_url = body_receiver(vec![(400, r#"{"error":"try_again"}"#); DELIVERIES]).await;
    let policy = json!({"strategy": "fixed", "base_ms": 20, "jitter": "none", "max_attempts": 23});
    let a_ids = deliveries(
        &gw,
        HOSTILE,
        &a_key,
        json!({"url": a_receiver.url(), "plugin": "fill_loop", "policy": policy}),
    )
    .await;
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
