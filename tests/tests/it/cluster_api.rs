//! `GET /v1/cluster`: the admin sees every live node from any node, each with
//! its heartbeat and the leases it holds; a tenant may not look; on sled the
//! one gateway lists itself. Every attempt names the node that made it.

use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{ADMIN, Backend, TestGateway, is_final};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// The node ids `view` lists, and the one that answered.
fn listed(view: &Value) -> (Vec<String>, Vec<String>) {
    let nodes = view["nodes"].as_array().expect("a node list");
    let ids = nodes
        .iter()
        .map(|n| n["node_id"].as_str().unwrap().to_owned());
    let this = nodes.iter().filter(|n| n["this_node"] == true);
    let this = this.map(|n| n["node_id"].as_str().unwrap().to_owned());
    (ids.collect(), this.collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_lists_the_live_nodes_and_their_leases() {
    let mut bed = Backend::Postgres.bed().await;
    bed.config.cluster.node_id = Some("node-a".into());
    bed.config.store.node_id = Some("node-a".into());
    let mut other = bed.another_node().expect("a shared store");
    other.config.cluster.node_id = Some("node-b".into());
    other.config.store.node_id = Some("node-b".into());
    let a = TestGateway::start_bed(bed, RunOptions::default()).await;
    let b = TestGateway::start_bed(other, RunOptions::default()).await;

    // Slow answers keep attempts, and so leases, out while we look.
    let rx = Receiver::start(vec![Reply::status(200).after(Duration::from_secs(2)); 4]).await;
    let key = a.tenant("acme").await;
    a.endpoint("acme", &key, json!({"url": rx.url()})).await;
    let mut ids = Vec::new();
    for i in 0..4 {
        let ev = b.event("acme", &key, "x", json!({"i": i})).await;
        ids.push(ev["deliveries"][0]["id"].as_str().unwrap().to_owned());
    }
    rx.wait_for(4, WAIT).await;
    let (s, view) = b.call("GET", "/v1/cluster", Some(ADMIN), None).await;
    assert_eq!(s, 200, "{view}");
    assert_eq!(view["backend"], "postgres", "{view}");
    assert_eq!(view["node_id"], "node-b", "{view}");
    assert_eq!(
        listed(&view),
        (
            vec!["node-a".into(), "node-b".into()],
            vec!["node-b".into()]
        )
    );
    let leases: u64 = view["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["leases"].as_u64().unwrap())
        .sum();
    assert_eq!(leases, 4, "the four attempts in flight hold leases: {view}");
    for n in view["nodes"].as_array().unwrap() {
        assert!(n["last_seen_at"].as_str().unwrap().ends_with('Z'), "{n}");
        assert!(
            n["started_at"].is_string() && n["version"].is_string(),
            "{n}"
        );
    }
    let (s, refused) = a.call("GET", "/v1/cluster", Some(&key), None).await;
    assert_eq!(
        (s, &refused["error"]["code"]),
        (403, &json!("forbidden")),
        "{refused}"
    );

    for id in &ids {
        let d = a.wait_delivery("acme", &key, id, WAIT, is_final).await;
        let by = d["attempt_log"][0]["node_id"].as_str().unwrap_or_default();
        assert!(by == "node-a" || by == "node-b", "{d}");
    }
}

#[tokio::test]
async fn on_sled_the_one_gateway_lists_itself() {
    let gw = TestGateway::start_on(Backend::Sled).await;
    let (s, view) = gw.call("GET", "/v1/cluster", Some(ADMIN), None).await;
    assert_eq!(s, 200, "{view}");
    assert_eq!(view["backend"], "sled", "{view}");
    let (ids, this) = listed(&view);
    assert_eq!((ids.len(), &this), (1, &ids), "{view}");
    assert_eq!(view["node_id"].as_str(), Some(this[0].as_str()));
}
