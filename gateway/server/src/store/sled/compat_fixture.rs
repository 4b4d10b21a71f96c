//! The generator of the data-dir fixture that [`super::compat_tests`] opens.
//!
//! The committed `gateway/server/tests/fixtures/datadir-v1/` was written by the
//! build before records were typed (commit b9c3634), which stored a breaker never
//! changed since its endpoint was created as `""`; builds since write `"closed"`.
//! To write it again exactly, check out that commit and run
//! `cargo test -p hookgate-server --lib store::compat_tests::write_fixture -- --ignored`.
//! Here, `cargo test -p hookgate-server --lib store::sled::compat_fixture::write_fixture -- --ignored`
//! writes the records of the build it runs on to the same path. A fixture is
//! regenerated to cover new records, never to make a test pass.

use crate::store::DueEntry;
use std::path::PathBuf;

use serde_json::value::RawValue;
use sha2::Digest;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::policy::{DeadReason, ErrorKind, FailureKind, VerdictKind};
use crate::store::testing::endpoint;
use crate::store::*;

pub(super) const TENANT: &str = "acme";
/// The fixture's clock: every time in it is this plus a few seconds.
const T0: u64 = 1_780_000_000_000;

pub(super) fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datadir-v1")
}

/// What the generator's attempt produced and what was decided.
struct Step {
    status: Option<u16>,
    error_kind: Option<ErrorKind>,
    verdict: VerdictKind,
    next: Next,
}

enum Next {
    Done,
    Retry(u64),
    Dead(DeadReason),
}

const fn step(
    status: Option<u16>,
    error_kind: Option<ErrorKind>,
    verdict: VerdictKind,
    next: Next,
) -> Step {
    Step {
        status,
        error_kind,
        verdict,
        next,
    }
}

fn failed(kind: FailureKind) -> Option<ErrorKind> {
    Some(ErrorKind::Failure(kind))
}

/// Records one attempt of `d` as the delivery worker does.
async fn attempt(store: &SledStore, d: &mut DeliveryRecord, s: Step, disable: Option<&str>) {
    let lane = if d.attempts == 0 {
        Lane::First
    } else {
        Lane::Retry
    };
    let entry = DueEntry {
        lane,
        endpoint_id: d.endpoint_id.clone(),
        due_ms: d.next_attempt_at_ms.unwrap(),
        delivery_id: d.id.clone(),
    };
    let (expected_series, expected_attempts) = (d.series, d.attempts);
    let started = entry.due_ms;
    let ended = started + 40;
    let (delay_ms, next_due, dead_reason) = match s.next {
        Next::Done => (None, None, None),
        Next::Retry(delay) => (Some(delay), Some(ended + delay), None),
        Next::Dead(r) => (None, None, Some(Recorded::from(r))),
    };
    d.attempts += 1;
    d.first_attempt_at_ms.get_or_insert(started);
    d.last_status = s.status;
    d.last_error = s.error_kind.map(Into::into);
    d.last_delay_ms = delay_ms.or(d.last_delay_ms);
    d.next_attempt_at_ms = next_due;
    d.dead_reason.clone_from(&dead_reason);
    d.updated_at_ms = ended;
    d.state = match s.next {
        Next::Done => DeliveryState::Succeeded,
        Next::Retry(_) => DeliveryState::Pending,
        Next::Dead(_) => DeliveryState::Dead,
    };
    let log = AttemptRecord {
        id: None,
        of: None,
        sent: None,
        series: d.series,
        attempt: d.attempts,
        started_at_ms: started,
        duration_ms: ended - started,
        status: s.status,
        error_kind: s.error_kind.map(Into::into),
        response_snippet: s
            .status
            .map(|_| "{\"ok\":false}".into())
            .unwrap_or_default(),
        verdict: s.verdict.into(),
        delay_ms,
        next_attempt_at_ms: next_due,
        dead_reason,
        decided_by: "builtin".into(),
        policy: "builtin:default".into(),
        node_id: None,
        late: false,
        transform: None,
    };
    let written = store
        .record_attempt(AttemptWrite {
            delivery: d,
            expected_series,
            expected_attempts,
            attempt: &log,
            lease: &Lease(entry.clone(), 0, None),
            next_due_ms: next_due,
            disable_endpoint: disable.map(str::to_owned),
        })
        .await
        .unwrap();
    assert_eq!(written, WriteResult::Written);
}

/// Ingests one event of type `case` for `ep` at `now_ms`; returns its delivery.
async fn ingest(store: &SledStore, ep: &EndpointRecord, case: &str, now_ms: u64) -> DeliveryRecord {
    let payload = RawValue::from_string(format!("{{\"case\":\"{case}\"}}")).unwrap();
    let outcome = store
        .ingest(NewEvent {
            labels: Default::default(),
            tenant_id: TENANT,
            event_type: case,
            payload: &payload,
            idempotency: None,
            endpoints: vec![ep],
            now_ms,
        })
        .await
        .unwrap();
    match outcome {
        IngestOutcome::Created { mut deliveries, .. } => deliveries.remove(0),
        other => panic!("ingest: {other:?}"),
    }
}

/// Ends the delivery's current schedule entry with `what`, as the engine does.
async fn interrupt(store: &SledStore, d: &DeliveryRecord, what: Interruption) {
    let entry = Lease(
        DueEntry {
            lane: Lane::First,
            endpoint_id: d.endpoint_id.clone(),
            due_ms: d.next_attempt_at_ms.unwrap(),
            delivery_id: d.id.clone(),
        },
        0,
        None,
    );
    let done = store.interrupt(TENANT, &entry, d.created_at_ms + 5, what);
    assert!(matches!(done.await.unwrap(), Interrupted::Ended(_)));
}

/// Writes the fixture with this build. Every delivery has its own event type
/// (`case.*`), so the compat test finds it without knowing its random id.
#[tokio::test]
#[ignore = "writes the committed fixture; run by hand to regenerate it"]
async fn write_fixture() {
    use DeadReason as R;
    use FailureKind as F;
    use VerdictKind as V;
    let dir = fixture_dir();
    let _ = std::fs::remove_dir_all(&dir);
    let store = SledStore::open(&dir, 1 << 20, 0).unwrap();
    let stop = CancellationToken::new();
    store.start_flusher(store.sled_durability().unwrap(), stop.clone());
    let key_hash: [u8; 32] = sha2::Sha256::digest(b"hg_fixture_key").into();
    let tenant = TenantRecord::new(TENANT.into(), key_hash, T0);
    store.create_tenant(&tenant).await.unwrap();

    let mut eps = Vec::new();
    for (id, state, open_until_ms, trips) in [
        ("ep_main", BreakerState::Closed, None, 0),
        ("ep_open", BreakerState::Open, Some(T0 + 600_000), 2),
        ("ep_half", BreakerState::HalfOpen, None, 1),
        ("ep_closed", BreakerState::Closed, None, 3),
        ("ep_gone", BreakerState::Closed, None, 0),
        ("ep_deleted", BreakerState::Closed, None, 0),
    ] {
        let mut ep = endpoint(TENANT, id);
        ep.created_at_ms = T0;
        ep.breaker = BreakerRecord {
            state: state.into(),
            open_until_ms,
            trips,
            failure_streak: trips * 5,
            failing_since_ms: (trips > 0).then_some(T0 + 1_000),
        };
        store.put_endpoint(&ep).await.unwrap();
        eps.push(ep);
    }
    let [main, open, half, closed, gone, deleted] = &eps[..] else {
        unreachable!()
    };
    let mut now = T0 + 10_000;
    let mut next = |case| {
        now += 1_000;
        (case, now)
    };

    let (case, at) = next("case.pending_new");
    ingest(&store, main, case, at).await;

    let (case, at) = next("case.pending_retry");
    let mut d = ingest(&store, open, case, at).await;
    let dns = step(None, failed(F::Dns), V::Retry, Next::Retry(30_000));
    attempt(&store, &mut d, dns, None).await;

    let (case, at) = next("case.succeeded");
    let mut d = ingest(&store, closed, case, at).await;
    let unavailable = step(Some(503), None, V::Retry, Next::Retry(2_000));
    attempt(&store, &mut d, unavailable, None).await;
    let ok = step(Some(200), None, V::Delivered, Next::Done);
    attempt(&store, &mut d, ok, None).await;

    let (case, at) = next("case.max_attempts");
    let mut d = ingest(&store, main, case, at).await;
    let timeout = step(None, failed(F::Timeout), V::Retry, Next::Retry(1_000));
    attempt(&store, &mut d, timeout, None).await;
    let connect = step(
        None,
        failed(F::Connect),
        V::Retry,
        Next::Dead(R::MaxAttempts),
    );
    attempt(&store, &mut d, connect, None).await;

    let (case, at) = next("case.retry_window");
    let mut d = ingest(&store, main, case, at).await;
    let tls = step(None, failed(F::Tls), V::Retry, Next::Dead(R::RetryWindow));
    attempt(&store, &mut d, tls, None).await;

    let (case, at) = next("case.give_up_redirect");
    let mut d = ingest(&store, main, case, at).await;
    let redirect = step(
        Some(301),
        failed(F::Redirect),
        V::GiveUp,
        Next::Dead(R::GiveUp),
    );
    attempt(&store, &mut d, redirect, None).await;

    let (case, at) = next("case.give_up_after_retries");
    let mut d = ingest(&store, half, case, at).await;
    let reset = step(None, failed(F::Reset), V::Retry, Next::Retry(1_000));
    attempt(&store, &mut d, reset, None).await;
    let protocol = step(None, failed(F::Protocol), V::Retry, Next::Retry(2_000));
    attempt(&store, &mut d, protocol, None).await;
    let bad = step(Some(400), None, V::GiveUp, Next::Dead(R::GiveUp));
    attempt(&store, &mut d, bad, None).await;

    let (case, at) = next("case.blocked");
    let mut d = ingest(&store, main, case, at).await;
    let blocked = step(
        None,
        Some(ErrorKind::BlockedAddress),
        V::GiveUp,
        Next::Dead(R::BlockedAddress),
    );
    attempt(&store, &mut d, blocked, None).await;

    let (case, at) = next("case.gone");
    let mut d = ingest(&store, gone, case, at).await;
    let gone_step = step(
        Some(410),
        None,
        V::DisableEndpoint,
        Next::Dead(R::EndpointDisabled),
    );
    attempt(&store, &mut d, gone_step, Some("gone")).await;

    let (case, at) = next("case.internal_error");
    let d = ingest(&store, main, case, at).await;
    let panicked = Interruption::InternalError {
        retry_at_ms: at + 1_000,
        max: 1,
    };
    interrupt(&store, &d, panicked).await;

    let (case, at) = next("case.invalid_request");
    let d = ingest(&store, main, case, at).await;
    interrupt(&store, &d, Interruption::End(R::InvalidRequest)).await;

    let (case, at) = next("case.event_missing");
    let d = ingest(&store, main, case, at).await;
    interrupt(&store, &d, Interruption::End(R::EventMissing)).await;

    let (case, at) = next("case.endpoint_deleted");
    ingest(&store, deleted, case, at).await;
    store.delete_endpoint(deleted, at + 500).await.unwrap();

    store.wait_durable().await.unwrap();
    store.inner.db.db().unwrap().flush().unwrap();
    stop.cancel();
}
