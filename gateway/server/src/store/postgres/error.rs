//! PostgreSQL's errors in the store's terms: a lost or refused connection is
//! `Unavailable` (the API's 503), a serialisation failure, deadlock or unique
//! key taken meanwhile is a `Conflict` the caller may retry, a full disk is `Full`.

use tokio_postgres::error::SqlState;

use crate::store::{Failure, StoreError};

/// A database error in the store's terms. Only converts: where the error is
/// seen, the operation counts it (`stats::counted`).
pub(crate) fn pg_error(e: tokio_postgres::Error) -> StoreError {
    let failure = match e.code() {
        // A unique key taken by a concurrent transaction is a race lost, too.
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED
                || *c == SqlState::UNIQUE_VIOLATION =>
        {
            Failure::Conflict
        }
        Some(c) if *c == SqlState::DISK_FULL || *c == SqlState::OUT_OF_MEMORY => Failure::Full,
        // Class 22, data exception: a value the request carried (a NUL in
        // text) that no column can hold. The database is fine.
        Some(c) if c.code().starts_with("22") => Failure::Refused,
        Some(c) if *c == SqlState::DATA_CORRUPTED || *c == SqlState::INDEX_CORRUPTED => {
            Failure::Corrupt
        }
        _ => Failure::Unavailable,
    };
    // The driver's own text for a server error is only "db error"; the server's
    // message (and what it names) is what an operator needs to read.
    let text = match e.as_db_error() {
        Some(db) => format!(
            "{}: {}{}",
            db.severity(),
            db.message(),
            db.detail().map(|d| format!(" ({d})")).unwrap_or_default()
        ),
        None => e.to_string(),
    };
    StoreError::Backend {
        failure,
        source: text.into(),
    }
}

/// A connection could not be had from the pool (the database is down, or every
/// connection is busy past the wait).
pub(crate) fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => pg_error(e),
        other => StoreError::Backend {
            failure: Failure::Unavailable,
            source: Box::new(other),
        },
    }
}

/// A stored record that does not read back.
pub(crate) fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::corrupt(format!("{what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_timeout_is_unavailable() {
        let e = pool_error(deadpool_postgres::PoolError::Timeout(
            deadpool_postgres::TimeoutType::Wait,
        ));
        assert_eq!(e.failure(), Failure::Unavailable);
    }

    /// Only an operation's failure counts, once, where it is seen; converting an
    /// error counts nothing.
    #[test]
    fn an_error_is_counted_by_the_operation_that_saw_it_not_by_its_conversion() {
        let full = || {
            crate::store::error_counters()
                .get_or_create(&crate::store::health::ErrorKindLabel { kind: "full" })
                .get()
        };
        let before = full();
        let seen: Result<(), StoreError> = Err(StoreError::Backend {
            failure: Failure::Full,
            source: "no space left".into(),
        });
        let _ = pool_error(deadpool_postgres::PoolError::Closed);
        assert_eq!(full(), before, "a conversion counts nothing");
        assert!(super::super::stats::counted(seen).is_err());
        assert_eq!(full(), before + 1, "the failed operation counts once");
    }
}
