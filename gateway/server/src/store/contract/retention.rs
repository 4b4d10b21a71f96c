//! Retention: finished work past its retention goes, with its event once every
//! delivery is gone; pending work nothing will serve is ended; the sweep goes
//! on from its opaque cursor until it wraps.

use crate::ids::{EndpointId, TenantId};
use crate::policy::DeadReason;
use crate::store::testing::TestStore;
use crate::store::{
    AttemptQuery, AttemptScope, DeliveryState, Interruption, Lane, RetentionRules, SweepCursor,
};

contract_tests! {
    succeeded_deliveries_past_retention_go_with_their_event,
    dead_deliveries_go_after_the_dlq_retention_unless_it_is_zero,
    pending_deliveries_on_a_deleted_endpoint_are_ended_by_retention,
    pending_deliveries_on_a_long_disabled_endpoint_are_ended,
    a_sweep_goes_on_from_its_opaque_cursor_until_it_wraps,
    a_cursor_the_store_did_not_make_is_refused,
}

fn rules(now_ms: u64) -> RetentionRules {
    RetentionRules {
        now_ms,
        retention_ms: 1_000,
        dlq_retention_ms: 1_000,
    }
}

/// The ids of tenant `t`'s listed attempts (all, or one endpoint's).
async fn listed(t: &TestStore, endpoint: Option<&str>) -> Vec<String> {
    let scope = match endpoint {
        Some(ep) => AttemptScope::Endpoint(EndpointId::from(ep)),
        None => AttemptScope::Tenant,
    };
    let query = AttemptQuery {
        limit: 50,
        ..AttemptQuery::default()
    };
    let page = t
        .store
        .list_attempts(&TenantId::from("t"), &scope, &query, |_| true)
        .await
        .unwrap();
    page.data.iter().map(|a| a.id.to_string()).collect()
}

async fn succeeded_deliveries_past_retention_go_with_their_event(t: TestStore) {
    let d = super::succeeded(&t, 50).await;
    let log = t
        .store
        .attempt_log(&TenantId::from("t"), &d.id)
        .await
        .unwrap();
    let id = log[0].id.clone().expect("written with an id");
    assert_eq!(listed(&t, None).await, vec![id.to_string()]);
    assert_eq!(listed(&t, Some("ep_1")).await, vec![id.to_string()]);
    assert!(listed(&t, Some("ep_2")).await.is_empty());
    let (kept, _) = t
        .store
        .sweep_retention(None, 100, rules(1_049))
        .await
        .unwrap();
    assert_eq!(kept, Default::default(), "not yet past retention");
    assert!(
        t.store
            .delivery(&TenantId::from("t"), &d.id)
            .await
            .unwrap()
            .is_some()
    );
    let (swept, _) = t
        .store
        .sweep_retention(None, 100, rules(1_050))
        .await
        .unwrap();
    assert_eq!((swept.deliveries_removed, swept.events_removed), (1, 1));
    assert!(swept.moved.is_empty(), "a delivered one moves no count");
    assert!(
        t.store
            .delivery(&TenantId::from("t"), &d.id)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        t.store
            .event(&TenantId::from("t"), &d.event_id)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        t.store
            .attempt_log(&TenantId::from("t"), &d.id)
            .await
            .unwrap()
            .is_empty(),
        "its attempts go too"
    );
    assert!(
        listed(&t, None).await.is_empty() && listed(&t, Some("ep_1")).await.is_empty(),
        "and their index entries"
    );
    let tenant = TenantId::from("t");
    assert!(t.store.attempt(&tenant, &id).await.unwrap().is_none());
}

async fn dead_deliveries_go_after_the_dlq_retention_unless_it_is_zero(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let (a, b) = (
        t.ingest("t", &[&ep], 0).await.remove(0),
        t.ingest("t", &[&ep], 0).await,
    );
    let pending = &b[0];
    let lease = t
        .store
        .due_entries(Lane::First, &EndpointId::from("ep_1"), 0, 10)
        .await
        .unwrap();
    let lease = lease.into_iter().find(|l| l.delivery_id() == a.id).unwrap();
    let end = Interruption::End(DeadReason::InvalidRequest);
    t.store
        .interrupt(&TenantId::from("t"), &lease, 100, end)
        .await
        .unwrap();
    let forever = RetentionRules {
        dlq_retention_ms: 0,
        ..rules(1_000_000)
    };
    let (kept, _) = t.store.sweep_retention(None, 100, forever).await.unwrap();
    assert_eq!(
        kept,
        Default::default(),
        "a zero DLQ retention keeps the dead"
    );
    let (swept, _) = t
        .store
        .sweep_retention(None, 100, rules(1_100))
        .await
        .unwrap();
    assert_eq!((swept.deliveries_removed, swept.events_removed), (1, 1));
    let moved = [("t".to_owned(), (0, -1))].into_iter().collect();
    assert_eq!(swept.moved, moved, "the dead one leaves the DLQ count");
    assert!(
        t.store
            .delivery(&TenantId::from("t"), &a.id)
            .await
            .unwrap()
            .is_none()
    );
    // Pending work on a live endpoint is never touched, however old.
    let p = t
        .store
        .delivery(&TenantId::from("t"), &pending.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(p.state, DeliveryState::Pending);
    assert!(
        t.store
            .event(&TenantId::from("t"), &p.event_id)
            .await
            .unwrap()
            .is_some()
    );
}

/// Moved from `sled/endpoints_tests.rs`: a pending delivery whose endpoint is
/// gone (a crash in the middle of `delete_endpoint`) is ended, off the schedule.
async fn pending_deliveries_on_a_deleted_endpoint_are_ended_by_retention(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 5).await.remove(0);
    t.crash_mid_delete("t", "ep_1").await;
    let (stats, _) = t.store.sweep_retention(None, 100, rules(6)).await.unwrap();
    assert_eq!(stats.deliveries_ended, 1);
    let moved = [("t".to_owned(), (-1, 1))].into_iter().collect();
    assert_eq!(stats.moved, moved, "pending to the DLQ count");
    let d = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(d.state, DeliveryState::Dead);
    assert_eq!(d.dead_reason, Some(DeadReason::EndpointDeleted.into()));
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_1"), None)
            .await
            .unwrap(),
        None
    );
    let (again, _) = t.store.sweep_retention(None, 100, rules(7)).await.unwrap();
    assert_eq!(again, Default::default(), "ended once");
}

async fn pending_deliveries_on_a_long_disabled_endpoint_are_ended(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 0).await.remove(0);
    let disable = |e: &mut crate::store::EndpointRecord| {
        e.disabled = true;
        e.disabled_at_ms = Some(100);
    };
    assert!(
        t.store
            .update_endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"), disable)
            .await
            .unwrap()
    );
    let (kept, _) = t
        .store
        .sweep_retention(None, 100, rules(1_099))
        .await
        .unwrap();
    assert_eq!(
        kept.deliveries_ended, 0,
        "disabled for less than the DLQ retention"
    );
    let (stats, _) = t
        .store
        .sweep_retention(None, 100, rules(1_100))
        .await
        .unwrap();
    assert_eq!(stats.deliveries_ended, 1);
    let d = t
        .store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(d.dead_reason, Some(DeadReason::EndpointDisabled.into()));
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_1"), None)
            .await
            .unwrap(),
        None
    );
}

/// Moved from `sled/retention.rs`, now checking that every batch's work is
/// done: five dead events, two per step, all gone once the sweep wraps.
async fn a_sweep_goes_on_from_its_opaque_cursor_until_it_wraps(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    for now in 0..5 {
        t.ingest("t", &[&ep], now).await;
    }
    t.store.delete_endpoint(&ep, 10).await.unwrap();
    let (mut cursor, mut steps, mut removed) = (None, 0, 0);
    loop {
        let (stats, next) = t
            .store
            .sweep_retention(cursor, 2, rules(1_010))
            .await
            .unwrap();
        assert!(stats.events_removed <= 2, "{stats:?}");
        removed += stats.events_removed;
        steps += 1;
        let Some(next) = next else { break };
        cursor = Some(next);
        assert!(steps < 10, "the sweep never wrapped");
    }
    assert_eq!(removed, 5);
    assert!(steps >= 3, "two events per step take three steps");
    let all = crate::store::DeliveryFilter::default();
    let left = t
        .store
        .list_deliveries(&TenantId::from("t"), &all, |_| true, 10, None)
        .await
        .unwrap();
    assert!(left.data.is_empty());
}

/// Moved from `sled/retention.rs`.
async fn a_cursor_the_store_did_not_make_is_refused(t: TestStore) {
    let bad = SweepCursor("not hex".to_owned());
    let e = t.store.sweep_retention(Some(bad), 2, rules(10)).await;
    assert!(
        matches!(&e, Err(e) if e.failure() == crate::store::Failure::Corrupt),
        "{e:?}"
    );
}
