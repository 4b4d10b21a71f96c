//! DLQ summary: dead deliveries counted by reason, endpoint and tenant, from a
//! bounded scan of the same newest-first delivery scan the lists read.
//!
//! There is no index by state, so counting the dead means reading every delivery
//! record: one decode per record, newest first, on the blocking pool. A summary
//! reads at most [`SUMMARY_SCAN_LIMIT`] records in all (about a tenth of a second
//! of one core at that bound); past it the counts cover the newest records read
//! and say they are incomplete.

use super::{DeadCounts, SledStore, StoreError, TenantRecord, keys};

impl DeadCounts {
    /// Counts `tenant`'s dead deliveries, newest first, until `limit` records in
    /// all have been read.
    fn scan_tenant(
        &mut self,
        store: &SledStore,
        tenant: &str,
        limit: usize,
    ) -> Result<(), StoreError> {
        for item in store.deliveries_newest_first(tenant, None) {
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
    pub async fn dead_counts(&self, tenant: &str, limit: usize) -> Result<DeadCounts, StoreError> {
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
    pub async fn dead_counts_all(&self, limit: usize) -> Result<DeadCounts, StoreError> {
        self.in_bulk(move |bulk| {
            let store = bulk.store();
            let mut counts = DeadCounts::default();
            let tenants = store.inner.records.scan_prefix(keys::tenants());
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

#[cfg(test)]
mod tests {
    use crate::policy::DeadReason;
    use crate::store::SUMMARY_SCAN_LIMIT;
    use crate::store::testing::TestStore;

    /// Two tenants, each with one endpoint deleted under a live one: its
    /// deliveries are dead `endpoint_deleted`, the live one's still pending.
    async fn two_tenants() -> TestStore {
        let t = TestStore::new();
        for (n, tenant) in (1u8..).zip(["t1", "t2"]) {
            t.sled.create_tenant(tenant, [n; 32], 0).await.unwrap();
            let live = t.endpoint(tenant, &format!("ep_{tenant}_live")).await;
            let gone = t.endpoint(tenant, &format!("ep_{tenant}_gone")).await;
            for at in 0..3 {
                t.ingest(tenant, &[&live, &gone], at).await;
            }
            t.sled.delete_endpoint(&gone, 10).await.unwrap();
        }
        t
    }

    #[tokio::test]
    async fn a_tenants_summary_counts_only_its_dead_by_reason_and_endpoint() {
        let t = two_tenants().await;
        let counts = t.sled.dead_counts("t1", SUMMARY_SCAN_LIMIT).await.unwrap();
        assert_eq!((counts.dead, counts.scanned, counts.complete), (3, 6, true));
        assert_eq!(counts.by_reason["endpoint_deleted"], 3);
        assert_eq!(
            counts.by_reason["give_up"], 0,
            "every known reason is listed"
        );
        assert_eq!(counts.by_reason.len(), DeadReason::ALL.len());
        let by_endpoint: Vec<_> = counts.by_endpoint.into_iter().collect();
        let gone = ("t1".to_owned(), "ep_t1_gone".to_owned());
        assert_eq!(by_endpoint, [(gone, 3)]);
        assert_eq!(
            counts.by_tenant.into_iter().collect::<Vec<_>>(),
            [("t1".to_owned(), 3)]
        );
    }

    #[tokio::test]
    async fn the_bound_stops_the_scan_and_says_the_counts_are_incomplete() {
        let t = two_tenants().await;
        let all = t.sled.dead_counts_all(SUMMARY_SCAN_LIMIT).await.unwrap();
        assert_eq!((all.dead, all.scanned, all.complete), (6, 12, true));
        assert_eq!(all.by_tenant.values().copied().collect::<Vec<_>>(), [3, 3]);

        let bounded = t.sled.dead_counts_all(8).await.unwrap();
        assert_eq!((bounded.scanned, bounded.complete), (8, false));
        assert!(bounded.dead < 6, "{bounded:?}");
        let one = t.sled.dead_counts("t1", 6).await.unwrap();
        assert!(one.complete, "exactly the bound read is still complete");
    }
}
