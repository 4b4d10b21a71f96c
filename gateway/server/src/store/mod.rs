//! Durable storage: one async facade, [`Store`], over a backend.
//!
//! Callers see records, leases and opaque cursors, never the backend's keys or
//! types. Every operation that may touch storage is `async`, so a backend that
//! waits on a network (a shared database) fits behind the same calls as the
//! embedded one. What must not interleave (an idempotency key's repeats, a
//! tenant's caps, plugin versions) is atomic inside each operation: callers take
//! no locks. Each write that changes what is due, or what an endpoint, plugin or
//! tenant is, is reported on the [`ChangeFeed`] once it has committed.

/// Runs `$body`, a store operation, with `$s` bound to the backend in use. `sync`
/// marks a call the embedded backend answers at once and the others await. A
/// failed operation is counted by kind (`hookgate_store_errors_total`), and
/// storage found down puts the store in the failing state ([`StoreHealth`]).
macro_rules! on_backend {
    ($self:ident, $s:ident => sync $body:expr) => {{
        let result = match &$self.backend {
            $crate::store::Backend::Sled($s) => $body,
            $crate::store::Backend::Postgres($s) => $body.await,
        };
        $self.observed(result)
    }};
    ($self:ident, $s:ident => $body:expr) => {{
        let result = match &$self.backend {
            $crate::store::Backend::Sled($s) => $body,
            $crate::store::Backend::Postgres($s) => $body,
        };
        $self.observed(result)
    }};
}

mod api_calls;
mod attempt_list;
#[cfg(any(test, feature = "lab"))]
mod census;
#[cfg(test)]
mod contract;
mod deliveries;
mod dlq;
mod endpoint_stats;
mod endpoints;
mod error;
mod event_list;
mod event_types;
mod events;
mod feed;
pub(crate) mod health;
mod lease;
mod pages;
mod plugins;
mod portal_sessions;
pub(crate) mod postgres;
mod recorded;
pub(crate) mod records;
mod recovery;
mod retention;
mod runtime;
mod schedule;
#[cfg(any(test, feature = "lab"))]
pub(crate) mod scratch_database;
mod singleton;
pub(crate) mod sled;
mod tasks;
mod tenants;
#[cfg(test)]
pub(crate) mod testing;

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use self::postgres::PgStore;
use self::sled::{DurabilityBackend, SledStore};
use crate::config::{StoreBackend, StoreConfig};
pub(crate) use api_calls::{ADMIN_SCOPE, ApiCall, ApiCallRecord, KeptAnswer};
pub(crate) use attempt_list::{
    AttemptOutcome, AttemptQuery, AttemptScope, ListedAttempt, StatusClass,
};
pub(crate) use deliveries::{DeliveryFilter, DeliveryPage};
pub(crate) use dlq::{DeadCounts, ReplayOutcome, ReplaySummary, SUMMARY_SCAN_LIMIT};
pub(crate) use endpoint_stats::{
    OwnedStatsBucket, StatsAcross, StatsBucket, StatsCounts, StatsDelta,
};
pub(crate) use endpoints::{EndpointCreate, EndpointVersion, Swap, uid_taken};
pub(crate) use error::{Failure, StoreError};
pub(crate) use event_list::EventQuery;
pub(crate) use event_types::{CatalogWrite, EventTypeRecord};
#[cfg_attr(not(feature = "lab"), allow(unreachable_pub))]
pub use events::NewEvent;
pub(crate) use events::{EXPUNGED, Expunge, IDEMPOTENCY_TTL_MS, IngestOutcome};
pub(crate) use feed::{Change, ChangeFeed, Changes};
pub(crate) use health::{StoreHealth, count_error, error_counters};
pub(crate) use lease::{DueEntry, Lane, Lease, interleave};
#[cfg(test)]
pub(crate) use pages::PAGE_SCAN_LIMIT;
pub(crate) use pages::{IdOrder, IdWindow, ListCursor, ListOrder};
pub(crate) use plugins::{
    NewPluginVersion, PluginRecord, PluginVersionRecord, StoredChecks, UploadRate, UploadTimes,
};
pub(crate) use portal_sessions::{
    PortalCapability, PortalSessionRecord, PortalSettings, PortalTheme,
};
pub(crate) use recorded::Recorded;
#[cfg_attr(not(feature = "lab"), allow(unreachable_pub))]
pub use records::EventLabels;
pub(crate) use records::*;
pub(crate) use retention::{RetentionRules, SweepCursor, SweepStats};
pub(crate) use runtime::{ClaimedTurn, NODE_ALIVE_MS, NodeRecord, RuntimeRecord, TurnPlan};
pub(crate) use schedule::{AttemptWrite, Interrupted, Interruption, WriteResult};
pub(crate) use singleton::{Grant, Singleton};
pub(crate) use tasks::{
    TASK_LEASE_MS, TASK_SCAN_LIMIT, TaskClaim, TaskPage, TaskRecord, TaskState, TaskWork,
};
pub(crate) use tenants::TenantWrite;

/// Applies the PostgreSQL schema's migrations to the database at `config.url`
/// without serving; returns the versions applied and the schema's version now
/// (`hookgate migrate`).
///
/// # Errors
/// If the database cannot be reached or a newer hookgate wrote it.
pub async fn migrate_postgres(config: &StoreConfig) -> Result<(Vec<u64>, u64), StoreError> {
    postgres::migrate_only(config).await
}

/// The backends a store can run on.
#[derive(Clone)]
pub(crate) enum Backend {
    Sled(SledStore),
    Postgres(PgStore),
}

/// A handle to the store; cheap to clone.
#[derive(Clone)]
pub struct Store {
    backend: Backend,
    feed: ChangeFeed,
    /// This gateway among those sharing the store: in leases, attempts and
    /// `GET /v1/cluster`.
    node_id: Arc<str>,
    /// When this handle opened the store (this node's start).
    opened_at_ms: u64,
    /// Whether storage is failing now.
    health: Arc<StoreHealth>,
    pub(crate) background: Arc<Background>,
}

/// The store's background work (sled: group commit; PostgreSQL: ingest
/// batching and wake-ups; both: the recovery probe), stopped by
/// [`Store::close`].
pub(crate) struct Background {
    pub(crate) stop: CancellationToken,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Store {
    /// Opens the configured backend and starts its background work.
    ///
    /// # Errors
    /// As the backend's open: in use, unusable, written by a newer hookgate.
    pub async fn open(config: &StoreConfig) -> Result<Self, StoreError> {
        Self::open_with(config, None).await
    }

    /// [`Store::open`], with sled's flushes made by `durability` instead of the
    /// file system (tests stall or fail them).
    ///
    /// # Errors
    /// As [`Store::open`].
    pub async fn open_with(
        config: &StoreConfig,
        durability: Option<Arc<dyn DurabilityBackend>>,
    ) -> Result<Self, StoreError> {
        let feed = ChangeFeed::default();
        let stop = CancellationToken::new();
        let node_id: Arc<str> = match &config.node_id {
            Some(id) => id.as_str().into(),
            None => ulid::Ulid::new().to_string().to_ascii_lowercase().into(),
        };
        if config.backend == StoreBackend::Postgres {
            let opened = PgStore::open(config, &node_id, feed.clone(), stop.clone());
            let (pg, task) = opened.await?;
            let backend = Backend::Postgres(pg);
            return Ok(Self::with_backend(backend, node_id, feed, stop, task));
        }
        // Off the runtime: opening may wait for a lock a stopping gateway holds.
        let (dir, cache, min_free) = (
            config.data_dir.clone(),
            config.cache_capacity,
            config.min_free_disk,
        );
        let sled = tokio::task::spawn_blocking(move || SledStore::open(&dir, cache, min_free))
            .await
            .map_err(|e| StoreError::unavailable(format!("opening the store stopped: {e}")))??;
        let durability = match durability {
            Some(d) => d,
            None => sled.sled_durability()?,
        };
        let task = sled.start_flusher(durability, stop.clone());
        Ok(Self::with_backend(
            Backend::Sled(sled),
            node_id,
            feed,
            stop,
            task,
        ))
    }

    fn with_backend(
        backend: Backend,
        node_id: Arc<str>,
        feed: ChangeFeed,
        stop: CancellationToken,
        task: tokio::task::JoinHandle<()>,
    ) -> Self {
        Self {
            backend,
            feed,
            node_id,
            opened_at_ms: crate::clock::Clock::now_ms(&crate::clock::SystemClock),
            health: Arc::default(),
            background: Arc::new(Background {
                stop,
                tasks: Mutex::new(vec![task]),
            }),
        }
    }

    /// This gateway's node id.
    pub fn node_id(&self) -> &str {
        &self.node_id
    }

    /// The backend's name, as `[store] backend` spells it.
    pub fn backend_name(&self) -> &'static str {
        match &self.backend {
            Backend::Sled(_) => "sled",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// The PostgreSQL backend, if that is the one in use (its pool's gauges).
    pub fn postgres(&self) -> Option<&PgStore> {
        match &self.backend {
            Backend::Postgres(pg) => Some(pg),
            Backend::Sled(_) => None,
        }
    }

    /// Stops the backend's background work after a last flush. Call it once
    /// every writer has finished; writes after it may not be durable.
    pub async fn close(&self) {
        self.background.stop.cancel();
        let tasks = match self.background.tasks.lock() {
            Ok(mut tasks) => std::mem::take(&mut *tasks),
            Err(_) => Vec::new(),
        };
        for task in tasks {
            let _ = task.await;
        }
    }

    /// What the backend's writes change, for whoever must react (the scheduler,
    /// the plugin loader).
    pub fn changes(&self) -> Changes {
        self.feed.subscribe()
    }

    /// Waits until every write applied so far is durable (for answers that repeat
    /// an earlier write, such as an idempotent replay).
    ///
    /// # Errors
    /// `Unavailable` if that flush failed.
    pub async fn wait_durable(&self) -> Result<(), StoreError> {
        on_backend!(self, s => s.wait_durable().await)
    }

    /// Whether storage is too full to take new work (ingest answers 507,
    /// `/healthz` 503), as last checked.
    pub fn space_low(&self) -> bool {
        match &self.backend {
            Backend::Sled(s) => s.space_low(),
            Backend::Postgres(s) => s.space_low(),
        }
    }

    /// Checks again whether storage is too full (see [`Store::space_low`]).
    pub fn check_space(&self) {
        match &self.backend {
            Backend::Sled(s) => s.check_space(),
            Backend::Postgres(s) => s.check_space(),
        }
    }

    /// Whether storage is failing now, and the state's metrics.
    pub(crate) fn health(&self) -> &StoreHealth {
        &self.health
    }

    /// The sled backend, for tests that look inside it.
    #[cfg(test)]
    pub(crate) fn sled(&self) -> &SledStore {
        match &self.backend {
            Backend::Sled(s) => s,
            Backend::Postgres(_) => panic!("this store runs on PostgreSQL"),
        }
    }

    /// Reads an install-wide setting (a secret made at first start).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn meta_get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        on_backend!(self, s => sync s.meta_get(key))
    }

    /// Writes an install-wide setting, durably, before returning.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn meta_put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        on_backend!(self, s => sync s.meta_put(key, value))
    }

    /// Writes an install-wide setting unless it has one already (gateways
    /// starting together on an empty store agree on the first); returns the
    /// value kept.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn meta_put_first(&self, key: &str, value: &[u8]) -> Result<Vec<u8>, StoreError> {
        on_backend!(self, s => sync s.meta_put_first(key, value))
    }
}
