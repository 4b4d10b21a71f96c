//! Attempts that cannot be made as planned: a missing event, a request that cannot
//! be built, a panic. Each drives a real worker over a real store, with the clock
//! in the test's hands.

use crate::ids::TenantId;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;

use super::DeliveryHandle;
use super::attempt_task::{INTERNAL_ERROR_RETRY_MS, MAX_INTERNAL_ERRORS, run_attempt};
use super::testing::engine;
use crate::policy::DeadReason;
use crate::store::Lane;
use crate::store::{DeliveryRecord, DeliveryState};

/// Item 4: a delivery whose event record is missing ends `dead`, named for the
/// cause, instead of sending an empty body.
#[tokio::test]
async fn silent_fallbacks_in_the_worker_a_missing_event_ends_the_delivery() {
    let e = engine(None).await;
    let ep = e.store.endpoint("t", "ep_1").await;
    let (d, entry) = e.pending(&ep).await;
    e.store.lose_event("t", &d.event_id).await;
    e.worker(&ep, entry).run().await;
    let d = e
        .store
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(d.state, DeliveryState::Dead);
    assert_eq!(d.dead_reason, Some(DeadReason::EventMissing.into()));
    assert_eq!(d.attempts, 0, "nothing was sent");
    assert!(e.entry(&d.id).await.is_none());
    let metrics = e.metrics();
    assert!(
        metrics.contains("hookgate_internal_errors_total{kind=\"event_missing\"} 1"),
        "{metrics}"
    );
}

/// Item 4: an endpoint URL no request can be built for ends the delivery
/// `invalid_request` instead of sending an empty request.
#[tokio::test]
async fn silent_fallbacks_in_the_worker_an_unbuildable_request_ends_the_delivery() {
    let e = engine(None).await;
    let mut ep = e.store.endpoint("t", "ep_1").await;
    ep.url = "http://bad host/hook".into();
    let (d, entry) = e.pending(&ep).await;
    e.worker(&ep, entry).run().await;
    let d = e
        .store
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (d.state, d.dead_reason),
        (DeliveryState::Dead, Some(DeadReason::InvalidRequest.into()))
    );
    assert!(
        e.metrics()
            .contains("hookgate_internal_errors_total{kind=\"invalid_request\"} 1")
    );
}

/// Item 5: a panicking attempt releases its lease, reports back, is requeued a
/// minute later without counting as an attempt, and the third panic ends it.
#[tokio::test]
async fn a_panicking_attempt_task_leaks_no_lease_and_ends_after_three_panics() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let e = engine(Some(Arc::new(move |_: &DeliveryRecord| {
        counted.fetch_add(1, Ordering::SeqCst);
        panic!("injected failure");
    })))
    .await;
    let ep = e.store.endpoint("t", "ep_1").await;
    let (d, mut entry) = e.pending(&ep).await;
    let handle = DeliveryHandle::default();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let in_flight = super::in_flight::InFlight::default();
    let node = super::in_flight::InFlight::default();
    for round in 1..=MAX_INTERNAL_ERRORS {
        assert!(handle.mark_in_flight(&d.id));
        let task = tokio::spawn(run_attempt(
            e.worker(&ep, entry.clone()),
            handle.clone(),
            done_tx.clone(),
            node.try_start(8).unwrap(),
            in_flight.try_start(1).unwrap(),
        ));
        task.await.unwrap();
        let (endpoint_id, report, place) = done_rx.recv().await.expect("the scheduler hears back");
        assert_eq!(
            in_flight.free(1),
            0,
            "the endpoint's place goes with the report"
        );
        drop(place);
        assert_eq!(endpoint_id, "ep_1");
        assert_eq!(report.outcome, super::breaker::RawOutcome::Neutral);
        assert!(!handle.is_in_flight(&d.id), "the lease is released");
        assert_eq!(in_flight.free(1), 1, "its in-flight place is given back");
        assert_eq!(node.free(8), 8, "and the node's");
        let now = e
            .store
            .store
            .delivery(&TenantId::from("t"), &d.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(now.attempts, 0, "a panic is not an attempt");
        assert_eq!(now.internal_errors, round);
        if round < MAX_INTERNAL_ERRORS {
            assert_eq!(now.state, DeliveryState::Pending);
            let due = now.next_attempt_at_ms.unwrap();
            assert_eq!(due, e.clock_ms() + INTERNAL_ERROR_RETRY_MS);
            entry = e.entry(&d.id).await.expect("requeued");
            assert_eq!(entry.lane(), Lane::Retry);
            e.clock
                .advance(std::time::Duration::from_millis(INTERNAL_ERROR_RETRY_MS));
        } else {
            assert_eq!(
                (now.state, now.dead_reason),
                (DeliveryState::Dead, Some(DeadReason::InternalError.into()))
            );
            assert!(e.entry(&d.id).await.is_none());
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(
        e.metrics()
            .contains("hookgate_internal_errors_total{kind=\"panic\"} 3")
    );
}
