//! Event reads and the idempotency sweep.

use serde_json::value::RawValue;

use super::columns::DeliveryColumns;
use super::statements::{INSERT_DELIVERIES, INSERT_QUEUE};
use super::{PgStore, error::corrupt, from_json, ms, pg_error, to_json, unms};
use tokio_postgres::Row;

use crate::store::{
    DeliveryRecord, EXPUNGED, EndpointRecord, EventLabels, EventRecord, Expunge,
    IDEMPOTENCY_TTL_MS, IdOrder, IdWindow, StoreError,
};

/// The columns [`event_from_row`] reads, in its order.
pub(super) const EVENT_COLUMNS: &str =
    "id, event_type, payload, created_at_ms, deliveries, meta::text";

/// An event's row read back; its labels are `meta`'s JSON (none when NULL).
pub(super) fn event_from_row(tenant: &str, row: &Row) -> Result<EventRecord, StoreError> {
    let payload: String = row.get(2);
    // An expunged payload is stored empty (`store::EXPUNGED`) and reads as null.
    let payload = if payload.is_empty() {
        "null".to_owned()
    } else {
        payload
    };
    let labels = match row.get::<_, Option<&str>>(5) {
        Some(text) => from_json(text, "event labels")?,
        None => EventLabels::default(),
    };
    Ok(EventRecord {
        id: row.get(0),
        tenant_id: tenant.into(),
        event_type: row.get(1),
        payload: RawValue::from_string(payload).map_err(|e| corrupt("event payload", e))?,
        created_at_ms: unms(row.get(3)),
        deliveries: from_json(row.get(4), "event deliveries")?,
        labels,
    })
}

/// Idempotency keys forgotten per statement.
const SWEEP_BATCH: i64 = 512;

impl PgStore {
    pub async fn event(&self, tenant: &str, id: &str) -> Result<Option<EventRecord>, StoreError> {
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE tenant_id = $1 AND id = $2");
        let row = self
            .client()
            .await?
            .query_opt(&sql, &[&tenant, &id])
            .await
            .map_err(pg_error)?;
        row.as_ref().map(|r| event_from_row(tenant, r)).transpose()
    }

    pub(crate) async fn events_between(
        &self,
        tenant: &str,
        window: &IdWindow,
        order: IdOrder,
        max: usize,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let direction = match order {
            IdOrder::Descending => "DESC",
            IdOrder::Ascending => "ASC",
        };
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE tenant_id = $1
               AND ($2::text IS NULL OR id > $2) AND ($3::text IS NULL OR id < $3)
             ORDER BY id {direction} LIMIT $4"
        );
        let rows = self
            .client()
            .await?
            .query(
                &sql,
                &[&tenant, &window.after, &window.before, &(max as i64)],
            )
            .await
            .map_err(pg_error)?;
        rows.iter().map(|r| event_from_row(tenant, r)).collect()
    }

    /// Adds a delivery of an event to an endpoint it has none to, in one
    /// transaction holding the event's row and the endpoint's.
    pub(crate) async fn add_delivery(
        &self,
        tenant: &str,
        event_id: &str,
        endpoint: &EndpointRecord,
        now_ms: u64,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE tenant_id = $1 AND id = $2 FOR UPDATE"
        );
        let Some(row) = tx
            .query_opt(&sql, &[&tenant, &event_id])
            .await
            .map_err(pg_error)?
        else {
            return Ok(None);
        };
        let mut event = event_from_row(tenant, &row)?;
        let endpoint_there = tx
            .query_opt(
                "SELECT 1 FROM endpoints WHERE tenant_id = $1 AND id = $2 FOR KEY SHARE",
                &[&tenant, &endpoint.id],
            )
            .await
            .map_err(pg_error)?
            .is_some();
        if !endpoint_there || event.deliveries.iter().any(|(_, ep)| *ep == endpoint.id) {
            return Ok(None);
        }
        let d = DeliveryRecord::first(
            (&event.tenant_id, &event.id, &event.event_type),
            &endpoint.id,
            now_ms,
            now_ms,
        );
        event.deliveries.push((d.id.clone(), d.endpoint_id.clone()));
        tx.execute(
            "UPDATE events SET deliveries = $3 WHERE tenant_id = $1 AND id = $2",
            &[&tenant, &event_id, &to_json(&event.deliveries)],
        )
        .await
        .map_err(pg_error)?;
        let mut dl = DeliveryColumns::default();
        dl.push(&d);
        tx.execute(
            INSERT_DELIVERIES,
            &[&dl.ids, &dl.tenants, &dl.endpoints, &dl.records, &dl.events],
        )
        .await
        .map_err(pg_error)?;
        tx.execute(
            INSERT_QUEUE,
            &[&dl.ids, &dl.tenants, &dl.endpoints, &dl.due],
        )
        .await
        .map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        Ok(Some(d))
    }

    /// Expunges an event's payload in one transaction holding the event's
    /// row and its deliveries' rows (so no replay comes between the check and
    /// the write).
    pub(crate) async fn expunge_payload(
        &self,
        tenant: &str,
        event_id: &str,
        now_ms: u64,
    ) -> Result<Expunge, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE tenant_id = $1 AND id = $2 FOR UPDATE"
        );
        let Some(row) = tx
            .query_opt(&sql, &[&tenant, &event_id])
            .await
            .map_err(pg_error)?
        else {
            return Ok(Expunge::Missing);
        };
        let mut event = event_from_row(tenant, &row)?;
        if event.labels.expunged_at_ms.is_some() {
            return Ok(Expunge::Expunged);
        }
        let states = tx
            .query(
                "SELECT state FROM deliveries WHERE tenant_id = $1 AND event_id = $2 FOR UPDATE",
                &[&tenant, &event_id],
            )
            .await
            .map_err(pg_error)?;
        let pending = states
            .iter()
            .filter(|r| r.get::<_, &str>(0) == "pending")
            .count();
        if pending > 0 {
            return Ok(Expunge::Pending(pending));
        }
        event.labels.expunged_at_ms = Some(now_ms);
        event.payload = RawValue::from_string("null".into()).map_err(|e| corrupt("payload", e))?;
        tx.execute(
            "UPDATE events SET payload = $3, meta = $4::text::jsonb WHERE tenant_id = $1 AND id = $2",
            &[&tenant, &event_id, &EXPUNGED, &to_json(&event.labels)],
        )
        .await
        .map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        Ok(Expunge::Expunged)
    }

    pub async fn event_by_uid(
        &self,
        tenant: &str,
        uid: &str,
    ) -> Result<Option<EventRecord>, StoreError> {
        let sql = format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE tenant_id = $1 AND uid = $2
             ORDER BY id DESC LIMIT 1"
        );
        let row = self
            .client()
            .await?
            .query_opt(&sql, &[&tenant, &uid])
            .await
            .map_err(pg_error)?;
        row.as_ref().map(|r| event_from_row(tenant, r)).transpose()
    }

    pub async fn event_payload(
        &self,
        tenant: &str,
        event_id: &str,
    ) -> Result<Option<crate::store::EventBody>, StoreError> {
        if let Some(body) = self.inner.claimed.take_payload(tenant, event_id) {
            return Ok(Some(body));
        }
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT payload, (meta->'trace')::text FROM events WHERE tenant_id = $1 AND id = $2",
                &[&tenant, &event_id],
            )
            .await
            .map_err(pg_error)?;
        row.map(|r| super::claimed::event_body(r.get(0), r.get(1)))
            .transpose()
    }

    pub async fn sweep_idempotency(&self, now_ms: u64) -> Result<usize, StoreError> {
        let client = self.client().await?;
        let Some(cutoff) = now_ms.checked_sub(IDEMPOTENCY_TTL_MS) else {
            return Ok(0);
        };
        let cutoff = ms(cutoff);
        let mut removed = 0;
        loop {
            let n = client
                .execute(
                    "DELETE FROM idempotency WHERE ctid = ANY(ARRAY(
                         SELECT ctid FROM idempotency WHERE created_at_ms <= $1 LIMIT $2))",
                    &[&cutoff, &SWEEP_BATCH],
                )
                .await
                .map_err(pg_error)?;
            removed += n as usize;
            if n < SWEEP_BATCH as u64 {
                return Ok(removed);
            }
        }
    }
}
