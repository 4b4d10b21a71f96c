//! `json-error-code`: decides by the business error code in a JSON response body,
//! which many APIs send with a status that says little.
//!
//! | body | decision |
//! |---|---|
//! | `{"error":"rate_limited","retry_in":30}` | retry after `retry_in` seconds (the built-in's delay without it) |
//! | `{"error":"account_closed"}` | give up: retrying cannot help |
//! | `{"error":"try_again"}`, whatever the status (a 400 included) | retry after the built-in's delay |
//! | anything else | the built-in decides |

use hookgate_plugin_sdk::{Attempt, Delay, RetryPolicy, Verdict, export_policy};

/// The policy.
#[derive(Debug, Default)]
pub struct JsonErrorCode;

/// The body's `error` field, when the body is JSON with a string there.
fn code(a: &Attempt) -> Option<String> {
    a.json_str("error")
}

impl RetryPolicy for JsonErrorCode {
    fn classify(&self, a: &Attempt) -> Verdict {
        match code(a).as_deref() {
            Some("rate_limited" | "try_again") => Verdict::Retry,
            Some("account_closed") => Verdict::GiveUp("account_closed".into()),
            _ => Verdict::UseDefault,
        }
    }

    fn next_delay(&self, a: &Attempt) -> Delay {
        match (code(a).as_deref(), a.json_u64("retry_in")) {
            (Some("rate_limited"), Some(secs)) => Delay::AfterMs(secs.saturating_mul(1_000)),
            _ => Delay::UseDefault,
        }
    }
}

export_policy!(JsonErrorCode);

#[cfg(test)]
mod tests {
    use super::*;
    use hookgate_plugin_sdk::decide;

    fn run(status: u16, body: &str) -> hookgate_plugin_sdk::Decision {
        decide(
            &JsonErrorCode,
            &Attempt::builder().status(status).body(body).build(),
        )
    }

    #[test]
    fn rate_limited_retries_after_retry_in_seconds() {
        let d = run(429, r#"{"error":"rate_limited","retry_in":30}"#);
        assert_eq!(
            (d.verdict, d.delay),
            (Verdict::Retry, Some(Delay::AfterMs(30_000)))
        );
        let d = run(400, r#"{"error":"rate_limited"}"#);
        assert_eq!(
            (d.verdict, d.delay),
            (Verdict::Retry, Some(Delay::UseDefault))
        );
    }

    #[test]
    fn account_closed_gives_up_even_on_a_503() {
        let d = run(503, r#"{"error":"account_closed"}"#);
        assert_eq!(d.verdict, Verdict::GiveUp("account_closed".into()));
        assert_eq!(d.delay, None);
    }

    #[test]
    fn a_400_saying_try_again_is_retried() {
        let d = run(400, r#"{"error":"try_again"}"#);
        assert_eq!(
            (d.verdict, d.delay),
            (Verdict::Retry, Some(Delay::UseDefault))
        );
    }

    #[test]
    fn other_bodies_are_left_to_the_builtin() {
        for body in [
            "",
            "not json",
            r#"{"error":"nope"}"#,
            r#"{"error":7}"#,
            "[1,2]",
        ] {
            let d = run(400, body);
            assert_eq!(
                (&d.verdict, &d.delay),
                (&Verdict::UseDefault, &None),
                "{body}"
            );
        }
        let d = run(503, r#"{"message":"down"}"#);
        assert_eq!(
            (d.verdict, d.delay),
            (Verdict::UseDefault, Some(Delay::UseDefault))
        );
    }
}
