//! Upper bounds of the policy's durations, and the warning once per owner when a
//! policy stored before the bounds existed is clamped to them
//! (`PolicySpec::clamp_durations` and `PolicySpec::load_stored` do the clamping).
//!
//! `base_ms`, `step_ms`, every `schedule_ms` step, `max_delay_ms` and `retry_window_ms`
//! are at most [`MAX_DURATION_MS`] (30 days; docs/policies.md says why). A new policy
//! above a bound is refused, naming the field. A policy already stored above one is
//! clamped when it is loaded, with a warning, so an endpoint set up earlier keeps
//! delivering instead of silently losing its policy.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};

use super::PolicyError;

/// The longest any policy duration may be: 30 days, in milliseconds.
pub const MAX_DURATION_MS: u64 = 30 * 24 * 60 * 60 * 1_000;

/// How [`MAX_DURATION_MS`] reads in messages.
pub(super) const MAX_DURATION_TEXT: &str = "30 days";

/// Owners remembered as already warned about; past this the memory starts afresh, so a
/// warning may repeat but the set never grows without bound.
const WARNED_CAPACITY: usize = 4_096;

/// Refuses `ms` above [`MAX_DURATION_MS`] for the field `name`.
///
/// # Errors
/// A [`PolicyError`] on `policy.<name>`.
pub(crate) fn check_duration(name: &str, ms: u64) -> Result<(), PolicyError> {
    check_named(name, name, ms)
}

/// Refuses every `schedule_ms` step above [`MAX_DURATION_MS`].
///
/// # Errors
/// A [`PolicyError`] on `policy.schedule_ms` whose message names the step.
pub(crate) fn check_schedule(steps: &[u64]) -> Result<(), PolicyError> {
    steps.iter().enumerate().try_for_each(|(index, ms)| {
        check_named("schedule_ms", &format!("schedule_ms[{index}]"), *ms)
    })
}

fn check_named(field: &str, shown: &str, ms: u64) -> Result<(), PolicyError> {
    if ms <= MAX_DURATION_MS {
        return Ok(());
    }
    let message =
        format!("{shown} must be at most {MAX_DURATION_TEXT} ({MAX_DURATION_MS} ms), got {ms} ms");
    Err(PolicyError::new(field, message))
}

/// Whether `owner` has not been warned about yet in this process; remembers it.
pub(super) fn first_warning(owner: &str) -> bool {
    static WARNED: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    // A poisoned set is still a valid set: the worst case is a repeated warning.
    let mut warned = WARNED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if warned.contains(owner) {
        return false;
    }
    if warned.len() >= WARNED_CAPACITY {
        warned.clear();
    }
    warned.insert(owner.to_owned());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PolicySpec, Strategy};
    use serde_json::json;

    #[test]
    fn durations_have_an_upper_bound_and_stored_policies_are_clamped() {
        let stored = json!({
            "base_ms": "9000y", "max_delay_ms": u64::MAX, "retry_window_ms": "9000y",
            "max_attempts": 5
        });
        // A new policy like this is refused…
        assert_eq!(
            PolicySpec::from_json(&stored).unwrap_err().field,
            "policy.base_ms"
        );
        // …but one already stored is clamped, field by field, and still resolves.
        let (spec, clamped) = PolicySpec::from_stored_json(&stored).unwrap();
        assert_eq!(clamped, ["base_ms", "max_delay_ms", "retry_window_ms"]);
        let policy = spec.resolve().unwrap();
        assert_eq!(policy.base_ms(), MAX_DURATION_MS);
        assert_eq!(
            (
                policy.max_delay_ms,
                policy.retry_window_ms,
                policy.max_attempts
            ),
            (MAX_DURATION_MS, MAX_DURATION_MS, 5)
        );

        let linear = json!({"strategy": "linear", "step_ms": "1000y", "retry_window_ms": "2h"});
        let (spec, clamped) = PolicySpec::from_stored_json(&linear).unwrap();
        assert_eq!(clamped, ["step_ms"]);
        assert_eq!(spec.step_ms, Some(MAX_DURATION_MS));

        let schedule = json!({"strategy": "schedule", "schedule_ms": ["5s", "400d"], "retry_window_ms": "400d"});
        let (spec, clamped) = PolicySpec::from_stored_json(&schedule).unwrap();
        assert_eq!(clamped, ["retry_window_ms", "schedule_ms"]);
        assert_eq!(
            spec.resolve().unwrap().strategy,
            Strategy::Schedule {
                schedule_ms: vec![5_000, MAX_DURATION_MS]
            }
        );

        // Within the bounds nothing changes, and other errors still count.
        let (spec, clamped) =
            PolicySpec::from_stored_json(&json!({"base_ms": "30d", "retry_window_ms": "30d"}))
                .unwrap();
        assert!(clamped.is_empty());
        assert_eq!(spec.base_ms, Some(MAX_DURATION_MS));
        assert!(PolicySpec::from_stored_json(&json!({"max_attempts": 0})).is_err());
    }

    #[test]
    fn durations_have_an_upper_bound_and_a_clamp_warns_once_per_owner() {
        let owner = "acme/ep_warned_once";
        assert!(first_warning(owner));
        assert!(!first_warning(owner));
        assert!(first_warning("acme/ep_another"));
    }
}
