//! How the scheduler answers the store's change feed: new work due, a replay
//! or breaker reset by hand, an endpoint changed.

use std::sync::Arc;

use super::{Scheduler, TurnKind};
use crate::delivery::breaker::Admit;
use crate::ids::EndpointId;
use crate::store::Change;

impl Scheduler {
    pub(super) async fn apply(&mut self, change: Change) {
        match change {
            Change::Due {
                endpoint_id,
                due_ms,
            } => {
                let now = self.ctx.clock.now_ms();
                let Some(slot) = self.slots.get(&endpoint_id) else {
                    return;
                };
                // A paused endpoint waits for its cool-down's end (queued once, at
                // that time) or for its probe's report; queuing it per ingest would
                // only pile up heap entries.
                // Where gateways share the breaker, a probe out may be another
                // node's, whose report this one never hears: the claim decides.
                let shared = self.kind == TurnKind::Shared;
                match slot.breaker.peek(now) {
                    _ if slot.record.disabled => {}
                    Admit::All | Admit::Probe => self.index.push(&endpoint_id, due_ms),
                    Admit::Wait(Some(until)) => self.index.push(&endpoint_id, until),
                    Admit::Wait(None) if shared => self.index.push(&endpoint_id, due_ms),
                    Admit::Wait(None) => {}
                }
            }
            Change::Replayed { endpoint_id } => self.manual(&endpoint_id, false),
            Change::BreakerReset { endpoint_id } => self.manual(&endpoint_id, true),
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
            // Plugins are the plugin host's; tenants change nothing that is due.
            Change::Plugin { .. } | Change::Tenant { .. } => {}
        }
    }

    /// An operator's replay (`reset` false) lets an open breaker probe now; a
    /// reset closes it. Either way the endpoint is served at once.
    fn manual(&mut self, endpoint_id: &EndpointId, reset: bool) {
        let now = self.ctx.clock.now_ms();
        let Some(slot) = self.slots.get_mut(endpoint_id) else {
            return;
        };
        if slot.record.disabled {
            return;
        }
        if self.kind == TurnKind::Shared {
            // The store changed the shared breaker already; the claim reads it.
            if reset {
                slot.breaker.reset();
            } else {
                slot.breaker.probe_now();
            }
            self.index.push(endpoint_id, now);
            return;
        }
        let was_open = !matches!(slot.breaker.admit(now), Admit::All);
        let changed = if reset {
            slot.breaker.reset()
        } else {
            slot.breaker.probe_now()
        };
        let record = Arc::clone(&slot.record);
        if changed {
            if reset && was_open {
                self.ctx
                    .telemetry
                    .breaker_transition(&record.tenant_id, endpoint_id, false, now);
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
}
