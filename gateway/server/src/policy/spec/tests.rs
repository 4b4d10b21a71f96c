//! The unit tests of `spec.rs`.

use super::*;
use serde_json::json;

fn field_of(value: Value) -> String {
    PolicySpec::from_json(&value).unwrap_err().field
}

#[test]
fn accepts_humantime_and_outputs_integer_ms() {
    let value = json!({"base_ms": "30s", "max_delay_ms": "5m", "retry_window_ms": 7_200_000});
    let spec = PolicySpec::from_json(&value).unwrap();
    assert_eq!(spec.base_ms, Some(30_000));
    assert_eq!(spec.max_delay_ms, Some(300_000));
    assert_eq!(spec.retry_window_ms, Some(7_200_000));
    let out = serde_json::to_value(&spec).unwrap();
    assert_eq!(
        out,
        json!({"base_ms": 30000, "max_delay_ms": 300000, "retry_window_ms": 7200000})
    );
    let effective = serde_json::to_value(spec.resolve().unwrap()).unwrap();
    assert_eq!(effective["base_ms"], 30_000);
    assert_eq!(effective["max_delay_ms"], 300_000);
}

#[test]
fn schedule_steps_take_humantime_too() {
    let value = json!({"strategy": "schedule", "schedule_ms": ["5s", 60000, "1h"]});
    let spec = PolicySpec::from_json(&value).unwrap();
    assert_eq!(spec.schedule_ms, Some(vec![5_000, 60_000, 3_600_000]));
}

#[test]
fn serde_deserialize_accepts_the_same_shapes() {
    let spec: PolicySpec = serde_json::from_value(json!({
        "preset": "svix", "max_delay_ms": "2h", "retry_window_ms": "48h",
        "jitter": "full", "retry_on": ["409"]
    }))
    .unwrap();
    assert_eq!(spec.max_delay_ms, Some(7_200_000));
    assert_eq!(spec.retry_window_ms, Some(172_800_000));
    assert_eq!(spec.jitter, Some(JitterKind::Full));
    assert!(serde_json::from_value::<PolicySpec>(json!({"bogus": 1})).is_err());
}

#[test]
fn policy_effective_is_valid_policy_input() {
    for name in crate::policy::PRESET_NAMES {
        let preset = crate::policy::EffectivePolicy::preset(name).unwrap();
        let spec = PolicySpec::from_json(&serde_json::to_value(&preset).unwrap()).unwrap();
        assert_eq!(spec.resolve().unwrap(), preset, "{name}");
    }
}

#[test]
fn nulls_count_as_absent() {
    let spec = PolicySpec::from_json(&json!({"base_ms": null, "jitter": null})).unwrap();
    assert_eq!(spec, PolicySpec::default());
}

#[test]
fn unknown_fields_and_wrong_types_name_the_field() {
    assert_eq!(field_of(json!({"retries": 3})), "policy.retries");
    assert_eq!(field_of(json!({"base_ms": true})), "policy.base_ms");
    assert_eq!(field_of(json!({"base_ms": -5})), "policy.base_ms");
    assert_eq!(field_of(json!({"base_ms": "often"})), "policy.base_ms");
    assert_eq!(field_of(json!({"factor": "2"})), "policy.factor");
    assert_eq!(
        field_of(json!({"max_attempts": 2.5})),
        "policy.max_attempts"
    );
    assert_eq!(
        field_of(json!({"honor_retry_after": "yes"})),
        "policy.honor_retry_after"
    );
    assert_eq!(field_of(json!({"retry_on": "5xx"})), "policy.retry_on");
    assert_eq!(field_of(json!({"give_up_on": [404]})), "policy.give_up_on");
    assert_eq!(
        field_of(json!({"schedule_ms": [1, "x"]})),
        "policy.schedule_ms"
    );
    assert_eq!(field_of(json!({"strategy": "random"})), "policy.strategy");
    assert_eq!(field_of(json!({"jitter": "half"})), "policy.jitter");
    assert_eq!(field_of(json!([1, 2])), "policy");
}

#[test]
fn durations_have_an_upper_bound_at_parse_time() {
    // The endpoint API and the simulator read the policy through `from_json`.
    assert_eq!(
        field_of(json!({"base_ms": "9000y", "max_delay_ms": "9000y", "retry_window_ms": "9000y"})),
        "policy.base_ms"
    );
    assert_eq!(
        field_of(json!({"max_delay_ms": "9000y"})),
        "policy.max_delay_ms"
    );
    assert!(
        PolicySpec::from_json(&json!({"max_delay_ms": "30d", "retry_window_ms": "30d"})).is_ok()
    );
    // The config's `[policy.default]` is read through serde, then resolved.
    let spec: PolicySpec = serde_json::from_value(json!({"retry_window_ms": "9000y"})).unwrap();
    assert_eq!(spec.resolve().unwrap_err().field, "policy.retry_window_ms");
}

#[test]
fn invalid_values_are_reported_at_parse_time() {
    assert_eq!(field_of(json!({"base_ms": 0})), "policy.base_ms");
    assert_eq!(field_of(json!({"preset": "turbo"})), "policy.preset");
    assert_eq!(field_of(json!({"retry_on": ["6xx"]})), "policy.retry_on");
    let error = PolicySpec::from_json(&json!({"max_attempts": 0})).unwrap_err();
    assert_eq!(error.field, "policy.max_attempts");
    assert!(error.to_string().contains("max_attempts"), "{error}");
}
