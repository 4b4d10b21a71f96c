//! Retention: pruning finished work in small batches, and ending deliveries that
//! nothing will serve: pending on a deleted endpoint, or on one disabled for longer
//! than the DLQ retention.

use crate::store::DueEntry;
use crate::store::sled::keys::ScheduleKey as _;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::{
    DeliveryRecord, DeliveryState, EndpointRecord, EventRecord, Lane, RetentionRules, SledStore,
    StoreError, SweepCursor, SweepStats, WriteResult, Writes, keys, records,
};
use crate::policy::DeadReason;

/// One event's planned changes and what they would do.
type EventPlan = (Writes, SweepStats);

impl SweepCursor {
    /// The cursor as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The event key the sweep goes on after.
    fn key(&self) -> Result<Vec<u8>, StoreError> {
        hex::decode(&self.0).map_err(|_| StoreError::corrupt(format!("sweep cursor {:?}", self.0)))
    }
}

impl SledStore {
    /// Examines up to `limit` events after `cursor`; returns what it did and the
    /// cursor to continue from, `None` once the sweep has wrapped around.
    ///
    /// Each event's changes are planned from what was read, then applied in one
    /// transaction only where every record they touch is unchanged: an outcome or a
    /// replay that lands in between keeps its record, which waits for the next sweep.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn sweep_retention(
        &self,
        cursor: Option<SweepCursor>,
        limit: usize,
        rules: RetentionRules,
    ) -> Result<(SweepStats, Option<SweepCursor>), StoreError> {
        let after = cursor.map(|c| c.key()).transpose()?;
        self.in_bulk(move |bulk| {
            let (planned, last) = bulk.store().plan_sweep(after, limit, &rules)?;
            let (groups, stats): (Vec<_>, Vec<_>) = planned.into_iter().unzip();
            let results = bulk.apply_each(&groups)?;
            let mut total = SweepStats::default();
            for (r, s) in results.iter().zip(stats) {
                if *r == WriteResult::Written {
                    total.add(s);
                }
            }
            Ok((total, last.map(|key| SweepCursor(hex::encode(key)))))
        })
        .await
    }

    /// The plans for up to `limit` events after `cursor`, and the last event key
    /// looked at.
    fn plan_sweep(
        &self,
        cursor: Option<Vec<u8>>,
        limit: usize,
        rules: &RetentionRules,
    ) -> Result<(Vec<EventPlan>, Option<Vec<u8>>), StoreError> {
        let prefix = [b"ev".as_slice(), &[0]].concat();
        let start = cursor.map_or_else(|| prefix.clone(), |c| [c.as_slice(), &[0]].concat());
        let mut endpoints: HashMap<(String, String), Option<EndpointRecord>> = HashMap::new();
        let mut planned = Vec::new();
        let mut last = None;
        for item in self
            .records()?
            .range(start..keys::prefix_end(&prefix))
            .take(limit)
        {
            let (k, v) = item?;
            last = Some(k.to_vec());
            let plan = self.plan_event(&k, &v, rules, &mut endpoints)?;
            if plan.1 != SweepStats::default() {
                planned.push(plan);
            }
        }
        Ok((planned, last))
    }

    /// What retention does to one event and its deliveries, conditional on each
    /// record it changes being unchanged when applied.
    pub(super) fn plan_event(
        &self,
        key: &[u8],
        bytes: &[u8],
        rules: &RetentionRules,
        endpoints: &mut HashMap<(String, String), Option<EndpointRecord>>,
    ) -> Result<(Writes, SweepStats), StoreError> {
        let ev: EventRecord = records::decode(bytes)?;
        let mut w = Writes::default();
        let mut stats = SweepStats::default();
        let mut remaining = 0;
        for (dlv_id, _) in &ev.deliveries {
            let dkey = keys::delivery(&ev.tenant_id, dlv_id);
            let Some(dbytes) = self.records()?.get(&dkey)? else {
                continue;
            };
            let mut d: DeliveryRecord = records::decode(&dbytes)?;
            let remove = rules.finished_expired(&d);
            if d.state == DeliveryState::Pending {
                let ep = match endpoints.entry((d.tenant_id.to_string(), d.endpoint_id.to_string()))
                {
                    Entry::Occupied(e) => e.into_mut(),
                    Entry::Vacant(e) => e.insert(self.endpoint(&d.tenant_id, &d.endpoint_id)?),
                };
                if let Some(reason) = rules.end_pending(ep.as_ref()) {
                    w.require_unchanged(&dkey, dbytes.to_vec());
                    stats.ended(&d);
                    end_pending(&mut d, &mut w, reason, rules.now_ms);
                }
            }
            if remove {
                w.require_unchanged(&dkey, dbytes.to_vec());
                w.remove(&dkey);
                for kv in self.records()?.scan_prefix(keys::attempts_of(dlv_id)) {
                    let (k, v) = kv?;
                    if let Some(copy) = super::attempts::copy_of_entry(&d.tenant_id, &v) {
                        w.remove(copy);
                    }
                    w.remove(k);
                }
                for k in super::attempts::keys_of_delivery(&d) {
                    w.remove(k);
                }
                stats.removed(&d);
            } else {
                remaining += 1;
            }
        }
        if remaining == 0 && rules.expired(ev.created_at_ms, rules.retention_ms) {
            w.require_unchanged(key, bytes.to_vec());
            w.remove(key);
            // Its uid's entry, unless a later event has taken the uid since.
            if let Some(uid) = &ev.labels.uid {
                let ukey = keys::event_uid(&ev.tenant_id, uid);
                if self
                    .records()?
                    .get(&ukey)?
                    .is_some_and(|id| id == ev.id.as_bytes())
                {
                    w.remove(ukey);
                }
            }
            stats.events_removed += 1;
        }
        Ok((w, stats))
    }
}

/// Ends a pending delivery that nothing will serve, with its schedule entries.
fn end_pending(d: &mut DeliveryRecord, w: &mut Writes, reason: DeadReason, now_ms: u64) {
    let due = d.next_attempt_at_ms.unwrap_or(d.created_at_ms);
    for lane in Lane::ALL {
        let entry = DueEntry {
            lane,
            endpoint_id: d.endpoint_id.clone(),
            due_ms: due,
            delivery_id: d.id.clone(),
        };
        w.remove(entry.encode());
    }
    d.end(reason, now_ms);
    w.insert(keys::delivery(&d.tenant_id, &d.id), records::encode(d));
}
