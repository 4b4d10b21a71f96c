//! Attempt outcomes written together. Most outcomes (no endpoint to disable,
//! no shared breaker to count) need no transaction of their own, so those that
//! arrive together are written by one statement ([`OUTCOMES`]): one commit,
//! one plan, one round trip for the lot, where each used to pay its own. Each
//! row is still fenced by its own lease, series and attempts, and the answer
//! says which were written and which were stale.
//!
//! A worker takes every outcome waiting (up to [`MAX_BATCH`]); a batch never
//! holds two outcomes of one delivery (the second waits for the next), so no
//! row is written twice by one statement. A batch that meets a conflict (a
//! deadlock with a bulk delete) is written again once; any other failure is
//! every job's, as it would have been each one's alone.

use std::collections::HashSet;
use std::sync::Arc;

use deadpool_postgres::Pool;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_postgres::types::ToSql;

use super::error::pool_error;
use super::outcomes::OutcomeRow;
use super::statements::OUTCOMES;
use super::stats::BatchCounters;
use super::{pg_error, retry_conflicts};
use crate::store::{StoreError, WriteResult};

/// Most outcomes one statement writes.
const MAX_BATCH: usize = 128;

/// One outcome waiting to be written, and who waits for the answer.
struct Job {
    row: OutcomeRow,
    reply: oneshot::Sender<Result<WriteResult, StoreError>>,
}

/// The queue of outcomes and the workers that write it.
pub(super) struct OutcomeBatcher {
    jobs: mpsc::Sender<Job>,
}

impl OutcomeBatcher {
    /// Starts one worker per relaxed connection: while one commits, the next
    /// batch gathers.
    pub(super) fn start(
        relaxed: Pool,
        workers: usize,
        counters: BatchCounters,
    ) -> (Self, Vec<tokio::task::JoinHandle<()>>) {
        let (jobs, rx) = mpsc::channel::<Job>(MAX_BATCH * 8);
        let rx = Arc::new(Mutex::new(Gathering { rx, held: None }));
        let tasks = (0..workers.max(1))
            .map(|_| {
                let (rx, pool, counters) = (Arc::clone(&rx), relaxed.clone(), counters.clone());
                tokio::spawn(async move {
                    loop {
                        let Some(batch) = rx.lock().await.next_batch().await else {
                            return;
                        };
                        counters.outcome_batches.inc();
                        counters.batched_outcomes.inc_by(batch.len() as u64);
                        write_batch(&pool, batch).await;
                    }
                })
            })
            .collect();
        (Self { jobs }, tasks)
    }

    /// Writes `row` with whatever outcomes wait beside it.
    pub(super) async fn write(&self, row: OutcomeRow) -> Result<WriteResult, StoreError> {
        let (reply, answer) = oneshot::channel();
        let gone = || StoreError::unavailable("outcome writer stopped");
        self.jobs
            .send(Job { row, reply })
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

/// The receiving end, with a job held over from the last batch (a second
/// outcome of a delivery already in it).
struct Gathering {
    rx: mpsc::Receiver<Job>,
    held: Option<Job>,
}

impl Gathering {
    /// The next batch: the held job or the next to arrive, then every job
    /// waiting, up to [`MAX_BATCH`]; `None` once the store stops.
    async fn next_batch(&mut self) -> Option<Vec<Job>> {
        let first = match self.held.take() {
            Some(job) => job,
            None => self.rx.recv().await?,
        };
        let mut ids: HashSet<String> = HashSet::from([first.row.delivery_id().to_owned()]);
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            let Ok(job) = self.rx.try_recv() else { break };
            if !ids.insert(job.row.delivery_id().to_owned()) {
                self.held = Some(job);
                break;
            }
            batch.push(job);
        }
        Some(batch)
    }
}

/// Writes a batch in one statement and answers each job.
async fn write_batch(pool: &Pool, batch: Vec<Job>) {
    let columns = Columns::of(&batch);
    let written = retry_conflicts(|| async {
        let client = pool.get().await.map_err(pool_error)?;
        let statement = client.prepare_cached(OUTCOMES).await.map_err(pg_error)?;
        let rows = client
            .query(&statement, &columns.params())
            .await
            .map_err(pg_error)?;
        Ok::<HashSet<String>, StoreError>(rows.iter().map(|r| r.get(0)).collect())
    })
    .await;
    match written {
        Ok(written) => {
            for job in batch {
                let result = if written.contains(job.row.delivery_id()) {
                    WriteResult::Written
                } else {
                    WriteResult::Stale
                };
                let _ = job.reply.send(Ok(result));
            }
        }
        Err(e) => {
            for job in batch {
                let _ = job.reply.send(Err(e.relayed()));
            }
        }
    }
}

/// A batch as [`OUTCOMES`]' arrays, in its parameters' order.
#[derive(Default)]
pub(super) struct Columns {
    ids: Vec<String>,
    tokens: Vec<i64>,
    series: Vec<i32>,
    attempts: Vec<i32>,
    tenants: Vec<String>,
    endpoints: Vec<String>,
    states: Vec<&'static str>,
    records: Vec<String>,
    log_series: Vec<i32>,
    log_attempts: Vec<i32>,
    logs: Vec<String>,
    retry_due: Vec<Option<i64>>,
    retry_attempts: Vec<Option<i32>>,
    attempt_ids: Vec<Option<String>>,
}

impl Columns {
    fn of(batch: &[Job]) -> Self {
        let mut c = Self::default();
        for job in batch {
            c.push(&job.row);
        }
        c
    }

    /// Adds one outcome, as one element of each array.
    pub(super) fn push(&mut self, row: &OutcomeRow) {
        self.ids.push(row.id.clone());
        self.tokens.push(row.token);
        self.series.push(row.series);
        self.attempts.push(row.attempts);
        self.tenants.push(row.tenant.clone());
        self.endpoints.push(row.endpoint.clone());
        self.states.push(row.state);
        self.records.push(row.record.clone());
        self.log_series.push(row.log_series);
        self.log_attempts.push(row.log_attempt);
        self.logs.push(row.log.clone());
        self.retry_due.push(row.retry.map(|(due, _)| due));
        self.retry_attempts
            .push(row.retry.map(|(_, attempts)| attempts));
        self.attempt_ids.push(row.attempt_id.clone());
    }

    /// The parameters of [`OUTCOMES`].
    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 14] {
        [
            &self.ids,
            &self.tokens,
            &self.series,
            &self.attempts,
            &self.tenants,
            &self.endpoints,
            &self.states,
            &self.records,
            &self.log_series,
            &self.log_attempts,
            &self.logs,
            &self.retry_due,
            &self.retry_attempts,
            &self.attempt_ids,
        ]
    }
}

#[cfg(test)]
#[path = "outcome_batch_tests.rs"]
mod tests;
