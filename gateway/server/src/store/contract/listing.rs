//! Listing and counting: deliveries newest first in pages joined by
//! `next_cursor`, filtered by state, endpoint, event type, time and dead reason;
//! endpoints and tenants paged the same way, each tenant seeing only its own;
//! dead deliveries counted from a bounded scan that says when the bound cut it
//! short, and pending and dead per tenant for the start-up gauges.

use crate::ids::{EndpointId, TenantId};
use crate::policy::DeadReason;
use crate::store::deliveries::LIST_SCAN_LIMIT;
use crate::store::testing::TestStore;
use crate::store::{DeliveryFilter, DeliveryPage, DeliveryState, NewEvent, SUMMARY_SCAN_LIMIT};

contract_tests! {
    deliveries_page_newest_first_with_a_cursor,
    delivery_filters_each_narrow_the_list,
    a_dead_reason_matches_only_deliveries_dead_for_that_reason,
    endpoints_page_newest_first_per_tenant,
    tenants_page_in_reverse_id_order,
    a_tenants_summary_counts_only_its_dead_by_reason_and_endpoint,
    the_bound_stops_the_scan_and_says_the_counts_are_incomplete,
    pending_and_dead_are_counted_per_tenant,
    delivery_lists_bound_their_scan,
    a_nul_in_a_lookup_is_refused_not_unavailable,
}

fn ids(page: &DeliveryPage) -> Vec<&str> {
    page.data.iter().map(|d| d.id.as_str()).collect()
}

async fn deliveries_page_newest_first_with_a_cursor(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let mut made = Vec::new();
    for now in 0..5 {
        made.push(t.ingest("t", &[&ep], now).await.remove(0).id);
    }
    made.reverse();
    let all = DeliveryFilter::default();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let tenant = TenantId::from("t");
    loop {
        let page = t
            .store
            .list_deliveries(&tenant, &all, |_| true, 2, cursor.as_deref());
        let page = page.await.unwrap();
        assert!(page.data.len() <= 2);
        seen.extend(ids(&page).into_iter().map(str::to_owned));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, made, "every delivery once, newest first");
    // A full last page says there is no more.
    let exact = t
        .store
        .list_deliveries(&TenantId::from("t"), &all, |_| true, 5, None)
        .await
        .unwrap();
    assert_eq!((exact.data.len(), exact.next_cursor), (5, None));
    // The caller's own predicate applies like a filter.
    let odd = |d: &crate::store::DeliveryRecord| d.created_at_ms % 2 == 1;
    let page = t
        .store
        .list_deliveries(&TenantId::from("t"), &all, odd, 10, None)
        .await
        .unwrap();
    assert_eq!(ids(&page), [made[1].as_str(), made[3].as_str()]);
    let other = t
        .store
        .list_deliveries(&TenantId::from("u"), &all, |_| true, 10, None)
        .await
        .unwrap();
    assert!(other.data.is_empty(), "tenants are isolated");
}

async fn delivery_filters_each_narrow_the_list(t: TestStore) {
    let (a, b) = (t.endpoint("t", "ep_a").await, t.endpoint("t", "ep_b").await);
    let first = t.ingest("t", &[&a, &b], 10).await;
    let p = serde_json::value::RawValue::from_string("{}".into()).unwrap();
    let refund = NewEvent {
        labels: Default::default(),
        tenant_id: "t",
        event_type: "order.refunded",
        payload: &p,
        idempotency: None,
        endpoints: vec![&a],
        now_ms: 20,
    };
    t.store.ingest(refund).await.unwrap();
    t.store.delete_endpoint(&b, 30).await.unwrap();
    let count = |filter: DeliveryFilter| {
        let store = t.store.clone();
        async move {
            let page = store
                .list_deliveries(&TenantId::from("t"), &filter, |_| true, 10, None)
                .await;
            page.unwrap().data.len()
        }
    };
    let none = DeliveryFilter::default;
    assert_eq!(count(none()).await, 3);
    let state = |s| DeliveryFilter {
        state: Some(s),
        ..none()
    };
    assert_eq!(count(state(DeliveryState::Pending)).await, 2);
    assert_eq!(count(state(DeliveryState::Dead)).await, 1);
    assert_eq!(count(state(DeliveryState::Succeeded)).await, 0);
    let endpoint = |e: &str| DeliveryFilter {
        endpoint_id: Some(e.into()),
        ..none()
    };
    assert_eq!(count(endpoint("ep_a")).await, 2);
    assert_eq!(count(endpoint("ep_b")).await, 1);
    let kind = |k: &str| DeliveryFilter {
        event_type: Some(k.into()),
        ..none()
    };
    assert_eq!(count(kind("order.paid")).await, 2);
    assert_eq!(count(kind("order.refunded")).await, 1);
    assert_eq!(
        count(DeliveryFilter {
            since_ms: Some(20),
            ..none()
        })
        .await,
        1
    );
    assert_eq!(
        count(DeliveryFilter {
            until_ms: Some(20),
            ..none()
        })
        .await,
        2
    );
    let both = DeliveryFilter {
        endpoint_id: Some("ep_a".into()),
        ..kind("order.paid")
    };
    let page = t
        .store
        .list_deliveries(&TenantId::from("t"), &both, |_| true, 10, None)
        .await
        .unwrap();
    let on_a = first.iter().find(|d| d.endpoint_id == "ep_a").unwrap();
    assert_eq!(ids(&page), [on_a.id.as_str()]);
}

/// Moved from `sled/deliveries.rs`.
async fn a_dead_reason_matches_only_deliveries_dead_for_that_reason(t: TestStore) {
    let (a, b) = (t.endpoint("t", "ep_a").await, t.endpoint("t", "ep_b").await);
    t.ingest("t", &[&a, &b], 0).await;
    t.store.delete_endpoint(&b, 1).await.unwrap();
    let count = |reason| {
        let store = t.store.clone();
        async move {
            let filter = DeliveryFilter {
                dead_reason: Some(reason),
                ..DeliveryFilter::default()
            };
            let page = store
                .list_deliveries(&TenantId::from("t"), &filter, |_| true, 10, None)
                .await;
            page.unwrap().data.len()
        }
    };
    assert_eq!(count(DeadReason::EndpointDeleted).await, 1);
    assert_eq!(count(DeadReason::GiveUp).await, 0);
}

async fn endpoints_page_newest_first_per_tenant(t: TestStore) {
    for id in ["ep_1", "ep_2", "ep_3"] {
        t.endpoint("t", id).await;
    }
    t.endpoint("u", "ep_9").await;
    let (page, more) = t
        .store
        .list_endpoints(&TenantId::from("t"), 2, None)
        .await
        .unwrap();
    let got: Vec<_> = page.iter().map(|e| e.id.as_str()).collect();
    assert_eq!((got, more), (vec!["ep_3", "ep_2"], true));
    let (page, more) = t
        .store
        .list_endpoints(&TenantId::from("t"), 2, Some("ep_2"))
        .await
        .unwrap();
    let got: Vec<_> = page.iter().map(|e| e.id.as_str()).collect();
    assert_eq!((got, more), (vec!["ep_1"], false));
    let (page, more) = t
        .store
        .list_endpoints(&TenantId::from("t"), 3, None)
        .await
        .unwrap();
    assert_eq!(
        (page.len(), more),
        (3, false),
        "an exactly full page has no more"
    );
    assert_eq!(
        t.store
            .endpoints_of(&TenantId::from("t"))
            .await
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        t.store
            .endpoints_of(&TenantId::from("u"))
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(t.store.all_endpoints().await.unwrap().len(), 4);
    assert!(
        t.store
            .endpoint(&TenantId::from("u"), &EndpointId::from("ep_1"))
            .await
            .unwrap()
            .is_none()
    );
}

async fn tenants_page_in_reverse_id_order(t: TestStore) {
    for (n, id) in (1u8..).zip(["acme", "beta", "core"]) {
        assert!(
            t.store
                .create_test_tenant(&TenantId::from(id), [n; 32], 0)
                .await
                .unwrap()
                .is_some()
        );
    }
    let (page, more) = t.store.list_tenants(2, None).await.unwrap();
    let got: Vec<_> = page.iter().map(|r| r.id.as_str()).collect();
    assert_eq!((got, more), (vec!["core", "beta"], true));
    let (page, more) = t.store.list_tenants(2, Some("beta")).await.unwrap();
    let got: Vec<_> = page.iter().map(|r| r.id.as_str()).collect();
    assert_eq!((got, more), (vec!["acme"], false));
    let (page, more) = t.store.list_tenants(3, None).await.unwrap();
    assert_eq!((page.len(), more), (3, false));
}

/// Two tenants, each with one endpoint deleted under a live one: its
/// deliveries are dead `endpoint_deleted`, the live one's still pending.
async fn two_tenants(t: &TestStore) {
    for (n, tenant) in (1u8..).zip(["t1", "t2"]) {
        t.store
            .create_test_tenant(&TenantId::from(tenant), [n; 32], 0)
            .await
            .unwrap();
        let live = t.endpoint(tenant, &format!("ep_{tenant}_live")).await;
        let gone = t.endpoint(tenant, &format!("ep_{tenant}_gone")).await;
        for at in 0..3 {
            t.ingest(tenant, &[&live, &gone], at).await;
        }
        t.store.delete_endpoint(&gone, 10).await.unwrap();
    }
}

/// Moved from `sled/dlq.rs`, as the next one.
async fn a_tenants_summary_counts_only_its_dead_by_reason_and_endpoint(t: TestStore) {
    two_tenants(&t).await;
    let counts = t
        .store
        .dead_counts(&TenantId::from("t1"), SUMMARY_SCAN_LIMIT)
        .await
        .unwrap();
    assert_eq!((counts.dead, counts.scanned, counts.complete), (3, 6, true));
    assert_eq!(counts.by_reason["endpoint_deleted"], 3);
    assert_eq!(
        counts.by_reason["give_up"], 0,
        "every known reason is listed"
    );
    assert_eq!(counts.by_reason.len(), DeadReason::ALL.len());
    let by_endpoint: Vec<_> = counts.by_endpoint.into_iter().collect();
    let gone = (TenantId::from("t1"), EndpointId::from("ep_t1_gone"));
    assert_eq!(by_endpoint, [(gone, 3)]);
    assert_eq!(
        counts.by_tenant.into_iter().collect::<Vec<_>>(),
        [(TenantId::from("t1"), 3)]
    );
}

async fn the_bound_stops_the_scan_and_says_the_counts_are_incomplete(t: TestStore) {
    two_tenants(&t).await;
    let all = t.store.dead_counts_all(SUMMARY_SCAN_LIMIT).await.unwrap();
    assert_eq!((all.dead, all.scanned, all.complete), (6, 12, true));
    assert_eq!(all.by_tenant.values().copied().collect::<Vec<_>>(), [3, 3]);

    let bounded = t.store.dead_counts_all(8).await.unwrap();
    assert_eq!((bounded.scanned, bounded.complete), (8, false));
    assert!(bounded.dead < 6, "{bounded:?}");
    let one = t.store.dead_counts(&TenantId::from("t1"), 6).await.unwrap();
    assert!(one.complete, "exactly the bound read is still complete");
}

async fn pending_and_dead_are_counted_per_tenant(t: TestStore) {
    two_tenants(&t).await;
    let d = super::succeeded(&t, 5).await;
    let counts = t.store.count_deliveries().await.unwrap();
    assert_eq!(counts.get("t1"), Some(&(3, 3)));
    assert_eq!(counts.get("t2"), Some(&(3, 3)));
    // Succeeded work is neither.
    let t_counts = counts
        .get(d.tenant_id.as_str())
        .copied()
        .unwrap_or_default();
    assert_eq!(t_counts, (0, 0));
}

/// Item 2 of tenant fairness: a filter that matches nothing reads at most the
/// bound, answers an empty page with a cursor to read on, and the cursor leads
/// through the rest; a time range is an id range, read from its first id on.
async fn delivery_lists_bound_their_scan(t: TestStore) {
    const FAN_OUT: usize = 10;
    let mut endpoints = Vec::new();
    for n in 0..FAN_OUT {
        endpoints.push(t.endpoint("t", &format!("ep_{n}")).await);
    }
    let fan: Vec<_> = endpoints.iter().collect();
    // Created at 0 ms, 1 ms, …: FAN_OUT deliveries each.
    let made = LIST_SCAN_LIMIT + 10 * FAN_OUT;
    for now in 0..made / FAN_OUT {
        t.ingest("t", &fan, now as u64).await;
    }
    let tenant = TenantId::from("t");
    let list = |filter: DeliveryFilter, cursor: Option<String>| {
        let (store, tenant) = (t.store.clone(), tenant.clone());
        async move {
            let page = store.list_deliveries(&tenant, &filter, |_| true, 250, cursor.as_deref());
            page.await.unwrap()
        }
    };
    let nothing = || DeliveryFilter {
        event_type: Some("no.such.type".into()),
        ..DeliveryFilter::default()
    };
    let first = list(nothing(), None).await;
    assert!(first.data.is_empty());
    assert_eq!(
        first.scanned, LIST_SCAN_LIMIT,
        "the scan stops at its bound"
    );
    assert!(first.next_cursor.is_some(), "and says where to read on");
    let rest = list(nothing(), first.next_cursor).await;
    assert_eq!(
        (rest.scanned, rest.next_cursor),
        (made - LIST_SCAN_LIMIT, None)
    );

    // The oldest end of a long history is read from there, not from the newest.
    let t_id = |page: &DeliveryPage| {
        page.data
            .iter()
            .map(|d| d.created_at_ms)
            .collect::<Vec<_>>()
    };
    let oldest = DeliveryFilter {
        endpoint_id: Some("ep_0".into()),
        until_ms: Some(1),
        ..DeliveryFilter::default()
    };
    let page = list(oldest, None).await;
    assert_eq!(t_id(&page), [0]);

    // Times outside the history read nothing; a window reads only itself.
    let after = DeliveryFilter {
        since_ms: Some(made as u64),
        ..DeliveryFilter::default()
    };
    let before = DeliveryFilter {
        until_ms: Some(0),
        ..DeliveryFilter::default()
    };
    for empty in [after, before] {
        let page = list(empty, None).await;
        assert_eq!((page.data.len(), page.scanned), (0, 0));
    }
    let window = DeliveryFilter {
        since_ms: Some(100),
        until_ms: Some(110),
        ..DeliveryFilter::default()
    };
    let page = list(window, None).await;
    assert_eq!(
        (page.data.len(), page.scanned),
        (10 * FAN_OUT, 10 * FAN_OUT)
    );
    assert!(
        page.data
            .iter()
            .all(|d| (100..110).contains(&d.created_at_ms))
    );
    // A cursor inside the window reads on from there, still within it.
    let window = DeliveryFilter {
        since_ms: Some(100),
        until_ms: Some(110),
        ..DeliveryFilter::default()
    };
    let cursor = Some(page.data[FAN_OUT - 1].id.to_string());
    let on = list(window, cursor).await;
    assert_eq!(on.scanned, 9 * FAN_OUT);
}

/// Item 3 of tenant fairness: a NUL in an id or a filter finds nothing, or is
/// refused as the caller's value (PostgreSQL's text cannot hold it); it is
/// never the store being unavailable.
async fn a_nul_in_a_lookup_is_refused_not_unavailable(t: TestStore) {
    use crate::store::{Failure, StoreError};
    let ep = t.endpoint("t", "ep_1").await;
    t.ingest("t", &[&ep], 1).await;
    let tenant = TenantId::from("t");
    let refused_or = |r: Result<bool, StoreError>| match r {
        Ok(found) => !found,
        Err(e) => e.failure() == Failure::Refused,
    };
    let got = t.store.endpoint(&tenant, &EndpointId::from("ep\0x")).await;
    assert!(refused_or(got.map(|e| e.is_some())));
    let got = t
        .store
        .endpoint(&TenantId::from("t\0"), &EndpointId::from("ep_1"))
        .await;
    assert!(refused_or(got.map(|e| e.is_some())));
    let nul = DeliveryFilter {
        endpoint_id: Some("ep\0".into()),
        ..DeliveryFilter::default()
    };
    let page = t
        .store
        .list_deliveries(&tenant, &nul, |_| true, 10, None)
        .await;
    assert!(refused_or(page.map(|p| !p.data.is_empty())));
    let all = DeliveryFilter::default();
    let page = t
        .store
        .list_deliveries(&tenant, &all, |_| true, 10, Some("dlv_\0"))
        .await;
    assert!(refused_or(page.map(|p| !p.data.is_empty())));
}
