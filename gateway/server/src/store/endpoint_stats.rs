//! Per-endpoint delivery stats: for each endpoint and time bucket, the attempts
//! made, how many were delivered and how many failed, and a latency histogram.
//!
//! Each gateway adds what it counted since its last flush ([`StatsDelta`]) to
//! the stored bucket, so gateways sharing a store merge by addition: counts add,
//! and histograms add slot by slot (percentiles would not). The store knows
//! neither the bucket width nor the histogram's bounds: a bucket is named by its
//! start, and a histogram is a list of counts added index by index.
//!
//! A delta for an endpoint that no longer exists is dropped in the write, so a
//! flush racing an endpoint's delete leaves nothing behind; an endpoint's delete
//! and its tenant's purge remove its buckets, and [`Store::sweep_endpoint_stats`]
//! drops those older than the history kept.

use serde::{Deserialize, Serialize};

use super::{Store, StoreError};
use crate::ids::{EndpointId, TenantId};

/// One bucket's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsCounts {
    /// Attempts made (late ones, whose lease had passed on, not counted).
    pub attempts: u64,
    /// Attempts answered 2xx.
    pub delivered: u64,
    /// The other attempts: any other status, or no answer.
    pub failed: u64,
    /// Attempts per latency slot, in the order of the histogram's bounds.
    pub latency: Vec<u64>,
}

impl StatsCounts {
    /// Adds `other` into `self`: counts add, histograms add slot by slot (the
    /// shorter one read as zeros past its end).
    pub fn add(&mut self, other: &StatsCounts) {
        self.attempts += other.attempts;
        self.delivered += other.delivered;
        self.failed += other.failed;
        if self.latency.len() < other.latency.len() {
            self.latency.resize(other.latency.len(), 0);
        }
        for (mine, theirs) in self.latency.iter_mut().zip(&other.latency) {
            *mine += theirs;
        }
    }
}

/// What one gateway adds to one bucket of one endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsDelta {
    pub tenant_id: TenantId,
    pub endpoint_id: EndpointId,
    /// The bucket's start (ms since the epoch).
    pub bucket_start_ms: u64,
    pub counts: StatsCounts,
}

/// A stored bucket, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsBucket {
    pub start_ms: u64,
    pub counts: StatsCounts,
}

/// A stored bucket with the endpoint it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedStatsBucket {
    pub tenant_id: TenantId,
    pub endpoint_id: EndpointId,
    pub bucket: StatsBucket,
}

/// The buckets of many endpoints over a time range, as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatsAcross {
    /// By tenant, endpoint, then start.
    pub buckets: Vec<OwnedStatsBucket>,
    /// False when more buckets lay in the range than the read took.
    pub complete: bool,
}

impl Store {
    /// The stored buckets that start in `[from_ms, until_ms)` of every endpoint
    /// of `tenant` (of every tenant when `None`), at most `cap` of them.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn stats_across(
        &self,
        tenant: Option<&TenantId>,
        from_ms: u64,
        until_ms: u64,
        cap: usize,
    ) -> Result<StatsAcross, StoreError> {
        let tenant = tenant.map(TenantId::as_str);
        on_backend!(self, s => s.stats_across(tenant, from_ms, until_ms, cap).await)
    }

    /// Adds each delta to its stored bucket (creating it), skipping those whose
    /// endpoint no longer exists; answers how many were added.
    ///
    /// # Errors
    /// On a storage failure; then none of the deltas of the failed batch were
    /// added, and the caller may add them again.
    pub async fn add_endpoint_stats(&self, deltas: &[StatsDelta]) -> Result<usize, StoreError> {
        if deltas.is_empty() {
            return Ok(0);
        }
        on_backend!(self, s => s.add_endpoint_stats(deltas).await)
    }

    /// The stored buckets of `endpoint` that start in `[from_ms, until_ms)`,
    /// oldest first; buckets nothing happened in are not stored.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn endpoint_stats(
        &self,
        tenant: &TenantId,
        endpoint: &EndpointId,
        from_ms: u64,
        until_ms: u64,
    ) -> Result<Vec<StatsBucket>, StoreError> {
        on_backend!(self, s => s.endpoint_stats(tenant, endpoint, from_ms, until_ms).await)
    }

    /// Removes up to `limit` buckets (of any endpoint) that start before
    /// `before_ms`; answers how many.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn sweep_endpoint_stats(
        &self,
        before_ms: u64,
        limit: usize,
    ) -> Result<usize, StoreError> {
        on_backend!(self, s => s.sweep_endpoint_stats(before_ms, limit).await)
    }

    /// How many of `endpoint`'s deliveries are pending (its schedule entries),
    /// counted up to `cap`: the count reads the endpoint's own schedule range,
    /// never more than `cap` entries of it.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn count_pending(
        &self,
        endpoint: &EndpointId,
        cap: usize,
    ) -> Result<usize, StoreError> {
        on_backend!(self, s => sync s.count_pending(endpoint, cap))
    }
}

#[cfg(test)]
mod tests {
    use super::StatsCounts;

    #[test]
    fn counts_add_and_histograms_add_slot_by_slot() {
        let mut a = StatsCounts {
            attempts: 3,
            delivered: 2,
            failed: 1,
            latency: vec![1, 2],
        };
        a.add(&StatsCounts {
            attempts: 2,
            delivered: 0,
            failed: 2,
            latency: vec![0, 1, 1],
        });
        assert_eq!(
            a,
            StatsCounts {
                attempts: 5,
                delivered: 2,
                failed: 3,
                latency: vec![1, 3, 1],
            }
        );
    }
}
