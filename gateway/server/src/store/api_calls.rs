//! Idempotent API calls: the first answer to a request made with an
//! `Idempotency-Key`, kept 24 hours so that a repeat of the same request gets
//! it again, and a different request under the same key is refused.
//!
//! Kept beside ingest's idempotency records, under the same sweep, with keys
//! of their own (`api ` + the key: a header key cannot hold a space), scoped
//! by caller: a tenant's id, or [`ADMIN_SCOPE`] (which no tenant id can be).
//! A call is claimed before it runs, so a concurrent repeat waits for no
//! answer: it is told the first is still running.

use serde::{Deserialize, Serialize};

use super::{Store, StoreError};

/// The scope of the admin token's calls.
pub(crate) const ADMIN_SCOPE: &str = " admin";

/// How long a claim with no answer holds its key: a call that was running
/// when its gateway died gives the key up after this.
pub(crate) const CLAIM_HOLD_MS: u64 = 60_000;

/// An answer as kept for repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptAnswer {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: String,
}

/// A claimed or answered call, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ApiCallRecord {
    /// What the request was: its method, path and body's meaning, hashed.
    pub fingerprint: String,
    /// The answer, once there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<KeptAnswer>,
    pub created_at_ms: u64,
}

/// What claiming a call found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiCall {
    /// The key is this call's: run it, then keep its answer.
    Claimed,
    /// The same request was answered: answer it again.
    Answered(KeptAnswer),
    /// The same request is still running.
    Running,
    /// Another request used the key.
    KeyReused,
}

/// The stored key of `key`.
pub(crate) fn stored_key(key: &str) -> String {
    format!("api {key}")
}

impl ApiCallRecord {
    /// What a new claim finds, given this record as stored.
    pub(crate) fn meets(&self, fingerprint: &str, now_ms: u64) -> Option<ApiCall> {
        let expired = self.created_at_ms.saturating_add(super::IDEMPOTENCY_TTL_MS) <= now_ms;
        let abandoned =
            self.answer.is_none() && self.created_at_ms.saturating_add(CLAIM_HOLD_MS) <= now_ms;
        if expired || abandoned {
            return None;
        }
        Some(if self.fingerprint != fingerprint {
            ApiCall::KeyReused
        } else {
            match &self.answer {
                Some(a) => ApiCall::Answered(a.clone()),
                None => ApiCall::Running,
            }
        })
    }
}

impl Store {
    /// Claims `key` in `scope` for a request with `fingerprint`, unless a
    /// live record holds it.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn claim_api_call(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        now_ms: u64,
    ) -> Result<ApiCall, StoreError> {
        let key = stored_key(key);
        on_backend!(self, s => s.claim_api_call(scope, &key, fingerprint, now_ms).await)
    }

    /// Keeps the answer of the call claimed under `key` (`None`: lets the key
    /// go, for a call whose failure should be tried again).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn answer_api_call(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        answer: Option<KeptAnswer>,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        let key = stored_key(key);
        let record = answer.map(|a| ApiCallRecord {
            fingerprint: fingerprint.to_owned(),
            answer: Some(a),
            created_at_ms: now_ms,
        });
        on_backend!(self, s => s.answer_api_call(scope, &key, record.as_ref()).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_answers_repeats_refuses_others_and_lapses() {
        let answer = KeptAnswer {
            status: 201,
            content_type: None,
            body: "{}".into(),
        };
        let answered = ApiCallRecord {
            fingerprint: "f".into(),
            answer: Some(answer.clone()),
            created_at_ms: 0,
        };
        assert_eq!(answered.meets("f", 10), Some(ApiCall::Answered(answer)));
        assert_eq!(answered.meets("g", 10), Some(ApiCall::KeyReused));
        assert_eq!(answered.meets("f", super::super::IDEMPOTENCY_TTL_MS), None);
        let running = ApiCallRecord {
            answer: None,
            ..answered
        };
        assert_eq!(running.meets("f", 10), Some(ApiCall::Running));
        assert_eq!(running.meets("f", CLAIM_HOLD_MS), None, "abandoned");
    }
}
