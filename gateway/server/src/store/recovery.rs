//! Leaving the failing state by itself: the operation whose error put the store
//! in it starts a probe, which writes a small record and waits until it is
//! durable, with a growing pause between tries, until one succeeds. On sled a
//! probe reopens the database when sled refuses writes (it keeps its first I/O
//! error until then). Pauses grow from 100 ms to 5 s, and after a recovery the
//! next failure within a minute starts where the last left off, so storage
//! that keeps failing and working is not probed, nor its work started, at a
//! fast beat.

use std::time::Duration;

use super::{Backend, Store, StoreError};

/// The first pause before a probe.
const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// The longest pause between probes.
const LONGEST_PAUSE: Duration = Duration::from_secs(5);

/// Healthy this long, a new failure is probed from [`FIRST_PAUSE`] again.
const SETTLED: Duration = Duration::from_secs(60);

impl Store {
    /// `result`, an operation's: an error is counted and, if it says storage
    /// is down, puts the store in the failing state and starts the probe.
    pub(crate) fn observed<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(e) = &result
            && self.health().note(e)
        {
            self.start_probing();
        }
        result
    }

    /// A write that succeeds only if storage takes writes again, durably.
    ///
    /// # Errors
    /// If storage still fails.
    pub(crate) async fn probe(&self) -> Result<(), StoreError> {
        let now = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
        let result = match &self.backend {
            Backend::Sled(s) => s.probe(now).await,
            Backend::Postgres(s) => s.meta_put("probe", &now.to_be_bytes()).await,
        };
        if let Err(e) = &result {
            super::count_error(e.failure());
        }
        result
    }

    /// Spawns the probe, which lives until the store recovers or closes.
    fn start_probing(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let probing = runtime.spawn(probe_until_recovered(self.clone()));
        if let Ok(mut tasks) = self.background.tasks.lock() {
            tasks.retain(|t| !t.is_finished());
            tasks.push(probing);
        }
    }
}

/// Probes, pausing longer after each failed try, until a probe succeeds (the
/// store leaves the failing state) or the store closes.
async fn probe_until_recovered(store: Store) {
    let mut pause = match store.health().last_probing() {
        Some((at, pause)) if at.elapsed() < SETTLED => pause,
        _ => FIRST_PAUSE,
    };
    let stop = store.background.stop.clone();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(pause) => {}
        }
        match store.probe().await {
            Ok(()) => {
                store.health().recovered(pause);
                return;
            }
            Err(e) => {
                tracing::debug!(error = %e, pause_ms = pause.as_millis() as u64, "storage still failing");
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
        }
    }
}
