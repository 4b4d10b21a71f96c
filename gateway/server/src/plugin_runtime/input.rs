//! What a plugin is told: the WIT `attempt` record (in the newest version's
//! types; `versions` converts it for older plugins), built from the attempt's
//! facts, the response (allow-listed headers, the body's first 4 KiB), the
//! destination's kind, the error text and the built-in's own decision.

use http::HeaderMap;

use super::bindings::{self as wit, Attempt};
use super::chain::BuiltinView;
use crate::destination::DestinationKind;
use crate::policy::{
    AttemptFacts, EffectivePolicy, FailureKind, Outcome, Verdict, parse_retry_after,
};

/// The most headers a plugin sees.
pub(crate) const MAX_HEADERS: usize = 32;
/// The most body bytes a plugin sees.
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024;
/// The most error-text bytes a plugin sees.
pub(crate) const MAX_ERROR_MESSAGE_BYTES: usize = 1024;

/// What a plugin needs about an attempt beyond [`AttemptFacts`]: the response,
/// the event, where the attempt went and what its transport or broker said.
/// The host filters and cuts it; callers pass what they have. The default is an
/// HTTP attempt with no response, body or error text.
#[derive(Debug, Clone, Copy, Default)]
pub struct PluginInput<'a> {
    /// The response's headers, when a response arrived.
    pub headers: Option<&'a HeaderMap>,
    /// The response body as read (the host passes on its first 4 KiB).
    pub body: &'a [u8],
    /// The event's type.
    pub event_type: &'a str,
    /// The kind of destination the attempt went to.
    pub destination: DestinationKind,
    /// The transport's or broker's error text, when the attempt failed without
    /// a status (the host passes on its first 1 KiB, and nothing when a status
    /// arrived).
    pub error_message: &'a str,
}

/// Whether a response header may be shown to plugins.
pub(crate) fn header_allowed(name: &str) -> bool {
    name == "content-type"
        || name == "retry-after"
        || name.starts_with("ratelimit-")
        || name.starts_with("x-ratelimit-")
}

/// The allow-listed headers, lower-cased, in response order, at most [`MAX_HEADERS`].
fn plugin_headers(headers: Option<&HeaderMap>) -> Vec<(String, String)> {
    let Some(headers) = headers else {
        return Vec::new();
    };
    headers
        .iter()
        .filter(|(name, _)| header_allowed(name.as_str()))
        .take(MAX_HEADERS)
        .map(|(name, value)| {
            (
                name.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// The kind in 0.3.0's words; `None` for a failed transform, which no
/// policy world names (the host decides it alone).
fn wit_failure(kind: FailureKind) -> Option<wit::FailureKind> {
    Some(match kind {
        FailureKind::Timeout => wit::FailureKind::Timeout,
        FailureKind::Connect => wit::FailureKind::Connect,
        FailureKind::Dns => wit::FailureKind::Dns,
        FailureKind::Tls => wit::FailureKind::Tls,
        FailureKind::Reset => wit::FailureKind::Reset,
        FailureKind::Redirect => wit::FailureKind::Redirect,
        FailureKind::Protocol => wit::FailureKind::Protocol,
        FailureKind::AuthRefused => wit::FailureKind::AuthRefused,
        FailureKind::NotFound => wit::FailureKind::NotFound,
        FailureKind::TooLarge => wit::FailureKind::TooLarge,
        FailureKind::Throttled => wit::FailureKind::Throttled,
        FailureKind::Rejected => wit::FailureKind::Rejected,
        FailureKind::TransformFailed => return None,
    })
}

fn wit_destination(kind: DestinationKind) -> wit::DestinationKind {
    match kind {
        DestinationKind::Http => wit::DestinationKind::Http,
        DestinationKind::Rabbitmq => wit::DestinationKind::Rabbitmq,
        DestinationKind::Nats => wit::DestinationKind::Nats,
        DestinationKind::Redis => wit::DestinationKind::Redis,
        DestinationKind::Sqs => wit::DestinationKind::Sqs,
        DestinationKind::Sns => wit::DestinationKind::Sns,
        DestinationKind::Kinesis => wit::DestinationKind::Kinesis,
    }
}

/// `text`'s first `max` bytes at most, cut on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}

/// The built-in's verdict as WIT sees it. A 410 never reaches a plugin; should a
/// disable verdict appear anyway it reads as a give-up.
fn wit_verdict(verdict: &Verdict) -> wit::Verdict {
    match verdict {
        Verdict::Delivered => wit::Verdict::Delivered,
        Verdict::Retry => wit::Verdict::Retry,
        Verdict::GiveUp { reason } => wit::Verdict::GiveUp(reason.clone()),
        Verdict::DisableEndpoint => wit::Verdict::GiveUp("gone".into()),
        // Only a transform skips, before any attempt: never the built-in.
        Verdict::Skipped { reason } => wit::Verdict::GiveUp(reason.clone()),
    }
}

/// Builds the record a plugin receives, in 0.3.0's types (`versions` converts
/// it for an older plugin, when that version can name its failure kind);
/// `None` when no version can (a failed transform).
pub(crate) fn attempt_record(
    policy: &EffectivePolicy,
    facts: &AttemptFacts<'_>,
    input: &PluginInput<'_>,
    builtin: &BuiltinView,
) -> Option<Attempt> {
    let outcome = match *facts.outcome {
        Outcome::Status(status) => wit::Outcome::Status(status),
        // Never reaches a plugin: the host decides a confirmation alone.
        Outcome::Published => wit::Outcome::Status(200),
        Outcome::Failure(kind) => wit::Outcome::Failure(wit_failure(kind)?),
    };
    let body = &input.body[..input.body.len().min(MAX_BODY_BYTES)];
    let error_message = match facts.outcome {
        Outcome::Status(_) => "",
        Outcome::Published | Outcome::Failure(_) => {
            cut(input.error_message, MAX_ERROR_MESSAGE_BYTES)
        }
    };
    Some(Attempt {
        attempt: facts.attempt,
        max_attempts: policy.max_attempts,
        elapsed_ms: facts.now_ms.saturating_sub(facts.first_attempt_at_ms),
        outcome,
        retry_after_ms: facts
            .retry_after
            .and_then(|v| parse_retry_after(v, facts.date, facts.now_ms)),
        headers: plugin_headers(input.headers),
        body: body.to_vec(),
        event_type: input.event_type.to_owned(),
        builtin_verdict: wit_verdict(&builtin.verdict),
        builtin_delay_ms: builtin.delay_ms,
        seed: facts.seed,
        destination: wit_destination(input.destination),
        error_message: error_message.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allow_listed_headers_up_to_32() {
        let mut h = HeaderMap::new();
        h.insert("Content-Type", "application/json".parse().unwrap());
        h.insert("set-cookie", "secret=1".parse().unwrap());
        h.insert("authorization", "Bearer x".parse().unwrap());
        h.insert("RateLimit-Remaining", "0".parse().unwrap());
        h.insert("x-ratelimit-reset", "30".parse().unwrap());
        h.insert("retry-after", "5".parse().unwrap());
        let got = plugin_headers(Some(&h));
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "content-type",
                "ratelimit-remaining",
                "x-ratelimit-reset",
                "retry-after"
            ]
        );
        let mut many = HeaderMap::new();
        for i in 0..40 {
            let name: http::HeaderName = format!("x-ratelimit-{i}").parse().unwrap();
            many.insert(name, "1".parse().unwrap());
        }
        assert_eq!(plugin_headers(Some(&many)).len(), MAX_HEADERS);
        assert!(plugin_headers(None).is_empty());
    }

    #[test]
    fn the_record_carries_the_facts_and_the_builtin() {
        let policy = EffectivePolicy::default_preset();
        let outcome = Outcome::Status(429);
        let facts = AttemptFacts {
            outcome: &outcome,
            attempt: 3,
            first_attempt_at_ms: 1_000,
            now_ms: 6_000,
            retry_after: Some("7"),
            date: None,
            prev_delay_ms: None,
            seed: 99,
        };
        let body = vec![b'x'; 10_000];
        let input = PluginInput {
            headers: None,
            body: &body,
            event_type: "invoice.paid",
            destination: DestinationKind::Http,
            error_message: "ignored: a status arrived",
        };
        let builtin = BuiltinView {
            verdict: Verdict::Retry,
            delay_ms: 7_000,
        };
        let a = attempt_record(&policy, &facts, &input, &builtin).unwrap();
        assert_eq!((a.attempt, a.max_attempts, a.elapsed_ms), (3, 40, 5_000));
        assert_eq!(a.outcome, wit::Outcome::Status(429));
        assert_eq!(a.retry_after_ms, Some(7_000));
        assert_eq!(a.body.len(), MAX_BODY_BYTES);
        assert_eq!(a.event_type, "invoice.paid");
        assert_eq!(a.builtin_verdict, wit::Verdict::Retry);
        assert_eq!((a.builtin_delay_ms, a.seed), (7_000, 99));
        assert_eq!(a.destination, wit::DestinationKind::Http);
        assert_eq!(a.error_message, "", "a status arrived");
    }

    #[test]
    fn a_broker_failure_carries_its_kind_destination_and_cut_error_text() {
        let policy = EffectivePolicy::default_preset();
        let outcome = Outcome::Failure(FailureKind::AuthRefused);
        let facts = AttemptFacts {
            outcome: &outcome,
            attempt: 1,
            first_attempt_at_ms: 1_000,
            now_ms: 1_050,
            retry_after: None,
            date: None,
            prev_delay_ms: None,
            seed: 5,
        };
        // 1023 bytes of ASCII, then a 2-byte character across the 1 KiB line.
        let message = format!("{}é and more", "a".repeat(MAX_ERROR_MESSAGE_BYTES - 1));
        let input = PluginInput {
            destination: DestinationKind::Rabbitmq,
            error_message: &message,
            ..PluginInput::default()
        };
        let builtin = BuiltinView::of(&policy, &facts);
        let a = attempt_record(&policy, &facts, &input, &builtin).unwrap();
        assert_eq!(
            a.outcome,
            wit::Outcome::Failure(wit::FailureKind::AuthRefused)
        );
        assert_eq!(a.destination, wit::DestinationKind::Rabbitmq);
        assert_eq!(a.error_message, "a".repeat(MAX_ERROR_MESSAGE_BYTES - 1));
        let short = PluginInput {
            error_message: "ACCESS_REFUSED",
            ..input
        };
        let a = attempt_record(&policy, &facts, &short, &builtin).unwrap();
        assert_eq!(a.error_message, "ACCESS_REFUSED");
        // Each kind maps to the WIT case of its own name (`FailureKind::AuthRefused`
        // for `auth_refused`), so none is read as another.
        let case = |debug: String| debug.rsplit("::").next().unwrap().to_lowercase();
        for kind in FailureKind::ALL {
            let Some(wit) = wit_failure(kind) else {
                assert_eq!(kind, FailureKind::TransformFailed);
                continue;
            };
            let name = case(format!("{wit:?}"));
            assert_eq!(name, kind.as_str().replace('_', ""), "{kind:?}");
        }
        for kind in DestinationKind::ALL {
            let name = case(format!("{:?}", wit_destination(kind)));
            assert_eq!(name, kind.as_str(), "{kind:?}");
        }
    }
}
