//! Endpoint state shared by every gateway: one `endpoint_runtime` row per
//! endpoint, holding the breaker and the rate window. A turn takes the row
//! `FOR UPDATE SKIP LOCKED`, so one node at a time plans an endpoint's turn
//! while the others move on; it counts the endpoint's unexpired leases on every
//! node, claims what the plan allows and writes the row back, in one transaction.

use deadpool_postgres::GenericClient;

use super::statements::LIVE_LEASES;
use super::{PgStore, from_json, ms, pg_error, to_json};
use crate::store::{ClaimedTurn, Lane, RuntimeRecord, StoreError, TurnPlan};

/// The row, held for this transaction unless another holds it. `$1` endpoint.
const LOCK_RUNTIME: &str = "SELECT record FROM endpoint_runtime
     WHERE endpoint_id = $1 FOR UPDATE SKIP LOCKED";

/// Creates the row of an endpoint that has none yet, holding it.
const CREATE_RUNTIME: &str = "INSERT INTO endpoint_runtime (endpoint_id, record)
     VALUES ($1, '{}') ON CONFLICT (endpoint_id) DO NOTHING";

// The endpoint's live leases (`statements::LIVE_LEASES`) are counted in a
// statement of its own, after the lock, so that its snapshot sees every claim
// committed before the lock was taken (a snapshot taken with the lock's
// statement may predate the last holder's commit).

const SAVE_RUNTIME: &str = "UPDATE endpoint_runtime SET record = $2 WHERE endpoint_id = $1";

impl PgStore {
    /// See [`crate::store::Store::claim_turn`].
    pub async fn claim_turn(
        &self,
        endpoint_id: &str,
        now_ms: u64,
        plan: &mut dyn TurnPlan,
    ) -> Result<ClaimedTurn, StoreError> {
        // This process's clock at `now_ms`, near enough (read before any wait).
        let anchor = std::time::Instant::now();
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let now = ms(now_ms);
        let lock = tx.prepare_cached(LOCK_RUNTIME).await.map_err(pg_error)?;
        let locked = tx.query_opt(&lock, &[&endpoint_id]).await;
        let mut runtime = match locked.map_err(pg_error)? {
            Some(row) => decode(row.get(0))?,
            None => {
                let created = tx
                    .execute(CREATE_RUNTIME, &[&endpoint_id])
                    .await
                    .map_err(pg_error)?;
                if created == 0 {
                    return Ok(ClaimedTurn::Busy);
                }
                RuntimeRecord::default()
            }
        };
        let count = tx.prepare_cached(LIVE_LEASES).await.map_err(pg_error)?;
        let hold = ms(self.inner.paused_node_hold_ms);
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
            [&endpoint_id, &now, &self.inner.node_id, &hold];
        let row = tx.query_one(&count, &params).await;
        let row = row.map_err(pg_error)?;
        let live: i64 = row.get(0);
        let timeout_ms: Option<i64> = row.get(1);
        let lease_until_ms = now_ms
            .saturating_add(self.inner.lease_margin_ms)
            .saturating_add(timeout_ms.map_or(0, super::unms));
        let before = runtime.clone();
        let allowed = plan.allowed(&runtime, usize::try_from(live).unwrap_or(0));
        let leases = self
            .claim_lanes(&tx, endpoint_id, now_ms, allowed, anchor)
            .await?;
        plan.started(&mut runtime, leases.len(), lease_until_ms);
        if runtime != before {
            save(&tx, endpoint_id, &runtime).await?;
        }
        tx.commit().await.map_err(pg_error)?;
        Ok(ClaimedTurn::Claimed { leases, runtime })
    }

    /// Up to `allowed` due rows, half from each lane, then more first attempts if
    /// retries fell short; first attempts and retries interleaved.
    async fn claim_lanes(
        &self,
        tx: &impl GenericClient,
        endpoint_id: &str,
        now_ms: u64,
        allowed: usize,
        anchor: std::time::Instant,
    ) -> Result<Vec<crate::store::Lease>, StoreError> {
        let half = allowed.div_ceil(2);
        let mut first = self
            .claim_rows(tx, Lane::First, endpoint_id, now_ms, half, anchor)
            .await?;
        let retry_room = allowed - first.len();
        let retry = self
            .claim_rows(tx, Lane::Retry, endpoint_id, now_ms, retry_room, anchor)
            .await?;
        let room = allowed - first.len() - retry.len();
        if room > 0 && first.len() == half {
            let more = self.claim_rows(tx, Lane::First, endpoint_id, now_ms, room, anchor);
            first.extend(more.await?);
        }
        Ok(crate::store::interleave(first, retry))
    }

    /// See [`crate::store::Store::update_runtime`].
    pub async fn update_runtime<R: Send>(
        &self,
        endpoint_id: &str,
        change: impl FnOnce(&mut RuntimeRecord) -> R + Send,
    ) -> Result<R, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let mut runtime = lock_runtime(&tx, endpoint_id).await?;
        let before = runtime.clone();
        let answer = change(&mut runtime);
        if runtime != before {
            save(&tx, endpoint_id, &runtime).await?;
        }
        tx.commit().await.map_err(pg_error)?;
        Ok(answer)
    }
}

/// The endpoint's shared state, locked for `tx` (waiting for any node
/// planning it), created if no turn has planned the endpoint yet.
pub(super) async fn lock_runtime(
    tx: &impl GenericClient,
    endpoint_id: &str,
) -> Result<RuntimeRecord, StoreError> {
    let lock = "SELECT record FROM endpoint_runtime WHERE endpoint_id = $1 FOR UPDATE";
    let row = match tx
        .query_opt(lock, &[&endpoint_id])
        .await
        .map_err(pg_error)?
    {
        Some(row) => row,
        // The first change of an endpoint no turn has planned yet.
        None => {
            tx.execute(CREATE_RUNTIME, &[&endpoint_id])
                .await
                .map_err(pg_error)?;
            tx.query_one(lock, &[&endpoint_id])
                .await
                .map_err(pg_error)?
        }
    };
    decode(row.get(0))
}

fn decode(text: &str) -> Result<RuntimeRecord, StoreError> {
    from_json(text, "endpoint runtime")
}

pub(super) async fn save(
    tx: &impl GenericClient,
    endpoint_id: &str,
    runtime: &RuntimeRecord,
) -> Result<(), StoreError> {
    let text = to_json(runtime);
    tx.execute(SAVE_RUNTIME, &[&endpoint_id, &text])
        .await
        .map_err(pg_error)?;
    Ok(())
}
