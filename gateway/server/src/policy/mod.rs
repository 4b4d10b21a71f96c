//! Retry policy: the policy object (docs/policies.md), classification, backoff with jitter, and the
//! decision seam.
//!
//! A user gives a [`PolicySpec`] (endpoint API `"policy"`, config `[policy.default]`);
//! [`PolicySpec::resolve`] turns it into an [`EffectivePolicy`] with concrete values.
//! The scheduler resolves an endpoint's policy once per endpoint load. After every
//! attempt [`decide`] turns the policy and the [`AttemptFacts`] into a [`Decision`]:
//! [`BuiltinPolicy`] (a [`RetryDecider`]) decides, unless the endpoint has a plugin
//! bound (a [`PluginDecider`], from the wasm host) and the outcome is one a plugin
//! may weigh in on.

mod attempt_kinds;
mod backoff;
mod bounds;
mod builtin;
mod classify;
mod decide;
mod duration;
mod effective;
mod effective_shape;
mod error_rules;
mod outcome;
mod resolve;
mod retry_after;
mod simulation_report;
pub(crate) mod simulator;
mod spec;
mod status_pattern;
mod strategy;

use serde::{Deserialize, Serialize};

pub(crate) use attempt_kinds::{ErrorKind, VerdictKind};
pub use backoff::backoff_delay;
pub use backoff::strategy_delay_ms;
pub use bounds::MAX_DURATION_MS;
pub use builtin::BuiltinPolicy;
pub use builtin::builtin_delay_ms;
pub(crate) use builtin::{BUILTIN_DECIDER, honored_retry_after_ms, next_step};
pub(crate) use classify::classify;
pub(crate) use decide::PluginDecider;
pub use decide::decide;
pub(crate) use duration::deserialize_opt_ms;
pub use effective::EffectivePolicy;
pub use effective::PRESET_NAMES;
pub(crate) use effective::PresetName;
pub use error_rules::{Attempts, ErrorRule, ErrorRules};
pub use outcome::AttemptFacts;
pub use outcome::FailureKind;
pub use outcome::Outcome;
pub use retry_after::parse_retry_after;
pub use simulator::DEFAULT_ATTEMPT_MS;
pub use simulator::SimulationConfig;
pub use simulator::SimulationReport;
pub use simulator::simulate;
pub(crate) use simulator::{BudgetExceeded, SimulationBudget, simulate_within};
pub(crate) use spec::PolicyError;
pub use spec::PolicySpec;
pub(crate) use status_pattern::StatusPattern;
pub use strategy::Jitter;
pub use strategy::Strategy;
pub(crate) use strategy::{JitterKind, StrategyKind};

/// How an attempt's outcome is classified: retry only what can succeed (changed per endpoint by
/// the lists).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A 2xx: the delivery succeeded.
    Delivered,
    /// Worth another attempt after a delay, within the limits.
    Retry,
    /// Cannot succeed by retrying; the delivery goes dead and an alert fires.
    GiveUp {
        /// Why, for the attempt log and the alert.
        reason: String,
    },
    /// 410 Gone: the endpoint is disabled and the delivery goes dead.
    DisableEndpoint,
    /// The endpoint's transform skipped the event: nothing was sent, and the
    /// delivery ends as skipped.
    Skipped {
        /// The transform's reason.
        reason: String,
    },
}

impl Verdict {
    /// The verdict's kind, as the attempt log records it.
    pub fn kind(&self) -> VerdictKind {
        match self {
            Self::Delivered => VerdictKind::Delivered,
            Self::Retry => VerdictKind::Retry,
            Self::GiveUp { .. } => VerdictKind::GiveUp,
            Self::DisableEndpoint => VerdictKind::DisableEndpoint,
            Self::Skipped { .. } => VerdictKind::Skipped,
        }
    }

    /// The snake_case name recorded in the attempt log.
    pub fn as_str(&self) -> &'static str {
        self.kind().as_str()
    }
}

/// Why a delivery is dead; shown as the delivery's `dead_reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeadReason {
    /// The classification gave up (a non-retryable status, or `give_up_on`).
    GiveUp,
    /// A retry would exceed `max_attempts`.
    MaxAttempts,
    /// A retry would land past `retry_window` from the first attempt.
    RetryWindow,
    /// The endpoint answered 410 Gone and was disabled.
    EndpointDisabled,
    /// The endpoint was deleted while the delivery was pending.
    EndpointDeleted,
    /// The endpoint resolved to a non-global address at connect time.
    BlockedAddress,
    /// The delivery's event record is missing: there is nothing to send.
    EventMissing,
    /// The event's payload was expunged: there is nothing to send.
    PayloadExpunged,
    /// No valid HTTP request could be built for the endpoint.
    InvalidRequest,
    /// Attempts kept failing inside hookgate (a panic), not at the receiver.
    InternalError,
}

impl DeadReason {
    /// Every reason, in the order the API lists them (a new variant goes here too).
    pub const ALL: [Self; 10] = [
        Self::GiveUp,
        Self::MaxAttempts,
        Self::RetryWindow,
        Self::EndpointDisabled,
        Self::EndpointDeleted,
        Self::BlockedAddress,
        Self::EventMissing,
        Self::PayloadExpunged,
        Self::InvalidRequest,
        Self::InternalError,
    ];

    /// The reason named `name` (its `as_str`), if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// The snake_case name used in the API, the store and metrics labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GiveUp => "give_up",
            Self::MaxAttempts => "max_attempts",
            Self::RetryWindow => "retry_window",
            Self::EndpointDisabled => "endpoint_disabled",
            Self::EndpointDeleted => "endpoint_deleted",
            Self::BlockedAddress => "blocked_address",
            Self::EventMissing => "event_missing",
            Self::PayloadExpunged => "payload_expunged",
            Self::InvalidRequest => "invalid_request",
            Self::InternalError => "internal_error",
        }
    }
}

impl std::fmt::Display for DeadReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happens to the delivery next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NextStep {
    /// Delivered; nothing more to do.
    Done,
    /// Attempt again this long after the end of the attempt that just finished.
    RetryAt {
        /// Milliseconds from `AttemptFacts::now_ms`.
        delay_ms: u64,
    },
    /// The delivery is dead (it goes to the DLQ).
    Dead(DeadReason),
    /// The endpoint's transform skipped it; nothing more to do.
    Skipped,
}

/// The result of deciding on one attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// The classification's verdict.
    pub verdict: Verdict,
    /// The step taken, after the limits (`max_attempts`, `retry_window`) were applied.
    pub next: NextStep,
    /// Who decided: `builtin`, `plugin:<name>@<version>` or `fallback:<reason>`.
    pub decided_by: String,
}

/// Decides what follows an attempt from the policy and the facts alone, at once;
/// [`BuiltinPolicy`] implements it, and a plugin's decision falls back to it. A
/// bound plugin decides through [`PluginDecider`]; [`decide`] picks which one runs.
pub trait RetryDecider: Send + Sync {
    /// Classifies the attempt's outcome and picks the next step under `policy`.
    fn decide(&self, policy: &EffectivePolicy, facts: &AttemptFacts<'_>) -> Decision;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_reasons_serialise_as_their_names_and_read_back_from_them() {
        for reason in DeadReason::ALL {
            let json = serde_json::to_value(reason).unwrap();
            assert_eq!(json, serde_json::Value::from(reason.as_str()));
            assert_eq!(reason.to_string(), reason.as_str());
            assert_eq!(DeadReason::from_name(reason.as_str()), Some(reason));
        }
        assert_eq!(DeadReason::from_name("GiveUp"), None);
    }

    /// `ALL` lists every variant: a new one fails to compile here until listed.
    #[test]
    fn every_dead_reason_is_listed() {
        for reason in DeadReason::ALL {
            match reason {
                DeadReason::GiveUp
                | DeadReason::MaxAttempts
                | DeadReason::RetryWindow
                | DeadReason::EndpointDisabled
                | DeadReason::EndpointDeleted
                | DeadReason::BlockedAddress
                | DeadReason::EventMissing
                | DeadReason::PayloadExpunged
                | DeadReason::InvalidRequest
                | DeadReason::InternalError => {}
            }
        }
        let names: std::collections::HashSet<_> =
            DeadReason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(names.len(), DeadReason::ALL.len(), "no reason listed twice");
    }

    #[test]
    fn next_step_serialises_readably() {
        let retry = serde_json::to_string(&NextStep::RetryAt { delay_ms: 5 }).unwrap();
        assert_eq!(retry, r#"{"retry_at":{"delay_ms":5}}"#);
        let dead = serde_json::to_string(&NextStep::Dead(DeadReason::MaxAttempts)).unwrap();
        assert_eq!(dead, r#"{"dead":"max_attempts"}"#);
        assert_eq!(serde_json::to_string(&NextStep::Done).unwrap(), r#""done""#);
    }
}
