//! Retention: pruning finished work in small batches, and ending deliveries that
//! nothing will serve.

use super::{DeliveryRecord, DeliveryState, EndpointRecord, Store, StoreError};
use crate::policy::DeadReason;

/// How long finished work is kept.
#[derive(Debug, Clone, Copy)]
pub struct RetentionRules {
    pub now_ms: u64,
    /// Succeeded deliveries, and events whose deliveries are all gone.
    pub retention_ms: u64,
    /// Dead deliveries, and pending ones on a disabled endpoint; 0 keeps them forever.
    pub dlq_retention_ms: u64,
}

impl RetentionRules {
    /// Whether something at `since_ms` kept for `keep_ms` (0: forever) is due to go.
    pub(crate) fn expired(&self, since_ms: u64, keep_ms: u64) -> bool {
        keep_ms > 0 && since_ms.saturating_add(keep_ms) <= self.now_ms
    }

    /// Whether a finished delivery is past its retention (never a pending one).
    pub(crate) fn finished_expired(&self, d: &DeliveryRecord) -> bool {
        match d.state {
            DeliveryState::Succeeded | DeliveryState::Skipped => {
                self.expired(d.updated_at_ms, self.retention_ms)
            }
            DeliveryState::Dead => self.expired(d.updated_at_ms, self.dlq_retention_ms),
            DeliveryState::Pending => false,
        }
    }

    /// Why a pending delivery on `endpoint` ends now, if nothing will serve it:
    /// its endpoint is gone, or disabled for longer than the DLQ retention.
    pub(crate) fn end_pending(&self, endpoint: Option<&EndpointRecord>) -> Option<DeadReason> {
        match endpoint {
            None => Some(DeadReason::EndpointDeleted),
            Some(ep)
                if ep.disabled
                    && self.expired(
                        ep.disabled_at_ms.unwrap_or(ep.created_at_ms),
                        self.dlq_retention_ms,
                    ) =>
            {
                Some(DeadReason::EndpointDisabled)
            }
            Some(_) => None,
        }
    }
}

/// What one sweep step did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SweepStats {
    pub events_removed: usize,
    pub deliveries_removed: usize,
    pub deliveries_ended: usize,
    /// How each tenant's pending and dead counts moved: an ended delivery
    /// leaves pending for the DLQ, a removed dead one leaves the DLQ.
    pub moved: std::collections::BTreeMap<String, (i64, i64)>,
}

impl SweepStats {
    /// `d` ended dead (it was pending).
    pub(crate) fn ended(&mut self, d: &DeliveryRecord) {
        self.deliveries_ended += 1;
        self.move_counts(&d.tenant_id, -1, 1);
    }

    /// `d` was removed (it was finished).
    pub(crate) fn removed(&mut self, d: &DeliveryRecord) {
        self.deliveries_removed += 1;
        if d.state == DeliveryState::Dead {
            self.move_counts(&d.tenant_id, 0, -1);
        }
    }

    fn move_counts(&mut self, tenant: &str, pending: i64, dead: i64) {
        let entry = self.moved.entry(tenant.to_owned()).or_default();
        entry.0 += pending;
        entry.1 += dead;
    }

    /// Adds `other` into `self`.
    pub fn add(&mut self, other: SweepStats) {
        self.events_removed += other.events_removed;
        self.deliveries_removed += other.deliveries_removed;
        self.deliveries_ended += other.deliveries_ended;
        for (tenant, (pending, dead)) in other.moved {
            self.move_counts(&tenant, pending, dead);
        }
    }
}

/// Where a retention sweep goes on from: an opaque string, made by the store
/// and given back to it unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepCursor(pub(crate) String);

impl Store {
    /// Examines up to `limit` events after `cursor`; returns what it did and the
    /// cursor to continue from, `None` once the sweep has wrapped around.
    ///
    /// Each event's changes are planned from what was read, then applied in one
    /// transaction only where every record they touch is unchanged: an outcome or a
    /// replay that lands in between keeps its record, which waits for the next sweep.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn sweep_retention(
        &self,
        cursor: Option<SweepCursor>,
        limit: usize,
        rules: RetentionRules,
    ) -> Result<(SweepStats, Option<SweepCursor>), StoreError> {
        on_backend!(self, s => s.sweep_retention(cursor, limit, rules).await)
    }
}
