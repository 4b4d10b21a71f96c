//! `GET /v1/tenants/{t}/endpoints/{id}/stats`, end to end on each backend: a
//! receiver answering some 2xx and some 5xx, at chosen latencies, gives buckets
//! whose counts match the attempt log exactly, totals that are their sum, and
//! percentiles in the histogram slots the logged durations say; the stats
//! survive a restart (the last flush is at shutdown); on PostgreSQL two nodes
//! delivering to one endpoint add up; a bad time is 400 and a range ending
//! before it starts 422, an unknown or another tenant's endpoint 404.

use std::collections::BTreeMap;
use std::time::Duration;

use hookgate_server::{RunOptions, parse_rfc3339_ms};
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{ADMIN, Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    buckets_count_every_attempt_and_percentiles_fall_in_their_slots,
    stats_survive_a_restart,
    bad_times_and_ranges_are_refused_and_unknown_or_foreign_endpoints_are_404,
}

const WAIT: Duration = Duration::from_secs(30);

/// The latency slots' upper bounds, in ms, as the API documents them.
const BOUNDS_MS: [u64; 17] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 60_000, 120_000,
    300_000,
];

/// The documented width of a bucket.
const BUCKET_MS: u64 = 300_000;

/// The stats of `endpoint` (an id or uid) with `query`, polled until `done`
/// holds or [`WAIT`] passes; the last answer.
async fn stats_when(
    gw: &TestGateway,
    key: &str,
    endpoint: &str,
    query: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let path = format!("/v1/tenants/acme/endpoints/{endpoint}/stats{query}");
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (s, v) = gw.call("GET", &path, Some(key), None).await;
        assert_eq!(s, 200, "{v}");
        if done(&v) || tokio::time::Instant::now() >= deadline {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn attempts_reach(n: u64) -> impl Fn(&Value) -> bool {
    move |v| v["totals"]["attempts"].as_u64() >= Some(n)
}

/// The percentile `per_mille` of `durations` as the API computes it from its
/// histogram: the bound of the slot holding the ⌈p·n⌉-th fastest.
fn slot_percentile(durations: &[u64], per_mille: u64) -> Option<u64> {
    let mut sorted = durations.to_vec();
    sorted.sort_unstable();
    let n = sorted.len() as u64;
    if n == 0 {
        return None;
    }
    let rank = (n * per_mille).div_ceil(1_000).max(1);
    let at = sorted[(rank - 1) as usize];
    Some(*BOUNDS_MS.iter().find(|b| at <= **b).unwrap_or(&300_000))
}

/// Per bucket start, what the attempt logs of `deliveries` say: attempts,
/// delivered (2xx), failed, and each attempt's duration.
#[derive(Debug, Default, PartialEq)]
struct Expected {
    attempts: u64,
    delivered: u64,
    failed: u64,
    durations: Vec<u64>,
}

fn expected_from_logs(deliveries: &[Value]) -> BTreeMap<u64, Expected> {
    let mut by_bucket: BTreeMap<u64, Expected> = BTreeMap::new();
    for d in deliveries {
        for a in d["attempt_log"].as_array().unwrap() {
            let started = parse_rfc3339_ms(a["started_at"].as_str().unwrap()).unwrap();
            let e = by_bucket.entry(started - started % BUCKET_MS).or_default();
            e.attempts += 1;
            if a["status"]
                .as_u64()
                .is_some_and(|s| (200..300).contains(&s))
            {
                e.delivered += 1;
            } else {
                e.failed += 1;
            }
            e.durations.push(a["duration_ms"].as_u64().unwrap());
        }
    }
    by_bucket
}

/// Checks `stats` against `expected`: buckets dense and oldest first, the ones
/// with attempts exactly as the logs say (percentiles included), the rest
/// zero, and totals their sum.
fn check_against_logs(stats: &Value, expected: &BTreeMap<u64, Expected>) {
    assert_eq!(stats["bucket_seconds"], 300, "{stats}");
    let since = parse_rfc3339_ms(stats["since"].as_str().unwrap()).unwrap();
    let until = parse_rfc3339_ms(stats["until"].as_str().unwrap()).unwrap();
    let buckets = stats["buckets"].as_array().unwrap();
    assert_eq!(buckets.len() as u64, (until - since) / BUCKET_MS, "dense");
    let mut sum = (0, 0, 0);
    for (i, b) in buckets.iter().enumerate() {
        let start = parse_rfc3339_ms(b["start"].as_str().unwrap()).unwrap();
        assert_eq!(start, since + i as u64 * BUCKET_MS, "oldest first: {b}");
        let counts = (
            b["attempts"].as_u64().unwrap(),
            b["delivered"].as_u64().unwrap(),
            b["failed"].as_u64().unwrap(),
        );
        sum = (sum.0 + counts.0, sum.1 + counts.1, sum.2 + counts.2);
        match expected.get(&start) {
            Some(e) => {
                assert_eq!(counts, (e.attempts, e.delivered, e.failed), "{b}");
                assert_eq!(b["p50_ms"].as_u64(), slot_percentile(&e.durations, 500));
                assert_eq!(b["p99_ms"].as_u64(), slot_percentile(&e.durations, 990));
            }
            None => {
                assert_eq!(counts, (0, 0, 0), "{b}");
                assert!(b["p50_ms"].is_null() && b["p99_ms"].is_null(), "{b}");
            }
        }
    }
    let t = &stats["totals"];
    let totals = (
        t["attempts"].as_u64().unwrap(),
        t["delivered"].as_u64().unwrap(),
        t["failed"].as_u64().unwrap(),
    );
    assert_eq!(totals, sum, "totals are the buckets' sum: {stats}");
    let all: Vec<u64> = expected
        .values()
        .flat_map(|e| e.durations.clone())
        .collect();
    assert_eq!(t["p50_ms"].as_u64(), slot_percentile(&all, 500), "{t}");
    assert_eq!(t["p99_ms"].as_u64(), slot_percentile(&all, 990), "{t}");
}

/// Sends `n` events to tenant acme; returns each delivery once final.
async fn deliver(gw: &TestGateway, key: &str, n: usize) -> Vec<Value> {
    let mut ids = Vec::new();
    for i in 0..n {
        let ev = gw.event("acme", key, "order.paid", json!({"i": i})).await;
        ids.push(ev["deliveries"][0]["id"].as_str().unwrap().to_owned());
    }
    let mut done = Vec::new();
    for id in ids {
        let d = gw.wait_delivery("acme", key, &id, WAIT, is_final).await;
        assert!(is_final(&d), "{d}");
        done.push(d);
    }
    done
}

async fn buckets_count_every_attempt_and_percentiles_fall_in_their_slots(backend: Backend) {
    let mut bed = backend.bed().await;
    bed.config.stats.flush_ms = 50;
    let gw = TestGateway::start_bed(bed, RunOptions::default()).await;
    // Five 2xx and three 5xx, some slow, in whatever order the requests come.
    let rx = Receiver::start(vec![
        Reply::status(200),
        Reply::status(503),
        Reply::status(200).after(Duration::from_millis(250)),
        Reply::status(500),
        Reply::status(204),
        Reply::status(200).after(Duration::from_millis(60)),
        Reply::status(502).after(Duration::from_millis(30)),
        Reply::status(201),
    ])
    .await;
    let key = gw.tenant("acme").await;
    let body = json!({"url": rx.url(), "uid": "orders", "policy": {"max_attempts": 1}});
    let ep = gw.endpoint("acme", &key, body).await;
    let ep_id = ep["id"].as_str().unwrap();
    let deliveries = deliver(&gw, &key, 8).await;
    let expected = expected_from_logs(&deliveries);
    let counted: u64 = expected.values().map(|e| e.attempts).sum();
    let delivered: u64 = expected.values().map(|e| e.delivered).sum();
    assert_eq!((counted, delivered), (8, 5), "{expected:?}");

    let stats = stats_when(&gw, &key, ep_id, "", attempts_reach(8)).await;
    assert_eq!(stats["endpoint_id"], ep_id, "{stats}");
    check_against_logs(&stats, &expected);
    assert_eq!(
        stats["states"],
        json!({"pending": 0, "dead": 3}),
        "every delivery is final; the 5xx ones dead: {stats}"
    );
    // The default range: the last day in whole buckets, up to the one holding
    // now (one bucket fewer when now is a bucket's very start).
    let len = stats["buckets"].as_array().unwrap().len();
    assert!(len == 24 * 12 + 1 || len == 24 * 12, "{len} buckets");

    // Named by its uid, over a range inside one bucket: that whole bucket.
    let first = *expected.keys().next().unwrap();
    let (since, until) = (
        hookgate_server::rfc3339_ms(first + 1_000),
        hookgate_server::rfc3339_ms(first + 2_000),
    );
    let query = format!("?since={since}&until={until}");
    let one = stats_when(&gw, &key, "orders", &query, |_| true).await;
    let buckets = one["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 1, "{one}");
    assert_eq!(
        parse_rfc3339_ms(one["since"].as_str().unwrap()),
        Some(first)
    );
    assert_eq!(
        parse_rfc3339_ms(one["until"].as_str().unwrap()),
        Some(first + BUCKET_MS)
    );
    assert_eq!(buckets[0]["attempts"], expected[&first].attempts, "{one}");
    assert_eq!(one["totals"]["attempts"], expected[&first].attempts);
}

async fn stats_survive_a_restart(backend: Backend) {
    let mut bed = backend.bed().await;
    // No flush comes due while the gateway runs: only the last, at shutdown.
    bed.config.stats.flush_ms = 60_000;
    let gw = TestGateway::start_bed(bed.clone(), RunOptions::default()).await;
    let rx = Receiver::start(vec![Reply::status(200), Reply::status(500)]).await;
    let key = gw.tenant("acme").await;
    let body = json!({"url": rx.url(), "policy": {"max_attempts": 1}});
    let ep = gw.endpoint("acme", &key, body).await;
    let ep_id = ep["id"].as_str().unwrap().to_owned();
    let deliveries = deliver(&gw, &key, 3).await;
    let expected = expected_from_logs(&deliveries);
    gw.stop().await;

    let gw = TestGateway::start_bed(bed, RunOptions::default()).await;
    let stats = stats_when(&gw, &key, &ep_id, "", |_| true).await;
    check_against_logs(&stats, &expected);
    let totals = &stats["totals"];
    assert_eq!(
        (&totals["attempts"], &totals["delivered"], &totals["failed"]),
        (&json!(3), &json!(2), &json!(1)),
        "{stats}"
    );
}

async fn bad_times_and_ranges_are_refused_and_unknown_or_foreign_endpoints_are_404(
    backend: Backend,
) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let beta = gw.tenant("beta").await;
    let ep = gw
        .endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/hook"}))
        .await;
    let ep_id = ep["id"].as_str().unwrap();
    let path = format!("/v1/tenants/acme/endpoints/{ep_id}/stats");
    // A time that does not parse is 400 naming it; an end not after the start
    // (now, when no end is given) is a rule across the two, 422 naming until.
    for (query, status, code, field) in [
        ("?since=yesterday", 400, "invalid_field", "since"),
        ("?until=2026-13-01T00:00:00Z", 400, "invalid_field", "until"),
        (
            "?since=2026-12-04T10:00:00Z&until=2026-12-04T09:00:00Z",
            422,
            "validation_failed",
            "until",
        ),
        (
            "?since=2026-12-04T10:00:00Z&until=2026-12-04T10:00:00Z",
            422,
            "validation_failed",
            "until",
        ),
        (
            "?since=2999-01-01T00:00:00Z",
            422,
            "validation_failed",
            "until",
        ),
    ] {
        let (s, e) = gw
            .call("GET", &format!("{path}{query}"), Some(&key), None)
            .await;
        assert_eq!(
            (s, &e["error"]["code"], &e["error"]["field"]),
            (status, &json!(code), &json!(field)),
            "{query}: {e}"
        );
    }
    // Before the history kept: clamped to it, not refused.
    let (s, old) = gw
        .call(
            "GET",
            &format!("{path}?since=2000-01-01T00:00:00Z"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(s, 200, "{old}");
    let since = parse_rfc3339_ms(old["since"].as_str().unwrap()).unwrap();
    let until = parse_rfc3339_ms(old["until"].as_str().unwrap()).unwrap();
    let len = (until - since) / BUCKET_MS;
    assert!(len == 48 * 12 + 1 || len == 48 * 12, "{old}");
    // The admin may look; an unknown endpoint, or acme's by another tenant, is 404.
    let (s, _) = gw.call("GET", &path, Some(ADMIN), None).await;
    assert_eq!(s, 200);
    for (path, token) in [
        ("/v1/tenants/acme/endpoints/ep_nope/stats".to_owned(), &key),
        (path.clone(), &beta),
        (format!("/v1/tenants/beta/endpoints/{ep_id}/stats"), &beta),
    ] {
        let (s, e) = gw.call("GET", &path, Some(token), None).await;
        assert_eq!(
            (s, &e["error"]["code"]),
            (404, &json!("not_found")),
            "{path}: {e}"
        );
    }
    let (s, _) = gw.call("GET", &path, None, None).await;
    assert_eq!(s, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_two_nodes_delivering_to_one_endpoint_add_up() {
    let mut bed = Backend::Postgres.bed().await;
    bed.config.stats.flush_ms = 50;
    // One attempt in flight per node: a slow receiver keeps both busy.
    bed.config.cluster.node_max_in_flight = 1;
    bed.config.cluster.node_id = Some("node-a".into());
    bed.config.store.node_id = Some("node-a".into());
    let mut other = bed.another_node().expect("a shared store");
    other.config.cluster.node_id = Some("node-b".into());
    other.config.store.node_id = Some("node-b".into());
    let a = TestGateway::start_bed(bed, RunOptions::default()).await;
    let b = TestGateway::start_bed(other, RunOptions::default()).await;
    let slow = (0..12).map(|_| Reply::status(200).after(Duration::from_millis(150)));
    let rx = Receiver::start(slow.collect()).await;
    let key = a.tenant("acme").await;
    let ep = a.endpoint("acme", &key, json!({"url": rx.url()})).await;
    let ep_id = ep["id"].as_str().unwrap();
    let mut ids = Vec::new();
    for i in 0..12 {
        let node = if i % 2 == 0 { &a } else { &b };
        let ev = node
            .event("acme", &key, "order.paid", json!({"i": i}))
            .await;
        ids.push(ev["deliveries"][0]["id"].as_str().unwrap().to_owned());
    }
    let mut deliveries = Vec::new();
    let mut by_node = BTreeMap::<String, u64>::new();
    for id in &ids {
        let d = a.wait_delivery("acme", &key, id, WAIT, is_final).await;
        assert_eq!(d["state"], "succeeded", "{d}");
        for at in d["attempt_log"].as_array().unwrap() {
            *by_node
                .entry(at["node_id"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        deliveries.push(d);
    }
    assert_eq!(by_node.len(), 2, "both nodes made attempts: {by_node:?}");
    let expected = expected_from_logs(&deliveries);
    // Each node's flushes add to the same buckets; either node reads the sum.
    for node in [&a, &b] {
        let stats = stats_when(node, &key, ep_id, "", attempts_reach(12)).await;
        check_against_logs(&stats, &expected);
        assert_eq!(stats["totals"]["delivered"], 12, "{stats}");
    }
}
