//! Due work and outcomes: the due scan hands out leases, an outcome is written
//! only under a lease that is still current (else `Stale`, changing nothing),
//! and an attempt that could not be made is settled by `interrupt`.
//!
//! Several tests moved here from `sled/outcomes_tests.rs`, where they set up
//! records by hand; here the same states come from ingest and outcomes.

use super::{first_attempt, only_lease};
use crate::ids::{EndpointId, TenantId};
use crate::policy::DeadReason;
use crate::store::testing::TestStore;
use crate::store::{DeliveryState, Interrupted, Interruption, Lane, WriteResult};

contract_tests! {
    the_due_scan_leases_only_what_is_due_oldest_first,
    an_outcome_moves_the_lease_to_the_retry_lane,
    a_second_outcome_under_the_same_lease_is_stale_and_changes_nothing,
    an_outcome_under_a_lease_an_interrupt_moved_is_stale,
    a_succeeded_delivery_is_logged_and_leaves_the_schedule,
    interrupt_ends_or_requeues_only_the_current_lease,
    internal_errors_end_the_delivery_at_their_max,
}

async fn the_due_scan_leases_only_what_is_due_oldest_first(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let mut ids = Vec::new();
    for now in [30, 10, 20] {
        ids.push((now, t.ingest("t", &[&ep], now).await.remove(0).id));
    }
    ids.sort();
    // Before any is leased: a backend that claims moves a leased entry's due
    // time to when its lease expires.
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_1"), None)
            .await
            .unwrap(),
        Some(10)
    );
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_1"), Some(20))
            .await
            .unwrap(),
        Some(30)
    );
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_1"), Some(30))
            .await
            .unwrap(),
        None
    );
    let due = t
        .store
        .due_entries(Lane::First, &EndpointId::from("ep_1"), 20, 10)
        .await
        .unwrap();
    let got: Vec<_> = due.iter().map(|l| (l.due_ms(), l.delivery_id())).collect();
    let want: Vec<_> = ids[..2].iter().map(|(at, id)| (*at, id.as_str())).collect();
    assert_eq!(got, want, "due at or before now, oldest first");
    assert!(
        due.iter()
            .all(|l| l.endpoint_id() == "ep_1" && l.lane() == Lane::First)
    );
    assert_eq!(
        t.store
            .due_entries(Lane::First, &EndpointId::from("ep_1"), 30, 1)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        t.store
            .due_entries(Lane::First, &EndpointId::from("ep_2"), 30, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let d = t
        .store
        .due_delivery(&TenantId::from("t"), &due[0])
        .await
        .unwrap();
    assert_eq!(
        d.map(|d| d.id),
        Some(ids[0].1.clone()),
        "a current lease yields its delivery"
    );
}

/// Moved from `sled/outcomes_tests.rs`, with the test that an entry already
/// attempted yields nothing.
async fn an_outcome_moves_the_lease_to_the_retry_lane(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 10).await.remove(0);
    let first = only_lease(&t.store, Lane::First, "ep_1", 10).await;
    let written = first_attempt(&t.store, &d, &first, Some(1011), 11).await;
    assert_eq!(written, WriteResult::Written);
    assert!(
        t.store
            .due_entries(Lane::First, &EndpointId::from("ep_1"), 2000, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        t.store
            .due_entries(Lane::Retry, &EndpointId::from("ep_1"), 1010, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // The retry never starts early from the old lease, which leaves it be.
    assert!(
        t.store
            .due_delivery(&TenantId::from("t"), &first)
            .await
            .unwrap()
            .is_none()
    );
    let retry = only_lease(&t.store, Lane::Retry, "ep_1", 1011).await;
    assert_eq!((retry.due_ms(), retry.delivery_id()), (1011, d.id.as_str()));
    assert!(
        t.store
            .due_delivery(&TenantId::from("t"), &retry)
            .await
            .unwrap()
            .is_some()
    );
    let stored = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.attempts, stored.next_attempt_at_ms),
        (1, Some(1011))
    );
    assert_eq!(stored.state, DeliveryState::Pending);
}

async fn a_second_outcome_under_the_same_lease_is_stale_and_changes_nothing(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 10).await.remove(0);
    let lease = only_lease(&t.store, Lane::First, "ep_1", 10).await;
    let retry = first_attempt(&t.store, &d, &lease, Some(1011), 11).await;
    assert_eq!(retry, WriteResult::Written);
    let before = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    // Another worker holding the same lease reports a success.
    let again = first_attempt(&t.store, &d, &lease, None, 12).await;
    assert_eq!(again, WriteResult::Stale);
    let after = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        serde_json::to_value(&after).unwrap(),
        serde_json::to_value(&before).unwrap()
    );
    assert_eq!(
        t.store
            .attempt_log(&TenantId::from("t"), &d.id)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        t.store
            .due_entries(Lane::Retry, &EndpointId::from("ep_1"), 2000, 10)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// Moved from `sled/outcomes_tests.rs` (an outcome for an entry already
/// consumed): the requeue leaves series and attempts as they were, so only the
/// lease itself tells that the outcome is late.
async fn an_outcome_under_a_lease_an_interrupt_moved_is_stale(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 10).await.remove(0);
    let lease = only_lease(&t.store, Lane::First, "ep_1", 10).await;
    let panicked = Interruption::InternalError {
        retry_at_ms: 500,
        max: 3,
    };
    t.store
        .interrupt(&TenantId::from("t"), &lease, 11, panicked)
        .await
        .unwrap();
    let requeued = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((requeued.series, requeued.attempts), (d.series, d.attempts));
    let late = first_attempt(&t.store, &d, &lease, Some(1011), 12).await;
    assert_eq!(late, WriteResult::Stale);
    let now = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(now.next_attempt_at_ms, Some(500), "the requeue stands");
    assert!(
        t.store
            .attempt_log(&TenantId::from("t"), &d.id)
            .await
            .unwrap()
            .is_empty()
    );
    let due = t
        .store
        .due_entries(Lane::Retry, &EndpointId::from("ep_1"), 1011, 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 1, "no retry at 1011 was scheduled");
}

async fn a_succeeded_delivery_is_logged_and_leaves_the_schedule(t: TestStore) {
    let d = super::succeeded(&t, 50).await;
    assert_eq!(
        (d.state, d.attempts, d.updated_at_ms),
        (DeliveryState::Succeeded, 1, 50)
    );
    let log = t
        .store
        .attempt_log(&TenantId::from("t"), &d.id)
        .await
        .unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].series, log[0].status), (1, Some(200)));
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_1"), None)
            .await
            .unwrap(),
        None
    );
}

async fn interrupt_ends_or_requeues_only_the_current_lease(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let (a, b) = (
        t.ingest("t", &[&ep], 0).await.remove(0),
        t.ingest("t", &[&ep], 1).await.remove(0),
    );
    let leases = t
        .store
        .due_entries(Lane::First, &EndpointId::from("ep_1"), 1, 10)
        .await
        .unwrap();
    let ended = Interruption::End(DeadReason::EventMissing);
    let done = t
        .store
        .interrupt(&TenantId::from("t"), &leases[0], 5, ended)
        .await
        .unwrap();
    assert_eq!(done, Interrupted::Ended(DeadReason::EventMissing));
    let a = t
        .store
        .delivery(&TenantId::from("t"), &a.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((a.state, a.updated_at_ms), (DeliveryState::Dead, 5));
    assert_eq!(a.dead_reason, Some(DeadReason::EventMissing.into()));
    let again = t
        .store
        .interrupt(&TenantId::from("t"), &leases[0], 6, ended)
        .await
        .unwrap();
    assert_eq!(
        again,
        Interrupted::NotCurrent,
        "an ended lease is not current"
    );

    let panicked = Interruption::InternalError {
        retry_at_ms: 500,
        max: 3,
    };
    let done = t
        .store
        .interrupt(&TenantId::from("t"), &leases[1], 5, panicked)
        .await
        .unwrap();
    assert_eq!(done, Interrupted::Requeued { due_ms: 500 });
    let b = t
        .store
        .delivery(&TenantId::from("t"), &b.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (b.state, b.attempts, b.internal_errors),
        (DeliveryState::Pending, 0, 1)
    );
    assert_eq!(
        only_lease(&t.store, Lane::Retry, "ep_1", 500)
            .await
            .due_ms(),
        500
    );
    assert_eq!(
        t.store
            .interrupt(&TenantId::from("t"), &leases[1], 6, panicked)
            .await
            .unwrap(),
        Interrupted::NotCurrent
    );
}

async fn internal_errors_end_the_delivery_at_their_max(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 0).await.remove(0);
    let mut lease = only_lease(&t.store, Lane::First, "ep_1", 0).await;
    for retry_at in [100, 200] {
        let what = Interruption::InternalError {
            retry_at_ms: retry_at,
            max: 3,
        };
        let done = t
            .store
            .interrupt(&TenantId::from("t"), &lease, retry_at - 1, what)
            .await
            .unwrap();
        assert_eq!(done, Interrupted::Requeued { due_ms: retry_at });
        lease = only_lease(&t.store, Lane::Retry, "ep_1", retry_at).await;
    }
    let what = Interruption::InternalError {
        retry_at_ms: 300,
        max: 3,
    };
    let done = t
        .store
        .interrupt(&TenantId::from("t"), &lease, 250, what)
        .await
        .unwrap();
    assert_eq!(done, Interrupted::Ended(DeadReason::InternalError));
    let d = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((d.state, d.internal_errors), (DeliveryState::Dead, 3));
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_1"), None)
            .await
            .unwrap(),
        None,
        "nothing left to serve"
    );
}
