//! The gateway vacuums its own queue. Every delivery inserts, claims and
//! deletes a `queue` row, so the table's indexes fill with dead entries at the
//! oldest due times, exactly where every claim starts its scan: on a churned
//! queue a claim of 10 rows read 34 071 buffers, and 24 once vacuumed
//! (BENCHMARKS.md, "What one delivery writes on PostgreSQL"). Autovacuum may be
//! off or behind, so delivery speed must not depend on it: as singleton work,
//! the queue is vacuumed whenever its dead rows outnumber a fifth of its live
//! ones (and at least [`DEAD_FLOOR`]). A plain `VACUUM` (no `ANALYZE`) leaves
//! the column statistics alone, so no plan is made from an empty moment.

use super::{PgStore, StoreError, pg_error};

/// Dead rows below this are left to the next look: vacuuming costs a pass over
/// the table and its indexes.
const DEAD_FLOOR: i64 = 2_000;

impl PgStore {
    /// Vacuums `queue` if it has churned since the last time; true if it did.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn vacuum_queue_if_churned(&self) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                // Only the table's owner may vacuum it (anyone else gets a
                // warning, not an error): a user that is not is left to autovacuum.
                "SELECT s.n_dead_tup, s.n_live_tup, pg_has_role(c.relowner, 'USAGE')
                 FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
                 WHERE s.relid = to_regclass('queue')",
                &[],
            )
            .await
            .map_err(pg_error)?;
        let Some(row) = row else {
            return Ok(false);
        };
        let (dead, live, owner): (i64, i64, bool) = (row.get(0), row.get(1), row.get(2));
        if !owner || dead < DEAD_FLOOR.max(live / 5) {
            return Ok(false);
        }
        client
            .batch_execute("VACUUM (SKIP_LOCKED) queue")
            .await
            .map_err(pg_error)?;
        tracing::debug!(dead, live, "queue vacuumed");
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::testing::TestStore;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_churned_queue_is_vacuumed_and_a_quiet_one_is_left_alone() {
        let t = TestStore::postgres().await;
        let pg = t.store.postgres().unwrap();
        assert!(
            !pg.vacuum_queue_if_churned().await.unwrap(),
            "nothing churned"
        );
        let client = pg.client().await.unwrap();
        client
            .batch_execute(
                "INSERT INTO queue (delivery_id, tenant_id, endpoint_id, lane, due_ms,
                     scheduled_ms, series, attempts)
                 SELECT 'd' || g, 't', 'ep', 0, g, g, 0, 0 FROM generate_series(1, 5000) g;
                 DELETE FROM queue;",
            )
            .await
            .unwrap();
        // A backend's counts reach the shared statistics when it idles: at most
        // 10 s later (PostgreSQL's idle flush interval).
        let mut vacuumed = false;
        for _ in 0..150 {
            if pg.vacuum_queue_if_churned().await.unwrap() {
                vacuumed = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(vacuumed, "5 000 dead rows and none live: vacuumed");
        let dead: i64 = client
            .query_one(
                "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = to_regclass('queue')",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert!(dead < 2_000, "{dead} dead rows left");
    }
}
