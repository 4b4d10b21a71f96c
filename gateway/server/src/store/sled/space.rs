//! The low-disk guard: sled needs room to write, so below `min_free_disk` of free
//! space in the data dir the store refuses new work rather than fail mid-write.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether free disk in the data dir has fallen below the minimum.
#[derive(Debug, Clone)]
pub(crate) struct SpaceWatch {
    dir: PathBuf,
    min_free: u64,
    low: Arc<AtomicBool>,
}

impl SpaceWatch {
    /// Watches `dir` and reads it once.
    pub(crate) fn new(dir: &Path, min_free: u64) -> Self {
        let watch = Self {
            dir: dir.to_path_buf(),
            min_free,
            low: Arc::default(),
        };
        watch.refresh();
        watch
    }

    /// True while free disk is below the minimum.
    pub(crate) fn is_low(&self) -> bool {
        self.low.load(Ordering::Relaxed)
    }

    /// Re-reads free space; an unreadable file system counts as low.
    pub(crate) fn refresh(&self) {
        let low = match rustix::fs::statvfs(&self.dir) {
            Ok(s) => s.f_bavail.saturating_mul(s.f_frsize) < self.min_free,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read free disk space");
                true
            }
        };
        if low && !self.is_low() {
            tracing::error!(
                min_free = self.min_free,
                "free disk below min_free_disk: refusing ingest"
            );
        }
        self.low.store(low, Ordering::Relaxed);
    }
}
