//! Due work, claimed and fenced. A claim takes due queue rows with `FOR UPDATE
//! SKIP LOCKED`, gives them a fresh lease token and pushes their `due_ms` to
//! the lease's expiry (the endpoint's timeout plus `store.lease_margin`), so
//! the work of a gateway that died becomes due again with no reaper. An outcome
//! is written only where the row still holds its token, series and attempts
//! (`outcomes`); a late one, from an expired lease, is `Stale` and changes nothing.
//! An expired lease of a node that is paused, not dead, is not claimed (see
//! `held_by_a_paused_node!`), and each lease carries its end on this process's
//! monotonic clock for the worker.

use crate::ids::EndpointId;
use crate::store::DueEntry;
use deadpool_postgres::GenericClient;
use rand::RngExt;
use std::time::{Duration, Instant};

use tokio_postgres::types::ToSql;

use super::statements::{CLAIM, LEASED_DELIVERY};
use super::{PgStore, from_json, ms, pg_error, to_json, unms};
use crate::store::{
    DeliveryRecord, DeliveryState, Interrupted, Interruption, Lane, Lease, StoreError,
};

/// How much earlier than the store's expiry a lease ends for the node that
/// holds it.
const END_GUARD: Duration = Duration::from_millis(50);

/// A lane as the queue stores it.
pub(super) fn lane_code(lane: Lane) -> i16 {
    match lane {
        Lane::First => 0,
        Lane::Retry => 1,
    }
}

impl PgStore {
    /// Claims up to `limit` due rows of `endpoint_id` in `lane`, oldest first.
    pub async fn due_entries(
        &self,
        lane: Lane,
        endpoint_id: &str,
        now_ms: u64,
        limit: usize,
    ) -> Result<Vec<Lease>, StoreError> {
        let anchor = Instant::now();
        let client = self.client().await?;
        self.claim_rows(&*client, lane, endpoint_id, now_ms, limit, anchor)
            .await
    }

    /// [`PgStore::due_entries`] on `client` (a transaction, for a turn);
    /// `anchor` is this process's monotonic clock at `now_ms`.
    pub(super) async fn claim_rows(
        &self,
        client: &impl GenericClient,
        lane: Lane,
        endpoint_id: &str,
        now_ms: u64,
        limit: usize,
        anchor: Instant,
    ) -> Result<Vec<Lease>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let token: i64 = rand::rng().random_range(1..i64::MAX);
        let statement = client.prepare_cached(CLAIM).await.map_err(pg_error)?;
        let hold = ms(self.inner.paused_node_hold_ms);
        let params: [&(dyn ToSql + Sync); 8] = [
            &endpoint_id,
            &lane_code(lane),
            &ms(now_ms),
            &(limit as i64),
            &token,
            &self.inner.node_id,
            &ms(self.inner.lease_margin_ms),
            &hold,
        ];
        let rows = client.query(&statement, &params).await.map_err(pg_error)?;
        self.inner.batches.claims.inc();
        self.inner.batches.claimed_rows.inc_by(rows.len() as u64);
        let mut leases = Vec::with_capacity(rows.len());
        for r in rows {
            let key = DueEntry {
                lane,
                endpoint_id: endpoint_id.into(),
                due_ms: unms(r.get(1)),
                delivery_id: r.get(0),
            };
            let d: DeliveryRecord = from_json(r.get(2), "delivery")?;
            let body = match r.get::<_, Option<String>>(3) {
                Some(payload) => Some(super::claimed::event_body(payload, r.get(5))?),
                None => None,
            };
            self.inner.claimed.keep(token, d, body);
            // The lease's end on this process's clock, a little early, so that
            // this node stops before another may start.
            let held_for = unms(r.get(4)).saturating_sub(now_ms);
            let end = anchor + Duration::from_millis(held_for).saturating_sub(END_GUARD);
            leases.push(Lease(key, token, Some(end)));
        }
        leases.sort_by(|a, b| (a.0.due_ms, &a.0.delivery_id).cmp(&(b.0.due_ms, &b.0.delivery_id)));
        Ok(leases)
    }

    /// See [`crate::store::Store::due_first_attempts`]: a leased row is due
    /// only when its lease expires, so it is not counted.
    pub async fn due_first_attempts(
        &self,
        endpoints: &[EndpointId],
        now_ms: u64,
        cap: usize,
    ) -> Result<usize, StoreError> {
        let ids: Vec<&str> = endpoints.iter().map(EndpointId::as_str).collect();
        let row = self
            .client()
            .await?
            .query_one(
                "SELECT count(*) FROM (SELECT 1 FROM queue
                     WHERE endpoint_id = ANY($1) AND lane = 0 AND due_ms <= $2 LIMIT $3) s",
                &[&ids, &ms(now_ms), &(cap as i64)],
            )
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    /// The earliest time a row of `endpoint_id` is due (or its lease expires),
    /// strictly after `after_ms` when given.
    pub async fn next_due(
        &self,
        endpoint_id: &str,
        after_ms: Option<u64>,
    ) -> Result<Option<u64>, StoreError> {
        let after = after_ms.map(ms);
        // One index probe per lane: a min() over both would read every row of a
        // backlog.
        let row = self
            .client()
            .await?
            .query_one(
                "SELECT least(
                     (SELECT due_ms FROM queue WHERE endpoint_id = $1 AND lane = 0
                        AND ($2::bigint IS NULL OR due_ms > $2) ORDER BY due_ms LIMIT 1),
                     (SELECT due_ms FROM queue WHERE endpoint_id = $1 AND lane = 1
                        AND ($2::bigint IS NULL OR due_ms > $2) ORDER BY due_ms LIMIT 1))",
                &[&endpoint_id, &after],
            )
            .await
            .map_err(pg_error)?;
        Ok(row.get::<_, Option<i64>>(0).map(unms))
    }

    /// The delivery a lease is for, while the lease is current: as claimed (a
    /// pending delivery changes only under its lease, or by a delete that also
    /// takes the lease away, which the outcome write then finds), or read again.
    pub async fn due_delivery(
        &self,
        tenant: &str,
        lease: &Lease,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        if let Some(d) = self.inner.claimed.take(&lease.0.delivery_id, lease.1)
            && d.tenant_id == tenant
        {
            return Ok(Some(d));
        }
        let client = self.client().await?;
        let statement = client
            .prepare_cached(LEASED_DELIVERY)
            .await
            .map_err(pg_error)?;
        let row = client
            .query_opt(&statement, &[&lease.0.delivery_id, &lease.1, &tenant])
            .await
            .map_err(pg_error)?;
        let Some(row) = row else { return Ok(None) };
        let d: DeliveryRecord = from_json(row.get(0), "delivery")?;
        if d.state == DeliveryState::Pending {
            return Ok(Some(d));
        }
        // A row left behind by a finished delivery is never served again.
        client
            .execute(
                "DELETE FROM queue WHERE delivery_id = $1 AND lease_token = $2",
                &[&lease.0.delivery_id, &lease.1],
            )
            .await
            .map_err(pg_error)?;
        Ok(None)
    }

    /// Settles a lease whose attempt could not be made.
    pub async fn interrupt(
        &self,
        tenant: &str,
        lease: &Lease,
        now_ms: u64,
        what: Interruption,
    ) -> Result<Interrupted, StoreError> {
        self.inner.claimed.take(&lease.0.delivery_id, lease.1);
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let row = tx
            .query_opt(
                "SELECT d.record FROM queue q JOIN deliveries d ON d.id = q.delivery_id
                 WHERE q.delivery_id = $1 AND q.lease_token = $2 AND d.tenant_id = $3
                 FOR UPDATE",
                &[&lease.0.delivery_id, &lease.1, &tenant],
            )
            .await
            .map_err(pg_error)?;
        let Some(row) = row else {
            return Ok(Interrupted::NotCurrent);
        };
        let mut d: DeliveryRecord = from_json(row.get(0), "delivery")?;
        if d.state != DeliveryState::Pending {
            return Ok(Interrupted::NotCurrent);
        }
        let result = what.settle(&mut d, now_ms);
        if let Interrupted::Requeued { due_ms } = result {
            tx.execute(
                "UPDATE queue SET lane = 1, due_ms = $2, scheduled_ms = $2, lease_token = NULL,
                     leased_by = NULL
                 WHERE delivery_id = $1",
                &[&d.id, &ms(due_ms)],
            )
            .await
            .map_err(pg_error)?;
        } else {
            tx.execute("DELETE FROM queue WHERE delivery_id = $1", &[&d.id])
                .await
                .map_err(pg_error)?;
        }
        write_delivery(&tx, &d).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(result)
    }
}

/// Stores deliveries that have finished (ended by a delete or by retention)
/// and takes them off the queue, in two statements whatever their number.
pub(super) async fn settle_deliveries(
    tx: &impl GenericClient,
    done: &[DeliveryRecord],
) -> Result<(), StoreError> {
    let ids: Vec<&str> = done.iter().map(|d| d.id.as_str()).collect();
    let states: Vec<&str> = done.iter().map(|d| d.state.as_str()).collect();
    let records: Vec<String> = done.iter().map(to_json).collect();
    tx.execute(
        "UPDATE deliveries SET state = u.s, record = u.r
         FROM UNNEST($1::text[], $2::text[], $3::text[]) AS u(id, s, r) WHERE deliveries.id = u.id",
        &[&ids, &states, &records],
    )
    .await
    .map_err(pg_error)?;
    tx.execute("DELETE FROM queue WHERE delivery_id = ANY($1)", &[&ids])
        .await
        .map_err(pg_error)?;
    Ok(())
}

/// Stores a delivery record and its state column.
pub(super) async fn write_delivery(
    tx: &impl GenericClient,
    d: &DeliveryRecord,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE deliveries SET state = $2, record = $3 WHERE id = $1",
        &[&d.id, &d.state.as_str(), &to_json(d)],
    )
    .await
    .map_err(pg_error)?;
    Ok(())
}
