//! What the disk-full drill reads off the gateway while the disk is full and
//! after: `/healthz` (its status) and `/metrics` (`hookgate_store_failing` and
//! the `hookgate_store_errors_total` counts), probed together at a steady pace.

use std::time::{Duration, Instant};

use http::Method;

use super::api::GatewayApi;
use crate::client::ApiRequest;

/// One probe of the gateway.
#[derive(Debug, Clone, Copy)]
pub(super) struct Probe {
    /// When the health check answered.
    pub(super) at: Instant,
    /// `/healthz`'s status (`None`: no answer).
    pub(super) healthz: Option<u16>,
    /// `hookgate_store_failing` (`None`: `/metrics` did not answer or lacks it).
    pub(super) failing: Option<f64>,
}

/// Probes one gateway with the admin token.
pub(super) struct Watch {
    admin: GatewayApi,
}

impl Watch {
    pub(super) fn new(admin: GatewayApi) -> Self {
        Self { admin }
    }

    /// `/healthz` and `/metrics` once.
    pub(super) async fn probe(&self) -> Probe {
        let healthz = self
            .admin
            .call(Method::GET, "/healthz", None)
            .await
            .ok()
            .map(|(status, _)| status.as_u16());
        let at = Instant::now();
        let failing = self
            .metrics()
            .await
            .and_then(|text| sample(&text, "hookgate_store_failing"));
        Probe {
            at,
            healthz,
            failing,
        }
    }

    /// Probes every `every` until `until`.
    pub(super) async fn until(&self, until: Instant, every: Duration) -> Vec<Probe> {
        let mut probes = Vec::new();
        while Instant::now() < until {
            probes.push(self.probe().await);
            tokio::time::sleep(every).await;
        }
        probes
    }

    /// Probes every `every` until `/healthz` answers 200 or `deadline` passes;
    /// how long after `since` the 200 came (`None`: not by the deadline), and
    /// the probes.
    pub(super) async fn until_healthy(
        &self,
        since: Instant,
        deadline: Instant,
        every: Duration,
    ) -> (Option<Duration>, Vec<Probe>) {
        let mut probes = Vec::new();
        loop {
            let probe = self.probe().await;
            probes.push(probe);
            if probe.healthz == Some(200) {
                return (Some(probe.at.saturating_duration_since(since)), probes);
            }
            if Instant::now() >= deadline {
                return (None, probes);
            }
            tokio::time::sleep(every).await;
        }
    }

    /// `hookgate_store_errors_total`, summed over its kinds (`None`: no answer).
    pub(super) async fn store_errors(&self) -> Option<u64> {
        let text = self.metrics().await?;
        let total = text
            .lines()
            .filter(|l| l.starts_with("hookgate_store_errors_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>();
        Some(total as u64)
    }

    async fn metrics(&self) -> Option<String> {
        let answer = self
            .admin
            .client()
            .exchange(ApiRequest::path(Method::GET, "/metrics"))
            .await
            .ok()?;
        (answer.status == 200).then(|| String::from_utf8_lossy(&answer.body).into_owned())
    }
}

/// The value of the sample named exactly `name` (no labels).
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_read_by_its_exact_name() {
        let text = "# TYPE hookgate_store_failing gauge\n\
            hookgate_store_failing_since 3\n\
            hookgate_store_failing 1\n";
        assert_eq!(sample(text, "hookgate_store_failing"), Some(1.0));
        assert_eq!(sample(text, "hookgate_store"), None);
    }
}
