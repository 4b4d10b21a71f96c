//! Retention: pruning finished work in small batches, and ending deliveries that
//! nothing will serve.

use super::{Store, StoreError};

/// How long finished work is kept.
#[derive(Debug, Clone, Copy)]
pub struct RetentionRules {
    pub now_ms: u64,
    /// Succeeded deliveries, and events whose deliveries are all gone.
    pub retention_ms: u64,
    /// Dead deliveries, and pending ones on a disabled endpoint; 0 keeps them forever.
    pub dlq_retention_ms: u64,
}

/// What one sweep step did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SweepStats {
    pub events_removed: usize,
    pub deliveries_removed: usize,
    pub deliveries_ended: usize,
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
