//! `broker-aware`: a policy for broker destinations, built on what
//! `hookgate:policy@0.3.0` tells a plugin beyond 0.2.0: the failure kinds only
//! brokers report, the kind of destination, and the broker's error text.
//!
//! | attempt | decision |
//! |---|---|
//! | `auth_refused` from RabbitMQ, attempts 1 to 3 | retry after 30 s: rotated credentials take a while to reach every node, so it gets one attempt more than the built-in's default (which gives up from the third) |
//! | `too_large`, any destination | give up, the reason naming the destination and the broker's own words |
//! | anything else (a timeout at RabbitMQ, a refusal by NATS, any HTTP status) | the built-in decides |
//!
//! The gateway asks only 0.3.0 plugins about the brokers' kinds; a plugin built
//! against an older contract leaves them to the built-in.

use hookgate_plugin_sdk::{
    Attempt, Delay, DestinationKind, FailureKind, RetryPolicy, Verdict, export_policy,
};

/// The last attempt after which a RabbitMQ auth refusal is still retried: one
/// more than the built-in's default, which gives up from the third.
pub const AUTH_REFUSED_ATTEMPTS: u32 = 3;

/// How long to give rotated credentials to reach the broker's nodes.
pub const AUTH_REFUSED_WAIT_MS: u64 = 30_000;

/// The policy.
#[derive(Debug, Default)]
pub struct BrokerAware;

/// Whether `a` is a RabbitMQ auth refusal still worth another attempt.
fn refusal_to_wait_out(a: &Attempt) -> bool {
    a.failure() == Some(FailureKind::AuthRefused)
        && a.destination == DestinationKind::Rabbitmq
        && a.attempt <= AUTH_REFUSED_ATTEMPTS
}

impl RetryPolicy for BrokerAware {
    fn classify(&self, a: &Attempt) -> Verdict {
        if refusal_to_wait_out(a) {
            return Verdict::Retry;
        }
        match a.failure() {
            Some(FailureKind::TooLarge) => Verdict::GiveUp(format!(
                "{} refused the message as too large: {}",
                a.destination.as_str(),
                a.error_message
            )),
            _ => Verdict::UseDefault,
        }
    }

    fn next_delay(&self, a: &Attempt) -> Delay {
        if refusal_to_wait_out(a) {
            Delay::AfterMs(AUTH_REFUSED_WAIT_MS)
        } else {
            Delay::UseDefault
        }
    }
}

export_policy!(BrokerAware);

#[cfg(test)]
mod tests {
    use super::*;
    use hookgate_plugin_sdk::decide;

    const REFUSED: &str = "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN";

    fn refused(destination: DestinationKind, attempt: u32) -> Attempt {
        Attempt::builder()
            .failure(FailureKind::AuthRefused)
            .destination(destination)
            .error_message(REFUSED)
            .attempt(attempt)
            .build()
    }

    #[test]
    fn a_rabbitmq_auth_refusal_gets_one_attempt_more_than_the_default() {
        for attempt in 1..=3 {
            let a = refused(DestinationKind::Rabbitmq, attempt);
            let d = decide(&BrokerAware, &a);
            assert_eq!(d.verdict, Verdict::Retry, "attempt {attempt}");
            assert_eq!(d.delay, Some(Delay::AfterMs(30_000)), "attempt {attempt}");
        }
        // The built-in alone would have given up on the third.
        assert!(matches!(
            refused(DestinationKind::Rabbitmq, 3).builtin_verdict,
            Verdict::GiveUp(_)
        ));
        // From the fourth, the built-in's give-up stands.
        let d = decide(&BrokerAware, &refused(DestinationKind::Rabbitmq, 4));
        assert_eq!((d.verdict, d.delay), (Verdict::UseDefault, None));
    }

    #[test]
    fn an_auth_refusal_elsewhere_is_the_builtins_call() {
        for destination in [DestinationKind::Nats, DestinationKind::Redis] {
            let d = decide(&BrokerAware, &refused(destination, 1));
            assert_eq!(d.verdict, Verdict::UseDefault, "{destination:?}");
            assert_eq!(d.delay, Some(Delay::UseDefault), "{destination:?}");
        }
    }

    #[test]
    fn a_message_too_large_is_given_up_in_the_brokers_words() {
        let a = Attempt::builder()
            .failure(FailureKind::TooLarge)
            .destination(DestinationKind::Redis)
            .error_message("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
            .build();
        let d = decide(&BrokerAware, &a);
        assert_eq!(
            d.verdict,
            Verdict::GiveUp(
                "redis refused the message as too large: \
                 ERR string exceeds maximum allowed size (proto-max-bulk-len)"
                    .into()
            )
        );
        assert_eq!(d.delay, None);
    }

    #[test]
    fn timeouts_and_statuses_are_left_to_the_builtin() {
        let timeout = Attempt::builder()
            .failure(FailureKind::Timeout)
            .destination(DestinationKind::Rabbitmq)
            .error_message("no confirm within 30000 ms")
            .build();
        let d = decide(&BrokerAware, &timeout);
        assert_eq!(
            (d.verdict, d.delay),
            (Verdict::UseDefault, Some(Delay::UseDefault))
        );
        let d = decide(&BrokerAware, &Attempt::builder().status(404).build());
        assert_eq!((d.verdict, d.delay), (Verdict::UseDefault, None));
    }
}
