//! Endpoint stats: deltas add to their bucket (counts, and histograms slot by
//! slot), whoever adds them and however they race; a delta for an endpoint that
//! is gone is dropped; an endpoint's delete, its tenant's purge and the history
//! sweep remove buckets; pending deliveries are counted from the schedule.

use super::at_once;
use crate::ids::{EndpointId, TenantId};
use crate::store::testing::TestStore;
use crate::store::{StatsBucket, StatsCounts, StatsDelta, Store};

contract_tests! {
    deltas_add_to_their_bucket_and_histograms_add_slot_by_slot,
    deltas_added_at_once_from_many_writers_all_count,
    a_delta_for_an_endpoint_that_is_gone_is_dropped,
    an_endpoints_delete_and_its_tenants_purge_remove_its_buckets,
    the_sweep_removes_only_buckets_older_than_its_bound,
    pending_deliveries_are_counted_from_the_schedule_up_to_a_cap,
}

const MIN: u64 = 60_000;

fn delta(tenant: &str, endpoint: &str, start: u64, delivered: u64, failed: u64) -> StatsDelta {
    StatsDelta {
        tenant_id: tenant.into(),
        endpoint_id: endpoint.into(),
        bucket_start_ms: start,
        counts: StatsCounts {
            attempts: delivered + failed,
            delivered,
            failed,
            latency: vec![delivered, 0, failed],
        },
    }
}

/// Every stored bucket of `endpoint` of tenant `t`.
async fn buckets(store: &Store, endpoint: &str) -> Vec<StatsBucket> {
    store
        .endpoint_stats(
            &TenantId::from("t"),
            &EndpointId::from(endpoint),
            0,
            u64::MAX / 2,
        )
        .await
        .unwrap()
}

/// `(start, attempts, delivered, failed, latency)` of each bucket.
fn summary(buckets: &[StatsBucket]) -> Vec<(u64, u64, u64, u64, Vec<u64>)> {
    buckets
        .iter()
        .map(|b| {
            let c = &b.counts;
            (
                b.start_ms,
                c.attempts,
                c.delivered,
                c.failed,
                c.latency.clone(),
            )
        })
        .collect()
}

async fn deltas_add_to_their_bucket_and_histograms_add_slot_by_slot(t: TestStore) {
    t.endpoint("t", "ep_1").await;
    t.endpoint("t", "ep_2").await;
    let s = &t.store;
    let first = [
        delta("t", "ep_1", 5 * MIN, 2, 1),
        delta("t", "ep_1", 10 * MIN, 1, 0),
        delta("t", "ep_2", 5 * MIN, 0, 4),
    ];
    assert_eq!(s.add_endpoint_stats(&first).await.unwrap(), 3);
    // A longer histogram (a build with more slots) adds slot by slot too.
    let mut longer = delta("t", "ep_1", 5 * MIN, 3, 0);
    longer.counts.latency = vec![1, 1, 0, 1];
    assert_eq!(s.add_endpoint_stats(&[longer]).await.unwrap(), 1);
    assert_eq!(
        summary(&buckets(s, "ep_1").await),
        [
            (5 * MIN, 6, 5, 1, vec![3, 1, 1, 1]),
            (10 * MIN, 1, 1, 0, vec![1, 0, 0]),
        ]
    );
    assert_eq!(
        summary(&buckets(s, "ep_2").await),
        [(5 * MIN, 4, 0, 4, vec![0, 0, 4])]
    );
    // A range: from its start, up to its end (not included).
    let ranged = s
        .endpoint_stats(&"t".into(), &"ep_1".into(), 5 * MIN + 1, 10 * MIN + 1)
        .await
        .unwrap();
    assert_eq!(summary(&ranged), [(10 * MIN, 1, 1, 0, vec![1, 0, 0])]);
    let ranged = s
        .endpoint_stats(&"t".into(), &"ep_1".into(), 5 * MIN, 10 * MIN)
        .await
        .unwrap();
    assert_eq!(ranged.len(), 1);
    assert_eq!(s.add_endpoint_stats(&[]).await.unwrap(), 0);
}

async fn deltas_added_at_once_from_many_writers_all_count(t: TestStore) {
    t.endpoint("t", "ep_1").await;
    t.endpoint("t", "ep_2").await;
    // On PostgreSQL, other gateways of the cluster write too.
    let mut writers = vec![t.store.clone()];
    if t.database_url().is_some() {
        writers.push(t.another_node("node-2").await);
        writers.push(t.another_node("node-3").await);
    }
    let rounds = 8;
    for _ in 0..rounds {
        let writers = writers.clone();
        let added = at_once(6, move |i| {
            let store = writers[i % writers.len()].clone();
            // Each writer adds to both endpoints' same buckets, in its own order.
            let mut deltas = vec![
                delta("t", "ep_1", 0, 1, 1),
                delta("t", "ep_2", 0, 1, 0),
                delta("t", "ep_2", 5 * MIN, 0, 1),
            ];
            if i % 2 == 1 {
                deltas.reverse();
            }
            async move { store.add_endpoint_stats(&deltas).await.unwrap() }
        })
        .await;
        assert_eq!(added, vec![3; 6]);
    }
    let n = rounds * 6;
    assert_eq!(
        summary(&buckets(&t.store, "ep_1").await),
        [(0, 2 * n, n, n, vec![n, 0, n])]
    );
    assert_eq!(
        summary(&buckets(&t.store, "ep_2").await),
        [
            (0, n, n, 0, vec![n, 0, 0]),
            (5 * MIN, n, 0, n, vec![0, 0, n])
        ]
    );
}

async fn a_delta_for_an_endpoint_that_is_gone_is_dropped(t: TestStore) {
    let kept = t.endpoint("t", "ep_1").await;
    let gone = t.endpoint("t", "ep_2").await;
    t.store.delete_endpoint(&gone, 1).await.unwrap();
    let deltas = [
        delta("t", "ep_1", 0, 1, 0),
        delta("t", "ep_2", 0, 1, 0),
        delta("t", "ep_never", 0, 1, 0),
        // The same endpoint id under another tenant is another endpoint.
        delta("other", "ep_1", 0, 1, 0),
    ];
    assert_eq!(t.store.add_endpoint_stats(&deltas).await.unwrap(), 1);
    assert_eq!(buckets(&t.store, &kept.id).await.len(), 1);
    assert!(buckets(&t.store, "ep_2").await.is_empty());
    let other = t
        .store
        .endpoint_stats(&"other".into(), &"ep_1".into(), 0, u64::MAX / 2)
        .await
        .unwrap();
    assert!(other.is_empty());
}

async fn an_endpoints_delete_and_its_tenants_purge_remove_its_buckets(t: TestStore) {
    let s = &t.store;
    let a = t.endpoint("t", "ep_a").await;
    t.endpoint("t", "ep_b").await;
    t.endpoint("u", "ep_u").await;
    let mut deltas = Vec::new();
    for (tenant, ep) in [("t", "ep_a"), ("t", "ep_b"), ("u", "ep_u")] {
        for bucket in 0..3 {
            deltas.push(delta(tenant, ep, bucket * 5 * MIN, 1, 0));
        }
    }
    assert_eq!(s.add_endpoint_stats(&deltas).await.unwrap(), 9);
    s.delete_endpoint(&a, 1).await.unwrap();
    assert!(buckets(s, "ep_a").await.is_empty());
    assert_eq!(buckets(s, "ep_b").await.len(), 3, "another endpoint's stay");
    // The purge removes what is left of the tenant, its buckets included.
    while s.purge_tenant(&"t".into(), 2).await.unwrap() > 0 {}
    assert!(buckets(s, "ep_b").await.is_empty());
    let other = s
        .endpoint_stats(&"u".into(), &"ep_u".into(), 0, u64::MAX / 2)
        .await
        .unwrap();
    assert_eq!(other.len(), 3, "another tenant's stay");
}

async fn the_sweep_removes_only_buckets_older_than_its_bound(t: TestStore) {
    let s = &t.store;
    let mut deltas = Vec::new();
    for ep in ["ep_1", "ep_2", "ep_3"] {
        t.endpoint("t", ep).await;
        for bucket in 0..4 {
            deltas.push(delta("t", ep, bucket * 5 * MIN, 1, 0));
        }
    }
    assert_eq!(s.add_endpoint_stats(&deltas).await.unwrap(), 12);
    // Two buckets of each endpoint start before 10 minutes: six in all.
    let mut removed = Vec::new();
    loop {
        let n = s.sweep_endpoint_stats(10 * MIN, 4).await.unwrap();
        removed.push(n);
        if n < 4 {
            break;
        }
    }
    assert_eq!(removed, [4, 2]);
    for ep in ["ep_1", "ep_2", "ep_3"] {
        let starts: Vec<u64> = buckets(s, ep).await.iter().map(|b| b.start_ms).collect();
        assert_eq!(starts, [10 * MIN, 15 * MIN], "{ep}");
    }
    assert_eq!(s.sweep_endpoint_stats(10 * MIN, 4).await.unwrap(), 0);
}

async fn pending_deliveries_are_counted_from_the_schedule_up_to_a_cap(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let other = t.endpoint("t", "ep_2").await;
    for _ in 0..3 {
        t.ingest("t", &[&ep, &other], 0).await;
    }
    t.ingest("t", &[&other], 0).await;
    let s = &t.store;
    assert_eq!(s.count_pending(&ep.id, 100).await.unwrap(), 3);
    assert_eq!(s.count_pending(&other.id, 100).await.unwrap(), 4);
    assert_eq!(s.count_pending(&ep.id, 2).await.unwrap(), 2, "the cap");
    assert_eq!(s.count_pending(&"ep_none".into(), 100).await.unwrap(), 0);
    // A settled delivery is no longer pending.
    let due = s.due_entries(crate::store::Lane::First, &ep.id, 0, 1).await;
    let lease = due.unwrap().remove(0);
    let d = s
        .delivery(&"t".into(), &lease.delivery_id().into())
        .await
        .unwrap()
        .unwrap();
    super::first_attempt(s, &d, &lease, None, 5).await;
    assert_eq!(s.count_pending(&ep.id, 100).await.unwrap(), 2);
}
