//! One round-robin turn of a due endpoint: how much it may start now (breaker, rate
//! limit, free in-flight places) and which due entries, first attempts and retries
//! interleaved.

use std::sync::Arc;

use super::Scheduler;
use crate::delivery::attempt_task::run_attempt;
use crate::delivery::breaker::Admit;
use crate::delivery::worker::DeliveryWorker;
use crate::store::{Lane, Lease, Store, StoreError};

impl Scheduler {
    /// One round-robin turn for a due endpoint.
    pub(super) async fn serve(&mut self, endpoint_id: &str, now: u64) {
        let Some(slot) = self.slots.get_mut(endpoint_id) else {
            return;
        };
        if slot.record.disabled {
            return;
        }
        let max_in_flight = slot.record.max_in_flight as usize;
        let free = slot.in_flight.free(max_in_flight);
        let mut allowed = match slot.breaker.admit(now) {
            Admit::All => free,
            Admit::Probe => free.min(1),
            Admit::Wait(until) => {
                if let Some(until) = until {
                    self.index.push(endpoint_id, until);
                }
                return; // a finishing probe requeues the endpoint
            }
        };
        if let Some(rate) = &mut slot.rate {
            allowed = allowed.min(rate.available(now));
        }
        if allowed == 0 {
            if free > 0
                && let Some(rate) = &slot.rate
            {
                self.index.push(endpoint_id, rate.next_free_at(now));
            }
            return; // otherwise a finishing attempt requeues the endpoint
        }
        let held = slot.record.max_in_flight as usize;
        let entries = match due_work(&self.ctx.store, endpoint_id, now, allowed, held).await {
            Ok(entries) => entries,
            Err(e) => {
                tracing::warn!(error = %e, endpoint_id, "cannot read due work");
                return;
            }
        };
        let probing = matches!(slot.breaker.admit(now), Admit::Probe);
        let mut started = 0;
        for entry in entries {
            if started == allowed {
                break;
            }
            let Some(permit) = slot.in_flight.try_start(max_in_flight) else {
                break;
            };
            if !self.handle.lease(entry.delivery_id()) {
                continue;
            }
            started += 1;
            if let Some(rate) = &mut slot.rate {
                rate.started(now);
            }
            if probing {
                slot.breaker.probe_sent();
            }
            let worker = DeliveryWorker {
                ctx: Arc::clone(&self.ctx),
                endpoint: Arc::clone(&slot.record),
                policy: Arc::clone(&slot.policy),
                entry,
            };
            let (handle, done) = (self.handle.clone(), self.done_tx.clone());
            self.tasks.spawn(run_attempt(worker, handle, done, permit));
        }
        if started == allowed && !probing {
            // Used this turn's share: others go first, then this endpoint again
            // (when its rate window allows).
            let at = slot.rate.as_ref().map_or(now, |r| r.next_free_at(now));
            self.index.push(endpoint_id, at);
        } else if let Ok(Some(next)) = self.ctx.store.next_due(endpoint_id, Some(now)).await {
            self.index.push(endpoint_id, next);
        }
    }
}

/// Due entries to start up to `allowed` attempts from, first attempts and
/// retries interleaved; `held` is how many this endpoint may have in flight.
async fn due_work(
    store: &Store,
    endpoint_id: &str,
    now: u64,
    allowed: usize,
    held: usize,
) -> Result<Vec<Lease>, StoreError> {
    if store.claims_due_work() {
        // Each entry handed out is claimed: ask only for what can start, half
        // from each lane, then more first attempts if retries fell short.
        let half = allowed.div_ceil(2);
        let mut first = store
            .due_entries(Lane::First, endpoint_id, now, half)
            .await?;
        let retry_room = allowed - first.len();
        let retry = store
            .due_entries(Lane::Retry, endpoint_id, now, retry_room)
            .await?;
        let room = allowed - first.len() - retry.len();
        if room > 0 && first.len() == half {
            first.extend(
                store
                    .due_entries(Lane::First, endpoint_id, now, room)
                    .await?,
            );
        }
        return Ok(interleave(first, retry));
    }
    // Leased entries are still in the schedule (storage says pending until the
    // outcome is written), so look past up to `held` of them.
    let limit = held + allowed;
    let first = store
        .due_entries(Lane::First, endpoint_id, now, limit)
        .await?;
    let retry = store
        .due_entries(Lane::Retry, endpoint_id, now, limit)
        .await?;
    Ok(interleave(first, retry))
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
}
