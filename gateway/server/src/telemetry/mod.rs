//! What the gateway tells operators and tenants about itself: Prometheus metrics,
//! per-tenant stats and the alert rules, all fed from the same observations.

mod metrics;
mod plugin_metrics;
mod stats;
mod store_metrics;
mod traces;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc::UnboundedReceiver;

use crate::alerts::{AlertInput, AlertMonitor};
use crate::clock::Clock;
use crate::plugin_runtime::{PluginEvent, plugin_label};
use crate::policy::{DeadReason, ErrorKind, NextStep, Verdict};
use crate::store::Store;
use metrics::{AttemptLabels, DeciderLabel, EndpointLabels, KindLabel, Metrics, ReasonLabel};
use plugin_metrics::PluginMetrics;
pub(crate) use stats::StatsView;
use stats::TenantStats;
use store_metrics::StoreMetrics;
pub(crate) use traces::{DropCounters, TraceSpan, Traces, TracesError};

/// One finished attempt, as telemetry sees it.
#[derive(Debug)]
pub(crate) struct AttemptObservation<'a> {
    pub tenant_id: &'a str,
    pub endpoint_id: &'a str,
    pub status: Option<u16>,
    pub error_kind: Option<ErrorKind>,
    pub duration_ms: u64,
    /// The attempt's number within its series.
    pub attempt: u32,
    /// When the event was accepted (for end-to-end latency).
    pub created_at_ms: u64,
    pub now_ms: u64,
    pub verdict: &'a Verdict,
    pub next: &'a NextStep,
    pub decided_by: &'a str,
    /// Time the decision took, when a plugin was bound.
    pub plugin_decision_us: Option<u64>,
    /// Receiver clock minus ours, from the response's `Date` header.
    pub clock_skew_ms: Option<i64>,
}

/// Metrics, stats and the alert rules; cheap to share.
pub(crate) struct Telemetry {
    metrics: Metrics,
    tenants: Mutex<HashMap<String, TenantStats>>,
    alerts: AlertMonitor,
    plugins: PluginMetrics,
    store: StoreMetrics,
}

impl Telemetry {
    /// `per_endpoint_labels` adds an endpoint-labelled attempt counter (unbounded
    /// cardinality: an operator's choice).
    pub(crate) fn new(per_endpoint_labels: bool, alerts: AlertMonitor) -> Self {
        let metrics = Metrics::new(per_endpoint_labels);
        let plugins = PluginMetrics::new(
            metrics.plugin_memory_slots.clone(),
            metrics.plugin_decision_paths.clone(),
        );
        Self {
            metrics,
            tenants: Mutex::default(),
            alerts,
            plugins,
            store: StoreMetrics::default(),
        }
    }

    /// Adds `store`'s metrics to the exposition; call once, before sharing.
    pub(crate) fn register_store(&mut self, store: &Store) {
        self.store = StoreMetrics::register(&mut self.metrics.registry, store);
    }

    /// Where dropped spans are counted.
    pub(crate) fn span_drops(&self) -> DropCounters {
        self.metrics.spans_dropped.clone()
    }

    /// The plugin host's metrics.
    pub(crate) fn plugins(&self) -> &PluginMetrics {
        &self.plugins
    }

    /// The store's metrics read at scrape time.
    pub(crate) fn store_metrics(&self) -> &StoreMetrics {
        &self.store
    }

    /// The alert rules.
    pub(crate) fn alerts(&self) -> &AlertMonitor {
        &self.alerts
    }

    fn with_tenant(&self, tenant: &str, f: impl FnOnce(&mut TenantStats)) {
        if let Ok(mut t) = self.tenants.lock() {
            f(t.entry(tenant.to_owned()).or_default());
        }
    }

    /// An event was accepted with `deliveries` deliveries.
    pub(crate) fn ingested(&self, tenant: &str, deliveries: usize) {
        self.metrics.events_ingested.inc();
        self.counts_changed(tenant, deliveries as i64, 0);
    }

    /// An ingest waited `waited` for its tenant's delivery backlog to fall.
    pub(crate) fn ingest_held(&self, waited: std::time::Duration) {
        self.metrics.ingest_held.inc();
        self.metrics
            .ingest_held_seconds
            .inc_by(waited.as_secs_f64());
    }

    /// Pending and dead counts moved (replays, retention, deleted endpoints).
    pub(crate) fn counts_changed(&self, tenant: &str, pending: i64, dead: i64) {
        self.metrics.pending.inc_by(pending);
        self.metrics.dlq_size.inc_by(dead);
        self.with_tenant(tenant, |t| {
            t.pending += pending;
            t.dlq += dead;
        });
    }

    /// A tenant and every record of it are gone: its counts leave the totals.
    pub(crate) fn tenant_removed(&self, tenant: &str) {
        let gone = self.tenants.lock().ok().and_then(|mut t| t.remove(tenant));
        if let Some(stats) = gone {
            self.metrics.pending.inc_by(-stats.pending);
            self.metrics.dlq_size.inc_by(-stats.dlq);
        }
    }

    /// hookgate failed inside an attempt (`kind`: a panic, a missing event, a
    /// request it could not build).
    pub(crate) fn internal_error(&self, kind: &str) {
        self.metrics
            .internal_errors
            .get_or_create(&KindLabel {
                kind: kind.to_owned(),
            })
            .inc();
    }

    /// A pending delivery ended dead without an attempt.
    pub(crate) fn ended_without_attempt(&self, tenant: &str, reason: DeadReason) {
        self.metrics
            .dead
            .get_or_create(&ReasonLabel {
                reason: reason.as_str().to_owned(),
            })
            .inc();
        self.counts_changed(tenant, -1, 1);
        self.with_tenant(tenant, |t| t.dead += 1);
    }

    /// Breakers found open at start: the tenant of each.
    pub(crate) fn breakers_open_at_start<'a>(&self, tenants: impl IntoIterator<Item = &'a str>) {
        for tenant in tenants {
            self.metrics.breakers_open.inc();
            self.with_tenant(tenant, |t| t.open_breakers += 1);
        }
    }

    /// A breaker opened from closed, or closed again.
    pub(crate) fn breaker_transition(&self, tenant: &str, endpoint: &str, open: bool, now_ms: u64) {
        let change = if open { 1 } else { -1 };
        self.metrics.breakers_open.inc_by(change);
        self.with_tenant(tenant, |t| t.open_breakers += change);
        self.alerts.breaker(tenant, endpoint, open, now_ms);
    }

    /// A plugin version was disabled: counted, and the `plugin_disabled` alert fires.
    pub(crate) fn plugin_disabled(&self, tenant: &str, name: &str, version: u32, now_ms: u64) {
        self.metrics.plugins_disabled.inc();
        self.alerts
            .plugin_disabled(tenant, &plugin_label(name, version), now_ms);
    }

    /// Acts on the plugin host's events until the host is gone.
    pub(crate) async fn watch_plugins(
        self: Arc<Self>,
        clock: Arc<dyn Clock>,
        mut events: UnboundedReceiver<PluginEvent>,
    ) {
        while let Some(event) = events.recv().await {
            let PluginEvent::Disabled {
                tenant,
                name,
                version,
                ..
            } = event;
            self.plugin_disabled(&tenant, &name, version, clock.now_ms());
        }
    }

    /// Records one finished attempt.
    /// Counts one transform run by its result, and its time.
    pub(crate) fn observe_transform(&self, run: &crate::plugin_runtime::TransformRun) {
        let result = match &run.result {
            Ok(crate::plugin_runtime::Transformed::Send(_)) => "sent",
            Ok(crate::plugin_runtime::Transformed::Skip(_)) => "skipped",
            Err(_) => "failed",
        };
        let m = &self.metrics;
        m.transform_runs
            .get_or_create(&metrics::TransformResultLabel { result })
            .inc();
        m.transform_seconds.observe(run.run_us as f64 / 1e6);
    }

    pub(crate) fn observe_attempt(&self, o: &AttemptObservation<'_>) {
        let m = &self.metrics;
        let outcome = match (o.status, o.error_kind) {
            (Some(s), _) => ["1xx", "2xx", "3xx", "4xx", "5xx"]
                .get(usize::from(s / 100).saturating_sub(1))
                .copied()
                .unwrap_or("other"),
            (None, Some(ErrorKind::BlockedAddress)) => "blocked",
            // No status and no error: a broker confirmed the message.
            (None, None) => "published",
            (None, Some(_)) => "transport",
        };
        let error_kind = o.error_kind.map_or("none", ErrorKind::as_str).to_owned();
        m.attempts
            .get_or_create(&AttemptLabels {
                outcome,
                error_kind,
            })
            .inc();
        if let Some(f) = &m.endpoint_attempts {
            f.get_or_create(&EndpointLabels {
                endpoint_id: o.endpoint_id.to_owned(),
                outcome,
            })
            .inc();
        }
        m.attempt_seconds.observe(o.duration_ms as f64 / 1000.0);
        let kind = o.decided_by.split(':').next().unwrap_or("builtin");
        let decided_by = match kind {
            "plugin" => "plugin",
            "fallback" => "fallback",
            _ => "builtin",
        };
        m.decisions
            .get_or_create(&DeciderLabel { decided_by })
            .inc();
        if let Some(us) = o.plugin_decision_us {
            m.decision_seconds.observe(us as f64 / 1e6);
        }
        if let Some(skew) = o.clock_skew_ms {
            m.clock_skew_seconds.set(skew.abs() / 1000);
        }
        let (retry, done, dead) = match o.next {
            NextStep::RetryAt { .. } => (true, false, None),
            NextStep::Done => (false, true, None),
            NextStep::Skipped => (false, false, None),
            NextStep::Dead(r) => (false, false, Some(r.as_str())),
        };
        if retry {
            m.retries.inc();
        }
        if done {
            m.succeeded.inc();
            m.end_to_end_seconds
                .observe(o.now_ms.saturating_sub(o.created_at_ms) as f64 / 1000.0);
        }
        if let Some(reason) = dead {
            m.dead
                .get_or_create(&ReasonLabel {
                    reason: reason.to_owned(),
                })
                .inc();
        }
        if done || dead.is_some() {
            m.attempts_per_delivery.observe(f64::from(o.attempt));
            m.pending.dec();
            if dead.is_some() {
                m.dlq_size.inc();
            }
        }
        self.with_tenant(o.tenant_id, |t| {
            t.attempts += 1;
            t.observe_latency(o.duration_ms);
            t.retries += u64::from(retry);
            if done || dead.is_some() {
                t.finished_attempts += u64::from(o.attempt);
                t.pending -= 1;
            }
            t.succeeded += u64::from(done);
            if dead.is_some() {
                t.dead += 1;
                t.dlq += 1;
            }
        });
        self.alerts.observe(&AlertInput {
            tenant_id: o.tenant_id,
            endpoint_id: o.endpoint_id,
            failed: !matches!(o.status, Some(200..=299))
                && o.error_kind != Some(ErrorKind::BlockedAddress),
            succeeded: matches!(o.status, Some(200..=299)),
            gave_up: matches!(o.verdict, Verdict::GiveUp { .. } | Verdict::DisableEndpoint)
                && o.error_kind != Some(ErrorKind::BlockedAddress),
            dead: dead.is_some(),
            clock_skew_ms: o.clock_skew_ms,
            now_ms: o.now_ms,
        });
    }

    /// Prometheus text; `in_flight` is read at scrape time.
    pub(crate) fn render_metrics(&self, in_flight: usize) -> String {
        self.metrics
            .in_flight
            .set(i64::try_from(in_flight).unwrap_or(i64::MAX));
        self.metrics.render()
    }

    /// The stats object of one tenant, or of all of them.
    pub(crate) fn stats(&self, tenant: Option<&str>) -> StatsView {
        let map = self
            .tenants
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut total = TenantStats::default();
        match tenant {
            Some(t) => total.add(map.get(t).unwrap_or(&TenantStats::default())),
            None => map.values().for_each(|s| total.add(s)),
        }
        total.to_view()
    }

    /// Seeds pending and DLQ counts from a count of the store made at start.
    pub(crate) fn seed_counts(&self, counts: &HashMap<String, (i64, i64)>) {
        for (tenant, (pending, dead)) in counts {
            self.counts_changed(tenant, *pending, *dead);
        }
    }
}
