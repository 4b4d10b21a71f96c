//! Per-tenant delivery statistics for `GET /v1/stats` and `/v1/tenants/{t}/stats`:
//! success rate, retry rate, average attempts, p95/p99 attempt latency, and the
//! pending and DLQ counts. Rates cover the time since the gateway started.

use serde_json::{Value, json};

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
    pub(crate) fn to_json(&self) -> Value {
        let ratio = |a: u64, b: u64| {
            if b == 0 {
                None
            } else {
                Some(a as f64 / b as f64)
            }
        };
        let finished = self.succeeded + self.dead;
        let show = |p: Option<u64>| {
            p.map(|ms| {
                if ms == u64::MAX {
                    Value::from(">60000")
                } else {
                    Value::from(ms)
                }
            })
        };
        json!({
            "success_rate": ratio(self.succeeded, finished),
            "retry_rate": ratio(self.retries, self.attempts),
            "avg_attempts": ratio(self.finished_attempts, finished),
            "latency_ms": { "p95": show(self.percentile_ms(0.95)), "p99": show(self.percentile_ms(0.99)) },
            "attempts": self.attempts,
            "deliveries": { "succeeded": self.succeeded, "dead": self.dead, "pending": self.pending.max(0) },
            "dlq_size": self.dlq.max(0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let j = s.to_json();
        assert_eq!(j["success_rate"], 75.0 / 80.0);
        assert_eq!(j["retry_rate"], 0.2);
        assert_eq!(j["avg_attempts"], 1.25);
        assert_eq!(j["latency_ms"]["p95"], 5);
        assert_eq!(j["latency_ms"]["p99"], 1000);
        let empty = TenantStats::default().to_json();
        assert!(empty["success_rate"].is_null() && empty["latency_ms"]["p95"].is_null());
    }
}
