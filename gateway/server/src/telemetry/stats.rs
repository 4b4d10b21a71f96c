//! Per-tenant delivery statistics for `GET /v1/stats` and `/v1/tenants/{t}/stats`:
//! success rate, retry rate, average attempts, p95/p99 attempt latency, and the
//! pending, DLQ and open-breaker counts. Rates cover the time since the gateway started.

use serde::Serialize;

/// Upper bounds (ms) of the latency buckets; the last is open-ended.
const BOUNDS_MS: [u64; 16] = [
    1,
    2,
    5,
    10,
    20,
    50,
    100,
    200,
    500,
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    60_000,
    u64::MAX,
];

/// One tenant's numbers (or everyone's, summed).
#[derive(Debug, Default, Clone)]
pub(crate) struct TenantStats {
    pub(crate) attempts: u64,
    pub(crate) retries: u64,
    pub(crate) succeeded: u64,
    pub(crate) dead: u64,
    /// Attempts taken by finished deliveries, summed.
    pub(crate) finished_attempts: u64,
    latency: [u64; BOUNDS_MS.len()],
    pub(crate) pending: i64,
    pub(crate) dlq: i64,
    /// Endpoints whose breaker is not closed.
    pub(crate) open_breakers: i64,
}

impl TenantStats {
    /// Counts one attempt's latency.
    pub(crate) fn observe_latency(&mut self, ms: u64) {
        let i = BOUNDS_MS
            .iter()
            .position(|b| ms <= *b)
            .unwrap_or(BOUNDS_MS.len() - 1);
        self.latency[i] += 1;
    }

    /// Adds `other` into `self` (for the global view).
    pub(crate) fn add(&mut self, other: &TenantStats) {
        self.attempts += other.attempts;
        self.retries += other.retries;
        self.succeeded += other.succeeded;
        self.dead += other.dead;
        self.finished_attempts += other.finished_attempts;
        for (a, b) in self.latency.iter_mut().zip(other.latency) {
            *a += b;
        }
        self.pending += other.pending;
        self.dlq += other.dlq;
        self.open_breakers += other.open_breakers;
    }

    /// The latency under which a fraction `q` of attempts fell (a bucket's upper bound).
    fn percentile_ms(&self, q: f64) -> Option<u64> {
        let total: u64 = self.latency.iter().sum();
        if total == 0 {
            return None;
        }
        let want = (q * total as f64).ceil() as u64;
        let mut seen = 0;
        for (i, n) in self.latency.iter().enumerate() {
            seen += n;
            if seen >= want {
                return Some(BOUNDS_MS[i]);
            }
        }
        None
    }

    /// The API's stats object.
    pub(crate) fn to_view(&self) -> StatsView {
        let ratio = |a: u64, b: u64| (b != 0).then(|| a as f64 / b as f64);
        let finished = self.succeeded + self.dead;
        let show = |p: Option<u64>| {
            p.map(|ms| {
                if ms == u64::MAX {
                    LatencyBound::Over(OVER_LAST_BOUND)
                } else {
                    LatencyBound::Millis(ms)
                }
            })
        };
        StatsView {
            attempts: self.attempts,
            avg_attempts: ratio(self.finished_attempts, finished),
            deliveries: DeliveryCounts {
                dead: self.dead,
                pending: self.pending.max(0),
                succeeded: self.succeeded,
            },
            dlq_size: self.dlq.max(0),
            latency_ms: Percentiles {
                p95: show(self.percentile_ms(0.95)),
                p99: show(self.percentile_ms(0.99)),
            },
            open_breakers: self.open_breakers.max(0),
            retry_rate: ratio(self.retries, self.attempts),
            success_rate: ratio(self.succeeded, finished),
        }
    }
}

/// How a latency past the last bucket bound reads.
const OVER_LAST_BOUND: &str = ">60000";

// Fields are declared in alphabetical order: the `json!` body this replaced
// serialised that way, and clients may compare bytes.

/// Delivery statistics since the gateway started; a ratio is `null` before
/// anything it divides by has happened.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub(crate) struct StatsView {
    /// Attempts made.
    attempts: u64,
    /// Attempts per finished delivery.
    avg_attempts: Option<f64>,
    deliveries: DeliveryCounts,
    /// Dead deliveries now held.
    dlq_size: i64,
    /// Attempt latency percentiles, as bucket upper bounds.
    latency_ms: Percentiles,
    /// Endpoints whose circuit breaker is open or half-open now.
    open_breakers: i64,
    /// Retries per attempt.
    retry_rate: Option<f64>,
    /// Succeeded per finished delivery.
    success_rate: Option<f64>,
}

/// Deliveries by state.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub(crate) struct DeliveryCounts {
    /// Finished dead since start.
    dead: u64,
    /// Pending now.
    pending: i64,
    /// Finished delivered since start.
    succeeded: u64,
}

/// p95 and p99 of attempt latency; `null` before the first attempt.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub(crate) struct Percentiles {
    p95: Option<LatencyBound>,
    p99: Option<LatencyBound>,
}

/// A bucket's upper bound in ms, or `">60000"` past the last bucket.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub(crate) enum LatencyBound {
    Millis(u64),
    #[schema(value_type = String)]
    Over(&'static str),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_stats_have_the_bytes_of_their_json_form() {
        use serde_json::json;
        let mut s = TenantStats::default();
        s.observe_latency(70_000);
        (
            s.attempts,
            s.retries,
            s.succeeded,
            s.finished_attempts,
            s.pending,
            s.dlq,
        ) = (4, 1, 2, 3, 5, 0);
        let before = json!({
            "success_rate": 1.0,
            "retry_rate": 0.25,
            "avg_attempts": 1.5,
            "latency_ms": { "p95": ">60000", "p99": ">60000" },
            "attempts": 4,
            "deliveries": { "succeeded": 2, "dead": 0, "pending": 5 },
            "dlq_size": 0,
            "open_breakers": 0,
        });
        assert_eq!(
            serde_json::to_string(&s.to_view()).unwrap(),
            serde_json::to_string(&before).unwrap()
        );
    }

    #[test]
    fn rates_and_percentiles() {
        let mut s = TenantStats::default();
        for ms in (0..100).map(|i| if i < 96 { 3 } else { 900 }) {
            s.observe_latency(ms);
        }
        (
            s.attempts,
            s.retries,
            s.succeeded,
            s.dead,
            s.finished_attempts,
        ) = (100, 20, 75, 5, 100);
        let j = serde_json::to_value(s.to_view()).unwrap();
        assert_eq!(j["success_rate"], 75.0 / 80.0);
        assert_eq!(j["retry_rate"], 0.2);
        assert_eq!(j["avg_attempts"], 1.25);
        assert_eq!(j["latency_ms"]["p95"], 5);
        assert_eq!(j["latency_ms"]["p99"], 1000);
        let empty = serde_json::to_value(TenantStats::default().to_view()).unwrap();
        assert!(empty["success_rate"].is_null() && empty["latency_ms"]["p95"].is_null());
    }
}
