//! The gateway keeps its own tables fit for the hot path, as singleton work,
//! because autovacuum may be off or behind and delivery speed must not depend
//! on it.
//!
//! - **The queue is vacuumed when churned.** Every delivery inserts, claims and
//!   deletes a `queue` row, so the table's indexes fill with dead entries at
//!   the oldest due times, exactly where every claim starts its scan: on a
//!   churned queue a claim of 10 rows read 34 071 buffers, and 24 once vacuumed
//!   (BENCHMARKS.md, "What one delivery writes on PostgreSQL"). It is vacuumed
//!   whenever its dead rows outnumber a fifth of its live ones (and at least
//!   [`DEAD_FLOOR`]).
//! - **A table that outgrew its statistics is analyzed.** A pooled connection
//!   keeps the plan it made for a statement; one made while a table was empty
//!   (a fresh install, a drained queue that a `VACUUM` or `ANALYZE` then
//!   measured) scans the whole table once it fills: a claim on a queue of
//!   30 000 rows took 427 ms instead of 1 ms. `ANALYZE` records the table's
//!   size, and PostgreSQL drops every cached plan that reads the table, so the
//!   next execution plans again from the new size.

use super::{PgStore, StoreError, pg_error};

/// Dead rows below this are left to the next look: vacuuming costs a pass over
/// the table and its indexes.
const DEAD_FLOOR: i64 = 2_000;

/// Live rows below this never make a table count as outgrown: any plan is
/// cheap on a table this small.
const OUTGROWN_FLOOR: f64 = 1_000.0;

/// A table has outgrown its statistics when it holds this many times the
/// rows they say.
const OUTGROWN_FACTOR: f64 = 4.0;

/// The tables the hot path plans against, by name as the schema spells it.
const HOT_TABLES: [&str; 5] = ["queue", "deliveries", "events", "attempts", "endpoints"];

/// What one round of upkeep did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Upkeep {
    /// The queue was vacuumed.
    pub(crate) vacuumed: bool,
    /// The tables analyzed because they outgrew their statistics.
    pub(crate) analyzed: Vec<&'static str>,
}

/// One hot table as the statistics see it.
struct TableState {
    name: &'static str,
    live: i64,
    dead: i64,
    /// The row count the planner's statistics hold (-1: never measured).
    planned_rows: f32,
    /// Only a table's owner may vacuum or analyze it (anyone else gets a
    /// warning, not an error): a user that is not is left to autovacuum.
    owner: bool,
}

impl TableState {
    fn churned(&self) -> bool {
        self.name == "queue" && self.dead >= DEAD_FLOOR.max(self.live / 5)
    }

    fn outgrown(&self) -> bool {
        let live = self.live as f64;
        live >= OUTGROWN_FLOOR && live > OUTGROWN_FACTOR * f64::from(self.planned_rows.max(0.0))
    }
}

impl PgStore {
    /// Vacuums `queue` if it has churned, and analyzes every hot table that has
    /// outgrown its statistics.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) async fn tidy_tables(&self) -> Result<Upkeep, StoreError> {
        let client = self.client().await?;
        let names: Vec<&str> = HOT_TABLES.to_vec();
        let rows = client
            .query(
                "SELECT c.relname::text, s.n_live_tup, s.n_dead_tup, c.reltuples,
                        pg_has_role(c.relowner, 'USAGE')
                 FROM unnest($1::text[]) AS t(name)
                 JOIN pg_stat_user_tables s ON s.relid = to_regclass(t.name)
                 JOIN pg_class c ON c.oid = s.relid",
                &[&names],
            )
            .await
            .map_err(pg_error)?;
        let mut upkeep = Upkeep::default();
        for row in rows {
            let found: String = row.get(0);
            // The name is one of ours, never text from the database.
            let Some(name) = HOT_TABLES.into_iter().find(|n| *n == found) else {
                continue;
            };
            let table = TableState {
                name,
                live: row.get(1),
                dead: row.get(2),
                planned_rows: row.get(3),
                owner: row.get(4),
            };
            if !table.owner {
                continue;
            }
            if table.churned() {
                let sql = format!("VACUUM (SKIP_LOCKED) {name}");
                client.batch_execute(&sql).await.map_err(pg_error)?;
                tracing::debug!(dead = table.dead, live = table.live, "queue vacuumed");
                upkeep.vacuumed = true;
            }
            if table.outgrown() {
                let sql = format!("ANALYZE (SKIP_LOCKED) {name}");
                client.batch_execute(&sql).await.map_err(pg_error)?;
                tracing::debug!(
                    table = name,
                    live = table.live,
                    planned = table.planned_rows,
                    "table analyzed: it outgrew its statistics"
                );
                upkeep.analyzed.push(name);
            }
        }
        Ok(upkeep)
    }
}

#[cfg(test)]
#[path = "table_upkeep_tests.rs"]
mod tests;
