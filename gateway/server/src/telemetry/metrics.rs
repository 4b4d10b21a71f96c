//! Prometheus metrics, through `prometheus-client`. Labels stay bounded: outcome
//! classes, error kinds, dead reasons and decider kinds, never ids, unless the
//! operator turns on per-endpoint labels.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// `outcome` (`2xx`, `3xx`, `4xx`, `5xx`, `transport`, `blocked`) and `error_kind`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct AttemptLabels {
    pub(crate) outcome: &'static str,
    pub(crate) error_kind: String,
}

/// Per-endpoint attempt labels, registered only when the operator asks for them.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct EndpointLabels {
    pub(crate) endpoint_id: String,
    pub(crate) outcome: &'static str,
}

/// One label: `reason` or `kind`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReasonLabel {
    pub(crate) reason: String,
}

/// What failed inside hookgate: `panic`, `event_missing`, `invalid_request`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct KindLabel {
    pub(crate) kind: String,
}

/// The decider kind: `builtin`, `plugin` or `fallback`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct DeciderLabel {
    pub(crate) decided_by: &'static str,
}

/// A state of the plugin pool's memory slots: `capacity`, `in_use` or `warm`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct SlotStateLabel {
    pub(crate) state: &'static str,
}

/// Where plugin decisions ran: `inline`, `escalated` (inline, then rerun on
/// the pool) or `pool`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct PathLabel {
    pub(crate) path: &'static str,
}

/// What a transform run came to: `sent`, `skipped` or `failed`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TransformResultLabel {
    pub(crate) result: &'static str,
}

/// The database pool's connections by `state` (`open`, `in_use`, `max`).
pub(crate) type PoolGauges = Family<SlotStateLabel, Gauge>;

/// Every metric hookgate exports.
pub(crate) struct Metrics {
    pub(crate) registry: Registry,
    pub(crate) events_ingested: Counter,
    pub(crate) attempts: Family<AttemptLabels, Counter>,
    pub(crate) endpoint_attempts: Option<Family<EndpointLabels, Counter>>,
    pub(crate) succeeded: Counter,
    pub(crate) dead: Family<ReasonLabel, Counter>,
    pub(crate) internal_errors: Family<KindLabel, Counter>,
    pub(crate) retries: Counter,
    pub(crate) attempt_seconds: Histogram,
    pub(crate) end_to_end_seconds: Histogram,
    pub(crate) attempts_per_delivery: Histogram,
    pub(crate) pending: Gauge,
    pub(crate) in_flight: Gauge,
    pub(crate) dlq_size: Gauge,
    pub(crate) breakers_open: Gauge,
    pub(crate) decisions: Family<DeciderLabel, Counter>,
    pub(crate) decision_seconds: Histogram,
    pub(crate) transform_runs: Family<TransformResultLabel, Counter>,
    pub(crate) transform_seconds: Histogram,
    pub(crate) clock_skew_seconds: Gauge,
    pub(crate) plugins_disabled: Counter,
    pub(crate) ingest_held: Counter,
    pub(crate) ingest_held_seconds: Counter<f64, std::sync::atomic::AtomicU64>,
    pub(crate) plugin_memory_slots: Family<SlotStateLabel, Gauge>,
    pub(crate) plugin_decision_paths: Family<PathLabel, Counter>,
    pub(crate) spans_dropped: super::DropCounters,
}

impl Metrics {
    pub(crate) fn new(per_endpoint_labels: bool) -> Self {
        let mut registry = Registry::with_prefix("hookgate");
        let events_ingested = Counter::default();
        registry.register(
            "events_ingested",
            "Events accepted (acknowledged durable)",
            events_ingested.clone(),
        );
        let attempts = Family::<AttemptLabels, Counter>::default();
        registry.register(
            "attempts",
            "Delivery attempts by outcome class and error kind",
            attempts.clone(),
        );
        let endpoint_attempts = per_endpoint_labels.then(|| {
            let f = Family::<EndpointLabels, Counter>::default();
            registry.register(
                "endpoint_attempts",
                "Delivery attempts per endpoint",
                f.clone(),
            );
            f
        });
        let succeeded = Counter::default();
        registry.register(
            "deliveries_succeeded",
            "Deliveries that succeeded",
            succeeded.clone(),
        );
        let dead = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "deliveries_dead",
            "Deliveries that became dead, by reason",
            dead.clone(),
        );
        let internal_errors = Family::<KindLabel, Counter>::default();
        registry.register(
            "internal_errors",
            "Attempts that failed inside hookgate, not at the receiver, by kind",
            internal_errors.clone(),
        );
        let retries = Counter::default();
        registry.register(
            "retries",
            "Attempts after which a retry was scheduled",
            retries.clone(),
        );
        let attempt_seconds = Histogram::new(exponential_buckets(0.001, 2.0, 16));
        registry.register(
            "attempt_duration_seconds",
            "Duration of one attempt",
            attempt_seconds.clone(),
        );
        let end_to_end_seconds = Histogram::new(exponential_buckets(0.01, 4.0, 12));
        registry.register(
            "delivery_latency_seconds",
            "From ingest to success",
            end_to_end_seconds.clone(),
        );
        let attempts_per_delivery =
            Histogram::new([1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 40.0, 100.0]);
        registry.register(
            "attempts_per_delivery",
            "Attempts a finished delivery took",
            attempts_per_delivery.clone(),
        );
        let pending = Gauge::default();
        registry.register(
            "deliveries_pending",
            "Deliveries waiting for an attempt",
            pending.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "deliveries_in_flight",
            "Attempts in progress",
            in_flight.clone(),
        );
        let dlq_size = Gauge::default();
        registry.register(
            "dlq_size",
            "Dead deliveries kept (the DLQ)",
            dlq_size.clone(),
        );
        let breakers_open = Gauge::default();
        registry.register(
            "breakers_open",
            "Endpoints whose circuit breaker is open",
            breakers_open.clone(),
        );
        let decisions = Family::<DeciderLabel, Counter>::default();
        registry.register(
            "policy_decisions",
            "Retry decisions by decider kind",
            decisions.clone(),
        );
        let decision_seconds = Histogram::new(exponential_buckets(0.000_005, 2.0, 14));
        registry.register(
            "plugin_decision_seconds",
            "Time to decide with a plugin bound",
            decision_seconds.clone(),
        );
        let transform_runs = Family::<TransformResultLabel, Counter>::default();
        registry.register(
            "transform_runs",
            "Transform runs by result: sent, skipped or failed",
            transform_runs.clone(),
        );
        let transform_seconds = Histogram::new(exponential_buckets(0.000_005, 2.0, 16));
        registry.register(
            "transform_seconds",
            "Time to run an endpoint's transform",
            transform_seconds.clone(),
        );
        let clock_skew_seconds = Gauge::default();
        registry.register(
            "receiver_clock_skew_seconds",
            "Largest receiver clock skew seen recently, from responses' Date header",
            clock_skew_seconds.clone(),
        );
        let plugins_disabled = Counter::default();
        registry.register(
            "plugins_disabled",
            "Plugin versions disabled after repeated failures",
            plugins_disabled.clone(),
        );
        let ingest_held = Counter::default();
        registry.register(
            "ingest_held",
            "Ingests that waited for their tenant's delivery backlog to fall",
            ingest_held.clone(),
        );
        let ingest_held_seconds = Counter::<f64, std::sync::atomic::AtomicU64>::default();
        registry.register(
            "ingest_held_seconds",
            "Time ingests waited for their tenant's delivery backlog to fall",
            ingest_held_seconds.clone(),
        );
        let plugin_memory_slots = Family::<SlotStateLabel, Gauge>::default();
        registry.register(
            "plugin_memory_slots",
            "Memory slots of the plugin instance pool: its capacity, those in use, and the free ones kept warm",
            plugin_memory_slots.clone(),
        );
        let plugin_decision_paths = Family::<PathLabel, Counter>::default();
        registry.register(
            "plugin_decision_paths",
            "Plugin decisions by where they ran: inline on the caller within the small budget, escalated to the decision pool after overrunning it, or straight on the pool",
            plugin_decision_paths.clone(),
        );
        let spans_dropped = Family::<ReasonLabel, Counter>::default();
        registry.register(
            "trace_spans_dropped",
            "Trace spans not exported, by reason: queue_full (the export queue was full when the span ended) or export_failed (the collector refused or could not be reached)",
            spans_dropped.clone(),
        );
        let reason = |r: &str| {
            spans_dropped
                .get_or_create(&ReasonLabel {
                    reason: r.to_owned(),
                })
                .clone()
        };
        let spans_dropped = super::DropCounters {
            queue_full: reason("queue_full"),
            export_failed: reason("export_failed"),
        };
        Self {
            registry,
            events_ingested,
            attempts,
            endpoint_attempts,
            succeeded,
            dead,
            internal_errors,
            retries,
            attempt_seconds,
            end_to_end_seconds,
            attempts_per_delivery,
            pending,
            in_flight,
            dlq_size,
            breakers_open,
            decisions,
            decision_seconds,
            transform_runs,
            transform_seconds,
            clock_skew_seconds,
            plugins_disabled,
            ingest_held,
            ingest_held_seconds,
            plugin_memory_slots,
            plugin_decision_paths,
            spans_dropped,
        }
    }

    /// The OpenMetrics 1.0.0 text exposition (the only one `prometheus-client`
    /// encodes; `/metrics` derives the classic 0.0.4 text from it when asked).
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
