//! The database goes away under three gateways at once: one proxy of the
//! test's own stands between every node and PostgreSQL, and is cut for 5 s
//! while events are posted to all nodes in turn. Every node answers 503 during
//! the cut and heals by itself after it, and every event any node acknowledged
//! is delivered, as every node reads it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::tcp_proxy::TcpProxy;
use hookgate_tests::{Backend, TestGateway};
use serde_json::json;
use tokio::time::Instant;

use crate::store_outage::wait_health;

const CUT: Duration = Duration::from_secs(5);
const WAIT: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_under_three_nodes_loses_nothing_and_all_heal() {
    let mut bed = Backend::Postgres.bed().await;
    let url = bed.config.store.url.clone().unwrap();
    let (proxy, proxied) = TcpProxy::for_database(&url).await;
    bed.config.store.url = Some(proxied);
    let others = [bed.another_node(), bed.another_node()];
    let mut nodes = vec![TestGateway::start_bed(bed, RunOptions::default()).await];
    for other in others {
        let other = other.expect("a shared store");
        nodes.push(TestGateway::start_bed(other, RunOptions::default()).await);
    }
    let nodes = Arc::new(nodes);
    // Slow answers, so attempts are in flight on every node at the cut.
    let slow = (0..600).map(|_| Reply::status(200).after(Duration::from_millis(300)));
    let rx = Receiver::start(slow.collect()).await;
    let key = nodes[0].tenant("acme").await;
    let ep = json!({"url": rx.url(), "timeout_ms": 2_000});
    nodes[0].endpoint("acme", &key, ep).await;

    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let done = tokio_util::sync::CancellationToken::new();
    let sender = {
        let (nodes, key, acked, done) = (nodes.clone(), key.clone(), acked.clone(), done.clone());
        tokio::spawn(async move {
            let mut refused = 0;
            for n in 0..1_500 {
                if done.is_cancelled() {
                    break;
                }
                let body = json!({"event_type": "outage.test", "payload": {"n": n}});
                let (status, answer) = nodes[n % 3]
                    .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
                    .await;
                match status {
                    202 => {
                        let id = answer["deliveries"][0]["id"].as_str().unwrap();
                        acked.lock().unwrap().push(id.to_owned());
                    }
                    503 => {
                        assert_eq!(answer["error"]["code"], "store_unavailable", "{answer}");
                        refused += 1;
                    }
                    other => panic!("ingest answered {other}: {answer}"),
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            refused
        })
    };

    tokio::time::sleep(Duration::from_secs(2)).await;
    let cut_at = Instant::now();
    proxy.cut();
    for node in nodes.iter() {
        let unhealthy = wait_health(node, 503, CUT).await;
        assert_eq!(unhealthy.0, 503, "{}", unhealthy.1);
    }
    tokio::time::sleep_until(cut_at + CUT).await;
    let restored_at = Instant::now();
    proxy.restore();
    let mut healed_after = Vec::new();
    for node in nodes.iter() {
        let healed = wait_health(node, 200, WAIT).await;
        assert_eq!(healed.0, 200, "every node heals by itself: {}", healed.1);
        healed_after.push(restored_at.elapsed());
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    done.cancel();
    let refused = sender.await.unwrap();
    assert!(refused > 0, "calls during the cut were refused");

    let acked = std::mem::take(&mut *acked.lock().unwrap());
    for (i, id) in acked.iter().enumerate() {
        let d = nodes[i % 3]
            .wait_delivery("acme", &key, id, WAIT, |d| d["state"] == "succeeded")
            .await;
        assert_eq!(d["state"], "succeeded", "{d}");
    }
    println!(
        "{} acknowledged and delivered, {refused} refused during the {}s cut; \
         nodes healthy {healed_after:?} after the restore; {} requests received",
        acked.len(),
        CUT.as_secs(),
        rx.received().len(),
    );
}
