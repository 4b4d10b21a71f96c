//! Event reads and the idempotency sweep.

use serde_json::value::RawValue;

use super::{PgStore, error::corrupt, from_json, ms, pg_error, unms};
use crate::store::{EventRecord, IDEMPOTENCY_TTL_MS, StoreError};

/// Idempotency keys forgotten per statement.
const SWEEP_BATCH: i64 = 512;

impl PgStore {
    pub async fn event(&self, tenant: &str, id: &str) -> Result<Option<EventRecord>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT event_type, payload, created_at_ms, deliveries FROM events
                 WHERE tenant_id = $1 AND id = $2",
                &[&tenant, &id],
            )
            .await
            .map_err(pg_error)?;
        let Some(row) = row else { return Ok(None) };
        let payload: String = row.get(1);
        Ok(Some(EventRecord {
            id: id.into(),
            tenant_id: tenant.into(),
            event_type: row.get(0),
            payload: RawValue::from_string(payload).map_err(|e| corrupt("event payload", e))?,
            created_at_ms: unms(row.get(2)),
            deliveries: from_json(row.get(3), "event deliveries")?,
        }))
    }

    pub async fn event_payload(
        &self,
        tenant: &str,
        event_id: &str,
    ) -> Result<Option<String>, StoreError> {
        if let Some(payload) = self.inner.claimed.take_payload(tenant, event_id) {
            return Ok(Some(payload));
        }
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT payload FROM events WHERE tenant_id = $1 AND id = $2",
                &[&tenant, &event_id],
            )
            .await
            .map_err(pg_error)?;
        Ok(row.map(|r| r.get(0)))
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
