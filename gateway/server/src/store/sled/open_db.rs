//! [`OpenDb`]: the sled database the store works on, and reopening it.
//!
//! sled 0.34 keeps the first I/O error of its log (a full disk, say) and fails
//! every later write with it until the database is opened again; so leaving the
//! failing state takes a reopen, in this process, once the disk has room.
//! Writers hold the database ([`OpenDb::held`]) from applying a write until it has
//! its sequence number: a reopen marks every write sequenced before it as failed
//! (whatever the old database had not flushed is gone), and no write applied to
//! the old database can be sequenced after that.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, RwLockReadGuard, TryLockError};
use std::time::{Duration, Instant};

use super::{GroupCommit, StoreError, error};

/// How long a reopen waits for the last handle on the old database (a flush or
/// a scan in progress) to be let go, which releases sled's lock on the data dir.
const RELEASE_WAIT: Duration = Duration::from_secs(10);

/// How long start-up waits for a lock on the data dir to be let go.
const START_WAIT: Duration = Duration::from_secs(3);

/// Opens the database, trying again while its lock is held, for at most `wait`.
fn open_when_released(
    data_dir: &Path,
    cache_capacity: u64,
    wait: Duration,
) -> Result<Handles, StoreError> {
    let since = Instant::now();
    loop {
        match open_handles(data_dir, cache_capacity) {
            Err(StoreError::InUse { .. }) if since.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// The open database's trees.
pub(crate) struct Handles {
    pub(crate) db: sled::Db,
    /// Every record kind, under its own key prefix.
    pub(crate) records: sled::Tree,
    /// The schema version and install-wide settings.
    pub(crate) meta: sled::Tree,
}

/// The database in use, replaced by a reopen.
pub(crate) struct OpenDb {
    data_dir: PathBuf,
    cache_capacity: u64,
    current: RwLock<Option<Handles>>,
}

/// The open database, held: no reopen starts while it is.
pub(crate) struct Held<'a>(RwLockReadGuard<'a, Option<Handles>>);

impl std::ops::Deref for Held<'_> {
    type Target = Handles;

    fn deref(&self) -> &Handles {
        // `OpenDb::held` makes a `Held` only of an open database.
        self.0.as_ref().expect("a held database is open")
    }
}

impl OpenDb {
    /// Opens sled in `data_dir`.
    ///
    /// # Errors
    /// `InUse` if another process holds it, `Unusable` if it cannot be opened.
    /// A lock held by a gateway still exiting (or one just stopped in this
    /// process, whose last handles are being let go) is waited for a moment.
    pub(crate) fn open(data_dir: &Path, cache_capacity: u64) -> Result<Self, StoreError> {
        Ok(Self {
            data_dir: data_dir.to_path_buf(),
            cache_capacity,
            current: RwLock::new(Some(open_when_released(
                data_dir,
                cache_capacity,
                START_WAIT,
            )?)),
        })
    }

    /// The open database, held until the guard is dropped (not across an
    /// `await`: the guard cannot be sent).
    ///
    /// # Errors
    /// `Unavailable` while a reopen is under way or after one failed.
    pub(crate) fn held(&self) -> Result<Held<'_>, StoreError> {
        let reopening = || StoreError::unavailable("the store is being reopened after a failure");
        let guard = match self.current.try_read() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Err(reopening()),
        };
        if guard.is_none() {
            return Err(reopening());
        }
        Ok(Held(guard))
    }

    /// The records tree, for reads (a handle of its own: nothing is held).
    ///
    /// # Errors
    /// As [`OpenDb::held`].
    pub(crate) fn records(&self) -> Result<sled::Tree, StoreError> {
        Ok(self.held()?.records.clone())
    }

    /// The database itself, for a flush.
    ///
    /// # Errors
    /// As [`OpenDb::held`].
    pub(crate) fn db(&self) -> Result<sled::Db, StoreError> {
        Ok(self.held()?.db.clone())
    }

    /// Closes the database and opens it again: every write not yet durable is
    /// failed first (`commit`), then the old handles are let go and sled's lock
    /// waited for. Blocks: run it off the runtime's workers. On failure the
    /// store stays closed (every call answers unavailable) until the next reopen.
    ///
    /// # Errors
    /// As [`OpenDb::open`], or `InUse` if the old handles were not let go in time.
    pub(crate) fn reopen(&self, commit: &GroupCommit) -> Result<(), StoreError> {
        let old = {
            let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
            commit.fail_unflushed();
            current.take()
        };
        drop(old);
        let opened = open_when_released(&self.data_dir, self.cache_capacity, RELEASE_WAIT)?;
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Some(opened);
        tracing::warn!(data_dir = %self.data_dir.display(), "store reopened after a storage failure");
        Ok(())
    }
}

impl super::SledStore {
    /// Writes the probe key and waits until it is durable: `Ok` once storage
    /// takes writes again. If sled itself refuses the write (it keeps its first
    /// I/O error until reopened), the database is reopened and the write tried
    /// once more.
    ///
    /// # Errors
    /// If storage still fails.
    pub(crate) async fn probe(&self, now_ms: u64) -> Result<(), StoreError> {
        let write = || -> Result<u64, StoreError> {
            let db = self.held()?;
            db.meta.insert(PROBE_KEY, &now_ms.to_be_bytes())?;
            Ok(self.sequence(&db))
        };
        let seq = match write() {
            Ok(seq) => seq,
            Err(refused) => {
                tracing::warn!(error = %refused, "sled refuses writes: reopening the store");
                let (open, commit) = (Arc::clone(&self.inner.db), Arc::clone(&self.inner.commit));
                let reopened = tokio::task::spawn_blocking(move || open.reopen(&commit)).await;
                reopened.map_err(|e| StoreError::unavailable(format!("reopen stopped: {e}")))??;
                write()?
            }
        };
        self.wait_written(seq).await
    }
}

/// The `meta` key a probe writes: when storage last took a write.
const PROBE_KEY: &str = "probe";

fn open_handles(data_dir: &Path, cache_capacity: u64) -> Result<Handles, StoreError> {
    let db = sled::Config::new()
        .path(data_dir.join("sled"))
        .cache_capacity(cache_capacity)
        .open()
        .map_err(|e| error::open_failure(data_dir, e))?;
    let records = db.open_tree("records")?;
    let meta = db.open_tree("meta")?;
    Ok(Handles { db, records, meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reopen_keeps_what_was_flushed_and_fails_what_was_not() {
        let dir = tempfile::tempdir().unwrap();
        let open = OpenDb::open(dir.path(), 1 << 20).unwrap();
        let commit = GroupCommit::new();
        {
            let held = open.held().unwrap();
            held.records.insert("kept", "1").unwrap();
            held.db.flush().unwrap();
        }
        let seq = commit.written();
        // A reader still has the old tree: the reopen waits until it lets go.
        let reader = open.records().unwrap();
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(reader);
        });
        open.reopen(&commit).unwrap();
        letting_go.join().unwrap();
        assert!(open.records().unwrap().contains_key("kept").unwrap());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let waited = rt.block_on(commit.wait_durable(seq));
        assert!(
            waited.is_err(),
            "a write not flushed before the reopen is failed"
        );
    }
}
