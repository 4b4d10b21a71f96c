//! The backend contract: what every storage backend must do, stated once
//! against the [`Store`] facade and run on each backend.
//!
//! Each test is an `async fn(TestStore)` that touches only `t.store` (and the
//! fixture's backend-neutral helpers); [`contract_tests!`] runs it on every
//! backend. A new backend adds one `@backend` line to the macro and a
//! `TestStore::<backend>()` constructor; no test changes.

use crate::ids::{EndpointId, TenantId};
use std::sync::Arc;

use serde_json::value::RawValue;
use tokio::sync::Barrier;

use super::testing::TestStore;
use super::{
    AttemptRecord, AttemptWrite, DeliveryRecord, DeliveryState, EndpointVersion, IngestOutcome,
    Lane, Lease, NewEvent, Store, WriteResult,
};
use crate::policy::VerdictKind;

/// Runs each named contract test on every backend, on a multi-threaded runtime
/// so spawned tasks really race.
macro_rules! contract_tests {
    ($($name:ident),* $(,)?) => {
        contract_tests!(@backend sled, $($name),*);
        contract_tests!(@backend postgres, $($name),*);
    };
    (@backend $backend:ident, $($name:ident),*) => {
        mod $backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name($crate::store::testing::TestStore::$backend().await).await
                }
            )*
        }
    };
}

mod endpoint_stats;
mod endpoints;
mod event_list;
mod feed;
mod ingest;
mod leases;
mod listing;
mod plugins;
mod races;
mod replay;
mod retention;
mod tasks;
mod tenant_lifecycle;

impl TestStore {
    /// An endpoint as stored now, for a swap.
    async fn version(&self, tenant: &str, id: &str) -> EndpointVersion {
        let read = self
            .store
            .endpoint_version(&TenantId::from(tenant), &EndpointId::from(id))
            .await
            .unwrap();
        read.expect("the endpoint exists")
    }
}

/// The payload every test event carries.
fn payload() -> Box<RawValue> {
    RawValue::from_string("{\"n\":1}".into()).unwrap()
}

/// An `order.paid` event of tenant `t` for `endpoints`, with an optional
/// `(Idempotency-Key, body hash)`.
fn event<'a>(
    payload: &'a RawValue,
    endpoints: Vec<&'a super::EndpointRecord>,
    idempotency: Option<(&'a str, &str)>,
    now_ms: u64,
) -> NewEvent<'a> {
    NewEvent {
        labels: Default::default(),
        tenant_id: "t",
        event_type: "order.paid",
        payload,
        idempotency: idempotency.map(|(k, body)| (k, body.to_owned())),
        endpoints,
        now_ms,
    }
}

/// The one lease due for `endpoint_id` in `lane` by `now_ms`.
async fn only_lease(store: &Store, lane: Lane, endpoint_id: &str, now_ms: u64) -> Lease {
    let mut due = store
        .due_entries(lane, &EndpointId::from(endpoint_id), now_ms, 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 1, "{due:?}");
    due.remove(0)
}

/// The log entry of attempt 1 of `series`, answered with `status`.
pub(super) fn attempt(series: u32, status: u16, next_ms: Option<u64>) -> AttemptRecord {
    AttemptRecord {
        id: None,
        of: None,
        sent: None,
        series,
        attempt: 1,
        started_at_ms: 10,
        duration_ms: 1,
        status: Some(status),
        error_kind: None,
        response_snippet: String::new(),
        verdict: if next_ms.is_some() {
            VerdictKind::Retry.into()
        } else {
            VerdictKind::Delivered.into()
        },
        delay_ms: next_ms.map(|n| n - 11),
        next_attempt_at_ms: next_ms,
        dead_reason: None,
        decided_by: "builtin".into(),
        policy: "builtin:default".into(),
        node_id: None,
        late: false,
        transform: None,
    }
}

/// Writes attempt 1 of `d`'s current series under `lease`: a 503 retried at
/// `retry_at` if given, else a 200 that settles it `succeeded` at `now_ms`.
async fn first_attempt(
    store: &Store,
    d: &DeliveryRecord,
    lease: &Lease,
    retry_at: Option<u64>,
    now_ms: u64,
) -> WriteResult {
    let mut after = d.clone();
    after.attempts = 1;
    after.updated_at_ms = now_ms;
    after.next_attempt_at_ms = retry_at;
    if retry_at.is_none() {
        after.state = DeliveryState::Succeeded;
    }
    let status = if retry_at.is_some() { 503 } else { 200 };
    // With an id, as the gateway writes it: listed through the attempt indexes.
    let log = AttemptRecord {
        id: Some(crate::ids::AttemptId::generate(now_ms)),
        of: Some(super::AttemptOf {
            delivery_id: d.id.clone(),
            endpoint_id: d.endpoint_id.clone(),
            event_id: d.event_id.clone(),
            event_type: d.event_type.clone(),
            test: false,
        }),
        ..attempt(d.series, status, retry_at)
    };
    store
        .record_attempt(AttemptWrite {
            delivery: &after,
            expected_series: d.series,
            expected_attempts: d.attempts,
            attempt: &log,
            lease,
            next_due_ms: retry_at,
            disable_endpoint: None,
        })
        .await
        .unwrap()
}

/// One delivery on `ep_1`, ingested at 0 and settled `succeeded` at `now_ms`.
async fn succeeded(t: &TestStore, now_ms: u64) -> DeliveryRecord {
    let ep = t.endpoint("t", "ep_1").await;
    let d = t.ingest("t", &[&ep], 0).await.remove(0);
    let lease = only_lease(&t.store, Lane::First, "ep_1", 0).await;
    assert_eq!(
        first_attempt(&t.store, &d, &lease, None, now_ms).await,
        WriteResult::Written
    );
    t.store
        .delivery(&TenantId::from("t"), &d.id)
        .await
        .unwrap()
        .unwrap()
}

/// Runs `n` operations (each made from its index) at once, lined up on a
/// barrier, and returns what each did, in order. Races show only when run
/// often, so callers repeat it for many rounds.
async fn at_once<T, F>(n: usize, op: impl Fn(usize) -> F) -> Vec<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let start = Arc::new(Barrier::new(n));
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (start, op) = (start.clone(), op(i));
            tokio::spawn(async move {
                start.wait().await;
                op.await
            })
        })
        .collect();
    let mut done = Vec::with_capacity(n);
    for task in tasks {
        done.push(task.await.unwrap());
    }
    done
}

/// Whether ingest created an event.
fn created(outcome: &IngestOutcome) -> bool {
    matches!(outcome, IngestOutcome::Created { .. })
}
