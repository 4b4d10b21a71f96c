//! The DLQ: dead deliveries counted by reason, endpoint and tenant, and replays
//! of one delivery or of every delivery a filter matches, as a new series with
//! the same `webhook-id`.

use crate::ids::{DeliveryId, EndpointId, TenantId};
use std::collections::BTreeMap;

use super::{Change, DeliveryFilter, DeliveryRecord, DeliveryState, Recorded, Store, StoreError};
use crate::policy::DeadReason;

/// The most delivery records one summary reads, across every tenant it covers.
pub(crate) const SUMMARY_SCAN_LIMIT: usize = 50_000;

/// What a reason-less dead delivery (written by an older build) counts under.
const NO_REASON: &str = "unknown";

/// Dead deliveries counted from a bounded scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadCounts {
    pub dead: u64,
    /// Every known reason (zero or more), and any other name a record holds.
    pub by_reason: BTreeMap<String, u64>,
    /// Dead per (tenant, endpoint): endpoint ids are only unique per tenant.
    pub by_endpoint: BTreeMap<(TenantId, EndpointId), u64>,
    /// Dead per tenant (one entry for a tenant's own summary).
    pub by_tenant: BTreeMap<TenantId, u64>,
    /// Delivery records read.
    pub scanned: usize,
    /// Whether every record was read; `false` if the bound stopped the scan.
    pub complete: bool,
}

impl Default for DeadCounts {
    fn default() -> Self {
        Self {
            dead: 0,
            by_reason: DeadReason::ALL
                .iter()
                .map(|r| (r.as_str().to_owned(), 0))
                .collect(),
            by_endpoint: BTreeMap::new(),
            by_tenant: BTreeMap::new(),
            scanned: 0,
            complete: true,
        }
    }
}

/// What a replay request found.
#[derive(Debug)]
pub enum ReplayOutcome {
    /// A new series was scheduled: the delivery now, and the state it left
    /// (dead, or succeeded for a forced replay), which the counts follow.
    Replayed(Box<DeliveryRecord>, DeliveryState),
    NotFound,
    /// Still pending: nothing to replay.
    Pending,
    /// Succeeded; replaying it needs `force`.
    NeedsForce,
    /// Its endpoint was deleted.
    EndpointGone,
}

/// What a bulk replay did: how many deliveries it replayed, and to which
/// endpoints (kept instead of the records, so memory stays bounded by endpoints).
#[derive(Debug, Default)]
pub struct ReplaySummary {
    pub replayed: usize,
    pub endpoints: std::collections::BTreeSet<EndpointId>,
}

impl DeadCounts {
    /// Counts `d` if it is dead.
    pub(crate) fn count(&mut self, d: &DeliveryRecord) {
        if d.state != DeliveryState::Dead {
            return;
        }
        self.dead += 1;
        let reason = match &d.dead_reason {
            Some(Recorded::Known(r)) => r.as_str().to_owned(),
            Some(Recorded::Unknown(name)) => name.clone(),
            None => NO_REASON.to_owned(),
        };
        *self.by_reason.entry(reason).or_default() += 1;
        let endpoint = (d.tenant_id.clone(), d.endpoint_id.clone());
        *self.by_endpoint.entry(endpoint).or_default() += 1;
        *self.by_tenant.entry(d.tenant_id.clone()).or_default() += 1;
    }
}

impl Store {
    /// `tenant`'s dead deliveries counted by reason and endpoint (module docs: the cost).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn dead_counts(
        &self,
        tenant: &TenantId,
        limit: usize,
    ) -> Result<DeadCounts, StoreError> {
        on_backend!(self, s => s.dead_counts(tenant, limit).await)
    }

    /// Every tenant's dead deliveries, counted as [`Store::dead_counts`] does, with
    /// one bound across them all (tenants in id order).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn dead_counts_all(&self, limit: usize) -> Result<DeadCounts, StoreError> {
        on_backend!(self, s => s.dead_counts_all(limit).await)
    }

    /// Replays one delivery of `tenant`.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn replay_delivery(
        &self,
        tenant: &TenantId,
        id: &DeliveryId,
        force: bool,
        now_ms: u64,
    ) -> Result<ReplayOutcome, StoreError> {
        let outcome = on_backend!(self, s => s.replay_delivery(tenant, id, force, now_ms).await)?;
        if let ReplayOutcome::Replayed(d, _) = &outcome {
            self.probe_now(&d.endpoint_id).await?;
            self.feed.publish(Change::Replayed {
                endpoint_id: d.endpoint_id.clone(),
            });
        }
        Ok(outcome)
    }

    /// Replays every dead delivery of `tenant` that `filter` matches, in batches,
    /// each a transaction that replays a delivery only if it is still as it was read
    /// and its endpoint still exists.
    ///
    /// # Errors
    /// On a storage failure; batches already written stay replayed.
    pub async fn replay_matching(
        &self,
        tenant: &TenantId,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<ReplaySummary, StoreError> {
        let summary = on_backend!(self, s => s.replay_matching(tenant, filter, now_ms).await)?;
        for id in &summary.endpoints {
            self.probe_now(id).await?;
        }
        let endpoints = summary.endpoints.iter();
        self.feed.publish_all(endpoints.map(|id| Change::Replayed {
            endpoint_id: id.clone(),
        }));
        Ok(summary)
    }

    /// What [`Store::replay_matching`] would replay now, planned the same way and
    /// checked against the same conditions, with nothing written.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn plan_replay_matching(
        &self,
        tenant: &TenantId,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<ReplaySummary, StoreError> {
        on_backend!(self, s => s.plan_replay_matching(tenant, filter, now_ms).await)
    }
}
