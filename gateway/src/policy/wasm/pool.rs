//! The dedicated decision pool: a fixed set of threads that run plugin calls, so a
//! slow plugin never holds a tokio worker (§5 "Decisions run on a dedicated blocking
//! pool"). A caller waits at most [`POOL_WAIT`] for a free thread, then falls back.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Semaphore, oneshot};

use super::PluginError;

/// How long a decision waits for a free thread before falling back.
pub(crate) const POOL_WAIT: Duration = Duration::from_millis(5);

type Job = Box<dyn FnOnce() + Send + 'static>;

/// Why a job produced no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PoolError {
    /// Every thread stayed busy for [`POOL_WAIT`].
    Full,
    /// The thread dropped the job's answer (it panicked).
    Lost,
}

/// A bounded set of decision threads. Dropping it lets the threads finish their
/// current job and exit.
pub(crate) struct DecisionPool {
    permits: Arc<Semaphore>,
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
            permits: Arc::new(Semaphore::new(size as usize)),
            jobs: Mutex::new(tx),
        })
    }

    /// Runs `job` on a pool thread and waits for its answer.
    ///
    /// # Errors
    /// `Full` when no thread was free within [`POOL_WAIT`]; `Lost` if the job died.
    pub(crate) async fn run<R, F>(&self, job: F) -> Result<R, PoolError>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let permit = tokio::time::timeout(POOL_WAIT, Arc::clone(&self.permits).acquire_owned())
            .await
            .map_err(|_| PoolError::Full)?
            .map_err(|_| PoolError::Lost)?;
        let (tx, rx) = oneshot::channel();
        let boxed: Job = Box::new(move || {
            let _ = tx.send(job());
            drop(permit);
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
        assert_eq!(pool.run(|| 2 + 2).await, Ok(4));
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let pool = Arc::new(pool);
        let busy = {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move { pool.run(move || wait.recv().is_ok()).await })
        };
        // Let the blocking job take the only thread.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(pool.run(|| 1).await, Err(PoolError::Full));
        release.send(()).unwrap();
        assert_eq!(busy.await.unwrap(), Ok(true));
        assert_eq!(pool.run(|| 5).await, Ok(5));
    }

    #[tokio::test]
    async fn a_panicking_job_loses_its_answer_but_not_its_thread() {
        let pool = DecisionPool::new(1).unwrap();
        let lost: Result<u8, _> = pool.run(|| panic!("a plugin call blew up")).await;
        assert_eq!(lost, Err(PoolError::Lost));
        for i in 0..3 {
            assert_eq!(pool.run(move || i * 2).await, Ok(i * 2));
        }
    }
}
