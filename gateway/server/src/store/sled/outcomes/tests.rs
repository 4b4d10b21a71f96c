//! Schedule entries left behind (by a crash or an older build) are removed by
//! `due_delivery` instead of being served forever: states only raw writes make.
//! Leases and outcomes as every backend must handle them are in
//! `store::contract::leases`.

use super::*;
use crate::store::DueEntry;
use crate::store::*;

const T: &str = "t";

fn delivery(next_ms: u64) -> DeliveryRecord {
    DeliveryRecord {
        id: "dlv_1".into(),
        tenant_id: T.into(),
        event_id: "evt_1".into(),
        endpoint_id: "ep_1".into(),
        event_type: "x".into(),
        state: DeliveryState::Pending,
        series: 1,
        attempts: 0,
        first_attempt_at_ms: None,
        next_attempt_at_ms: Some(next_ms),
        last_delay_ms: None,
        last_status: None,
        last_error: None,
        dead_reason: None,
        created_at_ms: 0,
        updated_at_ms: 0,
        internal_errors: 0,
        attempt_ids: Vec::new(),
        test: false,
    }
}

fn entry(lane: Lane, due_ms: u64) -> Lease {
    Lease(
        DueEntry {
            lane,
            endpoint_id: "ep_1".into(),
            due_ms,
            delivery_id: "dlv_1".into(),
        },
        0,
        None,
    )
}

/// A store holding an endpoint, `d` and the schedule entries given.
fn store_with(d: &DeliveryRecord, entries: &[&Lease]) -> (SledStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path(), 1 << 20, 0).unwrap();
    let records = &store.records().unwrap();
    records
        .insert(keys::delivery(T, &d.id), records::encode(d))
        .unwrap();
    records
        .insert(keys::endpoint(T, &d.endpoint_id), b"\x01{}".as_slice())
        .unwrap();
    for e in entries {
        records.insert(e.0.encode(), T.as_bytes()).unwrap();
    }
    (store, dir)
}

fn has(store: &SledStore, e: &Lease) -> bool {
    store.records().unwrap().contains_key(e.0.encode()).unwrap()
}

#[test]
fn entries_left_behind_are_removed() {
    let retry = entry(Lane::Retry, 1011);
    // Finished: the entry is an orphan.
    let mut done = delivery(1011);
    done.state = DeliveryState::Succeeded;
    let (store, _dir) = store_with(&done, &[&retry]);
    assert!(store.due_delivery(T, &retry).unwrap().is_none());
    assert!(!has(&store, &retry));
    // Pending, but due at another time: also an orphan.
    let (store, _dir) = store_with(&delivery(5000), &[&retry]);
    assert!(store.due_delivery(T, &retry).unwrap().is_none());
    assert!(!has(&store, &retry));
}
