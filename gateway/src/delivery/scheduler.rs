//! The scheduler: which endpoint is served next, and how much of its due work.
//!
//! A heap holds endpoints keyed by their earliest due delivery ([`ScheduleIndex`]).
//! Due endpoints are served round-robin: each turn takes at most the endpoint's free
//! in-flight permits, then the endpoint goes to the back of the due queue. Due work is
//! a range scan of that endpoint's schedule keys, never a scan of the whole schedule.
//! In-flight is an in-memory lease, so after a restart pending work is taken up again.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::worker::{DeliveryWorker, EngineContext};
use super::{DeliveryHandle, ScheduleChange, ScheduleChanges};
use crate::store::EndpointRecord;
use crate::store::keys::Lane;

/// Endpoints ordered by when they next have work due; stale heap entries are skipped.
#[derive(Default)]
pub(crate) struct ScheduleIndex {
    heap: BinaryHeap<Reverse<(u64, u64, String)>>,
    queued: HashMap<String, u64>,
    seq: u64,
}

impl ScheduleIndex {
    /// Queues `endpoint` for `due_ms` unless it is already queued no later.
    pub(crate) fn push(&mut self, endpoint: &str, due_ms: u64) {
        if self.queued.get(endpoint).is_some_and(|q| *q <= due_ms) {
            return;
        }
        self.seq += 1;
        self.queued.insert(endpoint.to_owned(), due_ms);
        self.heap
            .push(Reverse((due_ms, self.seq, endpoint.to_owned())));
    }

    /// The earliest queued due time.
    pub(crate) fn next_due(&mut self) -> Option<u64> {
        while let Some(Reverse((due, _, ep))) = self.heap.peek() {
            if self.queued.get(ep) == Some(due) {
                return Some(*due);
            }
            self.heap.pop();
        }
        None
    }

    /// Takes the next endpoint due at or before `now_ms`, in due order, FIFO among equals.
    pub(crate) fn pop_due(&mut self, now_ms: u64) -> Option<String> {
        let due = self.next_due()?;
        if due > now_ms {
            return None;
        }
        let Reverse((_, _, ep)) = self.heap.pop()?;
        self.queued.remove(&ep);
        Some(ep)
    }

    /// Forgets an endpoint.
    pub(crate) fn remove(&mut self, endpoint: &str) {
        self.queued.remove(endpoint);
    }
}

struct EndpointSlot {
    record: Arc<EndpointRecord>,
    permits: Arc<Semaphore>,
}

/// The scheduler task.
pub(crate) struct Scheduler {
    pub(crate) ctx: Arc<EngineContext>,
    pub(crate) handle: DeliveryHandle,
    pub(crate) changes: ScheduleChanges,
    slots: HashMap<String, EndpointSlot>,
    index: ScheduleIndex,
    tasks: JoinSet<()>,
    done_tx: mpsc::UnboundedSender<(String, bool)>,
    done_rx: mpsc::UnboundedReceiver<(String, bool)>,
}

impl Scheduler {
    pub(crate) fn new(
        ctx: Arc<EngineContext>,
        handle: DeliveryHandle,
        changes: ScheduleChanges,
    ) -> Self {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        Self {
            ctx,
            handle,
            changes,
            slots: HashMap::new(),
            index: ScheduleIndex::default(),
            tasks: JoinSet::new(),
            done_tx,
            done_rx,
        }
    }

    /// Runs until `shutdown`, then lets in-flight attempts finish for up to `grace`;
    /// the rest are abandoned (not counted; they stay pending in the store).
    pub(crate) async fn run(mut self, shutdown: CancellationToken, grace: Duration) {
        match self.ctx.store.all_endpoints() {
            Ok(eps) => {
                for ep in eps {
                    self.load(ep);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot load endpoints; deliveries wait for the next change")
            }
        }
        loop {
            let now = self.ctx.clock.now_ms();
            while let Some(ep) = self.index.pop_due(now) {
                self.serve(&ep, now);
            }
            let sleep = self
                .index
                .next_due()
                .map(|due| Duration::from_millis(due.saturating_sub(now).max(1)));
            tokio::select! {
                () = shutdown.cancelled() => break,
                Some(change) = self.changes.0.recv() => self.apply(change),
                Some((ep, reload)) = self.done_rx.recv() => self.finished(&ep, reload),
                Some(_) = self.tasks.join_next(), if !self.tasks.is_empty() => {}
                () = tokio::time::sleep(sleep.unwrap_or(Duration::from_secs(3600))) => {}
            }
        }
        let drained = tokio::time::timeout(grace, async {
            while self.tasks.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                abandoned = self.tasks.len(),
                "shutdown grace over; abandoning in-flight attempts"
            );
            self.tasks.shutdown().await;
        }
    }

    fn load(&mut self, ep: EndpointRecord) {
        let id = ep.id.clone();
        let permits = match self.slots.get(&id) {
            Some(s) if s.record.max_in_flight == ep.max_in_flight => Arc::clone(&s.permits),
            _ => Arc::new(Semaphore::new(ep.max_in_flight as usize)),
        };
        let disabled = ep.disabled;
        self.slots.insert(
            id.clone(),
            EndpointSlot {
                record: Arc::new(ep),
                permits,
            },
        );
        if disabled {
            self.index.remove(&id);
        } else {
            self.requeue(&id);
        }
    }

    fn apply(&mut self, change: ScheduleChange) {
        match change {
            ScheduleChange::Due {
                endpoint_id,
                due_ms,
            } => {
                if self
                    .slots
                    .get(&endpoint_id)
                    .is_some_and(|s| !s.record.disabled)
                {
                    self.index.push(&endpoint_id, due_ms);
                }
            }
            ScheduleChange::Endpoint {
                tenant_id,
                endpoint_id,
            } => match self.ctx.store.endpoint(&tenant_id, &endpoint_id) {
                Ok(Some(ep)) => self.load(ep),
                Ok(None) => {
                    self.slots.remove(&endpoint_id);
                    self.index.remove(&endpoint_id);
                }
                Err(e) => tracing::warn!(error = %e, endpoint_id, "cannot reload endpoint"),
            },
        }
    }

    fn finished(&mut self, endpoint_id: &str, reload: bool) {
        if reload
            && let Some(tenant) = self
                .slots
                .get(endpoint_id)
                .map(|s| s.record.tenant_id.clone())
        {
            self.apply(ScheduleChange::Endpoint {
                tenant_id: tenant,
                endpoint_id: endpoint_id.to_owned(),
            });
        } else {
            self.requeue(endpoint_id);
        }
    }

    /// Queues an endpoint for its earliest stored due time.
    fn requeue(&mut self, endpoint_id: &str) {
        match self.ctx.store.next_due(endpoint_id, None) {
            Ok(Some(due)) => self.index.push(endpoint_id, due),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, endpoint_id, "cannot read schedule"),
        }
    }

    /// One round-robin turn for a due endpoint.
    fn serve(&mut self, endpoint_id: &str, now: u64) {
        let Some(slot) = self.slots.get(endpoint_id) else {
            return;
        };
        if slot.record.disabled {
            return;
        }
        let free = slot.permits.available_permits();
        if free == 0 {
            return; // a finishing attempt requeues the endpoint
        }
        // Leased entries are still in the schedule (storage says pending until the
        // outcome is written), so look past up to max_in_flight of them.
        let limit = slot.record.max_in_flight as usize + free;
        let store = &self.ctx.store;
        let lanes = store
            .due_entries(Lane::First, endpoint_id, now, limit)
            .and_then(|first| {
                Ok((
                    first,
                    store.due_entries(Lane::Retry, endpoint_id, now, limit)?,
                ))
            });
        let entries = match lanes {
            Ok((first, retry)) => interleave(first, retry),
            Err(e) => {
                tracing::warn!(error = %e, endpoint_id, "cannot read due work");
                return;
            }
        };
        let (record, permits) = (Arc::clone(&slot.record), Arc::clone(&slot.permits));
        let mut started = 0;
        for entry in entries {
            let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
                break;
            };
            if !self.handle.lease(&entry.delivery_id) {
                continue;
            }
            started += 1;
            let worker = DeliveryWorker {
                ctx: Arc::clone(&self.ctx),
                endpoint: Arc::clone(&record),
                entry,
            };
            let (handle, done) = (self.handle.clone(), self.done_tx.clone());
            self.tasks.spawn(async move {
                let delivery_id = worker.entry.delivery_id.clone();
                let endpoint_id = worker.endpoint.id.clone();
                let changed = worker.run().await;
                handle.release(&delivery_id);
                drop(permit);
                let _ = done.send((endpoint_id, changed));
            });
        }
        if started == free {
            // Out of permits for this turn; others go first, then we come back.
            self.index.push(endpoint_id, now);
        } else if let Ok(Some(next)) = self.ctx.store.next_due(endpoint_id, Some(now)) {
            self.index.push(endpoint_id, next);
        }
    }
}

/// Alternates first attempts and retries, first attempts first, so neither lane
/// starves the other.
fn interleave<T>(first: Vec<T>, retry: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(first.len() + retry.len());
    let (mut a, mut b) = (first.into_iter(), retry.into_iter());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_first_attempts_are_not_stuck_behind_retries() {
        assert_eq!(
            interleave(vec![1, 2], vec![10, 20, 30, 40]),
            [1, 10, 2, 20, 30, 40]
        );
        assert_eq!(interleave(vec![1, 2, 3], Vec::new()), [1, 2, 3]);
        assert_eq!(interleave(Vec::<u8>::new(), vec![9]), [9]);
        // With a backlog of due retries, the first permit still goes to a new delivery.
        assert_eq!(interleave(vec!["new"], vec!["old"; 100])[0], "new");
    }

    #[test]
    fn index_serves_due_endpoints_in_order_and_round_robin() {
        let mut ix = ScheduleIndex::default();
        ix.push("b", 20);
        ix.push("a", 10);
        ix.push("c", 10);
        ix.push("a", 30); // later than queued: ignored
        assert_eq!(ix.next_due(), Some(10));
        assert_eq!(ix.pop_due(5), None);
        assert_eq!(ix.pop_due(25).as_deref(), Some("a"));
        ix.push("a", 25); // back of the queue at the same time as nothing else
        assert_eq!(ix.pop_due(25).as_deref(), Some("c"));
        assert_eq!(ix.pop_due(25).as_deref(), Some("b"));
        assert_eq!(ix.pop_due(25).as_deref(), Some("a"));
        assert_eq!(ix.pop_due(100), None);
    }

    #[test]
    fn earlier_pushes_replace_later_ones_and_removed_endpoints_vanish() {
        let mut ix = ScheduleIndex::default();
        ix.push("a", 50);
        ix.push("a", 10);
        assert_eq!(ix.pop_due(10).as_deref(), Some("a"));
        assert_eq!(ix.pop_due(100), None, "the stale entry at 50 is skipped");
        ix.push("b", 5);
        ix.remove("b");
        assert_eq!(ix.next_due(), None);
    }
}
