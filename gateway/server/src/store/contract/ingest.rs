//! Ingest: one event fans out to one delivery per endpoint, due now; an
//! `Idempotency-Key` makes repeats answer the original 202, even when they race;
//! the idempotency sweep forgets keys past their 24 h.

use super::{at_once, created, event, payload};
use crate::ids::{EndpointId, EventId, TenantId};
use crate::store::testing::TestStore;
use crate::store::{DeliveryState, IDEMPOTENCY_TTL_MS, IngestOutcome, Lane};

contract_tests! {
    one_event_fans_out_to_one_due_delivery_per_endpoint,
    a_repeat_with_the_same_key_and_body_answers_the_original_response,
    a_key_reused_with_another_body_is_refused_and_writes_nothing,
    concurrent_repeats_of_one_key_create_exactly_one_event,
    the_idempotency_sweep_forgets_only_expired_keys,
}

async fn one_event_fans_out_to_one_due_delivery_per_endpoint(t: TestStore) {
    let (a, b) = (t.endpoint("t", "ep_a").await, t.endpoint("t", "ep_b").await);
    let p = payload();
    let IngestOutcome::Created {
        receipt,
        deliveries,
    } = t
        .store
        .ingest(event(&p, vec![&a, &b], None, 7))
        .await
        .unwrap()
    else {
        panic!("a new event is created");
    };
    assert_eq!(deliveries.len(), 2);
    let event_id = receipt.event_id.as_str();
    let ev = t
        .store
        .event(&TenantId::from("t"), &EventId::from(event_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (ev.event_type.as_str(), ev.created_at_ms),
        ("order.paid", 7)
    );
    assert_eq!(ev.payload.get(), p.get(), "the payload is kept verbatim");
    assert_eq!(ev.deliveries.len(), 2);
    let payload = t
        .store
        .event_payload(&TenantId::from("t"), &EventId::from(event_id))
        .await
        .unwrap();
    let payload = payload.map(|b| b.payload);
    assert_eq!(payload.as_deref(), Some(p.get()));
    for (d, ep) in deliveries.iter().zip(["ep_a", "ep_b"]) {
        let stored = t
            .store
            .delivery(&TenantId::from("t"), &d.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (stored.endpoint_id.as_str(), stored.event_id.as_str()),
            (ep, event_id)
        );
        assert_eq!(stored.state, DeliveryState::Pending);
        assert_eq!((stored.series, stored.attempts), (1, 0));
        assert_eq!(stored.next_attempt_at_ms, Some(7), "due now");
        let due = t
            .store
            .due_entries(Lane::First, &EndpointId::from(ep), 7, 10)
            .await
            .unwrap();
        assert_eq!(due.len(), 1);
        assert_eq!((due[0].delivery_id(), due[0].due_ms()), (d.id.as_str(), 7));
        assert!(
            t.store
                .due_entries(Lane::Retry, &EndpointId::from(ep), 7, 10)
                .await
                .unwrap()
                .is_empty()
        );
    }
    // Another tenant sees none of it.
    assert!(
        t.store
            .event(&TenantId::from("u"), &EventId::from(event_id))
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        t.store
            .delivery(&TenantId::from("u"), &deliveries[0].id)
            .await
            .unwrap()
            .is_none()
    );
}

async fn a_repeat_with_the_same_key_and_body_answers_the_original_response(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let p = payload();
    let IngestOutcome::Created { receipt, .. } = t
        .store
        .ingest(event(&p, vec![&ep], Some(("K", "c1:h1")), 0))
        .await
        .unwrap()
    else {
        panic!("the first use of a key creates");
    };
    // Still within the key's 24 h.
    let again = t
        .store
        .ingest(event(&p, vec![&ep], Some(("K", "c1:h1")), 5))
        .await;
    match again.unwrap() {
        IngestOutcome::Replayed(r) => assert_eq!(r, receipt),
        other => panic!("a repeat created again: {other:?}"),
    }
    let due = t
        .store
        .due_entries(Lane::First, &EndpointId::from("ep_1"), 10, 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 1, "the repeat scheduled nothing");
}

async fn a_key_reused_with_another_body_is_refused_and_writes_nothing(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    let p = payload();
    let first = t
        .store
        .ingest(event(&p, vec![&ep], Some(("K", "c1:h1")), 0))
        .await;
    assert!(created(&first.unwrap()));
    let other = t
        .store
        .ingest(event(&p, vec![&ep], Some(("K", "c1:h2")), 1))
        .await;
    assert!(matches!(other.unwrap(), IngestOutcome::KeyReused));
    let due = t
        .store
        .due_entries(Lane::First, &EndpointId::from("ep_1"), 10, 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 1);
    // Keys are per tenant: another tenant may use the same one.
    let mut theirs = event(&p, Vec::new(), Some(("K", "c1:h2")), 1);
    theirs.tenant_id = "u";
    assert!(created(&t.store.ingest(theirs).await.unwrap()));
}

async fn concurrent_repeats_of_one_key_create_exactly_one_event(t: TestStore) {
    let ep = t.endpoint("t", "ep_1").await;
    for round in 0..50u64 {
        let key = format!("K{round}");
        let outcomes = at_once(16, |_| {
            let (store, ep, key) = (t.store.clone(), ep.clone(), key.clone());
            async move {
                let p = payload();
                let repeat = event(&p, vec![&ep], Some((&key, "c1:h")), round);
                store.ingest(repeat).await.unwrap()
            }
        });
        let (mut creates, mut responses) = (0, Vec::new());
        for outcome in outcomes.await {
            match outcome {
                IngestOutcome::Created { receipt, .. } => {
                    creates += 1;
                    responses.push(receipt);
                }
                IngestOutcome::Replayed(r) => responses.push(r),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(creates, 1, "round {round}");
        assert!(
            responses.iter().all(|r| *r == responses[0]),
            "one answer for all"
        );
        let all = crate::store::DeliveryFilter::default();
        let tenant = TenantId::from("t");
        let made = t
            .store
            .list_deliveries(&tenant, &all, |_| true, 1_000, None);
        assert_eq!(
            made.await.unwrap().data.len() as u64,
            round + 1,
            "one delivery a round"
        );
    }
}

/// Moved from `sled/events_tests.rs`: more keys than one sweep batch, half of
/// them still fresh.
async fn the_idempotency_sweep_forgets_only_expired_keys(t: TestStore) {
    let p = payload();
    let keys: Vec<String> = (0..1100).map(|i| format!("k{i:04}")).collect();
    for (i, k) in keys.iter().enumerate() {
        let at = if i % 2 == 0 { 0 } else { IDEMPOTENCY_TTL_MS };
        let made = t
            .store
            .ingest(event(&p, Vec::new(), Some((k, "c1:h")), at))
            .await;
        assert!(created(&made.unwrap()));
    }
    let now = IDEMPOTENCY_TTL_MS + 1;
    assert_eq!(t.store.sweep_idempotency(now).await.unwrap(), 550);
    assert_eq!(
        t.store.sweep_idempotency(now).await.unwrap(),
        0,
        "already gone"
    );
    // A fresh key still answers its repeat; an expired one is free for a new body.
    let fresh = t
        .store
        .ingest(event(&p, Vec::new(), Some(("k0001", "c1:x")), now))
        .await;
    assert!(matches!(fresh.unwrap(), IngestOutcome::KeyReused));
    let freed = t
        .store
        .ingest(event(&p, Vec::new(), Some(("k0000", "c1:x")), now))
        .await;
    assert!(created(&freed.unwrap()));
    // Nothing expires before its 24 h.
    assert_eq!(t.store.sweep_idempotency(now + 1).await.unwrap(), 0);
}

#[test]
fn a_key_stored_before_bodies_were_compared_by_meaning_answers_any_repeat() {
    use crate::store::events::same_body;
    assert!(same_body("c1:a", "c1:a"));
    assert!(!same_body("c1:a", "c1:b"));
    assert!(
        same_body("0f1e", "c1:b"),
        "a raw-bytes hash from before the upgrade"
    );
}
