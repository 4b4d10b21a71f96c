//! Write batching: many writers, one sled transaction.
//!
//! sled 0.34 seals and writes its log buffer at the start of every batch or
//! transaction, so one `apply_batch` per attempt outcome made each a disk write of
//! its own. Outcome writers instead queue (the staleness of each is checked inside
//! the transaction); the first writer to find no one writing yields once, then
//! applies everything queued meanwhile as one transaction. Under load a round
//! carries many writers; alone, a writer pays nothing extra. A writer leads at most
//! [`LEADER_ROUNDS`] rounds, then hands what keeps arriving to the store's drain
//! thread, so no task (and no tokio worker) is held by other writers' work. That
//! thread is the store's own, not tokio's blocking pool, which slow DNS or plugin
//! compiles may fill: ingest must never queue behind them.
//!
//! An ingest without an idempotency key queues its [`Writes`] the same way
//! ([`SledStore::commit_queued`]); writes made under a lock use [`SledStore::commit`], which
//! applies them directly, so the lock is never released before they are visible.

use std::sync::{Mutex, OnceLock, mpsc};

use sled::transaction::{
    ConflictableTransactionError, TransactionError, TransactionalTree, UnabortableTransactionError,
};
use tokio::sync::oneshot;

use super::WriteResult;
use super::outcomes::{PreparedAttempt, PreparedLateAttempt};
use super::writes::Writes;
use super::{SledStore, StoreError};

/// One writer's part of a round.
pub(crate) enum Job {
    /// Applied as given (an ingest without an idempotency key, [`SledStore::commit_queued`]).
    Writes(Writes),
    /// Applied only if the delivery is still where the attempt left it.
    Attempt(Box<PreparedAttempt>),
    /// A late attempt's log entry, if its delivery still exists.
    LateAttempt(Box<PreparedLateAttempt>),
}

/// A job's result, and the write sequence of its round when the round held plain
/// writes (what their writers wait to be durable; outcomes do not wait).
type Applied = (WriteResult, Option<u64>);
type Reply = oneshot::Sender<Result<Applied, StoreError>>;

/// Rounds a leading writer applies itself before it hands the queue over.
const LEADER_ROUNDS: usize = 2;

/// The queue of writes waiting for the current round to end.
#[derive(Default)]
pub(crate) struct WriteQueue {
    state: Mutex<QueueState>,
    /// The drain thread, started at the first hand-off; `None` if it could not be.
    drain_thread: OnceLock<Option<mpsc::Sender<SledStore>>>,
}

impl WriteQueue {
    /// Gives the lead to the drain thread; hands `store` back if there is none.
    fn hand_off(&self, store: SledStore) -> Result<(), SledStore> {
        match self.drain_thread.get_or_init(spawn_drain_thread) {
            Some(thread) => thread.send(store).map_err(|refused| refused.0),
            None => Err(store),
        }
    }
}

/// Starts the thread that drains what a leader hands off. Each hand-off brings
/// the store and drops it once the queue is empty, so the thread never keeps the
/// data dir open; it ends when the queue (its sender) goes away.
fn spawn_drain_thread() -> Option<mpsc::Sender<SledStore>> {
    let (thread, hand_offs) = mpsc::channel::<SledStore>();
    let spawned = std::thread::Builder::new()
        .name("hookgate-write-drain".into())
        .spawn(move || {
            while let Ok(store) = hand_offs.recv() {
                store.drain(usize::MAX);
            }
        });
    match spawned {
        Ok(_) => Some(thread),
        Err(error) => {
            tracing::warn!(%error, "no write-drain thread; leading writers drain on");
            None
        }
    }
}

#[derive(Default)]
struct QueueState {
    jobs: Vec<(Job, Reply)>,
    /// A writer is draining the queue.
    draining: bool,
}

/// Hands the drain back if the draining writer unwinds, so the queue never stalls.
struct UnwindGuard<'a>(&'a WriteQueue);

impl Drop for UnwindGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.0.state.lock() {
            s.draining = false;
            // Waiters of a round that never finished see their reply dropped.
            s.jobs.clear();
        }
    }
}

/// The leading writer's duty to drain: done on drop if its future is dropped
/// while it yields, so the writers queued behind it are never stranded.
struct Lead<'a> {
    store: &'a SledStore,
    pending: bool,
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        if std::mem::take(&mut self.pending) {
            self.store.drain(LEADER_ROUNDS);
        }
    }
}

impl SledStore {
    /// Applies `job` in the next round; returns once it is applied (not yet durable).
    ///
    /// # Errors
    /// The storage error of the round's transaction.
    pub(crate) async fn apply(&self, job: Job) -> Result<Applied, StoreError> {
        let queue = &self.inner.writes;
        let (tx, rx) = oneshot::channel();
        let lead = {
            let mut s = queue
                .state
                .lock()
                .map_err(|_| StoreError::unavailable("write queue poisoned"))?;
            s.jobs.push((job, tx));
            !std::mem::replace(&mut s.draining, true)
        };
        if lead {
            let mut lead = Lead {
                store: self,
                pending: true,
            };
            // Let the other tasks that are ready (attempts finishing, requests
            // arriving) queue their writes first: under load a round then carries
            // many writers; alone, this costs one trip through the run queue.
            tokio::task::yield_now().await;
            lead.pending = false;
            self.drain(LEADER_ROUNDS);
        }
        rx.await
            .map_err(|_| StoreError::unavailable("the write was abandoned"))?
    }

    /// Applies rounds until the queue is empty; after `max_rounds`, the drain
    /// thread takes over whatever is still queued.
    fn drain(&self, max_rounds: usize) {
        let queue = &self.inner.writes;
        let unwind = UnwindGuard(queue);
        let mut rounds = 0;
        loop {
            let jobs = match queue.state.lock() {
                Ok(mut s) if s.jobs.is_empty() => {
                    s.draining = false;
                    std::mem::forget(unwind);
                    return;
                }
                Ok(_) if rounds == max_rounds => {
                    // Still `draining`: the drain thread leads from here on.
                    if queue.hand_off(self.clone()).is_ok() {
                        std::mem::forget(unwind);
                        return;
                    }
                    rounds = 0;
                    continue;
                }
                Ok(mut s) => std::mem::take(&mut s.jobs),
                Err(_) => return,
            };
            rounds += 1;
            let db = match self.held() {
                Ok(db) => db,
                Err(e) => {
                    let message = e.to_string();
                    for (_, reply) in jobs {
                        let _ = reply.send(Err(StoreError::unavailable(message.clone())));
                    }
                    continue;
                }
            };
            let applied = db.records.transaction(|tx| {
                jobs.iter()
                    .map(|(job, _)| apply_job(tx, job))
                    .collect::<Result<Vec<_>, _>>()
            });
            match applied {
                Ok(results) => {
                    // Plain writes wait for durability: their round gets a sequence
                    // (only then, so outcome-only rounds never wake the flusher).
                    let seq = jobs
                        .iter()
                        .any(|(job, _)| matches!(job, Job::Writes(_)))
                        .then(|| self.sequence(&db));
                    drop(db);
                    for ((_, reply), r) in jobs.into_iter().zip(results) {
                        let _ = reply.send(Ok((r, seq)));
                    }
                }
                Err(e) => {
                    drop(db);
                    // Each writer is told how it failed (a full disk stays `Full`).
                    let failure = |e: &TransactionError<()>| match e {
                        TransactionError::Abort(()) => StoreError::unavailable("write aborted"),
                        TransactionError::Storage(e) => e.clone().into(),
                    };
                    for (_, reply) in jobs {
                        let _ = reply.send(Err(failure(&e)));
                    }
                }
            }
        }
    }
}

/// One job inside the round's transaction.
fn apply_job(
    tx: &TransactionalTree,
    job: &Job,
) -> Result<WriteResult, ConflictableTransactionError<()>> {
    match job {
        Job::Writes(w) => Ok(w.apply_if_current(tx)?),
        Job::Attempt(a) => a
            .apply(tx)
            .map_err(|e: UnabortableTransactionError| e.into()),
        Job::LateAttempt(a) => a
            .apply(tx)
            .map_err(|e: UnabortableTransactionError| e.into()),
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    use super::*;

    fn writes(key: &str) -> Job {
        let mut w = Writes::default();
        w.insert(key, b"v".as_slice());
        Job::Writes(w)
    }

    #[test]
    fn writers_queued_during_a_round_share_it_and_a_dropped_leader_still_drains() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path(), 1 << 20, 0).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut cx = Context::from_waker(Waker::noop());
            // The first writer leads and yields; the second queues behind it.
            let mut first = Box::pin(store.apply(writes("a")));
            assert!(first.as_mut().poll(&mut cx).is_pending());
            let mut second = Box::pin(store.apply(writes("b")));
            assert!(second.as_mut().poll(&mut cx).is_pending());
            assert!(!store.records().unwrap().contains_key("a").unwrap());
            // The leader's request goes away while it yields: its drop drains.
            drop(first);
            assert!(matches!(
                second.as_mut().poll(&mut cx),
                Poll::Ready(Ok((WriteResult::Written, Some(_))))
            ));
            assert!(store.records().unwrap().contains_key("a").unwrap());
            assert!(store.records().unwrap().contains_key("b").unwrap());
            // Nobody is draining any more: the next writer leads again.
            assert_eq!(
                store.apply(writes("c")).await.unwrap().0,
                WriteResult::Written
            );
            assert!(store.records().unwrap().contains_key("c").unwrap());
        });
    }

    #[test]
    fn a_leader_past_its_rounds_hands_the_queue_to_the_drain_thread() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path(), 1 << 20, 0).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let (tx, rx) = oneshot::channel();
            {
                let mut s = store.inner.writes.state.lock().unwrap();
                s.jobs.push((writes("x"), tx));
                s.draining = true;
            }
            // A leader with no rounds left hands over at once.
            store.drain(0);
            assert_eq!(rx.await.unwrap().unwrap().0, WriteResult::Written);
            assert!(store.records().unwrap().contains_key("x").unwrap());
            // The drain thread lets go once the queue is empty.
            for _ in 0..200 {
                if !store.inner.writes.state.lock().unwrap().draining {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            panic!("the drain thread never let go");
        });
    }
}
