//! Stale schedule entries: a retry never starts early, and an entry left behind
//! is removed instead of being served forever.

use super::*;
use crate::policy::VerdictKind;
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
    }
}

fn entry(lane: Lane, due_ms: u64) -> Lease {
    Lease(keys::ScheduleKey {
        lane,
        endpoint_id: "ep_1".into(),
        due_ms,
        delivery_id: "dlv_1".into(),
    })
}

fn attempt() -> AttemptRecord {
    AttemptRecord {
        series: 1,
        attempt: 1,
        started_at_ms: 10,
        duration_ms: 1,
        status: Some(503),
        error_kind: None,
        response_snippet: String::new(),
        verdict: VerdictKind::Retry.into(),
        delay_ms: Some(1000),
        next_attempt_at_ms: Some(1011),
        dead_reason: None,
        decided_by: "builtin".into(),
        policy: "builtin:default".into(),
    }
}

/// A store holding an endpoint, `d` and the schedule entries given.
fn store_with(d: &DeliveryRecord, entries: &[&Lease]) -> (SledStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path(), 1 << 20, 0).unwrap();
    let records = &store.inner.records;
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
    store.inner.records.contains_key(e.0.encode()).unwrap()
}

#[test]
fn the_current_entry_yields_its_delivery() {
    let first = entry(Lane::First, 10);
    let (store, _dir) = store_with(&delivery(10), &[&first]);
    let d = store.due_delivery(T, &first).unwrap();
    assert_eq!(d.map(|d| d.id).as_deref(), Some("dlv_1"));
    assert!(has(&store, &first));
}

#[test]
fn an_entry_already_attempted_yields_nothing() {
    // The first attempt moved the delivery to a retry at 1011; a scan that still
    // held the first-lane entry must not start the retry now.
    let (first, retry) = (entry(Lane::First, 10), entry(Lane::Retry, 1011));
    let mut d = delivery(1011);
    d.attempts = 1;
    let (store, _dir) = store_with(&d, &[&retry]);
    assert!(store.due_delivery(T, &first).unwrap().is_none());
    assert!(has(&store, &retry), "the real retry entry stays");
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

/// Records attempt 1 of `dlv_1`, made from `first`, as a 503 retried at 1011.
async fn record_first_attempt_503(store: &SledStore, first: &Lease) -> WriteResult {
    let mut after = delivery(1011);
    after.attempts = 1;
    let log = attempt();
    let write = AttemptWrite {
        delivery: &after,
        expected_series: 1,
        expected_attempts: 0,
        attempt: &log,
        lease: first,
        next_due_ms: Some(1011),
        disable_endpoint: None,
    };
    store.record_attempt(write).await.unwrap()
}

#[tokio::test]
async fn an_outcome_for_an_entry_already_consumed_is_stale() {
    let first = entry(Lane::First, 10);
    let (store, _dir) = store_with(&delivery(10), &[]);
    assert_eq!(
        record_first_attempt_503(&store, &first).await,
        WriteResult::Stale
    );
    assert!(
        !has(&store, &entry(Lane::Retry, 1011)),
        "no retry entry written"
    );
}

#[tokio::test]
async fn an_outcome_moves_the_entry_to_the_retry_lane() {
    let first = entry(Lane::First, 10);
    let (store, _dir) = store_with(&delivery(10), &[&first]);
    assert_eq!(
        record_first_attempt_503(&store, &first).await,
        WriteResult::Written
    );
    assert!(!has(&store, &first));
    let retry = entry(Lane::Retry, 1011);
    assert!(has(&store, &retry));
    assert!(store.due_delivery(T, &retry).unwrap().is_some());
}
