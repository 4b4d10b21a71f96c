//! Starting attempts: each admitted due entry becomes its own task, holding a
//! place of its endpoint and one of this node, and reports back on the
//! scheduler's channel when it ends.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::endpoint_slot::EndpointSlot;
use super::node_places::NodePlaces;
use crate::delivery::DeliveryHandle;
use crate::delivery::attempt_task::run_attempt;
use crate::delivery::in_flight::InFlightGuard;
use crate::delivery::shared_breaker::SharedBreaker;
use crate::delivery::worker::{AttemptReport, DeliveryWorker, EngineContext};
use crate::ids::EndpointId;
use crate::store::Lease;

/// A finished attempt's report, by endpoint, with the endpoint's in-flight
/// place it held: given back once the report is taken.
pub(super) type Done = (EndpointId, AttemptReport, InFlightGuard);

/// Spawns attempts and keeps their tasks.
pub(super) struct AttemptStarter {
    ctx: Arc<EngineContext>,
    handle: DeliveryHandle,
    tasks: JoinSet<()>,
    done_tx: mpsc::UnboundedSender<Done>,
}

/// What a turn admitted, for the starter to start.
pub(super) struct Admitted {
    pub(super) entries: Vec<Lease>,
    /// At most this many start.
    pub(super) allowed: usize,
    /// The one allowed is the local breaker's half-open probe.
    pub(super) probing: bool,
    /// Where gateways share the breaker: what each attempt needs to count on it.
    pub(super) shared: Option<SharedBreaker>,
}

impl AttemptStarter {
    /// A starter, and the channel its attempts report on.
    pub(super) fn new(
        ctx: Arc<EngineContext>,
        handle: DeliveryHandle,
    ) -> (Self, mpsc::UnboundedReceiver<Done>) {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        let starter = Self {
            ctx,
            handle,
            tasks: JoinSet::new(),
            done_tx,
        };
        (starter, done_rx)
    }

    /// Starts an attempt for each entry, up to `allowed`, within the endpoint's
    /// and this node's places; returns how many started.
    pub(super) fn start(
        &mut self,
        slot: &mut EndpointSlot,
        places: &mut NodePlaces,
        admitted: Admitted,
    ) -> usize {
        let now = self.ctx.clock.now_ms();
        let max_in_flight = slot.record.max_in_flight as usize;
        let mut started = 0;
        for entry in admitted.entries {
            if started == admitted.allowed {
                break;
            }
            let Some(node_place) = places.try_take(&slot.record.tenant_id) else {
                break;
            };
            let Some(place) = slot.in_flight.try_start(max_in_flight) else {
                break;
            };
            if !self.handle.mark_in_flight(entry.delivery_id()) {
                continue;
            }
            started += 1;
            if let Some(rate) = &mut slot.rate {
                rate.started(now);
            }
            if admitted.probing {
                slot.breaker.probe_sent();
            }
            let worker = DeliveryWorker {
                ctx: Arc::clone(&self.ctx),
                endpoint: Arc::clone(&slot.record),
                policy: Arc::clone(&slot.policy),
                entry,
                shared: admitted.shared.clone(),
            };
            let (handle, done) = (self.handle.clone(), self.done_tx.clone());
            let attempt = run_attempt(worker, handle, done, node_place, place);
            self.tasks.spawn(attempt);
        }
        started
    }

    /// Reaps the tasks that have ended: under load, more end per turn than the
    /// scheduler's wait takes one at a time.
    pub(super) fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }

    /// Whether any attempt is still running.
    pub(super) fn is_busy(&self) -> bool {
        !self.tasks.is_empty()
    }

    /// Waits for the next attempt's task to end.
    pub(super) async fn join_next(&mut self) {
        self.tasks.join_next().await;
    }

    /// Lets in-flight attempts finish for up to `grace`; the rest are abandoned
    /// (not counted; they stay pending in the store).
    pub(super) async fn drain(mut self, grace: Duration) {
        let drain = async { while self.tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(grace, drain).await.is_err() {
            tracing::warn!(
                abandoned = self.tasks.len(),
                "shutdown grace over; abandoning in-flight attempts"
            );
            self.tasks.shutdown().await;
        }
    }
}
