//! Small pieces every part of the backend uses: records to and from their
//! `record` columns, Unix ms as `bigint`, and serializable transactions retried
//! on the conflicts they are meant to produce.

use std::time::Duration;

use serde::{Serialize, de::DeserializeOwned};

use super::error::corrupt;
use super::{pg_error, stats};
use crate::store::{Failure, StoreError};

/// How often a serializable transaction is tried before its conflict is returned.
const CONFLICT_RETRIES: u64 = 30;

/// Runs `op` again, after a short random pause, while it fails with a
/// serialisation conflict: a serializable transaction that lost a race did
/// nothing and may simply run again.
pub(super) async fn retry_conflicts<T, F, Fut>(op: F) -> Result<T, StoreError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    use rand::RngExt;
    let mut tries = 0;
    loop {
        tries += 1;
        match op().await {
            Err(e) if e.failure() == Failure::Conflict && tries < CONFLICT_RETRIES => {
                // Retried, so the caller never sees it: counted here.
                crate::store::count_error(Failure::Conflict);
                let pause = rand::rng().random_range(1..=5 * tries);
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
            other => return other,
        }
    }
}

/// A serializable transaction on `client`, for checks that count rows (the
/// caps); run it under [`retry_conflicts`].
pub(super) async fn serializable(
    client: &mut stats::Timed,
) -> Result<deadpool_postgres::Transaction<'_>, StoreError> {
    client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::Serializable)
        .start()
        .await
        .map_err(pg_error)
}

/// A record as stored in a `record` column.
pub(super) fn to_json<T: Serialize>(value: &T) -> String {
    // Serialising our own plain structs cannot fail.
    serde_json::to_string(value).expect("records serialise")
}

/// A `record` column read back.
pub(super) fn from_json<T: DeserializeOwned>(text: &str, what: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(what, e))
}

/// Unix ms as PostgreSQL's `bigint`.
pub(super) fn ms(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A `bigint` read back as Unix ms.
pub(super) fn unms(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}
