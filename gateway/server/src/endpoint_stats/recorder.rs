//! Counting attempts on the delivery path and adding them to the store.
//!
//! An attempt costs one short lock and a map entry: [`StatsRecorder::count`]
//! adds it to this gateway's counts for its endpoint and bucket, in memory. The
//! flusher ([`run_flusher`]) takes those counts every `stats.flush_ms` and adds
//! them to the store as deltas, so neither the attempt nor its write waits on
//! the stats; a flush that fails keeps its deltas for the next one. At shutdown
//! (after the last attempt has been recorded) it flushes once more, so what a
//! graceful stop loses is nothing and what a crash loses is one interval.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::StatsWindow;
use super::histogram::count_attempt;
use crate::clock::Clock;
use crate::ids::{EndpointId, TenantId};
use crate::store::{StatsCounts, StatsDelta, Store, StoreError};

/// One endpoint's bucket, as counted in memory.
type BucketKey = (TenantId, EndpointId, u64);

/// This gateway's counts since its last flush.
pub(crate) struct StatsRecorder {
    window: StatsWindow,
    counted: Mutex<HashMap<BucketKey, StatsCounts>>,
}

/// One attempt, as the stats count it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CountedAttempt<'a> {
    pub(crate) tenant_id: &'a TenantId,
    pub(crate) endpoint_id: &'a EndpointId,
    /// When it started (wall clock); it counts in the bucket holding this.
    pub(crate) started_ms: u64,
    pub(crate) duration_ms: u64,
    /// Answered 2xx.
    pub(crate) delivered: bool,
}

impl StatsRecorder {
    pub(crate) fn new(window: StatsWindow) -> Self {
        Self {
            window,
            counted: Mutex::default(),
        }
    }

    /// The map of counts; a panic elsewhere while it was held leaves counts
    /// that are still counts, so a poisoned lock is used as it is.
    fn counted(&self) -> std::sync::MutexGuard<'_, HashMap<BucketKey, StatsCounts>> {
        self.counted.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one attempt in its endpoint's bucket.
    pub(crate) fn count(&self, a: CountedAttempt<'_>) {
        let bucket = self.window.bucket_start(a.started_ms);
        let key = (a.tenant_id.clone(), a.endpoint_id.clone(), bucket);
        let mut counted = self.counted();
        count_attempt(counted.entry(key).or_default(), a.delivered, a.duration_ms);
    }

    /// Takes what was counted since the last take, as deltas, leaving out
    /// buckets already past the history kept at `now_ms`.
    fn take(&self, now_ms: u64) -> Vec<StatsDelta> {
        let oldest = self.window.history_start(now_ms);
        let taken = std::mem::take(&mut *self.counted());
        taken
            .into_iter()
            .filter(|((_, _, bucket), _)| *bucket >= oldest)
            .map(
                |((tenant_id, endpoint_id, bucket_start_ms), counts)| StatsDelta {
                    tenant_id,
                    endpoint_id,
                    bucket_start_ms,
                    counts,
                },
            )
            .collect()
    }

    /// Puts back deltas a flush could not write, adding them to what was
    /// counted since.
    fn put_back(&self, deltas: Vec<StatsDelta>) {
        let mut counted = self.counted();
        for d in deltas {
            let key = (d.tenant_id, d.endpoint_id, d.bucket_start_ms);
            counted.entry(key).or_default().add(&d.counts);
        }
    }

    /// Adds what was counted to the store; answers how many deltas went in.
    /// Deltas of endpoints deleted meanwhile are dropped by the store.
    ///
    /// # Errors
    /// On a storage failure; the deltas are kept for the next flush.
    pub(crate) async fn flush(&self, store: &Store, now_ms: u64) -> Result<usize, StoreError> {
        let deltas = self.take(now_ms);
        if deltas.is_empty() {
            return Ok(0);
        }
        match store.add_endpoint_stats(&deltas).await {
            Ok(added) => Ok(added),
            Err(e) => {
                self.put_back(deltas);
                Err(e)
            }
        }
    }
}

/// Flushes `recorder` every `flush_ms` until `stop`, then once more: stop it
/// only once no attempt can be recorded any more.
pub(crate) async fn run_flusher(
    recorder: Arc<StatsRecorder>,
    store: Store,
    clock: Arc<dyn Clock>,
    flush_ms: u64,
    stop: CancellationToken,
) {
    let mut tick = tokio::time::interval(Duration::from_millis(flush_ms));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let stopping = tokio::select! {
            () = stop.cancelled() => true,
            _ = tick.tick() => false,
        };
        if let Err(e) = recorder.flush(&store, clock.now_ms()).await {
            tracing::warn!(error = %e, "cannot store endpoint stats; kept for the next flush");
        }
        if stopping {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StatsConfig;
    use crate::store::testing::TestStore;

    const MIN: u64 = 60_000;

    fn attempt<'a>(
        endpoint: &'a EndpointId,
        tenant: &'a TenantId,
        started_ms: u64,
        delivered: bool,
    ) -> CountedAttempt<'a> {
        CountedAttempt {
            tenant_id: tenant,
            endpoint_id: endpoint,
            started_ms,
            duration_ms: 12,
            delivered,
        }
    }

    #[tokio::test]
    async fn attempts_are_counted_by_bucket_and_flushed_as_deltas_that_add_up() {
        let t = TestStore::new().await;
        t.endpoint("acme", "ep_1").await;
        let (tenant, ep) = (TenantId::from("acme"), EndpointId::from("ep_1"));
        let recorder = StatsRecorder::new(StatsWindow::of(&StatsConfig::default()));
        let now = 6_000 * MIN;
        recorder.count(attempt(&ep, &tenant, now - 6 * MIN, true));
        recorder.count(attempt(&ep, &tenant, now - 6 * MIN + 1, false));
        recorder.count(attempt(&ep, &tenant, now, true));
        // Past the history: never written.
        recorder.count(attempt(&ep, &tenant, 0, true));
        assert_eq!(recorder.flush(&t.store, now).await.unwrap(), 2);
        assert_eq!(recorder.flush(&t.store, now).await.unwrap(), 0, "taken");
        recorder.count(attempt(&ep, &tenant, now + 1, false));
        assert_eq!(recorder.flush(&t.store, now).await.unwrap(), 1);

        let stored = t
            .store
            .endpoint_stats(&tenant, &ep, 0, now + MIN)
            .await
            .unwrap();
        let summary: Vec<_> = stored
            .iter()
            .map(|b| {
                (
                    b.start_ms,
                    b.counts.attempts,
                    b.counts.delivered,
                    b.counts.failed,
                )
            })
            .collect();
        assert_eq!(summary, [(now - 10 * MIN, 2, 1, 1), (now, 2, 1, 1)]);
        assert_eq!(stored[1].counts.latency.iter().sum::<u64>(), 2);
    }

    #[tokio::test]
    async fn deltas_put_back_after_a_failed_flush_add_to_what_was_counted_since() {
        let t = TestStore::new().await;
        t.endpoint("acme", "ep_1").await;
        let (tenant, ep) = (TenantId::from("acme"), EndpointId::from("ep_1"));
        let recorder = StatsRecorder::new(StatsWindow::of(&StatsConfig::default()));
        let now = 6_000 * MIN;
        recorder.count(attempt(&ep, &tenant, now, true));
        let deltas = recorder.take(now);
        recorder.count(attempt(&ep, &tenant, now, false));
        recorder.put_back(deltas);
        assert_eq!(recorder.flush(&t.store, now).await.unwrap(), 1);
        let stored = t
            .store
            .endpoint_stats(&tenant, &ep, 0, now + MIN)
            .await
            .unwrap();
        assert_eq!(
            (stored[0].counts.attempts, stored[0].counts.delivered),
            (2, 1)
        );
    }
}
