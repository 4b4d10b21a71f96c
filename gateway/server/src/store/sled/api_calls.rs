//! Idempotent API calls (see `store/api_calls.rs`): one record per scope and
//! key among ingest's idempotency records, claimed under the key's lock.

use super::{SledStore, StoreError, keys, records};
use crate::store::{ApiCall, ApiCallRecord};

impl SledStore {
    pub(crate) async fn claim_api_call(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now_ms: u64,
    ) -> Result<ApiCall, StoreError> {
        let _guard = self.inner.key_locks.stripe(scope, key).lock().await;
        let stored_at = keys::idempotency(scope, key);
        if let Some(found) = self.get::<ApiCallRecord>(&stored_at)?
            && let Some(met) = found.meets(fingerprint, now_ms)
        {
            return Ok(met);
        }
        let claim = ApiCallRecord {
            fingerprint: fingerprint.to_owned(),
            answer: None,
            created_at_ms: now_ms,
        };
        let mut w = super::Writes::default();
        w.insert(stored_at, records::encode(&claim));
        self.commit(w).await?;
        Ok(ApiCall::Claimed)
    }

    pub(crate) async fn answer_api_call(
        &self,
        scope: &str,
        key: &str,
        record: Option<&ApiCallRecord>,
    ) -> Result<(), StoreError> {
        let _guard = self.inner.key_locks.stripe(scope, key).lock().await;
        let mut w = super::Writes::default();
        match record {
            Some(r) => w.insert(keys::idempotency(scope, key), records::encode(r)),
            None => w.remove(keys::idempotency(scope, key)),
        }
        self.commit(w).await?;
        Ok(())
    }
}
