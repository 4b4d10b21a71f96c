//! Upload step 9, conformance: the only step that runs tenant code. This is a
//! policy's; a transform's is `transform_conformance`. A fixed set of
//! sample attempts runs under the production limits (fuel, memory, the epoch
//! deadline), first each in a fresh instance as decisions do, then all again in
//! one reused instance. Every run must answer without error, and both passes must
//! give the same answers: a plugin's output depends on its input alone. A plugin
//! of a version older than 0.3.0 skips the samples of broker failure kinds, which
//! the host never asks it about.

use super::PluginError;
use super::bindings::{Attempt, Delay, DestinationKind, FailureKind, Outcome, Verdict};
use super::chain::{CallFailure, PluginAnswer};
use super::engine::{Call, Decide, FUEL_PER_DECISION, MEMORY_LIMIT_BYTES, Sandbox, Usage};
use super::versions::{PluginAttempt, PluginKind, PluginPre};

/// Tries a sample gets when only the wall-clock backstop stopped it: that can
/// happen to a well-behaved plugin on a busy machine, fuel cannot.
const EPOCH_TRIES: usize = 3;

/// What one sample used, for `hookgate plugin-check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleRun {
    /// What the sample is, e.g. `400 {"error":"try_again"}`.
    pub name: String,
    pub usage: Usage,
    /// The plugin's answers: the verdict, and the delay when it counts (as
    /// `classify` / `next-delay` returned them, or `decide`).
    pub answer: String,
}

/// The result of a passed conformance run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConformanceReport {
    pub samples: Vec<SampleRun>,
    /// The fuel a decision may use.
    pub fuel_limit: u64,
    /// The memory a decision may use, in bytes.
    pub memory_limit: usize,
}

/// A sample attempt to an HTTP receiver, as the host would build it; the built-in
/// verdict follows the default table and error rules.
fn sample(n: u32, outcome: Outcome, body: &str, headers: &[(&str, &str)]) -> (Attempt, bool) {
    let (builtin_verdict, retry) = match outcome {
        Outcome::Failure(FailureKind::TooLarge) => (
            Verdict::GiveUp("too_large: the default gives up at once".into()),
            false,
        ),
        Outcome::Failure(FailureKind::AuthRefused | FailureKind::NotFound) if n >= 3 => (
            Verdict::GiveUp("the default gives up after 3".into()),
            false,
        ),
        Outcome::Status(408 | 429 | 500..=599) | Outcome::Failure(_) => (Verdict::Retry, true),
        Outcome::Status(s) => (Verdict::GiveUp(format!("status {s}")), false),
    };
    let attempt = Attempt {
        attempt: n,
        max_attempts: 8,
        elapsed_ms: u64::from(n - 1) * 60_000,
        outcome,
        retry_after_ms: headers
            .iter()
            .find(|(k, _)| *k == "retry-after")
            .and_then(|(_, v)| v.parse::<u64>().ok())
            .map(|s| s * 1_000),
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        body: body.as_bytes().to_vec(),
        event_type: "order.paid".into(),
        builtin_verdict,
        builtin_delay_ms: 1_000u64 << n.min(20),
        seed: 0x9e37_79b9_7f4a_7c15 ^ u64::from(n),
        destination: DestinationKind::Http,
        error_message: String::new(),
    };
    (attempt, retry)
}

/// A failed sample attempt to `destination`, whose transport or broker said `error`.
fn failed(n: u32, kind: FailureKind, destination: DestinationKind, error: &str) -> (Attempt, bool) {
    let (mut attempt, retry) = sample(n, Outcome::Failure(kind), "", &[]);
    attempt.destination = destination;
    attempt.error_message = error.to_owned();
    (attempt, retry)
}

/// The sample attempts: the common failures, the business-code bodies plugins
/// look at, a body at the 4 KiB cut, the last attempt, and each broker failure
/// kind, one with error text at the 1 KiB cut.
pub(crate) fn samples() -> Vec<(String, Attempt, bool)> {
    use DestinationKind::{Http, Nats, Rabbitmq, Redis};
    let json = [("content-type", "application/json")];
    let big = format!("{{\"error\":\"{}\"}}", "x".repeat(4_096 - 12));
    let long_error = format!("ERR {}", "x".repeat(1_024 - 4));
    let cases: Vec<(String, (Attempt, bool))> = vec![
        (
            "500, empty body".into(),
            sample(1, Outcome::Status(500), "", &[]),
        ),
        (
            "503 with Retry-After: 30".into(),
            sample(2, Outcome::Status(503), "", &[("retry-after", "30")]),
        ),
        (
            "429 with rate-limit headers".into(),
            sample(
                3,
                Outcome::Status(429),
                "slow down",
                &[("ratelimit-remaining", "0"), ("ratelimit-reset", "12")],
            ),
        ),
        (
            r#"400 {"error":"try_again"}"#.into(),
            sample(1, Outcome::Status(400), r#"{"error":"try_again"}"#, &json),
        ),
        (
            r#"429 {"error":"rate_limited","retry_in":30}"#.into(),
            sample(
                1,
                Outcome::Status(429),
                r#"{"error":"rate_limited","retry_in":30}"#,
                &json,
            ),
        ),
        (
            r#"422 {"error":"account_closed"}"#.into(),
            sample(
                2,
                Outcome::Status(422),
                r#"{"error":"account_closed"}"#,
                &json,
            ),
        ),
        (
            "404, HTML body".into(),
            sample(
                1,
                Outcome::Status(404),
                "<html>not found</html>",
                &[("content-type", "text/html")],
            ),
        ),
        (
            "502, 4 KiB JSON body".into(),
            sample(4, Outcome::Status(502), &big, &json),
        ),
        (
            "timeout".into(),
            failed(1, FailureKind::Timeout, Http, "no answer within 30000 ms"),
        ),
        (
            "connection refused".into(),
            failed(
                5,
                FailureKind::Connect,
                Http,
                "connection refused (os error 111)",
            ),
        ),
        (
            "500 on the last attempt".into(),
            sample(8, Outcome::Status(500), "", &[]),
        ),
        (
            "rabbitmq timeout".into(),
            failed(
                2,
                FailureKind::Timeout,
                Rabbitmq,
                "no confirm within 30000 ms",
            ),
        ),
        (
            "rabbitmq auth_refused".into(),
            failed(
                1,
                FailureKind::AuthRefused,
                Rabbitmq,
                "ACCESS_REFUSED - login was refused",
            ),
        ),
        (
            "rabbitmq auth_refused, attempt 3".into(),
            failed(
                3,
                FailureKind::AuthRefused,
                Rabbitmq,
                "ACCESS_REFUSED - login was refused",
            ),
        ),
        (
            "rabbitmq rejected".into(),
            failed(
                1,
                FailureKind::Rejected,
                Rabbitmq,
                "the broker nacked the message",
            ),
        ),
        (
            "nats not_found".into(),
            failed(
                1,
                FailureKind::NotFound,
                Nats,
                "no stream matches the subject",
            ),
        ),
        (
            "nats throttled".into(),
            failed(2, FailureKind::Throttled, Nats, "maximum messages exceeded"),
        ),
        (
            "redis too_large, 1 KiB error text".into(),
            failed(1, FailureKind::TooLarge, Redis, &long_error),
        ),
    ];
    cases
        .into_iter()
        .map(|(name, (a, retry))| (name, a, retry))
        .collect()
}

/// Runs the samples (step 9).
///
/// # Errors
/// `Conformance`, naming the sample and what went wrong: an error or overrun
/// (fuel, memory, time, a trap, invalid output), or answers that differ between
/// a fresh and a reused instance.
pub(crate) fn check(sandbox: &Sandbox, pre: &PluginPre) -> Result<ConformanceReport, PluginError> {
    if pre.version().kind() == PluginKind::Transform {
        return super::transform_conformance::check(sandbox, pre);
    }
    // In the plugin's version's types; what it cannot name it is never asked.
    let samples: Vec<(String, PluginAttempt, bool)> = samples()
        .into_iter()
        .filter_map(|(name, a, retry)| Some((name, pre.attempt(a)?, retry)))
        .collect();
    let mut runs = Vec::with_capacity(samples.len());
    let mut answers = Vec::with_capacity(samples.len());
    for (name, attempt, retry) in &samples {
        let (answer, usage) = fresh(sandbox, pre, attempt, *retry);
        let answer = answer.map_err(|f| refusal(name, &f))?;
        runs.push(SampleRun {
            name: name.clone(),
            usage,
            answer: describe(&answer),
        });
        answers.push(answer);
    }
    let again: Vec<Decide> = samples
        .into_iter()
        .map(|(_, attempt, builtin_retry)| Decide {
            attempt,
            builtin_retry,
        })
        .collect();
    let reused = sandbox
        .run_reused(pre, &again)
        .map_err(|(i, f)| refusal(&runs[i].name, &f))?;
    if let Some(i) = (0..answers.len()).find(|&i| answers[i] != reused[i]) {
        return Err(PluginError::Conformance(format!(
            "not deterministic: sample \"{}\" answered {} in a fresh instance but {} when run again",
            runs[i].name,
            describe(&answers[i]),
            describe(&reused[i])
        )));
    }
    Ok(ConformanceReport {
        samples: runs,
        fuel_limit: FUEL_PER_DECISION,
        memory_limit: MEMORY_LIMIT_BYTES,
    })
}

/// One sample in a fresh instance, tried again only after an epoch deadline.
fn fresh(
    sandbox: &Sandbox,
    pre: &PluginPre,
    attempt: &PluginAttempt,
    retry: bool,
) -> (Result<PluginAnswer, CallFailure>, Usage) {
    let decide = Decide {
        attempt: attempt.clone(),
        builtin_retry: retry,
    };
    fresh_call(sandbox, pre, &decide)
}

/// One call in a fresh instance, tried again only after an epoch deadline.
pub(super) fn fresh_call<C: Call>(
    sandbox: &Sandbox,
    pre: &PluginPre,
    call: &C,
) -> (Result<C::Answer, CallFailure>, Usage) {
    let mut last = sandbox.run_measured(pre, call);
    for _ in 1..EPOCH_TRIES {
        if !matches!(
            last.0,
            Err(CallFailure::EpochDeadline | CallFailure::Spinning { .. })
        ) {
            break;
        }
        last = sandbox.run_measured(pre, call);
    }
    last
}

pub(super) fn refusal(sample: &str, failure: &CallFailure) -> PluginError {
    let what = match failure {
        CallFailure::OutOfFuel => "overran its fuel".to_owned(),
        CallFailure::MemoryLimit => {
            format!("overran the memory limit ({MEMORY_LIMIT_BYTES} bytes)")
        }
        CallFailure::EpochDeadline | CallFailure::Spinning { .. } => {
            "overran the time limit (50 ms)".to_owned()
        }
        other => format!("failed: {other}"),
    };
    PluginError::Conformance(format!("sample \"{sample}\" {what}"))
}

/// An answer in a line, in WIT's words: `retry, after-ms(30000)`.
fn describe(answer: &PluginAnswer) -> String {
    let verdict = match &answer.verdict {
        Verdict::Delivered => "delivered".to_owned(),
        Verdict::Retry => "retry".to_owned(),
        Verdict::GiveUp(r) => format!("give-up({})", shown(r)),
        Verdict::UseDefault => "use-default".to_owned(),
    };
    match &answer.delay {
        None => verdict,
        Some(Delay::AfterMs(ms)) => format!("{verdict}, after-ms({ms})"),
        Some(Delay::GiveUp(r)) => format!("{verdict}, give-up({})", shown(r)),
        Some(Delay::UseDefault) => format!("{verdict}, use-default"),
    }
}

/// The longest reason shown in a line, in bytes: a plugin may echo the 1 KiB of
/// a sample's error text.
const SHOWN_REASON_BYTES: usize = 64;

/// A give-up reason quoted, cut to [`SHOWN_REASON_BYTES`] on a character
/// boundary with `...` when longer.
fn shown(reason: &str) -> String {
    if reason.len() <= SHOWN_REASON_BYTES {
        return format!("{reason:?}");
    }
    let cut = &reason[..reason.floor_char_boundary(SHOWN_REASON_BYTES)];
    format!("{cut:?}...")
}
