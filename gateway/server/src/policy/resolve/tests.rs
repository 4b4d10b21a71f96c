//! Tests of policy resolution: presets, overrides, and the errors that name a field.

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
    let policy = resolve(
        json!({"preset": "seed-classic", "base_ms": 500, "max_attempts": 10, "jitter_ratio": 0.5}),
    )
    .unwrap();
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
    let years = json!({"base_ms": "9000y", "max_delay_ms": "9000y", "retry_window_ms": "9000y"});
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
    let policy = resolve(json!({"retry_on": ["404", "5xx"], "give_up_on": ["500-504"]})).unwrap();
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
