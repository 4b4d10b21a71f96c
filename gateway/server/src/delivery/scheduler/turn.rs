//! One round-robin turn of a due endpoint, and the local kind of turn: how much
//! it may start now (admitted against the limits this process keeps) and which
//! due entries, first attempts and retries interleaved.

use std::sync::Arc;

use super::{Scheduler, TurnKind};
use crate::delivery::attempt_task::run_attempt;
use crate::delivery::shared_breaker::SharedBreaker;
use crate::delivery::worker::DeliveryWorker;
use crate::ids::EndpointId;
use crate::store::{Lane, Lease, interleave};

impl Scheduler {
    /// One round-robin turn for a due endpoint, of the scheduler's kind.
    pub(super) async fn serve(&mut self, endpoint_id: &EndpointId, now: u64) {
        match self.kind {
            TurnKind::Local => self.serve_local(endpoint_id, now).await,
            TurnKind::Shared => self.serve_shared(endpoint_id, now).await,
        }
    }

    /// A local turn: admitted against the limits this process keeps.
    async fn serve_local(&mut self, endpoint_id: &EndpointId, now: u64) {
        let node_free = self.node_free(endpoint_id);
        let Some(slot) = self.slots.get_mut(endpoint_id) else {
            return;
        };
        if slot.record.disabled || node_free == 0 {
            return;
        }
        let max_in_flight = slot.record.max_in_flight as usize;
        let free = slot.in_flight.free(max_in_flight);
        let admission = slot.limits().admit(free, node_free, now);
        if let Some(until) = admission.breaker_until {
            if let Some(until) = until {
                self.index.push(endpoint_id, until);
            }
            return; // a finishing probe requeues the endpoint
        }
        let (allowed, probing) = (admission.allowed, admission.probing);
        if allowed == 0 {
            if let Some(at) = admission.rate_free_at {
                self.index.push(endpoint_id, at);
            }
            return; // otherwise a finishing attempt requeues the endpoint
        }
        // Leased entries are still in the schedule (storage says pending until the
        // outcome is written), so look past up to `max_in_flight` of them.
        let limit = max_in_flight + allowed;
        let store = &self.ctx.store;
        let due = async {
            let first = store.due_entries(Lane::First, endpoint_id, now, limit);
            let first = first.await?;
            let retry = store.due_entries(Lane::Retry, endpoint_id, now, limit);
            Ok::<_, crate::store::StoreError>(interleave(first, retry.await?))
        };
        let entries = match due.await {
            Ok(entries) => entries,
            Err(e) => {
                tracing::warn!(error = %e, endpoint_id = %endpoint_id, "cannot read due work");
                return;
            }
        };
        let started = self.launch(endpoint_id, entries, allowed, probing, None);
        let Some(slot) = self.slots.get(endpoint_id) else {
            return;
        };
        if started == allowed && !probing {
            // Used this turn's share: others go first, then this endpoint again
            // (when its rate window allows), in the next pass: within this one
            // its finished attempts would keep giving it room, and new work for
            // other endpoints would wait for the pass to end.
            let at = slot.rate.as_ref().map_or(now, |r| r.next_free_at(now));
            let at = at.max(now + 1);
            self.index.push(endpoint_id, at);
        } else {
            self.requeue_after(endpoint_id, now).await;
        }
    }

    /// Starts an attempt for each entry, up to `allowed`, within the endpoint's
    /// and this node's in-flight places; returns how many started.
    pub(super) fn launch(
        &mut self,
        endpoint_id: &EndpointId,
        entries: Vec<Lease>,
        allowed: usize,
        probing: bool,
        shared: Option<SharedBreaker>,
    ) -> usize {
        let now = self.ctx.clock.now_ms();
        let Some(slot) = self.slots.get_mut(endpoint_id) else {
            return 0;
        };
        let max_in_flight = slot.record.max_in_flight as usize;
        let mut started = 0;
        for entry in entries {
            if started == allowed {
                break;
            }
            let Some(node_permit) = self.node_in_flight.try_start(self.node_max_in_flight) else {
                break;
            };
            let Some(permit) = slot.in_flight.try_start(max_in_flight) else {
                break;
            };
            if !self.handle.mark_in_flight(entry.delivery_id()) {
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
                shared: shared.clone(),
            };
            let (handle, done) = (self.handle.clone(), self.done_tx.clone());
            let attempt = run_attempt(worker, handle, done, (permit, node_permit));
            self.tasks.spawn(attempt);
        }
        started
    }

    /// This node's free in-flight places; with none, `endpoint_id` waits for
    /// the next attempt to finish.
    pub(super) fn node_free(&mut self, endpoint_id: &EndpointId) -> usize {
        let free = self.node_in_flight.free(self.node_max_in_flight);
        if free == 0 {
            self.waiting_for_room.insert(endpoint_id.to_owned());
        }
        free
    }

    /// Queues the endpoint for its next stored due time after `now`.
    pub(super) async fn requeue_after(&mut self, endpoint_id: &EndpointId, now: u64) {
        if let Ok(Some(next)) = self.ctx.store.next_due(endpoint_id, Some(now)).await {
            self.index.push(endpoint_id, next);
        }
    }
}
