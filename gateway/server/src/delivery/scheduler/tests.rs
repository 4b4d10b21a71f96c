//! The scheduler's bookkeeping, driven turn by turn over a real store.

use crate::ids::EndpointId;
use std::sync::Arc;

use super::{Protection, Scheduler};
use crate::config::BreakerConfig;
use crate::delivery::DeliveryHandle;
use crate::delivery::testing::{START_MS, engine};
use crate::store::{BreakerRecord, BreakerState, Change};

const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// Item 1 of the fair-shares work: ingests to an endpoint whose breaker is open
/// leave no heap entry each; a replay still lets the probe through.
#[tokio::test]
async fn scheduler_heap_growth_while_a_breaker_is_open_stays_bounded() {
    let e = engine(None).await;
    let mut ep = e.store.endpoint("t", "ep_1").await;
    ep.breaker = BreakerRecord {
        state: BreakerState::Open.into(),
        open_until_ms: Some(START_MS + DAY_MS),
        trips: 4,
        ..BreakerRecord::default()
    };
    e.store.store.put_endpoint(&ep).await.unwrap();
    e.store.ingest("t", &[&ep], START_MS).await;
    let (handle, changes) = (DeliveryHandle::default(), e.store.store.changes());
    let protection = Protection {
        node_max_in_flight: 256,
        tenant_max_in_flight: 128,
        breaker: BreakerConfig::default(),
        disable_after_ms: 5 * DAY_MS,
    };
    let mut s = Scheduler::new(Arc::clone(&e.ctx), handle, changes, protection);
    s.endpoints.load(ep).await;
    for _ in 0..100_000 {
        // One ingest a millisecond, each due at once.
        e.clock.advance(std::time::Duration::from_millis(1));
        let now = e.clock_ms();
        s.endpoints
            .apply(Change::Due {
                endpoint_id: "ep_1".into(),
                due_ms: now,
            })
            .await;
        // The loop's turn: whatever is due is served (and meets the open breaker).
        while let Some(id) = s.endpoints.index.pop_due(now) {
            s.serve(&id, now).await;
        }
        assert!(
            s.endpoints.index.heap_len() <= 2,
            "heap grew to {}",
            s.endpoints.index.heap_len()
        );
    }
    assert_eq!(
        s.endpoints.index.queued_at(&EndpointId::from("ep_1")),
        Some(START_MS + DAY_MS)
    );
    // An operator's replay is not an ordinary wake-up: the endpoint is due now.
    s.endpoints
        .apply(Change::Replayed {
            endpoint_id: "ep_1".into(),
        })
        .await;
    assert_eq!(
        s.endpoints.index.pop_due(e.clock_ms()).as_deref(),
        Some("ep_1")
    );
}
