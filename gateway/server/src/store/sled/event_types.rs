//! The event-type catalog: one record per name under `ety`, written only
//! where the key still holds what the caller read.

use super::{SledStore, StoreError, WriteResult, Writes, keys, records};
use crate::store::{CatalogWrite, EventTypeRecord};

impl SledStore {
    pub(crate) async fn save_event_type(
        &self,
        rec: &EventTypeRecord,
        expected: Option<&EventTypeRecord>,
    ) -> Result<CatalogWrite, StoreError> {
        let key = keys::event_type(&rec.name);
        let mut writes = Writes::default();
        match expected {
            None => writes.require_absent(&key),
            Some(old) => writes.require_unchanged(&key, records::encode(old)),
        }
        writes.insert(&key, records::encode(rec));
        Ok(match self.commit(writes).await? {
            WriteResult::Written => CatalogWrite::Written,
            WriteResult::Stale => CatalogWrite::Conflict,
        })
    }

    pub(crate) fn event_type(&self, name: &str) -> Result<Option<EventTypeRecord>, StoreError> {
        self.get(&keys::event_type(name))
    }

    pub(crate) fn event_types(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EventTypeRecord>, StoreError> {
        let prefix = keys::event_types();
        let end = keys::prefix_end(&prefix);
        // Just past `after`: its key with one more byte.
        let start = after.map_or_else(
            || prefix.clone(),
            |a| {
                let mut k = keys::event_type(a);
                k.push(0);
                k
            },
        );
        self.scan(move |r| r.range(start..end))
            .take(limit)
            .map(|kv| records::decode(&kv?.1))
            .collect()
    }

    pub(crate) fn count_event_types(&self) -> Result<usize, StoreError> {
        let prefix = keys::event_types();
        let mut n = 0;
        for kv in self.scan(move |r| r.scan_prefix(prefix)) {
            kv?;
            n += 1;
        }
        Ok(n)
    }

    pub(crate) async fn delete_event_type(&self, name: &str) -> Result<bool, StoreError> {
        let key = keys::event_type(name);
        let mut writes = Writes::default();
        writes.require(&key);
        writes.remove(&key);
        Ok(self.commit(writes).await? == WriteResult::Written)
    }
}
