//! Outcomes written together: a batch never holds two outcomes of one
//! delivery, and one statement writes each current outcome (a retry, a
//! settled delivery) while answering a stale one stale, changing nothing of it.

use tokio::sync::{mpsc, oneshot};

use super::{Gathering, Job, write_batch};
use crate::store::contract::attempt;
use crate::store::postgres::outcomes::OutcomeRow;
use crate::store::testing::TestStore;
use crate::store::{AttemptWrite, DeliveryRecord, DeliveryState, Lane, Lease, WriteResult};

const NOW: u64 = 1_700_000_000_000;

/// The outcome of `d`'s first attempt under `lease`: a retry due at
/// `retry_at`, or (`None`) a success.
fn outcome(d: &DeliveryRecord, lease: &Lease, retry_at: Option<u64>) -> OutcomeRow {
    let mut after = d.clone();
    after.attempts += 1;
    after.state = if retry_at.is_some() {
        DeliveryState::Pending
    } else {
        DeliveryState::Succeeded
    };
    let status = if retry_at.is_some() { 503 } else { 200 };
    let log = attempt(after.series, status, retry_at);
    OutcomeRow::new(&AttemptWrite {
        delivery: &after,
        expected_series: d.series,
        expected_attempts: d.attempts,
        attempt: &log,
        lease,
        next_due_ms: retry_at,
        disable_endpoint: None,
    })
}

fn job(
    row: OutcomeRow,
) -> (
    Job,
    oneshot::Receiver<Result<WriteResult, crate::store::StoreError>>,
) {
    let (reply, answer) = oneshot::channel();
    (Job { row, reply }, answer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_writes_each_current_outcome_and_answers_a_stale_one_stale() {
    let t = TestStore::postgres().await;
    let ep = t.endpoint("t", "ep").await;
    let mut ds = Vec::new();
    for _ in 0..3 {
        ds.extend(t.ingest("t", &[&ep], NOW).await);
    }
    let pg = t.store.postgres().unwrap();
    let leases = pg
        .due_entries(Lane::First, "ep", NOW + 1, 10)
        .await
        .unwrap();
    assert_eq!(leases.len(), 3);
    let lease_of = |d: &DeliveryRecord| {
        leases
            .iter()
            .find(|l| l.0.delivery_id == d.id)
            .unwrap()
            .clone()
    };
    let (settled, retried, stale) = (&ds[0], &ds[1], &ds[2]);
    let mut wrong = lease_of(stale);
    wrong.1 = wrong.1.wrapping_add(1);
    let retry_at = NOW + 60_000;
    let mut jobs = Vec::new();
    let mut answers = Vec::new();
    for row in [
        outcome(settled, &lease_of(settled), None),
        outcome(retried, &lease_of(retried), Some(retry_at)),
        outcome(stale, &wrong, None),
    ] {
        let (j, a) = job(row);
        jobs.push(j);
        answers.push(a);
    }
    write_batch(&pg.inner.relaxed, jobs).await;
    let mut results = Vec::new();
    for a in answers {
        results.push(a.await.unwrap().unwrap());
    }
    assert_eq!(
        results,
        [
            WriteResult::Written,
            WriteResult::Written,
            WriteResult::Stale
        ]
    );

    let client = pg.client().await.unwrap();
    let queue = client
        .query(
            "SELECT delivery_id, lane, due_ms, attempts, lease_token IS NULL FROM queue ORDER BY delivery_id",
            &[],
        )
        .await
        .unwrap();
    let rows: Vec<(String, i16, i64, i32, bool)> = queue
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect();
    assert_eq!(
        rows.len(),
        2,
        "the settled delivery left the queue: {rows:?}"
    );
    let retry_row = rows.iter().find(|r| r.0 == retried.id.as_str()).unwrap();
    assert_eq!(
        (retry_row.1, retry_row.2, retry_row.3, retry_row.4),
        (1, retry_at as i64, 1, true)
    );
    let stale_row = rows.iter().find(|r| r.0 == stale.id.as_str()).unwrap();
    assert_eq!(
        (stale_row.1, stale_row.3, stale_row.4),
        (0, 0, false),
        "still leased, untouched"
    );
    let states = client
        .query("SELECT id, state FROM deliveries ORDER BY id", &[])
        .await
        .unwrap();
    let state_of = |id: &str| -> String {
        states
            .iter()
            .find(|r| r.get::<_, String>(0) == id)
            .unwrap()
            .get(1)
    };
    assert_eq!(state_of(settled.id.as_str()), "succeeded");
    assert_eq!(state_of(retried.id.as_str()), "pending");
    assert_eq!(state_of(stale.id.as_str()), "pending");
    let logged: i64 = client
        .query_one("SELECT count(*) FROM attempts", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(logged, 2, "the stale outcome is not logged here");
}

#[tokio::test]
async fn a_batch_never_holds_two_outcomes_of_one_delivery() {
    let t = TestStore::sled().await;
    let ep = t.endpoint("t", "ep").await;
    let a = t.ingest("t", &[&ep], NOW).await.remove(0);
    let b = t.ingest("t", &[&ep], NOW).await.remove(0);
    let lease = |d: &DeliveryRecord| {
        Lease(
            crate::store::DueEntry {
                lane: Lane::First,
                endpoint_id: d.endpoint_id.clone(),
                due_ms: NOW,
                delivery_id: d.id.clone(),
            },
            7,
            None,
        )
    };
    let (tx, rx) = mpsc::channel(8);
    for row in [
        outcome(&a, &lease(&a), None),
        outcome(&b, &lease(&b), None),
        outcome(&a, &lease(&a), Some(NOW + 1)),
        outcome(&b, &lease(&b), None),
    ] {
        tx.send(job(row).0).await.unwrap();
    }
    let mut gathering = Gathering { rx, held: None };
    let ids = |batch: Vec<Job>| -> Vec<String> {
        batch
            .iter()
            .map(|j| j.row.delivery_id().to_owned())
            .collect()
    };
    let first = ids(gathering.next_batch().await.unwrap());
    assert_eq!(first, [a.id.to_string(), b.id.to_string()]);
    let second = ids(gathering.next_batch().await.unwrap());
    assert_eq!(second, [a.id.to_string(), b.id.to_string()]);
    drop(tx);
    assert!(
        gathering.next_batch().await.is_none(),
        "none left once the store stops"
    );
}
