//! What a policy is told about an attempt, and what it may answer: native mirrors
//! of the WIT types in `wit/policy-0.2.0.wit`, plus a builder for tests.

/// Why an attempt ended without a usable HTTP response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The whole request overran the endpoint's timeout.
    Timeout,
    /// The TCP connection could not be established.
    Connect,
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake failed.
    Tls,
    /// The connection was reset or closed mid-request.
    Reset,
    /// The receiver redirected; hookgate never follows redirects.
    Redirect,
    /// The receiver spoke malformed HTTP.
    Protocol,
}

/// What the attempt produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The receiver answered with this status (never 2xx or 410: the host decides
    /// those alone).
    Status(u16),
    /// No usable response arrived.
    Failure(FailureKind),
}

/// A classification of the attempt's outcome: `classify`'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Treat the attempt as delivered.
    Delivered,
    /// Worth another attempt; the host then asks for the delay.
    Retry,
    /// Cannot succeed: the delivery goes dead with this reason (cut to 256 bytes).
    GiveUp(String),
    /// Take the built-in policy's verdict.
    UseDefault,
}

/// How long to wait before the next attempt: `next_delay`'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delay {
    /// Wait this many milliseconds. The host clamps it to between 1 s and the
    /// endpoint's `max_delay`, and never waits less than a honoured `Retry-After`.
    AfterMs(u64),
    /// Give up after all, with this reason.
    GiveUp(String),
    /// Take the built-in policy's delay.
    UseDefault,
}

/// Everything a policy is told about the attempt that just finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The 1-based number of the attempt that just finished.
    pub attempt: u32,
    /// The endpoint policy's `max_attempts`; a retry at this attempt is dead anyway.
    pub max_attempts: u32,
    /// Milliseconds from the series' first attempt to the end of this one.
    pub elapsed_ms: u64,
    /// What the attempt produced.
    pub outcome: Outcome,
    /// The response's `Retry-After` in milliseconds, as the host parsed it (delta
    /// seconds or an HTTP date).
    pub retry_after_ms: Option<u64>,
    /// Allow-listed response headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The response body's first 4 KiB.
    pub body: Vec<u8>,
    /// The event's type, e.g. `invoice.paid`.
    pub event_type: String,
    /// What the built-in policy decided on its own.
    pub builtin_verdict: Verdict,
    /// The built-in policy's delay in milliseconds.
    pub builtin_delay_ms: u64,
    /// Deterministic per (delivery, series, attempt): the only randomness to use.
    pub seed: u64,
}

impl Attempt {
    /// A builder for tests: attempt 1 of 40 with status 500, and a built-in
    /// verdict that follows hookgate's default table unless set.
    pub fn builder() -> AttemptBuilder {
        AttemptBuilder::default()
    }

    /// The HTTP status, when a response arrived.
    pub fn status(&self) -> Option<u16> {
        match self.outcome {
            Outcome::Status(s) => Some(s),
            Outcome::Failure(_) => None,
        }
    }
}

/// Builds an [`Attempt`] for native tests; see [`Attempt::builder`].
#[derive(Debug, Clone)]
pub struct AttemptBuilder {
    attempt: Attempt,
    builtin_set: bool,
}

impl Default for AttemptBuilder {
    fn default() -> Self {
        Self {
            attempt: Attempt {
                attempt: 1,
                max_attempts: 40,
                elapsed_ms: 0,
                outcome: Outcome::Status(500),
                retry_after_ms: None,
                headers: Vec::new(),
                body: Vec::new(),
                event_type: "test.event".into(),
                builtin_verdict: Verdict::Retry,
                builtin_delay_ms: 1_000,
                seed: 0,
            },
            builtin_set: false,
        }
    }
}

impl AttemptBuilder {
    /// The response status.
    pub fn status(mut self, status: u16) -> Self {
        self.attempt.outcome = Outcome::Status(status);
        self
    }

    /// A transport failure instead of a response.
    pub fn failure(mut self, kind: FailureKind) -> Self {
        self.attempt.outcome = Outcome::Failure(kind);
        self
    }

    /// The response body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.attempt.body = body.into();
        self
    }

    /// Adds a response header (its name is lower-cased, as the host does).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.attempt
            .headers
            .push((name.to_ascii_lowercase(), value.to_owned()));
        self
    }

    /// The attempt's number (1-based).
    pub fn attempt(mut self, n: u32) -> Self {
        self.attempt.attempt = n;
        self
    }

    /// The policy's `max_attempts`.
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.attempt.max_attempts = n;
        self
    }

    /// Milliseconds since the series' first attempt.
    pub fn elapsed_ms(mut self, ms: u64) -> Self {
        self.attempt.elapsed_ms = ms;
        self
    }

    /// The host-parsed `Retry-After`, in milliseconds.
    pub fn retry_after_ms(mut self, ms: u64) -> Self {
        self.attempt.retry_after_ms = Some(ms);
        self
    }

    /// The event's type.
    pub fn event_type(mut self, event_type: &str) -> Self {
        self.attempt.event_type = event_type.to_owned();
        self
    }

    /// The built-in policy's verdict and delay.
    pub fn builtin(mut self, verdict: Verdict, delay_ms: u64) -> Self {
        self.attempt.builtin_verdict = verdict;
        self.attempt.builtin_delay_ms = delay_ms;
        self.builtin_set = true;
        self
    }

    /// The seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.attempt.seed = seed;
        self
    }

    /// The attempt. Unless [`AttemptBuilder::builtin`] was called, the built-in
    /// verdict follows hookgate's default table: retry 408, 429, 3xx, 5xx and
    /// transport failures; give up on any other status.
    pub fn build(mut self) -> Attempt {
        if !self.builtin_set {
            self.attempt.builtin_verdict = default_table(self.attempt.outcome);
        }
        self.attempt
    }
}

/// hookgate's default classification, for attempts built in tests.
fn default_table(outcome: Outcome) -> Verdict {
    match outcome {
        Outcome::Failure(_) => Verdict::Retry,
        Outcome::Status(200..=299) => Verdict::Delivered,
        Outcome::Status(408 | 429 | 300..=399 | 500..=599) => Verdict::Retry,
        Outcome::Status(s) => Verdict::GiveUp(format!("status {s}")),
    }
}
