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

/// A spec being resolved: the steps of [`PolicySpec::resolve`], each reading
/// the spec's fields over its preset's.
pub(super) struct Resolution<'a> {
    pub(super) spec: &'a PolicySpec,
}

impl Resolution<'_> {
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
    pub(super) fn resolve(&self) -> Result<EffectivePolicy, PolicyError> {
        let preset_name = self.spec.preset.as_deref().unwrap_or(DEFAULT_PRESET);
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
            max_delay_ms: self.spec.max_delay_ms.unwrap_or(preset.max_delay_ms),
            max_attempts: self.spec.max_attempts.unwrap_or(preset.max_attempts),
            retry_window_ms: self.spec.retry_window_ms.unwrap_or(preset.retry_window_ms),
            retry_all_non_2xx: self
                .spec
                .retry_all_non_2xx
                .unwrap_or(preset.retry_all_non_2xx),
            honor_retry_after: self
                .spec
                .honor_retry_after
                .unwrap_or(preset.honor_retry_after),
            retry_on: patterns("retry_on", self.spec.retry_on.as_deref())?
                .unwrap_or(preset.retry_on),
            give_up_on: patterns("give_up_on", self.spec.give_up_on.as_deref())?
                .unwrap_or(preset.give_up_on),
            error_rules: self.spec.error_rules.clone().unwrap_or_default(),
            preset: preset.preset,
        };
        validate_limits(&policy)?;
        Ok(policy)
    }

    fn resolve_strategy(&self, preset: &Strategy) -> Result<Strategy, PolicyError> {
        let kind = self.spec.strategy.unwrap_or(preset.kind());
        self.reject_foreign_parameters(kind)?;
        // Only an unnamed strategy inherits the preset's parameters.
        let inherited = if self.spec.strategy.is_none() {
            Some(preset)
        } else {
            None
        };
        let base_ms = self
            .spec
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
                    factor: self.spec.factor.unwrap_or(factor),
                }
            }
            StrategyKind::Linear => {
                let step_ms = match inherited {
                    Some(Strategy::Linear { step_ms, .. }) => *step_ms,
                    _ => base_ms,
                };
                Strategy::Linear {
                    base_ms,
                    step_ms: self.spec.step_ms.unwrap_or(step_ms),
                }
            }
            StrategyKind::Fixed => Strategy::Fixed { base_ms },
            StrategyKind::Schedule => {
                let inherited_steps = match inherited {
                    Some(Strategy::Schedule { schedule_ms }) => Some(schedule_ms.clone()),
                    _ => None,
                };
                let schedule_ms = self
                    .spec
                    .schedule_ms
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
                self.spec.base_ms.is_some(),
                &[Exponential, Linear, Fixed],
            ),
            ("factor", self.spec.factor.is_some(), &[Exponential]),
            ("step_ms", self.spec.step_ms.is_some(), &[Linear]),
            ("schedule_ms", self.spec.schedule_ms.is_some(), &[Schedule]),
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
        if let Some(ratio) = self.spec.jitter_ratio
            && !(ratio > 0.0 && ratio <= 1.0)
        {
            return Err(PolicyError::new(
                "jitter_ratio",
                format!("jitter_ratio must be in (0, 1], got {ratio}"),
            ));
        }
        Ok(match self.spec.jitter.unwrap_or(preset.kind()) {
            JitterKind::None => Jitter::None,
            JitterKind::Full => Jitter::Full,
            JitterKind::Equal => Jitter::Equal,
            JitterKind::Decorrelated => Jitter::Decorrelated,
            JitterKind::Proportional => Jitter::Proportional {
                ratio: self
                    .spec
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
mod tests;
