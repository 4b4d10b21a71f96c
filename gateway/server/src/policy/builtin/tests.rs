//! The unit tests of `builtin.rs`.

use super::*;
use crate::policy::{FailureKind, Jitter, Strategy};

const START_MS: u64 = 1_614_297_600_000;
const HOUR: u64 = 3_600_000;

/// Fixed 1 s, no jitter, so delays are exact.
fn exact_policy() -> EffectivePolicy {
    EffectivePolicy {
        strategy: Strategy::Fixed { base_ms: 1_000 },
        jitter: Jitter::None,
        ..EffectivePolicy::default_preset()
    }
}

fn facts(outcome: &Outcome) -> AttemptFacts<'_> {
    AttemptFacts {
        outcome,
        attempt: 1,
        first_attempt_at_ms: START_MS,
        now_ms: START_MS + 500,
        retry_after: None,
        date: None,
        prev_delay_ms: None,
        seed: 7,
    }
}

fn decide(policy: &EffectivePolicy, facts: &AttemptFacts<'_>) -> Decision {
    BuiltinPolicy.decide(policy, facts)
}

#[test]
fn delivered_given_up_and_disabled() {
    let policy = exact_policy();
    let delivered = decide(&policy, &facts(&Outcome::Status(200)));
    assert_eq!(
        (delivered.verdict, delivered.next),
        (Verdict::Delivered, NextStep::Done)
    );
    assert_eq!(delivered.decided_by, "builtin");
    let not_found = decide(&policy, &facts(&Outcome::Status(404)));
    assert_eq!(not_found.next, NextStep::Dead(DeadReason::GiveUp));
    let gone = decide(&policy, &facts(&Outcome::Status(410)));
    assert_eq!(gone.verdict, Verdict::DisableEndpoint);
    assert_eq!(gone.next, NextStep::Dead(DeadReason::EndpointDisabled));
    let timeout = decide(&policy, &facts(&Outcome::Failure(FailureKind::Timeout)));
    assert_eq!(timeout.next, NextStep::RetryAt { delay_ms: 1_000 });
}

#[test]
fn retry_after_seconds_is_a_floor() {
    let policy = exact_policy();
    let outcome = Outcome::Status(429);
    let two_seconds = AttemptFacts {
        retry_after: Some("2"),
        ..facts(&outcome)
    };
    assert_eq!(
        decide(&policy, &two_seconds).next,
        NextStep::RetryAt { delay_ms: 2_000 }
    );
    let long = AttemptFacts {
        retry_after: Some("120"),
        ..facts(&outcome)
    };
    assert_eq!(
        decide(&policy, &long).next,
        NextStep::RetryAt { delay_ms: 120_000 }
    );
    let capped = EffectivePolicy {
        max_delay_ms: 60_000,
        ..exact_policy()
    };
    assert_eq!(
        decide(&capped, &long).next,
        NextStep::RetryAt { delay_ms: 60_000 }
    );
    let huge = AttemptFacts {
        retry_after: Some("99999999999999999999999"),
        ..facts(&outcome)
    };
    assert_eq!(
        decide(&policy, &huge).next,
        NextStep::RetryAt { delay_ms: HOUR }
    );
    // A longer backoff is not shortened by a small Retry-After.
    let slow = EffectivePolicy {
        strategy: Strategy::Fixed { base_ms: 10_000 },
        ..exact_policy()
    };
    assert_eq!(
        decide(&slow, &two_seconds).next,
        NextStep::RetryAt { delay_ms: 10_000 }
    );
}

#[test]
fn retry_after_only_on_429_and_503_and_when_honoured() {
    let policy = exact_policy();
    let unavailable = Outcome::Status(503);
    let on_503 = AttemptFacts {
        retry_after: Some("30"),
        ..facts(&unavailable)
    };
    assert_eq!(
        decide(&policy, &on_503).next,
        NextStep::RetryAt { delay_ms: 30_000 }
    );
    let bad_gateway = Outcome::Status(502);
    let on_502 = AttemptFacts {
        retry_after: Some("30"),
        ..facts(&bad_gateway)
    };
    assert_eq!(
        decide(&policy, &on_502).next,
        NextStep::RetryAt { delay_ms: 1_000 }
    );
    let ignoring = EffectivePolicy {
        honor_retry_after: false,
        ..exact_policy()
    };
    assert_eq!(
        decide(&ignoring, &on_503).next,
        NextStep::RetryAt { delay_ms: 1_000 }
    );
}

#[test]
fn retry_after_http_date_uses_the_date_header() {
    let policy = exact_policy();
    let outcome = Outcome::Status(503);
    let with_date = AttemptFacts {
        retry_after: Some("Fri, 26 Feb 2021 00:00:45 GMT"),
        date: Some("Fri, 26 Feb 2021 00:00:15 GMT"),
        ..facts(&outcome)
    };
    assert_eq!(
        decide(&policy, &with_date).next,
        NextStep::RetryAt { delay_ms: 30_000 }
    );
    let past = AttemptFacts {
        retry_after: Some("Thu, 25 Feb 2021 23:00:00 GMT"),
        ..facts(&outcome)
    };
    assert_eq!(
        decide(&policy, &past).next,
        NextStep::RetryAt { delay_ms: 1_000 }
    );
    let garbage = AttemptFacts {
        retry_after: Some("later please"),
        ..facts(&outcome)
    };
    assert_eq!(
        decide(&policy, &garbage).next,
        NextStep::RetryAt { delay_ms: 1_000 }
    );
}

#[test]
fn max_attempts_makes_the_delivery_dead() {
    let policy = EffectivePolicy {
        max_attempts: 3,
        ..exact_policy()
    };
    let outcome = Outcome::Status(500);
    let second = AttemptFacts {
        attempt: 2,
        ..facts(&outcome)
    };
    assert_eq!(
        decide(&policy, &second).next,
        NextStep::RetryAt { delay_ms: 1_000 }
    );
    let third = AttemptFacts {
        attempt: 3,
        ..facts(&outcome)
    };
    let decision = decide(&policy, &third);
    assert_eq!(decision.verdict, Verdict::Retry);
    assert_eq!(decision.next, NextStep::Dead(DeadReason::MaxAttempts));
}

#[test]
fn retry_window_makes_the_delivery_dead() {
    let policy = EffectivePolicy {
        retry_window_ms: 10_000,
        ..exact_policy()
    };
    let outcome = Outcome::Failure(FailureKind::Connect);
    let inside = AttemptFacts {
        now_ms: START_MS + 9_000,
        ..facts(&outcome)
    };
    assert_eq!(
        decide(&policy, &inside).next,
        NextStep::RetryAt { delay_ms: 1_000 }
    );
    let outside = AttemptFacts {
        now_ms: START_MS + 9_001,
        ..facts(&outcome)
    };
    assert_eq!(
        decide(&policy, &outside).next,
        NextStep::Dead(DeadReason::RetryWindow)
    );
}

#[test]
fn decisions_are_deterministic_per_seed() {
    let policy = EffectivePolicy::default_preset();
    let outcome = Outcome::Status(503);
    let sixth = AttemptFacts {
        attempt: 6,
        ..facts(&outcome)
    };
    assert_eq!(decide(&policy, &sixth), decide(&policy, &sixth));
    assert_eq!(
        builtin_delay_ms(&policy, &sixth),
        builtin_delay_ms(&policy, &sixth)
    );
    let delay = builtin_delay_ms(&policy, &sixth);
    assert!((16_000..=32_000).contains(&delay), "{delay}");
    // Even a give-up has a built-in delay, for the plugin host.
    let not_found = Outcome::Status(404);
    assert!(builtin_delay_ms(&policy, &facts(&not_found)) >= 500);
}
