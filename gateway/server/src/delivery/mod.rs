//! Delivery: signing, the HTTP client, the scheduler and its workers.

mod attempt_task;
#[cfg(test)]
mod attempt_tests;
mod aws_transport;
mod breaker;
pub(crate) mod client;
pub(crate) mod connector;
mod counted_writes;
#[cfg(test)]
mod counted_writes_tests;
mod endpoint_holds;
mod endpoint_policy;
#[cfg(test)]
mod fenced_outcome_tests;
mod in_flight;
mod ingest_admission;
#[cfg(test)]
mod ingest_admission_tests;
mod otlp_transport;
mod rate_limit;
mod schedule_index;
mod scheduler;
mod shared_breaker;
#[cfg(test)]
mod testing;
mod worker;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::plugin_runtime::PluginHost;
use crate::store::Store;
pub(crate) use client::DeliveryClient;
pub(crate) use counted_writes::{BulkReplay, CountedWrites};
pub(crate) use endpoint_holds::EndpointHolds;
pub(crate) use endpoint_policy::effective_policy;
pub(crate) use ingest_admission::IngestAdmission;
pub(crate) use otlp_transport::OtlpTransport;
pub(crate) use scheduler::Protection;

/// A hook run before each delivery request is sent, with the delivery (tests
/// inject a panic or a delay here).
pub type BeforeAttempt = Arc<dyn Fn(&crate::store::DeliveryRecord) + Send + Sync>;

/// The handle on the delivery engine: the API asks it which deliveries are in
/// flight (held by this process's workers).
#[derive(Clone, Default)]
pub(crate) struct DeliveryHandle {
    in_flight: Arc<Mutex<HashSet<String>>>,
}

impl DeliveryHandle {
    /// Whether a delivery is being attempted right now.
    pub(crate) fn is_in_flight(&self, delivery_id: &str) -> bool {
        self.in_flight.lock().is_ok_and(|l| l.contains(delivery_id))
    }

    /// How many attempts are in flight.
    pub(crate) fn in_flight_count(&self) -> usize {
        self.in_flight.lock().map_or(0, |l| l.len())
    }

    /// Marks a delivery in flight; `false` if it already is.
    pub(crate) fn mark_in_flight(&self, delivery_id: &str) -> bool {
        self.in_flight
            .lock()
            .is_ok_and(|mut l| l.insert(delivery_id.to_owned()))
    }

    /// Takes a delivery out of the in-flight set.
    pub(crate) fn clear_in_flight(&self, delivery_id: &str) {
        if let Ok(mut l) = self.in_flight.lock() {
            l.remove(delivery_id);
        }
    }
}

/// What the delivery engine is built from.
pub(crate) struct EngineParts {
    pub store: Store,
    pub clock: Arc<dyn Clock>,
    pub client: DeliveryClient,
    /// For hookgate's own alert endpoint, which is exempt from the address block.
    pub trusted_client: DeliveryClient,
    pub handle: DeliveryHandle,
    /// The config's `[policy.default]`.
    pub default_policy: crate::policy::PolicySpec,
    /// How long in-flight attempts may finish after shutdown.
    pub grace: std::time::Duration,
    /// Breaker and disabling thresholds.
    pub protection: Protection,
    /// Metrics, stats and alert rules.
    pub telemetry: Arc<crate::telemetry::Telemetry>,
    /// The plugin host, which decides for endpoints with a plugin bound.
    pub plugins: Arc<PluginHost>,
    /// Runs before each request is sent (tests inject failures here).
    pub before_attempt: Option<BeforeAttempt>,
    /// Where turns mark the endpoints their own limits hold, for admission.
    pub holds: Arc<EndpointHolds>,
    /// Where each recorded attempt is counted for its endpoint's stats.
    pub stats: Arc<crate::endpoint_stats::StatsRecorder>,
    /// This gateway's traces: a span per attempt, and what the receiver is sent.
    pub traces: crate::telemetry::Traces,
    /// Where attempts, breakers and disablings are told to operator endpoints.
    pub operator_events: crate::operator_events::OperatorEvents,
}

/// Starts the delivery engine: the scheduler and its workers, until `shutdown`;
/// then in-flight attempts get the grace period to finish.
pub(crate) fn spawn_engine(
    parts: EngineParts,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let EngineParts {
        store,
        clock,
        client,
        trusted_client,
        handle,
        default_policy,
        grace,
        protection,
        telemetry,
        plugins,
        before_attempt,
        holds,
        stats,
        traces,
        operator_events,
    } = parts;
    // Subscribed before the scheduler's first scan, so no change falls between.
    let changes = store.changes();
    let ctx = Arc::new(worker::EngineContext {
        telemetry,
        trusted_client,
        store,
        clock,
        client,
        decider: plugins,
        default_policy,
        before_attempt,
        holds,
        stats,
        traces,
        operator_events,
    });
    tokio::spawn(scheduler::Scheduler::new(ctx, handle, changes, protection).run(shutdown, grace))
}
