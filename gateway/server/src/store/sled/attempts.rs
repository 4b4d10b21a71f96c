//! Attempts with ids on the embedded store. Each is kept once, under its
//! endpoint's attempt order (`axe␀{tenant}␀{endpoint}␀{attempt}`), and its
//! delivery's record holds its id, so its delivery's log finds it: one key
//! per attempt, as when attempts were kept under their delivery. An index
//! beside the log (a key more per attempt in each outcome's transaction) cost
//! a third of delivery throughput. One endpoint's list reads its range; the
//! tenant's merges its endpoints' ranges in id order; an attempt by id alone
//! is looked for under each of the tenant's endpoints.
//!
//! A late attempt (its outcome fenced off) is kept under its delivery's log,
//! as before, and its copy under its endpoint for the lists: it changes no
//! delivery record, and it is rare.

use super::{SledStore, StoreError, keys, records};
use crate::ids::{AttemptId, EndpointId};
use crate::store::{AttemptRecord, DeliveryRecord, IdOrder, IdWindow, ListedAttempt};

/// Where `attempt` of `tenant` is kept under its endpoint, if it has an id.
pub(super) fn record_key(tenant: &str, attempt: &AttemptRecord) -> Option<Vec<u8>> {
    let (id, of) = (attempt.id.as_ref()?, attempt.of.as_ref()?);
    Some(keys::endpoint_attempt(tenant, &of.endpoint_id, id))
}

/// The keys of `d`'s attempts kept under its endpoint.
pub(super) fn keys_of_delivery(d: &DeliveryRecord) -> impl Iterator<Item = Vec<u8>> + '_ {
    d.attempt_ids
        .iter()
        .map(|id| keys::endpoint_attempt(&d.tenant_id, &d.endpoint_id, id))
}

/// The copy under its endpoint of the log entry `bytes` (a late attempt's),
/// for removing it with the entry; none for an entry without an id.
pub(super) fn copy_of_entry(tenant: &str, bytes: &[u8]) -> Option<Vec<u8>> {
    records::decode::<AttemptRecord>(bytes)
        .ok()
        .and_then(|a| record_key(tenant, &a))
}

/// One endpoint's attempts in `window`, read lazily in `order`.
fn endpoint_range(
    records: &sled::Tree,
    tenant: &str,
    endpoint: &str,
    window: &IdWindow,
    order: IdOrder,
) -> Box<dyn Iterator<Item = sled::Result<(sled::IVec, sled::IVec)>>> {
    let at = |id: &str| keys::endpoint_attempt(tenant, endpoint, id);
    let prefix = keys::endpoint_attempts_of(tenant, endpoint);
    let start = window.after.as_deref().map_or_else(|| prefix.clone(), at);
    let end = window
        .before
        .as_deref()
        .map_or_else(|| keys::prefix_end(&prefix), at);
    if start >= end {
        return Box::new(std::iter::empty());
    }
    // `after` is exclusive: its own key is skipped.
    let skip = window.after.as_deref().map(at);
    let range = records
        .range(start..end)
        .filter(move |kv| !matches!((kv, &skip), (Ok((k, _)), Some(s)) if **k == **s));
    match order {
        IdOrder::Descending => Box::new(range.rev()),
        IdOrder::Ascending => Box::new(range),
    }
}

/// The endpoints `tenant` has attempts kept under (deleted ones too, until
/// their attempts go), one seek each.
fn endpoints_with_attempts(records: &sled::Tree, tenant: &str) -> Result<Vec<String>, StoreError> {
    let prefix = keys::endpoint_attempts_of_tenant(tenant);
    let end = keys::prefix_end(&prefix);
    let mut from = prefix.clone();
    let mut out = Vec::new();
    while let Some((k, _)) = records
        .range(from.clone()..end.clone())
        .next()
        .transpose()?
    {
        let rest = &k[prefix.len()..];
        let Some(len) = rest.iter().position(|b| *b == 0) else {
            break;
        };
        let endpoint = String::from_utf8_lossy(&rest[..len]).into_owned();
        from = keys::prefix_end(&keys::endpoint_attempts_of(tenant, &endpoint));
        out.push(endpoint);
    }
    Ok(out)
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
            let records = store.records()?;
            let endpoints = match endpoint {
                Some(ep) => vec![ep],
                None => endpoints_with_attempts(&records, &tenant)?,
            };
            let mut ranges: Vec<_> = endpoints
                .iter()
                .map(|ep| endpoint_range(&records, &tenant, ep, &window, order))
                .collect();
            // Merged in id order: each range's next entry waits in `heads`,
            // and the least (or the greatest) goes first.
            let mut heads = Vec::with_capacity(ranges.len());
            for range in &mut ranges {
                heads.push(range.next().transpose()?.map(head));
            }
            let mut out = Vec::new();
            while out.len() < max {
                let Some(i) = next_head(&heads, order) else {
                    break;
                };
                let Some((_, value)) = heads[i].take() else {
                    break;
                };
                let record: AttemptRecord = records::decode(&value)?;
                out.extend(ListedAttempt::new(record));
                heads[i] = ranges[i].next().transpose()?.map(head);
            }
            Ok(out)
        })
        .await
    }

    /// One of `tenant`'s attempts by id: looked for under each endpoint the
    /// tenant has attempts under.
    pub(crate) async fn attempt_by_id(
        &self,
        tenant: &str,
        id: &AttemptId,
    ) -> Result<Option<ListedAttempt>, StoreError> {
        let (tenant, id) = (tenant.to_owned(), id.clone());
        self.off_workers(move |store| {
            let records = store.records()?;
            for ep in endpoints_with_attempts(&records, &tenant)? {
                if let Some(bytes) = records.get(keys::endpoint_attempt(&tenant, &ep, &id))? {
                    let record: AttemptRecord = records::decode(&bytes)?;
                    return Ok(ListedAttempt::new(record));
                }
            }
            Ok(None)
        })
        .await
    }

    /// A delivery's attempts across every series, oldest first: those kept
    /// under its endpoint (by the ids its record holds) and those under its
    /// own log (made before attempts had ids, and late ones).
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn attempt_log(
        &self,
        tenant: &str,
        delivery_id: &str,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        let mut out: Vec<AttemptRecord> = self
            .scan_rev(&keys::attempts_of(delivery_id))
            .map(|r| r.map(|(_, a)| a))
            .collect::<Result<_, _>>()?;
        if let Some(d) = self.get::<DeliveryRecord>(&keys::delivery(tenant, delivery_id))? {
            for key in keys_of_delivery(&d) {
                out.extend(self.get::<AttemptRecord>(&key)?);
            }
        }
        // A late attempt follows the one with its number.
        out.sort_by_key(|a| (a.series, a.attempt, a.late));
        Ok(out)
    }
}

/// A range's next entry: the attempt id that ends its key, and its value.
fn head((key, value): (sled::IVec, sled::IVec)) -> (Vec<u8>, sled::IVec) {
    let id = key
        .iter()
        .rposition(|b| *b == 0)
        .map_or_else(|| key.to_vec(), |at| key[at + 1..].to_vec());
    (id, value)
}

/// Which range's entry goes next: the least id ascending, the greatest
/// descending (a tenant has few endpoints; a linear pick is enough).
fn next_head(heads: &[Option<(Vec<u8>, sled::IVec)>], order: IdOrder) -> Option<usize> {
    let live = heads
        .iter()
        .enumerate()
        .filter_map(|(i, h)| h.as_ref().map(|(id, _)| (i, id)));
    match order {
        IdOrder::Ascending => live.min_by(|a, b| a.1.cmp(b.1)).map(|(i, _)| i),
        IdOrder::Descending => live.max_by(|a, b| a.1.cmp(b.1)).map(|(i, _)| i),
    }
}
