//! The attempt indexes: each attempt with an id has two entries beside its log
//! entry, written in the same batch (one in the tenant's attempt order, one in
//! its endpoint's), each holding the log entry's key. Lists read an index in
//! id order and the records it leads to; removing an attempt removes both.

use super::{SledStore, StoreError, keys, records};
use crate::ids::{AttemptId, EndpointId};
use crate::store::{AttemptRecord, IdOrder, IdWindow, ListedAttempt};

/// The two index keys of `attempt` of `tenant`, if it has an id.
pub(super) fn index_keys(tenant: &str, attempt: &AttemptRecord) -> Option<[Vec<u8>; 2]> {
    let (id, of) = (attempt.id.as_ref()?, attempt.of.as_ref()?);
    Some([
        keys::tenant_attempt(tenant, id),
        keys::endpoint_attempt(tenant, &of.endpoint_id, id),
    ])
}

/// The index keys of the log entry `bytes`, for removing it with them (none
/// for an entry that does not decode: it was never indexed).
pub(super) fn index_keys_of_entry(tenant: &str, bytes: &[u8]) -> Vec<Vec<u8>> {
    records::decode::<AttemptRecord>(bytes)
        .ok()
        .and_then(|a| index_keys(tenant, &a))
        .map(Vec::from)
        .unwrap_or_default()
}

impl SledStore {
    /// Up to `max` of `tenant`'s attempts (one endpoint's, if given) with ids
    /// strictly inside `window`, in `order`.
    pub(crate) async fn attempts_between(
        &self,
        tenant: &str,
        endpoint: Option<&EndpointId>,
        window: &IdWindow,
        order: IdOrder,
        max: usize,
    ) -> Result<Vec<ListedAttempt>, StoreError> {
        let (tenant, window) = (tenant.to_owned(), window.clone());
        let endpoint = endpoint.map(|e| e.to_string());
        self.off_workers(move |store| {
            let at = |id: &str| match &endpoint {
                Some(ep) => keys::endpoint_attempt(&tenant, ep, id),
                None => keys::tenant_attempt(&tenant, id),
            };
            let prefix = at("");
            let start = window.after.as_deref().map_or_else(|| prefix.clone(), at);
            let end = window
                .before
                .as_deref()
                .map_or_else(|| keys::prefix_end(&prefix), at);
            if start >= end {
                return Ok(Vec::new());
            }
            let skip = window.after.as_deref().map(at);
            let records = store.records()?;
            let range = records.range(start..end);
            let items: Box<dyn Iterator<Item = _>> = match order {
                IdOrder::Descending => Box::new(range.rev()),
                IdOrder::Ascending => Box::new(range),
            };
            let mut out = Vec::new();
            for kv in items {
                let (k, log_key) = kv?;
                if skip.as_deref() == Some(&*k) {
                    continue;
                }
                // An index entry always has its log entry: both are written
                // and removed in one batch.
                if let Some(bytes) = records.get(&log_key)? {
                    let record: AttemptRecord = records::decode(&bytes)?;
                    out.extend(ListedAttempt::new(record));
                }
                if out.len() == max {
                    break;
                }
            }
            Ok(out)
        })
        .await
    }

    /// One of `tenant`'s attempts by id.
    pub(crate) async fn attempt_by_id(
        &self,
        tenant: &str,
        id: &AttemptId,
    ) -> Result<Option<ListedAttempt>, StoreError> {
        let Some(log_key) = self.records()?.get(keys::tenant_attempt(tenant, id))? else {
            return Ok(None);
        };
        Ok(self
            .get::<AttemptRecord>(&log_key)?
            .and_then(ListedAttempt::new))
    }
}
