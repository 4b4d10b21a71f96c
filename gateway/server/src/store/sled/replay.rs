//! DLQ operations: replaying one delivery, or every delivery a filter matches,
//! as a new series with the same `webhook-id`.

use crate::ids::EndpointId;
use crate::store::DueEntry;
use crate::store::sled::keys::ScheduleKey as _;
use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::bulk::BulkWrites;
use super::{
    DeliveryFilter, DeliveryRecord, DeliveryState, Lane, ReplayOutcome, ReplaySummary, SledStore,
    StoreError, WriteResult, keys, records,
};

/// Starts series `n+1` of `d`: no attempts yet, due now, in the first-attempt lane.
fn new_series(d: &mut DeliveryRecord, now_ms: u64) -> DueEntry {
    d.begin_series(now_ms);
    DueEntry {
        lane: Lane::First,
        endpoint_id: d.endpoint_id.clone(),
        due_ms: now_ms,
        delivery_id: d.id.clone(),
    }
}

impl SledStore {
    /// Replays one delivery of `tenant`.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn replay_delivery(
        &self,
        tenant: &str,
        id: &str,
        force: bool,
        now_ms: u64,
    ) -> Result<ReplayOutcome, StoreError> {
        let dkey = keys::delivery(tenant, id);
        let (result, seq) = {
            let db = self.held()?;
            let result = db.records.transaction(|tx| {
                // Refusals carry no record, so the error type stays small.
                let abort = ConflictableTransactionError::Abort;
                let Some(bytes) = tx.get(&dkey)? else {
                    return Err(abort(ReplayOutcome::NotFound));
                };
                let mut d: DeliveryRecord =
                    records::decode(&bytes).map_err(|_| abort(ReplayOutcome::NotFound))?;
                match d.state {
                    DeliveryState::Pending => return Err(abort(ReplayOutcome::Pending)),
                    DeliveryState::Succeeded if !force => {
                        return Err(abort(ReplayOutcome::NeedsForce));
                    }
                    _ => {}
                }
                if tx.get(keys::endpoint(tenant, &d.endpoint_id))?.is_none() {
                    return Err(abort(ReplayOutcome::EndpointGone));
                }
                let left = d.state;
                let entry = new_series(&mut d, now_ms);
                tx.insert(dkey.as_slice(), records::encode(&d))?;
                tx.insert(entry.encode(), tenant.as_bytes())?;
                Ok((Box::new(d), left))
            });
            let seq = result.is_ok().then(|| self.sequence(&db));
            (result, seq)
        };
        match result {
            Ok((d, left)) => {
                if let Some(seq) = seq {
                    self.wait_written(seq).await?;
                }
                Ok(ReplayOutcome::Replayed(d, left))
            }
            Err(TransactionError::Abort(o)) => Ok(o),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }

    /// Replays every delivery of `tenant` in the filter's replayed state
    /// (dead, or succeeded) that `filter` matches, in batches,
    /// each a transaction that replays a delivery only if it is still as it was read
    /// and its endpoint still exists.
    ///
    /// # Errors
    /// On a storage failure; batches already written stay replayed.
    pub(crate) async fn replay_matching(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<ReplaySummary, StoreError> {
        self.bulk_replay(tenant, filter, now_ms, ReplayMode::Apply)
            .await
    }

    /// What [`SledStore::replay_matching`] would replay now, planned the same way and
    /// checked against the same conditions, with nothing written.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn plan_replay_matching(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<ReplaySummary, StoreError> {
        self.bulk_replay(tenant, filter, now_ms, ReplayMode::DryRun)
            .await
    }

    /// The one plan of a bulk replay; `mode` decides whether its batches are
    /// applied or only checked.
    async fn bulk_replay(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        now_ms: u64,
        mode: ReplayMode,
    ) -> Result<ReplaySummary, StoreError> {
        let (tenant, filter) = (tenant.to_owned(), filter.clone());
        self.in_bulk(move |bulk| {
            let mut replayed = ReplaySummary::default();
            let mut planned = Vec::new();
            let scan = bulk
                .store()
                .records()?
                .scan_prefix(keys::deliveries_of(&tenant));
            for item in scan {
                let (k, v) = item?;
                let mut d: DeliveryRecord = records::decode(&v)?;
                if d.state != filter.replayed_state() || !filter.matches(&d) {
                    continue;
                }
                let mut w = super::Writes::default();
                w.require_unchanged(&k, v.to_vec());
                w.require(keys::endpoint(&tenant, &d.endpoint_id));
                let entry = new_series(&mut d, now_ms);
                w.insert(&k, records::encode(&d));
                w.insert(entry.encode(), tenant.as_bytes());
                planned.push((w, d.endpoint_id));
                if planned.len() == REPLAY_BATCH {
                    replay_batch(bulk, mode, std::mem::take(&mut planned), &mut replayed)?;
                }
            }
            replay_batch(bulk, mode, planned, &mut replayed)?;
            Ok(replayed)
        })
        .await
    }
}

/// Whether a bulk replay writes its plan or only counts what it would write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReplayMode {
    Apply,
    DryRun,
}

/// Deliveries replayed per transaction.
const REPLAY_BATCH: usize = 500;

/// Applies one batch of planned replays (each with its endpoint), or in a dry run
/// only checks their conditions; the ones still current count.
fn replay_batch(
    bulk: &mut BulkWrites<'_>,
    mode: ReplayMode,
    planned: Vec<(super::Writes, EndpointId)>,
    replayed: &mut ReplaySummary,
) -> Result<(), StoreError> {
    let (groups, endpoints): (Vec<_>, Vec<_>) = planned.into_iter().unzip();
    let results = match mode {
        ReplayMode::Apply => bulk.apply_each(&groups)?,
        ReplayMode::DryRun => bulk.check_each(&groups)?,
    };
    for (r, endpoint) in results.into_iter().zip(endpoints) {
        if r == WriteResult::Written {
            replayed.replayed += 1;
            replayed.endpoints.insert(endpoint);
        }
    }
    Ok(())
}
