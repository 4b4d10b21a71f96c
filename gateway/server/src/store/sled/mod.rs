//! The embedded backend, on sled: one process owns the data dir.
//!
//! One `records` tree holds every record kind under its own key prefix
//! ([`keys`]), so each ingest is one atomic write; a `meta` tree holds the schema
//! version and install secrets. [`SledStore::commit`] applies a write and returns only
//! once it is durable (group commit, [`flusher`]); attempt outcomes and key-less
//! ingests are queued and applied in rounds ([`writer`]).

mod api_calls;
mod attempts;
mod bulk;
#[cfg(test)]
mod compat_fixture;
#[cfg(test)]
mod compat_tests;
mod deliveries;
mod dlq;
mod endpoint_stats;
mod endpoints;
mod error;
mod event_types;
mod events;
mod flusher;
mod interruptions;
pub(crate) mod keys;
mod open_db;
mod outcomes;
mod plugins;
mod portal_sessions;
#[cfg(feature = "lab")]
pub(crate) mod reference;
mod replay;
mod retention;
mod space;
mod tasks;
mod tenants;
mod writer;
mod writes;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

pub(crate) use super::{
    AttemptRecord, AttemptWrite, DeadCounts, DeliveryFilter, DeliveryPage, DeliveryRecord,
    DeliveryState, EndpointRecord, EndpointVersion, EventRecord, IDEMPOTENCY_TTL_MS,
    IdempotencyRecord, IngestOutcome, Interrupted, Interruption, Lane, Lease, NewEvent,
    NewPluginVersion, PluginRecord, PluginVersionRecord, ReplayOutcome, ReplaySummary,
    RetentionRules, StoreError, Swap, SweepCursor, SweepStats, TenantRecord, WriteResult, records,
};
#[cfg_attr(not(feature = "lab"), allow(unreachable_pub))]
pub use flusher::DurabilityBackend;
#[cfg(feature = "lab")]
pub use flusher::PersistFuture;
use flusher::{GroupCommit, SledDurability};
use open_db::OpenDb;
pub(crate) use space::SpaceWatch;
pub(crate) use writes::Writes;

/// The schema this build writes. A data dir with a newer one is refused.
pub(crate) const SCHEMA_VERSION: u64 = 1;

pub(crate) struct Inner {
    /// The database, replaced when the store is reopened after a failure.
    pub(crate) db: Arc<OpenDb>,
    commit: Arc<GroupCommit>,
    data_dir: PathBuf,
    /// Serialises read-check-write sequences that must not interleave (tenant
    /// creation, idempotency keys); ingest without a key never takes it.
    write_lock: tokio::sync::Mutex<()>,
    key_locks: events::KeyLocks,
    /// Serialises additions to the stats buckets, each a read, an addition and
    /// a conditional write (`endpoint_stats.rs`).
    stats_lock: tokio::sync::Mutex<()>,
    /// Writes waiting for the current round ([`writer`]).
    writes: writer::WriteQueue,
    space: SpaceWatch,
}

/// A handle to the store; cheap to clone.
#[derive(Clone)]
pub(crate) struct SledStore {
    pub(crate) inner: Arc<Inner>,
}

impl SledStore {
    /// Opens (or creates) the data dir and checks its schema version; new work is
    /// refused while the disk has less than `min_free_disk` free.
    ///
    /// # Errors
    /// `InUse` if another process holds it, `Unusable` if it cannot be created or
    /// opened, `NewerSchema` if a newer hookgate wrote it.
    pub(crate) fn open(
        data_dir: &Path,
        cache_capacity: u64,
        min_free_disk: u64,
    ) -> Result<Self, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|e| StoreError::Unusable {
            path: data_dir.to_path_buf(),
            message: if data_dir.exists() && !data_dir.is_dir() {
                "it is not a directory".to_owned()
            } else {
                e.to_string()
            },
        })?;
        let db = OpenDb::open(data_dir, cache_capacity)?;
        let meta = db.held()?.meta.clone();
        match meta.get("schema_version")? {
            None => {
                meta.insert("schema_version", &SCHEMA_VERSION.to_be_bytes())?;
            }
            Some(v) => {
                let found = u64::from_be_bytes(
                    v.as_ref()
                        .try_into()
                        .map_err(|_| StoreError::corrupt("schema_version"))?,
                );
                if found > SCHEMA_VERSION {
                    return Err(StoreError::NewerSchema {
                        found,
                        supported: SCHEMA_VERSION,
                    });
                }
                // Older schemas migrate here; version 1 is the first.
            }
        }
        let inner = Inner {
            db: Arc::new(db),
            commit: GroupCommit::new(),
            data_dir: data_dir.to_path_buf(),
            write_lock: tokio::sync::Mutex::new(()),
            key_locks: events::KeyLocks::new(),
            stats_lock: tokio::sync::Mutex::new(()),
            writes: writer::WriteQueue::default(),
            space: SpaceWatch::new(data_dir, min_free_disk),
        };
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// The production durability backend for this store.
    ///
    /// # Errors
    /// If the data dir cannot be opened for `syncfs`, or the durability thread
    /// cannot be started.
    pub(crate) fn sled_durability(&self) -> Result<Arc<dyn DurabilityBackend>, StoreError> {
        let dir = std::fs::File::open(&self.inner.data_dir)?;
        let open = Arc::clone(&self.inner.db);
        Ok(Arc::new(SledDurability::start(open, dir)?))
    }

    /// Starts the group-commit flusher; it makes a last flush on `shutdown`.
    pub(crate) fn start_flusher(
        &self,
        backend: Arc<dyn DurabilityBackend>,
        shutdown: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(Arc::clone(&self.inner.commit).run(backend, shutdown))
    }

    /// Whether free disk is below the minimum, as last checked.
    pub(crate) fn space_low(&self) -> bool {
        self.inner.space.is_low()
    }

    /// Reads free disk again.
    pub(crate) fn check_space(&self) {
        self.inner.space.refresh();
    }

    /// [`SledStore::commit`] for a write made under no lock: it joins the write queue's
    /// next round ([`writer`]), shared with other writers, and waits until that round
    /// is durable. A caller cancelled while queued may still see its write applied,
    /// unacknowledged, as a cancelled [`SledStore::commit`] may.
    ///
    /// Conditions of `writes` are checked inside the round: `Stale` if one fails.
    ///
    /// # Errors
    /// `Unavailable` if the write or its flush failed: the caller must not ack.
    pub(crate) async fn commit_queued(&self, writes: Writes) -> Result<WriteResult, StoreError> {
        let (result, seq) = self.apply(writer::Job::Writes(writes)).await?;
        let seq = seq.ok_or_else(|| StoreError::unavailable("write not sequenced"))?;
        self.inner.commit.wait_durable(seq).await?;
        Ok(result)
    }

    /// The open database, held while a write is applied and sequenced (see
    /// `open_db.rs`: no reopen can come between them).
    fn held(&self) -> Result<open_db::Held<'_>, StoreError> {
        self.inner.db.held()
    }

    /// The records tree, for reads.
    pub(crate) fn records(&self) -> Result<sled::Tree, StoreError> {
        self.inner.db.records()
    }

    /// Sequences a write just applied while the database is held; the
    /// number to wait for with [`SledStore::wait_written`].
    fn sequence(&self, _held: &open_db::Held<'_>) -> u64 {
        self.inner.commit.written()
    }

    /// Waits until the write sequenced `seq` is durable.
    async fn wait_written(&self, seq: u64) -> Result<(), StoreError> {
        self.inner.commit.wait_durable(seq).await
    }

    /// Waits until every write applied so far is durable (for answers that repeat
    /// an earlier write, such as an idempotent replay).
    ///
    /// # Errors
    /// `Unavailable` if that flush failed.
    pub(crate) async fn wait_durable(&self) -> Result<(), StoreError> {
        self.inner
            .commit
            .wait_durable(self.inner.commit.latest())
            .await
    }

    fn get<T: DeserializeOwned>(&self, key: &[u8]) -> Result<Option<T>, StoreError> {
        self.held()?
            .records
            .get(key)?
            .map(|v| records::decode(&v))
            .transpose()
    }

    /// Decoded records under `prefix`, newest first (ids are time-ordered).
    fn scan_rev<T: DeserializeOwned>(
        &self,
        prefix: &[u8],
    ) -> impl Iterator<Item = Result<(sled::IVec, T), StoreError>> + '_ {
        let prefix = prefix.to_vec();
        self.scan(move |records| records.scan_prefix(prefix).rev())
            .map(|kv| {
                let (k, v) = kv?;
                Ok((k, records::decode(&v)?))
            })
    }

    /// The records `scan` yields from the records tree; one error, and nothing
    /// else, if the tree cannot be had.
    fn scan<I, F>(
        &self,
        scan: F,
    ) -> impl Iterator<Item = Result<(sled::IVec, sled::IVec), StoreError>> + use<I, F>
    where
        I: Iterator<Item = sled::Result<(sled::IVec, sled::IVec)>>,
        F: FnOnce(sled::Tree) -> I,
    {
        let (scan, refused) = match self.records() {
            Ok(records) => (Some(scan(records)), None),
            Err(e) => (None, Some(Err(e))),
        };
        let scanned = scan
            .into_iter()
            .flatten()
            .map(|kv| kv.map_err(StoreError::from));
        refused.into_iter().chain(scanned)
    }

    /// Reads a value from the `meta` tree.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn meta_get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.held()?.meta.get(key)?.map(|v| v.to_vec()))
    }

    /// Writes a value to the `meta` tree and flushes it before returning.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn meta_put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let db = self.held()?;
        db.meta.insert(key, value)?;
        db.db.flush()?;
        Ok(())
    }

    /// Writes `value` unless `key` has one; returns the value kept.
    ///
    /// # Errors
    /// On a storage failure.
    pub(crate) fn meta_put_first(&self, key: &str, value: &[u8]) -> Result<Vec<u8>, StoreError> {
        let db = self.held()?;
        let kept = match db.meta.compare_and_swap(key, None::<&[u8]>, Some(value))? {
            Ok(()) => value.to_vec(),
            Err(e) => e.current.map(|v| v.to_vec()).unwrap_or_default(),
        };
        db.db.flush()?;
        Ok(kept)
    }
}
