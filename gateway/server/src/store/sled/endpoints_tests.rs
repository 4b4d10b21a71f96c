//! SledStore-level tests of endpoint changes racing ingest, outcomes, replays and
//! retention, each interleaving made explicit.

use super::*;
use crate::policy::VerdictKind;
use crate::store::testing::{TestStore, schedule_len};
use crate::store::*;
use crate::store::{
    AttemptRecord, AttemptWrite, BreakerState, DeliveryFilter, IngestOutcome, NewEvent,
    ReplayOutcome, RetentionRules,
};

fn success(series: u32) -> AttemptRecord {
    AttemptRecord {
        series,
        attempt: 1,
        started_at_ms: 10,
        duration_ms: 1,
        status: Some(200),
        error_kind: None,
        response_snippet: String::new(),
        verdict: VerdictKind::Delivered.into(),
        delay_ms: None,
        next_attempt_at_ms: None,
        dead_reason: None,
        decided_by: "builtin".into(),
        policy: "builtin:default".into(),
    }
}

fn rules(now_ms: u64) -> RetentionRules {
    RetentionRules {
        now_ms,
        retention_ms: 1000,
        dlq_retention_ms: 1000,
    }
}

#[tokio::test]
async fn a_swap_racing_a_delete_does_not_bring_the_endpoint_back() {
    let t = TestStore::new();
    let store = &t.sled;
    t.endpoint("t", "ep_1").await;
    let read = store.endpoint_version("t", "ep_1").unwrap().unwrap();
    let mut ep = read.record.clone();
    ep.description = "patched".into();
    // The DELETE lands between the PATCH's read and its write.
    store.delete_endpoint(&ep, 1).await.unwrap();
    assert_eq!(store.swap_endpoint(&read, &ep).await.unwrap(), Swap::Gone);
    assert!(store.endpoint("t", "ep_1").unwrap().is_none());
}

/// Item 2: a PATCH or rotation made from a stale read must not undo a breaker
/// save or a 410 disable that landed in between.
#[tokio::test]
async fn whole_record_write_back_never_undoes_a_concurrent_change() {
    let t = TestStore::new();
    let store = &t.sled;
    t.endpoint("t", "ep_1").await;
    let read = store.endpoint_version("t", "ep_1").unwrap().unwrap();
    // The breaker opens (or a 410 disables the endpoint) after the read.
    store
        .update_endpoint("t", "ep_1", |e| {
            e.breaker.state = BreakerState::Open.into();
            e.disabled = true;
        })
        .await
        .unwrap();
    let mut patched = read.record.clone();
    patched.description = "patched".into();
    assert_eq!(
        store.swap_endpoint(&read, &patched).await.unwrap(),
        Swap::Changed
    );
    // The caller reads again and redoes its change on the current record.
    let again = store.endpoint_version("t", "ep_1").unwrap().unwrap();
    let mut patched = again.record.clone();
    patched.description = "patched".into();
    assert_eq!(
        store.swap_endpoint(&again, &patched).await.unwrap(),
        Swap::Swapped
    );
    let now = store.endpoint("t", "ep_1").unwrap().unwrap();
    assert_eq!(
        (now.description.as_str(), now.breaker.state, now.disabled),
        ("patched", BreakerState::Open.into(), true)
    );
}

/// Item 1: an ingest that read the endpoint list before a DELETE writes nothing
/// for the deleted endpoint.
#[tokio::test]
async fn orphaned_pending_deliveries_are_never_written_by_a_racing_ingest() {
    let t = TestStore::new();
    let store = &t.sled;
    let ep = t.endpoint("t", "ep_1").await;
    let read_before_delete = store.endpoints_of("t").unwrap();
    store.delete_endpoint(&ep, 1).await.unwrap();
    let payload = serde_json::value::RawValue::from_string("{}".into()).unwrap();
    let outcome = store
        .ingest(NewEvent {
            tenant_id: "t",
            event_type: "order.paid",
            payload: &payload,
            idempotency: Some(("k", "h".into())),
            endpoints: read_before_delete.iter().collect(),
            now_ms: 2,
        })
        .await
        .unwrap();
    assert!(matches!(outcome, IngestOutcome::EndpointsChanged));
    assert_eq!(schedule_len(store, "ep_1"), 0);
    let page = store
        .list_deliveries("t", &DeliveryFilter::default(), |_| true, 10, None)
        .unwrap();
    assert!(page.data.is_empty());
}

/// Item 1: a pending delivery whose endpoint is gone (left by a crash or an older
/// version) is ended by retention, with its schedule entry.
#[tokio::test]
async fn orphaned_pending_deliveries_are_ended_by_retention() {
    let t = TestStore::new();
    let store = &t.sled;
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 5).await.remove(0);
    store
        .inner
        .records
        .remove(keys::endpoint("t", "ep_1"))
        .unwrap();
    let (stats, _) = store.sweep_retention(None, 100, rules(6)).await.unwrap();
    assert_eq!(stats.deliveries_ended, 1);
    let d = store.delivery("t", &d.id).unwrap().unwrap();
    assert_eq!(d.state, DeliveryState::Dead);
    assert_eq!(d.dead_reason, Some(DeadReason::EndpointDeleted.into()));
    assert_eq!(schedule_len(store, "ep_1"), 0);
}

/// Item 2: DELETE's batch was planned from reads; an outcome landing before it is
/// applied keeps its `succeeded`.
#[tokio::test]
async fn whole_record_write_back_delete_keeps_a_racing_outcome() {
    let t = TestStore::new();
    let store = &t.sled;
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 5).await.remove(0);
    let planned = store.plan_schedule_end("t", "ep_1", 6).unwrap();
    assert_eq!(planned.len(), 1);
    let mut done = d.clone();
    done.state = DeliveryState::Succeeded;
    done.attempts = 1;
    done.next_attempt_at_ms = None;
    let entry = Lease(keys::ScheduleKey {
        lane: Lane::First,
        endpoint_id: "ep_1".into(),
        due_ms: 5,
        delivery_id: d.id.clone(),
    });
    let written = store
        .record_attempt(AttemptWrite {
            delivery: &done,
            expected_series: 1,
            expected_attempts: 0,
            attempt: &success(1),
            lease: &entry,
            next_due_ms: None,
            disable_endpoint: None,
        })
        .await
        .unwrap();
    assert_eq!(written, WriteResult::Written);
    let (groups, _): (Vec<_>, Vec<bool>) = planned.into_iter().unzip();
    assert_eq!(
        store.commit_each(groups).await.unwrap(),
        [WriteResult::Stale]
    );
    let d = store.delivery("t", &d.id).unwrap().unwrap();
    assert_eq!(d.state, DeliveryState::Succeeded);
    assert_eq!(d.dead_reason, None);
}

/// Item 2: a delete ends every pending delivery, across several batches.
#[tokio::test]
async fn delete_ends_pending_deliveries_in_bounded_batches() {
    let t = TestStore::new();
    let store = &t.sled;
    let ep = t.endpoint("t", "ep_1").await;
    for i in 0..(DELETE_BATCH + 10) {
        t.ingest("t", &[&ep], i as u64).await;
    }
    let ended = store.delete_endpoint(&ep, 1_000).await.unwrap();
    assert_eq!(ended, DELETE_BATCH + 10);
    assert_eq!(schedule_len(store, "ep_1"), 0);
    let pending = DeliveryFilter {
        state: Some(DeliveryState::Pending),
        ..DeliveryFilter::default()
    };
    let page = store
        .list_deliveries("t", &pending, |_| true, 10, None)
        .unwrap();
    assert!(page.data.is_empty());
}

/// Item 2: retention planned to prune a dead delivery; a replay landing first
/// keeps the delivery (now pending again) and its event.
#[tokio::test]
async fn whole_record_write_back_retention_keeps_a_racing_replay() {
    let t = TestStore::new();
    let store = &t.sled;
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 0).await.remove(0);
    let mut dead = store.delivery("t", &d.id).unwrap().unwrap();
    dead.end(crate::policy::DeadReason::GiveUp, 1);
    let mut w = crate::store::sled::Writes::default();
    for lane in Lane::ALL {
        w.remove(
            keys::ScheduleKey {
                lane,
                endpoint_id: "ep_1".into(),
                due_ms: 0,
                delivery_id: d.id.clone(),
            }
            .encode(),
        );
    }
    w.insert(keys::delivery("t", &d.id), records::encode(&dead));
    store.commit(w).await.unwrap();
    let ev_key = keys::event("t", &d.event_id);
    let ev_bytes = store.inner.records.get(&ev_key).unwrap().unwrap();
    let mut cache = std::collections::HashMap::new();
    let (plan, stats) = store
        .plan_event(&ev_key, &ev_bytes, &rules(5_000), &mut cache)
        .unwrap();
    assert_eq!((stats.deliveries_removed, stats.events_removed), (1, 1));
    let replayed = store
        .replay_delivery("t", &d.id, false, 5_000)
        .await
        .unwrap();
    assert!(matches!(replayed, ReplayOutcome::Replayed(_)));
    assert_eq!(store.commit(plan).await.unwrap(), WriteResult::Stale);
    let d = store.delivery("t", &d.id).unwrap().unwrap();
    assert_eq!((d.state, d.series), (DeliveryState::Pending, 2));
    assert!(store.inner.records.contains_key(&ev_key).unwrap());
}

/// Item 1: bulk replay skips deliveries whose endpoint is gone.
#[tokio::test]
async fn bulk_replay_never_schedules_work_for_a_deleted_endpoint() {
    let t = TestStore::new();
    let store = &t.sled;
    t.dead_with_one_endpoint_restored(1).await;
    let dead = DeliveryFilter {
        state: Some(DeliveryState::Dead),
        ..DeliveryFilter::default()
    };
    let replayed = store.replay_matching("t", &dead, 2).await.unwrap();
    assert_eq!(replayed.replayed, 1);
    assert_eq!(replayed.endpoints.into_iter().collect::<Vec<_>>(), ["ep_a"]);
    assert_eq!(schedule_len(store, "ep_b"), 0);
}

#[test]
fn durations_have_an_upper_bound_and_an_endpoint_loads_its_clamped_policy() {
    use crate::policy::{MAX_DURATION_MS, PolicySpec};
    use serde_json::json;

    let endpoint: EndpointRecord = serde_json::from_value(json!({
        "id": "ep_durations_bound", "tenant_id": "acme", "url": "https://example.com/",
        "description": "", "event_types": ["*"],
        "policy": {"base_ms": "9000y", "max_delay_ms": "9000y", "retry_window_ms": "9000y"},
        "plugin": null, "timeout_ms": 15_000, "max_in_flight": 16, "rate_limit_per_s": null,
        "disabled": false, "disabled_reason": null, "secrets": [], "created_at_ms": 0
    }))
    .unwrap();
    let (policy, label) = endpoint.effective_policy(&PolicySpec::default());
    // The endpoint's own policy, clamped; not the default that replaced it before.
    assert_eq!(label, "endpoint:default");
    assert_eq!(policy.base_ms(), MAX_DURATION_MS);
    assert_eq!(
        (policy.max_delay_ms, policy.retry_window_ms),
        (MAX_DURATION_MS, MAX_DURATION_MS)
    );
}
