//! Ingest admission: delivery is never starved by intake. While a tenant's
//! backlog (first attempts due and not started, over its endpoints that their
//! own limits do not hold) is above `ingest.backlog_per_tenant`, its next
//! ingest waits, up to `ingest.admission_wait`, for the backlog to fall; then
//! it is accepted regardless. An ingest is slowed, never refused, and only
//! the tenant whose backlog is deep waits: the others' ingests and every
//! delivery go on. The backlog is read from the store (so on a cluster it is
//! the cluster's), at most once per [`REFRESH`] per tenant, however many of
//! its ingests arrive.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::endpoint_holds::EndpointHolds;
use crate::clock::Clock;
use crate::config::IngestConfig;
use crate::ids::{EndpointId, TenantId};
use crate::store::Store;
use crate::telemetry::Telemetry;

/// How long a tenant's measured backlog stands before it is read again.
const REFRESH: Duration = Duration::from_millis(100);

/// How often a waiting ingest looks at the backlog again.
const POLL: Duration = Duration::from_millis(25);

/// Tenants remembered before those not measured for [`FORGET_AFTER`] are dropped.
const REMEMBERED_TENANTS: usize = 4_096;
const FORGET_AFTER: Duration = Duration::from_secs(60);

/// Slows a tenant's ingest while its delivery backlog is deep.
pub(crate) struct IngestAdmission {
    store: Store,
    clock: Arc<dyn Clock>,
    holds: Arc<EndpointHolds>,
    telemetry: Arc<Telemetry>,
    limit: usize,
    wait: Duration,
    tenants: Mutex<HashMap<TenantId, Arc<TenantBacklog>>>,
}

/// One tenant's last measured backlog; its lock makes one ingest measure
/// while the tenant's others wait for the figure.
#[derive(Default)]
struct TenantBacklog {
    measured: tokio::sync::Mutex<Option<(Instant, usize)>>,
}

impl IngestAdmission {
    pub(crate) fn new(
        store: Store,
        clock: Arc<dyn Clock>,
        holds: Arc<EndpointHolds>,
        telemetry: Arc<Telemetry>,
        config: &IngestConfig,
    ) -> Self {
        Self {
            store,
            clock,
            holds,
            telemetry,
            limit: usize::try_from(config.backlog_per_tenant).unwrap_or(usize::MAX),
            wait: Duration::from_millis(config.admission_wait),
            tenants: Mutex::default(),
        }
    }

    /// Waits while `tenant`'s backlog is above the limit, at most the
    /// configured wait; returns how long it waited (zero: it was not held).
    pub(crate) async fn admit(&self, tenant: &str) -> Duration {
        if self.limit == 0 || self.wait.is_zero() {
            return Duration::ZERO;
        }
        let backlog = self.backlog_of(tenant);
        let started = Instant::now();
        let deadline = started + self.wait;
        let mut held = false;
        while self.measure(tenant, &backlog).await >= self.limit {
            held = true;
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            tokio::time::sleep(POLL.min(deadline - now)).await;
        }
        if !held {
            return Duration::ZERO;
        }
        let waited = started.elapsed();
        self.telemetry.ingest_held(waited);
        waited
    }

    fn backlog_of(&self, tenant: &str) -> Arc<TenantBacklog> {
        let Ok(mut tenants) = self.tenants.lock() else {
            return Arc::default();
        };
        if let Some(known) = tenants.get(tenant) {
            return Arc::clone(known);
        }
        if tenants.len() >= REMEMBERED_TENANTS {
            tenants.retain(|_, b| {
                b.measured
                    .try_lock()
                    .is_ok_and(|m| m.is_some_and(|(at, _)| at.elapsed() < FORGET_AFTER))
            });
        }
        Arc::clone(tenants.entry(TenantId::from(tenant)).or_default())
    }

    /// The tenant's backlog, read again when the last figure is older than
    /// [`REFRESH`]. A failed read admits: the ingest's own write then meets
    /// the failure and answers it.
    async fn measure(&self, tenant: &str, backlog: &TenantBacklog) -> usize {
        let mut measured = backlog.measured.lock().await;
        if let Some((at, count)) = *measured
            && at.elapsed() < REFRESH
        {
            return count;
        }
        let count = self.read_backlog(tenant).await.unwrap_or(0);
        *measured = Some((Instant::now(), count));
        count
    }

    async fn read_backlog(&self, tenant: &str) -> Option<usize> {
        let endpoints = self
            .store
            .endpoints_of(&TenantId::from(tenant))
            .await
            .ok()?;
        let counted: Vec<EndpointId> = endpoints
            .into_iter()
            .filter(|ep| !ep.disabled && !self.holds.is_held(&ep.id))
            .map(|ep| ep.id)
            .collect();
        if counted.is_empty() {
            return Some(0);
        }
        let now = self.clock.now_ms();
        self.store
            .due_first_attempts(&counted, now, self.limit)
            .await
            .ok()
    }
}
