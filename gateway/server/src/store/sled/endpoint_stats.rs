//! Per-endpoint stats buckets (see `store/endpoint_stats.rs`): one record per
//! endpoint and bucket, under `st␀{tenant}␀{endpoint}␀{start}`.
//!
//! An addition reads each bucket, adds its delta and writes it back, one
//! addition at a time (under the store's stats lock). Each endpoint's buckets
//! are one group of a transaction that applies only while the endpoint exists
//! and its buckets are still as read, so a delta that races the endpoint's
//! delete (or a sweep) is dropped rather than written over it.

use std::collections::BTreeMap;

use super::bulk::BulkWrites;
use super::{Lane, SledStore, StoreError, WriteResult, Writes, keys, records};
use crate::store::{OwnedStatsBucket, StatsAcross, StatsBucket, StatsCounts, StatsDelta};

/// Endpoints whose deltas one transaction adds.
const FLUSH_BATCH: usize = 128;

/// Buckets one batch of an endpoint's delete removes.
const REMOVE_BATCH: usize = 512;

/// The start of a stats bucket, the last eight bytes of its key.
fn bucket_start(k: &[u8]) -> Result<u64, StoreError> {
    k.len()
        .checked_sub(8)
        .and_then(|at| k[at..].try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| StoreError::corrupt("stats bucket key"))
}

impl SledStore {
    pub(crate) async fn add_endpoint_stats(
        &self,
        deltas: &[StatsDelta],
    ) -> Result<usize, StoreError> {
        let mut by_endpoint: BTreeMap<(&str, &str), Vec<&StatsDelta>> = BTreeMap::new();
        for d in deltas {
            let owner = (d.tenant_id.as_str(), d.endpoint_id.as_str());
            by_endpoint.entry(owner).or_default().push(d);
        }
        let owners: Vec<_> = by_endpoint.into_iter().collect();
        let _one_at_a_time = self.inner.stats_lock.lock().await;
        let mut added = 0;
        for batch in owners.chunks(FLUSH_BATCH) {
            let mut groups = Vec::with_capacity(batch.len());
            for ((tenant, endpoint), deltas) in batch {
                groups.push(self.plan_addition(tenant, endpoint, deltas)?);
            }
            let results = self.commit_each(groups).await?;
            for (result, (_, deltas)) in results.iter().zip(batch) {
                if *result == WriteResult::Written {
                    added += deltas.len();
                }
            }
        }
        Ok(added)
    }

    /// The write that adds `deltas` to `endpoint`'s stored buckets, conditional
    /// on the endpoint existing and each bucket being as read now.
    fn plan_addition(
        &self,
        tenant: &str,
        endpoint: &str,
        deltas: &[&StatsDelta],
    ) -> Result<Writes, StoreError> {
        let records = self.records()?;
        let mut w = Writes::default();
        w.require(keys::endpoint(tenant, endpoint));
        for d in deltas {
            let key = keys::endpoint_stats(tenant, endpoint, d.bucket_start_ms);
            let mut counts = d.counts.clone();
            match records.get(&key)? {
                Some(stored) => {
                    counts.add(&records::decode::<StatsCounts>(&stored)?);
                    w.require_unchanged(&key, stored.to_vec());
                }
                None => w.require_absent(&key),
            }
            w.insert(key, records::encode(&counts));
        }
        Ok(w)
    }

    pub(crate) async fn endpoint_stats(
        &self,
        tenant: &str,
        endpoint: &str,
        from_ms: u64,
        until_ms: u64,
    ) -> Result<Vec<StatsBucket>, StoreError> {
        let range = keys::endpoint_stats(tenant, endpoint, from_ms)
            ..keys::endpoint_stats(tenant, endpoint, until_ms);
        let mut out = Vec::new();
        for kv in self.records()?.range(range) {
            let (k, v) = kv?;
            out.push(StatsBucket {
                start_ms: bucket_start(&k)?,
                counts: records::decode(&v)?,
            });
        }
        Ok(out)
    }

    /// One range read per endpoint (jumping from each to the next), the
    /// buckets in `[from_ms, until_ms)` of each, until `cap` are taken.
    pub(crate) async fn stats_across(
        &self,
        tenant: Option<&str>,
        from_ms: u64,
        until_ms: u64,
        cap: usize,
    ) -> Result<StatsAcross, StoreError> {
        let records = self.records()?;
        let scope = match tenant {
            Some(t) => keys::endpoint_stats_of_tenant(t),
            None => keys::all_endpoint_stats(),
        };
        let end = keys::prefix_end(&scope);
        let mut from = scope;
        let mut read = StatsAcross {
            buckets: Vec::new(),
            complete: true,
        };
        while let Some(first) = records.range(from.clone()..end.clone()).keys().next() {
            let first = first?;
            let Some(owner) = keys::endpoint_stats_owner(&first) else {
                from = [first.as_ref(), &[0]].concat();
                continue;
            };
            let (tenant_id, endpoint_id) = keys::stats_owner_ids(&owner)
                .ok_or_else(|| StoreError::corrupt("stats bucket key"))?;
            let at = |ms: u64| [owner.as_slice(), &ms.to_be_bytes()].concat();
            for kv in records.range(at(from_ms)..at(until_ms)) {
                if read.buckets.len() == cap {
                    read.complete = false;
                    return Ok(read);
                }
                let (k, v) = kv?;
                read.buckets.push(OwnedStatsBucket {
                    tenant_id: tenant_id.clone(),
                    endpoint_id: endpoint_id.clone(),
                    bucket: StatsBucket {
                        start_ms: bucket_start(&k)?,
                        counts: records::decode(&v)?,
                    },
                });
            }
            from = keys::prefix_end(&owner);
        }
        Ok(read)
    }

    /// Goes through the endpoints' bucket ranges in key order, removing from the
    /// start of each (its oldest buckets) those that start before `before_ms`.
    /// One range read per endpoint, plus the buckets removed.
    pub(crate) async fn sweep_endpoint_stats(
        &self,
        before_ms: u64,
        limit: usize,
    ) -> Result<usize, StoreError> {
        self.in_bulk(move |bulk| {
            let records = bulk.store().records()?;
            let all = keys::all_endpoint_stats();
            let end = keys::prefix_end(&all);
            let mut from = all;
            let mut gone = Writes::default();
            let mut n = 0;
            while n < limit {
                let Some(first) = records.range(from.clone()..end.clone()).keys().next() else {
                    break;
                };
                let first = first?;
                let Some(owner) = keys::endpoint_stats_owner(&first) else {
                    // Not a bucket's key: step past it.
                    from = [first.as_ref(), &[0]].concat();
                    continue;
                };
                let mut old_end = owner.clone();
                old_end.extend_from_slice(&before_ms.to_be_bytes());
                for k in records.range(owner.clone()..old_end).keys().take(limit - n) {
                    gone.remove(k?);
                    n += 1;
                }
                from = keys::prefix_end(&owner);
            }
            if n > 0 {
                bulk.apply_each(&[gone])?;
            }
            Ok(n)
        })
        .await
    }

    /// See [`crate::store::Store::count_pending`]: every pending delivery has one
    /// schedule entry, in one lane or the other.
    pub(crate) fn count_pending(&self, endpoint: &str, cap: usize) -> Result<usize, StoreError> {
        let records = self.records()?;
        let mut counted = 0;
        for lane in Lane::ALL {
            let entries = records.scan_prefix(keys::schedule_of(lane, endpoint));
            counted += entries.keys().take(cap - counted).count();
        }
        Ok(counted)
    }
}

/// Removes every stats bucket of `endpoint`, in batches; for its delete, after
/// the endpoint's own record is gone (so no flush adds to them again).
pub(super) fn remove_endpoint_stats(
    bulk: &mut BulkWrites<'_>,
    tenant: &str,
    endpoint: &str,
) -> Result<usize, StoreError> {
    let prefix = keys::endpoint_stats_of(tenant, endpoint);
    let mut removed = 0;
    loop {
        let records = bulk.store().records()?;
        let batch: Vec<_> = records
            .scan_prefix(&prefix)
            .keys()
            .take(REMOVE_BATCH)
            .collect::<Result<_, _>>()?;
        if batch.is_empty() {
            return Ok(removed);
        }
        let mut gone = Writes::default();
        removed += batch.len();
        for k in batch {
            gone.remove(k);
        }
        bulk.apply_each(&[gone])?;
    }
}
