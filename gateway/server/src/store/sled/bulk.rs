//! Bulk work (deleting an endpoint's schedule, replaying a DLQ, sweeps) run off
//! the runtime's workers.
//!
//! A bulk operation reads, decodes and plans thousands of records. Done on a
//! runtime worker, one tenant's large replay would hold a thread that every
//! tenant's requests and deliveries share. So the whole operation runs on the
//! blocking pool, as bounded batches that are each one transaction, and the
//! caller then waits once until everything it wrote is durable.

use super::writes::Writes;
use super::{SledStore, StoreError, WriteResult};

/// What a bulk operation may do from the blocking pool: read the store, and apply
/// batches of conditional writes (each batch one transaction).
pub(super) struct BulkWrites<'a> {
    store: &'a SledStore,
    /// The write sequence of the last batch that wrote something.
    last_write: Option<u64>,
}

impl BulkWrites<'_> {
    /// The store, for the reads a plan is made from.
    pub(super) fn store(&self) -> &SledStore {
        self.store
    }

    /// Applies each of `groups` that is still current, in one transaction, without
    /// waiting for durability: the caller of [`SledStore::in_bulk`] waits once at the end.
    ///
    /// # Errors
    /// On a storage failure; earlier batches stay applied.
    pub(super) fn apply_each(&mut self, groups: &[Writes]) -> Result<Vec<WriteResult>, StoreError> {
        let (results, seq) = self.store.transact_each(groups)?;
        if seq.is_some() {
            self.last_write = seq;
        }
        Ok(results)
    }

    /// What [`BulkWrites::apply_each`] would answer for each of `groups` now,
    /// with nothing written (a dry run).
    ///
    /// # Errors
    /// On a storage failure.
    pub(super) fn check_each(&self, groups: &[Writes]) -> Result<Vec<WriteResult>, StoreError> {
        let records = self.store.records()?;
        groups.iter().map(|g| g.would_apply(&records)).collect()
    }
}

impl SledStore {
    /// Runs a read of many records on the blocking pool, so the runtime's
    /// workers stay free to answer meanwhile.
    ///
    /// # Errors
    /// `read`'s error; `Unavailable` if it panicked.
    pub(super) async fn off_workers<T, F>(&self, read: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&SledStore) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || read(&store))
            .await
            .map_err(|e| StoreError::unavailable(format!("read stopped: {e}")))?
    }

    /// Runs `work` on the blocking pool, then waits until what it wrote is durable.
    ///
    /// # Errors
    /// `work`'s error; `Unavailable` if it panicked or its writes could not be
    /// made durable.
    pub(super) async fn in_bulk<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut BulkWrites<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.clone();
        let ran = tokio::task::spawn_blocking(move || {
            let mut bulk = BulkWrites {
                store: &store,
                last_write: None,
            };
            let out = work(&mut bulk);
            (out, bulk.last_write)
        })
        .await;
        let (out, last_write) =
            ran.map_err(|e| StoreError::unavailable(format!("bulk write stopped: {e}")))?;
        // Batches applied before an error are waited for too: they are visible now.
        if let Some(seq) = last_write {
            self.inner.commit.wait_durable(seq).await?;
        }
        out
    }
}

#[cfg(test)]
mod tests;
