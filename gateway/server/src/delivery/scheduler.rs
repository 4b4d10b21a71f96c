//! The scheduler: which endpoint is served next, and how much of its due work.
//!
//! A heap holds endpoints keyed by their earliest due delivery ([`ScheduleIndex`]).
//! Due endpoints are served round-robin: each turn starts at most what the
//! endpoint's breaker, rate limit and free in-flight places allow, then the
//! endpoint goes to the back of the due queue. Due work is a range scan of that
//! endpoint's schedule keys, never a scan of the whole schedule. In-flight is an
//! in-memory mark, so after a restart pending work is taken up again.
//!
//! The scheduler is its parts: the endpoints and their queue (`endpoints.rs`,
//! each one's state in `endpoint_slot.rs`), this node's places
//! (`node_places.rs`) and the starter that turns admitted work into attempt
//! tasks (`attempt_starter.rs`). A turn is one of two kinds, decided once from
//! the store ([`TurnKind`]): a local turn keeps the endpoint's breaker, rate
//! window and in-flight count in this process (`local_turn.rs`); a shared
//! turn, on a store several gateways share, reads and changes the cluster's
//! under the endpoint's row lock (`shared_turn.rs`). Both admit work the same
//! way (`admission.rs`).
//!
//! [`ScheduleIndex`]: super::schedule_index::ScheduleIndex

mod admission;
mod attempt_starter;
mod endpoint_slot;
mod endpoints;
mod local_turn;
mod node_places;
mod shared_turn;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::DeliveryHandle;
use super::worker::{AttemptReport, EngineContext};
use crate::config::BreakerConfig;
use crate::ids::EndpointId;
use crate::store::Changes;
use attempt_starter::{AttemptStarter, Done};
use endpoints::Endpoints;
use node_places::NodePlaces;

/// Reports and changes taken per turn beyond the first, so a flood of one kind
/// cannot hold the loop.
const MAX_QUEUED_PER_TURN: usize = 1024;

/// Breaker and disabling thresholds, and this node's own cap.
#[derive(Debug, Clone)]
pub(crate) struct Protection {
    pub breaker: BreakerConfig,
    /// Most attempts this node has in flight, over all endpoints.
    pub node_max_in_flight: usize,
    /// Most of those one tenant holds.
    pub tenant_max_in_flight: usize,
    /// An endpoint failing without a success for this long is disabled.
    pub disable_after_ms: u64,
}

/// Where a turn's limits live, decided once when the scheduler starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurnKind {
    /// The one process keeps the breaker, rate window and in-flight count.
    Local,
    /// Gateways share the store, and with it each endpoint's limits: a turn
    /// claims under the endpoint's row, and outcomes count on the shared breaker.
    Shared,
}

impl TurnKind {
    /// The kind a store's turns take.
    pub(crate) fn of(store: &crate::store::Store) -> Self {
        if store.claims_due_work() {
            Self::Shared
        } else {
            Self::Local
        }
    }
}

/// What one turn works with.
struct Turn<'a> {
    endpoints: &'a mut Endpoints,
    places: &'a mut NodePlaces,
    starter: &'a mut AttemptStarter,
}

impl Turn<'_> {
    /// This node's places free for a due endpoint, if it is loaded, enabled
    /// and its tenant may take one; `None` otherwise (an endpoint that found
    /// no place is called back when one comes free).
    fn node_room(&mut self, endpoint_id: &EndpointId) -> Option<usize> {
        let slot = self.endpoints.slot(endpoint_id)?;
        if slot.record.disabled {
            return None;
        }
        let free = self.places.free_for(&slot.record.tenant_id, endpoint_id);
        (free > 0).then_some(free)
    }
}

/// The scheduler task.
pub(crate) struct Scheduler {
    kind: TurnKind,
    endpoints: Endpoints,
    places: NodePlaces,
    starter: AttemptStarter,
    changes: Changes,
    done_rx: mpsc::UnboundedReceiver<Done>,
}

impl Scheduler {
    pub(crate) fn new(
        ctx: Arc<EngineContext>,
        handle: DeliveryHandle,
        changes: Changes,
        protection: Protection,
    ) -> Self {
        let kind = TurnKind::of(&ctx.store);
        let places = NodePlaces::new(
            protection.node_max_in_flight,
            protection.tenant_max_in_flight,
        );
        let (starter, done_rx) = AttemptStarter::new(Arc::clone(&ctx), handle);
        Self {
            kind,
            endpoints: Endpoints::new(ctx, protection, kind),
            places,
            starter,
            changes,
            done_rx,
        }
    }

    /// Runs until `shutdown`, then lets in-flight attempts finish for up to `grace`;
    /// the rest are abandoned (not counted; they stay pending in the store).
    pub(crate) async fn run(mut self, shutdown: CancellationToken, grace: Duration) {
        self.endpoints.load_all().await;
        let clock = Arc::clone(&self.endpoints.ctx().clock);
        // While storage fails, no attempt starts: its outcome could not be
        // recorded, so it would be sent again and again. Due work waits, and
        // the store's own probe says when it may go.
        let mut storage_failing = self.endpoints.ctx().store.health().watch();
        loop {
            self.starter.reap();
            let now = clock.now_ms();
            let paused = *storage_failing.borrow_and_update();
            if !paused {
                while let Some(ep) = self.endpoints.index.pop_due(now) {
                    self.serve(&ep, now).await;
                }
            }
            self.places.pass_over();
            let sleep = match self.endpoints.index.next_due() {
                Some(due) if !paused => Duration::from_millis(due.saturating_sub(now).max(1)),
                _ => Duration::from_secs(3600),
            };
            let busy = self.starter.is_busy();
            tokio::select! {
                () = shutdown.cancelled() => break,
                Some(change) = self.changes.recv() => self.endpoints.apply(change).await,
                Some((ep, report, place)) = self.done_rx.recv() => {
                    self.finished(&ep, report).await;
                    drop(place);
                }
                () = self.starter.join_next(), if busy => {}
                Ok(()) = storage_failing.changed() => {}
                () = tokio::time::sleep(sleep) => {}
            }
            self.take_queued().await;
        }
        self.starter.drain(grace).await;
    }

    /// Takes every change and report already waiting, so a burst of finished
    /// attempts costs one turn (one scan per endpoint), not one turn each.
    async fn take_queued(&mut self) {
        for _ in 0..MAX_QUEUED_PER_TURN {
            match self.done_rx.try_recv() {
                Ok((ep, report, place)) => {
                    self.finished(&ep, report).await;
                    drop(place);
                }
                Err(_) => break,
            }
        }
        for _ in 0..MAX_QUEUED_PER_TURN {
            match self.changes.try_recv() {
                Some(change) => self.endpoints.apply(change).await,
                None => break,
            }
        }
    }

    /// One round-robin turn for a due endpoint, of the scheduler's kind.
    async fn serve(&mut self, endpoint_id: &EndpointId, now: u64) {
        let turn = Turn {
            endpoints: &mut self.endpoints,
            places: &mut self.places,
            starter: &mut self.starter,
        };
        match self.kind {
            TurnKind::Local => local_turn::serve(turn, endpoint_id, now).await,
            TurnKind::Shared => shared_turn::serve(turn, endpoint_id, now).await,
        }
    }

    /// A finished attempt: endpoints that waited for a place are due again,
    /// and the endpoint takes its report.
    async fn finished(&mut self, endpoint_id: &EndpointId, report: AttemptReport) {
        let now = self.endpoints.ctx().clock.now_ms();
        for waiting in self.places.take_waiting() {
            self.endpoints.push(&waiting, now);
        }
        self.endpoints.finished(endpoint_id, report).await;
    }
}
