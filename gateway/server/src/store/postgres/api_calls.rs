//! Idempotent API calls (see `store/api_calls.rs`): rows of the `idempotency`
//! table, scope in `tenant_id`, the fingerprint in `body_sha256`, the answer
//! as JSON in `response` (empty while the call runs). A claim is one upsert
//! that takes the row only when it is free, expired or abandoned.

use super::{PgStore, from_json, ms, pg_error, to_json};
use crate::store::api_calls::CLAIM_HOLD_MS;
use crate::store::{ApiCall, ApiCallRecord, IDEMPOTENCY_TTL_MS, StoreError};

impl PgStore {
    pub(crate) async fn claim_api_call(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now_ms: u64,
    ) -> Result<ApiCall, StoreError> {
        let client = self.client().await?;
        let claimed = client
            .query_opt(
                "INSERT INTO idempotency (tenant_id, key, body_sha256, response, created_at_ms)
                 VALUES ($1, $2, $3, '', $4)
                 ON CONFLICT (tenant_id, key) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256,
                     response = '', created_at_ms = EXCLUDED.created_at_ms
                 WHERE idempotency.created_at_ms + $5 <= EXCLUDED.created_at_ms
                    OR (idempotency.response = '' AND idempotency.created_at_ms + $6 <= EXCLUDED.created_at_ms)
                 RETURNING 1",
                &[&scope, &key, &fingerprint, &ms(now_ms), &ms(IDEMPOTENCY_TTL_MS), &ms(CLAIM_HOLD_MS)],
            )
            .await
            .map_err(pg_error)?;
        if claimed.is_some() {
            return Ok(ApiCall::Claimed);
        }
        let row = client
            .query_one(
                "SELECT body_sha256, response, created_at_ms FROM idempotency
                 WHERE tenant_id = $1 AND key = $2",
                &[&scope, &key],
            )
            .await
            .map_err(pg_error)?;
        let response: String = row.get(1);
        let found = ApiCallRecord {
            fingerprint: row.get(0),
            answer: if response.is_empty() {
                None
            } else {
                Some(from_json(&response, "kept answer")?)
            },
            created_at_ms: super::unms(row.get(2)),
        };
        // Held by a live record (else the upsert would have taken it).
        Ok(found.meets(fingerprint, now_ms).unwrap_or(ApiCall::Running))
    }

    pub(crate) async fn answer_api_call(
        &self,
        scope: &str,
        key: &str,
        record: Option<&ApiCallRecord>,
    ) -> Result<(), StoreError> {
        let client = self.client().await?;
        match record.and_then(|r| r.answer.as_ref().map(|a| (r, a))) {
            Some((r, answer)) => {
                let kept = to_json(answer);
                client
                    .execute(
                        "UPDATE idempotency SET response = $3, body_sha256 = $4
                         WHERE tenant_id = $1 AND key = $2",
                        &[&scope, &key, &kept, &r.fingerprint],
                    )
                    .await
            }
            None => {
                client
                    .execute(
                        "DELETE FROM idempotency WHERE tenant_id = $1 AND key = $2",
                        &[&scope, &key],
                    )
                    .await
            }
        }
        .map_err(pg_error)?;
        Ok(())
    }
}
