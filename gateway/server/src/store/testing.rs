//! Fixtures for the store's unit tests: a store on a temporary dir with its
//! flusher running, and records to fill it with.

use super::scratch_database::ScratchDatabase;
use super::sled::SledStore;
use crate::config::{StoreBackend, StoreConfig};
use serde_json::value::RawValue;

use super::{
    BreakerRecord, DeliveryRecord, EndpointRecord, IngestOutcome, NewEvent, Store, StoredSecret,
};

/// A store with its background work running; stopped on drop.
pub(crate) struct TestStore {
    pub(crate) store: Store,
    /// Where it lives: a temporary dir, or a scratch PostgreSQL database
    /// (dropped with it).
    _place: Place,
}

enum Place {
    Dir { _dir: tempfile::TempDir },
    Database(ScratchDatabase),
}

impl TestStore {
    /// [`TestStore::sled`], the backend unit tests run on unless they run on
    /// every backend (`store::contract`).
    pub(crate) async fn new() -> Self {
        Self::sled().await
    }

    /// A store on sled in a fresh temporary dir.
    pub(crate) async fn sled() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = StoreConfig {
            data_dir: dir.path().to_path_buf(),
            cache_capacity: 1 << 20,
            min_free_disk: 0,
            ..StoreConfig::default()
        };
        let store = Store::open(&config).await.unwrap();
        Self {
            store,
            _place: Place::Dir { _dir: dir },
        }
    }

    /// A store on a scratch PostgreSQL database of its own, with a short lease
    /// margin. Fails (never skips) when the server cannot be reached.
    pub(crate) async fn postgres() -> Self {
        let db = ScratchDatabase::create()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let config = StoreConfig {
            backend: StoreBackend::Postgres,
            url: Some(db.url.clone()),
            pool_size: 8,
            lease_margin_ms: 2_000,
            ..StoreConfig::default()
        };
        let store = Store::open(&config).await.unwrap();
        Self {
            store,
            _place: Place::Database(db),
        }
    }

    /// Another gateway's store, as `node_id`, on this one's PostgreSQL database.
    pub(crate) async fn another_node(&self, node_id: &str) -> Store {
        let Place::Database(db) = &self._place else {
            panic!("one process owns a sled store");
        };
        let config = StoreConfig {
            backend: StoreBackend::Postgres,
            url: Some(db.url.clone()),
            pool_size: 4,
            lease_margin_ms: 2_000,
            node_id: Some(node_id.to_owned()),
            ..StoreConfig::default()
        };
        Store::open(&config).await.unwrap()
    }

    /// The scratch database's URL, on PostgreSQL.
    pub(crate) fn database_url(&self) -> Option<&str> {
        match &self._place {
            Place::Database(db) => Some(&db.url),
            Place::Dir { .. } => None,
        }
    }

    /// The sled backend, for tests that look inside it.
    pub(crate) fn embedded(&self) -> &SledStore {
        self.store.sled()
    }

    /// Stores endpoint `id` of `tenant`.
    pub(crate) async fn endpoint(&self, tenant: &str, id: &str) -> EndpointRecord {
        let ep = endpoint(tenant, id);
        self.store.put_endpoint(&ep).await.unwrap();
        ep
    }

    /// Ingests one event for `endpoints`; returns its deliveries.
    pub(crate) async fn ingest(
        &self,
        tenant: &str,
        endpoints: &[&EndpointRecord],
        now_ms: u64,
    ) -> Vec<DeliveryRecord> {
        let payload = RawValue::from_string("{\"n\":1}".into()).unwrap();
        let outcome = self
            .store
            .ingest(NewEvent {
                labels: Default::default(),
                tenant_id: tenant,
                event_type: "order.paid",
                payload: &payload,
                idempotency: None,
                endpoints: endpoints.to_vec(),
                now_ms,
            })
            .await
            .unwrap();
        match outcome {
            IngestOutcome::Created { deliveries, .. } => deliveries,
            other => panic!("ingest: {other:?}"),
        }
    }
}

impl TestStore {
    /// Endpoints `ep_a` and `ep_b` of tenant `t` with `events` events each, both
    /// deleted (their deliveries dead, `endpoint_deleted`), then `ep_a` stored again.
    pub(crate) async fn dead_with_one_endpoint_restored(&self, events: usize) {
        let (a, b) = (
            self.endpoint("t", "ep_a").await,
            self.endpoint("t", "ep_b").await,
        );
        for _ in 0..events {
            self.ingest("t", &[&a, &b], 0).await;
        }
        for ep in [&a, &b] {
            self.store.delete_endpoint(ep, 1).await.unwrap();
        }
        self.store.put_endpoint(&a).await.unwrap();
    }
}

impl TestStore {
    /// Removes endpoint `id` of `tenant` and nothing else, as a crash between
    /// `delete_endpoint`'s first step and the end of its work leaves it: the one
    /// state the contract needs that no facade call makes. Each backend makes it
    /// its own way.
    pub(crate) async fn crash_mid_delete(&self, tenant: &str, id: &str) {
        match &self._place {
            Place::Dir { .. } => {
                let key = super::sled::keys::endpoint(tenant, id);
                assert!(
                    self.embedded()
                        .records()
                        .unwrap()
                        .remove(key)
                        .unwrap()
                        .is_some()
                );
            }
            Place::Database(db) => {
                let (client, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                tokio::spawn(connection);
                let sql = "DELETE FROM endpoints WHERE tenant_id = $1 AND id = $2";
                assert_eq!(client.execute(sql, &[&tenant, &id]).await.unwrap(), 1);
            }
        }
    }

    /// Removes the record of `tenant`'s event `id` behind the facade's back, as
    /// damaged storage would (embedded store only).
    pub(crate) async fn lose_event(&self, tenant: &str, id: &str) {
        let mut w = super::sled::Writes::default();
        w.remove(super::sled::keys::event(tenant, id));
        self.embedded().commit(w).await.unwrap();
    }
}

impl Drop for TestStore {
    fn drop(&mut self) {
        self.store.background.stop.cancel();
    }
}

/// An enabled endpoint record with a closed breaker.
pub(crate) fn endpoint(tenant: &str, id: &str) -> EndpointRecord {
    EndpointRecord {
        id: id.into(),
        tenant_id: tenant.into(),
        url: "https://example.com/hook".into(),
        description: String::new(),
        event_types: vec!["*".into()],
        policy: None,
        plugin: None,
        transform: None,
        timeout_ms: 15_000,
        max_in_flight: 16,
        rate_limit_per_s: None,
        disabled: false,
        disabled_reason: None,
        disabled_at_ms: None,
        secrets: vec![StoredSecret {
            secret: "whsec_x".into(),
            expires_at_ms: None,
            signing_key: None,
        }],
        breaker: BreakerRecord::default(),
        trusted: false,
        last_success_ms: None,
        created_at_ms: 0,
        updated_at_ms: 0,
        headers: Vec::new(),
        metadata: std::collections::BTreeMap::new(),
        uid: None,
        channels: Vec::new(),
        filter: None,
        signature: Default::default(),
        destination: None,
    }
}

impl super::Store {
    /// Creates tenant `id` whose key hashes to `key`, named after its id;
    /// `None` if the id is taken.
    pub(crate) async fn create_test_tenant(
        &self,
        id: &crate::ids::TenantId,
        key: [u8; 32],
        now_ms: u64,
    ) -> Result<Option<super::TenantRecord>, super::StoreError> {
        let rec = super::TenantRecord::new(id.clone(), key, now_ms);
        Ok(self.create_tenant(&rec).await?.written())
    }

    /// Gives tenant `id` the key that hashes to `key`; `false` if there is no
    /// such live tenant.
    pub(crate) async fn rotate_test_tenant_key(
        &self,
        id: &crate::ids::TenantId,
        key: [u8; 32],
    ) -> Result<bool, super::StoreError> {
        let written = self
            .update_tenant(id, |t| t.key_sha256 = hex::encode(key))
            .await?;
        Ok(written.written().is_some())
    }
}
