//! A tenant's lifecycle: its id and uid share one namespace; a change moves
//! its indexes with it; a delete, once accepted, makes the tenant name nothing
//! and, taken to its end, leaves no record of it behind.

use crate::ids::TenantId;
use crate::store::testing::TestStore;
use crate::store::{TaskRecord, TaskState, TaskWork, TenantRecord, TenantWrite};

use super::first_attempt;
use crate::store::Lane;

contract_tests! {
    ids_and_uids_name_one_tenant_each,
    a_deleted_tenant_names_nothing_at_once_and_its_purge_leaves_nothing,
}

fn tenant(id: &str, key: u8, uid: Option<&str>) -> TenantRecord {
    TenantRecord {
        uid: uid.map(str::to_owned),
        ..TenantRecord::new(id.into(), [key; 32], 7)
    }
}

fn written(w: TenantWrite) -> TenantRecord {
    match w {
        TenantWrite::Written(t) => t,
        other => panic!("not written: {other:?}"),
    }
}

async fn ids_and_uids_name_one_tenant_each(t: TestStore) {
    let s = &t.store;
    written(
        s.create_tenant(&tenant("acme", 1, Some("Acme.Corp-1")))
            .await
            .unwrap(),
    );
    // A uid may not be another tenant's uid or id; an id may not be a uid.
    for (new, why) in [
        (tenant("beta", 2, Some("Acme.Corp-1")), "another's uid"),
        (tenant("beta", 2, Some("acme")), "another's id"),
    ] {
        assert!(
            matches!(s.create_tenant(&new).await.unwrap(), TenantWrite::UidTaken),
            "{why}"
        );
    }
    written(s.create_tenant(&tenant("gamma", 3, None)).await.unwrap());
    let clash = s
        .update_tenant(&"acme".into(), |r| r.uid = Some("gamma".into()))
        .await
        .unwrap();
    assert!(matches!(clash, TenantWrite::UidTaken));
    written(
        s.update_tenant(&"gamma".into(), |r| r.uid = Some("g".into()))
            .await
            .unwrap(),
    );
    assert!(matches!(
        s.create_tenant(&tenant("g", 4, None)).await.unwrap(),
        TenantWrite::IdTaken
    ));
    // Found by id or uid; a uid given up is free at once.
    let by_uid = s.find_tenant("Acme.Corp-1").await.unwrap().unwrap();
    assert_eq!(by_uid.id, "acme");
    assert_eq!(
        s.find_tenant("acme").await.unwrap().unwrap().uid.as_deref(),
        Some("Acme.Corp-1")
    );
    let renamed = written(
        s.update_tenant(&"acme".into(), |r| {
            r.uid = None;
            r.name = "Acme".into();
            r.metadata.insert("plan".into(), "pro".into());
        })
        .await
        .unwrap(),
    );
    assert_eq!((renamed.name.as_str(), renamed.metadata.len()), ("Acme", 1));
    assert!(s.find_tenant("Acme.Corp-1").await.unwrap().is_none());
    written(
        s.update_tenant(&"gamma".into(), |r| r.uid = Some("Acme.Corp-1".into()))
            .await
            .unwrap(),
    );
    assert_eq!(
        s.find_tenant("Acme.Corp-1").await.unwrap().unwrap().id,
        "gamma"
    );
    // A rotated key names the tenant; the old one nothing.
    written(
        s.update_tenant(&"acme".into(), |r| r.key_sha256 = hex::encode([9; 32]))
            .await
            .unwrap(),
    );
    assert_eq!(s.tenant_by_key(&[1; 32]).await.unwrap(), None);
    assert_eq!(
        s.tenant_by_key(&[9; 32]).await.unwrap().as_deref(),
        Some("acme")
    );
    let stored = s.tenant(&"acme".into()).await.unwrap().unwrap();
    assert_eq!((stored.name.as_str(), stored.uid), ("Acme", None));
    assert!(matches!(
        s.update_tenant(&"nope".into(), |r| r.name = "x".into())
            .await
            .unwrap(),
        TenantWrite::Missing
    ));
}

async fn a_deleted_tenant_names_nothing_at_once_and_its_purge_leaves_nothing(t: TestStore) {
    let s = &t.store;
    // Another tenant's records, which the delete must leave as they are.
    written(s.create_tenant(&tenant("t", 2, None)).await.unwrap());
    let other = t.endpoint("t", "ep_other").await;
    t.ingest("t", &[&other], 0).await;
    let before = s.census().await.unwrap();

    written(
        s.create_tenant(&tenant("acme", 1, Some("ACME")))
            .await
            .unwrap(),
    );
    let (a, b) = (
        t.endpoint("acme", "ep_a").await,
        t.endpoint("acme", "ep_b").await,
    );
    for _ in 0..5 {
        t.ingest("acme", &[&a, &b], 0).await;
    }
    // One attempt logged, so the purge must reach attempt logs too.
    let lease = only_lease_of(&t, "ep_a").await;
    let d = s
        .delivery(&"acme".into(), &lease.delivery_id().into())
        .await
        .unwrap()
        .unwrap();
    first_attempt(s, &d, &lease, Some(60_000), 1).await;

    let task = TaskRecord::new("acme".into(), TaskWork::TenantDelete, 100);
    assert!(s.begin_tenant_delete(&"acme".into(), &task).await.unwrap());
    assert!(
        !s.begin_tenant_delete(&"acme".into(), &task).await.unwrap(),
        "once"
    );
    // At once: its key, id and uid name nothing; the list leaves it out; the id
    // stays taken until the delete has ended.
    assert_eq!(s.tenant_by_key(&[1; 32]).await.unwrap(), None);
    assert!(s.find_tenant("acme").await.unwrap().is_none());
    assert!(s.find_tenant("ACME").await.unwrap().is_none());
    let (listed, _) = s.list_tenants(10, None).await.unwrap();
    assert_eq!(
        listed.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["t"]
    );
    assert!(matches!(
        s.create_tenant(&tenant("acme", 5, None)).await.unwrap(),
        TenantWrite::IdTaken
    ));
    let stored = s.any_task(&task.id).await.unwrap().unwrap();
    assert_eq!(
        (stored.state, stored.tenant_id.as_str()),
        (TaskState::Running, "acme")
    );

    // The task's work: endpoints through their delete, then the records in
    // small batches, then the tenant's own record.
    for ep in s.endpoints_of(&"acme".into()).await.unwrap() {
        s.delete_endpoint(&ep, 200).await.unwrap();
    }
    let mut batches = 0;
    while s.purge_tenant(&"acme".into(), 3).await.unwrap() > 0 {
        batches += 1;
        assert!(batches < 100, "the purge ends");
    }
    assert!(batches > 3, "in batches: {batches}");
    s.remove_tenant(&"acme".into()).await.unwrap();
    assert_eq!(s.census().await.unwrap(), before, "nothing of acme is left");
    // The id is free again, and the new tenant starts empty.
    written(s.create_tenant(&tenant("acme", 6, None)).await.unwrap());
    assert!(
        s.endpoints_of(&TenantId::from("acme"))
            .await
            .unwrap()
            .is_empty()
    );
}

async fn only_lease_of(t: &TestStore, endpoint: &str) -> crate::store::Lease {
    let mut due = t
        .store
        .due_entries(Lane::First, &endpoint.into(), 0, 1)
        .await
        .unwrap();
    due.remove(0)
}
