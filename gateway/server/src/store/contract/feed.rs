//! The change feed: each committed write that changes what is due, or what an
//! endpoint, plugin or tenant is, is published once, after it commits; a write
//! that was refused or changed nothing publishes nothing.

use super::{event, first_attempt, only_lease, payload};
use crate::ids::{EndpointId, TenantId};
use crate::store::testing::{TestStore, endpoint};
use crate::store::{Change, Changes, DeliveryFilter, DeliveryState, Lane, NewPluginVersion};

contract_tests! {
    an_ingest_publishes_one_due_change_per_delivery,
    replays_publish_replayed_for_each_endpoint,
    endpoint_writes_publish_endpoint_changes,
    plugin_writes_publish_plugin_changes,
    tenant_writes_publish_tenant_changes,
}

/// Every change published so far.
fn drain(changes: &mut Changes) -> Vec<Change> {
    std::iter::from_fn(|| changes.try_recv()).collect()
}

fn due(endpoint_id: &str, due_ms: u64) -> Change {
    Change::Due {
        endpoint_id: endpoint_id.into(),
        due_ms,
    }
}

async fn an_ingest_publishes_one_due_change_per_delivery(t: TestStore) {
    let (a, b) = (t.endpoint("t", "ep_a").await, t.endpoint("t", "ep_b").await);
    let mut changes = t.store.changes();
    let p = payload();
    let made = t
        .store
        .ingest(event(&p, vec![&a, &b], Some(("k", "h")), 7))
        .await;
    let deliveries = match made.unwrap() {
        crate::store::IngestOutcome::Created { deliveries, .. } => deliveries,
        other => panic!("{other:?}"),
    };
    assert_eq!(changes.recv().await, Some(due("ep_a", 7)));
    assert_eq!(drain(&mut changes), [due("ep_b", 7)]);
    // Repeats, refusals and a stale endpoint list publish nothing.
    t.store
        .ingest(event(&p, vec![&a, &b], Some(("k", "h")), 8))
        .await
        .unwrap();
    t.store
        .ingest(event(&p, vec![&a], Some(("k", "other")), 8))
        .await
        .unwrap();
    assert_eq!(drain(&mut changes), []);
    t.store.delete_endpoint(&b, 9).await.unwrap();
    assert_eq!(
        drain(&mut changes),
        [Change::endpoint(
            &TenantId::from("t"),
            &EndpointId::from("ep_b")
        )]
    );
    t.store
        .ingest(event(&p, vec![&a, &b], None, 10))
        .await
        .unwrap();
    assert_eq!(drain(&mut changes), []);
    // An attempt's outcome is the worker's to tell, not the feed's.
    let d = &deliveries[0];
    assert_eq!(
        d.endpoint_id, "ep_a",
        "deliveries follow the endpoints' order"
    );
    let lease = only_lease(&t.store, Lane::First, "ep_a", 7).await;
    let written = first_attempt(&t.store, d, &lease, Some(100), 11).await;
    assert_eq!(written, crate::store::WriteResult::Written);
    assert_eq!(drain(&mut changes), []);
}

async fn replays_publish_replayed_for_each_endpoint(t: TestStore) {
    t.dead_with_one_endpoint_restored(2).await;
    let done = super::succeeded(&t, 5).await;
    let mut changes = t.store.changes();
    let dead = DeliveryFilter {
        state: Some(DeliveryState::Dead),
        ..DeliveryFilter::default()
    };
    t.store
        .plan_replay_matching(&TenantId::from("t"), &dead, 6)
        .await
        .unwrap();
    t.store
        .replay_delivery(&TenantId::from("t"), &done.id, false, 6)
        .await
        .unwrap();
    assert_eq!(
        drain(&mut changes),
        [],
        "a dry run and a refusal publish nothing"
    );
    let replayed = Change::Replayed {
        endpoint_id: "ep_a".into(),
    };
    // Two deliveries on one endpoint: one change for it.
    t.store
        .replay_matching(&TenantId::from("t"), &dead, 6)
        .await
        .unwrap();
    assert_eq!(drain(&mut changes), [replayed]);
    t.store
        .replay_delivery(&TenantId::from("t"), &done.id, true, 7)
        .await
        .unwrap();
    let one = Change::Replayed {
        endpoint_id: "ep_1".into(),
    };
    assert_eq!(drain(&mut changes), [one]);
}

async fn endpoint_writes_publish_endpoint_changes(t: TestStore) {
    let mut changes = t.store.changes();
    let ep = endpoint("t", "ep_1");
    let changed = || Change::endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"));
    assert!(t.store.create_endpoint(&ep, 1).await.unwrap().is_created());
    assert!(
        !t.store
            .create_endpoint(&endpoint("t", "ep_2"), 1)
            .await
            .unwrap()
            .is_created()
    );
    assert_eq!(
        drain(&mut changes),
        [changed()],
        "the refused create publishes nothing"
    );
    let read = t.version("t", "ep_1").await;
    let mut patched = ep.clone();
    patched.description = "patched".into();
    t.store.swap_endpoint(&read, &patched).await.unwrap();
    assert_eq!(drain(&mut changes), [changed()]);
    t.store.swap_endpoint(&read, &patched).await.unwrap();
    assert_eq!(drain(&mut changes), [], "a stale swap publishes nothing");
    t.store
        .update_endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"), |e| {
            e.disabled = true
        })
        .await
        .unwrap();
    t.store
        .update_endpoint(&TenantId::from("t"), &EndpointId::from("ep_9"), |e| {
            e.disabled = true
        })
        .await
        .unwrap();
    assert_eq!(drain(&mut changes), [changed()]);
    t.store
        .reset_breaker(&TenantId::from("t"), &EndpointId::from("ep_1"))
        .await
        .unwrap();
    t.store
        .reset_breaker(&TenantId::from("t"), &EndpointId::from("ep_9"))
        .await
        .unwrap();
    let reset = Change::BreakerReset {
        endpoint_id: "ep_1".into(),
    };
    assert_eq!(drain(&mut changes), [reset]);
    t.store.delete_endpoint(&ep, 1).await.unwrap();
    assert_eq!(drain(&mut changes), [changed()]);
}

async fn plugin_writes_publish_plugin_changes(t: TestStore) {
    let mut changes = t.store.changes();
    let changed = || Change::plugin(&TenantId::from("t"), "p");
    let new = NewPluginVersion {
        bytes: b"wasm",
        sha256: "s",
        checks: None,
    };
    for _ in 0..3 {
        t.store
            .add_plugin_version(&TenantId::from("t"), "p", new, 0, 1)
            .await
            .unwrap()
            .unwrap();
    }
    let refused = t
        .store
        .add_plugin_version(&TenantId::from("t"), "q", new, 0, 1)
        .await
        .unwrap();
    assert!(refused.is_none());
    assert_eq!(drain(&mut changes), [changed(), changed(), changed()]);
    t.store
        .update_plugin(&TenantId::from("t"), "p", |p| p.active = 2)
        .await
        .unwrap()
        .unwrap();
    t.store
        .update_plugin(&TenantId::from("t"), "q", |p| p.active = 2)
        .await
        .unwrap();
    assert_eq!(drain(&mut changes), [changed()]);
    t.store
        .prune_plugin_versions(&TenantId::from("t"), "p", 2, &[])
        .await
        .unwrap();
    t.store
        .prune_plugin_versions(&TenantId::from("t"), "p", 2, &[])
        .await
        .unwrap();
    assert_eq!(
        drain(&mut changes),
        [changed()],
        "only the prune that dropped something"
    );
    t.store
        .delete_plugin(&TenantId::from("t"), "p")
        .await
        .unwrap()
        .unwrap();
    t.store
        .delete_plugin(&TenantId::from("t"), "p")
        .await
        .unwrap();
    assert_eq!(drain(&mut changes), [changed()]);
}

async fn tenant_writes_publish_tenant_changes(t: TestStore) {
    let mut changes = t.store.changes();
    let changed = || Change::tenant(&TenantId::from("acme"));
    t.store
        .create_test_tenant(&TenantId::from("acme"), [1; 32], 0)
        .await
        .unwrap()
        .unwrap();
    t.store
        .create_test_tenant(&TenantId::from("acme"), [2; 32], 0)
        .await
        .unwrap();
    assert_eq!(drain(&mut changes), [changed()]);
    t.store
        .rotate_test_tenant_key(&TenantId::from("acme"), [3; 32])
        .await
        .unwrap();
    t.store
        .rotate_test_tenant_key(&TenantId::from("nope"), [4; 32])
        .await
        .unwrap();
    assert_eq!(drain(&mut changes), [changed()]);
    // A subscriber hears only what was published after it subscribed.
    let mut late = t.store.changes();
    assert_eq!(late.try_recv(), None);
    t.store
        .rotate_test_tenant_key(&TenantId::from("acme"), [5; 32])
        .await
        .unwrap();
    assert_eq!(
        (drain(&mut changes), drain(&mut late)),
        (vec![changed()], vec![changed()])
    );
}
