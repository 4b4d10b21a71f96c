//! What `hookgate bench e2e` reads outside the gateway: the whole machine's CPU
//! time as `/proc/stat` counts it, and the live and dead tuples PostgreSQL's
//! statistics hold for the queue's tables.

use std::fmt;

use anyhow::Context as _;
use tokio_postgres::NoTls;

/// `/proc/stat`'s unit: USER_HZ, 100 on every Linux architecture this runs on.
const TICKS_PER_S: f64 = 100.0;

/// The machine's busy CPU time so far, in ticks (all CPUs together).
#[derive(Clone, Copy)]
pub(super) struct Cpu(u64);

impl Cpu {
    /// Reads the first (`cpu`) line of `/proc/stat`: user, nice, system, irq,
    /// softirq and steal count as busy; idle and iowait do not.
    pub(super) fn now() -> anyhow::Result<Self> {
        let stat = std::fs::read_to_string("/proc/stat").context("reading /proc/stat")?;
        let line = stat.lines().next().unwrap_or_default();
        let ticks: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|t| t.parse().unwrap_or(0))
            .collect();
        if ticks.len() < 8 {
            anyhow::bail!("/proc/stat's first line is not as expected: {line}");
        }
        // user nice system idle iowait irq softirq steal
        let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7];
        Ok(Self(busy))
    }

    /// CPU seconds spent since `earlier`.
    pub(super) fn since(self, earlier: Cpu) -> f64 {
        self.0.saturating_sub(earlier.0) as f64 / TICKS_PER_S
    }
}

/// Live and dead tuples of one table, as `pg_stat_user_tables` has them.
#[derive(Clone, Copy, Default)]
pub(super) struct Tuples {
    live: i64,
    dead: i64,
}

impl fmt::Display for Tuples {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.live, self.dead)
    }
}

/// The tuples of `queue` and of `deliveries`.
#[derive(Clone, Copy, Default)]
pub(super) struct QueueTuples {
    pub(super) queue: Tuples,
    pub(super) deliveries: Tuples,
}

/// Reads them from the database at `url`. The statistics lag the writes by
/// up to a second or so (PostgreSQL flushes them in batches).
pub(super) async fn queue_tuples(url: &str) -> anyhow::Result<QueueTuples> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .with_context(|| format!("connecting to {url}"))?;
    let driver = tokio::spawn(connection);
    let rows = client
        .query(
            "SELECT relname::text, n_live_tup, n_dead_tup FROM pg_stat_user_tables \
             WHERE relname IN ('queue', 'deliveries')",
            &[],
        )
        .await
        .context("reading pg_stat_user_tables")?;
    let mut out = QueueTuples::default();
    for row in rows {
        let tuples = Tuples {
            live: row.get(1),
            dead: row.get(2),
        };
        match row.get::<_, String>(0).as_str() {
            "queue" => out.queue = tuples,
            _ => out.deliveries = tuples,
        }
    }
    drop(client);
    let _ = driver.await;
    Ok(out)
}
