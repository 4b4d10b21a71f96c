//! Work that one gateway at a time must do for the whole store: the retention
//! sweep, the idempotency sweep, seeding the gauges, evaluating alert rules and
//! keeping PostgreSQL's tables fit for the hot path.
//! Run by several gateways on one shared store, such work would be done (and
//! alerts fired) once per gateway. The store grants it: the embedded backend,
//! which one process owns, always does; a shared backend grants each name to
//! one node at a time.

use super::{Backend, Store, StoreError};

/// The singleton work hookgate does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Singleton {
    Retention,
    IdempotencySweep,
    GaugeSeed,
    AlertRules,
    TableUpkeep,
}

impl Singleton {
    /// The name a shared backend keys its grant by.
    pub fn name(self) -> &'static str {
        match self {
            Self::Retention => "retention",
            Self::IdempotencySweep => "idempotency_sweep",
            Self::GaugeSeed => "gauge_seed",
            Self::AlertRules => "alert_rules",
            Self::TableUpkeep => "table_upkeep",
        }
    }
}

impl Store {
    /// Keeps the tables fit for the hot path: vacuums the delivery queue if it
    /// has churned, analyzes a table that outgrew its statistics (PostgreSQL;
    /// the embedded store has nothing to keep). Singleton work.
    ///
    /// # Errors
    /// On a storage failure; the caller tries again next round.
    pub async fn tidy_tables(&self) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Sled(_) => Ok(()),
            Backend::Postgres(pg) => self.observed(pg.tidy_tables().await).map(drop),
        }
    }
}

/// Leave to do one round of singleton work; held while doing it.
#[derive(Debug)]
pub struct Grant {
    pub work: Singleton,
}

impl Store {
    /// Whether this gateway may do one round of `work` now (`None`: another
    /// gateway has it).
    ///
    /// # Errors
    /// On a storage failure; the caller skips this round.
    pub async fn singleton(&self, work: Singleton) -> Result<Option<Grant>, StoreError> {
        match &self.backend {
            Backend::Sled(_) => Ok(Some(Grant { work })),
            Backend::Postgres(pg) => self.observed(pg.singleton(work).await),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::TestStore;

    #[tokio::test]
    async fn the_embedded_store_grants_every_singleton() {
        let t = TestStore::new().await;
        for work in [
            Singleton::Retention,
            Singleton::IdempotencySweep,
            Singleton::GaugeSeed,
            Singleton::AlertRules,
        ] {
            let grant = t.store.singleton(work).await.unwrap();
            assert_eq!(grant.map(|g| g.work), Some(work), "{}", work.name());
        }
    }
}
