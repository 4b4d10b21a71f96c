//! [`StoreError`]: storage failures in the store's own terms (unavailable,
//! corrupt, full, conflict, a data dir in use or unusable), whatever the backend. The
//! backend's own error travels as the source, never in the type.

use std::path::PathBuf;

/// The backend's own error, kept as the source of a [`StoreError`].
pub(crate) type BackendError = Box<dyn std::error::Error + Send + Sync>;

/// How a backend operation failed, in the store's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The storage cannot be read or written now (I/O, a stopped writer).
    Unavailable,
    /// What is stored does not read back.
    Corrupt,
    /// No room left to write.
    Full,
    /// A concurrent change won; the operation did nothing and may be retried
    /// (a shared backend's serialisation failure).
    Conflict,
    /// The backend refused a value the request carried (a NUL character in
    /// text, a number out of range): the client's error, not the store's.
    Refused,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Unavailable => "unavailable",
            Self::Corrupt => "corrupt",
            Self::Full => "full",
            Self::Conflict => "conflict",
            Self::Refused => "refused",
        })
    }
}

/// Storage failures. The API turns them into 503 `store_unavailable`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A backend operation failed, or found what is stored unreadable;
    /// `failure` says how, `source` what happened.
    #[error("storage {failure}: {source}")]
    Backend {
        failure: Failure,
        #[source]
        source: BackendError,
    },
    #[error(
        "the store has schema version {found}, written by a newer hookgate; this build supports up to {supported}"
    )]
    NewerSchema { found: u64, supported: u64 },
    /// Another process has the data dir open.
    #[error("data dir {} is in use by another process", path.display())]
    InUse { path: PathBuf },
    /// The data dir cannot be created or opened.
    #[error("cannot open data dir {}: {message}", path.display())]
    Unusable { path: PathBuf, message: String },
}

impl StoreError {
    /// The same failure, for another caller whose work shared the operation
    /// that failed (the other jobs of a batch).
    pub(crate) fn relayed(&self) -> StoreError {
        StoreError::Backend {
            failure: self.failure(),
            source: self.to_string().into(),
        }
    }
    /// How this failure counts, in the store's terms.
    pub fn failure(&self) -> Failure {
        match self {
            Self::NewerSchema { .. } => Failure::Corrupt,
            Self::Backend { failure, .. } => *failure,
            Self::InUse { .. } | Self::Unusable { .. } => Failure::Unavailable,
        }
    }

    /// Storage that cannot be read or written now, said in the store's words.
    pub(crate) fn unavailable(message: impl Into<String>) -> Self {
        Self::Backend {
            failure: Failure::Unavailable,
            source: message.into().into(),
        }
    }

    /// What is stored does not read back, said in the store's words.
    pub(crate) fn corrupt(message: impl Into<String>) -> Self {
        Self::Backend {
            failure: Failure::Corrupt,
            source: message.into().into(),
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
