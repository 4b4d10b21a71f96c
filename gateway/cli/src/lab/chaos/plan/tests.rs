//! The unit tests of `plan.rs`.

use super::*;

#[test]
fn parses_weights_with_and_without_weights() {
    let w = parse_statuses("200:70, 503:20,429").unwrap();
    assert_eq!(w.entries(), &[(200, 70), (503, 20), (429, 1)]);
    assert!(parse_statuses("").is_err());
    assert!(parse_statuses("99:1").is_err());
    assert!(parse_statuses("600").is_err());
    assert!(parse_statuses("200:0").is_err());
    assert!(parse_statuses("200:x").is_err());
}

#[test]
fn parses_fixed_and_ranged_latency() {
    assert_eq!(
        parse_latency("50ms").unwrap(),
        Latency::Fixed(Duration::from_millis(50))
    );
    assert_eq!(
        parse_latency("10ms..200ms").unwrap(),
        Latency::Range(Duration::from_millis(10), Duration::from_millis(200))
    );
    assert!(parse_latency("200ms..10ms").is_err());
    assert!(parse_latency("fast").is_err());
}

#[test]
fn rates_stay_within_zero_and_one() {
    assert_eq!(parse_rate("0.25").unwrap(), 0.25);
    assert!(parse_rate("1.5").is_err());
    assert!(parse_rate("-0.1").is_err());
}

#[test]
fn the_same_seed_gives_the_same_faults() {
    let plan = FaultPlan {
        statuses: parse_statuses("200:70,503:20,429:10").unwrap(),
        latency: parse_latency("1ms..9ms").unwrap(),
        hang_rate: 0.05,
        reset_rate: 0.05,
        seed: 7,
        ..FaultPlan::default()
    };
    let a: Vec<_> = (1..=200).map(|n| plan.fault(n)).collect();
    let b: Vec<_> = (1..=200).map(|n| plan.fault(n)).collect();
    assert_eq!(a, b);
    let other = FaultPlan {
        seed: 8,
        ..plan.clone()
    };
    assert_ne!(a, (1..=200).map(|n| other.fault(n)).collect::<Vec<_>>());
}

#[test]
fn weights_shape_the_mix() {
    let plan = FaultPlan {
        statuses: parse_statuses("200:70,503:30").unwrap(),
        ..FaultPlan::default()
    };
    let ok = (1..=10_000)
        .filter(|&n| matches!(plan.fault(n), Fault::Respond { status: 200, .. }))
        .count();
    assert!((6_500..7_500).contains(&ok), "{ok}");
}

#[test]
fn fail_first_comes_before_everything() {
    let plan = FaultPlan {
        reset_rate: 1.0,
        fail_first: 3,
        ..FaultPlan::default()
    };
    for n in 1..=3 {
        assert!(matches!(plan.fault(n), Fault::Respond { status: 503, .. }));
    }
    assert!(matches!(plan.fault(4), Fault::Reset { .. }));
}

#[test]
fn retry_after_goes_with_429_and_503_only() {
    let plan = FaultPlan {
        retry_after_s: Some(2),
        ..FaultPlan::default()
    };
    assert_eq!(plan.retry_after(429), Some(2));
    assert_eq!(plan.retry_after(503), Some(2));
    assert_eq!(plan.retry_after(500), None);
}
