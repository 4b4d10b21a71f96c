//! Delivery reads: one delivery, its attempt log, filtered pages newest first,
//! and the counts behind the gauges and the DLQ summary.

use std::collections::HashMap;

use super::{PgStore, from_json, pg_error};
use crate::ids::DeliveryId;
use crate::store::deliveries::PageFill;
use crate::store::{
    AttemptRecord, DeadCounts, DeliveryFilter, DeliveryPage, DeliveryRecord, DeliveryState,
    StoreError,
};

/// Rows read per query while filling a page the filters thin out.
const PAGE_CHUNK: i64 = 500;

impl PgStore {
    pub async fn delivery(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT record FROM deliveries WHERE id = $1 AND tenant_id = $2",
                &[&id, &tenant],
            )
            .await
            .map_err(pg_error)?;
        row.map(|r| from_json(r.get(0), "delivery")).transpose()
    }

    /// A delivery's attempts across every series, oldest first (`tenant` is
    /// for the embedded store, which finds them through the delivery).
    pub async fn attempt_log(
        &self,
        _tenant: &str,
        delivery_id: &str,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                // A late attempt follows the one with its number.
                "SELECT record FROM (
                     SELECT series, attempt, 0 AS late, record FROM attempts
                     WHERE delivery_id = $1
                     UNION ALL
                     SELECT series, attempt, 1, record FROM late_attempts
                     WHERE delivery_id = $1) log
                 ORDER BY series, attempt, late",
                &[&delivery_id],
            )
            .await
            .map_err(pg_error)?;
        rows.iter()
            .map(|r| from_json(r.get(0), "attempt"))
            .collect()
    }

    /// Pages newest first, reading at most [`LIST_SCAN_LIMIT`] rows in chunks.
    /// Each chunk visits the next rows of the tenant's id range that the
    /// indexed filters (state, endpoint) let through, and answers every
    /// visited id with its record only where event type and dead reason match
    /// too, so the visit is bounded whatever the filters keep.
    ///
    /// [`LIST_SCAN_LIMIT`]: crate::store::deliveries::LIST_SCAN_LIMIT
    pub async fn list_deliveries(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        extra: impl Fn(&DeliveryRecord) -> bool,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<DeliveryPage, StoreError> {
        let client = self.client().await?;
        let state = match (filter.dead_reason, filter.state) {
            (Some(_), _) => Some(DeliveryState::Dead.as_str()),
            (None, s) => s.map(DeliveryState::as_str),
        };
        let dead_reason = filter.dead_reason.map(|r| r.as_str());
        let range = filter.id_range(cursor);
        let mut page = PageFill::new(filter, extra, limit);
        let mut upper = range.upper;
        loop {
            let chunk = PAGE_CHUNK.min(page.may_read() as i64);
            let rows = client
                .query(
                    "WITH visited AS (
                       SELECT id, record FROM deliveries
                       WHERE tenant_id = $1 AND ($2::text IS NULL OR state = $2)
                         AND ($3::text IS NULL OR endpoint_id = $3)
                         AND ($4::text IS NULL OR id < $4)
                         AND ($5::text IS NULL OR id >= $5)
                       ORDER BY id DESC LIMIT $6)
                     SELECT id, CASE WHEN ($7::text IS NULL OR record::jsonb->>'event_type' = $7)
                                      AND ($8::text IS NULL OR record::jsonb->>'dead_reason' = $8)
                                 THEN record END
                     FROM visited ORDER BY id DESC",
                    &[
                        &tenant,
                        &state,
                        &filter.endpoint_id,
                        &upper,
                        &range.lower,
                        &chunk,
                        &filter.event_type,
                        &dead_reason,
                    ],
                )
                .await
                .map_err(pg_error)?;
            let read = rows.len();
            for row in rows {
                let id: String = row.get(0);
                let record: Option<String> = row.get(1);
                let full = match record {
                    Some(record) => page.offer(from_json(&record, "delivery")?),
                    None => page.refused(DeliveryId::from(id.as_str())),
                };
                if let Some(full) = full {
                    return Ok(full);
                }
                upper = Some(id);
            }
            if (read as i64) < chunk {
                return Ok(page.last());
            }
        }
    }

    pub async fn count_deliveries(&self) -> Result<HashMap<String, (i64, i64)>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT tenant_id,
                        count(*) FILTER (WHERE state = 'pending'),
                        count(*) FILTER (WHERE state = 'dead')
                 FROM deliveries WHERE state <> 'succeeded' GROUP BY tenant_id",
                &[],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), (r.get(1), r.get(2))))
            .collect())
    }

    /// Counts a tenant's dead deliveries from its newest `limit` records, as
    /// the embedded backend does, so the summary reads the same on both.
    pub async fn dead_counts(&self, tenant: &str, limit: usize) -> Result<DeadCounts, StoreError> {
        let mut counts = DeadCounts::default();
        self.count_dead_of(tenant, limit, &mut counts).await?;
        Ok(counts)
    }

    pub async fn dead_counts_all(&self, limit: usize) -> Result<DeadCounts, StoreError> {
        let tenants = self
            .client()
            .await?
            .query("SELECT id FROM tenants ORDER BY id", &[])
            .await
            .map_err(pg_error)?;
        let mut counts = DeadCounts::default();
        for row in tenants {
            let tenant: String = row.get(0);
            self.count_dead_of(&tenant, limit, &mut counts).await?;
            if !counts.complete {
                break;
            }
        }
        Ok(counts)
    }

    async fn count_dead_of(
        &self,
        tenant: &str,
        limit: usize,
        counts: &mut DeadCounts,
    ) -> Result<(), StoreError> {
        let left = limit.saturating_sub(counts.scanned);
        let rows = self
            .client()
            .await?
            .query(
                "SELECT state, record FROM deliveries WHERE tenant_id = $1
                 ORDER BY id DESC LIMIT $2",
                &[&tenant, &(left as i64 + 1)],
            )
            .await
            .map_err(pg_error)?;
        for row in rows {
            if counts.scanned == limit {
                counts.complete = false;
                return Ok(());
            }
            counts.scanned += 1;
            let state: &str = row.get(0);
            if state == DeliveryState::Dead.as_str() {
                counts.count(&from_json(row.get(1), "delivery")?);
            }
        }
        Ok(())
    }
}
