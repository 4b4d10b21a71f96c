//! A census of what the store holds: one fingerprint per record, so a test can
//! tell that an operation left nothing behind (a deleted tenant's records) by
//! comparing the census before its records were made with the one after they
//! were removed. Background task records are left out: a finished task is the
//! receipt of the work, kept on purpose.

use std::collections::BTreeSet;

use super::{Backend, Store, StoreError};

/// The tables whose rows are records of tenants (PostgreSQL).
const TENANT_TABLES: &[&str] = &[
    "tenants",
    "endpoints",
    "events",
    "deliveries",
    "queue",
    "attempts",
    "late_attempts",
    "idempotency",
    "plugins",
    "plugin_bytes",
    "plugin_uploads",
    "endpoint_runtime",
    "endpoint_stats",
];

impl Store {
    /// One fingerprint per stored record (a sled key and value, a table row),
    /// tasks aside.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn census(&self) -> Result<BTreeSet<String>, StoreError> {
        match &self.backend {
            Backend::Sled(s) => s.census(),
            Backend::Postgres(pg) => pg.census(TENANT_TABLES).await,
        }
    }
}
