//! The idempotency sweep's compare-and-delete, with its read and its write
//! pulled apart by hand; ingest and the sweep as every backend must do them are
//! in `store::contract::ingest`.

use serde_json::value::RawValue;

use super::*;
use crate::store::*;

fn payload() -> Box<RawValue> {
    RawValue::from_string("{\"n\":1}".into()).unwrap()
}

fn event<'a>(payload: &'a RawValue, key: &'a str, body: &str, now_ms: u64) -> NewEvent<'a> {
    NewEvent {
        labels: Default::default(),
        tenant_id: "t",
        event_type: "order.paid",
        payload,
        idempotency: Some((key, body.to_owned())),
        endpoints: Vec::new(),
        now_ms,
    }
}

async fn open() -> (
    tempfile::TempDir,
    SledStore,
    tokio_util::sync::CancellationToken,
    tokio::task::JoinHandle<()>,
) {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path(), 1 << 20, 0).unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let flusher = store.start_flusher(store.sled_durability().unwrap(), stop.clone());
    (dir, store, stop, flusher)
}

/// Item 3: a sweep that read key K as expired must not delete a fresh record that
/// a new request stored under K before the sweep's write.
#[tokio::test]
async fn idempotency_sweep_never_deletes_a_fresh_key() {
    let (_dir, store, stop, flusher) = open().await;
    let p = payload();
    let old = store.ingest(event(&p, "K", "h1", 0)).await.unwrap();
    assert!(matches!(old, IngestOutcome::Created { .. }));
    let now = IDEMPOTENCY_TTL_MS + 1;
    // The sweep reads K as expired ...
    let (planned, _) = store.expired_idempotency(None, now, 100).unwrap();
    assert_eq!(planned.len(), 1);
    // ... a new request reuses K meanwhile ...
    let IngestOutcome::Created { receipt, .. } =
        store.ingest(event(&p, "K", "h2", now)).await.unwrap()
    else {
        panic!("a fresh use of an expired key creates an event");
    };
    // ... and the sweep's write lands after it.
    let removed = store
        .in_bulk(move |bulk| super::remove_unchanged(bulk, planned))
        .await;
    assert_eq!(removed.unwrap(), 0);
    // A client retry with K is answered from the fresh record, not a duplicate.
    match store.ingest(event(&p, "K", "h2", now + 1)).await.unwrap() {
        IngestOutcome::Replayed(r) => assert_eq!(r, receipt),
        other => panic!("a retry created a duplicate event: {other:?}"),
    }
    stop.cancel();
    flusher.await.unwrap();
}
