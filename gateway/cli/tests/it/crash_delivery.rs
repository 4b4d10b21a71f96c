//! SIGKILL with deliveries pending and in flight, then SIGTERM during deliveries:
//! after each restart every delivery is made; nothing is lost.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::common::{Gateway, SlowReceiver, tenant_endpoint_events, wait_all_succeeded};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_with_pending_and_in_flight_deliveries_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rx = SlowReceiver::start(2_000).await;
    let gw = Gateway::spawn(dir.path(), &[]);
    let (key, ids) = tenant_endpoint_events(&gw.base, &rx.url, 20).await;
    // Wait until attempts are in flight (the receiver holds each for 2 s), then kill.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while rx.seen.lock().unwrap().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    gw.kill();

    rx.delay_ms.store(0, Ordering::SeqCst);
    let gw = Gateway::spawn(dir.path(), &[]);
    let missing = wait_all_succeeded(&gw.base, &key, &ids, Duration::from_secs(60)).await;
    assert!(
        missing.is_empty(),
        "not delivered after restart: {missing:?}"
    );
    let seen = rx.distinct();
    assert!(
        ids.iter().all(|id| seen.contains(id)),
        "the receiver missed an event"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_deliveries_exits_zero_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rx = SlowReceiver::start(500).await;
    let gw = Gateway::spawn(dir.path(), &[("HOOKGATE_SHUTDOWN_GRACE_MS", "5s")]);
    let (key, ids) = tenant_endpoint_events(&gw.base, &rx.url, 20).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while rx.seen.lock().unwrap().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status = gw.terminate();
    assert!(status.success(), "SIGTERM exit: {status:?}");

    rx.delay_ms.store(0, Ordering::SeqCst);
    let gw = Gateway::spawn(dir.path(), &[]);
    let missing = wait_all_succeeded(&gw.base, &key, &ids, Duration::from_secs(60)).await;
    assert!(
        missing.is_empty(),
        "not delivered after restart: {missing:?}"
    );
}
