//! Classification of an attempt's outcome: retry only what can succeed.
//!
//! Precedence: 2xx (or a broker's confirmation) is always delivered; then
//! `give_up_on` > `retry_on` > `retry_all_non_2xx` > the table. The lists hold
//! status patterns only; a failure without a status follows `error_rules`
//! (`error_rules.rs`).

use super::{EffectivePolicy, Outcome, StatusPattern, Verdict, error_rules};

/// Classifies one attempt's outcome under the endpoint's policy.
///
/// The table: 2xx delivered; 3xx (error kind `redirect`), 408, 429 and 5xx retry; 410
/// disables the endpoint; any other 4xx gives up; a failure follows its error
/// rule (`attempt` is the series' attempt that failed). A status outside 100–599
/// or a 1xx is a protocol anomaly and retries.
pub(crate) fn classify(policy: &EffectivePolicy, outcome: &Outcome, attempt: u32) -> Verdict {
    let status = match outcome {
        Outcome::Published => return Verdict::Delivered,
        Outcome::Failure(kind) => return error_rules::verdict(&policy.error_rules, *kind, attempt),
        Outcome::Status(status) => *status,
    };
    if (200..=299).contains(&status) {
        return Verdict::Delivered;
    }
    if let Some(pattern) = first_match(&policy.give_up_on, status) {
        return Verdict::GiveUp {
            reason: format!("status {status} matches give_up_on \"{pattern}\""),
        };
    }
    if first_match(&policy.retry_on, status).is_some() || policy.retry_all_non_2xx {
        return Verdict::Retry;
    }
    match status {
        410 => Verdict::DisableEndpoint,
        408 | 429 => Verdict::Retry,
        400..=499 => Verdict::GiveUp {
            reason: format!("status {status} is not retryable"),
        },
        _ => Verdict::Retry,
    }
}

fn first_match(patterns: &[StatusPattern], status: u16) -> Option<StatusPattern> {
    patterns
        .iter()
        .copied()
        .find(|pattern| pattern.matches(status))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::FailureKind;

    fn with_lists(retry_on: &[&str], give_up_on: &[&str]) -> EffectivePolicy {
        let parse = |texts: &[&str]| texts.iter().map(|text| text.parse().unwrap()).collect();
        EffectivePolicy {
            retry_on: parse(retry_on),
            give_up_on: parse(give_up_on),
            ..EffectivePolicy::default_preset()
        }
    }

    fn verdict_name(policy: &EffectivePolicy, outcome: Outcome) -> &'static str {
        classify(policy, &outcome, 1).as_str()
    }

    #[test]
    fn the_default_table_row_by_row() {
        let policy = EffectivePolicy::default_preset();
        let rows = [
            (200, "delivered"),
            (201, "delivered"),
            (204, "delivered"),
            (301, "retry"),
            (302, "retry"),
            (400, "give_up"),
            (401, "give_up"),
            (403, "give_up"),
            (404, "give_up"),
            (408, "retry"),
            (410, "disable_endpoint"),
            (422, "give_up"),
            (429, "retry"),
            (500, "retry"),
            (502, "retry"),
            (503, "retry"),
            (504, "retry"),
        ];
        for (status, expected) in rows {
            assert_eq!(
                verdict_name(&policy, Outcome::Status(status)),
                expected,
                "{status}"
            );
        }
    }

    #[test]
    fn every_transport_failure_retries_and_status_lists_never_touch_failures() {
        let policy = EffectivePolicy::default_preset();
        for kind in FailureKind::ALL
            .into_iter()
            .filter(|k| !k.from_broker_only())
        {
            assert_eq!(
                classify(&policy, &Outcome::Failure(kind), 1),
                Verdict::Retry,
                "{kind:?}"
            );
        }
        let everything_gives_up = with_lists(&[], &["1xx", "3xx", "4xx", "5xx"]);
        let timeout = Outcome::Failure(FailureKind::Timeout);
        assert_eq!(classify(&everything_gives_up, &timeout, 1), Verdict::Retry);
        assert_eq!(
            classify(&policy, &Outcome::Published, 1),
            Verdict::Delivered
        );
    }

    #[test]
    fn give_up_reasons_explain_themselves() {
        let policy = with_lists(&[], &["5xx"]);
        let Verdict::GiveUp { reason } = classify(&policy, &Outcome::Status(503), 1) else {
            panic!("expected give_up");
        };
        assert_eq!(reason, "status 503 matches give_up_on \"5xx\"");
        let default = EffectivePolicy::default_preset();
        let Verdict::GiveUp { reason } = classify(&default, &Outcome::Status(404), 1) else {
            panic!("expected give_up");
        };
        assert_eq!(reason, "status 404 is not retryable");
    }

    #[test]
    fn give_up_on_beats_retry_on() {
        let policy = with_lists(&["503"], &["5xx"]);
        assert_eq!(verdict_name(&policy, Outcome::Status(503)), "give_up");
        let policy = with_lists(&["5xx"], &["500-502"]);
        assert_eq!(verdict_name(&policy, Outcome::Status(501)), "give_up");
        assert_eq!(verdict_name(&policy, Outcome::Status(503)), "retry");
    }

    #[test]
    fn retry_on_beats_the_table() {
        let policy = with_lists(&["404"], &[]);
        assert_eq!(verdict_name(&policy, Outcome::Status(404)), "retry");
        assert_eq!(verdict_name(&policy, Outcome::Status(403)), "give_up");
    }

    #[test]
    fn retry_all_non_2xx_makes_4xx_retry_but_loses_to_give_up_on() {
        let mut policy = with_lists(&[], &["401"]);
        policy.retry_all_non_2xx = true;
        assert_eq!(verdict_name(&policy, Outcome::Status(404)), "retry");
        assert_eq!(verdict_name(&policy, Outcome::Status(422)), "retry");
        assert_eq!(verdict_name(&policy, Outcome::Status(401)), "give_up");
        assert_eq!(verdict_name(&policy, Outcome::Status(200)), "delivered");
    }

    #[test]
    fn two_hundreds_are_delivered_whatever_the_lists_say() {
        let policy = with_lists(&["2xx"], &["2xx", "200", "200-299"]);
        assert_eq!(verdict_name(&policy, Outcome::Status(200)), "delivered");
        assert_eq!(verdict_name(&policy, Outcome::Status(204)), "delivered");
    }

    #[test]
    fn unusual_statuses_retry() {
        let policy = EffectivePolicy::default_preset();
        assert_eq!(verdict_name(&policy, Outcome::Status(100)), "retry");
        assert_eq!(verdict_name(&policy, Outcome::Status(999)), "retry");
    }
}
