//! The dedicated decision pool: a fixed set of threads that run plugin calls, so a
//! slow plugin never holds a tokio worker. A caller waits at most [`POOL_WAIT`] for a free thread within its
//! tenant's fair share ([`super::shares`]), then falls back.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use super::PluginError;
use super::shares::PoolShares;

/// How long a decision waits for a free thread before falling back.
pub(crate) const POOL_WAIT: Duration = Duration::from_millis(5);

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Why a job produced no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PoolError {
    /// Every thread, or the tenant's whole share, stayed busy for [`POOL_WAIT`].
    Full,
    /// The thread dropped the job's answer (it panicked).
    Lost,
}

/// A bounded set of decision threads. Dropping it lets the threads finish their
/// current job and exit.
pub(crate) struct DecisionPool {
    shares: Arc<PoolShares>,
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl DecisionPool {
    /// Starts `size` threads.
    ///
    /// # Errors
    /// `Engine` if a thread cannot be started.
    pub(crate) fn new(size: u32) -> Result<Self, PluginError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..size {
            let rx = Arc::clone(&rx);
            std::thread::Builder::new()
                .name(format!("hookgate-plugin-{i}"))
                .spawn(move || {
                    loop {
                        // The lock is held only while waiting for the next job.
                        let job = match rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok(job) = job else { return };
                        // A panicking job loses its answer, not the thread.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                })
                .map_err(|e| PluginError::Engine(format!("cannot start a decision thread: {e}")))?;
        }
        Ok(Self {
            shares: Arc::new(PoolShares::new(size as usize)),
            jobs: Mutex::new(tx),
        })
    }

    /// How many threads one tenant may hold at once.
    #[cfg(test)]
    pub(crate) fn tenant_share(&self) -> usize {
        self.shares.tenant_share()
    }

    /// Runs `tenant`'s `job` on a pool thread and waits for its answer.
    ///
    /// # Errors
    /// `Full` when no thread was free within the tenant's share for [`POOL_WAIT`];
    /// `Lost` if the job died.
    pub(crate) async fn run<R, F>(&self, tenant: &str, job: F) -> Result<R, PoolError>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let slot = self
            .shares
            .take(tenant, POOL_WAIT)
            .await
            .ok_or(PoolError::Full)?;
        let (tx, rx) = oneshot::channel();
        let boxed: Job = Box::new(move || {
            let answer = job();
            // Freed before answering, so a caller that decides again at once finds
            // its own slot free rather than still counted.
            drop(slot);
            let _ = tx.send(answer);
        });
        self.jobs
            .lock()
            .map_err(|_| PoolError::Lost)?
            .send(boxed)
            .map_err(|_| PoolError::Lost)?;
        rx.await.map_err(|_| PoolError::Lost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_jobs_and_falls_back_when_full() {
        let pool = DecisionPool::new(1).unwrap();
        assert_eq!(pool.run("t", || 2 + 2).await, Ok(4));
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let pool = Arc::new(pool);
        let busy = {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move { pool.run("t", move || wait.recv().is_ok()).await })
        };
        // Let the blocking job take the only thread.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(pool.run("u", || 1).await, Err(PoolError::Full));
        release.send(()).unwrap();
        assert_eq!(busy.await.unwrap(), Ok(true));
        assert_eq!(pool.run("u", || 5).await, Ok(5));
    }

    #[tokio::test]
    async fn a_tenant_at_its_share_falls_back_while_another_runs_at_once() {
        let pool = Arc::new(DecisionPool::new(2).unwrap());
        assert_eq!(pool.tenant_share(), 1);
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let busy = {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move { pool.run("a", move || wait.recv().is_ok()).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(pool.run("a", || 1).await, Err(PoolError::Full));
        assert_eq!(pool.run("b", || 2).await, Ok(2));
        release.send(()).unwrap();
        assert_eq!(busy.await.unwrap(), Ok(true));
    }

    #[tokio::test]
    async fn a_panicking_job_loses_its_answer_but_not_its_thread() {
        let pool = DecisionPool::new(1).unwrap();
        let lost: Result<u8, _> = pool.run("t", || panic!("a plugin call blew up")).await;
        assert_eq!(lost, Err(PoolError::Lost));
        for i in 0..3 {
            assert_eq!(pool.run("t", move || i * 2).await, Ok(i * 2));
        }
    }
}
