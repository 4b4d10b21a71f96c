//! The PostgreSQL backend: the store on a database that operators already run,
//! and that several gateways can share.
//!
//! Connections come from a deadpool pool; no transaction is ever held open
//! across an HTTP request. Due work is claimed with `FOR UPDATE SKIP LOCKED`
//! and fenced by a lease token (`schedule`); ingests are batched into one
//! transaction per round (`ingest`); wake-ups travel by `LISTEN/NOTIFY`
//! with a poll of the queue as the backstop (`listen`).

mod api_calls;
mod attempts;
mod cache;
mod claimed;
mod columns;
mod deliveries;
mod endpoint_stats;
mod endpoints;
mod error;
mod event_types;
mod events;
mod id_columns;
mod ingest;
mod listen;
mod meta;
pub(crate) mod migrate;
mod nodes;
mod outcome_batch;
mod outcomes;
mod plugins;
mod portal_sessions;
#[cfg(feature = "lab")]
pub(crate) mod reference;
#[cfg(feature = "lab")]
mod reference_deliver;
mod replay;
mod retention;
mod rows;
mod runtime;
mod schedule;
pub(crate) mod statements;
pub(crate) mod stats;
mod table_upkeep;
mod tasks;
mod tenants;

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_util::sync::CancellationToken;

use super::{ChangeFeed, Grant, NODE_ALIVE_MS, Singleton, StoreError};
use crate::config::StoreConfig;
pub(crate) use crate::pg_target::PgTarget;
pub(crate) use error::pg_error;
use error::pool_error;
use rows::{from_json, ms, retry_conflicts, serializable, to_json, unms};

/// How long a connection attempt may take before the call answers unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a call waits for a free pooled connection.
const POOL_WAIT: Duration = Duration::from_secs(5);

/// A singleton grant lasts this long; the holder renews it each round.
const SINGLETON_LEASE_MS: i64 = 60_000;

/// A handle to the PostgreSQL backend; cheap to clone.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    /// Connections that commit without waiting for the disk, for outcome
    /// writes (an outcome lost in a crash is only an attempt made again).
    relaxed: Pool,
    /// Delivery records read by claims, until their workers ask.
    claimed: claimed::ClaimedRecords,
    /// API keys and endpoint lists, as every ingest reads them.
    cache: cache::ReadCache,
    /// How long each operation held its connection.
    operation_seconds: prometheus_client::metrics::histogram::Histogram,
    /// Claims and ingest batches, and how much each took.
    batches: stats::BatchCounters,
    /// This process, in leases (`leased_by`) and singleton grants.
    node_id: String,
    lease_margin_ms: u64,
    /// `store.paused_node_hold`: how long a paused node's expired lease still
    /// holds its place (`statements.rs`).
    paused_node_hold_ms: u64,
    ingest: ingest::Batcher,
    outcomes: outcome_batch::OutcomeBatcher,
}

impl PgStore {
    /// Connects, applies the schema's migrations and starts the background work
    /// (ingest batching, wake-ups), which runs until `stop`.
    ///
    /// # Errors
    /// `Unavailable` when the database cannot be reached; `NewerSchema` for a
    /// database a newer hookgate wrote.
    pub async fn open(
        config: &StoreConfig,
        node_id: &str,
        feed: ChangeFeed,
        stop: CancellationToken,
    ) -> Result<(Self, tokio::task::JoinHandle<()>), StoreError> {
        let (target, tls) = connect_target(config)?;
        {
            let mut client = connect(&target, tls.clone()).await?;
            migrate::migrate(&mut client).await?;
        }
        // A quarter of the connections (at least 2) write outcomes, which may
        // commit without waiting for the disk; the rest everything else, whose
        // commits are acknowledged and so must wait, whatever the server's default.
        let relaxed_size = (config.pool_size / 4).max(2);
        let strict = target.with_setting("synchronous_commit", "on");
        let main_size = config.pool_size.saturating_sub(relaxed_size).max(2);
        let pool = build_pool(&strict, &tls, main_size)?;
        let relaxed_target = target.with_setting("synchronous_commit", "off");
        let relaxed = build_pool(&relaxed_target, &tls, relaxed_size)?;
        let node_id = node_id.to_owned();
        let batches = stats::BatchCounters::default();
        let (ingest, mut batcher_tasks) =
            ingest::Batcher::start(pool.clone(), config.pool_size, batches.clone());
        let (outcomes, outcome_tasks) =
            outcome_batch::OutcomeBatcher::start(relaxed.clone(), relaxed_size, batches.clone());
        batcher_tasks.extend(outcome_tasks);
        let store = Self {
            inner: Arc::new(Inner {
                pool,
                relaxed,
                claimed: claimed::ClaimedRecords::default(),
                cache: cache::ReadCache::new(),
                operation_seconds: stats::operation_histogram(),
                batches,
                node_id,
                lease_margin_ms: config.lease_margin_ms,
                paused_node_hold_ms: config.paused_node_hold_ms,
                ingest,
                outcomes,
            }),
        };
        let wakeups = listen::start(store.clone(), target, tls, feed, stop.clone());
        let heartbeat = tokio::spawn(store.clone().beat_until(stop.clone()));
        let task = tokio::spawn(async move {
            stop.cancelled().await;
            let _ = wakeups.await;
            let _ = heartbeat.await;
            for task in batcher_tasks {
                task.abort();
            }
        });
        Ok((store, task))
    }

    /// A pooled connection, timed while held.
    async fn client(&self) -> Result<stats::Timed, StoreError> {
        let client = self.inner.pool.get().await.map_err(pool_error)?;
        Ok(stats::Timed::new(client, &self.inner.operation_seconds))
    }

    /// A connection whose commits do not wait for the disk (outcome writes).
    async fn relaxed_client(&self) -> Result<stats::Timed, StoreError> {
        let client = self.inner.relaxed.get().await.map_err(pool_error)?;
        Ok(stats::Timed::new(client, &self.inner.operation_seconds))
    }

    /// Claims and ingest batches and their sizes, for `/metrics`.
    pub fn batch_counters(&self) -> stats::BatchCounters {
        self.inner.batches.clone()
    }

    /// Seconds each store operation held its connection, for `/metrics`.
    pub fn operation_seconds(&self) -> prometheus_client::metrics::histogram::Histogram {
        self.inner.operation_seconds.clone()
    }

    /// What the pools hold now: (connections open, connections in use, most allowed).
    pub fn pool_status(&self) -> (usize, usize, usize) {
        let (a, b) = (self.inner.pool.status(), self.inner.relaxed.status());
        let in_use = |s: deadpool_postgres::Status| s.size.saturating_sub(s.available);
        (
            a.size + b.size,
            in_use(a) + in_use(b),
            a.max_size + b.max_size,
        )
    }

    /// This process's id in leases and grants.
    pub fn node_id(&self) -> &str {
        &self.inner.node_id
    }

    /// Commits are durable when they return (`synchronous_commit` is on for
    /// every write that is acknowledged); nothing to wait for.
    pub async fn wait_durable(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Room is the database's business: it answers `Full` when it has none.
    pub fn space_low(&self) -> bool {
        false
    }

    /// See [`PgStore::space_low`].
    pub fn check_space(&self) {}
}

/// A pool of at most `size` connections to `target`.
fn build_pool(
    target: &PgTarget,
    tls: &tokio_postgres_rustls::MakeRustlsConnect,
    size: usize,
) -> Result<Pool, StoreError> {
    let manager = Manager::from_config(
        target.config.clone(),
        tls.clone(),
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(size)
        .wait_timeout(Some(POOL_WAIT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(CONNECT_TIMEOUT))
        .runtime(Runtime::Tokio1)
        .build()
        .map_err(|e| StoreError::unavailable(format!("connection pool: {e}")))
}

/// The parsed URL and its TLS connector.
fn connect_target(
    config: &StoreConfig,
) -> Result<(PgTarget, tokio_postgres_rustls::MakeRustlsConnect), StoreError> {
    let url = config
        .url
        .as_deref()
        .ok_or_else(|| StoreError::unavailable("store.url is not set"))?;
    let mut target =
        PgTarget::parse(url).map_err(|e| StoreError::unavailable(format!("store.url: {e}")))?;
    target.config.connect_timeout(CONNECT_TIMEOUT);
    target
        .config
        .application_name(format!("hookgate {}", env!("CARGO_PKG_VERSION")));
    let tls = target
        .tls(config.ca_file.as_deref())
        .map_err(StoreError::unavailable)?;
    Ok((target, tls))
}

/// One connection of its own (not pooled), driven by a task until dropped.
async fn connect(
    target: &PgTarget,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
) -> Result<tokio_postgres::Client, StoreError> {
    let (client, connection) = target.config.connect(tls).await.map_err(pg_error)?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "database connection closed");
        }
    });
    Ok(client)
}

/// Applies the schema's migrations to the database at `config.url`; returns
/// the versions applied and the schema's version now (`hookgate migrate`).
///
/// # Errors
/// As [`PgStore::open`].
pub(crate) async fn migrate_only(config: &StoreConfig) -> Result<(Vec<u64>, u64), StoreError> {
    let (target, tls) = connect_target(config)?;
    let mut client = connect(&target, tls).await?;
    let applied = migrate::migrate(&mut client).await?;
    Ok((applied, migrate::current_version(&client).await?))
}
