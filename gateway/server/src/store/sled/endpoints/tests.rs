//! Interleavings only sled's planned writes can stage: a delete or retention
//! batch planned from reads, then a racing outcome or replay before it applies.
//! The races every backend must settle are in `store::contract::races`.

use super::*;
use crate::policy::VerdictKind;
use crate::store::DueEntry;
use crate::store::testing::TestStore;
use crate::store::*;
use crate::store::{AttemptRecord, AttemptWrite, ReplayOutcome, RetentionRules};

fn success(series: u32) -> AttemptRecord {
    AttemptRecord {
        id: None,
        of: None,
        sent: None,
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
        node_id: None,
        late: false,
        transform: None,
    }
}

fn rules(now_ms: u64) -> RetentionRules {
    RetentionRules {
        now_ms,
        retention_ms: 1000,
        dlq_retention_ms: 1000,
    }
}

/// Item 2: DELETE's batch was planned from reads; an outcome landing before it is
/// applied keeps its `succeeded`.
#[tokio::test]
async fn whole_record_write_back_delete_keeps_a_racing_outcome() {
    let t = TestStore::new().await;
    let store = &t.embedded();
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 5).await.remove(0);
    let planned = store.plan_schedule_end("t", "ep_1", 6).unwrap();
    assert_eq!(planned.len(), 1);
    let mut done = d.clone();
    done.state = DeliveryState::Succeeded;
    done.attempts = 1;
    done.next_attempt_at_ms = None;
    let entry = Lease(
        DueEntry {
            lane: Lane::First,
            endpoint_id: "ep_1".into(),
            due_ms: 5,
            delivery_id: d.id.clone(),
        },
        0,
        None,
    );
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

/// Item 2: retention planned to prune a dead delivery; a replay landing first
/// keeps the delivery (now pending again) and its event.
#[tokio::test]
async fn whole_record_write_back_retention_keeps_a_racing_replay() {
    let t = TestStore::new().await;
    let store = &t.embedded();
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 0).await.remove(0);
    let mut dead = store.delivery("t", &d.id).unwrap().unwrap();
    dead.end(crate::policy::DeadReason::GiveUp, 1);
    let mut w = crate::store::sled::Writes::default();
    for lane in Lane::ALL {
        w.remove(
            DueEntry {
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
    let ev_bytes = store.records().unwrap().get(&ev_key).unwrap().unwrap();
    let mut cache = std::collections::HashMap::new();
    let (plan, stats) = store
        .plan_event(&ev_key, &ev_bytes, &rules(5_000), &mut cache)
        .unwrap();
    assert_eq!((stats.deliveries_removed, stats.events_removed), (1, 1));
    let replayed = store
        .replay_delivery("t", &d.id, false, 5_000)
        .await
        .unwrap();
    assert!(matches!(replayed, ReplayOutcome::Replayed(..)));
    assert_eq!(store.commit(plan).await.unwrap(), WriteResult::Stale);
    let d = store.delivery("t", &d.id).unwrap().unwrap();
    assert_eq!((d.state, d.series), (DeliveryState::Pending, 2));
    assert!(store.records().unwrap().contains_key(&ev_key).unwrap());
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
    let (policy, label) = PolicySpec::effective_for(
        endpoint.policy.as_ref(),
        &endpoint.tenant_id,
        &endpoint.id,
        &PolicySpec::default(),
    );
    // The endpoint's own policy, clamped; not the default that replaced it before.
    assert_eq!(label, "endpoint:default");
    assert_eq!(policy.base_ms(), MAX_DURATION_MS);
    assert_eq!(
        (policy.max_delay_ms, policy.retry_window_ms),
        (MAX_DURATION_MS, MAX_DURATION_MS)
    );
}
