//! Races the store must settle by itself: work written against a record that
//! changed since it was read is refused, never resurrecting or undoing
//! anything, and concurrent writers under one cap or one name never both win.
//!
//! The first three moved here from `sled/endpoints_tests.rs`.

use super::{at_once, created, event, payload};
use crate::ids::{EndpointId, TenantId};
use crate::store::testing::{TestStore, endpoint};
use crate::store::{BreakerState, DeliveryFilter, IngestOutcome, NewPluginVersion, Swap};

/// Rounds of each concurrent test: enough that an unguarded check-then-write
/// shows (each catches its lock removed, on sled).
const ROUNDS: usize = 30;

contract_tests! {
    an_ingest_from_endpoints_read_before_a_delete_writes_nothing,
    a_swap_read_before_a_disable_never_undoes_it,
    a_swap_racing_a_delete_does_not_bring_the_endpoint_back,
    concurrent_creates_never_pass_the_endpoint_cap,
    concurrent_uploads_never_share_a_version_or_pass_the_plugin_cap,
    concurrent_creates_of_one_tenant_id_make_exactly_one,
    concurrent_first_settings_agree_on_one,
}

/// Item 1: an ingest that read the endpoint list before a DELETE writes nothing,
/// not even its idempotency key.
async fn an_ingest_from_endpoints_read_before_a_delete_writes_nothing(t: TestStore) {
    let (a, b) = (t.endpoint("t", "ep_a").await, t.endpoint("t", "ep_b").await);
    let read_before_delete = t.store.endpoints_of(&TenantId::from("t")).await.unwrap();
    t.store.delete_endpoint(&b, 1).await.unwrap();
    let p = payload();
    let stale = event(&p, read_before_delete.iter().collect(), Some(("k", "h")), 2);
    let outcome = t.store.ingest(stale).await.unwrap();
    assert!(
        matches!(outcome, IngestOutcome::EndpointsChanged),
        "{outcome:?}"
    );
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_a"), None)
            .await
            .unwrap(),
        None,
        "not even the live one"
    );
    assert_eq!(
        t.store
            .next_due(&EndpointId::from("ep_b"), None)
            .await
            .unwrap(),
        None
    );
    let all = DeliveryFilter::default();
    let page = t
        .store
        .list_deliveries(&TenantId::from("t"), &all, |_| true, 10, None)
        .await
        .unwrap();
    assert!(page.data.is_empty());
    // The retry, with the endpoints read again, is a first use of the key.
    let retry = t
        .store
        .ingest(event(&p, vec![&a], Some(("k", "h")), 3))
        .await;
    assert!(created(&retry.unwrap()));
}

/// Item 2: a PATCH made from a read taken before a 410 disabled the endpoint
/// (and its breaker opened) must not undo either.
async fn a_swap_read_before_a_disable_never_undoes_it(t: TestStore) {
    t.endpoint("t", "ep_1").await;
    let read = t.version("t", "ep_1").await;
    let gone = |e: &mut crate::store::EndpointRecord| {
        e.breaker.state = BreakerState::Open.into();
        e.disabled = true;
        e.disabled_reason = Some("410 Gone".into());
    };
    assert!(
        t.store
            .update_endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"), gone)
            .await
            .unwrap()
    );
    let mut patched = read.record.clone();
    patched.description = "patched".into();
    assert_eq!(
        t.store.swap_endpoint(&read, &patched).await.unwrap(),
        Swap::Changed
    );
    let now = t
        .store
        .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
        .await
        .unwrap()
        .unwrap();
    assert!(
        now.disabled && now.description.is_empty(),
        "nothing written"
    );
    // The caller reads again and redoes its change on the current record.
    let again = t.version("t", "ep_1").await;
    let mut patched = again.record.clone();
    patched.description = "patched".into();
    assert_eq!(
        t.store.swap_endpoint(&again, &patched).await.unwrap(),
        Swap::Swapped
    );
    let now = t
        .store
        .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (now.description.as_str(), now.breaker.state, now.disabled),
        ("patched", BreakerState::Open.into(), true)
    );
    assert_eq!(now.disabled_reason.as_deref(), Some("410 Gone"));
}

async fn a_swap_racing_a_delete_does_not_bring_the_endpoint_back(t: TestStore) {
    t.endpoint("t", "ep_1").await;
    let read = t.version("t", "ep_1").await;
    let mut ep = read.record.clone();
    ep.description = "patched".into();
    // The DELETE lands between the PATCH's read and its write.
    t.store.delete_endpoint(&ep, 1).await.unwrap();
    assert_eq!(t.store.swap_endpoint(&read, &ep).await.unwrap(), Swap::Gone);
    assert!(
        t.store
            .endpoint(&TenantId::from("t"), &EndpointId::from("ep_1"))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        t.store
            .list_endpoints(&TenantId::from("t"), 10, None)
            .await
            .unwrap()
            .0
            .is_empty()
    );
}

async fn concurrent_creates_never_pass_the_endpoint_cap(t: TestStore) {
    for round in 0..ROUNDS {
        let tenant = format!("t{round}");
        let made = at_once(8, |i| {
            let (store, ep) = (t.store.clone(), endpoint(&tenant, &format!("ep_{i}")));
            async move { store.create_endpoint(&ep, 2).await.unwrap() }
        });
        let made = made.await.into_iter().filter(|m| m.is_created()).count();
        assert_eq!(made, 2, "round {round}");
        assert_eq!(
            t.store
                .endpoints_of(&TenantId::from(tenant.as_str()))
                .await
                .unwrap()
                .len(),
            2
        );
    }
}

/// Uploads of one name each take their own number; uploads of new names stop
/// at the cap.
async fn concurrent_uploads_never_share_a_version_or_pass_the_plugin_cap(t: TestStore) {
    let upload = |tenant: &str, name: String| {
        let (store, tenant) = (t.store.clone(), tenant.to_owned());
        async move {
            let new = NewPluginVersion {
                bytes: b"wasm",
                sha256: "s",
                checks: None,
            };
            let added = store
                .add_plugin_version(&TenantId::from(tenant.as_str()), &name, new, 0, 3)
                .await;
            added.unwrap()
        }
    };
    for round in 0..ROUNDS {
        let tenant = format!("t{round}");
        let same = at_once(6, |_| upload(&tenant, "p".into())).await;
        let mut actives: Vec<_> = same.into_iter().map(|r| r.unwrap().active).collect();
        actives.sort_unstable();
        assert_eq!(actives, [1, 2, 3, 4, 5, 6], "round {round}");
        let rec = t
            .store
            .plugin(&TenantId::from(tenant.as_str()), "p")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((rec.versions.len(), rec.active), (6, 6));

        let names = at_once(6, |i| upload(&tenant, format!("n{i}"))).await;
        let added = names.iter().filter(|r| r.is_some()).count();
        assert_eq!(added, 2, "room for two names beside p, round {round}");
        assert_eq!(
            t.store
                .plugins_of(&TenantId::from(tenant.as_str()))
                .await
                .unwrap()
                .len(),
            3
        );
    }
}

async fn concurrent_creates_of_one_tenant_id_make_exactly_one(t: TestStore) {
    for round in 0..ROUNDS {
        let id = format!("acme{round}");
        let key = move |i: usize| -> [u8; 32] {
            [round as u8, i as u8 + 1].repeat(16).try_into().unwrap()
        };
        let made = at_once(8, |i| {
            let (store, id) = (t.store.clone(), id.clone());
            async move {
                store
                    .create_test_tenant(&TenantId::from(id.as_str()), key(i), 0)
                    .await
                    .unwrap()
            }
        });
        let winners: Vec<_> = made.await.into_iter().flatten().collect();
        assert_eq!(winners.len(), 1, "round {round}");
        let stored = t
            .store
            .tenant(&TenantId::from(id.as_str()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.key_sha256, winners[0].key_sha256, "the winner's key");
        let mut resolving = 0;
        for i in 0..8 {
            let found = t.store.tenant_by_key(&key(i)).await.unwrap();
            resolving += usize::from(found.is_some());
        }
        assert_eq!(resolving, 1, "only the winner's key opens the tenant");
    }
}

/// Gateways starting together on an empty store each make an admin token: all
/// of them keep the one stored first, and a later first-write changes nothing.
async fn concurrent_first_settings_agree_on_one(t: TestStore) {
    for round in 0..ROUNDS {
        let key = format!("setting_{round}");
        let kept = at_once(4, |i| {
            let (store, key) = (t.store.clone(), key.clone());
            async move { store.meta_put_first(&key, &[i as u8]).await.unwrap() }
        })
        .await;
        assert!(kept.windows(2).all(|w| w[0] == w[1]), "{kept:?}");
        let stored = t.store.meta_get(&key).await.unwrap();
        assert_eq!(stored.as_ref(), Some(&kept[0]));
        assert_eq!(t.store.meta_put_first(&key, &[9]).await.unwrap(), kept[0]);
    }
}
