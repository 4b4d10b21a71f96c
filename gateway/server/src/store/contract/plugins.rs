//! Plugins: each upload is the next version and the active one; a tenant's cap
//! refuses new names only; rollback moves the active pointer; pruning keeps
//! the active and pinned versions; deleting drops every version's bytes.

use crate::ids::TenantId;
use crate::store::testing::TestStore;
use crate::store::{NewPluginVersion, PluginRecord, Store, UploadRate};

contract_tests! {
    uploads_number_versions_and_the_newest_is_active,
    the_cap_refuses_a_new_name_but_not_a_new_version,
    a_rollback_moves_only_the_active_version,
    pruning_keeps_the_active_and_pinned_versions,
    deleting_a_plugin_drops_every_version,
    ten_uploads_per_tenant_in_any_rolling_hour,
}

/// Uploads `bytes` as the next version of `t`'s `name`, with room for 10 plugins.
async fn upload(store: &Store, name: &str, bytes: &[u8]) -> Option<PluginRecord> {
    let sha = format!("sha-{}", String::from_utf8_lossy(bytes));
    let new = NewPluginVersion {
        bytes,
        sha256: &sha,
        checks: None,
    };
    store
        .add_plugin_version(&TenantId::from("t"), name, new, 7, 10)
        .await
        .unwrap()
}

fn versions(rec: &PluginRecord) -> Vec<u32> {
    rec.versions.iter().map(|v| v.version).collect()
}

async fn uploads_number_versions_and_the_newest_is_active(t: TestStore) {
    for (n, bytes) in [b"one".as_slice(), b"two", b"three"]
        .into_iter()
        .enumerate()
    {
        let rec = upload(&t.store, "p", bytes).await.unwrap();
        let n = n as u32 + 1;
        assert_eq!((rec.active, rec.versions.len() as u32), (n, n));
    }
    let rec = t
        .store
        .plugin(&TenantId::from("t"), "p")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((versions(&rec), rec.active), (vec![1, 2, 3], 3));
    let v2 = &rec.versions[1];
    assert_eq!(
        (v2.sha256.as_str(), v2.size, v2.created_at_ms),
        ("sha-two", 3, 7)
    );
    let bytes = t
        .store
        .plugin_bytes(&TenantId::from("t"), "p", 2)
        .await
        .unwrap();
    assert_eq!(
        bytes.as_deref(),
        Some(b"two".as_slice()),
        "kept as uploaded"
    );
    assert!(
        t.store
            .plugin_bytes(&TenantId::from("t"), "p", 4)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        t.store
            .plugin(&TenantId::from("u"), "p")
            .await
            .unwrap()
            .is_none(),
        "per tenant"
    );
    upload(&t.store, "a", b"x").await.unwrap();
    let names: Vec<_> = t
        .store
        .plugins_of(&TenantId::from("t"))
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["a", "p"], "by name");
    assert_eq!(t.store.all_plugins().await.unwrap().len(), 2);
}

async fn the_cap_refuses_a_new_name_but_not_a_new_version(t: TestStore) {
    let new = |bytes: &'static [u8]| NewPluginVersion {
        bytes,
        sha256: "s",
        checks: None,
    };
    let tenant = TenantId::from("t");
    let add = |name: &'static str, bytes: &'static [u8]| {
        t.store.add_plugin_version(&tenant, name, new(bytes), 0, 2)
    };
    assert!(add("a", b"1").await.unwrap().is_some());
    assert!(add("b", b"1").await.unwrap().is_some());
    assert!(
        add("c", b"1").await.unwrap().is_none(),
        "a third name is refused"
    );
    assert!(
        t.store
            .plugin(&TenantId::from("t"), "c")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        t.store
            .plugin_bytes(&TenantId::from("t"), "c", 1)
            .await
            .unwrap()
            .is_none()
    );
    let more = add("a", b"2").await.unwrap().unwrap();
    assert_eq!(more.active, 2, "an existing name still takes versions");
    // Another tenant has its own cap.
    let theirs = t
        .store
        .add_plugin_version(&TenantId::from("u"), "c", new(b"1"), 0, 2)
        .await
        .unwrap();
    assert!(theirs.is_some());
}

async fn a_rollback_moves_only_the_active_version(t: TestStore) {
    for bytes in [b"one".as_slice(), b"two", b"three"] {
        upload(&t.store, "p", bytes).await.unwrap();
    }
    let back = t
        .store
        .update_plugin(&TenantId::from("t"), "p", |p| {
            p.active = p.previous().unwrap()
        })
        .await;
    let back = back.unwrap().unwrap();
    assert_eq!((versions(&back), back.active), (vec![1, 2, 3], 2));
    let stored = t
        .store
        .plugin(&TenantId::from("t"), "p")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored, back);
    assert!(
        t.store
            .plugin_bytes(&TenantId::from("t"), "p", 3)
            .await
            .unwrap()
            .is_some()
    );
    // The next upload still takes a new number, never a reused one.
    let next = upload(&t.store, "p", b"four").await.unwrap();
    assert_eq!((versions(&next), next.active), (vec![1, 2, 3, 4], 4));
    let none = t
        .store
        .update_plugin(&TenantId::from("t"), "nope", |p| p.active = 1)
        .await
        .unwrap();
    assert!(none.is_none());
}

async fn pruning_keeps_the_active_and_pinned_versions(t: TestStore) {
    for bytes in [b"1".as_slice(), b"2", b"3", b"4", b"5", b"6"] {
        upload(&t.store, "p", bytes).await.unwrap();
    }
    t.store
        .update_plugin(&TenantId::from("t"), "p", |p| p.active = 2)
        .await
        .unwrap();
    let pruned = t
        .store
        .prune_plugin_versions(&TenantId::from("t"), "p", 2, &[3])
        .await
        .unwrap();
    let pruned: Vec<_> = pruned.iter().map(|v| v.version).collect();
    assert_eq!(
        pruned,
        [1, 4],
        "not the active 2, the pinned 3, nor the newest two"
    );
    let rec = t
        .store
        .plugin(&TenantId::from("t"), "p")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((versions(&rec), rec.active), (vec![2, 3, 5, 6], 2));
    for (v, kept) in [(1, false), (2, true), (3, true), (4, false), (6, true)] {
        let bytes = t
            .store
            .plugin_bytes(&TenantId::from("t"), "p", v)
            .await
            .unwrap();
        assert_eq!(bytes.is_some(), kept, "version {v}");
    }
    let again = t
        .store
        .prune_plugin_versions(&TenantId::from("t"), "p", 2, &[3])
        .await
        .unwrap();
    assert!(again.is_empty(), "nothing more to prune");
    assert!(
        t.store
            .prune_plugin_versions(&TenantId::from("t"), "nope", 0, &[])
            .await
            .unwrap()
            .is_empty()
    );
}

async fn deleting_a_plugin_drops_every_version(t: TestStore) {
    for bytes in [b"one".as_slice(), b"two"] {
        upload(&t.store, "p", bytes).await.unwrap();
    }
    upload(&t.store, "q", b"other").await.unwrap();
    let gone = t
        .store
        .delete_plugin(&TenantId::from("t"), "p")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(versions(&gone), [1, 2]);
    assert!(
        t.store
            .plugin(&TenantId::from("t"), "p")
            .await
            .unwrap()
            .is_none()
    );
    for v in [1, 2] {
        assert!(
            t.store
                .plugin_bytes(&TenantId::from("t"), "p", v)
                .await
                .unwrap()
                .is_none()
        );
    }
    assert!(
        t.store
            .delete_plugin(&TenantId::from("t"), "p")
            .await
            .unwrap()
            .is_none(),
        "already gone"
    );
    let q = t
        .store
        .plugin_bytes(&TenantId::from("t"), "q", 1)
        .await
        .unwrap();
    assert_eq!(
        q.as_deref(),
        Some(b"other".as_slice()),
        "other plugins stay"
    );
}

/// The upload rate limit, counted in the store (item 5 of tenant fairness: it
/// holds for every gateway on the store, and after a restart).
async fn ten_uploads_per_tenant_in_any_rolling_hour(t: TestStore) {
    const HOUR_MS: u64 = 60 * 60 * 1_000;
    let rate = UploadRate {
        most: 10,
        window_ms: HOUR_MS,
    };
    let (a, b) = (TenantId::from("a"), TenantId::from("b"));
    let admit = |tenant: &TenantId, at: u64| {
        let (store, tenant) = (t.store.clone(), tenant.clone());
        async move { store.admit_plugin_upload(&tenant, at, rate).await.unwrap() }
    };
    for i in 0..10 {
        assert_eq!(admit(&a, 1_000 + i * 60_000).await, Ok(()), "upload {i}");
    }
    assert_eq!(
        admit(&a, 1_000 + 10 * 60_000).await,
        Err(HOUR_MS - 10 * 60_000)
    );
    assert_eq!(admit(&b, 1_000).await, Ok(()), "tenants are counted apart");
    // An hour after the first, one slot is free again.
    assert_eq!(admit(&a, 1_000 + HOUR_MS).await, Ok(()));
    assert!(admit(&a, 1_000 + HOUR_MS + 1).await.is_err());
}
