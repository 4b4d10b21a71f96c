//! Bulk operations make progress while every runtime worker is held: their
//! batches run on the blocking pool, not on the runtime that serves requests.

use crate::store::DueEntry;
use crate::store::sled::keys::ScheduleKey as _;
use std::time::{Duration, Instant};

use super::*;
use crate::store::sled::keys;
use crate::store::testing::TestStore;
use crate::store::*;
use crate::store::{
    DeliveryFilter, DeliveryRecord, DeliveryState, IDEMPOTENCY_TTL_MS, IdempotencyRecord, records,
};

/// More than one batch of every bulk operation.
const RECORDS: usize = 1_200;

fn one_worker() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Lets an operation spawned just before start, then holds the runtime's only
/// worker (a blocking wait) until `done` holds; `false` after a minute. Only
/// work off the runtime's workers can progress meanwhile.
async fn worker_held_until(done: impl Fn() -> bool) -> bool {
    for _ in 0..16 {
        tokio::task::yield_now().await;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

fn count(store: &SledStore, prefix: &[u8]) -> usize {
    store.records().unwrap().scan_prefix(prefix).count()
}

/// Copies of `template` written straight to the records tree, as `state`, each
/// with a first-lane schedule entry if pending.
fn seed_deliveries(store: &SledStore, template: &DeliveryRecord, state: DeliveryState) {
    for i in 0..RECORDS {
        let mut d = template.clone();
        d.id = format!("dlv_bulk{i:05}").into();
        d.state = state;
        let key = keys::delivery(&d.tenant_id, &d.id);
        store
            .records()
            .unwrap()
            .insert(key, records::encode(&d))
            .unwrap();
        if state == DeliveryState::Pending {
            let entry = DueEntry {
                lane: Lane::First,
                endpoint_id: d.endpoint_id.clone(),
                due_ms: 1,
                delivery_id: d.id.clone(),
            };
            store
                .records()
                .unwrap()
                .insert(entry.encode(), d.tenant_id.as_bytes())
                .unwrap();
        }
    }
}

#[test]
fn bulk_replay_runs_off_the_runtime_workers() {
    one_worker().block_on(async {
        let t = TestStore::new().await;
        let ep = t.endpoint("t", "ep_1").await;
        let template = t.ingest("t", &[&ep], 0).await.remove(0);
        seed_deliveries(t.embedded(), &template, DeliveryState::Dead);
        let store = t.embedded().clone();
        let dead = DeliveryFilter {
            state: Some(DeliveryState::Dead),
            ..DeliveryFilter::default()
        };
        let op = tokio::spawn(async move { store.replay_matching("t", &dead, 5).await });
        let schedule = keys::schedule_of(Lane::First, "ep_1");
        let replayed = || count(t.embedded(), &schedule) == RECORDS + 1;
        assert!(worker_held_until(replayed).await, "replay needs the worker");
        assert_eq!(op.await.unwrap().unwrap().replayed, RECORDS);
    });
}

#[test]
fn endpoint_delete_runs_off_the_runtime_workers() {
    one_worker().block_on(async {
        let t = TestStore::new().await;
        let ep = t.endpoint("t", "ep_1").await;
        let template = t.ingest("t", &[&ep], 0).await.remove(0);
        seed_deliveries(t.embedded(), &template, DeliveryState::Pending);
        let store = t.embedded().clone();
        let op = tokio::spawn(async move { store.delete_endpoint(&ep, 5).await });
        let schedule = keys::schedule_of(Lane::First, "ep_1");
        let emptied = || count(t.embedded(), &schedule) == 0;
        assert!(worker_held_until(emptied).await, "delete needs the worker");
        assert_eq!(op.await.unwrap().unwrap(), RECORDS + 1);
    });
}

#[test]
fn idempotency_sweep_runs_off_the_runtime_workers() {
    one_worker().block_on(async {
        let t = TestStore::new().await;
        for i in 0..RECORDS {
            let rec = IdempotencyRecord {
                body_sha256: String::new(),
                receipt: IngestReceipt {
                    event_id: String::new().into(),
                    deliveries: Vec::new(),
                },
                created_at_ms: 0,
            };
            let key = keys::idempotency("t", &format!("key-{i}"));
            t.embedded()
                .records()
                .unwrap()
                .insert(key, records::encode(&rec))
                .unwrap();
        }
        let store = t.embedded().clone();
        let now = IDEMPOTENCY_TTL_MS + 1;
        let op = tokio::spawn(async move { store.sweep_idempotency(now).await });
        let swept = || count(t.embedded(), &keys::all_idempotency()) == 0;
        assert!(worker_held_until(swept).await, "the sweep needs the worker");
        assert_eq!(op.await.unwrap().unwrap(), RECORDS);
    });
}
