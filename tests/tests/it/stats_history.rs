//! `GET /v1/tenants/{t}/stats/history` and `GET /v1/stats/history`, end to end
//! on each backend: a tenant's history adds up its endpoints' attempts (and
//! only its own), bucket by bucket, with each endpoint's totals beside; the
//! admin's adds up every tenant's; a bad time is 400 naming it, a tenant key
//! on the gateway's history 403, another tenant's 403 or 404.

use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{ADMIN, Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    a_tenants_history_adds_up_its_endpoints_and_the_admins_every_tenant,
}

const WAIT: Duration = Duration::from_secs(30);

/// Sends `n` events to `tenant` and waits until each of their deliveries is final.
async fn deliver(gw: &TestGateway, tenant: &str, key: &str, n: usize) {
    for i in 0..n {
        let ev = gw.event(tenant, key, "order.paid", json!({"i": i})).await;
        for d in ev["deliveries"].as_array().unwrap() {
            let id = d["id"].as_str().unwrap();
            let d = gw.wait_delivery(tenant, key, id, WAIT, is_final).await;
            assert!(is_final(&d), "{d}");
        }
    }
}

/// `path` read with `token` until its totals count `attempts` (the stats are
/// flushed to the store every 50 ms), or [`WAIT`] passes.
async fn history_when(gw: &TestGateway, path: &str, token: &str, attempts: u64) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (s, v) = gw.call("GET", path, Some(token), None).await;
        assert_eq!(s, 200, "{v}");
        if v["totals"]["attempts"].as_u64() >= Some(attempts)
            || tokio::time::Instant::now() >= deadline
        {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `(tenant, endpoint, attempts, delivered, failed)` of each endpoint listed.
fn per_endpoint(history: &Value) -> Vec<(String, String, u64, u64, u64)> {
    history["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["tenant_id"].as_str().unwrap().to_owned(),
                e["endpoint_id"].as_str().unwrap().to_owned(),
                e["attempts"].as_u64().unwrap(),
                e["delivered"].as_u64().unwrap(),
                e["failed"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The buckets' attempts add up to the totals.
fn check_sums(history: &Value) {
    let buckets = history["buckets"].as_array().unwrap();
    let sum: u64 = buckets
        .iter()
        .map(|b| b["attempts"].as_u64().unwrap())
        .sum();
    assert_eq!(
        Some(sum),
        history["totals"]["attempts"].as_u64(),
        "{history}"
    );
    let len = buckets.len();
    assert!(
        len == 24 * 12 + 1 || len == 24 * 12,
        "the last day: {len} buckets"
    );
    assert_eq!(history["bucket_seconds"], 300);
    assert_eq!(history["complete"], true);
}

async fn a_tenants_history_adds_up_its_endpoints_and_the_admins_every_tenant(backend: Backend) {
    let mut bed = backend.bed().await;
    bed.config.stats.flush_ms = 50;
    let gw = TestGateway::start_bed(bed, RunOptions::default()).await;
    let ok = Receiver::start(Vec::new()).await;
    let failing = Receiver::start(vec![Reply::status(500); 10]).await;
    let acme = gw.tenant("acme").await;
    let beta = gw.tenant("beta").await;
    let one_attempt = json!({"max_attempts": 1});
    let good = gw
        .endpoint(
            "acme",
            &acme,
            json!({"url": ok.url(), "policy": one_attempt}),
        )
        .await;
    let bad = gw
        .endpoint(
            "acme",
            &acme,
            json!({"url": failing.url(), "policy": one_attempt}),
        )
        .await;
    let theirs = gw
        .endpoint(
            "beta",
            &beta,
            json!({"url": ok.url(), "policy": one_attempt}),
        )
        .await;
    deliver(&gw, "acme", &acme, 3).await;
    deliver(&gw, "beta", &beta, 2).await;

    let mine = history_when(&gw, "/v1/tenants/acme/stats/history", &acme, 6).await;
    assert_eq!(mine["tenant_id"], "acme");
    let t = &mine["totals"];
    assert_eq!(
        (&t["attempts"], &t["delivered"], &t["failed"]),
        (&json!(6), &json!(3), &json!(3)),
        "{mine}"
    );
    check_sums(&mine);
    let id = |ep: &Value| ep["id"].as_str().unwrap().to_owned();
    let mut expected = vec![
        ("acme".to_owned(), id(&good), 3, 3, 0),
        ("acme".to_owned(), id(&bad), 3, 0, 3),
    ];
    expected.sort();
    assert_eq!(per_endpoint(&mine), expected, "only acme's endpoints");

    let all = history_when(&gw, "/v1/stats/history", ADMIN, 8).await;
    assert_eq!(all["tenant_id"], Value::Null);
    assert_eq!(all["totals"]["attempts"], 8, "{all}");
    check_sums(&all);
    expected.push(("beta".to_owned(), id(&theirs), 2, 2, 0));
    assert_eq!(per_endpoint(&all), expected, "every tenant's endpoints");
    // A range that holds none of it: zeros, not an error.
    let (s, old) = gw
        .call(
            "GET",
            "/v1/tenants/acme/stats/history?until=2000-01-02T00:00:00Z",
            Some(&acme),
            None,
        )
        .await;
    assert_eq!(s, 200, "{old}");
    assert_eq!(old["totals"]["attempts"], 0);
    assert_eq!(old["endpoints"], json!([]));

    // Refusals.
    let (s, e) = gw
        .call(
            "GET",
            "/v1/tenants/acme/stats/history?since=yesterday",
            Some(&acme),
            None,
        )
        .await;
    assert_eq!(
        (s, &e["error"]["code"], &e["error"]["field"]),
        (400, &json!("invalid_field"), &json!("since")),
        "{e}"
    );
    let (s, _) = gw.call("GET", "/v1/stats/history", Some(&acme), None).await;
    assert_eq!(s, 403, "the gateway's history is the admin's");
    let (s, _) = gw
        .call("GET", "/v1/tenants/acme/stats/history", Some(&beta), None)
        .await;
    assert!(s == 403 || s == 404, "another tenant's history: {s}");
    let (s, _) = gw
        .call("GET", "/v1/tenants/acme/stats/history", None, None)
        .await;
    assert_eq!(s, 401);
}
