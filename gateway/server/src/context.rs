//! The context every part of the running gateway shares.

use std::sync::Arc;

use crate::address_guard::AddressGuard;
use crate::clock::Clock;
use crate::config::Config;
use crate::delivery::{CountedWrites, DeliveryHandle};
use crate::store::Store;

/// Shared state of one running gateway.
pub(crate) struct AppContext {
    pub config: Arc<Config>,
    pub store: Store,
    pub clock: Arc<dyn Clock>,
    pub guard: AddressGuard,
    /// SHA-256 of the admin token.
    pub admin_hash: [u8; 32],
    /// Answers which deliveries are in flight.
    pub delivery: DeliveryHandle,
    /// The store writes that move a count with them (ingest, replays); the
    /// store's change feed, not these, tells the delivery engine.
    pub writes: CountedWrites,
    /// Metrics, stats and alert rules.
    pub telemetry: Arc<crate::telemetry::Telemetry>,
    /// This gateway's own tracer provider (never a process-global one) and
    /// its export; off unless `telemetry.otlp.endpoint` is set.
    pub traces: crate::telemetry::Traces,
    /// Tenants' retry-policy plugins, stored and loaded (endpoints may bind only
    /// loaded ones).
    pub plugins: Arc<crate::plugins::PluginService>,
    /// Room for policy simulations running at once (`POST /v1/policy/simulate`).
    pub simulations: crate::simulation_slots::SimulationSlots,
    /// The event-type catalog as ingest and endpoint writes consult it.
    pub catalog: Arc<crate::event_catalog::EventCatalog>,
    /// Wakes this gateway's task runner when a request has stored a task, so
    /// it starts now rather than at its next look.
    pub task_wake: Arc<tokio::sync::Notify>,
    /// Where endpoint changes are told to operator endpoints.
    pub operator_events: crate::operator_events::OperatorEvents,
}
