//! The scheduler: which endpoint is served next, and how much of its due work.
//!
//! A heap holds endpoints keyed by their earliest due delivery ([`ScheduleIndex`]).
//! Due endpoints are served round-robin: each turn starts at most what the
//! endpoint's breaker, rate limit and free in-flight permits allow, then the
//! endpoint goes to the back of the due queue. Due work is a range scan of that
//! endpoint's schedule keys, never a scan of the whole schedule. In-flight is an
//! in-memory lease, so after a restart pending work is taken up again.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::breaker::{Admit, Breaker, Transition};
use super::rate_limit::RateWindow;
use super::schedule_index::ScheduleIndex;
use super::worker::{AttemptReport, DeliveryWorker, EngineContext};
use super::{DeliveryHandle, ScheduleChange, ScheduleChanges};
use crate::config::BreakerConfig;
use crate::store::EndpointRecord;
use crate::store::keys::Lane;

/// Breaker and disabling thresholds.
#[derive(Debug, Clone)]
pub struct Protection {
    pub breaker: BreakerConfig,
    /// An endpoint failing without a success for this long is disabled.
    pub disable_after_ms: u64,
}

struct EndpointSlot {
    record: Arc<EndpointRecord>,
    permits: Arc<Semaphore>,
    breaker: Breaker,
    rate: Option<RateWindow>,
}

/// The scheduler task.
pub(crate) struct Scheduler {
    ctx: Arc<EngineContext>,
    handle: DeliveryHandle,
    changes: ScheduleChanges,
    protection: Protection,
    slots: HashMap<String, EndpointSlot>,
    index: ScheduleIndex,
    tasks: JoinSet<()>,
    done_tx: mpsc::UnboundedSender<(String, AttemptReport)>,
    done_rx: mpsc::UnboundedReceiver<(String, AttemptReport)>,
}

impl Scheduler {
    pub(crate) fn new(
        ctx: Arc<EngineContext>,
        handle: DeliveryHandle,
        changes: ScheduleChanges,
        protection: Protection,
    ) -> Self {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        Self {
            ctx,
            handle,
            changes,
            protection,
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
                let open = eps
                    .iter()
                    .filter(|e| !matches!(e.breaker.state.as_str(), "" | "closed"))
                    .count();
                let open = i64::try_from(open).unwrap_or(0);
                self.ctx.telemetry.breakers_open_at_start(open);
                eps.into_iter().for_each(|ep| self.load(ep));
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
                self.serve(&ep, now);
            }
            let sleep = self
                .index
                .next_due()
                .map_or(Duration::from_secs(3600), |due| {
                    Duration::from_millis(due.saturating_sub(now).max(1))
                });
            tokio::select! {
                () = shutdown.cancelled() => break,
                Some(change) = self.changes.0.recv() => self.apply(change),
                Some((ep, report)) = self.done_rx.recv() => self.finished(&ep, report),
                Some(_) = self.tasks.join_next(), if !self.tasks.is_empty() => {}
                () = tokio::time::sleep(sleep) => {}
            }
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

    fn load(&mut self, ep: EndpointRecord) {
        let id = ep.id.clone();
        let old = self.slots.remove(&id);
        let permits = match &old {
            Some(s) if s.record.max_in_flight == ep.max_in_flight => Arc::clone(&s.permits),
            _ => Arc::new(Semaphore::new(ep.max_in_flight as usize)),
        };
        // The in-memory breaker is ahead of the stored one, unless the endpoint was
        // just re-enabled (which resets it).
        let breaker = match old {
            Some(s) if !s.record.disabled || ep.disabled => s.breaker,
            _ => Breaker::from_record(&ep.breaker),
        };
        let rate = ep.rate_limit_per_s.map(RateWindow::new);
        let disabled = ep.disabled;
        self.slots.insert(
            id.clone(),
            EndpointSlot {
                record: Arc::new(ep),
                permits,
                breaker,
                rate,
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

    fn finished(&mut self, endpoint_id: &str, report: AttemptReport) {
        let now = self.ctx.clock.now_ms();
        let Some(slot) = self.slots.get_mut(endpoint_id) else {
            return;
        };
        let transition = slot
            .breaker
            .record(report.outcome, now, &self.protection.breaker);
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
                    alert = "breaker_tripped", endpoint_id, tenant_id = %record.tenant_id,
                    open_until_ms = until_ms, trips, "circuit breaker opened"
                ),
                Transition::Recovered => tracing::info!(
                    alert = "breaker_recovered", endpoint_id, tenant_id = %record.tenant_id,
                    "circuit breaker closed"
                ),
            }
        }
        if transition.is_some() || failing_too_long || report.endpoint_changed {
            let breaker = slot.breaker.to_record();
            self.persist(&record, breaker, failing_too_long && !record.disabled);
        }
        self.requeue(endpoint_id);
    }

    /// Stores the breaker state (and, when it has failed for too long, disables the
    /// endpoint) off the scheduler loop, then reloads the endpoint.
    fn persist(&self, ep: &EndpointRecord, breaker: crate::store::BreakerRecord, disable: bool) {
        let (store, handle, clock) = (
            self.ctx.store.clone(),
            self.handle.clone(),
            Arc::clone(&self.ctx.clock),
        );
        let (tenant_id, endpoint_id) = (ep.tenant_id.clone(), ep.id.clone());
        tokio::spawn(async move {
            if disable {
                tracing::warn!(
                    alert = "endpoint_disabled",
                    endpoint_id,
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
                tracing::warn!(error = %e, endpoint_id, "cannot store breaker state");
            }
            handle.notify(ScheduleChange::Endpoint {
                tenant_id,
                endpoint_id,
            });
        });
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
        let Some(slot) = self.slots.get_mut(endpoint_id) else {
            return;
        };
        if slot.record.disabled {
            return;
        }
        let free = slot.permits.available_permits();
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
        // Leased entries are still in the schedule (storage says pending until the
        // outcome is written), so look past up to max_in_flight of them.
        let limit = slot.record.max_in_flight as usize + allowed;
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
        let probing = matches!(slot.breaker.admit(now), Admit::Probe);
        let mut started = 0;
        for entry in entries {
            if started == allowed {
                break;
            }
            let Ok(permit) = Arc::clone(&slot.permits).try_acquire_owned() else {
                break;
            };
            if !self.handle.lease(&entry.delivery_id) {
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
                entry,
            };
            let (handle, done) = (self.handle.clone(), self.done_tx.clone());
            self.tasks.spawn(async move {
                let (delivery_id, endpoint_id) =
                    (worker.entry.delivery_id.clone(), worker.endpoint.id.clone());
                let report = worker.run().await;
                handle.release(&delivery_id);
                drop(permit);
                let _ = done.send((endpoint_id, report));
            });
        }
        if started == allowed && !probing {
            // Used this turn's share: others go first, then this endpoint again
            // (when its rate window allows).
            let at = slot.rate.as_ref().map_or(now, |r| r.next_free_at(now));
            self.index.push(endpoint_id, at);
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
}
