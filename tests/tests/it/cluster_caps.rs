//! Three gateways on one PostgreSQL database keep each endpoint's promises as
//! one: the receiver never sees more than `max_in_flight` requests in progress
//! nor more than `rate_limit_per_s` arrivals in any sliding second, whichever
//! nodes send them; and an open breaker lets out one probe per cool-down,
//! cluster-wide. Each node is capped at 2 attempts in flight
//! (`cluster.node_max_in_flight`), so an endpoint allowed 4 is served by
//! several nodes at once.

use std::collections::BTreeSet;
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::{Receiver, Reply, most_within};
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

/// Three gateways on one scratch database, each capped at 2 attempts in
/// flight, with short breaker cool-downs.
async fn three_gateways() -> Vec<TestGateway> {
    let mut bed = Backend::Postgres.bed().await;
    bed.config.cluster.node_max_in_flight = 2;
    bed.config.breaker.failure_threshold = 3;
    bed.config.breaker.cooldowns = vec![1_000];
    let others = [bed.another_node(), bed.another_node()];
    let mut nodes = vec![TestGateway::start_bed(bed, RunOptions::default()).await];
    for other in others {
        let other = other.expect("a shared store");
        nodes.push(TestGateway::start_bed(other, RunOptions::default()).await);
    }
    nodes
}

/// Sends `n` events, round-robin over the nodes; returns their delivery ids.
async fn send_spread(nodes: &[TestGateway], key: &str, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let ev = nodes[i % nodes.len()]
            .event("acme", key, "x", json!({"i": i}))
            .await;
        ids.push(ev["deliveries"][0]["id"].as_str().unwrap().to_owned());
    }
    ids
}

/// The delivery as node `gw` reads it once final.
async fn settled(gw: &TestGateway, key: &str, id: &str) -> Value {
    gw.wait_delivery("acme", key, id, WAIT, is_final).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_and_rate_caps_hold_across_three_nodes() {
    let nodes = three_gateways().await;
    let key = nodes[0].tenant("acme").await;
    let slow = Receiver::start(
        (0..60)
            .map(|_| Reply::status(200).after(Duration::from_millis(250)))
            .collect(),
    )
    .await;
    let body = json!({"url": slow.url(), "max_in_flight": 4, "rate_limit_per_s": 20});
    nodes[1].endpoint("acme", &key, body).await;
    let ids = send_spread(&nodes, &key, 60).await;
    let mut by_node = BTreeSet::new();
    for (i, id) in ids.iter().enumerate() {
        let d = settled(&nodes[i % 3], &key, id).await;
        assert_eq!(d["state"], "succeeded", "{d}");
        for a in d["attempt_log"].as_array().unwrap() {
            by_node.insert(a["node_id"].as_str().unwrap().to_owned());
        }
    }
    println!(
        "max in progress {}, attempts from {} nodes",
        slow.max_concurrent(),
        by_node.len()
    );
    assert!(
        slow.max_concurrent() <= 4,
        "saw {} requests in progress at once",
        slow.max_concurrent()
    );
    assert!(
        by_node.len() >= 2,
        "one node made every attempt: {by_node:?}"
    );
    let got = slow.received();
    assert_eq!(got.len(), 60, "one attempt each");
    let most = most_within(&got, Duration::from_secs(1));
    assert!(most <= 20, "{most} arrivals within one second");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_breaker_lets_one_probe_out_per_cooldown_across_three_nodes() {
    let nodes = three_gateways().await;
    let key = nodes[0].tenant("acme").await;
    // Failing long enough for the trip and three probes, then healthy.
    let rx = Receiver::start((0..6).map(|_| Reply::status(503)).collect()).await;
    let body = json!({"url": rx.url(), "max_in_flight": 1, "policy": {"max_attempts": 1}});
    nodes[2].endpoint("acme", &key, body).await;
    let ids = send_spread(&nodes, &key, 30).await;
    let got = rx.wait_for(30, WAIT).await;
    assert_eq!(got.len(), 30, "every delivery was attempted once");
    // The trip: 3 failures; then each probe at least one cool-down after the
    // one before, until one succeeds.
    let gaps: Vec<Duration> = got.windows(2).map(|w| w[1].at - w[0].at).collect();
    println!("gaps between the first 8 arrivals: {:?}", &gaps[..7]);
    for (i, gap) in gaps.iter().enumerate().take(6).skip(2) {
        assert!(
            *gap >= Duration::from_millis(900),
            "arrival {} came {gap:?} after the one before, within the cool-down",
            i + 2
        );
    }
    let mut dead = 0;
    for (i, id) in ids.iter().enumerate() {
        let d = settled(&nodes[(i + 1) % 3], &key, id).await;
        dead += usize::from(d["state"] == "dead");
    }
    assert_eq!(dead, 6, "the 6 failed attempts, and only they, ended dead");
}
