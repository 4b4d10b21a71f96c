//! DLQ summary: dead deliveries counted by reason, endpoint and tenant, from a
//! bounded scan of the same newest-first delivery scan the lists read.
//!
//! There is no index by state, so counting the dead means reading every delivery
//! record: one decode per record, newest first, on the blocking pool. A summary
//! reads at most [`SUMMARY_SCAN_LIMIT`] records in all (about a tenth of a second
//! of one core at that bound); past it the counts cover the newest records read
//! and say they are incomplete.

use super::{DeadCounts, SledStore, StoreError, TenantRecord, keys};
use crate::store::deliveries::IdRange;

impl DeadCounts {
    /// Counts `tenant`'s dead deliveries, newest first, until `limit` records in
    /// all have been read.
    fn scan_tenant(
        &mut self,
        store: &SledStore,
        tenant: &str,
        limit: usize,
    ) -> Result<(), StoreError> {
        for item in store.deliveries_newest_first(tenant, &IdRange::default()) {
            if self.scanned == limit {
                self.complete = false;
                return Ok(());
            }
            self.scanned += 1;
            self.count(&item?);
        }
        Ok(())
    }
}

impl SledStore {
    /// `tenant`'s dead deliveries counted by reason and endpoint (module docs: the cost).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn dead_counts(
        &self,
        tenant: &str,
        limit: usize,
    ) -> Result<DeadCounts, StoreError> {
        let tenant = tenant.to_owned();
        self.in_bulk(move |bulk| {
            let mut counts = DeadCounts::default();
            counts.scan_tenant(bulk.store(), &tenant, limit)?;
            Ok(counts)
        })
        .await
    }

    /// Every tenant's dead deliveries, counted as [`SledStore::dead_counts`] does, with
    /// one bound across them all (tenants in id order).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn dead_counts_all(&self, limit: usize) -> Result<DeadCounts, StoreError> {
        self.in_bulk(move |bulk| {
            let store = bulk.store();
            let mut counts = DeadCounts::default();
            let tenants = store.records()?.scan_prefix(keys::tenants());
            for item in tenants {
                let (_, v) = item?;
                let tenant: TenantRecord = super::records::decode(&v)?;
                counts.scan_tenant(store, &tenant.id, limit)?;
                if !counts.complete {
                    break;
                }
            }
            Ok(counts)
        })
        .await
    }
}
