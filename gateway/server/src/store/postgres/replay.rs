//! Replays: one delivery, or every dead (or succeeded) delivery a filter matches, as a new
//! series due now. A dry run plans in the same transaction and rolls it back,
//! so it counts exactly what the replay would do.

use crate::ids::EndpointId;
use std::collections::HashSet;

use deadpool_postgres::GenericClient;

use super::{PgStore, from_json, ms, pg_error, to_json};
use crate::store::{
    DeliveryFilter, DeliveryRecord, DeliveryState, ReplayOutcome, ReplaySummary, StoreError,
};

/// Deliveries replayed per transaction.
const REPLAY_BATCH: i64 = 500;

/// Starts a new series for each delivery and queues it, due now.
async fn requeue(tx: &impl GenericClient, replayed: &[DeliveryRecord]) -> Result<(), StoreError> {
    let ids: Vec<&str> = replayed.iter().map(|d| d.id.as_str()).collect();
    let tenants: Vec<&str> = replayed.iter().map(|d| d.tenant_id.as_str()).collect();
    let endpoints: Vec<&str> = replayed.iter().map(|d| d.endpoint_id.as_str()).collect();
    let records: Vec<String> = replayed.iter().map(to_json).collect();
    let due: Vec<i64> = replayed
        .iter()
        .map(|d| ms(d.next_attempt_at_ms.unwrap_or(d.updated_at_ms)))
        .collect();
    let series: Vec<i32> = replayed.iter().map(|d| d.series as i32).collect();
    tx.execute(
        "UPDATE deliveries SET state = 'pending', record = u.r
         FROM UNNEST($1::text[], $2::text[]) AS u(id, r) WHERE deliveries.id = u.id",
        &[&ids, &records],
    )
    .await
    .map_err(pg_error)?;
    tx.execute(
        "INSERT INTO queue (delivery_id, tenant_id, endpoint_id, lane, due_ms, scheduled_ms, series, attempts)
         SELECT id, t, e, 0, due, due, s, 0
         FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[], $5::integer[]) AS u(id, t, e, due, s)
         ON CONFLICT (delivery_id) DO UPDATE SET lane = 0, due_ms = EXCLUDED.due_ms,
             scheduled_ms = EXCLUDED.scheduled_ms, series = EXCLUDED.series, attempts = 0,
             lease_token = NULL, leased_by = NULL",
        &[&ids, &tenants, &endpoints, &due, &series],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}

impl PgStore {
    pub async fn replay_delivery(
        &self,
        tenant: &str,
        id: &str,
        force: bool,
        now_ms: u64,
    ) -> Result<ReplayOutcome, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let row = tx
            .query_opt(
                "SELECT record FROM deliveries WHERE id = $1 AND tenant_id = $2 FOR UPDATE",
                &[&id, &tenant],
            )
            .await
            .map_err(pg_error)?;
        let Some(row) = row else {
            return Ok(ReplayOutcome::NotFound);
        };
        let mut d: DeliveryRecord = from_json(row.get(0), "delivery")?;
        match d.state {
            DeliveryState::Pending => return Ok(ReplayOutcome::Pending),
            DeliveryState::Succeeded if !force => return Ok(ReplayOutcome::NeedsForce),
            _ => {}
        }
        let endpoint = tx
            .query_opt(
                "SELECT 1 FROM endpoints WHERE tenant_id = $1 AND id = $2 FOR KEY SHARE",
                &[&tenant, &d.endpoint_id],
            )
            .await
            .map_err(pg_error)?;
        if endpoint.is_none() {
            return Ok(ReplayOutcome::EndpointGone);
        }
        let left = d.state;
        d.begin_series(now_ms);
        requeue(&tx, std::slice::from_ref(&d)).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(ReplayOutcome::Replayed(Box::new(d), left))
    }

    pub async fn replay_matching(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<ReplaySummary, StoreError> {
        self.bulk_replay(tenant, filter, now_ms, true).await
    }

    pub async fn plan_replay_matching(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        now_ms: u64,
    ) -> Result<ReplaySummary, StoreError> {
        self.bulk_replay(tenant, filter, now_ms, false).await
    }

    async fn bulk_replay(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        now_ms: u64,
        apply: bool,
    ) -> Result<ReplaySummary, StoreError> {
        let mut client = self.client().await?;
        let mut summary = ReplaySummary::default();
        let mut after: Option<String> = None;
        loop {
            let tx = client.transaction().await.map_err(pg_error)?;
            let rows = tx
                .query(
                    "SELECT record FROM deliveries
                     WHERE tenant_id = $1 AND state = $5
                       AND ($2::text IS NULL OR endpoint_id = $2) AND ($3::text IS NULL OR id > $3)
                     ORDER BY id LIMIT $4 FOR UPDATE",
                    &[
                        &tenant,
                        &filter.endpoint_id,
                        &after,
                        &REPLAY_BATCH,
                        &filter.replayed_state().as_str(),
                    ],
                )
                .await
                .map_err(pg_error)?;
            let read = rows.len();
            let mut batch = Vec::new();
            for row in rows {
                let d: DeliveryRecord = from_json(row.get(0), "delivery")?;
                after = Some(d.id.to_string());
                if filter.matches(&d) {
                    batch.push(d);
                }
            }
            let wanted: Vec<&str> = batch.iter().map(|d| d.endpoint_id.as_str()).collect();
            let live: HashSet<EndpointId> = tx
                .query(
                    "SELECT id FROM endpoints WHERE tenant_id = $1 AND id = ANY($2) FOR KEY SHARE",
                    &[&tenant, &wanted],
                )
                .await
                .map_err(pg_error)?
                .into_iter()
                .map(|r| r.get(0))
                .collect();
            batch.retain(|d| live.contains(&d.endpoint_id));
            for d in &mut batch {
                d.begin_series(now_ms);
                summary.replayed += 1;
                summary.endpoints.insert(d.endpoint_id.clone());
            }
            if apply && !batch.is_empty() {
                requeue(&tx, &batch).await?;
                tx.commit().await.map_err(pg_error)?;
            } else {
                tx.rollback().await.map_err(pg_error)?;
            }
            if (read as i64) < REPLAY_BATCH {
                return Ok(summary);
            }
        }
    }
}
