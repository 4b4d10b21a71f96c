//! The resolved policy: concrete values every decision reads, and the five presets
//! (docs/policies.md).
//!
//! An [`EffectivePolicy`] serialises flat, as the endpoint's `policy_effective`, with all
//! durations in integer milliseconds, e.g.
//! `{"preset":"default","strategy":"exponential","base_ms":1000,"factor":2.0,
//! "max_delay_ms":3600000,"max_attempts":40,"retry_window_ms":86400000,"jitter":"equal",
//! "retry_all_non_2xx":false,"honor_retry_after":true,"retry_on":[],"give_up_on":[]}`.
//! That shape is also a valid `"policy"` input.

use serde::{Deserialize, Serialize};

use super::{ErrorRules, Jitter, StatusPattern, Strategy};

const SECOND_MS: u64 = 1_000;
const MINUTE_MS: u64 = 60 * SECOND_MS;
const HOUR_MS: u64 = 60 * MINUTE_MS;
const DAY_MS: u64 = 24 * HOUR_MS;

/// The preset used when a policy names none.
pub(crate) const DEFAULT_PRESET: &str = "default";

/// Every preset name, in the order the design lists them.
pub const PRESET_NAMES: [&str; 5] = [
    "default",
    "seed-classic",
    "svix",
    "ladder",
    "aggressive-short",
];

/// The API schema of a preset's name: one of [`PRESET_NAMES`]. Only described,
/// never built.
pub(crate) enum PresetName {}

impl utoipa::PartialSchema for PresetName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(PRESET_NAMES))
            .description(Some("A built-in retry policy"))
            .into()
    }
}

impl utoipa::ToSchema for PresetName {}

/// A policy with every value concrete; what decisions read and what the API shows as
/// `policy_effective`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EffectivePolicy {
    /// The preset the values started from.
    pub preset: String,
    /// The delay strategy (flattened: `"strategy"` plus its fields).
    #[serde(flatten)]
    pub strategy: Strategy,
    /// Cap on every delay.
    pub max_delay_ms: u64,
    /// Attempts per series, the first included.
    pub max_attempts: u32,
    /// How long after the first attempt retries may still be scheduled.
    pub retry_window_ms: u64,
    /// The jitter (flattened: `"jitter"`, plus `"jitter_ratio"` when proportional).
    #[serde(flatten)]
    pub jitter: Jitter,
    /// Retry every non-2xx status, overriding the table.
    pub retry_all_non_2xx: bool,
    /// Treat `Retry-After` on 429 and 503 as a floor.
    pub honor_retry_after: bool,
    /// Statuses to retry, overriding the table.
    pub retry_on: Vec<StatusPattern>,
    /// Statuses to give up on; beats every other rule but 2xx.
    pub give_up_on: Vec<StatusPattern>,
    /// What a failure without a status leads to, by error kind: only the kinds
    /// set (a kind left out follows the documented default, `error_rules.rs`).
    #[serde(default, skip_serializing_if = "ErrorRules::is_empty")]
    pub error_rules: ErrorRules,
}

impl EffectivePolicy {
    /// The `default` preset: exponential 1 s ×2, equal jitter, 40 attempts, 1 h cap, 24 h.
    pub fn default_preset() -> Self {
        Self::preset(DEFAULT_PRESET).expect("the default preset exists")
    }

    /// The named preset, or `None` for an unknown name.
    pub fn preset(name: &str) -> Option<Self> {
        let exponential = Strategy::Exponential {
            base_ms: SECOND_MS,
            factor: 2.0,
        };
        let schedule = |steps: &[u64]| Strategy::Schedule {
            schedule_ms: steps.to_vec(),
        };
        let (strategy, jitter, max_attempts, max_delay_ms, retry_window_ms) = match name {
            "default" => (exponential, Jitter::Equal, 40, HOUR_MS, DAY_MS),
            "seed-classic" => (
                exponential,
                Jitter::Proportional { ratio: 0.3 },
                6,
                HOUR_MS,
                DAY_MS,
            ),
            "svix" => (
                schedule(&[
                    5 * SECOND_MS,
                    5 * MINUTE_MS,
                    30 * MINUTE_MS,
                    2 * HOUR_MS,
                    5 * HOUR_MS,
                    10 * HOUR_MS,
                    10 * HOUR_MS,
                ]),
                Jitter::Proportional { ratio: 0.2 },
                8,
                12 * HOUR_MS,
                36 * HOUR_MS,
            ),
            "ladder" => (
                schedule(&[
                    5 * MINUTE_MS,
                    30 * MINUTE_MS,
                    3 * HOUR_MS,
                    18 * HOUR_MS,
                    DAY_MS,
                ]),
                Jitter::None,
                8,
                DAY_MS,
                5 * DAY_MS,
            ),
            "aggressive-short" => (
                schedule(&[10 * MINUTE_MS, 40 * MINUTE_MS]),
                Jitter::Equal,
                3,
                HOUR_MS,
                HOUR_MS,
            ),
            _ => return None,
        };
        Some(Self {
            preset: name.to_owned(),
            strategy,
            max_delay_ms,
            max_attempts,
            retry_window_ms,
            jitter,
            retry_all_non_2xx: false,
            honor_retry_after: true,
            retry_on: Vec::new(),
            give_up_on: Vec::new(),
            error_rules: ErrorRules::new(),
        })
    }

    /// The strategy's first delay (see [`Strategy::base_ms`]).
    pub fn base_ms(&self) -> u64 {
        self.strategy.base_ms()
    }
}

impl Default for EffectivePolicy {
    fn default() -> Self {
        Self::default_preset()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn presets_have_the_design_values() {
        let default = EffectivePolicy::default_preset();
        assert_eq!(
            default.strategy,
            Strategy::Exponential {
                base_ms: 1_000,
                factor: 2.0
            }
        );
        assert_eq!(default.jitter, Jitter::Equal);
        assert_eq!(
            (default.max_attempts, default.max_delay_ms),
            (40, 3_600_000)
        );
        assert_eq!(default.retry_window_ms, 86_400_000);
        assert!(default.honor_retry_after && !default.retry_all_non_2xx);

        let classic = EffectivePolicy::preset("seed-classic").unwrap();
        assert_eq!(classic.strategy, default.strategy);
        assert_eq!(classic.jitter, Jitter::Proportional { ratio: 0.3 });
        assert_eq!(
            (
                classic.max_attempts,
                classic.max_delay_ms,
                classic.retry_window_ms
            ),
            (6, 3_600_000, 86_400_000)
        );

        let svix = EffectivePolicy::preset("svix").unwrap();
        let svix_steps = vec![
            5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
        ];
        assert_eq!(
            svix.strategy,
            Strategy::Schedule {
                schedule_ms: svix_steps
            }
        );
        assert_eq!(svix.jitter, Jitter::Proportional { ratio: 0.2 });
        assert_eq!(
            (svix.max_attempts, svix.max_delay_ms, svix.retry_window_ms),
            (8, 43_200_000, 129_600_000)
        );

        let ladder = EffectivePolicy::preset("ladder").unwrap();
        let ladder_steps = vec![300_000, 1_800_000, 10_800_000, 64_800_000, 86_400_000];
        assert_eq!(
            ladder.strategy,
            Strategy::Schedule {
                schedule_ms: ladder_steps
            }
        );
        assert_eq!(ladder.jitter, Jitter::None);
        assert_eq!(
            (
                ladder.max_attempts,
                ladder.max_delay_ms,
                ladder.retry_window_ms
            ),
            (8, 86_400_000, 432_000_000)
        );

        let short = EffectivePolicy::preset("aggressive-short").unwrap();
        assert_eq!(
            short.strategy,
            Strategy::Schedule {
                schedule_ms: vec![600_000, 2_400_000]
            }
        );
        assert_eq!(short.jitter, Jitter::Equal);
        assert_eq!(
            (
                short.max_attempts,
                short.max_delay_ms,
                short.retry_window_ms
            ),
            (3, 3_600_000, 3_600_000)
        );

        assert!(EffectivePolicy::preset("nope").is_none());
        assert!(
            PRESET_NAMES
                .iter()
                .all(|name| EffectivePolicy::preset(name).is_some())
        );
    }

    #[test]
    fn serialises_flat_with_integer_milliseconds() {
        let json = serde_json::to_value(EffectivePolicy::default_preset()).unwrap();
        assert_eq!(
            json,
            json!({
                "preset": "default", "strategy": "exponential", "base_ms": 1000, "factor": 2.0,
                "max_delay_ms": 3600000, "max_attempts": 40, "retry_window_ms": 86400000,
                "jitter": "equal", "retry_all_non_2xx": false, "honor_retry_after": true,
                "retry_on": [], "give_up_on": []
            })
        );
        let svix = serde_json::to_value(EffectivePolicy::preset("svix").unwrap()).unwrap();
        assert_eq!(svix["strategy"], "schedule");
        assert_eq!(svix["schedule_ms"][0], 5000);
        assert_eq!(svix["jitter"], "proportional");
        assert_eq!(svix["jitter_ratio"], 0.2);
    }

    #[test]
    fn round_trips_through_json() {
        for name in PRESET_NAMES {
            let mut policy = EffectivePolicy::preset(name).unwrap();
            policy.retry_on = vec!["5xx".parse().unwrap(), "409".parse().unwrap()];
            let text = serde_json::to_string(&policy).unwrap();
            assert_eq!(
                serde_json::from_str::<EffectivePolicy>(&text).unwrap(),
                policy,
                "{name}"
            );
        }
    }
}
