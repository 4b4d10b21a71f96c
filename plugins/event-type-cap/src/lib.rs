//! `event-type-cap`: a cap on attempts per event type, for tenants whose events
//! are not all worth the same effort. Analytics can be dropped early;
//! notifications go stale within the hour; billing is left to the endpoint's
//! own (long) policy.
//!
//! | event types | at most | also |
//! |---|---|---|
//! | `analytics.*` | 2 attempts | |
//! | `notification.*` | 4 attempts | never waits more than 5 minutes |
//! | anything else | the endpoint's `max_attempts` | |
//!
//! Verdicts other than the cap are the built-in's.

use hookgate_plugin_sdk::{Attempt, Delay, RetryPolicy, Verdict, export_policy};

/// One rule: event types starting with `prefix` get at most `max_attempts`, and
/// waits of at most `max_delay_ms` when set.
#[derive(Debug, Clone, Copy)]
pub struct Cap {
    /// An event-type prefix, such as `analytics.`.
    pub prefix: &'static str,
    /// Attempts allowed, the first included.
    pub max_attempts: u32,
    /// The longest wait between attempts.
    pub max_delay_ms: Option<u64>,
}

/// The rules, first match wins.
pub const CAPS: [Cap; 2] = [
    Cap {
        prefix: "analytics.",
        max_attempts: 2,
        max_delay_ms: None,
    },
    Cap {
        prefix: "notification.",
        max_attempts: 4,
        max_delay_ms: Some(5 * 60 * 1_000),
    },
];

fn cap_of(event_type: &str) -> Option<&'static Cap> {
    CAPS.iter().find(|c| event_type.starts_with(c.prefix))
}

/// The policy.
#[derive(Debug, Default)]
pub struct EventTypeCap;

impl RetryPolicy for EventTypeCap {
    fn classify(&self, a: &Attempt) -> Verdict {
        match cap_of(&a.event_type) {
            Some(cap) if a.attempt >= cap.max_attempts && a.builtin_verdict == Verdict::Retry => {
                Verdict::GiveUp(format!(
                    "{}* events are tried at most {} times",
                    cap.prefix, cap.max_attempts
                ))
            }
            _ => Verdict::UseDefault,
        }
    }

    fn next_delay(&self, a: &Attempt) -> Delay {
        match cap_of(&a.event_type).and_then(|c| c.max_delay_ms) {
            Some(max) if a.builtin_delay_ms > max => Delay::AfterMs(max),
            _ => Delay::UseDefault,
        }
    }
}

export_policy!(EventTypeCap);

#[cfg(test)]
mod tests {
    use super::*;
    use hookgate_plugin_sdk::decide;

    fn attempt(event_type: &str, n: u32, builtin_delay_ms: u64) -> Attempt {
        Attempt::builder()
            .status(503)
            .event_type(event_type)
            .attempt(n)
            .builtin(Verdict::Retry, builtin_delay_ms)
            .build()
    }

    #[test]
    fn analytics_gives_up_after_two_attempts() {
        let d = decide(&EventTypeCap, &attempt("analytics.page_view", 1, 1_000));
        assert_eq!(
            (d.verdict, d.delay),
            (Verdict::UseDefault, Some(Delay::UseDefault))
        );
        let d = decide(&EventTypeCap, &attempt("analytics.page_view", 2, 1_000));
        assert_eq!(
            d.verdict,
            Verdict::GiveUp("analytics.* events are tried at most 2 times".into())
        );
    }

    #[test]
    fn notifications_wait_at_most_five_minutes() {
        let d = decide(&EventTypeCap, &attempt("notification.email", 2, 3_600_000));
        assert_eq!(d.delay, Some(Delay::AfterMs(300_000)));
        let d = decide(&EventTypeCap, &attempt("notification.email", 2, 60_000));
        assert_eq!(d.delay, Some(Delay::UseDefault));
        let d = decide(&EventTypeCap, &attempt("notification.email", 4, 60_000));
        assert!(matches!(d.verdict, Verdict::GiveUp(_)));
    }

    #[test]
    fn other_events_and_builtin_give_ups_are_untouched() {
        let d = decide(&EventTypeCap, &attempt("invoice.paid", 30, 3_600_000));
        assert_eq!(
            (d.verdict, d.delay),
            (Verdict::UseDefault, Some(Delay::UseDefault))
        );
        let gone = Attempt::builder()
            .status(404)
            .event_type("analytics.x")
            .attempt(5)
            .build();
        assert_eq!(decide(&EventTypeCap, &gone).verdict, Verdict::UseDefault);
    }
}
