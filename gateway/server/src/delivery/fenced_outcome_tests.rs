//! What becomes of an attempt whose outcome comes after its lease was used by
//! another attempt (issue 37, item 5): it is logged, marked late, and changes
//! nothing else, not even the shared breaker; and how long any attempt took is
//! measured on the monotonic clock, whatever the wall clock does meanwhile.
//! Each drives a real worker over a real store against a receiver on loopback
//! that holds the request while the test acts.

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::shared_breaker::SharedBreaker;
use super::testing::{Engine, START_MS, engine_on};
use crate::ids::{EndpointId, TenantId};
use crate::store::testing::TestStore;
use crate::store::{
    AttemptRecord, AttemptWrite, DeliveryRecord, DeliveryState, EndpointRecord, Lease, WriteResult,
};

const WAIT: Duration = Duration::from_secs(10);

/// A receiver for one request: says when it has read it, then answers
/// `status` once told to.
struct HeldReceiver {
    url: String,
    arrived: oneshot::Receiver<()>,
    answer: oneshot::Sender<()>,
}

async fn held_receiver(status: u16) -> HeldReceiver {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (arrived_tx, arrived) = oneshot::channel();
    let (answer, answer_rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let (mut conn, _) = listener.accept().await.unwrap();
        super::testing::read_request(&mut conn).await;
        let _ = arrived_tx.send(());
        let _ = answer_rx.await;
        let head = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        let _ = conn.write_all(head.as_bytes()).await;
    });
    HeldReceiver {
        url,
        arrived,
        answer,
    }
}

/// An endpoint of tenant `t` that sends to `url` (on loopback).
async fn endpoint_at(e: &Engine, url: &str) -> EndpointRecord {
    let mut ep = crate::store::testing::endpoint("t", "ep_1");
    ep.url = url.into();
    e.store.store.put_endpoint(&ep).await.unwrap();
    ep
}

/// Another attempt's outcome under `lease` (a node that retook the work):
/// the delivery succeeded. The first attempt's own outcome is then stale.
async fn another_attempt_succeeds(e: &Engine, d: &DeliveryRecord, lease: &Lease) {
    let mut done = d.clone();
    done.attempts = d.attempts + 1;
    done.state = DeliveryState::Succeeded;
    done.next_attempt_at_ms = None;
    let log = AttemptRecord {
        id: None,
        of: None,
        sent: None,
        series: d.series,
        attempt: done.attempts,
        started_at_ms: START_MS,
        duration_ms: 5,
        status: Some(200),
        error_kind: None,
        response_snippet: String::new(),
        verdict: crate::policy::VerdictKind::Delivered.into(),
        delay_ms: None,
        next_attempt_at_ms: None,
        dead_reason: None,
        decided_by: "builtin".into(),
        policy: "config:default".into(),
        node_id: Some("the-other-node".into()),
        late: false,
        transform: None,
    };
    let written = e.store.store.record_attempt(AttemptWrite {
        delivery: &done,
        expected_series: d.series,
        expected_attempts: d.attempts,
        attempt: &log,
        lease,
        next_due_ms: None,
        disable_endpoint: None,
    });
    assert_eq!(written.await.unwrap(), WriteResult::Written);
}

async fn attempt_log(e: &Engine, d: &DeliveryRecord) -> Vec<AttemptRecord> {
    e.store
        .store
        .attempt_log(&d.tenant_id, &d.id)
        .await
        .unwrap()
}

async fn delivery(e: &Engine, d: &DeliveryRecord) -> DeliveryRecord {
    let found = e.store.store.delivery(&TenantId::from("t"), &d.id).await;
    found.unwrap().unwrap()
}

/// The frozen node's attempt reached the receiver after another attempt took
/// its lease: it appears in the log, marked late, after the attempt that
/// counts, and the delivery stays as that attempt left it.
async fn the_late_attempt_appears_in_the_log(store: TestStore) {
    let e = engine_on(store, None);
    let receiver = held_receiver(500).await;
    let ep = endpoint_at(&e, &receiver.url).await;
    let (d, lease) = e.pending(&ep).await;
    let worker = e.worker(&ep, lease.clone());
    let run = tokio::spawn(worker.run());
    tokio::time::timeout(WAIT, receiver.arrived)
        .await
        .unwrap()
        .unwrap();
    another_attempt_succeeds(&e, &d, &lease).await;
    receiver.answer.send(()).unwrap();
    tokio::time::timeout(WAIT, run).await.unwrap().unwrap();

    let log = attempt_log(&e, &d).await;
    assert_eq!(
        log.len(),
        2,
        "the current attempt and the late one: {log:?}"
    );
    assert!(!log[0].late);
    assert_eq!(log[0].status, Some(200));
    assert!(log[1].late, "the late attempt is marked late");
    assert_eq!((log[1].series, log[1].attempt), (d.series, d.attempts + 1));
    assert_eq!(log[1].status, Some(500), "what the receiver answered it");
    let d = delivery(&e, &d).await;
    assert_eq!(d.state, DeliveryState::Succeeded, "fencing holds");
    assert_eq!(d.attempts, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_late_attempt_appears_in_the_log_on_sled() {
    the_late_attempt_appears_in_the_log(TestStore::sled().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_late_attempt_appears_in_the_log_on_postgres() {
    the_late_attempt_appears_in_the_log(TestStore::postgres().await).await;
}

/// The wall clock jumps an hour while the receiver holds the request: the
/// attempt's duration is what the monotonic clock measured, and its start is
/// still the wall clock's.
async fn durations_are_monotonic(store: TestStore) {
    let e = engine_on(store, None);
    let receiver = held_receiver(200).await;
    let ep = endpoint_at(&e, &receiver.url).await;
    let (d, lease) = e.pending(&ep).await;
    let run = tokio::spawn(e.worker(&ep, lease).run());
    tokio::time::timeout(WAIT, receiver.arrived)
        .await
        .unwrap()
        .unwrap();
    e.clock.advance(Duration::from_secs(3_600));
    receiver.answer.send(()).unwrap();
    tokio::time::timeout(WAIT, run).await.unwrap().unwrap();

    let log = attempt_log(&e, &d).await;
    assert_eq!(log.len(), 1);
    assert_eq!(
        log[0].started_at_ms, START_MS,
        "started_at is the wall clock's"
    );
    assert!(
        log[0].duration_ms < WAIT.as_millis() as u64,
        "a duration from the monotonic clock, not the wall clock's jump: {} ms",
        log[0].duration_ms
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durations_are_monotonic_on_sled() {
    durations_are_monotonic(TestStore::sled().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durations_are_monotonic_on_postgres() {
    durations_are_monotonic(TestStore::postgres().await).await;
}

/// A failure whose outcome is stale (another attempt took the lease) is not
/// counted on the breaker the nodes share: only the attempt holding the
/// lease speaks for the endpoint. The shared breaker exists on PostgreSQL only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_breaker_ignores_a_stale_outcome() {
    let e = engine_on(TestStore::postgres().await, None);
    let receiver = held_receiver(500).await;
    let ep = endpoint_at(&e, &receiver.url).await;
    let (d, lease) = e.pending(&ep).await;
    let mut worker = e.worker(&ep, lease.clone());
    worker.shared = Some(SharedBreaker {
        config: crate::config::BreakerConfig::default(),
        pristine: true,
        probe: false,
    });
    let run = tokio::spawn(worker.run());
    tokio::time::timeout(WAIT, receiver.arrived)
        .await
        .unwrap()
        .unwrap();
    another_attempt_succeeds(&e, &d, &lease).await;
    receiver.answer.send(()).unwrap();
    let report = tokio::time::timeout(WAIT, run).await.unwrap().unwrap();

    assert!(report.shared.is_none(), "nothing was counted: {report:?}");
    let id = EndpointId::from("ep_1");
    let breaker = e.store.store.update_runtime(&id, |r| r.breaker.clone());
    let breaker = breaker.await.unwrap();
    assert_eq!(
        breaker.failure_streak, 0,
        "the stale failure is not counted"
    );
    assert!(breaker.failing_since_ms.is_none());
}
