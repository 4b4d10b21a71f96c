//! Write batching: many writers, one sled transaction.
//!
//! sled 0.34 seals and writes its log buffer at the start of every batch or
//! transaction, so one `apply_batch` per request made each write a disk write of
//! its own. Writers instead queue their [`Writes`] (or an attempt outcome, whose
//! staleness is checked inside the same transaction); the first writer to find no
//! one writing drains the queue, applying everything queued meanwhile as one
//! transaction, until the queue is empty. Under load a round carries many
//! writers; alone, a writer pays nothing extra.

use std::sync::Mutex;

use sled::transaction::{
    ConflictableTransactionError, TransactionError, TransactionalTree, UnabortableTransactionError,
};
use tokio::sync::oneshot;

use super::outcomes::{PreparedAttempt, WriteResult};
use super::{Store, StoreError};

/// Inserts and removes applied together, in order (a later write to a key wins).
#[derive(Debug, Default)]
pub struct Writes {
    ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl Writes {
    /// Sets `key` to `value`.
    pub fn insert(&mut self, key: impl AsRef<[u8]>, value: impl Into<Vec<u8>>) {
        self.ops.push((key.as_ref().to_vec(), Some(value.into())));
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: impl AsRef<[u8]>) {
        self.ops.push((key.as_ref().to_vec(), None));
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// One writer's part of a round.
pub(crate) enum Job {
    /// Applied as given.
    Writes(Writes),
    /// Applied only if the delivery is still where the attempt left it.
    Attempt(Box<PreparedAttempt>),
}

type Reply = oneshot::Sender<Result<WriteResult, StoreError>>;

/// The queue of writes waiting for the current round to end.
#[derive(Default)]
pub(crate) struct WriteQueue {
    state: Mutex<QueueState>,
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
    store: &'a Store,
    pending: bool,
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        if std::mem::take(&mut self.pending) {
            self.store.drain();
        }
    }
}

impl Store {
    /// Applies `job` in the next round; returns once it is applied (not yet durable).
    ///
    /// # Errors
    /// The storage error of the round's transaction.
    pub(crate) async fn apply(&self, job: Job) -> Result<WriteResult, StoreError> {
        let queue = &self.inner.writes;
        let (tx, rx) = oneshot::channel();
        let lead = {
            let mut s = queue
                .state
                .lock()
                .map_err(|_| StoreError::Unavailable("write queue poisoned".into()))?;
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
            self.drain();
        }
        rx.await
            .map_err(|_| StoreError::Unavailable("the write was abandoned".into()))?
    }

    /// Applies rounds until the queue is empty.
    fn drain(&self) {
        let queue = &self.inner.writes;
        let unwind = UnwindGuard(queue);
        loop {
            let jobs = match queue.state.lock() {
                Ok(mut s) if s.jobs.is_empty() => {
                    s.draining = false;
                    std::mem::forget(unwind);
                    return;
                }
                Ok(mut s) => std::mem::take(&mut s.jobs),
                Err(_) => return,
            };
            let applied = self.inner.records.transaction(|tx| {
                jobs.iter()
                    .map(|(job, _)| apply_job(tx, job))
                    .collect::<Result<Vec<_>, _>>()
            });
            match applied {
                Ok(results) => {
                    for ((_, reply), r) in jobs.into_iter().zip(results) {
                        let _ = reply.send(Ok(r));
                    }
                }
                Err(e) => {
                    let message = match e {
                        TransactionError::Abort(()) => "write aborted".to_owned(),
                        TransactionError::Storage(e) => e.to_string(),
                    };
                    for (_, reply) in jobs {
                        let _ = reply.send(Err(StoreError::Unavailable(message.clone())));
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
        Job::Writes(w) => {
            for (key, value) in &w.ops {
                match value {
                    Some(v) => tx.insert(key.as_slice(), v.as_slice())?,
                    None => tx.remove(key.as_slice())?,
                };
            }
            Ok(WriteResult::Written)
        }
        Job::Attempt(a) => a
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
        let store = Store::open(dir.path(), 1 << 20).unwrap();
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
            assert!(!store.inner.records.contains_key("a").unwrap());
            // The leader's request goes away while it yields: its drop drains.
            drop(first);
            assert!(matches!(
                second.as_mut().poll(&mut cx),
                Poll::Ready(Ok(WriteResult::Written))
            ));
            assert!(store.inner.records.contains_key("a").unwrap());
            assert!(store.inner.records.contains_key("b").unwrap());
            // Nobody is draining any more: the next writer leads again.
            assert_eq!(
                store.apply(writes("c")).await.unwrap(),
                WriteResult::Written
            );
            assert!(store.inner.records.contains_key("c").unwrap());
        });
    }
}
