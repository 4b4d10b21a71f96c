//! Endpoints: create, read, list, replace, delete.

use super::{DeliveryRecord, DeliveryState, EndpointRecord, Store, StoreError, keys, records};

impl Store {
    /// Stores a new endpoint unless the tenant already has `max` of them; `false` then.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn create_endpoint(
        &self,
        ep: &EndpointRecord,
        max: usize,
    ) -> Result<bool, StoreError> {
        let _guard = self.inner.write_lock.lock().await;
        let count = self
            .inner
            .records
            .scan_prefix(keys::endpoints_of(&ep.tenant_id))
            .keys()
            .take(max)
            .count();
        if count >= max {
            return Ok(false);
        }
        self.put_endpoint(ep).await?;
        Ok(true)
    }

    /// Replaces an endpoint record.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn put_endpoint(&self, ep: &EndpointRecord) -> Result<(), StoreError> {
        let mut batch = super::Writes::default();
        batch.insert(keys::endpoint(&ep.tenant_id, &ep.id), records::encode(ep));
        self.commit(batch).await
    }

    /// Replaces an endpoint record only if the endpoint still exists; `false` if it
    /// was deleted meanwhile (a PATCH racing a DELETE must not bring it back).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn replace_endpoint(&self, ep: &EndpointRecord) -> Result<bool, StoreError> {
        let key = keys::endpoint(&ep.tenant_id, &ep.id);
        let bytes = records::encode(ep);
        self.update_endpoint_bytes(&key, |_| Some(bytes.clone()))
            .await
    }

    /// One endpoint of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub fn endpoint(&self, tenant: &str, id: &str) -> Result<Option<EndpointRecord>, StoreError> {
        self.get(&keys::endpoint(tenant, id))
    }

    /// A tenant's endpoints, newest first, after `cursor`; `true` if more follow.
    ///
    /// # Errors
    /// On a storage failure.
    pub fn list_endpoints(
        &self,
        tenant: &str,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<(Vec<EndpointRecord>, bool), StoreError> {
        let mut out = Vec::new();
        for item in self.scan_rev::<EndpointRecord>(&keys::endpoints_of(tenant)) {
            let (_, ep) = item?;
            if cursor.is_some_and(|c| ep.id.as_str() >= c) {
                continue;
            }
            if out.len() == limit {
                return Ok((out, true));
            }
            out.push(ep);
        }
        Ok((out, false))
    }

    /// All of a tenant's endpoints (for fan-out).
    ///
    /// # Errors
    /// On a storage failure.
    pub fn endpoints_of(&self, tenant: &str) -> Result<Vec<EndpointRecord>, StoreError> {
        self.scan_rev::<EndpointRecord>(&keys::endpoints_of(tenant))
            .map(|r| r.map(|(_, ep)| ep))
            .collect()
    }

    /// Every endpoint of every tenant (for the scheduler at start).
    ///
    /// # Errors
    /// On a storage failure.
    pub fn all_endpoints(&self) -> Result<Vec<EndpointRecord>, StoreError> {
        self.scan_rev::<EndpointRecord>(&keys::all_endpoints())
            .map(|r| r.map(|(_, ep)| ep))
            .collect()
    }

    /// Deletes an endpoint; its pending deliveries become dead (`endpoint_deleted`).
    /// Returns how many deliveries that ended.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn delete_endpoint(
        &self,
        ep: &EndpointRecord,
        now_ms: u64,
    ) -> Result<usize, StoreError> {
        let mut batch = super::Writes::default();
        let mut ended = 0;
        let lanes = keys::Lane::ALL.map(|lane| {
            self.inner
                .records
                .scan_prefix(keys::schedule_of(lane, &ep.id))
                .keys()
        });
        for key in lanes.into_iter().flatten() {
            let key = key?;
            batch.remove(key.clone());
            let Some(entry) = keys::ScheduleKey::decode(&key) else {
                continue;
            };
            let dkey = keys::delivery(&ep.tenant_id, &entry.delivery_id);
            if let Some(mut d) = self.get::<DeliveryRecord>(&dkey)?
                && d.state == DeliveryState::Pending
            {
                d.state = DeliveryState::Dead;
                d.dead_reason = Some("endpoint_deleted".into());
                d.next_attempt_at_ms = None;
                d.updated_at_ms = now_ms;
                batch.insert(dkey, records::encode(&d));
                ended += 1;
            }
        }
        batch.remove(keys::endpoint(&ep.tenant_id, &ep.id));
        self.commit(batch).await?;
        Ok(ended)
    }

    /// Changes one endpoint in place (breaker transitions, automatic disabling);
    /// `false` if it no longer exists.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn update_endpoint(
        &self,
        tenant: &str,
        id: &str,
        change: impl Fn(&mut EndpointRecord),
    ) -> Result<bool, StoreError> {
        let key = keys::endpoint(tenant, id);
        self.update_endpoint_bytes(&key, |bytes| {
            let mut ep = records::decode::<EndpointRecord>(bytes).ok()?;
            change(&mut ep);
            Some(records::encode(&ep))
        })
        .await
    }

    /// Rewrites the endpoint at `key` with what `change` makes of its bytes, in one
    /// transaction, and waits until that is durable; `false` if it does not exist
    /// (or `change` declines).
    async fn update_endpoint_bytes(
        &self,
        key: &[u8],
        change: impl Fn(&[u8]) -> Option<Vec<u8>>,
    ) -> Result<bool, StoreError> {
        let done = self.inner.records.transaction(|tx| {
            let Some(new) = tx.get(key)?.and_then(|old| change(&old)) else {
                return Ok(false);
            };
            tx.insert(key, new)?;
            Ok::<_, sled::transaction::ConflictableTransactionError<()>>(true)
        });
        match done {
            Ok(true) => {
                self.wait_own_write().await?;
                Ok(true)
            }
            Ok(false) | Err(sled::transaction::TransactionError::Abort(())) => Ok(false),
            Err(sled::transaction::TransactionError::Storage(e)) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{BreakerRecord, StoredSecret};

    fn endpoint() -> EndpointRecord {
        EndpointRecord {
            id: "ep_1".into(),
            tenant_id: "t".into(),
            url: "https://example.com/hook".into(),
            description: String::new(),
            event_types: vec!["*".into()],
            policy: None,
            plugin: None,
            timeout_ms: 15_000,
            max_in_flight: 16,
            rate_limit_per_s: None,
            disabled: false,
            disabled_reason: None,
            disabled_at_ms: None,
            secrets: vec![StoredSecret {
                secret: "whsec_x".into(),
                expires_at_ms: None,
            }],
            breaker: BreakerRecord::default(),
            trusted: false,
            last_success_ms: None,
            created_at_ms: 0,
        }
    }

    #[tokio::test]
    async fn a_replace_racing_a_delete_does_not_bring_the_endpoint_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), 1 << 20).unwrap();
        let stop = tokio_util::sync::CancellationToken::new();
        let flusher = store.start_flusher(store.sled_durability().unwrap(), stop.clone());
        let mut ep = endpoint();
        store.put_endpoint(&ep).await.unwrap();
        ep.description = "patched".into();
        assert!(store.replace_endpoint(&ep).await.unwrap());
        assert_eq!(
            store.endpoint("t", "ep_1").unwrap().unwrap().description,
            "patched"
        );
        // The DELETE lands between the PATCH's read and its write.
        store.delete_endpoint(&ep, 1).await.unwrap();
        ep.description = "too late".into();
        assert!(!store.replace_endpoint(&ep).await.unwrap());
        assert!(store.endpoint("t", "ep_1").unwrap().is_none());
        stop.cancel();
        flusher.await.unwrap();
    }
}
