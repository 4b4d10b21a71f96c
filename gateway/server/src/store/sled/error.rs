//! sled's errors in the store's own terms, and what a failed open of a data dir
//! means.

use std::path::Path;

use super::StoreError;
use crate::store::Failure;

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
        sled::Error::Io(io) if lock_refused(&io) || sled_lock_is_held(data_dir) => {
            StoreError::InUse {
                path: data_dir.to_path_buf(),
            }
        }
        sled::Error::Io(io) => StoreError::Unusable {
            path: data_dir.to_path_buf(),
            message: io.to_string(),
        },
        other => other.into(),
    }
}

/// Whether sled's open failed on its lock: its own words (sled 0.34 is
/// pinned), for a holder that let go before [`sled_lock_is_held`] could ask.
fn lock_refused(io: &std::io::Error) -> bool {
    io.to_string().contains("could not acquire lock")
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
        let _first = super::super::SledStore::open(dir.path(), 1 << 20, 0).unwrap();
        let second = super::super::SledStore::open(dir.path(), 1 << 20, 0);
        assert!(
            matches!(second, Err(StoreError::InUse { .. })),
            "{:?}",
            second.err()
        );
    }
}
