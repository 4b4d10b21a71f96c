//! Group commit: one flusher makes many writes durable with one flush.
//!
//! A writer applies its batch, takes the next write sequence number and waits
//! until `durable_seq` reaches it. The flusher loops: `target = write_seq`,
//! persist (sled `flush_async`, then `syncfs` of the data dir, since sled 0.34
//! never fsyncs its blob files), then publishes `durable_seq = target`. If a
//! persist fails, every writer up to `target` is told, and none of them acks.
//!
//! The flush and `syncfs` run on a thread of their own, never on tokio's
//! blocking pool: whatever fills that pool (slow DNS, plugin compiles) must not
//! hold back every tenant's 202.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};

use tokio::sync::{Notify, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::StoreError;
use super::open_db::OpenDb;

/// A future returned by [`DurabilityBackend::persist`].
#[cfg_attr(not(feature = "lab"), allow(unreachable_pub))]
pub type PersistFuture<'a> = Pin<Box<dyn Future<Output = std::io::Result<()>> + Send + 'a>>;

/// Makes every write applied so far durable. The real one flushes sled and syncs the
/// filesystem; tests substitute one that counts, delays or fails.
pub trait DurabilityBackend: Send + Sync + 'static {
    /// Persists everything written before the call.
    fn persist(&self) -> PersistFuture<'_>;
}

/// The production backend: sled's log flush, then `syncfs` of the data directory,
/// on the durability thread.
pub(crate) struct SledDurability {
    jobs: mpsc::Sender<PersistJob>,
    /// The database, as it is when each persist starts (a reopen replaces it).
    open: Arc<OpenDb>,
    dir: Arc<std::fs::File>,
}

/// One persist for the durability thread. It carries its own handles so the
/// thread holds the store only while it works.
struct PersistJob {
    db: sled::Db,
    dir: Arc<std::fs::File>,
    reply: oneshot::Sender<std::io::Result<()>>,
}

impl PersistJob {
    fn run(self) {
        let Self { db, dir, reply } = self;
        let result = db
            .flush()
            .map(drop)
            .map_err(std::io::Error::other)
            .and_then(|()| rustix::fs::syncfs(&*dir).map_err(std::io::Error::from));
        // Let go of the store before answering: once the last flush at shutdown
        // is acknowledged, nothing here may still hold the data dir open.
        drop((db, dir));
        let _ = reply.send(result);
    }
}

impl SledDurability {
    /// Starts the durability thread for `db`, whose data directory is `dir`.
    /// The thread ends when the backend is dropped.
    ///
    /// # Errors
    /// If the thread cannot be spawned.
    pub(crate) fn start(open: Arc<OpenDb>, dir: std::fs::File) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<PersistJob>();
        std::thread::Builder::new()
            .name("hookgate-durability".into())
            .spawn(move || {
                while let Ok(job) = queue.recv() {
                    job.run();
                }
            })?;
        Ok(Self {
            jobs,
            open,
            dir: Arc::new(dir),
        })
    }
}

impl DurabilityBackend for SledDurability {
    fn persist(&self) -> PersistFuture<'_> {
        Box::pin(async move {
            let stopped = || std::io::Error::other("the durability thread stopped");
            let (reply, answer) = oneshot::channel();
            let db = self.open.db().map_err(std::io::Error::other)?;
            let job = PersistJob {
                db,
                dir: Arc::clone(&self.dir),
                reply,
            };
            self.jobs.send(job).map_err(|_| stopped())?;
            answer.await.map_err(|_| stopped())?
        })
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    durable: u64,
    failed_through: u64,
}

/// Shared state between writers and the flusher task.
pub(crate) struct GroupCommit {
    write_seq: AtomicU64,
    wake: Notify,
    progress: watch::Sender<Progress>,
}

impl GroupCommit {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            write_seq: AtomicU64::new(0),
            wake: Notify::new(),
            progress: watch::Sender::new(Progress::default()),
        })
    }

    /// Records that a write has been applied; returns the sequence to wait for.
    pub(crate) fn written(&self) -> u64 {
        let seq = self.write_seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.wake.notify_one();
        seq
    }

    /// Fails every write sequenced so far that is not durable yet: the
    /// database they were applied to is being closed without a flush.
    pub(crate) fn fail_unflushed(&self) {
        let latest = self.latest();
        self.progress
            .send_modify(|p| p.failed_through = p.failed_through.max(latest));
    }

    /// The sequence of the newest applied write (what a read-only request that
    /// repeats an earlier write must wait for).
    pub(crate) fn latest(&self) -> u64 {
        self.write_seq.load(Ordering::SeqCst)
    }

    /// Waits until write `seq` is durable.
    ///
    /// # Errors
    /// `Unavailable` if the flush covering `seq` failed, or the flusher stopped.
    pub(crate) async fn wait_durable(&self, seq: u64) -> Result<(), StoreError> {
        let mut rx = self.progress.subscribe();
        loop {
            {
                let p = rx.borrow_and_update();
                if p.durable >= seq {
                    return Ok(());
                }
                if p.failed_through >= seq {
                    return Err(StoreError::unavailable("flush failed"));
                }
            }
            if rx.changed().await.is_err() {
                return Err(StoreError::unavailable("flusher stopped"));
            }
        }
    }

    /// The flusher loop. Runs until `shutdown`, then makes one last flush.
    pub(crate) async fn run(
        self: Arc<Self>,
        backend: Arc<dyn DurabilityBackend>,
        shutdown: CancellationToken,
    ) {
        loop {
            let notified = self.wake.notified();
            let target = self.write_seq.load(Ordering::SeqCst);
            let done = self
                .progress
                .borrow()
                .durable
                .max(self.progress.borrow().failed_through);
            if target > done {
                self.flush_to(target, backend.as_ref()).await;
                continue;
            }
            tokio::select! {
                () = notified => {}
                () = shutdown.cancelled() => break,
            }
        }
        let target = self.write_seq.load(Ordering::SeqCst);
        self.flush_to(target, backend.as_ref()).await;
    }

    async fn flush_to(&self, target: u64, backend: &dyn DurabilityBackend) {
        match backend.persist().await {
            Ok(()) => self
                .progress
                .send_modify(|p| p.durable = p.durable.max(target)),
            Err(e) => {
                tracing::error!(error = %e, "store flush failed; answering 503 to waiting writers");
                self.progress
                    .send_modify(|p| p.failed_through = p.failed_through.max(target));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    struct Flaky {
        fail: AtomicBool,
        generations: AtomicU64,
    }

    impl DurabilityBackend for Flaky {
        fn persist(&self) -> PersistFuture<'_> {
            Box::pin(async move {
                if self.fail.load(Ordering::SeqCst) {
                    return Err(std::io::Error::other("disk on fire"));
                }
                self.generations.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
        }
    }

    #[tokio::test]
    async fn waiters_are_released_by_a_flush_and_failures_reach_them() {
        let gc = GroupCommit::new();
        let backend = Arc::new(Flaky {
            fail: AtomicBool::new(false),
            generations: AtomicU64::new(0),
        });
        let stop = CancellationToken::new();
        let task = tokio::spawn(Arc::clone(&gc).run(backend.clone(), stop.clone()));

        let seqs: Vec<u64> = (0..50).map(|_| gc.written()).collect();
        for s in &seqs {
            gc.wait_durable(*s).await.unwrap();
        }
        let gens = backend.generations.load(Ordering::SeqCst);
        assert!((1..=50).contains(&gens), "group commit used {gens} flushes");

        backend.fail.store(true, Ordering::SeqCst);
        let s = gc.written();
        let e = gc.wait_durable(s).await.unwrap_err();
        assert_eq!(e.failure(), crate::store::Failure::Unavailable, "{e}");

        backend.fail.store(false, Ordering::SeqCst);
        let s = gc.written();
        gc.wait_durable(s).await.unwrap();
        stop.cancel();
        task.await.unwrap();
    }

    #[test]
    fn sled_durability_does_not_wait_for_the_blocking_pool() {
        let dir = tempfile::tempdir().unwrap();
        let open = Arc::new(OpenDb::open(dir.path(), 1 << 20).unwrap());
        let backend =
            SledDurability::start(open, std::fs::File::open(dir.path()).unwrap()).unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(1)
            .enable_time()
            .build()
            .unwrap();
        let (release, held) = std::sync::mpsc::channel::<()>();
        rt.block_on(async {
            // The pool's only thread is busy until the persist is over (or 30 s).
            let busy = tokio::task::spawn_blocking(move || {
                let _ = held.recv_timeout(std::time::Duration::from_secs(30));
            });
            let persisted =
                tokio::time::timeout(std::time::Duration::from_secs(20), backend.persist()).await;
            release.send(()).unwrap();
            busy.await.unwrap();
            assert!(matches!(persisted, Ok(Ok(()))), "{persisted:?}");
        });
    }
}
