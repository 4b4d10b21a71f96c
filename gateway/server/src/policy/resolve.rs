//! Resolution and validation of a [`PolicySpec`] into an [`EffectivePolicy`] (docs/policies.md).
//!
//! The preset (default `"default"`) gives every value; given fields override it. A given
//! `strategy` replaces the preset's strategy fields wholesale: its parameters come from
//! the spec or from the strategy's defaults. A strategy parameter that does not belong to
//! the resulting strategy (say `factor` with a schedule) is an error, not silently
//! ignored.

use super::bounds::{check_duration, check_schedule};
use super::effective::DEFAULT_PRESET;
use super::{
    EffectivePolicy, Jitter, JitterKind, PRESET_NAMES, PolicyError, PolicySpec, StatusPattern,
    Strategy, StrategyKind,
};

/// `base_ms` of a strategy named without one.
const DEFAULT_BASE_MS: u64 = 1_000;
/// `factor` of an exponential strategy named without one.
const DEFAULT_FACTOR: f64 = 2.0;
/// `jitter_ratio` of proportional jitter when neither the spec nor the preset has one.
const DEFAULT_JITTER_RATIO: f64 = 0.3;
/// Upper bound of `max_attempts`.
const MAX_ATTEMPTS_LIMIT: u32 = 100;

impl PolicySpec {
    /// Resolves to concrete values: the preset (default "default") gives the base; given
    /// fields override it; a given `strategy` replaces the preset's strategy fields
    /// wholesale (`step_ms` defaults to `base_ms`, `base_ms` to 1 s, `factor` to 2).
    ///
    /// # Errors
    /// A [`PolicyError`] naming the field for: base ≤ 0, factor < 1, an empty schedule (or
    /// a zero step), a duration over 30 days ([`MAX_DURATION_MS`](super::MAX_DURATION_MS)),
    /// a ratio outside (0, 1], `max_attempts` 0 or over 100, `max_delay_ms` 0, a window
    /// shorter than the base, an unknown preset or status pattern, and a strategy
    /// parameter given for another strategy.
    pub fn resolve(&self) -> Result<EffectivePolicy, PolicyError> {
        let preset_name = self.preset.as_deref().unwrap_or(DEFAULT_PRESET);
        let preset = EffectivePolicy::preset(preset_name).ok_or_else(|| {
            let known = PRESET_NAMES.join(", ");
            PolicyError::new(
                "preset",
                format!("unknown preset {preset_name:?}; expected one of {known}"),
            )
        })?;
        let policy = EffectivePolicy {
            strategy: self.resolve_strategy(&preset.strategy)?,
            jitter: self.resolve_jitter(preset.jitter)?,
            max_delay_ms: self.max_delay_ms.unwrap_or(preset.max_delay_ms),
            max_attempts: self.max_attempts.unwrap_or(preset.max_attempts),
            retry_window_ms: self.retry_window_ms.unwrap_or(preset.retry_window_ms),
            retry_all_non_2xx: self.retry_all_non_2xx.unwrap_or(preset.retry_all_non_2xx),
            honor_retry_after: self.honor_retry_after.unwrap_or(preset.honor_retry_after),
            retry_on: patterns("retry_on", self.retry_on.as_deref())?.unwrap_or(preset.retry_on),
            give_up_on: patterns("give_up_on", self.give_up_on.as_deref())?
                .unwrap_or(preset.give_up_on),
            preset: preset.preset,
        };
        validate_limits(&policy)?;
        Ok(policy)
    }

    fn resolve_strategy(&self, preset: &Strategy) -> Result<Strategy, PolicyError> {
        let kind = self.strategy.unwrap_or(preset.kind());
        self.reject_foreign_parameters(kind)?;
        // Only an unnamed strategy inherits the preset's parameters.
        let inherited = if self.strategy.is_none() {
            Some(preset)
        } else {
            None
        };
        let base_ms = self
            .base_ms
            .or(inherited.map(Strategy::base_ms))
            .unwrap_or(DEFAULT_BASE_MS);
        let strategy = match kind {
            StrategyKind::Exponential => {
                let factor = match inherited {
                    Some(Strategy::Exponential { factor, .. }) => *factor,
                    _ => DEFAULT_FACTOR,
                };
                Strategy::Exponential {
                    base_ms,
                    factor: self.factor.unwrap_or(factor),
                }
            }
            StrategyKind::Linear => {
                let step_ms = match inherited {
                    Some(Strategy::Linear { step_ms, .. }) => *step_ms,
                    _ => base_ms,
                };
                Strategy::Linear {
                    base_ms,
                    step_ms: self.step_ms.unwrap_or(step_ms),
                }
            }
            StrategyKind::Fixed => Strategy::Fixed { base_ms },
            StrategyKind::Schedule => {
                let inherited_steps = match inherited {
                    Some(Strategy::Schedule { schedule_ms }) => Some(schedule_ms.clone()),
                    _ => None,
                };
                let schedule_ms =
                    self.schedule_ms
                        .clone()
                        .or(inherited_steps)
                        .ok_or_else(|| {
                            PolicyError::new(
                                "schedule_ms",
                                "schedule_ms is required with strategy \"schedule\"",
                            )
                        })?;
                Strategy::Schedule { schedule_ms }
            }
        };
        validate_strategy(&strategy)?;
        Ok(strategy)
    }

    fn reject_foreign_parameters(&self, kind: StrategyKind) -> Result<(), PolicyError> {
        use StrategyKind::{Exponential, Fixed, Linear, Schedule};
        let parameters: [(&str, bool, &[StrategyKind]); 4] = [
            (
                "base_ms",
                self.base_ms.is_some(),
                &[Exponential, Linear, Fixed],
            ),
            ("factor", self.factor.is_some(), &[Exponential]),
            ("step_ms", self.step_ms.is_some(), &[Linear]),
            ("schedule_ms", self.schedule_ms.is_some(), &[Schedule]),
        ];
        for (name, given, owners) in parameters {
            if given && !owners.contains(&kind) {
                let owners: Vec<&str> = owners.iter().map(|owner| owner.as_str()).collect();
                let message = format!(
                    "{name} applies to strategy {}, but this policy's strategy is {:?}; set \"strategy\" to change it",
                    owners.join(" or "),
                    kind.as_str()
                );
                return Err(PolicyError::new(name, message));
            }
        }
        Ok(())
    }

    fn resolve_jitter(&self, preset: Jitter) -> Result<Jitter, PolicyError> {
        if let Some(ratio) = self.jitter_ratio
            && !(ratio > 0.0 && ratio <= 1.0)
        {
            return Err(PolicyError::new(
                "jitter_ratio",
                format!("jitter_ratio must be in (0, 1], got {ratio}"),
            ));
        }
        Ok(match self.jitter.unwrap_or(preset.kind()) {
            JitterKind::None => Jitter::None,
            JitterKind::Full => Jitter::Full,
            JitterKind::Equal => Jitter::Equal,
            JitterKind::Decorrelated => Jitter::Decorrelated,
            JitterKind::Proportional => Jitter::Proportional {
                ratio: self
                    .jitter_ratio
                    .or(preset.ratio())
                    .unwrap_or(DEFAULT_JITTER_RATIO),
            },
        })
    }
}

fn patterns(
    name: &str,
    texts: Option<&[String]>,
) -> Result<Option<Vec<StatusPattern>>, PolicyError> {
    texts
        .map(|texts| {
            texts
                .iter()
                .map(|text| {
                    text.parse()
                        .map_err(|err| PolicyError::new(name, format!("{name}: {err}")))
                })
                .collect()
        })
        .transpose()
}

fn validate_strategy(strategy: &Strategy) -> Result<(), PolicyError> {
    // Bounded first, so that every later delay and due time stays far from overflow.
    match strategy {
        Strategy::Exponential { base_ms, .. } | Strategy::Fixed { base_ms } => {
            check_duration("base_ms", *base_ms)?;
        }
        Strategy::Linear { base_ms, step_ms } => {
            check_duration("base_ms", *base_ms)?;
            check_duration("step_ms", *step_ms)?;
        }
        Strategy::Schedule { schedule_ms } => check_schedule(schedule_ms)?,
    }
    match strategy {
        Strategy::Exponential { factor, .. } if !(factor.is_finite() && *factor >= 1.0) => Err(
            PolicyError::new("factor", format!("factor must be at least 1, got {factor}")),
        ),
        Strategy::Schedule { schedule_ms } if schedule_ms.is_empty() => Err(PolicyError::new(
            "schedule_ms",
            "schedule_ms must list at least one delay",
        )),
        Strategy::Schedule { schedule_ms } if schedule_ms.contains(&0) => Err(PolicyError::new(
            "schedule_ms",
            "every schedule_ms step must be greater than 0",
        )),
        Strategy::Schedule { .. } => Ok(()),
        _ if strategy.base_ms() == 0 => Err(PolicyError::new(
            "base_ms",
            "base_ms must be greater than 0",
        )),
        _ => Ok(()),
    }
}

fn validate_limits(policy: &EffectivePolicy) -> Result<(), PolicyError> {
    if policy.max_attempts == 0 || policy.max_attempts > MAX_ATTEMPTS_LIMIT {
        let message = format!(
            "max_attempts must be from 1 to {MAX_ATTEMPTS_LIMIT}, got {}",
            policy.max_attempts
        );
        return Err(PolicyError::new("max_attempts", message));
    }
    if policy.max_delay_ms == 0 {
        return Err(PolicyError::new(
            "max_delay_ms",
            "max_delay_ms must be greater than 0",
        ));
    }
    check_duration("max_delay_ms", policy.max_delay_ms)?;
    check_duration("retry_window_ms", policy.retry_window_ms)?;
    if policy.retry_window_ms < policy.base_ms() {
        let message = format!(
            "retry_window_ms ({} ms) must not be shorter than the base delay ({} ms)",
            policy.retry_window_ms,
            policy.base_ms()
        );
        return Err(PolicyError::new("retry_window_ms", message));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resolve(value: serde_json::Value) -> Result<EffectivePolicy, PolicyError> {
        serde_json::from_value::<PolicySpec>(value)
            .unwrap()
            .resolve()
    }

    fn error_field(value: serde_json::Value) -> String {
        resolve(value).unwrap_err().field
    }

    #[test]
    fn an_empty_spec_is_the_default_preset() {
        assert_eq!(
            PolicySpec::default().resolve().unwrap(),
            EffectivePolicy::default_preset()
        );
    }

    #[test]
    fn given_fields_override_the_preset() {
        let policy = resolve(json!({"preset": "seed-classic", "base_ms": 500, "max_attempts": 10, "jitter_ratio": 0.5})).unwrap();
        assert_eq!(policy.preset, "seed-classic");
        assert_eq!(
            policy.strategy,
            Strategy::Exponential {
                base_ms: 500,
                factor: 2.0
            }
        );
        assert_eq!(policy.max_attempts, 10);
        assert_eq!(policy.jitter, Jitter::Proportional { ratio: 0.5 });
        assert_eq!(policy.max_delay_ms, 3_600_000);
    }

    #[test]
    fn a_given_strategy_replaces_the_preset_strategy_wholesale() {
        let policy = resolve(json!({"preset": "svix", "strategy": "exponential"})).unwrap();
        assert_eq!(
            policy.strategy,
            Strategy::Exponential {
                base_ms: 1_000,
                factor: 2.0
            }
        );
        assert_eq!(policy.max_attempts, 8);
        let policy =
            resolve(json!({"base_ms": 3000, "factor": 3.0, "strategy": "exponential"})).unwrap();
        assert_eq!(
            policy.strategy,
            Strategy::Exponential {
                base_ms: 3_000,
                factor: 3.0
            }
        );
        let policy = resolve(json!({"strategy": "linear", "base_ms": 5000})).unwrap();
        assert_eq!(
            policy.strategy,
            Strategy::Linear {
                base_ms: 5_000,
                step_ms: 5_000
            }
        );
        let policy = resolve(json!({"strategy": "fixed"})).unwrap();
        assert_eq!(policy.strategy, Strategy::Fixed { base_ms: 1_000 });
        // Naming the preset's own strategy still replaces its parameters.
        assert_eq!(
            error_field(json!({"preset": "ladder", "strategy": "schedule"})),
            "policy.schedule_ms"
        );
        let policy =
            resolve(json!({"preset": "ladder", "strategy": "schedule", "schedule_ms": [1000]}))
                .unwrap();
        assert_eq!(
            policy.strategy,
            Strategy::Schedule {
                schedule_ms: vec![1_000]
            }
        );
    }

    #[test]
    fn jitter_kinds_resolve() {
        assert_eq!(
            resolve(json!({"jitter": "none"})).unwrap().jitter,
            Jitter::None
        );
        assert_eq!(
            resolve(json!({"jitter": "decorrelated"})).unwrap().jitter,
            Jitter::Decorrelated
        );
        let proportional = resolve(json!({"jitter": "proportional"})).unwrap().jitter;
        assert_eq!(
            proportional,
            Jitter::Proportional {
                ratio: DEFAULT_JITTER_RATIO
            }
        );
        let svix = resolve(json!({"preset": "svix", "jitter": "proportional"}))
            .unwrap()
            .jitter;
        assert_eq!(svix, Jitter::Proportional { ratio: 0.2 });
    }

    #[test]
    fn validation_errors_name_the_field() {
        assert_eq!(error_field(json!({"base_ms": 0})), "policy.base_ms");
        assert_eq!(
            error_field(json!({"strategy": "fixed", "base_ms": 0})),
            "policy.base_ms"
        );
        assert_eq!(error_field(json!({"factor": 0.5})), "policy.factor");
        assert_eq!(
            error_field(json!({"strategy": "schedule", "schedule_ms": []})),
            "policy.schedule_ms"
        );
        assert_eq!(
            error_field(json!({"strategy": "schedule"})),
            "policy.schedule_ms"
        );
        assert_eq!(
            error_field(json!({"preset": "svix", "schedule_ms": [0, 5]})),
            "policy.schedule_ms"
        );
        assert_eq!(
            error_field(json!({"jitter_ratio": 0.0})),
            "policy.jitter_ratio"
        );
        assert_eq!(
            error_field(json!({"jitter_ratio": 1.5})),
            "policy.jitter_ratio"
        );
        assert_eq!(
            error_field(json!({"max_attempts": 0})),
            "policy.max_attempts"
        );
        assert_eq!(
            error_field(json!({"max_attempts": 101})),
            "policy.max_attempts"
        );
        assert_eq!(
            error_field(json!({"max_delay_ms": 0})),
            "policy.max_delay_ms"
        );
        assert_eq!(
            error_field(json!({"base_ms": 60000, "retry_window_ms": "30s"})),
            "policy.retry_window_ms"
        );
        assert_eq!(
            error_field(json!({"preset": "aggressive-short", "retry_window_ms": "5m"})),
            "policy.retry_window_ms"
        );
        assert_eq!(error_field(json!({"preset": "turbo"})), "policy.preset");
        assert_eq!(
            error_field(json!({"give_up_on": ["4x"]})),
            "policy.give_up_on"
        );
        assert!(resolve(json!({"max_attempts": 100, "jitter_ratio": 1.0})).is_ok());
    }

    #[test]
    fn parameters_of_another_strategy_are_refused() {
        assert_eq!(
            error_field(json!({"preset": "svix", "base_ms": 1000})),
            "policy.base_ms"
        );
        assert_eq!(error_field(json!({"step_ms": 1000})), "policy.step_ms");
        assert_eq!(
            error_field(json!({"schedule_ms": [1000]})),
            "policy.schedule_ms"
        );
        assert_eq!(
            error_field(json!({"strategy": "linear", "factor": 2.0})),
            "policy.factor"
        );
    }

    /// 30 days in ms, the bound of every policy duration.
    const THIRTY_DAYS_MS: u64 = 30 * 24 * 3_600_000;

    #[test]
    fn durations_have_an_upper_bound_of_30_days() {
        // The reported policy: every duration 9000 years.
        let years =
            json!({"base_ms": "9000y", "max_delay_ms": "9000y", "retry_window_ms": "9000y"});
        let error = resolve(years).unwrap_err();
        assert_eq!(error.field, "policy.base_ms");
        assert!(error.message.contains("30 days"), "{error}");
        let over = THIRTY_DAYS_MS + 1;
        let cases = [
            (
                "policy.base_ms",
                json!({"base_ms": over, "retry_window_ms": over}),
            ),
            (
                "policy.base_ms",
                json!({"strategy": "fixed", "base_ms": over}),
            ),
            (
                "policy.step_ms",
                json!({"strategy": "linear", "step_ms": over}),
            ),
            (
                "policy.schedule_ms",
                json!({"strategy": "schedule", "schedule_ms": [1000, over]}),
            ),
            ("policy.max_delay_ms", json!({"max_delay_ms": over})),
            ("policy.max_delay_ms", json!({"max_delay_ms": u64::MAX})),
            ("policy.retry_window_ms", json!({"retry_window_ms": "31d"})),
            (
                "policy.retry_window_ms",
                json!({"retry_window_ms": u64::MAX}),
            ),
        ];
        for (field, spec) in cases {
            assert_eq!(error_field(spec.clone()), field, "{spec}");
        }
        // Exactly 30 days is accepted everywhere.
        let policy = resolve(json!({
            "base_ms": "30d", "max_delay_ms": "30d", "retry_window_ms": THIRTY_DAYS_MS
        }))
        .unwrap();
        assert_eq!(policy.base_ms(), THIRTY_DAYS_MS);
        assert_eq!(
            (policy.max_delay_ms, policy.retry_window_ms),
            (THIRTY_DAYS_MS, THIRTY_DAYS_MS)
        );
        let linear = resolve(
            json!({"strategy": "linear", "base_ms": "30d", "step_ms": "30d", "retry_window_ms": "30d"}),
        );
        assert!(linear.is_ok(), "{linear:?}");
        let schedule = resolve(json!({"strategy": "schedule", "schedule_ms": ["1h", "30d"]}));
        assert!(schedule.is_ok(), "{schedule:?}");
    }

    #[test]
    fn status_lists_are_parsed() {
        let policy =
            resolve(json!({"retry_on": ["404", "5xx"], "give_up_on": ["500-504"]})).unwrap();
        assert_eq!(
            policy.retry_on,
            vec![StatusPattern::Exact(404), StatusPattern::Class(5)]
        );
        assert_eq!(
            policy.give_up_on,
            vec![StatusPattern::Range {
                low: 500,
                high: 504
            }]
        );
    }
}
