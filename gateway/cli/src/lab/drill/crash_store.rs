//! The crash drill's store: sled in the data dir, or PostgreSQL in a scratch database
//! (`--store-url`), and, in the long form (`--restart-database`), one restart of the
//! real PostgreSQL server between two kills while ingest goes on.
//!
//! On PostgreSQL every gateway (each restart too) runs on the same scratch database
//! with a short `lease_margin`, so the work a killed gateway had claimed comes back
//! within the endpoint timeout plus that margin. The scratch database is dropped when
//! the run's [`RunStore`] is, however the drill ends.

use std::fmt;
use std::time::{Duration, Instant};

use clap::Args;
use hookgate_server::lab::ScratchDatabase;

use super::{DrillError, secs};
use crate::lab::child_gateway::GatewaySpec;

/// The lease margin of drilled gateways on PostgreSQL: short, so that a killed
/// gateway's claims come back quickly.
pub(super) const LEASE_MARGIN: Duration = Duration::from_secs(2);
/// How often the ingest counts are read during the restart.
const SAMPLE_EVERY: Duration = Duration::from_millis(5);
/// How long the server may take to come back, and then the gateway to acknowledge.
const BACK_LIMIT: Duration = Duration::from_secs(60);

/// Store options of `hookgate drill crash`.
#[derive(Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// Run the gateways on PostgreSQL: a scratch database made on this server (a URL
    /// of any database on it) and dropped afterwards, instead of sled.
    #[arg(long, value_name = "URL")]
    store_url: Option<String>,
    /// Also restart the PostgreSQL server --store-url names once, between two
    /// kills, with `pg_ctlcluster ... restart`: the cluster pg_lsclusters lists on
    /// the URL's port, on this machine (needs --kills 2 or more).
    #[arg(long, requires = "store_url")]
    restart_database: bool,
}

impl StoreArgs {
    /// The store these options describe.
    pub fn store(&self) -> CrashStore {
        match &self.store_url {
            None => CrashStore::Sled,
            Some(server) => CrashStore::Postgres {
                server: server.clone(),
                restart_database: self.restart_database,
            },
        }
    }
}

/// Where the drilled gateways keep their state.
#[derive(Debug, Clone, Default)]
pub enum CrashStore {
    /// sled, in the data dir.
    #[default]
    Sled,
    /// A scratch database on the PostgreSQL server at `server`.
    Postgres {
        server: String,
        /// Restart the machine's PostgreSQL server once in the middle of the drill.
        restart_database: bool,
    },
}

impl CrashStore {
    /// A few words for the drill's one-line description.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::Sled => "on sled",
            Self::Postgres {
                restart_database: false,
                ..
            } => "on PostgreSQL",
            Self::Postgres {
                restart_database: true,
                ..
            } => "on PostgreSQL, restarting its server once",
        }
    }
}

/// The store of one run: the scratch database lives (and the gateways use it) as
/// long as this does.
pub(super) struct RunStore {
    scratch: Option<ScratchDatabase>,
    restart_database: bool,
}

impl RunStore {
    /// Makes the scratch database, if any, and points `spec` at it.
    pub(super) async fn prepare(
        store: &CrashStore,
        kills: u32,
        spec: &mut GatewaySpec,
    ) -> Result<Self, DrillError> {
        let CrashStore::Postgres {
            server,
            restart_database,
        } = store
        else {
            return Ok(Self {
                scratch: None,
                restart_database: false,
            });
        };
        if *restart_database && kills < 2 {
            return Err(DrillError::Database(
                "--restart-database needs --kills 2 or more: the restart goes between two kills"
                    .to_owned(),
            ));
        }
        let scratch = ScratchDatabase::create_on(server)
            .await
            .map_err(|e| DrillError::Database(e.to_string()))?;
        spec.set("HOOKGATE_STORE__BACKEND", "postgres")
            .set("HOOKGATE_STORE__URL", &scratch.url)
            .set(
                "HOOKGATE_STORE__LEASE_MARGIN",
                &LEASE_MARGIN.as_millis().to_string(),
            );
        Ok(Self {
            scratch: Some(scratch),
            restart_database: *restart_database,
        })
    }

    /// Whether the database server is restarted before kill `kill` (0-based) of
    /// `kills`: once, in the middle, with kills on both sides.
    pub(super) fn restart_before(&self, kill: u32, kills: u32) -> bool {
        self.restart_database && kill == kills / 2
    }

    /// Queue entries leased by `node_id`, read from the database (`None` on sled,
    /// or when the database cannot be read): after a SIGKILL, the attempts the
    /// node held, which may all be made again.
    pub(super) async fn leased_by(&self, node_id: &str) -> Option<u64> {
        let scratch = self.scratch.as_ref()?;
        super::crash_pg::leased_by(&scratch.url, node_id).await
    }

    /// What the report says about the store (the restart, if any, is added later).
    pub(super) fn outcome(&self) -> StoreOutcome {
        StoreOutcome {
            database: self.scratch.as_ref().map(|s| s.name.clone()),
            restart: None,
        }
    }

    /// Restarts the PostgreSQL server while ingest goes on, and measures how long it
    /// was down, when the gateway acknowledged again and how many ingest calls were
    /// refused until then. `counts` gives the (acknowledged, unacknowledged) sends so
    /// far.
    pub(super) async fn restart_database(
        &self,
        counts: impl Fn() -> (usize, u64),
    ) -> Result<DbRestart, DrillError> {
        let Some(scratch) = &self.scratch else {
            return Err(DrillError::Database(
                "no PostgreSQL database to restart".to_owned(),
            ));
        };
        let others = super::crash_pg::other_sessions(&scratch.url, &scratch.name).await;
        let url = scratch.url.clone();
        let probe =
            tokio::spawn(async move { super::crash_pg::watch_downtime(&url, BACK_LIMIT).await });
        let server = scratch.url.clone();
        let command = tokio::task::spawn_blocking(move || super::crash_pg::restart_server(&server));
        // The counts are sampled throughout: the command returns well after the
        // server is back (pg_ctl polls), so the gateway's recovery is read off them.
        let mut samples = vec![(Instant::now(), counts())];
        while !command.is_finished() {
            tokio::time::sleep(SAMPLE_EVERY).await;
            samples.push((Instant::now(), counts()));
        }
        let joined = |e: tokio::task::JoinError| DrillError::Database(format!("the restart: {e}"));
        let command = match command.await.map_err(joined)? {
            Ok(took) => took,
            Err(e) => {
                probe.abort();
                return Err(e);
            }
        };
        while !probe.is_finished() {
            tokio::time::sleep(SAMPLE_EVERY).await;
            samples.push((Instant::now(), counts()));
        }
        let (down, up_at) = probe.await.map_err(joined)??;
        let acked_at_up = samples
            .iter()
            .take_while(|(t, _)| *t <= up_at)
            .last()
            .map_or(0, |(_, (acked, _))| *acked);
        let back_by = Instant::now() + BACK_LIMIT;
        let again = loop {
            if let Some(found) = samples
                .iter()
                .find(|(t, (a, _))| *t > up_at && *a > acked_at_up)
            {
                break Some(*found);
            }
            if Instant::now() >= back_by {
                break None;
            }
            tokio::time::sleep(SAMPLE_EVERY).await;
            samples.push((Instant::now(), counts()));
        };
        let unacked_before = samples[0].1.1;
        let unacked_then = again.map_or_else(|| counts().1, |(_, (_, u))| u);
        Ok(DbRestart {
            others,
            command,
            down,
            acked_again: again.map(|(t, _)| t.saturating_duration_since(up_at)),
            refused: unacked_then.saturating_sub(unacked_before),
        })
    }
}

/// The database restart in the middle of the drill.
#[derive(Debug, Clone)]
pub struct DbRestart {
    /// Client connections to other databases just before the restart (`None`:
    /// unknown); the restart cut them too.
    pub others: Option<i64>,
    /// How long the restart command took.
    pub command: Duration,
    /// From the first failed probe of the database to the first answer after it.
    pub down: Duration,
    /// From the database answering again until the gateway acknowledged an event
    /// again (`None`: not within a minute).
    pub acked_again: Option<Duration>,
    /// Ingest calls not acknowledged from the restart's start until then.
    pub refused: u64,
}

/// What the report says about the store.
#[derive(Debug, Clone, Default)]
pub struct StoreOutcome {
    /// The scratch database (`None`: sled).
    pub database: Option<String>,
    /// The database restart, when there was one.
    pub restart: Option<DbRestart>,
}

impl StoreOutcome {
    /// The backend's name.
    pub fn backend(&self) -> &'static str {
        if self.database.is_some() {
            "postgres"
        } else {
            "sled"
        }
    }

    /// The checks the store adds: the gateway works again after a database restart.
    pub(super) fn violations(&self) -> Vec<String> {
        match &self.restart {
            Some(r) if r.acked_again.is_none() => vec![format!(
                "the gateway acknowledged no event within {} of the database restart",
                secs(BACK_LIMIT)
            )],
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for StoreOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.database {
            None => writeln!(f, "  backend            sled")?,
            Some(name) => writeln!(
                f,
                "  backend            postgres (scratch database {name}, lease_margin {})",
                secs(LEASE_MARGIN)
            )?,
        }
        if let Some(r) = &self.restart {
            let again = r
                .acked_again
                .map_or("never".to_owned(), |d| format!("{} ms", d.as_millis()));
            writeln!(
                f,
                "  database restart   down {} ms (restart command {}); {} ingest calls refused; first 202 after it was back: {again}",
                r.down.as_millis(),
                secs(r.command),
                r.refused
            )?;
            if let Some(n) = r.others.filter(|n| *n > 0) {
                writeln!(
                    f,
                    "  database restart   also cut {n} connections to other databases of the server"
                )?;
            }
        }
        Ok(())
    }
}
