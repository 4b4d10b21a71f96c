//! How the scheduler takes a finished attempt's report: the breaker (its own,
//! or the shared one's state after the attempt counted it), disabling an
//! endpoint that has failed for too long, and queuing the endpoint again.

use std::sync::Arc;

use super::{Scheduler, TurnKind};
use crate::delivery::breaker::Transition;
use crate::delivery::worker::AttemptReport;
use crate::ids::EndpointId;
use crate::store::EndpointRecord;

impl Scheduler {
    pub(super) async fn finished(&mut self, endpoint_id: &EndpointId, report: AttemptReport) {
        let now = self.ctx.clock.now_ms();
        if self.node_in_flight.free(self.node_max_in_flight) > 0 {
            for waiting in std::mem::take(&mut self.waiting_for_room) {
                self.index.push(&waiting, now);
            }
        }
        let Some(slot) = self.slots.get_mut(endpoint_id) else {
            return;
        };
        let transition = match self.kind {
            TurnKind::Local => slot
                .breaker
                .record(report.outcome, now, &self.protection.breaker),
            // The attempt's task counted it on the shared breaker.
            TurnKind::Shared => report.shared.and_then(|shared| {
                slot.breaker = shared.breaker;
                shared.transition
            }),
        };
        let failing_too_long = slot
            .breaker
            .failing_since_ms()
            .is_some_and(|since| now.saturating_sub(since) >= self.protection.disable_after_ms);
        let record = Arc::clone(&slot.record);
        if let Some(t) = transition {
            match t {
                Transition::Tripped { trips: 1, .. } => {
                    self.ctx.telemetry.breaker_transition(
                        &record.tenant_id,
                        endpoint_id,
                        true,
                        now,
                    );
                }
                Transition::Recovered => {
                    self.ctx.telemetry.breaker_transition(
                        &record.tenant_id,
                        endpoint_id,
                        false,
                        now,
                    );
                }
                Transition::Tripped { .. } => {}
            }
            match t {
                Transition::Tripped { until_ms, trips } => tracing::warn!(
                    alert = "breaker_tripped", endpoint_id = %endpoint_id, tenant_id = %record.tenant_id,
                    open_until_ms = until_ms, trips, "circuit breaker opened"
                ),
                Transition::Recovered => tracing::info!(
                    alert = "breaker_recovered", endpoint_id = %endpoint_id, tenant_id = %record.tenant_id,
                    "circuit breaker closed"
                ),
            }
        }
        if transition.is_some() || failing_too_long || report.endpoint_changed {
            let breaker = slot.breaker.to_record();
            self.persist(&record, breaker, failing_too_long && !record.disabled);
        }
        self.requeue(endpoint_id).await;
    }

    /// Stores the breaker state (and, when it has failed for too long, disables the
    /// endpoint) off the scheduler loop; the store's change feed then reloads it.
    pub(super) fn persist(
        &self,
        ep: &EndpointRecord,
        breaker: crate::store::BreakerRecord,
        disable: bool,
    ) {
        let (store, clock) = (self.ctx.store.clone(), Arc::clone(&self.ctx.clock));
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
            let changed = store
                .update_endpoint(&tenant_id, &endpoint_id, |e| {
                    e.breaker = breaker.clone();
                    if disable && !e.disabled {
                        (e.disabled, e.disabled_reason, e.disabled_at_ms) =
                            (true, Some("failing".into()), Some(now));
                    }
                })
                .await;
            if let Err(e) = changed {
                tracing::warn!(error = %e, endpoint_id = %endpoint_id, "cannot store breaker state");
            }
        });
    }
}
