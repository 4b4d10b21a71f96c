//! Delivery reads: one delivery, its attempt log, and filtered, paged lists.

use super::{
    DeliveryFilter, DeliveryPage, DeliveryRecord, DeliveryState, SledStore, StoreError, keys,
};
use crate::store::deliveries::{IdRange, PageFill};

impl SledStore {
    /// One delivery of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn delivery(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        self.get(&keys::delivery(tenant, id))
    }

    /// A tenant's deliveries newest first, within `range`: the scan behind
    /// lists and the DLQ summary.
    pub(super) fn deliveries_newest_first(
        &self,
        tenant: &str,
        range: &IdRange,
    ) -> impl Iterator<Item = Result<DeliveryRecord, StoreError>> + use<> {
        let prefix = keys::deliveries_of(tenant);
        // Bounded on both sides: a reverse scan of an open range would start at the
        // last key of the whole tree and walk every later tenant's records.
        let end = match &range.upper {
            // Start strictly below the upper bound's key.
            Some(upper) => keys::delivery(tenant, upper),
            None => keys::prefix_end(&prefix),
        };
        let start = match &range.lower {
            Some(lower) => keys::delivery(tenant, lower),
            None => prefix,
        };
        let start = start.min(end.clone());
        self.scan(|records| records.range(start..end).rev())
            .map(|item| {
                let (_, v) = item?;
                super::records::decode(&v)
            })
    }

    /// A tenant's deliveries that pass `filter` and `extra`, newest first, after
    /// `cursor`, reading at most [`LIST_SCAN_LIMIT`] records.
    ///
    /// [`LIST_SCAN_LIMIT`]: crate::store::deliveries::LIST_SCAN_LIMIT
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn list_deliveries_blocking(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        extra: impl Fn(&DeliveryRecord) -> bool,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<DeliveryPage, StoreError> {
        let mut page = PageFill::new(filter, extra, limit);
        let range = filter.id_range(cursor);
        for item in self.deliveries_newest_first(tenant, &range) {
            if let Some(full) = page.offer(item?) {
                return Ok(full);
            }
        }
        Ok(page.last())
    }

    /// [`SledStore::list_deliveries_blocking`] on the blocking pool.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn list_deliveries(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        extra: impl Fn(&DeliveryRecord) -> bool + Send + 'static,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<DeliveryPage, StoreError> {
        let (tenant, filter) = (tenant.to_owned(), filter.clone());
        let cursor = cursor.map(str::to_owned);
        self.off_workers(move |store| {
            store.list_deliveries_blocking(&tenant, &filter, extra, limit, cursor.as_deref())
        })
        .await
    }
}

impl SledStore {
    /// Pending and dead deliveries per tenant (one full scan; used once at start).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn count_deliveries(
        &self,
    ) -> Result<std::collections::HashMap<String, (i64, i64)>, StoreError> {
        self.off_workers(SledStore::count_blocking).await
    }

    fn count_blocking(&self) -> Result<std::collections::HashMap<String, (i64, i64)>, StoreError> {
        let mut out: std::collections::HashMap<String, (i64, i64)> =
            std::collections::HashMap::new();
        for item in self.records()?.scan_prefix(b"dl\0") {
            let (_, v) = item?;
            let d: DeliveryRecord = super::records::decode(&v)?;
            let e = out.entry(d.tenant_id.to_string()).or_default();
            match d.state {
                DeliveryState::Pending => e.0 += 1,
                DeliveryState::Dead => e.1 += 1,
                DeliveryState::Succeeded | DeliveryState::Skipped => {}
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::TestStore;

    /// Item 7: a tenant's first page reads only that tenant's records, however much
    /// later tenants hold.
    #[tokio::test]
    async fn the_first_page_of_deliveries_reads_only_the_tenants_records() {
        let t = TestStore::new().await;
        let zz = t.endpoint("zz", "ep_zz").await;
        for i in 0..300 {
            t.ingest("zz", &[&zz], i).await;
        }
        let all = DeliveryFilter::default();
        let empty = t
            .embedded()
            .list_deliveries_blocking("a", &all, |_| true, 1, None)
            .unwrap();
        assert_eq!((empty.data.len(), empty.scanned), (0, 0));
        let first = t
            .embedded()
            .list_deliveries_blocking("zz", &all, |_| true, 1, None)
            .unwrap();
        assert_eq!(first.data.len(), 1);
        assert_eq!(
            first.scanned, 2,
            "the page and one more to know a next exists"
        );
        let next = first.next_cursor.as_deref();
        let second = t
            .embedded()
            .list_deliveries_blocking("zz", &all, |_| true, 1, next)
            .unwrap();
        assert_eq!(second.scanned, 2);
        assert!(second.data[0].id < first.data[0].id);
    }

    /// Item 2 of tenant fairness: a list's scan runs off the runtime's workers.
    /// On a runtime with one worker, the scan's predicate waits for a task on
    /// that worker; it can run only if the scan does not hold the worker.
    #[test]
    fn a_list_leaves_the_runtime_worker_free() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let t = TestStore::new().await;
            let ep = t.endpoint("t", "ep_1").await;
            t.ingest("t", &[&ep], 1).await;
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            let rx = std::sync::Mutex::new(rx);
            let waited = move |_: &DeliveryRecord| {
                let rx = rx.lock().unwrap();
                rx.recv_timeout(std::time::Duration::from_secs(10)).is_ok()
            };
            let worker = tokio::spawn(async move { tx.send(()).unwrap() });
            let all = DeliveryFilter::default();
            let tenant = crate::ids::TenantId::from("t");
            let page = t.store.list_deliveries(&tenant, &all, waited, 10, None);
            let page = page.await.unwrap();
            assert_eq!(
                page.data.len(),
                1,
                "the worker's task never ran during the scan"
            );
            worker.await.unwrap();
        });
    }
}
