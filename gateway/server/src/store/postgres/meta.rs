//! Install-wide settings (`meta`) and singleton grants: what gateways sharing
//! the database agree on one row at a time.

use super::{Grant, NODE_ALIVE_MS, PgStore, SINGLETON_LEASE_MS, Singleton, StoreError, pg_error};

impl PgStore {
    pub async fn meta_get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt("SELECT value FROM meta WHERE key = $1", &[&key])
            .await
            .map_err(pg_error)?;
        Ok(row.map(|r| r.get(0)))
    }

    pub async fn meta_put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.client()
            .await?
            .execute(
                "INSERT INTO meta (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                &[&key, &value],
            )
            .await
            .map_err(pg_error)?;
        Ok(())
    }

    /// Writes `value` unless `key` has one; returns the value kept.
    pub async fn meta_put_first(&self, key: &str, value: &[u8]) -> Result<Vec<u8>, StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                &[&key, &value],
            )
            .await
            .map_err(pg_error)?;
        // A statement of its own: its snapshot sees a winner that committed
        // while the insert waited on it.
        let row = client
            .query_one("SELECT value FROM meta WHERE key = $1", &[&key])
            .await
            .map_err(pg_error)?;
        Ok(row.get(0))
    }

    /// Grants `work` to this node while no other live node holds an unexpired
    /// grant: a holder whose heartbeat stopped (killed, cut off) loses it.
    pub async fn singleton(&self, work: Singleton) -> Result<Option<Grant>, StoreError> {
        let now = crate::clock::Clock::now_ms(&crate::clock::SystemClock) as i64;
        let row = self
            .client()
            .await?
            .query_opt(
                "INSERT INTO singletons (name, holder, until_ms) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, until_ms = EXCLUDED.until_ms
                 WHERE singletons.holder = EXCLUDED.holder OR singletons.until_ms < $4
                    OR NOT EXISTS (SELECT 1 FROM nodes
                                   WHERE node_id = singletons.holder AND last_seen_ms >= $5)
                 RETURNING holder",
                &[
                    &work.name(),
                    &self.inner.node_id,
                    &(now + SINGLETON_LEASE_MS),
                    &now,
                    &(now - NODE_ALIVE_MS as i64),
                ],
            )
            .await
            .map_err(pg_error)?;
        Ok(row.map(|_| Grant { work }))
    }
}
