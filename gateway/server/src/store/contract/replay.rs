//! Replays: one delivery as a new series (a succeeded one only with `force`),
//! or every dead delivery a filter matches, planned first by a dry run; an
//! outcome under a lease of the series a replay replaced is `Stale`.

use super::{first_attempt, only_lease};
use crate::ids::{DeliveryId, EndpointId, TenantId};
use crate::policy::DeadReason;
use crate::store::testing::TestStore;
use crate::store::{DeliveryFilter, DeliveryState, Interruption, Lane, ReplayOutcome, WriteResult};

contract_tests! {
    a_dead_delivery_replays_as_a_new_series_due_now,
    replay_refuses_pending_unknown_and_gone_and_needs_force_for_a_success,
    an_outcome_from_the_series_a_replay_replaced_is_stale,
    a_dry_run_counts_what_the_replay_then_replays_and_writes_nothing,
    bulk_replay_never_schedules_work_for_a_deleted_endpoint,
}

fn dead() -> DeliveryFilter {
    DeliveryFilter {
        state: Some(DeliveryState::Dead),
        ..DeliveryFilter::default()
    }
}

async fn a_dead_delivery_replays_as_a_new_series_due_now(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 0).await.remove(0);
    let lease = only_lease(&t.store, Lane::First, "ep_1", 0).await;
    let give_up = Interruption::End(DeadReason::InvalidRequest);
    t.store
        .interrupt(&TenantId::from("t"), &lease, 1, give_up)
        .await
        .unwrap();
    let ReplayOutcome::Replayed(r, DeliveryState::Dead) = t
        .store
        .replay_delivery(&TenantId::from("t"), &d.id, false, 40)
        .await
        .unwrap()
    else {
        panic!("a dead delivery replays, and says it was dead");
    };
    let stored = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    for got in [&*r, &stored] {
        assert_eq!(
            (got.id.as_str(), got.state),
            (d.id.as_str(), DeliveryState::Pending)
        );
        assert_eq!((got.series, got.attempts, &got.dead_reason), (2, 0, &None));
        assert_eq!(got.next_attempt_at_ms, Some(40));
    }
    let lease = only_lease(&t.store, Lane::First, "ep_1", 40).await;
    assert_eq!((lease.delivery_id(), lease.due_ms()), (d.id.as_str(), 40));
    // The new series is served like a first attempt.
    assert_eq!(
        first_attempt(&t.store, &stored, &lease, None, 41).await,
        WriteResult::Written
    );
}

async fn replay_refuses_pending_unknown_and_gone_and_needs_force_for_a_success(t: TestStore) {
    let done = super::succeeded(&t, 5).await;
    let replay = |id: String, force| {
        let store = t.store.clone();
        async move {
            store
                .replay_delivery(
                    &TenantId::from("t"),
                    &DeliveryId::from(id.as_str()),
                    force,
                    9,
                )
                .await
                .unwrap()
        }
    };
    assert!(matches!(
        replay(done.id.to_string(), false).await,
        ReplayOutcome::NeedsForce
    ));
    let unchanged = t
        .store
        .delivery(&TenantId::from("t"), &done.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (unchanged.state, unchanged.series),
        (DeliveryState::Succeeded, 1)
    );
    assert!(matches!(
        replay(done.id.to_string(), true).await,
        ReplayOutcome::Replayed(_, DeliveryState::Succeeded)
    ));
    assert!(matches!(
        replay(done.id.to_string(), true).await,
        ReplayOutcome::Pending
    ));
    assert!(matches!(
        replay("dlv_nope".into(), true).await,
        ReplayOutcome::NotFound
    ));
    let theirs = t
        .store
        .replay_delivery(&TenantId::from("u"), &done.id, true, 9)
        .await
        .unwrap();
    assert!(
        matches!(theirs, ReplayOutcome::NotFound),
        "another tenant's delivery"
    );

    let ep = t
        .store
        .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
        .await
        .unwrap()
        .unwrap();
    t.store.delete_endpoint(&ep, 10).await.unwrap();
    assert!(matches!(
        replay(done.id.to_string(), true).await,
        ReplayOutcome::EndpointGone
    ));
    let d = t
        .store
        .delivery(&TenantId::from("t"), &done.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (d.state, d.series),
        (DeliveryState::Dead, 2),
        "ended by the delete, not replayed"
    );
}

/// The replay lands at the same due time, so the old lease names the very
/// schedule entry the new series uses: only the series tells them apart.
async fn an_outcome_from_the_series_a_replay_replaced_is_stale(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 0).await.remove(0);
    let old = only_lease(&t.store, Lane::First, "ep_1", 0).await;
    let give_up = Interruption::End(DeadReason::InvalidRequest);
    t.store
        .interrupt(&TenantId::from("t"), &old, 0, give_up)
        .await
        .unwrap();
    t.store
        .replay_delivery(&TenantId::from("t"), &d.id, false, 0)
        .await
        .unwrap();
    let replayed = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    // A worker still holding series 1 reports its outcome.
    assert_eq!(
        first_attempt(&t.store, &d, &old, None, 3).await,
        WriteResult::Stale
    );
    let now = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        serde_json::to_value(&now).unwrap(),
        serde_json::to_value(&replayed).unwrap()
    );
    assert!(
        t.store
            .attempt_log(&TenantId::from("t"), &d.id)
            .await
            .unwrap()
            .is_empty()
    );
    let current = only_lease(&t.store, Lane::First, "ep_1", 0).await;
    assert_eq!(
        first_attempt(&t.store, &replayed, &current, None, 3).await,
        WriteResult::Written
    );
}

/// Moved from `sled/replay.rs`: a dry run plans like the replay (dead,
/// matching, endpoint still there) and writes nothing.
async fn a_dry_run_counts_what_the_replay_then_replays_and_writes_nothing(t: TestStore) {
    t.dead_with_one_endpoint_restored(2).await;
    let list = || async {
        let all = DeliveryFilter::default();
        let tenant = TenantId::from("t");
        let page = t.store.list_deliveries(&tenant, &all, |_| true, 10, None);
        let page = page.await.unwrap();
        serde_json::to_value(&page.data).unwrap()
    };
    let before = list().await;
    let planned = t
        .store
        .plan_replay_matching(&TenantId::from("t"), &dead(), 2)
        .await
        .unwrap();
    assert_eq!(planned.replayed, 2);
    assert_eq!(planned.endpoints.iter().collect::<Vec<_>>(), ["ep_a"]);
    assert_eq!(list().await, before, "a dry run changes no delivery");
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_a"), None)
            .await
            .unwrap(),
        None,
        "and schedules nothing"
    );

    let replayed = t
        .store
        .replay_matching(&TenantId::from("t"), &dead(), 2)
        .await
        .unwrap();
    assert_eq!(
        (replayed.replayed, &replayed.endpoints),
        (planned.replayed, &planned.endpoints)
    );
    let due = t
        .store
        .due_entries(Lane::First, &EndpointId::from("ep_a"), 2, 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 2);
    let again = t
        .store
        .plan_replay_matching(&TenantId::from("t"), &dead(), 3)
        .await
        .unwrap();
    assert_eq!(again.replayed, 0, "nothing dead is left to replay on ep_a");
}

/// Moved from `sled/endpoints_tests.rs`.
async fn bulk_replay_never_schedules_work_for_a_deleted_endpoint(t: TestStore) {
    t.dead_with_one_endpoint_restored(1).await;
    let by_type = DeliveryFilter {
        event_type: Some("order.paid".into()),
        ..dead()
    };
    let other_type = DeliveryFilter {
        event_type: Some("order.refunded".into()),
        ..dead()
    };
    assert_eq!(
        t.store
            .replay_matching(&TenantId::from("t"), &other_type, 2)
            .await
            .unwrap()
            .replayed,
        0
    );
    let replayed = t
        .store
        .replay_matching(&TenantId::from("t"), &by_type, 2)
        .await
        .unwrap();
    assert_eq!(replayed.replayed, 1);
    assert_eq!(replayed.endpoints.into_iter().collect::<Vec<_>>(), ["ep_a"]);
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_b"), None)
            .await
            .unwrap(),
        None
    );
    let still_dead = t
        .store
        .list_deliveries(&TenantId::from("t"), &dead(), |_| true, 10, None)
        .await
        .unwrap();
    assert_eq!(still_dead.data.len(), 1);
    assert_eq!(still_dead.data[0].endpoint_id, "ep_b");
}
