//! The store writes that the API and the alert sender make together with a
//! count or a read: an ingest counted in the metrics, a replay moving its
//! deliveries from the DLQ count to the pending one, a bulk replay with the
//! endpoints whose breaker still holds it. The store's change feed, not this
//! module, tells the scheduler.

use std::sync::Arc;

use crate::ids::{DeliveryId, TenantId};
use crate::store::{
    DeliveryFilter, DeliveryState, EndpointRecord, IngestOutcome, NewEvent, ReplayOutcome,
    ReplaySummary, Store, StoreError,
};
use crate::telemetry::Telemetry;

use super::ingest_admission::IngestAdmission;

/// Ingest and replays, with the counts that move with them. Cheap to clone.
#[derive(Clone)]
pub(crate) struct CountedWrites {
    store: Store,
    telemetry: Arc<Telemetry>,
    admission: Arc<IngestAdmission>,
}

/// What a bulk replay did, and the replayed endpoints whose breaker was not
/// closed, read before the scheduler lets their probes go.
#[derive(Debug)]
pub(crate) struct BulkReplay {
    pub summary: ReplaySummary,
    pub open_breakers: Vec<EndpointRecord>,
}

impl CountedWrites {
    pub(crate) fn new(
        store: Store,
        telemetry: Arc<Telemetry>,
        admission: Arc<IngestAdmission>,
    ) -> Self {
        Self {
            store,
            telemetry,
            admission,
        }
    }

    /// Commits an ingest, once its tenant's backlog admits it; a new event is
    /// counted.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn ingest(&self, event: NewEvent<'_>) -> Result<IngestOutcome, StoreError> {
        let tenant = event.tenant_id;
        if !event.endpoints.is_empty() {
            self.admission.admit(tenant).await;
        }
        let outcome = self.store.ingest(event).await?;
        if let IngestOutcome::Created { deliveries, .. } = &outcome {
            self.telemetry.ingested(tenant, deliveries.len());
        }
        Ok(outcome)
    }

    /// Replays one finished delivery (a succeeded one only with `force`); a dead
    /// one leaves the DLQ count, and either is pending again.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn replay_delivery(
        &self,
        tenant: &TenantId,
        id: &DeliveryId,
        force: bool,
        now_ms: u64,
    ) -> Result<ReplayOutcome, StoreError> {
        let outcome = self
            .store
            .replay_delivery(tenant, id, force, now_ms)
            .await?;
        if let ReplayOutcome::Replayed(_, left) = &outcome {
            let dead = if *left == DeliveryState::Dead { -1 } else { 0 };
            self.telemetry.counts_changed(tenant, 1, dead);
        }
        Ok(outcome)
    }

    /// Replays every delivery `filter` matches in its replayed state (dead or
    /// succeeded); their endpoints are served at once.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn replay_matching(
        &self,
        tenant: &TenantId,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<BulkReplay, StoreError> {
        let summary = self.store.replay_matching(tenant, filter, now_ms).await?;
        let n = i64::try_from(summary.replayed).unwrap_or(i64::MAX);
        let dead = if filter.replayed_state() == DeliveryState::Dead {
            -n
        } else {
            0
        };
        self.telemetry.counts_changed(tenant, n, dead);
        let open_breakers = self.open_breakers(tenant, &summary).await?;
        Ok(BulkReplay {
            summary,
            open_breakers,
        })
    }

    /// What [`CountedWrites::replay_matching`] would replay now, and which of
    /// those endpoints have a breaker that is not closed; writes nothing and wakes
    /// nothing.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn plan_replay_matching(
        &self,
        tenant: &TenantId,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<BulkReplay, StoreError> {
        let summary = self
            .store
            .plan_replay_matching(tenant, filter, now_ms)
            .await?;
        let open_breakers = self.open_breakers(tenant, &summary).await?;
        Ok(BulkReplay {
            summary,
            open_breakers,
        })
    }

    async fn open_breakers(
        &self,
        tenant: &TenantId,
        summary: &ReplaySummary,
    ) -> Result<Vec<EndpointRecord>, StoreError> {
        let mut open = Vec::new();
        for id in &summary.endpoints {
            if let Some(ep) = self.store.endpoint(tenant, id).await?
                && ep.breaker.state != crate::store::BreakerState::Closed
            {
                open.push(ep);
            }
        }
        Ok(open)
    }
}

impl crate::operator_events::OperatorIngest for CountedWrites {
    async fn ingest_operator(&self, event: NewEvent<'_>) -> Result<IngestOutcome, StoreError> {
        self.ingest(event).await
    }
}
