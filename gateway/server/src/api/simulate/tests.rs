//! Tests of the simulate route's input: the CLI's defaults, the bounds that name
//! their field, how the policy is chosen, and the work budget of a run.

use super::*;
use serde_json::json;

fn request(value: Value) -> SimulateRequest {
    parse_json(value.to_string().as_bytes()).unwrap()
}

fn config(value: Value) -> Result<SimulationConfig, ApiError> {
    request(value).into_config(&PolicySpec::default())
}

/// The status and field of a refused request.
fn refused(value: Value) -> (u16, Option<String>) {
    let e = config(value).unwrap_err();
    (e.status().as_u16(), e.field)
}

#[test]
fn an_empty_request_takes_the_cli_defaults() {
    let cfg = config(json!({})).unwrap();
    assert_eq!(
        (cfg.events, cfg.outage_ms, cfg.seed, cfg.attempt_ms),
        (1_000, 600_000, 1, 50)
    );
    assert_eq!(cfg.policy, EffectivePolicy::default_preset());
}

#[test]
fn events_are_bounded_naming_the_field() {
    for events in [0, MAX_EVENTS + 1, u64::MAX] {
        assert_eq!(
            refused(json!({"events": events})),
            (422, Some("events".into())),
            "{events}"
        );
    }
    assert_eq!(
        config(json!({"events": MAX_EVENTS})).unwrap().events,
        100_000
    );
}

#[test]
fn the_outage_is_bounded_and_reads_like_the_policy_durations() {
    assert_eq!(
        config(json!({"outage": "7d"})).unwrap().outage_ms,
        MAX_OUTAGE_MS
    );
    assert_eq!(config(json!({"outage": 90_000})).unwrap().outage_ms, 90_000);
    assert_eq!(config(json!({"outage": "90s"})).unwrap().outage_ms, 90_000);
    let over = json!({"outage": MAX_OUTAGE_MS + 1});
    assert_eq!(refused(over), (422, Some("outage".into())));
    let e = parse_json::<SimulateRequest>(br#"{"outage": "soon"}"#).unwrap_err();
    assert_eq!(
        (e.code(), e.field.as_deref()),
        ("invalid_field", Some("outage"))
    );
}

#[test]
fn the_policy_is_checked_as_an_endpoints_and_the_preset_by_name() {
    let bad = json!({"policy": {"base_ms": 0}});
    assert_eq!(refused(bad), (422, Some("policy.base_ms".into())));
    let unknown = json!({"policy": {"retry_forever": true}});
    assert_eq!(refused(unknown), (422, Some("policy.retry_forever".into())));
    assert_eq!(
        refused(json!({"preset": "turbo"})),
        (422, Some("preset".into()))
    );
    let both = json!({"preset": "svix", "policy": {}});
    assert_eq!(refused(both), (422, Some("preset".into())));
    let ladder = config(json!({"preset": "ladder"})).unwrap().policy;
    assert_eq!(Some(ladder), EffectivePolicy::preset("ladder"));
    let e = parse_json::<SimulateRequest>(br#"{"evnts": 5}"#).unwrap_err();
    assert_eq!((e.status().as_u16(), e.code()), (400, "invalid_field"));
}

#[test]
fn a_policy_is_laid_over_the_configured_default() {
    let default = PolicySpec {
        max_attempts: Some(3),
        ..PolicySpec::default()
    };
    let own = request(json!({"policy": {"jitter": "none"}}));
    let policy = own.into_config(&default).unwrap().policy;
    assert_eq!((policy.max_attempts, policy.base_ms()), (3, 1_000));
    let preset = request(json!({"preset": "default"}));
    assert_eq!(
        preset.into_config(&default).unwrap().policy.max_attempts,
        40
    );
}

#[tokio::test]
async fn a_run_over_its_budget_is_refused_within_the_time_budget() {
    // 100 000 deliveries of 100 attempts against an endless outage: 10 M attempts.
    let worst = json!({
        "events": MAX_EVENTS,
        "outage": "7d",
        "policy": {"base_ms": 1, "max_delay_ms": "1s", "max_attempts": 100, "retry_window_ms": "30d"},
    });
    let slots = SimulationSlots::default();
    let started = Instant::now();
    let e = run_bounded(&slots, &Principal::Admin, config(worst).unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        (e.status().as_u16(), e.code()),
        (422, "simulation_too_large")
    );
    assert!(
        e.field.is_none() && e.message.contains("fewer events"),
        "{e:?}"
    );
    let spent = started.elapsed();
    assert!(spent < TIME_BUDGET + Duration::from_secs(1), "{spent:?}");
    let small = config(json!({"events": 10})).unwrap();
    assert_eq!(
        run_bounded(&slots, &Principal::Admin, small)
            .await
            .unwrap()
            .config
            .events,
        10
    );
}

#[tokio::test]
async fn runs_past_the_slots_are_busy_until_one_ends() {
    let slots = SimulationSlots::default();
    let taken: Vec<_> = (0..SIMULATIONS_AT_ONCE)
        .map(|n| slots.try_take(&format!("tenant:{n}")).unwrap())
        .collect();
    let small = || config(json!({"events": 10})).unwrap();
    let e = run_bounded(&slots, &Principal::Admin, small())
        .await
        .unwrap_err();
    assert_eq!((e.status().as_u16(), e.code()), (503, "busy"));
    drop(taken);
    assert!(
        run_bounded(&slots, &Principal::Admin, small())
            .await
            .is_ok()
    );
    let back: Vec<_> = (0..SIMULATIONS_AT_ONCE)
        .map_while(|n| slots.try_take(&format!("tenant:{n}")).ok())
        .collect();
    assert_eq!(back.len(), SIMULATIONS_AT_ONCE, "the slot came back");
}
