//! What every ingest reads, kept for a moment: which tenant an API key belongs
//! to, and a tenant's endpoints (for fan-out). On the embedded backend these are
//! local reads; here each would be a round trip per event.
//!
//! This gateway's own writes forget what they change before they return, so it
//! never serves its own stale answer. Another gateway's writes arrive as
//! notifications, which forget the same way; should one be lost, nothing is
//! kept longer than [`FRESH`]. A read that raced a write is not kept (each map
//! has a generation that every forget moves on).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::store::{Change, EndpointRecord};

/// The longest anything is kept.
pub(crate) const FRESH: Duration = Duration::from_secs(1);

/// Most entries in each map; past it the map starts afresh.
const MOST: usize = 10_000;

/// One map of kept answers.
struct Kept<K, V> {
    entries: Mutex<HashMap<K, (V, Instant)>>,
    generation: AtomicU64,
}

impl<K: std::hash::Hash + Eq, V: Clone> Kept<K, V> {
    fn new() -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
        }
    }

    fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        let entries = self.entries.lock().ok()?;
        let (value, at) = entries.get(key)?;
        (at.elapsed() < FRESH).then(|| value.clone())
    }

    /// Keeps `value`, read when the generation was `read_at`, unless a forget
    /// came in between.
    fn put(&self, key: K, value: V, read_at: u64) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if self.generation.load(Ordering::SeqCst) != read_at {
            return;
        }
        if entries.len() >= MOST {
            entries.clear();
        }
        entries.insert(key, (value, Instant::now()));
    }

    fn forget(&self, which: impl Fn(&K, &V) -> bool) {
        if let Ok(mut entries) = self.entries.lock() {
            self.generation.fetch_add(1, Ordering::SeqCst);
            entries.retain(|k, (v, _)| !which(k, v));
        }
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }
}

/// API keys to tenants, and tenants to their endpoints.
pub(super) struct ReadCache {
    tenants: Kept<[u8; 32], String>,
    endpoints: Kept<String, Vec<EndpointRecord>>,
}

impl ReadCache {
    pub(super) fn new() -> Self {
        Self {
            tenants: Kept::new(),
            endpoints: Kept::new(),
        }
    }

    pub(super) fn tenant(&self, key_hash: &[u8; 32]) -> Option<String> {
        self.tenants.get(key_hash)
    }

    /// The generation to pass to [`ReadCache::keep_tenant`] after a read.
    pub(super) fn tenants_read(&self) -> u64 {
        self.tenants.generation()
    }

    pub(super) fn keep_tenant(&self, key_hash: [u8; 32], tenant: String, read_at: u64) {
        self.tenants.put(key_hash, tenant, read_at);
    }

    pub(super) fn endpoints(&self, tenant: &str) -> Option<Vec<EndpointRecord>> {
        self.endpoints.get(tenant)
    }

    /// The generation to pass to [`ReadCache::keep_endpoints`] after a read.
    pub(super) fn endpoints_read(&self) -> u64 {
        self.endpoints.generation()
    }

    pub(super) fn keep_endpoints(&self, tenant: &str, eps: Vec<EndpointRecord>, read_at: u64) {
        self.endpoints.put(tenant.to_owned(), eps, read_at);
    }

    /// Forgets what `change` (from this gateway or another) makes stale.
    pub(super) fn forget(&self, change: &Change) {
        match change {
            Change::Endpoint { tenant_id, .. } => self.forget_endpoints(tenant_id),
            Change::Tenant { tenant_id } => self.forget_tenant(tenant_id),
            _ => {}
        }
    }

    pub(super) fn forget_endpoints(&self, tenant: &str) {
        self.endpoints.forget(|t, _| t == tenant);
    }

    pub(super) fn forget_tenant(&self, tenant: &str) {
        self.tenants.forget(|_, t| t == tenant);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{EndpointId, TenantId};

    #[test]
    fn a_read_that_raced_a_forget_is_not_kept() {
        let cache = ReadCache::new();
        let read_at = cache.tenants_read();
        cache.forget_tenant("acme");
        cache.keep_tenant([1; 32], "acme".into(), read_at);
        assert_eq!(cache.tenant(&[1; 32]), None);
        let read_at = cache.tenants_read();
        cache.keep_tenant([1; 32], "acme".into(), read_at);
        assert_eq!(cache.tenant(&[1; 32]).as_deref(), Some("acme"));
        cache.forget(&Change::Tenant {
            tenant_id: "acme".into(),
        });
        assert_eq!(cache.tenant(&[1; 32]), None, "a rotation forgets the key");
    }

    #[test]
    fn endpoint_changes_forget_only_their_tenant() {
        let cache = ReadCache::new();
        for t in ["a", "b"] {
            let read_at = cache.endpoints_read();
            cache.keep_endpoints(t, Vec::new(), read_at);
        }
        cache.forget(&Change::endpoint(
            &TenantId::from("a"),
            &EndpointId::from("ep_1"),
        ));
        assert!(cache.endpoints("a").is_none());
        assert!(cache.endpoints("b").is_some());
    }
}
