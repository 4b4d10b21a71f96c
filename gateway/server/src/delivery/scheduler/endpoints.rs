//! The endpoints the scheduler serves and the queue of when each is next due:
//! loaded from the store, changed by its change feed, and moved on by the
//! reports of finished attempts (the breaker, disabling an endpoint that has
//! failed for too long, queuing it again).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::endpoint_slot::EndpointSlot;
use super::{Protection, TurnKind};
use crate::delivery::breaker::Transition;
use crate::delivery::schedule_index::ScheduleIndex;
use crate::delivery::worker::{AttemptReport, EngineContext};
use crate::ids::EndpointId;
use crate::operator_events::OperatorEvent;
use crate::store::{BreakerRecord, BreakerState, Change, EndpointRecord};

/// Every endpoint's slot, and the heap of when each has work due.
pub(super) struct Endpoints {
    ctx: Arc<EngineContext>,
    protection: Protection,
    kind: TurnKind,
    slots: HashMap<EndpointId, EndpointSlot>,
    pub(super) index: ScheduleIndex,
}

impl Endpoints {
    pub(super) fn new(ctx: Arc<EngineContext>, protection: Protection, kind: TurnKind) -> Self {
        Self {
            ctx,
            protection,
            kind,
            slots: HashMap::new(),
            index: ScheduleIndex::default(),
        }
    }

    /// The engine's shared context.
    pub(super) fn ctx(&self) -> &Arc<EngineContext> {
        &self.ctx
    }

    /// The breaker thresholds.
    pub(super) fn protection(&self) -> &Protection {
        &self.protection
    }

    pub(super) fn slot(&self, endpoint_id: &EndpointId) -> Option<&EndpointSlot> {
        self.slots.get(endpoint_id)
    }

    pub(super) fn slot_mut(&mut self, endpoint_id: &EndpointId) -> Option<&mut EndpointSlot> {
        self.slots.get_mut(endpoint_id)
    }

    /// Loads every endpoint at start; on failure deliveries wait for the next change.
    pub(super) async fn load_all(&mut self) {
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
    }

    /// Takes in a fresh read of an endpoint, and queues it unless disabled.
    pub(super) async fn load(&mut self, ep: EndpointRecord) {
        let id = ep.id.clone();
        let disabled = ep.disabled;
        let old = self.slots.remove(&id);
        let slot = EndpointSlot::load(ep, old, self.kind, &self.ctx.default_policy);
        self.slots.insert(id.clone(), slot);
        if disabled {
            self.index.remove(&id);
        } else {
            self.requeue(&id).await;
        }
    }

    /// Queues an endpoint for `at`, unless it is already queued no later.
    pub(super) fn push(&mut self, endpoint_id: &EndpointId, at: u64) {
        self.index.push(endpoint_id, at);
    }

    /// Queues an endpoint for its earliest stored due time.
    pub(super) async fn requeue(&mut self, endpoint_id: &EndpointId) {
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

    /// Queues the endpoint for its next stored due time after `now`.
    pub(super) async fn requeue_after(&mut self, endpoint_id: &EndpointId, now: u64) {
        if let Ok(Some(next)) = self.ctx.store.next_due(endpoint_id, Some(now)).await {
            self.index.push(endpoint_id, next);
        }
    }

    /// Answers the store's change feed: new work due, a replay or breaker reset
    /// by hand, an endpoint changed.
    pub(super) async fn apply(&mut self, change: Change) {
        match change {
            Change::Due {
                endpoint_id,
                due_ms,
            } => {
                let now = self.ctx.clock.now_ms();
                let wake = self.slots.get(&endpoint_id);
                if let Some(at) = wake.and_then(|s| s.wake_at(due_ms, self.kind, now)) {
                    self.index.push(&endpoint_id, at);
                }
            }
            Change::Replayed { endpoint_id } => self.opened_by_hand(&endpoint_id, false),
            Change::BreakerReset { endpoint_id } => self.opened_by_hand(&endpoint_id, true),
            Change::Endpoint {
                tenant_id,
                endpoint_id,
            } => match self.ctx.store.endpoint(&tenant_id, &endpoint_id).await {
                Ok(Some(ep)) => self.load(ep).await,
                Ok(None) => {
                    self.slots.remove(&endpoint_id);
                    self.index.remove(&endpoint_id);
                }
                Err(e) => {
                    tracing::warn!(error = %e, endpoint_id = %endpoint_id, "cannot reload endpoint")
                }
            },
            // Plugins are the plugin host's, the catalog is ingest's; tenants
            // change nothing that is due.
            Change::Plugin { .. } | Change::Tenant { .. } | Change::EventType { .. } => {}
        }
    }

    /// An operator's replay or breaker reset: the endpoint is served at once.
    fn opened_by_hand(&mut self, endpoint_id: &EndpointId, reset: bool) {
        let now = self.ctx.clock.now_ms();
        let Some(slot) = self.slots.get_mut(endpoint_id) else {
            return;
        };
        if slot.record.disabled {
            return;
        }
        if let Some(was_open) = slot.open_by_hand(reset, self.kind, now) {
            let record = Arc::clone(&slot.record);
            if reset && was_open {
                self.ctx
                    .telemetry
                    .breaker_transition(&record.tenant_id, endpoint_id, false, now);
                let closed =
                    OperatorEvent::breaker(&record.tenant_id, endpoint_id.as_str(), false, now);
                self.ctx.operator_events.emit(closed);
            }
            tracing::info!(
                endpoint_id = %endpoint_id,
                tenant_id = %record.tenant_id,
                reset,
                "breaker opened to traffic by hand"
            );
            let breaker = slot.breaker.to_record();
            self.persist(&record, breaker, false);
        }
        self.index.push(endpoint_id, now);
    }

    /// Takes a finished attempt's report: the breaker, disabling an endpoint
    /// that has failed for too long, and queuing it again.
    pub(super) async fn finished(&mut self, endpoint_id: &EndpointId, report: AttemptReport) {
        let now = self.ctx.clock.now_ms();
        let Some(slot) = self.slots.get_mut(endpoint_id) else {
            return;
        };
        let endpoint_changed = report.endpoint_changed;
        let transition = slot.take_report(report, self.kind, now, &self.protection.breaker);
        let failing_too_long = slot.failing_too_long(now, self.protection.disable_after_ms);
        let record = Arc::clone(&slot.record);
        let breaker = slot.breaker.to_record();
        if let Some(t) = transition {
            self.announce(&record, t, now);
        }
        if transition.is_some() || failing_too_long || endpoint_changed {
            self.persist(&record, breaker, failing_too_long && !record.disabled);
        }
        self.requeue(endpoint_id).await;
    }

    /// Tells telemetry and the log of a breaker's transition.
    fn announce(&self, record: &EndpointRecord, t: Transition, now: u64) {
        let (tenant_id, endpoint_id) = (&record.tenant_id, &record.id);
        match t {
            Transition::Tripped { until_ms, trips } => {
                if trips == 1 {
                    (self.ctx.telemetry).breaker_transition(tenant_id, endpoint_id, true, now);
                    let opened = OperatorEvent::breaker(tenant_id, endpoint_id.as_str(), true, now);
                    self.ctx.operator_events.emit(opened);
                }
                tracing::warn!(
                    alert = "breaker_tripped", endpoint_id = %endpoint_id, tenant_id = %tenant_id,
                    open_until_ms = until_ms, trips, "circuit breaker opened"
                );
            }
            Transition::Recovered => {
                (self.ctx.telemetry).breaker_transition(tenant_id, endpoint_id, false, now);
                let closed = OperatorEvent::breaker(tenant_id, endpoint_id.as_str(), false, now);
                self.ctx.operator_events.emit(closed);
                tracing::info!(
                    alert = "breaker_recovered", endpoint_id = %endpoint_id, tenant_id = %tenant_id,
                    "circuit breaker closed"
                );
            }
        }
    }

    /// Stores the breaker state (and, when it has failed for too long, disables the
    /// endpoint) off the scheduler loop; the store's change feed then reloads it.
    fn persist(&self, ep: &EndpointRecord, breaker: BreakerRecord, disable: bool) {
        let (store, clock) = (self.ctx.store.clone(), Arc::clone(&self.ctx.clock));
        let events = self.ctx.operator_events.clone();
        let (tenant_id, endpoint_id) = (ep.tenant_id.clone(), ep.id.clone());
        tokio::spawn(async move {
            if disable {
                tracing::warn!(
                    alert = "endpoint_disabled",
                    endpoint_id = %endpoint_id,
                    "no success for disable_after: endpoint disabled"
                );
            }
            let now = clock.now_ms();
            let newly = AtomicBool::new(false);
            let changed = store
                .update_endpoint(&tenant_id, &endpoint_id, |e| {
                    e.breaker = breaker.clone();
                    newly.store(disable && !e.disabled, Ordering::Relaxed);
                    if disable && !e.disabled {
                        (e.disabled, e.disabled_reason, e.disabled_at_ms) =
                            (true, Some("failing".into()), Some(now));
                    }
                })
                .await;
            // Only the write that disabled it tells: once, whichever gateway it was.
            if newly.load(Ordering::Relaxed)
                && changed.is_ok()
                && let Ok(Some(ep)) = store.endpoint(&tenant_id, &endpoint_id).await
            {
                events.emit(OperatorEvent::endpoint_disabled(&ep, now));
            }
            if let Err(e) = changed {
                tracing::warn!(error = %e, endpoint_id = %endpoint_id, "cannot store breaker state");
            }
        });
    }
}
