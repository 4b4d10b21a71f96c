//! The store writes that change what is due, each reported to the scheduler as
//! it commits: ingest, replay and endpoint changes. Callers (the API, the alert
//! sender) write through [`ScheduleWrites`] and never wake the scheduler by hand.

use std::sync::Arc;

use super::{DeliveryHandle, ScheduleChange};
use crate::store::{
    DeliveryFilter, EndpointRecord, EndpointVersion, IngestOutcome, NewEvent, ReplayOutcome,
    ReplaySummary, Store, StoreError, Swap,
};
use crate::telemetry::Telemetry;

/// The store in front of the scheduler: writes, then tells the scheduler (and
/// the ingest metric) what changed. Cheap to clone.
#[derive(Clone)]
pub struct ScheduleWrites {
    store: Store,
    delivery: DeliveryHandle,
    telemetry: Arc<Telemetry>,
}

/// What a bulk replay did, and the replayed endpoints whose breaker was not
/// closed, read before the scheduler lets their probes go.
#[derive(Debug)]
pub struct BulkReplay {
    pub summary: ReplaySummary,
    pub open_breakers: Vec<EndpointRecord>,
}

impl ScheduleWrites {
    pub fn new(store: Store, delivery: DeliveryHandle, telemetry: Arc<Telemetry>) -> Self {
        Self {
            store,
            delivery,
            telemetry,
        }
    }

    /// Commits an ingest; a new event is counted and its deliveries are due.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn ingest(&self, event: NewEvent<'_>) -> Result<IngestOutcome, StoreError> {
        let tenant = event.tenant_id;
        let outcome = self.store.ingest(event).await?;
        if let IngestOutcome::Created { deliveries, .. } = &outcome {
            self.telemetry.ingested(tenant, deliveries.len());
            for d in deliveries {
                self.delivery.notify(ScheduleChange::Due {
                    endpoint_id: d.endpoint_id.clone(),
                    due_ms: d.next_attempt_at_ms.unwrap_or(d.created_at_ms),
                });
            }
        }
        Ok(outcome)
    }

    /// Replays one delivery; its endpoint is served at once.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn replay_delivery(
        &self,
        tenant: &str,
        id: &str,
        force: bool,
        now_ms: u64,
    ) -> Result<ReplayOutcome, StoreError> {
        let outcome = self
            .store
            .replay_delivery(tenant, id, force, now_ms)
            .await?;
        if let ReplayOutcome::Replayed(d) = &outcome {
            self.replayed(&d.endpoint_id);
        }
        Ok(outcome)
    }

    /// Replays every delivery `filter` matches; their endpoints are served at once.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn replay_matching(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<BulkReplay, StoreError> {
        let summary = self.store.replay_matching(tenant, filter, now_ms).await?;
        let open_breakers = self.open_breakers(tenant, &summary);
        for endpoint_id in &summary.endpoints {
            self.replayed(endpoint_id);
        }
        Ok(BulkReplay {
            summary,
            open_breakers: open_breakers?,
        })
    }

    /// What [`ScheduleWrites::replay_matching`] would replay now, and which of
    /// those endpoints have a breaker that is not closed; writes nothing and wakes
    /// nothing.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn plan_replay_matching(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<BulkReplay, StoreError> {
        let summary = self
            .store
            .plan_replay_matching(tenant, filter, now_ms)
            .await?;
        let open_breakers = self.open_breakers(tenant, &summary)?;
        Ok(BulkReplay {
            summary,
            open_breakers,
        })
    }

    fn open_breakers(
        &self,
        tenant: &str,
        summary: &ReplaySummary,
    ) -> Result<Vec<EndpointRecord>, StoreError> {
        let mut open = Vec::new();
        for id in &summary.endpoints {
            if let Some(ep) = self.store.endpoint(tenant, id)?
                && ep.breaker.state != crate::store::BreakerState::Closed
            {
                open.push(ep);
            }
        }
        Ok(open)
    }

    /// A replay is the operator saying the receiver is fixed: the scheduler serves
    /// the endpoint now, and an open breaker lets its half-open probe go at once.
    fn replayed(&self, endpoint_id: &str) {
        self.delivery.notify(ScheduleChange::Replayed {
            endpoint_id: endpoint_id.to_owned(),
        });
    }

    /// Creates an endpoint unless its tenant has `max` already (`false`).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn create_endpoint(
        &self,
        ep: &EndpointRecord,
        max: usize,
    ) -> Result<bool, StoreError> {
        let created = self.store.create_endpoint(ep, max).await?;
        if created {
            self.endpoint_changed(ep);
        }
        Ok(created)
    }

    /// Replaces an endpoint read as `read` with `new`, unless it changed meanwhile.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn swap_endpoint(
        &self,
        read: &EndpointVersion,
        new: &EndpointRecord,
    ) -> Result<Swap, StoreError> {
        let swap = self.store.swap_endpoint(read, new).await?;
        if swap == Swap::Swapped {
            self.endpoint_changed(new);
        }
        Ok(swap)
    }

    /// Deletes an endpoint and ends its pending work, as [`Store::delete_endpoint`].
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn delete_endpoint(
        &self,
        ep: &EndpointRecord,
        now_ms: u64,
    ) -> Result<usize, StoreError> {
        let ended = self.store.delete_endpoint(ep, now_ms).await?;
        self.endpoint_changed(ep);
        Ok(ended)
    }

    /// Closes an endpoint's breaker by hand (`false` if there is no such
    /// endpoint); its pending work is served at once.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn close_breaker(&self, tenant: &str, id: &str) -> Result<bool, StoreError> {
        let closed = crate::store::BreakerRecord {
            state: crate::store::BreakerState::Closed.into(),
            ..crate::store::BreakerRecord::default()
        };
        let found = self
            .store
            .update_endpoint(tenant, id, |ep| ep.breaker = closed.clone())
            .await?;
        if found {
            self.delivery.notify(ScheduleChange::BreakerReset {
                endpoint_id: id.to_owned(),
            });
        }
        Ok(found)
    }

    fn endpoint_changed(&self, ep: &EndpointRecord) {
        self.delivery.notify(ScheduleChange::Endpoint {
            tenant_id: ep.tenant_id.clone(),
            endpoint_id: ep.id.clone(),
        });
    }
}
