//! Tests of the herd simulator: herds and jitter, determinism, the limits, and the
//! work budget of a bounded run.

use super::*;
use crate::policy::EffectivePolicy;
use crate::policy::{PRESET_NAMES, PolicySpec};
use serde_json::{Value, json};

const MINUTE_MS: u64 = 60_000;

fn policy(value: Value) -> EffectivePolicy {
    PolicySpec::from_json(&value).unwrap().resolve().unwrap()
}

fn run(policy: EffectivePolicy, events: usize, outage_ms: u64) -> SimulationReport {
    simulate(&SimulationConfig {
        policy,
        events,
        outage_ms,
        seed: 1,
        attempt_ms: 50,
    })
}

/// Base 60 s, 1000 deliveries, a 10 min outage: waves near 1, 3 and 7 min fail too.
fn herd(jitter: &str) -> SimulationReport {
    run(
        policy(json!({"base_ms": "60s", "jitter": jitter})),
        1_000,
        10 * MINUTE_MS,
    )
}

#[test]
fn herd_without_jitter_hits_in_one_second_and_jitter_spreads_it() {
    let none = herd("none");
    assert_eq!(none.schedule[1].attempts, 1_000);
    assert_eq!(
        none.schedule[1].retried, 1_000,
        "the first retry wave fails too"
    );
    assert_eq!(none.schedule[0].wave_peak_per_second, 1_000);
    assert_eq!((none.peak_per_second, none.peak_second), (1_000, 60));
    for jitter in ["equal", "full"] {
        let spread = herd(jitter);
        assert_eq!(spread.schedule[1].retried, 1_000, "{jitter}");
        let first_wave = spread.schedule[0].wave_peak_per_second;
        assert!(first_wave < 100, "{jitter}: {first_wave} in one second");
        assert!(spread.peak_per_second < 100, "{jitter}");
        assert!(spread.herd_ratio * 5.0 < none.herd_ratio, "{jitter}");
        assert_eq!(spread.delivered, 1_000, "{jitter}");
    }
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let config = SimulationConfig {
        policy: EffectivePolicy::default_preset(),
        events: 300,
        outage_ms: 30 * MINUTE_MS,
        seed: 42,
        attempt_ms: 50,
    };
    assert_eq!(simulate(&config), simulate(&config));
    let other = simulate(&SimulationConfig {
        seed: 43,
        ..config.clone()
    });
    assert_ne!(other.retry_arrivals, simulate(&config).retry_arrivals);
}

#[test]
fn every_delivery_ends_delivered_or_dead_within_max_delay() {
    for name in PRESET_NAMES {
        for outage_ms in [0, 90 * MINUTE_MS, 3 * 24 * 60 * MINUTE_MS, u64::MAX] {
            let preset = EffectivePolicy::preset(name).unwrap();
            let report = run(preset.clone(), 200, outage_ms);
            let dead: usize = report.dead.values().sum();
            assert_eq!(report.delivered + dead, 200, "{name} {outage_ms}");
            let made: usize = report.schedule.iter().map(|row| row.attempts).sum();
            assert_eq!(made, report.total_attempts, "{name}");
            assert!(
                report.schedule.len() <= preset.max_attempts as usize,
                "{name}"
            );
            for delay in report.schedule.iter().filter_map(|row| row.delay) {
                assert!(delay.min_ms <= delay.median_ms && delay.median_ms <= delay.max_ms);
                assert!(delay.max_ms <= preset.max_delay_ms, "{name}");
            }
            let counted: u64 = report.histogram(40).counts.iter().sum();
            assert_eq!(counted, report.retries() as u64, "{name}");
            assert!(report.histogram(40).counts.len() <= 40, "{name}");
        }
    }
}

#[test]
fn dead_reasons_are_the_policy_limits() {
    // Without jitter, default retries hourly once capped: 40 attempts need over 24 h.
    let hourly = run(policy(json!({"jitter": "none"})), 50, u64::MAX);
    assert_eq!(hourly.dead.get("retry_window"), Some(&50));
    assert_eq!(hourly.schedule.len(), 35);
    // Equal jitter averages 45 min at the cap, so the 40 attempts fit in the window.
    let jittered = run(EffectivePolicy::default_preset(), 50, u64::MAX);
    assert_eq!(jittered.dead.get("max_attempts"), Some(&50));
    assert_eq!(jittered.schedule.len(), 40);
    // ladder: 8 attempts take under 4 days of its 5-day window.
    let ladder = run(EffectivePolicy::preset("ladder").unwrap(), 50, u64::MAX);
    assert_eq!(ladder.dead.get("max_attempts"), Some(&50));
    assert_eq!(ladder.schedule.len(), 8);
    let give_up = run(policy(json!({"give_up_on": ["503"]})), 50, u64::MAX);
    assert_eq!(
        (give_up.dead.get("give_up"), give_up.retries()),
        (Some(&50), 0)
    );
}

#[test]
fn a_short_outage_delivers_everything() {
    let report = run(EffectivePolicy::default_preset(), 1_000, 2_000);
    assert_eq!((report.delivered, report.dead.len()), (1_000, 0));
    assert!(report.last_delivery_ms.unwrap() < 10_000);
    let none = run(EffectivePolicy::default_preset(), 10, 0);
    assert_eq!((none.retries(), none.herd_ratio), (0, 0.0));
    assert!(none.histogram(40).counts.is_empty());
}

#[test]
fn buckets_have_round_widths() {
    assert_eq!(bucket_seconds(0), 1);
    assert_eq!(bucket_seconds(17), 30);
    assert_eq!(bucket_seconds(3_601), 7_200);
    assert_eq!(bucket_seconds(100_000), 172_800);
}

/// Prints each preset's schedule without jitter, for docs/policies.md:
/// `cargo test -p hookgate-server --lib preset_schedules -- --ignored --nocapture`.
#[test]
#[ignore = "prints the docs table"]
fn preset_schedules() {
    let human = |ms| humantime::format_duration(std::time::Duration::from_millis(ms));
    for name in PRESET_NAMES {
        let policy = policy(json!({"preset": name, "jitter": "none"}));
        let report = simulate(&SimulationConfig {
            policy,
            events: 1,
            outage_ms: u64::MAX,
            seed: 1,
            attempt_ms: 0,
        });
        println!("\n`{name}`\n\n| after attempt | delay | next attempt at |\n|---|---|---|");
        let mut at = 0;
        for row in &report.schedule {
            let Some(delay) = row.delay else { continue };
            at += delay.min_ms;
            let (n, d, t) = (row.attempt, human(delay.min_ms), human(at));
            println!("| {n} | {d} | {t} |");
        }
        println!(
            "\nThen dead: {:?} after {} attempts.",
            report.dead, report.total_attempts
        );
    }
}

/// 200 deliveries against an endless outage, 40 attempts each: 8000 attempts, more
/// than one clock check apart.
fn endless(budget: &SimulationBudget) -> Result<SimulationReport, BudgetExceeded> {
    let config = SimulationConfig {
        policy: EffectivePolicy::default_preset(),
        events: 200,
        outage_ms: u64::MAX,
        seed: 1,
        attempt_ms: DEFAULT_ATTEMPT_MS,
    };
    simulate_within(&config, budget)
}

#[test]
fn a_bounded_run_stops_at_its_attempt_budget() {
    let exact = SimulationBudget {
        max_attempts: 8_000,
        deadline: None,
    };
    let report = endless(&exact).unwrap();
    assert_eq!(report.total_attempts, 8_000);
    let short = SimulationBudget {
        max_attempts: 7_999,
        ..exact
    };
    assert_eq!(
        endless(&short).unwrap_err(),
        BudgetExceeded::Attempts { limit: 7_999 }
    );
}

#[test]
fn a_bounded_run_stops_at_its_deadline() {
    let past = SimulationBudget {
        max_attempts: usize::MAX,
        deadline: Some(std::time::Instant::now()),
    };
    assert_eq!(endless(&past).unwrap_err(), BudgetExceeded::Time);
    // Fewer attempts than one clock check: done before the clock is read.
    let small = SimulationConfig {
        policy: EffectivePolicy::default_preset(),
        events: 10,
        outage_ms: 0,
        seed: 1,
        attempt_ms: DEFAULT_ATTEMPT_MS,
    };
    assert_eq!(simulate_within(&small, &past).unwrap().delivered, 10);
}
/// The API answers with this JSON, and clients read it back.
#[test]
fn the_report_reads_back_from_its_json() {
    let r = simulate(&SimulationConfig {
        policy: EffectivePolicy::default_preset(),
        events: 3,
        outage_ms: 0,
        seed: 1,
        attempt_ms: 50,
    });
    let back: SimulationReport = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}
