//! [`StoreError`]: storage failures in the store's own terms (unavailable,
//! corrupt, full, a data dir in use or unusable), whatever the backend. The
//! backend's own error travels as the source, never in the type.

use std::path::{Path, PathBuf};

/// The backend's own error, kept as the source of a [`StoreError`].
pub type BackendError = Box<dyn std::error::Error + Send + Sync>;

/// How a backend operation failed, in the store's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The storage cannot be read or written now (I/O, a stopped writer).
    Unavailable,
    /// What is stored does not read back.
    Corrupt,
    /// No room left to write.
    Full,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Unavailable => "unavailable",
            Self::Corrupt => "corrupt",
            Self::Full => "full",
        })
    }
}

/// Storage failures. The API turns them into 503 `store_unavailable`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A backend operation failed; `failure` says how.
    #[error("storage {failure}: {source}")]
    Backend {
        failure: Failure,
        #[source]
        source: BackendError,
    },
    #[error("data dir has schema version {found}; this build supports up to {supported}")]
    NewerSchema { found: u64, supported: u64 },
    /// Another process has the data dir open.
    #[error("data dir {} is in use by another process", path.display())]
    InUse { path: PathBuf },
    /// The data dir cannot be created or opened.
    #[error("cannot open data dir {}: {message}", path.display())]
    Unusable { path: PathBuf, message: String },
}

impl StoreError {
    /// How this failure counts, in the store's terms.
    pub fn failure(&self) -> Failure {
        match self {
            Self::Corrupt(_) | Self::NewerSchema { .. } => Failure::Corrupt,
            Self::Backend { failure, .. } => *failure,
            Self::Unavailable(_) | Self::InUse { .. } | Self::Unusable { .. } => {
                Failure::Unavailable
            }
        }
    }
}

impl From<std::io::Error> for StoreError {
    fn from(e: std::io::Error) -> Self {
        let failure = if e.kind() == std::io::ErrorKind::StorageFull {
            Failure::Full
        } else {
            Failure::Unavailable
        };
        Self::Backend {
            failure,
            source: Box::new(e),
        }
    }
}

impl From<sled::Error> for StoreError {
    fn from(e: sled::Error) -> Self {
        match e {
            sled::Error::Io(io) => io.into(),
            sled::Error::Corruption { .. } => Self::Backend {
                failure: Failure::Corrupt,
                source: Box::new(e),
            },
            other => Self::Backend {
                failure: Failure::Unavailable,
                source: Box::new(other),
            },
        }
    }
}

/// What a failure to open sled in `data_dir` means: the directory in use by
/// another process, unusable, or a storage failure.
pub(super) fn open_failure(data_dir: &Path, e: sled::Error) -> StoreError {
    match e {
        sled::Error::Io(_) if sled_lock_is_held(data_dir) => StoreError::InUse {
            path: data_dir.to_path_buf(),
        },
        sled::Error::Io(io) => StoreError::Unusable {
            path: data_dir.to_path_buf(),
            message: io.to_string(),
        },
        other => other.into(),
    }
}

/// Whether another process holds sled's lock on the data dir. sled takes an
/// exclusive `flock` on `sled/db` and reports contention only as text (an
/// `io::ErrorKind::Other`), so after a failed open the lock itself is asked.
fn sled_lock_is_held(data_dir: &Path) -> bool {
    let Ok(db) = std::fs::File::open(data_dir.join("sled").join("db")) else {
        return false;
    };
    // Released when `db` is closed, at once.
    let probe = rustix::fs::flock(&db, rustix::fs::FlockOperation::NonBlockingLockShared);
    probe == Err(rustix::io::Errno::WOULDBLOCK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_errors_become_the_stores_own_terms() {
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        assert_eq!(StoreError::from(full).failure(), Failure::Full);
        let io = std::io::Error::other("disk went away");
        let e = StoreError::from(sled::Error::Io(io));
        assert_eq!(e.failure(), Failure::Unavailable);
        assert!(
            std::error::Error::source(&e).is_some(),
            "the backend error is kept"
        );
        let e = StoreError::from(sled::Error::Unsupported("x".into()));
        assert_eq!(e.failure(), Failure::Unavailable);
        assert!(e.to_string().starts_with("storage unavailable: "), "{e}");
    }

    #[test]
    fn a_second_open_of_a_data_dir_is_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let _first = super::super::Store::open(dir.path(), 1 << 20).unwrap();
        let second = super::super::Store::open(dir.path(), 1 << 20);
        assert!(
            matches!(second, Err(StoreError::InUse { .. })),
            "{:?}",
            second.err()
        );
    }
}
