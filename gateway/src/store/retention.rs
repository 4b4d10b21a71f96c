//! Retention: pruning finished work in small batches, and ending deliveries left
//! pending on an endpoint disabled for longer than the DLQ retention.

use std::collections::HashMap;

use super::{
    DeliveryRecord, DeliveryState, EndpointRecord, EventRecord, Store, StoreError, keys, records,
};

/// How long finished work is kept.
#[derive(Debug, Clone, Copy)]
pub struct RetentionRules {
    pub now_ms: u64,
    /// Succeeded deliveries, and events whose deliveries are all gone.
    pub retention_ms: u64,
    /// Dead deliveries, and pending ones on a disabled endpoint; 0 keeps them forever.
    pub dlq_retention_ms: u64,
}

impl RetentionRules {
    fn expired(&self, since_ms: u64, keep_ms: u64) -> bool {
        keep_ms > 0 && since_ms.saturating_add(keep_ms) <= self.now_ms
    }
}

/// What one sweep step did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SweepStats {
    pub events_removed: usize,
    pub deliveries_removed: usize,
    pub deliveries_ended: usize,
}

impl Store {
    /// Examines up to `limit` events after `cursor` (an event key); returns what it did
    /// and the cursor to continue from, `None` once the sweep has wrapped around.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn sweep_retention(
        &self,
        cursor: Option<Vec<u8>>,
        limit: usize,
        rules: RetentionRules,
    ) -> Result<(SweepStats, Option<Vec<u8>>), StoreError> {
        let prefix = [b"ev".as_slice(), &[0]].concat();
        let start = cursor.map_or_else(|| prefix.clone(), |c| [c.as_slice(), &[0]].concat());
        let mut batch = super::Writes::default();
        let mut stats = SweepStats::default();
        let mut endpoints: HashMap<String, Option<EndpointRecord>> = HashMap::new();
        let mut last = None;
        for item in self.inner.records.range(start..).take(limit) {
            let (k, v) = item?;
            if !k.starts_with(&prefix) {
                break;
            }
            last = Some(k.to_vec());
            let ev: EventRecord = records::decode(&v)?;
            let mut remaining = 0;
            for (dlv_id, _) in &ev.deliveries {
                let dkey = keys::delivery(&ev.tenant_id, dlv_id);
                let Some(mut d) = self.get::<DeliveryRecord>(&dkey)? else {
                    continue;
                };
                let remove = match d.state {
                    DeliveryState::Succeeded => rules.expired(d.updated_at_ms, rules.retention_ms),
                    DeliveryState::Dead => rules.expired(d.updated_at_ms, rules.dlq_retention_ms),
                    DeliveryState::Pending => {
                        let ep = endpoints.entry(d.endpoint_id.clone()).or_insert_with(|| {
                            self.endpoint(&d.tenant_id, &d.endpoint_id).ok().flatten()
                        });
                        if let Some(ep) = ep
                            && ep.disabled
                            && rules.expired(
                                ep.disabled_at_ms.unwrap_or(ep.created_at_ms),
                                rules.dlq_retention_ms,
                            )
                        {
                            end_on_disabled(&mut d, &mut batch, rules.now_ms);
                            stats.deliveries_ended += 1;
                        }
                        false
                    }
                };
                if remove {
                    batch.remove(dkey);
                    for k in self
                        .inner
                        .records
                        .scan_prefix(keys::attempts_of(dlv_id))
                        .keys()
                    {
                        batch.remove(k?);
                    }
                    stats.deliveries_removed += 1;
                } else {
                    remaining += 1;
                }
            }
            if remaining == 0 && rules.expired(ev.created_at_ms, rules.retention_ms) {
                batch.remove(k);
                stats.events_removed += 1;
            }
        }
        if stats != SweepStats::default() {
            self.commit(batch).await?;
        }
        Ok((stats, last))
    }
}

/// A delivery still pending on an endpoint disabled past the DLQ retention becomes dead.
fn end_on_disabled(d: &mut DeliveryRecord, batch: &mut super::Writes, now_ms: u64) {
    let due = d.next_attempt_at_ms.unwrap_or(d.created_at_ms);
    for lane in keys::Lane::ALL {
        let entry = keys::ScheduleKey {
            lane,
            endpoint_id: d.endpoint_id.clone(),
            due_ms: due,
            delivery_id: d.id.clone(),
        };
        batch.remove(entry.encode());
    }
    d.state = DeliveryState::Dead;
    d.dead_reason = Some("endpoint_disabled".into());
    d.next_attempt_at_ms = None;
    d.updated_at_ms = now_ms;
    batch.insert(keys::delivery(&d.tenant_id, &d.id), records::encode(d));
}
