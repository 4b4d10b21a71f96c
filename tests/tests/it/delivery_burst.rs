//! A backlog released at once onto a fast receiver: every retry waits for its
//! delay, and every delivery is attempted exactly as often as its log says.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{TestGateway, test_config};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const EVENTS: usize = 500;
const DELAY_MS: u64 = 3_000;

/// Before the fix, a scan racing a finishing attempt leased the finished entry
/// again: attempt 2 went out at once, and the retry entry it left behind was
/// served in a loop.
#[tokio::test]
async fn a_released_backlog_never_retries_early_or_twice() {
    let rx = Receiver::start(vec![Reply::status(503); EVENTS]).await;
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    // Every first attempt fails; the breaker must not hold the backlog back.
    config.breaker.failure_threshold = u32::MAX;
    let gw = TestGateway::start_with(config, dir, Default::default()).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({
                "url": rx.url(), "max_in_flight": 64, "rate_limit_per_s": 1,
                "policy": {"jitter": "none", "base_ms": DELAY_MS},
            }),
        )
        .await;
    for n in 0..EVENTS {
        gw.event("acme", &key, "order.paid", json!({ "n": n }))
            .await;
    }
    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    let (s, b) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"rate_limit_per_s": null})),
        )
        .await;
    assert_eq!(s, 200, "{b}");

    let got = rx.wait_for(2 * EVENTS, WAIT).await;
    assert!(
        got.len() >= 2 * EVENTS,
        "only {} requests arrived",
        got.len()
    );
    let mut by_id: HashMap<&str, Vec<_>> = HashMap::new();
    for r in &got {
        by_id
            .entry(r.header("webhook-id").unwrap())
            .or_default()
            .push(r.at);
    }
    assert_eq!(by_id.len(), EVENTS);
    for (id, times) in &by_id {
        for pair in times.windows(2) {
            let gap = pair[1] - pair[0];
            // Arrival of attempt 1 precedes its end, and the retry is due `DELAY_MS` after that end.
            assert!(
                gap >= Duration::from_millis(DELAY_MS - 10),
                "{id}: a retry came {gap:?} after the previous attempt"
            );
        }
    }
    // Every delivery ends succeeded, and no request went out that its log lacks.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut attempts = 0;
    let mut succeeded = 0;
    let mut cursor = String::new();
    loop {
        let path = format!("/v1/tenants/acme/deliveries?state=succeeded&limit=250{cursor}");
        let (s, page) = gw.call("GET", &path, Some(&key), None).await;
        assert_eq!(s, 200, "{page}");
        for d in page["data"].as_array().unwrap() {
            succeeded += 1;
            attempts += d["attempts"].as_u64().unwrap() as usize;
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = format!("&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(succeeded, EVENTS, "every delivery succeeded");
    assert_eq!(
        attempts,
        rx.received().len(),
        "one request per logged attempt"
    );
}
