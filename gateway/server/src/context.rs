//! The context every part of the running gateway shares.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::address_guard::AddressGuard;
use crate::clock::Clock;
use crate::config::Config;
use crate::delivery::{DeliveryHandle, ScheduleWrites};
use crate::store::Store;

/// Shared state of one running gateway.
pub struct AppContext {
    pub config: Arc<Config>,
    pub store: Store,
    pub clock: Arc<dyn Clock>,
    pub guard: AddressGuard,
    /// SHA-256 of the admin token.
    pub admin_hash: [u8; 32],
    pub disk: DiskWatch,
    /// Answers which deliveries are in flight.
    pub delivery: DeliveryHandle,
    /// The store writes that change what is due (ingest, replay, endpoint
    /// changes); each tells the delivery engine.
    pub writes: ScheduleWrites,
    /// Metrics, stats and alert rules.
    pub telemetry: Arc<crate::telemetry::Telemetry>,
    /// Tenants' retry-policy plugins, stored and loaded (endpoints may bind only
    /// loaded ones).
    pub plugins: Arc<crate::plugins::PluginService>,
    /// Room for policy simulations running at once (`POST /v1/policy/simulate`).
    pub simulations: crate::api::simulate::SimulationSlots,
}

/// Whether free disk in the data dir has fallen below `min_free_disk`.
#[derive(Debug, Clone, Default)]
pub struct DiskWatch(Arc<AtomicBool>);

impl DiskWatch {
    /// True while free disk is below the minimum: ingest answers 507, `/healthz` 503.
    pub fn is_low(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Re-reads free space in `dir`; an unreadable filesystem counts as low.
    pub fn refresh(&self, dir: &std::path::Path, min_free: u64) {
        let low = match rustix::fs::statvfs(dir) {
            Ok(s) => s.f_bavail.saturating_mul(s.f_frsize) < min_free,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read free disk space");
                true
            }
        };
        if low && !self.is_low() {
            tracing::error!(min_free, "free disk below min_free_disk: refusing ingest");
        }
        self.0.store(low, Ordering::Relaxed);
    }
}
