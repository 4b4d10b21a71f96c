//! The policy object as a user gives it (docs/policies.md): the endpoint API's `"policy": {...}`, the
//! config's `[policy.default]` and the simulator's input. Every field is optional;
//! [`PolicySpec::resolve`](super::PolicySpec::resolve) fills in the rest.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::duration::DurationMs;
use super::duration::{deserialize_opt_ms, deserialize_opt_ms_list, json_type, ms_from_json};
use super::{
    EffectivePolicy, ErrorRule, ErrorRules, FailureKind, JitterKind, PresetName, StatusPattern,
    StrategyKind, bounds, error_rules,
};

/// What a user gives (endpoint API `"policy": {...}`, config `[policy.default]`): every
/// field optional, `_ms` fields as integer ms or humantime strings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    /// Preset the other fields override; `"default"` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<PresetName>)]
    pub preset: Option<String>,
    /// Replaces the preset's strategy and its fields wholesale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<StrategyKind>,
    /// First delay of `exponential`, `linear` and `fixed`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_opt_ms"
    )]
    #[schema(value_type = Option<DurationMs>)]
    pub base_ms: Option<u64>,
    /// Growth of `exponential`, at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1.0, example = 2.0)]
    pub factor: Option<f64>,
    /// Increment of `linear`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_opt_ms"
    )]
    #[schema(value_type = Option<DurationMs>)]
    pub step_ms: Option<u64>,
    /// Delays of `schedule`; the last repeats.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_opt_ms_list"
    )]
    #[schema(value_type = Option<Vec<DurationMs>>, min_items = 1)]
    pub schedule_ms: Option<Vec<u64>>,
    /// Cap on every delay.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_opt_ms"
    )]
    #[schema(value_type = Option<DurationMs>)]
    pub max_delay_ms: Option<u64>,
    /// Attempts per series, the first included (1–100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 100, example = 8)]
    pub max_attempts: Option<u32>,
    /// How long after the first attempt retries may still be scheduled.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_opt_ms"
    )]
    #[schema(value_type = Option<DurationMs>)]
    pub retry_window_ms: Option<u64>,
    /// The jitter kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterKind>,
    /// r of `proportional` jitter, in (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(exclusive_minimum = 0.0, maximum = 1.0, example = 0.2)]
    pub jitter_ratio: Option<f64>,
    /// Retry every non-2xx status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_all_non_2xx: Option<bool>,
    /// Treat `Retry-After` on 429/503 as a floor (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub honor_retry_after: Option<bool>,
    /// Status patterns to retry (`"429"`, `"5xx"`, `"500-504"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<StatusPattern>>)]
    pub retry_on: Option<Vec<String>>,
    /// Status patterns to give up on; beats every other rule but 2xx.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<StatusPattern>>)]
    pub give_up_on: Option<Vec<String>>,
    /// What a failure without a status leads to, by error kind (`timeout`,
    /// `auth_refused`, `too_large`, ...): `"retry"`, `"give_up"` or
    /// `{"give_up_after": n}`. A kind left out keeps its default; laid over
    /// `[policy.default]` kind by kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<std::collections::BTreeMap<FailureKind, ErrorRule>>, example = json!({"auth_refused": "give_up", "timeout": {"give_up_after": 10}}))]
    pub error_rules: Option<ErrorRules>,
}

/// A policy field the user got wrong; the API answers 422 with `field`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct PolicyError {
    /// Path of the offending field, e.g. `policy.base_ms`.
    pub field: String,
    /// What is wrong, for a human.
    pub message: String,
}

impl PolicyError {
    /// An error on `policy.<name>`.
    pub(crate) fn new(name: &str, message: impl Into<String>) -> Self {
        Self {
            field: format!("policy.{name}"),
            message: message.into(),
        }
    }
}

/// Every field name, for the unknown-field message.
const FIELD_NAMES: &str = "preset, strategy, base_ms, factor, step_ms, schedule_ms, max_delay_ms, \
     max_attempts, retry_window_ms, jitter, jitter_ratio, retry_all_non_2xx, honor_retry_after, \
     retry_on, give_up_on, error_rules";

impl PolicySpec {
    /// This spec laid over `base` (the config's `[policy.default]`): a given preset
    /// starts afresh from that preset; a given strategy drops `base`'s strategy
    /// fields; every other given field overrides `base`'s.
    pub fn layered_over(&self, base: &PolicySpec) -> PolicySpec {
        if self.preset.is_some() {
            return self.clone();
        }
        let mut out = base.clone();
        if let Some(rules) = &self.error_rules {
            let mut merged = base.error_rules.clone().unwrap_or_default();
            merged.extend(rules.iter().map(|(k, r)| (*k, *r)));
            out.error_rules = Some(merged);
        }
        if self.strategy.is_some() {
            (out.base_ms, out.factor, out.step_ms, out.schedule_ms) = (None, None, None, None);
        }
        macro_rules! over {
            ($($f:ident),*) => { $( if self.$f.is_some() { out.$f = self.$f.clone(); } )* };
        }
        over!(
            strategy,
            base_ms,
            factor,
            step_ms,
            schedule_ms,
            max_delay_ms,
            max_attempts,
            retry_window_ms,
            jitter,
            jitter_ratio,
            retry_all_non_2xx,
            honor_retry_after,
            retry_on,
            give_up_on
        );
        out
    }

    /// Resolves to concrete values: the preset (default "default") gives the base;
    /// given fields override it; a given `strategy` replaces the preset's strategy
    /// fields wholesale (`step_ms` defaults to `base_ms`, `base_ms` to 1 s, `factor`
    /// to 2). The steps are `resolve.rs`'s.
    ///
    /// # Errors
    /// A [`PolicyError`] naming the field for: base ≤ 0, factor < 1, an empty schedule
    /// (or a zero step), a duration over 30 days, a ratio outside (0, 1],
    /// `max_attempts` 0 or over 100, `max_delay_ms` 0, a window shorter than the base,
    /// an unknown preset or status pattern, and a strategy parameter given for
    /// another strategy.
    pub fn resolve(&self) -> Result<EffectivePolicy, PolicyError> {
        super::resolve::Resolution { spec: self }.resolve()
    }

    /// Parses a JSON object, accepting `_ms` fields as integer ms or humantime strings
    /// ("30s", "5m"); a `null` field counts as absent. The result is also resolved once,
    /// so every invalid value is reported here.
    ///
    /// # Errors
    /// Unknown fields, wrong types and invalid values give a [`PolicyError`] whose field
    /// is `policy.<name>` (`policy` itself when the value is not an object).
    pub fn from_json(value: &Value) -> Result<PolicySpec, PolicyError> {
        let spec = Self::from_json_unresolved(value)?;
        spec.resolve()?;
        Ok(spec)
    }

    /// [`PolicySpec::from_json`] without the resolution: types and names only.
    pub(crate) fn from_json_unresolved(value: &Value) -> Result<PolicySpec, PolicyError> {
        let Value::Object(fields) = value else {
            return Err(PolicyError {
                field: "policy".to_owned(),
                message: format!("policy must be a JSON object, got {}", json_type(value)),
            });
        };
        Self::from_fields(fields)
    }

    fn from_fields(fields: &Map<String, Value>) -> Result<Self, PolicyError> {
        let mut spec = Self::default();
        for (name, value) in fields {
            let name = name.as_str();
            match name {
                "preset" => spec.preset = read(name, value, string)?,
                "strategy" => spec.strategy = read(name, value, strategy_kind)?,
                "base_ms" => spec.base_ms = read(name, value, ms_from_json)?,
                "factor" => spec.factor = read(name, value, number)?,
                "step_ms" => spec.step_ms = read(name, value, ms_from_json)?,
                "schedule_ms" => spec.schedule_ms = read(name, value, ms_list)?,
                "max_delay_ms" => spec.max_delay_ms = read(name, value, ms_from_json)?,
                "max_attempts" => spec.max_attempts = read(name, value, attempts)?,
                "retry_window_ms" => spec.retry_window_ms = read(name, value, ms_from_json)?,
                "jitter" => spec.jitter = read(name, value, jitter_kind)?,
                "jitter_ratio" => spec.jitter_ratio = read(name, value, number)?,
                "retry_all_non_2xx" => spec.retry_all_non_2xx = read(name, value, boolean)?,
                "honor_retry_after" => spec.honor_retry_after = read(name, value, boolean)?,
                "retry_on" => spec.retry_on = read(name, value, strings)?,
                "give_up_on" => spec.give_up_on = read(name, value, strings)?,
                "error_rules" => spec.error_rules = read(name, value, error_rules::from_json)?,
                _ => {
                    let message =
                        format!("unknown policy field {name:?}; known fields: {FIELD_NAMES}");
                    return Err(PolicyError::new(name, message));
                }
            }
        }
        Ok(spec)
    }

    /// Lowers every duration above [`bounds::MAX_DURATION_MS`] to it; returns the names of the
    /// fields that were lowered. Clamping keeps `retry_window_ms ≥ base_ms` true when it
    /// was, so a policy that resolved before still resolves.
    pub fn clamp_durations(&mut self) -> Vec<&'static str> {
        let mut clamped = Vec::new();
        let fields = [
            ("base_ms", &mut self.base_ms),
            ("step_ms", &mut self.step_ms),
            ("max_delay_ms", &mut self.max_delay_ms),
            ("retry_window_ms", &mut self.retry_window_ms),
        ];
        for (name, field) in fields {
            if let Some(ms) = field
                && *ms > bounds::MAX_DURATION_MS
            {
                *ms = bounds::MAX_DURATION_MS;
                clamped.push(name);
            }
        }
        if let Some(steps) = &mut self.schedule_ms
            && steps.iter().any(|ms| *ms > bounds::MAX_DURATION_MS)
        {
            for ms in steps.iter_mut() {
                *ms = (*ms).min(bounds::MAX_DURATION_MS);
            }
            clamped.push("schedule_ms");
        }
        clamped
    }

    /// Reads a policy object as stored with an endpoint: like [`PolicySpec::from_json`],
    /// except that durations above the bounds are clamped rather than refused. Returns
    /// the spec and the names of the clamped fields.
    ///
    /// # Errors
    /// Whatever [`PolicySpec::from_json`] refuses for a reason other than a bound.
    pub fn from_stored_json(value: &Value) -> Result<(PolicySpec, Vec<&'static str>), PolicyError> {
        let mut spec = Self::from_json_unresolved(value)?;
        let clamped = spec.clamp_durations();
        spec.resolve()?;
        Ok((spec, clamped))
    }

    /// [`PolicySpec::from_stored_json`] for the policy stored with `tenant`'s
    /// `endpoint`: a clamped policy is logged as a warning, once per endpoint per
    /// process, since every attempt and every view loads it. `None` when the stored
    /// policy no longer resolves.
    pub fn load_stored(value: &Value, tenant: &str, endpoint: &str) -> Option<PolicySpec> {
        let (spec, clamped) = Self::from_stored_json(value).ok()?;
        if !clamped.is_empty() && bounds::first_warning(&format!("{tenant}/{endpoint}")) {
            tracing::warn!(
                tenant = %tenant,
                endpoint,
                fields = clamped.join(", "),
                max_ms = bounds::MAX_DURATION_MS,
                "stored policy has durations above the {} bound; they are clamped to it",
                bounds::MAX_DURATION_TEXT
            );
        }
        Some(spec)
    }

    /// The policy that governs an endpoint's next decision: its own policy
    /// (`stored`, as kept with `tenant`'s `endpoint`) laid over the config's
    /// `default`, and a label naming it for the attempt log (`endpoint:svix`,
    /// `config:default`, `builtin:default`). A stored policy was valid when set;
    /// durations above today's bounds (stored before there were any) are clamped
    /// to them, with a warning. Should it stop resolving for another reason (the
    /// default changed), the config default alone applies.
    pub fn effective_for(
        stored: Option<&Value>,
        tenant: &str,
        endpoint: &str,
        default: &PolicySpec,
    ) -> (EffectivePolicy, String) {
        let own = stored.and_then(|p| Self::load_stored(p, tenant, endpoint));
        let (spec, source) = match &own {
            Some(own) => (own.layered_over(default), "endpoint"),
            None if *default != PolicySpec::default() => (default.clone(), "config"),
            None => (PolicySpec::default(), "builtin"),
        };
        let policy = spec
            .resolve()
            .or_else(|_| default.resolve())
            .unwrap_or_else(|_| EffectivePolicy::default_preset());
        let label = format!("{source}:{}", policy.preset);
        (policy, label)
    }
}

/// Reads one field: `null` is absent, anything else goes through `parse`.
fn read<T>(
    name: &str,
    value: &Value,
    parse: impl FnOnce(&Value) -> Result<T, String>,
) -> Result<Option<T>, PolicyError> {
    if value.is_null() {
        return Ok(None);
    }
    parse(value)
        .map(Some)
        .map_err(|message| PolicyError::new(name, format!("{name}: {message}")))
}

fn string(value: &Value) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("expected a string, got {}", json_type(value)))
}

fn strategy_kind(value: &Value) -> Result<StrategyKind, String> {
    let name = string(value)?;
    StrategyKind::from_name(&name).ok_or_else(|| {
        format!(
            "unknown strategy {name:?}; expected one of {}",
            StrategyKind::NAMES.join(", ")
        )
    })
}

fn jitter_kind(value: &Value) -> Result<JitterKind, String> {
    let name = string(value)?;
    JitterKind::from_name(&name).ok_or_else(|| {
        format!(
            "unknown jitter {name:?}; expected one of {}",
            JitterKind::NAMES.join(", ")
        )
    })
}

fn number(value: &Value) -> Result<f64, String> {
    value
        .as_f64()
        .ok_or_else(|| format!("expected a number, got {}", json_type(value)))
}

fn boolean(value: &Value) -> Result<bool, String> {
    value
        .as_bool()
        .ok_or_else(|| format!("expected true or false, got {}", json_type(value)))
}

fn attempts(value: &Value) -> Result<u32, String> {
    value
        .as_u64()
        .and_then(|count| u32::try_from(count).ok())
        .ok_or_else(|| format!("expected a whole number from 1 to 100, got {value}"))
}

fn array(value: &Value) -> Result<&Vec<Value>, String> {
    value
        .as_array()
        .ok_or_else(|| format!("expected an array, got {}", json_type(value)))
}

fn ms_list(value: &Value) -> Result<Vec<u64>, String> {
    array(value)?
        .iter()
        .enumerate()
        .map(|(index, item)| ms_from_json(item).map_err(|message| format!("[{index}]: {message}")))
        .collect()
}

fn strings(value: &Value) -> Result<Vec<String>, String> {
    array(value)?
        .iter()
        .enumerate()
        .map(|(index, item)| string(item).map_err(|message| format!("[{index}]: {message}")))
        .collect()
}

#[cfg(test)]
mod tests;
