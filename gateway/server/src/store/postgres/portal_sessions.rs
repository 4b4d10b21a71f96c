//! Portal sessions: one row per token hash, read on every request that
//! presents one, so a revocation holds on every gateway once it commits.

use super::{PgStore, from_json, pg_error, to_json};
use crate::ids::TenantId;
use crate::store::{PortalSessionRecord, StoreError};

impl PgStore {
    pub(crate) async fn create_portal_session(
        &self,
        rec: &PortalSessionRecord,
    ) -> Result<(), StoreError> {
        let expires = i64::try_from(rec.expires_at_ms).unwrap_or(i64::MAX);
        self.client()
            .await?
            .execute(
                "INSERT INTO portal_sessions (token_hash, tenant_id, expires_at_ms, record)
                 VALUES ($1, $2, $3, $4)",
                &[
                    &rec.token_hash,
                    &rec.tenant_id.as_str(),
                    &expires,
                    &to_json(rec),
                ],
            )
            .await
            .map_err(pg_error)?;
        Ok(())
    }

    pub(crate) async fn portal_session(
        &self,
        hash: &str,
    ) -> Result<Option<PortalSessionRecord>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT record FROM portal_sessions WHERE token_hash = $1",
                &[&hash],
            )
            .await
            .map_err(pg_error)?;
        row.map(|r| from_json(r.get(0), "portal session"))
            .transpose()
    }

    pub(crate) async fn end_portal_session(
        &self,
        rec: &PortalSessionRecord,
    ) -> Result<bool, StoreError> {
        let removed = self
            .client()
            .await?
            .execute(
                "DELETE FROM portal_sessions WHERE token_hash = $1",
                &[&rec.token_hash],
            )
            .await
            .map_err(pg_error)?;
        Ok(removed == 1)
    }

    pub(crate) async fn revoke_portal_sessions(&self, t: &TenantId) -> Result<usize, StoreError> {
        let removed = self
            .client()
            .await?
            .execute(
                "DELETE FROM portal_sessions WHERE tenant_id = $1",
                &[&t.as_str()],
            )
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(removed).unwrap_or(usize::MAX))
    }

    pub(crate) async fn sweep_portal_sessions(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        let removed = self
            .client()
            .await?
            .execute(
                "WITH doomed AS (SELECT token_hash FROM portal_sessions
                     WHERE expires_at_ms < $1 LIMIT $2)
                 DELETE FROM portal_sessions WHERE token_hash IN (SELECT token_hash FROM doomed)",
                &[&now, &(limit as i64)],
            )
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(removed).unwrap_or(usize::MAX))
    }
}
