//! Retention: each step takes the next events in key order, plans what goes
//! (finished deliveries past their retention with their attempts, then events
//! with no delivery left) and what ends (pending work nothing will serve), and
//! applies it in the same transaction that read and locked the rows.

use crate::ids::{DeliveryId, EndpointId, TenantId};
use std::collections::{HashMap, HashSet};

use super::{PgStore, from_json, pg_error, unms};
use crate::store::{
    DeliveryRecord, DeliveryState, EndpointRecord, RetentionRules, StoreError, SweepCursor,
    SweepStats,
};

impl SweepCursor {
    /// The `(tenant, event id)` this cursor goes on after.
    fn event_key(&self) -> Result<(String, String), StoreError> {
        let bad = || StoreError::corrupt(format!("sweep cursor {:?}", self.0));
        let bytes = hex::decode(&self.0).map_err(|_| bad())?;
        let text = String::from_utf8(bytes).map_err(|_| bad())?;
        let (tenant, id) = text.split_once('\0').ok_or_else(bad)?;
        Ok((tenant.to_owned(), id.to_owned()))
    }
}

impl PgStore {
    pub async fn sweep_retention(
        &self,
        cursor: Option<SweepCursor>,
        limit: usize,
        rules: RetentionRules,
    ) -> Result<(SweepStats, Option<SweepCursor>), StoreError> {
        let after = cursor.map(|c| c.event_key()).transpose()?;
        let (after_tenant, after_id) = after.unzip();
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let events = tx
            .query(
                "SELECT tenant_id, id, created_at_ms, deliveries FROM events
                 WHERE $1::text IS NULL OR (tenant_id, id) > ($1, $2::text)
                 ORDER BY tenant_id, id LIMIT $3 FOR UPDATE",
                &[&after_tenant, &after_id, &(limit as i64)],
            )
            .await
            .map_err(pg_error)?;
        let mut ids = Vec::new();
        for e in &events {
            let listed: Vec<(DeliveryId, EndpointId)> = from_json(e.get(3), "event deliveries")?;
            ids.extend(listed.into_iter().map(|(id, _)| id));
        }
        let deliveries: HashMap<DeliveryId, DeliveryRecord> = tx
            .query(
                "SELECT record FROM deliveries WHERE id = ANY($1) FOR UPDATE",
                &[&ids],
            )
            .await
            .map_err(pg_error)?
            .iter()
            .map(|r| from_json::<DeliveryRecord>(r.get(0), "delivery").map(|d| (d.id.clone(), d)))
            .collect::<Result<_, _>>()?;
        let endpoints = self.endpoints_of_pending(&tx, deliveries.values()).await?;

        let mut stats = SweepStats::default();
        let (mut removed, mut ended, mut events_gone) = (Vec::new(), Vec::new(), Vec::new());
        for e in &events {
            let (tenant, id): (String, String) = (e.get(0), e.get(1));
            let listed: Vec<(DeliveryId, EndpointId)> = from_json(e.get(3), "event deliveries")?;
            let mut remaining = 0;
            for (dlv_id, _) in listed {
                let Some(d) = deliveries.get(&dlv_id) else {
                    continue;
                };
                if rules.finished_expired(d) {
                    stats.removed(d);
                    removed.push(d.id.clone());
                    continue;
                }
                remaining += 1;
                if d.state == DeliveryState::Pending {
                    let ep = endpoints.get(&(d.tenant_id.clone(), d.endpoint_id.clone()));
                    if let Some(reason) = rules.end_pending(ep) {
                        stats.ended(d);
                        let mut d = d.clone();
                        d.end(reason, rules.now_ms);
                        ended.push(d);
                    }
                }
            }
            if remaining == 0 && rules.expired(unms(e.get(2)), rules.retention_ms) {
                events_gone.push((tenant, id));
            }
        }
        stats.events_removed = events_gone.len();
        for sql in [
            "DELETE FROM attempts WHERE delivery_id = ANY($1)",
            "DELETE FROM late_attempts WHERE delivery_id = ANY($1)",
            "DELETE FROM queue WHERE delivery_id = ANY($1)",
            "DELETE FROM deliveries WHERE id = ANY($1)",
        ] {
            tx.execute(sql, &[&removed]).await.map_err(pg_error)?;
        }
        super::schedule::settle_deliveries(&tx, &ended).await?;
        let (tenants, event_ids): (Vec<String>, Vec<String>) = events_gone.into_iter().unzip();
        tx.execute(
            "DELETE FROM events WHERE (tenant_id, id) IN (SELECT * FROM UNNEST($1::text[], $2::text[]))",
            &[&tenants, &event_ids],
        )
        .await
        .map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        let next = (events.len() == limit)
            .then(|| events.last())
            .flatten()
            .map(|e| {
                let (tenant, id): (&str, &str) = (e.get(0), e.get(1));
                SweepCursor(hex::encode(format!("{tenant}\0{id}")))
            });
        Ok((stats, next))
    }

    /// The endpoints of the pending deliveries among `deliveries` (absent: deleted).
    async fn endpoints_of_pending(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        deliveries: impl Iterator<Item = &DeliveryRecord>,
    ) -> Result<HashMap<(TenantId, EndpointId), EndpointRecord>, StoreError> {
        let wanted: HashSet<(TenantId, EndpointId)> = deliveries
            .filter(|d| d.state == DeliveryState::Pending)
            .map(|d| (d.tenant_id.clone(), d.endpoint_id.clone()))
            .collect();
        let (tenants, ids): (Vec<TenantId>, Vec<EndpointId>) = wanted.into_iter().unzip();
        let rows = tx
            .query(
                "SELECT record FROM endpoints
                 WHERE (tenant_id, id) IN (SELECT * FROM UNNEST($1::text[], $2::text[]))",
                &[&tenants, &ids],
            )
            .await
            .map_err(pg_error)?;
        rows.iter()
            .map(|r| {
                from_json::<EndpointRecord>(r.get(0), "endpoint")
                    .map(|ep| ((ep.tenant_id.clone(), ep.id.clone()), ep))
            })
            .collect()
    }
}
