//! Tenants and endpoints: a tenant id is created once and its API key resolves
//! to it until a rotation; endpoints are created within the tenant's cap,
//! changed by compare-and-swap or in place, and deleted with their pending work
//! ended `endpoint_deleted`.

use crate::ids::{EndpointId, TenantId};
use crate::policy::DeadReason;
use crate::store::testing::{TestStore, endpoint};
use crate::store::{BreakerState, DeliveryFilter, DeliveryState, Swap};

contract_tests! {
    a_tenant_id_is_created_only_once,
    a_rotation_retires_the_old_key_at_once,
    endpoints_are_created_within_the_tenants_cap,
    a_swap_writes_only_over_the_version_it_read,
    an_update_changes_the_endpoint_in_place_and_a_reset_closes_its_breaker,
    a_delete_ends_every_pending_delivery_of_the_endpoint,
}

async fn a_tenant_id_is_created_only_once(t: TestStore) {
    let made = t
        .store
        .create_test_tenant(&TenantId::from("acme"), [1; 32], 5)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((made.id.as_str(), made.created_at_ms), ("acme", 5));
    assert_eq!(made.key_sha256, hex::encode([1; 32]));
    let again = t
        .store
        .create_test_tenant(&TenantId::from("acme"), [2; 32], 6)
        .await
        .unwrap();
    assert!(again.is_none(), "the id is taken");
    // The refused create changed nothing: the first key works, its own does not.
    let stored = t
        .store
        .tenant(&TenantId::from("acme"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.key_sha256, stored.created_at_ms),
        (hex::encode([1; 32]), 5)
    );
    assert_eq!(
        t.store.tenant_by_key(&[1; 32]).await.unwrap().as_deref(),
        Some("acme")
    );
    assert_eq!(t.store.tenant_by_key(&[2; 32]).await.unwrap(), None);
    assert!(
        t.store
            .tenant(&TenantId::from("beta"))
            .await
            .unwrap()
            .is_none()
    );
}

async fn a_rotation_retires_the_old_key_at_once(t: TestStore) {
    t.store
        .create_test_tenant(&TenantId::from("acme"), [1; 32], 0)
        .await
        .unwrap()
        .unwrap();
    t.store
        .create_test_tenant(&TenantId::from("beta"), [9; 32], 0)
        .await
        .unwrap()
        .unwrap();
    assert!(
        t.store
            .rotate_test_tenant_key(&TenantId::from("acme"), [2; 32])
            .await
            .unwrap()
    );
    assert_eq!(t.store.tenant_by_key(&[1; 32]).await.unwrap(), None);
    assert_eq!(
        t.store.tenant_by_key(&[2; 32]).await.unwrap().as_deref(),
        Some("acme")
    );
    let stored = t
        .store
        .tenant(&TenantId::from("acme"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.key_sha256, hex::encode([2; 32]));
    assert_eq!(
        t.store.tenant_by_key(&[9; 32]).await.unwrap().as_deref(),
        Some("beta")
    );
    assert!(
        !t.store
            .rotate_test_tenant_key(&TenantId::from("nope"), [3; 32])
            .await
            .unwrap()
    );
    assert_eq!(t.store.tenant_by_key(&[3; 32]).await.unwrap(), None);
}

async fn endpoints_are_created_within_the_tenants_cap(t: TestStore) {
    for id in ["ep_1", "ep_2"] {
        assert!(
            t.store
                .create_endpoint(&endpoint("t", id), 2)
                .await
                .unwrap()
                .is_created()
        );
    }
    assert!(
        !t.store
            .create_endpoint(&endpoint("t", "ep_3"), 2)
            .await
            .unwrap()
            .is_created()
    );
    assert!(
        t.store
            .endpoint(&TenantId::from("t"), &EndpointId::from("ep_3"))
            .await
            .unwrap()
            .is_none(),
        "nothing written"
    );
    assert!(
        t.store
            .create_endpoint(&endpoint("u", "ep_3"), 2)
            .await
            .unwrap()
            .is_created(),
        "per tenant"
    );
    let stored = t
        .store
        .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.url.as_str(), stored.tenant_id.as_str()),
        ("https://example.com/hook", "t")
    );
    // Room again once one goes.
    t.store.delete_endpoint(&stored, 1).await.unwrap();
    assert!(
        t.store
            .create_endpoint(&endpoint("t", "ep_3"), 2)
            .await
            .unwrap()
            .is_created()
    );
}

async fn a_swap_writes_only_over_the_version_it_read(t: TestStore) {
    t.endpoint("t", "ep_1").await;
    let read = t.version("t", "ep_1").await;
    let mut patched = read.record.clone();
    patched.description = "first".into();
    assert_eq!(
        t.store.swap_endpoint(&read, &patched).await.unwrap(),
        Swap::Swapped
    );
    // A second writer from the same read finds it changed, and writes nothing.
    let mut other = read.record.clone();
    other.description = "second".into();
    assert_eq!(
        t.store.swap_endpoint(&read, &other).await.unwrap(),
        Swap::Changed
    );
    let now = t
        .store
        .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(now.description, "first");
    let fresh = t.version("t", "ep_1").await;
    assert_eq!(
        t.store.swap_endpoint(&fresh, &other).await.unwrap(),
        Swap::Swapped
    );
    assert!(
        t.store
            .endpoint_version(&TenantId::from("t"), &EndpointId::from("ep_9"))
            .await
            .unwrap()
            .is_none()
    );
}

async fn an_update_changes_the_endpoint_in_place_and_a_reset_closes_its_breaker(t: TestStore) {
    t.endpoint("t", "ep_1").await;
    let trip = |e: &mut crate::store::EndpointRecord| {
        e.breaker.state = BreakerState::Open.into();
        e.breaker.open_until_ms = Some(99);
        e.breaker.trips = 2;
    };
    assert!(
        t.store
            .update_endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"), trip)
            .await
            .unwrap()
    );
    let open = t
        .store
        .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (open.breaker.state, open.breaker.trips),
        (BreakerState::Open.into(), 2)
    );
    assert_eq!(open.url, "https://example.com/hook", "the rest is kept");
    assert!(
        !t.store
            .update_endpoint(&TenantId::from("t"), &EndpointId::from("ep_9"), trip)
            .await
            .unwrap()
    );
    assert!(
        t.store
            .endpoint(&TenantId::from("t"), &EndpointId::from("ep_9"))
            .await
            .unwrap()
            .is_none(),
        "no endpoint made"
    );

    assert!(
        t.store
            .reset_breaker(&TenantId::from("t"), &EndpointId::from("ep_1"))
            .await
            .unwrap()
            .is_some()
    );
    let closed = t
        .store
        .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(closed.breaker.state, BreakerState::Closed);
    assert_eq!(
        (closed.breaker.open_until_ms, closed.breaker.trips),
        (None, 0)
    );
    assert!(
        t.store
            .reset_breaker(&TenantId::from("t"), &EndpointId::from("ep_9"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        t.store
            .reset_breaker(&TenantId::from("u"), &EndpointId::from("ep_1"))
            .await
            .unwrap()
            .is_none(),
        "another tenant's id"
    );
}

/// Moved from `sled/endpoints_tests.rs`: more pending work than sled ends per
/// batch (256), one delivery already succeeded, one on another endpoint.
async fn a_delete_ends_every_pending_delivery_of_the_endpoint(t: TestStore) {
    let done = super::succeeded(&t, 5).await;
    let ep = t
        .store
        .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
        .await
        .unwrap()
        .unwrap();
    let other = t.endpoint("t", "ep_2").await;
    for i in 0..300 {
        t.ingest("t", &[&ep], 10 + i).await;
    }
    let kept = t.ingest("t", &[&other], 10).await.remove(0);
    assert_eq!(t.store.delete_endpoint(&ep, 1_000).await.unwrap(), 300);
    assert!(
        t.store
            .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_1"), None)
            .await
            .unwrap(),
        None
    );
    let filter = |state| DeliveryFilter {
        state: Some(state),
        endpoint_id: Some("ep_1".into()),
        ..DeliveryFilter::default()
    };
    let list = |state| {
        let store = t.store.clone();
        async move {
            store
                .list_deliveries(&TenantId::from("t"), &filter(state), |_| true, 500, None)
                .await
                .unwrap()
        }
    };
    assert!(list(DeliveryState::Pending).await.data.is_empty());
    let dead = list(DeliveryState::Dead).await.data;
    assert_eq!(dead.len(), 300);
    assert!(dead.iter().all(
        |d| d.dead_reason == Some(DeadReason::EndpointDeleted.into())
            && d.updated_at_ms == 1_000
            && d.next_attempt_at_ms.is_none()
    ));
    let done = t
        .store
        .delivery(&TenantId::from("t"), &done.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        done.state,
        DeliveryState::Succeeded,
        "finished work is kept as it is"
    );
    let kept = t
        .store
        .delivery(&TenantId::from("t"), &kept.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        kept.state,
        DeliveryState::Pending,
        "other endpoints keep theirs"
    );
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_2"), None)
            .await
            .unwrap(),
        Some(10)
    );
}
