//! The scheduler: which endpoint is served next, and how much of its due work.
//!
//! A heap holds endpoints keyed by their earliest due delivery ([`ScheduleIndex`]).
//! Due endpoints are served round-robin: each turn starts at most what the
//! endpoint's breaker, rate limit and free in-flight places allow, then the
//! endpoint goes to the back of the due queue. Due work is a range scan of that
//! endpoint's schedule keys, never a scan of the whole schedule. In-flight is an
//! in-memory lease, so after a restart pending work is taken up again.
//!
//! A turn is one of two kinds, decided once from the store ([`TurnKind`]): a
//! local turn keeps the endpoint's breaker, rate window and in-flight count in
//! this process (`turn.rs`); a shared turn, on a store several gateways share,
//! reads and changes the cluster's under the endpoint's row lock
//! (`shared_turn.rs`). Both admit work the same way (`admission.rs`).

mod admission;
mod changes;
mod reports;
mod shared_turn;
#[cfg(test)]
mod tests;
mod turn;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::DeliveryHandle;
use super::breaker::Breaker;
use super::endpoint_policy::EndpointPolicy;
use super::in_flight::InFlight;
use super::rate_limit::RateWindow;
use super::schedule_index::ScheduleIndex;
use super::worker::{AttemptReport, EngineContext};
use crate::config::BreakerConfig;
use crate::ids::EndpointId;
use crate::store::Changes;
use crate::store::{BreakerState, EndpointRecord};

/// Reports and changes taken per turn beyond the first, so a flood of one kind
/// cannot hold the loop.
const MAX_QUEUED_PER_TURN: usize = 1024;

/// Breaker and disabling thresholds, and this node's own cap.
#[derive(Debug, Clone)]
pub(crate) struct Protection {
    pub breaker: BreakerConfig,
    /// Most attempts this node has in flight, over all endpoints.
    pub node_max_in_flight: usize,
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

struct EndpointSlot {
    record: Arc<EndpointRecord>,
    /// Resolved here, once per load, for every attempt until the next.
    policy: Arc<EndpointPolicy>,
    in_flight: InFlight,
    breaker: Breaker,
    rate: Option<RateWindow>,
}

impl EndpointSlot {
    /// The endpoint's limits as this process keeps them (a local turn's).
    fn limits(&mut self) -> admission::TurnLimits<'_> {
        admission::TurnLimits {
            breaker: &mut self.breaker,
            rate: self.rate.as_mut(),
        }
    }
}

/// The scheduler task.
pub(crate) struct Scheduler {
    ctx: Arc<EngineContext>,
    handle: DeliveryHandle,
    changes: Changes,
    protection: Protection,
    kind: TurnKind,
    slots: HashMap<EndpointId, EndpointSlot>,
    index: ScheduleIndex,
    /// Attempts in flight on this node, over all endpoints.
    node_in_flight: InFlight,
    node_max_in_flight: usize,
    /// Endpoints that found this node full; served again as attempts finish.
    waiting_for_room: HashSet<EndpointId>,
    tasks: JoinSet<()>,
    done_tx: mpsc::UnboundedSender<(EndpointId, AttemptReport)>,
    done_rx: mpsc::UnboundedReceiver<(EndpointId, AttemptReport)>,
}

impl Scheduler {
    pub(crate) fn new(
        ctx: Arc<EngineContext>,
        handle: DeliveryHandle,
        changes: Changes,
        protection: Protection,
    ) -> Self {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        let node_max_in_flight = protection.node_max_in_flight.max(1);
        let kind = TurnKind::of(&ctx.store);
        Self {
            ctx,
            handle,
            changes,
            protection,
            kind,
            slots: HashMap::new(),
            index: ScheduleIndex::default(),
            node_in_flight: InFlight::default(),
            node_max_in_flight,
            waiting_for_room: HashSet::new(),
            tasks: JoinSet::new(),
            done_tx,
            done_rx,
        }
    }

    /// Runs until `shutdown`, then lets in-flight attempts finish for up to `grace`;
    /// the rest are abandoned (not counted; they stay pending in the store).
    pub(crate) async fn run(mut self, shutdown: CancellationToken, grace: Duration) {
        match self.ctx.store.all_endpoints().await {
            Ok(eps) => {
                let open = eps
                    .iter()
                    .filter(|e| e.breaker.state != BreakerState::Closed)
                    .map(|e| e.tenant_id.as_str());
                self.ctx.telemetry.breakers_open_at_start(open);
                for ep in eps {
                    self.load(ep).await;
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot load endpoints; deliveries wait for the next change")
            }
        }
        loop {
            // Finished tasks are reaped here too: under load, more finish per turn
            // than the select below takes.
            while self.tasks.try_join_next().is_some() {}
            let now = self.ctx.clock.now_ms();
            while let Some(ep) = self.index.pop_due(now) {
                self.serve(&ep, now).await;
            }
            let sleep = self
                .index
                .next_due()
                .map_or(Duration::from_secs(3600), |due| {
                    Duration::from_millis(due.saturating_sub(now).max(1))
                });
            tokio::select! {
                () = shutdown.cancelled() => break,
                Some(change) = self.changes.recv() => self.apply(change).await,
                Some((ep, report)) = self.done_rx.recv() => self.finished(&ep, report).await,
                Some(_) = self.tasks.join_next(), if !self.tasks.is_empty() => {}
                () = tokio::time::sleep(sleep) => {}
            }
            self.take_queued().await;
        }
        let drain = async { while self.tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(grace, drain).await.is_err() {
            tracing::warn!(
                abandoned = self.tasks.len(),
                "shutdown grace over; abandoning in-flight attempts"
            );
            self.tasks.shutdown().await;
        }
    }

    /// Takes every change and report already waiting, so a burst of finished
    /// attempts costs one turn (one scan per endpoint), not one turn each.
    async fn take_queued(&mut self) {
        for _ in 0..MAX_QUEUED_PER_TURN {
            match self.done_rx.try_recv() {
                Ok((ep, report)) => self.finished(&ep, report).await,
                Err(_) => break,
            }
        }
        for _ in 0..MAX_QUEUED_PER_TURN {
            match self.changes.try_recv() {
                Some(change) => self.apply(change).await,
                None => break,
            }
        }
    }

    async fn load(&mut self, ep: EndpointRecord) {
        let id = ep.id.clone();
        let old = self.slots.remove(id.as_str());
        // What is in flight and what started this second outlive the reload: a
        // changed limit applies to them, it does not start a fresh count.
        let in_flight = old
            .as_ref()
            .map(|s| s.in_flight.clone())
            .unwrap_or_default();
        let rate =
            ep.rate_limit_per_s
                .map(|per_s| match old.as_ref().and_then(|s| s.rate.clone()) {
                    Some(window) => window.with_limit(per_s),
                    None => RateWindow::new(per_s),
                });
        // The in-memory breaker is ahead of the stored one, unless the endpoint was
        // just re-enabled (which resets it). Where gateways share the breaker, the
        // stored one is as fresh as any (each transition is stored), and each
        // claim reads the shared state anyway.
        let breaker = match (old, self.kind) {
            (Some(s), TurnKind::Local) if !s.record.disabled || ep.disabled => s.breaker,
            _ => Breaker::from_record(&ep.breaker),
        };
        let disabled = ep.disabled;
        let policy = Arc::new(EndpointPolicy::load(&ep, &self.ctx.default_policy));
        self.slots.insert(
            id.clone(),
            EndpointSlot {
                record: Arc::new(ep),
                policy,
                in_flight,
                breaker,
                rate,
            },
        );
        if disabled {
            self.index.remove(&id);
        } else {
            self.requeue(&id).await;
        }
    }

    /// Queues an endpoint for its earliest stored due time.
    async fn requeue(&mut self, endpoint_id: &EndpointId) {
        if self
            .index
            .queued_at(endpoint_id)
            .is_some_and(|at| at <= self.ctx.clock.now_ms())
        {
            return; // already due: its turn reads the store anyway
        }
        match self.ctx.store.next_due(endpoint_id, None).await {
            Ok(Some(due)) => self.index.push(endpoint_id, due),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, endpoint_id = %endpoint_id, "cannot read schedule")
            }
        }
    }
}
