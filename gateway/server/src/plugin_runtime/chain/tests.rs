//! The decision chain's rules, without wasm.

use super::*;
use crate::policy::{DeadReason, Jitter, NextStep, Outcome, Strategy};

const START_MS: u64 = 1_614_297_600_000;
const LABEL: &str = "plugin:p@3";

fn policy() -> EffectivePolicy {
    EffectivePolicy {
        strategy: Strategy::Fixed { base_ms: 2_000 },
        jitter: Jitter::None,
        max_delay_ms: 60_000,
        max_attempts: 5,
        ..EffectivePolicy::default_preset()
    }
}

fn facts(outcome: &Outcome) -> AttemptFacts<'_> {
    AttemptFacts {
        outcome,
        attempt: 1,
        first_attempt_at_ms: START_MS,
        now_ms: START_MS + 100,
        retry_after: None,
        date: None,
        prev_delay_ms: None,
        seed: 42,
    }
}

fn answer(verdict: WitVerdict, delay: Option<Delay>) -> PluginAnswer {
    PluginAnswer { verdict, delay }
}

fn decide(outcome: &Outcome, a: &PluginAnswer) -> Decision {
    let (p, f) = (policy(), facts(outcome));
    plugin_decision(&p, &f, &BuiltinView::of(&p, &f), a, LABEL)
}

#[test]
fn next_delay_only_when_the_final_verdict_is_retry() {
    assert!(wants_delay(&WitVerdict::Retry, false));
    assert!(wants_delay(&WitVerdict::UseDefault, true));
    assert!(!wants_delay(&WitVerdict::UseDefault, false));
    assert!(!wants_delay(&WitVerdict::GiveUp("x".into()), true));
    assert!(!wants_delay(&WitVerdict::Delivered, true));
}

#[test]
fn use_default_twice_is_the_builtin() {
    let outcome = Outcome::Status(503);
    let d = decide(
        &outcome,
        &answer(WitVerdict::UseDefault, Some(Delay::UseDefault)),
    );
    assert_eq!(d.decided_by, "builtin");
    assert_eq!(d.verdict, Verdict::Retry);
    assert_eq!(d.next, NextStep::RetryAt { delay_ms: 2_000 });
}

#[test]
fn a_plugin_can_retry_what_the_builtin_gives_up() {
    let outcome = Outcome::Status(400);
    let d = decide(
        &outcome,
        &answer(WitVerdict::Retry, Some(Delay::UseDefault)),
    );
    assert_eq!(d.decided_by, LABEL);
    assert_eq!(d.next, NextStep::RetryAt { delay_ms: 2_000 });
    let d = decide(
        &outcome,
        &answer(WitVerdict::Retry, Some(Delay::AfterMs(5_000))),
    );
    assert_eq!(d.next, NextStep::RetryAt { delay_ms: 5_000 });
}

#[test]
fn plugin_delays_are_clamped_without_jitter() {
    let outcome = Outcome::Status(500);
    let at = |ms| {
        decide(
            &outcome,
            &answer(WitVerdict::UseDefault, Some(Delay::AfterMs(ms))),
        )
        .next
    };
    assert_eq!(at(0), NextStep::RetryAt { delay_ms: 1_000 });
    assert_eq!(at(999), NextStep::RetryAt { delay_ms: 1_000 });
    assert_eq!(at(1_234), NextStep::RetryAt { delay_ms: 1_234 });
    assert_eq!(at(u64::MAX), NextStep::RetryAt { delay_ms: 60_000 });
}

#[test]
fn retry_after_floors_a_plugin_delay_when_honoured() {
    let outcome = Outcome::Status(429);
    let (p, mut f) = (policy(), facts(&outcome));
    f.retry_after = Some("30");
    assert_eq!(plugin_delay_ms(&p, &f, 1_000), 30_000);
    assert_eq!(plugin_delay_ms(&p, &f, 45_000), 45_000);
    f.retry_after = Some("3600");
    assert_eq!(
        plugin_delay_ms(&p, &f, 1_000),
        60_000,
        "floor capped at max_delay"
    );
    let ignoring = EffectivePolicy {
        honor_retry_after: false,
        ..policy()
    };
    assert_eq!(plugin_delay_ms(&ignoring, &f, 1_000), 1_000);
}

#[test]
fn reasons_are_cut_to_256_bytes_on_a_char_boundary() {
    assert_eq!(cut_reason("short"), "short");
    assert_eq!(cut_reason(&"a".repeat(300)).len(), 256);
    let multibyte = "é".repeat(200); // 400 bytes
    let cut = cut_reason(&multibyte);
    assert_eq!(cut.len(), 256);
    assert!(cut.chars().all(|c| c == 'é'));
    let d = decide(
        &Outcome::Status(500),
        &answer(WitVerdict::GiveUp("x".repeat(1_000)), None),
    );
    assert_eq!(d.next, NextStep::Dead(DeadReason::GiveUp));
    assert!(matches!(d.verdict, Verdict::GiveUp { reason } if reason.len() == 256));
}

#[test]
fn next_delay_can_still_give_up() {
    let d = decide(
        &Outcome::Status(500),
        &answer(WitVerdict::UseDefault, Some(Delay::GiveUp("enough".into()))),
    );
    assert_eq!(d.decided_by, LABEL);
    assert_eq!(
        d.verdict,
        Verdict::GiveUp {
            reason: "enough".into()
        }
    );
    assert_eq!(d.next, NextStep::Dead(DeadReason::GiveUp));
}

#[test]
fn limits_always_win() {
    let outcome = Outcome::Status(500);
    let p = policy();
    let last = AttemptFacts {
        attempt: 5,
        ..facts(&outcome)
    };
    let a = answer(WitVerdict::Retry, Some(Delay::AfterMs(1_000)));
    let d = plugin_decision(&p, &last, &BuiltinView::of(&p, &last), &a, LABEL);
    assert_eq!(d.next, NextStep::Dead(DeadReason::MaxAttempts));
    let late = AttemptFacts {
        now_ms: START_MS + p.retry_window_ms - 500,
        ..facts(&outcome)
    };
    let d = plugin_decision(&p, &late, &BuiltinView::of(&p, &late), &a, LABEL);
    assert_eq!(d.next, NextStep::Dead(DeadReason::RetryWindow));
}

#[test]
fn fallback_is_the_builtin_with_its_reason() {
    let outcome = Outcome::Status(503);
    let (p, f) = (policy(), facts(&outcome));
    let d = fallback_decision(&p, &f, CallFailure::OutOfFuel.reason());
    assert_eq!(d.decided_by, "fallback:out_of_fuel");
    assert_eq!(
        (d.verdict, d.next),
        (Verdict::Retry, NextStep::RetryAt { delay_ms: 2_000 })
    );
}

#[test]
fn only_the_plugins_own_failures_count() {
    assert!(CallFailure::Trap("unreachable".into()).counts());
    assert!(CallFailure::OutOfFuel.counts());
    assert!(CallFailure::MemoryLimit.counts());
    assert!(CallFailure::InvalidOutput("bad discriminant".into()).counts());
    assert!(!CallFailure::EpochDeadline.counts());
    assert!(CallFailure::Spinning { cpu_ms: 45 }.counts());
    assert!(!CallFailure::PoolFull.counts());
    assert!(!CallFailure::Instantiate("no slot".into()).counts());
}

#[test]
fn an_epoch_deadline_counts_only_when_its_thread_spent_it_on_the_cpu() {
    use crate::plugin_runtime::SPINNING_CPU;
    use std::time::Duration;
    // Above what the whole fuel budget buys, below the shortest deadline (40 ms).
    assert!(SPINNING_CPU > Duration::from_millis(22) && SPINNING_CPU < Duration::from_millis(40));
    // Starved: the thread waited for a core much of the 40–50 ms, or a plugin
    // that stays within its fuel was slow on a busy machine.
    for starved in [
        Duration::ZERO,
        Duration::from_millis(2),
        Duration::from_millis(22),
        SPINNING_CPU - Duration::from_nanos(1),
    ] {
        assert_eq!(
            CallFailure::epoch_deadline(starved, SPINNING_CPU),
            CallFailure::EpochDeadline
        );
    }
    // Spinning: on the CPU for most of the deadline.
    for (cpu, ms) in [
        (SPINNING_CPU, 30),
        (Duration::from_micros(41_700), 41),
        (Duration::from_millis(49), 49),
    ] {
        let failure = CallFailure::epoch_deadline(cpu, SPINNING_CPU);
        assert_eq!(failure, CallFailure::Spinning { cpu_ms: ms });
        assert!(failure.counts());
        assert_eq!(
            failure.reason(),
            "epoch_deadline",
            "the same deadline in the log"
        );
        assert!(
            failure.to_string().contains(&format!("{ms} ms of CPU")),
            "{failure}"
        );
    }
    // The threshold is the caller's: tests lower it.
    let low = Duration::from_millis(5);
    assert_eq!(
        CallFailure::epoch_deadline(Duration::from_millis(6), low),
        CallFailure::Spinning { cpu_ms: 6 }
    );
}
