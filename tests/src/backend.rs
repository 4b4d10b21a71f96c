//! The storage backend a test gateway runs on, as a parameter: a test written
//! once as `async fn name(backend: Backend)` runs on each backend through
//! [`on_each_backend!`](crate::on_each_backend), with no copy of its body.

use std::sync::Arc;

use hookgate_server::lab::ScratchDatabase;
use hookgate_server::{Config, StoreBackend};

use crate::test_config;

/// Where a test gateway keeps its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded sled database in a temporary dir.
    Sled,
    /// A scratch PostgreSQL database of the test's own on `HOOKGATE_TEST_POSTGRES`.
    Postgres,
}

/// Everything a test gateway needs on one backend: its temporary dir (sled's
/// data, and the caches on either backend), its config, and the scratch
/// database (dropped with the last clone of this).
#[derive(Clone)]
pub struct Bed {
    pub dir: Arc<tempfile::TempDir>,
    pub config: Config,
    pub(crate) db: Option<Arc<ScratchDatabase>>,
}

impl Backend {
    /// A fresh bed on this backend with the default test config. A PostgreSQL
    /// server that cannot be reached fails the test, saying how to start it.
    pub async fn bed(self) -> Bed {
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let mut config = test_config(dir.path());
        let db = match self {
            Self::Sled => None,
            Self::Postgres => {
                let db = ScratchDatabase::create()
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                config.store.backend = StoreBackend::Postgres;
                config.store.url = Some(db.url.clone());
                config.store.pool_size = 8;
                config.store.lease_margin_ms = 2_000;
                Some(Arc::new(db))
            }
        };
        Bed { dir, config, db }
    }
}

impl Bed {
    /// Another gateway's bed on the same store: a data dir (caches) of its own,
    /// the same database. On sled, where one process owns the data, there is none.
    pub fn another_node(&self) -> Option<Bed> {
        self.db.as_ref()?;
        let dir = Arc::new(tempfile::tempdir().unwrap());
        let mut config = self.config.clone();
        config.store.data_dir = dir.path().to_path_buf();
        Some(Bed {
            dir,
            config,
            db: self.db.clone(),
        })
    }
}

/// Runs each named test (an `async fn(Backend)`) once per backend, as
/// `sled::name` and `postgres::name`.
#[macro_export]
macro_rules! on_each_backend {
    ($($name:ident),* $(,)?) => {
        $crate::on_each_backend!(@backend sled Sled, $($name),*);
        $crate::on_each_backend!(@backend postgres Postgres, $($name),*);
    };
    (@backend $module:ident $variant:ident, $($name:ident),*) => {
        mod $module {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::Backend::$variant).await
                }
            )*
        }
    };
}
