//! The database goes away under a running gateway: a proxy of the test's own
//! between the gateway and PostgreSQL is cut for 5 s while events are posted,
//! then restored (the shared server itself is never restarted: other tests use
//! it). Calls made during the cut answer 503 `store_unavailable`, never 500 and
//! never 202; `/healthz` says so; the gateway heals by itself, and every event
//! it acknowledged, before, during or after the cut, is delivered.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::tcp_proxy::TcpProxy;
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};
use tokio::time::Instant;

const CUT: Duration = Duration::from_secs(5);
const WAIT: Duration = Duration::from_secs(60);

/// One ingest call: when it was sent and answered, and what it answered.
struct Call {
    sent: Instant,
    answered: Instant,
    status: u16,
    body: Value,
}

pub(crate) async fn health(gw: &TestGateway) -> (u16, Value) {
    gw.call("GET", "/healthz", None, None).await
}

/// Polls `/healthz` until it answers `want`, bounded; returns what it answered last.
pub(crate) async fn wait_health(gw: &TestGateway, want: u16, limit: Duration) -> (u16, Value) {
    let deadline = Instant::now() + limit;
    loop {
        let h = health(gw).await;
        if h.0 == want || Instant::now() >= deadline {
            return h;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_refuses_events_loses_none_and_heals_by_itself() {
    let mut bed = Backend::Postgres.bed().await;
    let url = bed.config.store.url.clone().unwrap();
    let (proxy, proxied) = TcpProxy::for_database(&url).await;
    bed.config.store.url = Some(proxied);
    let gw = Arc::new(TestGateway::start_bed(bed, RunOptions::default()).await);
    // Slow answers, so attempts are in flight when the cut comes and their
    // outcomes cannot be written: their leases expire and they go again.
    let slow = (0..400).map(|_| Reply::status(200).after(Duration::from_millis(300)));
    let rx = Receiver::start(slow.collect()).await;
    let key = gw.tenant("acme").await;
    let ep = json!({"url": rx.url(), "timeout_ms": 2_000});
    gw.endpoint("acme", &key, ep).await;

    // One sender, paced, for the whole test; stopped by `done`.
    let calls = Arc::new(Mutex::new(Vec::<Call>::new()));
    let done = tokio_util::sync::CancellationToken::new();
    let sender = {
        let (gw, key, calls, done) = (gw.clone(), key.clone(), calls.clone(), done.clone());
        tokio::spawn(async move {
            let body = |n| json!({"event_type": "outage.test", "payload": {"n": n}});
            for n in 0..2_000 {
                if done.is_cancelled() {
                    return;
                }
                let sent = Instant::now();
                let (status, body) = gw
                    .call("POST", "/v1/tenants/acme/events", Some(&key), Some(body(n)))
                    .await;
                let answered = Instant::now();
                calls.lock().unwrap().push(Call {
                    sent,
                    answered,
                    status,
                    body,
                });
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };

    tokio::time::sleep(Duration::from_secs(2)).await;
    let cut_at = Instant::now();
    proxy.cut();
    let unhealthy = wait_health(&gw, 503, CUT).await;
    assert_eq!(unhealthy.0, 503, "{}", unhealthy.1);
    assert_eq!(
        unhealthy.1["status"], "store_unavailable",
        "{}",
        unhealthy.1
    );
    tokio::time::sleep_until(cut_at + CUT).await;
    let restored_at = Instant::now();
    proxy.restore();
    let healed = wait_health(&gw, 200, WAIT).await;
    assert_eq!(healed.0, 200, "the gateway heals by itself: {}", healed.1);
    let healed_after = restored_at.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    done.cancel();
    sender.await.unwrap();

    let calls = std::mem::take(&mut *calls.lock().unwrap());
    let mut acked = Vec::new();
    let (mut refused_in_cut, mut acked_after) = (0, 0);
    for c in &calls {
        match c.status {
            202 => {
                assert!(
                    !(c.sent >= cut_at && c.answered < restored_at),
                    "a 202 for a call made while the database was cut: {}",
                    c.body
                );
                if c.sent > restored_at {
                    acked_after += 1;
                }
                acked.push(c.body["deliveries"][0]["id"].as_str().unwrap().to_owned());
            }
            503 => {
                assert_eq!(c.body["error"]["code"], "store_unavailable", "{}", c.body);
                if c.sent >= cut_at && c.answered < restored_at {
                    refused_in_cut += 1;
                }
            }
            other => panic!("ingest answered {other}: {}", c.body),
        }
    }
    assert!(refused_in_cut > 0, "calls during the cut were refused");
    assert!(acked_after > 0, "ingest works again after the cut");
    for id in &acked {
        let d = gw
            .wait_delivery("acme", &key, id, WAIT, |d| d["state"] == "succeeded")
            .await;
        assert!(is_final(&d) && d["state"] == "succeeded", "{d}");
    }
    println!(
        "{} calls: {} acknowledged and delivered, {refused_in_cut} refused during the {}s cut; \
         healthy {healed_after:?} after the restore; {} requests received for {} events",
        calls.len(),
        acked.len(),
        CUT.as_secs(),
        rx.received().len(),
        acked.len()
    );
}
