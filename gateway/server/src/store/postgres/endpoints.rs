//! Endpoints: one row each, the record whole as JSON and its timeout beside it
//! (a claim's lease lasts the timeout plus the margin).

use deadpool_postgres::GenericClient;

use super::{PgStore, from_json, ms, pg_error, retry_conflicts, to_json};
use crate::policy::DeadReason;
use crate::store::{
    DeliveryRecord, EndpointCreate, EndpointRecord, EndpointVersion, StoreError, Swap,
};

/// Pending deliveries ended per transaction when an endpoint is deleted.
const DELETE_BATCH: i64 = 256;

/// Writes an endpoint over its row.
pub(super) async fn write_endpoint(
    client: &impl GenericClient,
    ep: &EndpointRecord,
) -> Result<(), StoreError> {
    client
        .execute(
            "UPDATE endpoints SET record = $3, timeout_ms = $4 WHERE tenant_id = $1 AND id = $2",
            &[&ep.tenant_id, &ep.id, &to_json(ep), &ms(ep.timeout_ms)],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

impl PgStore {
    /// Creates an endpoint within the tenant's cap, its uid unique among the
    /// tenant's. The checks and the insert run serializable, so two creates
    /// racing for the last place or for one uid cannot both pass.
    pub async fn create_endpoint(
        &self,
        ep: &EndpointRecord,
        max: usize,
    ) -> Result<EndpointCreate, StoreError> {
        retry_conflicts(move || async move {
            let mut client = self.client().await?;
            let tx = super::serializable(&mut client).await?;
            let row = tx
                .query_one(
                    "SELECT count(*), coalesce(bool_or(record::jsonb->>'uid' = $2), false)
                     FROM endpoints WHERE tenant_id = $1",
                    &[&ep.tenant_id, &ep.uid],
                )
                .await
                .map_err(pg_error)?;
            if row.get::<_, i64>(0) as usize >= max {
                return Ok(EndpointCreate::TooMany);
            }
            if row.get::<_, bool>(1) {
                return Ok(EndpointCreate::UidTaken);
            }
            insert_endpoint(&tx, ep).await?;
            tx.commit().await.map_err(pg_error)?;
            self.inner.cache.forget_endpoints(&ep.tenant_id);
            Ok(EndpointCreate::Created)
        })
        .await
    }

    pub async fn put_endpoint(&self, ep: &EndpointRecord) -> Result<(), StoreError> {
        insert_endpoint(&*self.client().await?, ep).await?;
        self.inner.cache.forget_endpoints(&ep.tenant_id);
        Ok(())
    }

    pub async fn endpoint_version(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<EndpointVersion>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT record FROM endpoints WHERE tenant_id = $1 AND id = $2",
                &[&tenant, &id],
            )
            .await
            .map_err(pg_error)?;
        let Some(row) = row else { return Ok(None) };
        let text: String = row.get(0);
        Ok(Some(EndpointVersion {
            record: from_json(&text, "endpoint")?,
            bytes: text.into_bytes(),
        }))
    }

    pub async fn swap_endpoint(
        &self,
        read: &EndpointVersion,
        new: &EndpointRecord,
    ) -> Result<Swap, StoreError> {
        let was = String::from_utf8_lossy(&read.bytes);
        let old: EndpointRecord = from_json(&was, "endpoint")?;
        if new.uid.is_some() && old.uid != new.uid {
            return self.swap_endpoint_uid(&was, new).await;
        }
        let swapped = swap_over(&*self.client().await?, &was, new).await?;
        if swapped == Swap::Swapped {
            self.inner.cache.forget_endpoints(&new.tenant_id);
        }
        Ok(swapped)
    }

    pub async fn endpoint(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<EndpointRecord>, StoreError> {
        Ok(self.endpoint_version(tenant, id).await?.map(|v| v.record))
    }

    pub async fn list_endpoints(
        &self,
        tenant: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<(Vec<EndpointRecord>, bool), StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT record FROM endpoints
                 WHERE tenant_id = $1 AND ($2::text IS NULL OR id < $2)
                 ORDER BY id DESC LIMIT $3",
                &[&tenant, &cursor, &(limit as i64 + 1)],
            )
            .await
            .map_err(pg_error)?;
        let mut out = rows
            .iter()
            .map(|r| from_json(r.get(0), "endpoint"))
            .collect::<Result<Vec<EndpointRecord>, _>>()?;
        let more = out.len() > limit;
        out.truncate(limit);
        Ok((out, more))
    }

    pub async fn endpoints_of(&self, tenant: &str) -> Result<Vec<EndpointRecord>, StoreError> {
        if let Some(eps) = self.inner.cache.endpoints(tenant) {
            return Ok(eps);
        }
        let read_at = self.inner.cache.endpoints_read();
        let eps = self.select_endpoints(Some(tenant)).await?;
        self.inner
            .cache
            .keep_endpoints(tenant, eps.clone(), read_at);
        Ok(eps)
    }

    pub async fn all_endpoints(&self) -> Result<Vec<EndpointRecord>, StoreError> {
        self.select_endpoints(None).await
    }

    async fn select_endpoints(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<EndpointRecord>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT record FROM endpoints WHERE $1::text IS NULL OR tenant_id = $1
                 ORDER BY tenant_id DESC, id DESC",
                &[&tenant],
            )
            .await
            .map_err(pg_error)?;
        rows.iter()
            .map(|r| from_json(r.get(0), "endpoint"))
            .collect()
    }

    /// Deletes the endpoint first (so nothing adds work for it after), then ends
    /// its pending deliveries in batches.
    pub async fn delete_endpoint(
        &self,
        ep: &EndpointRecord,
        now_ms: u64,
    ) -> Result<usize, StoreError> {
        let mut client = self.client().await?;
        client
            .execute(
                "WITH shared AS (DELETE FROM endpoint_runtime WHERE endpoint_id = $2)
                 DELETE FROM endpoints WHERE tenant_id = $1 AND id = $2",
                &[&ep.tenant_id, &ep.id],
            )
            .await
            .map_err(pg_error)?;
        // After the row's delete, which waited for any flush holding the row.
        super::endpoint_stats::remove_endpoint_stats(&*client, &ep.tenant_id, &ep.id).await?;
        self.inner.cache.forget_endpoints(&ep.tenant_id);
        let mut ended = 0;
        loop {
            let tx = client.transaction().await.map_err(pg_error)?;
            let rows = tx
                .query(
                    "SELECT d.record FROM queue q JOIN deliveries d ON d.id = q.delivery_id
                     WHERE q.tenant_id = $1 AND q.endpoint_id = $2
                     LIMIT $3 FOR UPDATE OF q, d",
                    &[&ep.tenant_id, &ep.id, &DELETE_BATCH],
                )
                .await
                .map_err(pg_error)?;
            let batch = rows.len();
            let mut done = Vec::with_capacity(batch);
            for row in rows {
                let mut d: DeliveryRecord = from_json(row.get(0), "delivery")?;
                d.end(DeadReason::EndpointDeleted, now_ms);
                done.push(d);
            }
            super::schedule::settle_deliveries(&tx, &done).await?;
            tx.commit().await.map_err(pg_error)?;
            ended += batch;
            if (batch as i64) < DELETE_BATCH {
                return Ok(ended);
            }
        }
    }

    pub async fn update_endpoint(
        &self,
        tenant: &str,
        id: &str,
        change: impl Fn(&mut EndpointRecord),
    ) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let row = tx
            .query_opt(
                "SELECT record FROM endpoints WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
                &[&tenant, &id],
            )
            .await
            .map_err(pg_error)?;
        let Some(row) = row else { return Ok(false) };
        let mut ep: EndpointRecord = from_json(row.get(0), "endpoint")?;
        change(&mut ep);
        write_endpoint(&tx, &ep).await?;
        tx.commit().await.map_err(pg_error)?;
        self.inner.cache.forget_endpoints(tenant);
        Ok(true)
    }
}

/// Inserts an endpoint, or replaces it.
impl PgStore {
    /// A swap that sets a new uid: the check that no other endpoint of the
    /// tenant has it and the write run serializable, retried on a conflict.
    async fn swap_endpoint_uid(&self, was: &str, new: &EndpointRecord) -> Result<Swap, StoreError> {
        let swapped = retry_conflicts(move || async move {
            let mut client = self.client().await?;
            let tx = super::serializable(&mut client).await?;
            let taken = tx
                .query_opt(
                    "SELECT 1 FROM endpoints
                     WHERE tenant_id = $1 AND id <> $2 AND record::jsonb->>'uid' = $3 LIMIT 1",
                    &[&new.tenant_id, &new.id, &new.uid],
                )
                .await
                .map_err(pg_error)?
                .is_some();
            if taken {
                return Ok(Swap::UidTaken);
            }
            let swapped = swap_over(&tx, was, new).await?;
            if swapped != Swap::Swapped {
                return Ok(swapped);
            }
            tx.commit().await.map_err(pg_error)?;
            Ok(Swap::Swapped)
        })
        .await?;
        self.inner.cache.forget_endpoints(&new.tenant_id);
        Ok(swapped)
    }
}

/// Writes `new` over its row only where the row still holds `was`; else says
/// whether the endpoint changed meanwhile or is gone.
async fn swap_over(
    client: &impl GenericClient,
    was: &str,
    new: &EndpointRecord,
) -> Result<Swap, StoreError> {
    let n = client
        .execute(
            "UPDATE endpoints SET record = $3, timeout_ms = $4
             WHERE tenant_id = $1 AND id = $2 AND record = $5",
            &[
                &new.tenant_id,
                &new.id,
                &to_json(new),
                &ms(new.timeout_ms),
                &was,
            ],
        )
        .await
        .map_err(pg_error)?;
    if n == 1 {
        return Ok(Swap::Swapped);
    }
    let exists = client
        .query_opt(
            "SELECT 1 FROM endpoints WHERE tenant_id = $1 AND id = $2",
            &[&new.tenant_id, &new.id],
        )
        .await
        .map_err(pg_error)?;
    Ok(if exists.is_some() {
        Swap::Changed
    } else {
        Swap::Gone
    })
}

async fn insert_endpoint(
    client: &impl GenericClient,
    ep: &EndpointRecord,
) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO endpoints (tenant_id, id, timeout_ms, record) VALUES ($1, $2, $3, $4)
             ON CONFLICT (tenant_id, id) DO UPDATE
             SET timeout_ms = EXCLUDED.timeout_ms, record = EXCLUDED.record",
            &[&ep.tenant_id, &ep.id, &ms(ep.timeout_ms), &to_json(ep)],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}
