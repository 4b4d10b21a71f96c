//! The demo's view of the gateway: the shared API client, and the delivery counts
//! the progress table shows.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::lab::gateway_api::GatewayApi;

use super::DemoError;

impl From<crate::lab::gateway_api::ApiCallError> for DemoError {
    fn from(e: crate::lab::gateway_api::ApiCallError) -> Self {
        Self::Api(e.0)
    }
}

/// Every delivery of `tenant`, counted by state.
pub(super) async fn counts(api: &GatewayApi, tenant: &str) -> Result<Counts, DemoError> {
    let mut counts = Counts::default();
    for d in api
        .list_all(&format!("/v1/tenants/{tenant}/deliveries"))
        .await?
    {
        counts.add(&d);
    }
    Ok(counts)
}

/// Deliveries by where they stand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Counts {
    /// Succeeded.
    pub(super) delivered: u64,
    /// Pending after at least one failed attempt: waiting for a retry.
    pub(super) retrying: u64,
    /// Pending, never attempted yet.
    pub(super) queued: u64,
    /// An attempt is in progress.
    pub(super) sending: u64,
    /// Dead (the DLQ).
    pub(super) dead: u64,
    /// Attempts made, over every delivery.
    pub(super) attempts: u64,
    /// Dead deliveries by `dead_reason`.
    pub(super) dead_reasons: BTreeMap<String, u64>,
    /// Succeeded deliveries by the attempts they took.
    pub(super) attempts_to_deliver: BTreeMap<u64, u64>,
}

impl Counts {
    fn add(&mut self, d: &Value) {
        let attempts = d["attempts"].as_u64().unwrap_or(0);
        self.attempts += attempts;
        match d["state"].as_str().unwrap_or_default() {
            "succeeded" => {
                self.delivered += 1;
                *self.attempts_to_deliver.entry(attempts).or_default() += 1;
            }
            "dead" => {
                self.dead += 1;
                let reason = d["dead_reason"].as_str().unwrap_or("unknown").to_owned();
                *self.dead_reasons.entry(reason).or_default() += 1;
            }
            "in_flight" => self.sending += 1,
            _ if attempts > 0 => self.retrying += 1,
            _ => self.queued += 1,
        }
    }

    /// Deliveries that have finished, delivered or dead.
    pub(super) fn finished(&self) -> u64 {
        self.delivered + self.dead
    }

    /// Delivered deliveries that took more than one attempt.
    pub(super) fn delivered_after_retries(&self) -> u64 {
        self.attempts_to_deliver
            .iter()
            .filter(|(a, _)| **a > 1)
            .map(|(_, n)| n)
            .sum()
    }
}
