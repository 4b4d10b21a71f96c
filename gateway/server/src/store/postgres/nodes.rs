//! Which gateways share the database: each one writes a heartbeat row every
//! couple of seconds and removes it when it stops; `GET /v1/cluster` lists
//! those heard from lately, with the leases each holds.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{PgStore, ms, pg_error, unms};
use crate::clock::{Clock, SystemClock};
use crate::store::{NODE_ALIVE_MS, NodeRecord, StoreError};

/// How often a node writes its heartbeat.
const HEARTBEAT: Duration = Duration::from_secs(2);

/// Rows of nodes silent this long are removed by whoever beats next.
const FORGET_AFTER_MS: i64 = 24 * 60 * 60 * 1000;

impl PgStore {
    /// Writes this node's heartbeat.
    pub(super) async fn heartbeat(&self, started_ms: u64) -> Result<(), StoreError> {
        let now = ms(SystemClock.now_ms());
        // One statement: the beat, and rows of nodes long gone removed.
        self.client()
            .await?
            .execute(
                "WITH gone AS (DELETE FROM nodes WHERE last_seen_ms < $5)
                 INSERT INTO nodes (node_id, started_ms, last_seen_ms, version)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (node_id) DO UPDATE SET last_seen_ms = EXCLUDED.last_seen_ms,
                     started_ms = EXCLUDED.started_ms, version = EXCLUDED.version",
                &[
                    &self.inner.node_id,
                    &ms(started_ms),
                    &now,
                    &env!("CARGO_PKG_VERSION"),
                    &(now - FORGET_AFTER_MS),
                ],
            )
            .await
            .map_err(pg_error)?;
        Ok(())
    }

    /// See [`crate::store::Store::cluster_nodes`].
    pub async fn cluster_nodes(&self, now_ms: u64) -> Result<Vec<NodeRecord>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT n.node_id, n.started_ms, n.last_seen_ms, n.version, coalesce(l.n, 0)
                 FROM nodes n LEFT JOIN (
                     SELECT leased_by, count(*) AS n FROM queue
                     WHERE lease_token IS NOT NULL AND due_ms > $1 GROUP BY leased_by
                 ) l ON l.leased_by = n.node_id
                 WHERE n.last_seen_ms >= $2 ORDER BY n.node_id",
                &[&ms(now_ms), &ms(now_ms.saturating_sub(NODE_ALIVE_MS))],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows
            .iter()
            .map(|r| NodeRecord {
                node_id: r.get(0),
                started_at_ms: unms(r.get(1)),
                last_seen_at_ms: unms(r.get(2)),
                version: r.get(3),
                leases: u64::try_from(r.get::<_, i64>(4)).unwrap_or(0),
            })
            .collect())
    }

    /// Beats until `stop`, then removes this node's row and gives up its
    /// singleton grants, so that another node takes them at once.
    pub(super) async fn beat_until(self, stop: CancellationToken) {
        let started = SystemClock.now_ms();
        let mut tick = tokio::time::interval(HEARTBEAT);
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                _ = tick.tick() => {
                    if let Err(e) = super::stats::counted(self.heartbeat(started).await) {
                        tracing::debug!(error = %e, "cannot write the node's heartbeat");
                    }
                }
            }
        }
        let gone = async {
            let client = self.client().await?;
            client
                .execute(
                    "WITH released AS (DELETE FROM singletons WHERE holder = $1)
                     DELETE FROM nodes WHERE node_id = $1",
                    &[&self.inner.node_id],
                )
                .await
                .map_err(pg_error)
        };
        if let Err(e) = super::stats::counted(gone.await) {
            tracing::debug!(error = %e, "cannot remove the node's heartbeat");
        }
    }
}

#[cfg(test)]
mod tests;
