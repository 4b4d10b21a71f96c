//! Property tests of the built-in backoff and limits, for every strategy ×
//! jitter × attempt. Policies are built through the public policy object,
//! `PolicySpec::from_json`, exactly as the endpoint API and the config receive them;
//! the extreme-value tests also build them directly, bounds ignored.

use hookgate_server::MAX_RFC3339_MS;
use hookgate_server::{
    AttemptFacts, BuiltinPolicy, DeadReason, EffectivePolicy, FailureKind, Jitter, MAX_DURATION_MS,
    NextStep, Outcome, PolicySpec, RetryDecider, Strategy as PolicyStrategy, backoff_delay,
    builtin_delay_ms, strategy_delay_ms,
};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::{Map, Value, json};

const SECOND: u64 = 1_000;
const HOUR: u64 = 3_600 * SECOND;
const DAY: u64 = 24 * HOUR;

/// A strategy with its parameters, as policy-object fields.
fn strategy_fields() -> impl Strategy<Value = Value> {
    prop_oneof![
        (1..=10 * 60 * SECOND, 1.0..4.0_f64).prop_map(
            |(base, factor)| json!({"strategy": "exponential", "base_ms": base, "factor": factor})
        ),
        (1..=HOUR, 0..=HOUR).prop_map(
            |(base, step)| json!({"strategy": "linear", "base_ms": base, "step_ms": step})
        ),
        (1..=HOUR).prop_map(|base| json!({"strategy": "fixed", "base_ms": base})),
        prop::collection::vec(1..=DAY, 1..8)
            .prop_map(|steps| json!({"strategy": "schedule", "schedule_ms": steps})),
    ]
}

/// A jitter, with a ratio when proportional.
fn jitter_fields() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"jitter": "none"})),
        Just(json!({"jitter": "full"})),
        Just(json!({"jitter": "equal"})),
        Just(json!({"jitter": "decorrelated"})),
        proportional(),
    ]
}

fn proportional() -> impl Strategy<Value = Value> {
    (0.01..=1.0_f64).prop_map(|ratio| json!({"jitter": "proportional", "jitter_ratio": ratio}))
}

/// A valid policy object of any strategy with the given jitter; the cap may sit below
/// the base.
fn policy_with(jitter: impl Strategy<Value = Value>) -> impl Strategy<Value = EffectivePolicy> {
    // Short windows too, so that retries land right at the window's end.
    let extra_window = prop_oneof![0..=60 * SECOND, 0..=10 * DAY];
    let limits = (1..=7 * DAY, 1..=100_u32, extra_window);
    (strategy_fields(), jitter, limits).prop_map(
        |(strategy, jitter, (max_delay, max_attempts, extra_window))| {
            let mut object = Map::new();
            for fields in [strategy, jitter] {
                object.extend(fields.as_object().cloned().unwrap_or_default());
            }
            let base = (object.get("base_ms").and_then(Value::as_u64))
                .or_else(|| {
                    object
                        .get("schedule_ms")
                        .and_then(|steps| steps[0].as_u64())
                })
                .unwrap_or(1);
            object.insert("max_delay_ms".into(), json!(max_delay));
            object.insert("max_attempts".into(), json!(max_attempts));
            object.insert("retry_window_ms".into(), json!(base + extra_window));
            let spec = PolicySpec::from_json(&Value::Object(object)).expect("a valid policy");
            spec.resolve().expect("resolves")
        },
    )
}

fn any_policy() -> impl Strategy<Value = EffectivePolicy> {
    policy_with(jitter_fields())
}

fn draw(policy: &EffectivePolicy, attempt: u32, prev: Option<u64>, seed: u64) -> u64 {
    backoff_delay(policy, attempt, prev, &mut StdRng::seed_from_u64(seed))
}

/// The capped strategy delay d, before jitter.
fn capped(policy: &EffectivePolicy, attempt: u32) -> u64 {
    strategy_delay_ms(&policy.strategy, policy.max_delay_ms, attempt)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_delay_stays_within_zero_and_max_delay(
        policy in any_policy(), seed: u64, prev in prop::option::of(0..=30 * DAY),
    ) {
        for attempt in 1..=110 {
            let delay = draw(&policy, attempt, prev, seed ^ u64::from(attempt));
            prop_assert!(delay <= policy.max_delay_ms, "attempt {attempt}: {delay}");
            match policy.jitter {
                Jitter::None => prop_assert_eq!(delay, capped(&policy, attempt)),
                Jitter::Full => prop_assert!(delay <= capped(&policy, attempt)),
                _ => {}
            }
        }
    }

    #[test]
    fn equal_jitter_never_goes_below_half(
        policy in policy_with(Just(json!({"jitter": "equal"}))), seed: u64,
    ) {
        for attempt in 1..=110 {
            let (d, delay) = (capped(&policy, attempt), draw(&policy, attempt, None, seed));
            prop_assert!((d / 2..=d).contains(&delay), "attempt {attempt}: {delay} of {d}");
        }
    }

    #[test]
    fn decorrelated_grows_from_base_to_three_prev(
        policy in policy_with(Just(json!({"jitter": "decorrelated"}))), seed: u64,
    ) {
        let (base, cap) = (policy.base_ms(), policy.max_delay_ms);
        let mut prev = None;
        for attempt in 1..=110 {
            let delay = draw(&policy, attempt, prev, seed ^ u64::from(attempt));
            let high = cap.min(prev.unwrap_or(base).saturating_mul(3));
            if base <= cap {
                prop_assert!((base..=high).contains(&delay), "attempt {attempt}: {delay}");
            } else {
                // A cap below the base wins: every delay is the cap.
                prop_assert_eq!(delay, cap);
            }
            prev = Some(delay);
        }
    }

    #[test]
    fn proportional_stays_in_its_band_capped(policy in policy_with(proportional()), seed: u64) {
        let ratio = policy.jitter.ratio().expect("proportional");
        for attempt in 1..=110 {
            let d = capped(&policy, attempt) as f64;
            let delay = draw(&policy, attempt, None, seed ^ u64::from(attempt));
            let low = (d * (1.0 - ratio)).floor().min(policy.max_delay_ms as f64);
            let high = (d * (1.0 + ratio)).ceil().min(policy.max_delay_ms as f64);
            prop_assert!((low..=high).contains(&(delay as f64)), "{delay} not in [{low}, {high}]");
        }
    }

    #[test]
    fn schedules_are_followed_and_the_last_step_repeats(
        steps in prop::collection::vec(1..=DAY, 1..8), max_delay in 1..=2 * DAY, seed: u64,
    ) {
        let spec = json!({
            "strategy": "schedule", "schedule_ms": steps, "jitter": "none",
            "max_delay_ms": max_delay, "retry_window_ms": "30d",
        });
        let policy = PolicySpec::from_json(&spec).unwrap().resolve().unwrap();
        for attempt in 1..=20_u32 {
            let step = steps[(attempt as usize - 1).min(steps.len() - 1)];
            prop_assert_eq!(draw(&policy, attempt, None, seed), step.min(max_delay));
        }
    }

    #[test]
    fn limits_hold_for_a_receiver_that_never_recovers(
        policy in any_policy(),
        seed: u64,
        attempt_ms in 0..=30 * SECOND,
        retry_after in prop::option::of(0..=7_200_u64),
    ) {
        let (outcome, header) = (Outcome::Status(503), retry_after.map(|s| s.to_string()));
        let (mut now, mut prev, mut attempt) = (0_u64, None, 1_u32);
        let reason = loop {
            now += attempt_ms;
            let facts = AttemptFacts {
                outcome: &outcome,
                attempt,
                first_attempt_at_ms: 0,
                now_ms: now,
                retry_after: header.as_deref(),
                date: None,
                prev_delay_ms: prev,
                seed: seed ^ u64::from(attempt),
            };
            let delay_ms = builtin_delay_ms(&policy, &facts);
            let fits = now + delay_ms <= policy.retry_window_ms;
            match BuiltinPolicy.decide(&policy, &facts).next {
                NextStep::RetryAt { delay_ms: chosen } => {
                    prop_assert!(attempt < policy.max_attempts, "a retry after the last attempt");
                    prop_assert!(fits, "{delay_ms} ms after {now} ms is past the window");
                    prop_assert!(chosen == delay_ms && delay_ms <= policy.max_delay_ms);
                    (now, prev, attempt) = (now + delay_ms, Some(delay_ms), attempt + 1);
                }
                NextStep::Dead(reason @ DeadReason::RetryWindow) => {
                    prop_assert!(!fits, "dead, yet {delay_ms} ms after {now} ms fits");
                    break reason;
                }
                NextStep::Dead(reason) => break reason,
                NextStep::Done => prop_assert!(false, "a 503 is never delivered"),
                NextStep::Skipped => prop_assert!(false, "only a transform skips"),
            }
        };
        prop_assert!(attempt <= policy.max_attempts);
        match reason {
            DeadReason::MaxAttempts => prop_assert_eq!(attempt, policy.max_attempts),
            DeadReason::RetryWindow => prop_assert!(attempt < policy.max_attempts),
            other => prop_assert!(false, "unexpected dead reason {other}"),
        }
    }
}

/// Any millisecond value, weighted to the edges where arithmetic overflows.
fn extreme_ms() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0),
        Just(1),
        Just(MAX_DURATION_MS),
        Just(u64::MAX - 1),
        Just(u64::MAX),
        any::<u64>(),
        (u64::MAX / 4)..=u64::MAX,
    ]
}

/// An attempt number, weighted to the edges.
fn extreme_attempt() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0), Just(1), Just(64), Just(u32::MAX), any::<u32>()]
}

/// A policy with any values at all, bounds ignored: what the arithmetic must survive
/// even if a policy escaped validation.
fn extreme_policy() -> impl Strategy<Value = EffectivePolicy> {
    let factor = prop_oneof![Just(1.0), Just(2.0), Just(f64::MAX), 1.0..1e300_f64];
    let strategy = prop_oneof![
        (extreme_ms(), factor)
            .prop_map(|(base_ms, factor)| PolicyStrategy::Exponential { base_ms, factor }),
        (extreme_ms(), extreme_ms())
            .prop_map(|(base_ms, step_ms)| PolicyStrategy::Linear { base_ms, step_ms }),
        extreme_ms().prop_map(|base_ms| PolicyStrategy::Fixed { base_ms }),
        prop::collection::vec(extreme_ms(), 0..4)
            .prop_map(|schedule_ms| PolicyStrategy::Schedule { schedule_ms }),
    ];
    let jitter = prop_oneof![
        Just(Jitter::None),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        (0.01..=1.0_f64).prop_map(|ratio| Jitter::Proportional { ratio }),
    ];
    (strategy, jitter, extreme_ms(), extreme_ms(), 1..=100_u32).prop_map(
        |(strategy, jitter, max_delay_ms, retry_window_ms, max_attempts)| EffectivePolicy {
            strategy,
            jitter,
            max_delay_ms,
            retry_window_ms,
            max_attempts,
            ..EffectivePolicy::default_preset()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn durations_have_an_upper_bound_and_backoff_survives_extreme_values(
        policy in extreme_policy(),
        attempt in extreme_attempt(),
        prev in prop::option::of(extreme_ms()),
        (first, now) in (extreme_ms(), extreme_ms()),
        seed: u64,
    ) {
        let delay = draw(&policy, attempt, prev, seed);
        prop_assert!(delay <= policy.max_delay_ms, "{delay} over the cap");
        let outcome = Outcome::Status(503);
        let facts = AttemptFacts {
            outcome: &outcome,
            attempt,
            first_attempt_at_ms: first.min(now),
            now_ms: now,
            retry_after: Some("18446744073709551615"),
            date: None,
            prev_delay_ms: prev,
            seed,
        };
        if let NextStep::RetryAt { delay_ms } = BuiltinPolicy.decide(&policy, &facts).next {
            prop_assert!(delay_ms <= policy.max_delay_ms, "{delay_ms} over the cap");
        }
    }

    #[test]
    fn durations_have_an_upper_bound_so_due_times_never_overflow(
        durations in prop::collection::vec(extreme_ms().prop_map(|ms| ms.max(1)), 3),
        jitter in jitter_fields(),
        attempt in extreme_attempt(),
        prev in prop::option::of(extreme_ms()),
        now in 0..=MAX_RFC3339_MS,
        seed: u64,
    ) {
        let mut object = jitter.as_object().cloned().unwrap_or_default();
        object.insert("base_ms".into(), json!(durations[0]));
        object.insert("max_delay_ms".into(), json!(durations[1]));
        object.insert("retry_window_ms".into(), json!(durations[2].max(durations[0])));
        let Ok(spec) = PolicySpec::from_json(&Value::Object(object)) else {
            // Refused: some duration is over the bound.
            prop_assert!(durations.iter().any(|ms| *ms > MAX_DURATION_MS));
            return Ok(());
        };
        let policy = spec.resolve().expect("resolves");
        let outcome = Outcome::Failure(FailureKind::Timeout);
        let facts = AttemptFacts {
            outcome: &outcome,
            attempt: attempt.clamp(1, policy.max_attempts - 1),
            first_attempt_at_ms: now,
            now_ms: now,
            retry_after: None,
            date: None,
            prev_delay_ms: prev,
            seed,
        };
        if let NextStep::RetryAt { delay_ms } = BuiltinPolicy.decide(&policy, &facts).next {
            // The worker's `ended + delay_ms` fits in u64 for any time up to year 9999.
            let due = now.checked_add(delay_ms);
            prop_assert!(due.is_some(), "{now} + {delay_ms} overflows");
            prop_assert!(delay_ms <= MAX_DURATION_MS, "{delay_ms}");
        }
    }
}
