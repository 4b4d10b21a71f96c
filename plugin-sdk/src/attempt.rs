//! What a policy is told about an attempt, and what it may answer: native mirrors
//! of the WIT types in `wit/policy-0.3.0.wit`, plus a builder for tests.

/// Why an attempt ended without a usable HTTP response or a broker's
/// confirmation. The last five only a broker or queue service reports. More
/// kinds may come with later versions of the contract, so a `match` needs a
/// wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
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
    /// The receiver spoke malformed HTTP, or a broker broke its protocol.
    Protocol,
    /// The broker refused the credentials, or their rights to the target. By
    /// default the built-in gives up after three such attempts.
    AuthRefused,
    /// No such exchange, queue, stream or topic, or nothing bound to route the
    /// message to. By default the built-in gives up after three.
    NotFound,
    /// The message is larger than the broker takes. By default the built-in
    /// gives up at once.
    TooLarge,
    /// The broker or service asked to slow down. The built-in retries.
    Throttled,
    /// The broker took the message and refused it (a RabbitMQ nack). The
    /// built-in retries.
    Rejected,
}

impl FailureKind {
    /// The name hookgate's attempt log and API use, e.g. `auth_refused`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Connect => "connect",
            Self::Dns => "dns",
            Self::Tls => "tls",
            Self::Reset => "reset",
            Self::Redirect => "redirect",
            Self::Protocol => "protocol",
            Self::AuthRefused => "auth_refused",
            Self::NotFound => "not_found",
            Self::TooLarge => "too_large",
            Self::Throttled => "throttled",
            Self::Rejected => "rejected",
        }
    }
}

/// The kind of destination the attempt went to. More kinds may come with
/// later versions of the contract, so a `match` needs a wildcard arm.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DestinationKind {
    /// An HTTP(S) receiver: a POST to the endpoint's URL.
    #[default]
    Http,
    /// RabbitMQ, over AMQP 0-9-1 with publisher confirms.
    Rabbitmq,
    /// NATS JetStream; confirmed by the stream's `PubAck`.
    Nats,
    /// A Redis stream; confirmed by `XADD` answering an id.
    Redis,
    /// An Amazon SQS queue.
    Sqs,
    /// An Amazon SNS topic.
    Sns,
    /// An Amazon Kinesis data stream.
    Kinesis,
}

impl DestinationKind {
    /// The name hookgate's API uses, e.g. `rabbitmq`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Rabbitmq => "rabbitmq",
            Self::Nats => "nats",
            Self::Redis => "redis",
            Self::Sqs => "sqs",
            Self::Sns => "sns",
            Self::Kinesis => "kinesis",
        }
    }
}

/// What the attempt produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The receiver answered with this status (never 2xx or 410: the host decides
    /// those alone, as it does a broker's confirmation).
    Status(u16),
    /// No usable response or confirmation arrived.
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
    /// The kind of destination the attempt went to.
    pub destination: DestinationKind,
    /// The transport's or broker's error text when the attempt failed without a
    /// status, at most 1 KiB; empty when a status arrived. For people: decide on
    /// the [`FailureKind`], not on this wording, which may change.
    pub error_message: String,
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

    /// Why no response or confirmation arrived, when none did.
    pub fn failure(&self) -> Option<FailureKind> {
        match self.outcome {
            Outcome::Status(_) => None,
            Outcome::Failure(kind) => Some(kind),
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
                destination: DestinationKind::Http,
                error_message: String::new(),
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

    /// A transport or broker failure instead of a response.
    pub fn failure(mut self, kind: FailureKind) -> Self {
        self.attempt.outcome = Outcome::Failure(kind);
        self
    }

    /// The kind of destination the attempt went to (HTTP unless set).
    pub fn destination(mut self, kind: DestinationKind) -> Self {
        self.attempt.destination = kind;
        self
    }

    /// The transport's or broker's error text (the host sends at most 1 KiB,
    /// and none when a status arrived; the builder keeps what it is given).
    pub fn error_message(mut self, message: &str) -> Self {
        self.attempt.error_message = message.to_owned();
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
    /// transport failures; give up on any other status; and for the brokers'
    /// kinds, give up on `too_large` at once and on `auth_refused` and
    /// `not_found` from the third attempt, retrying the rest.
    pub fn build(mut self) -> Attempt {
        if !self.builtin_set {
            self.attempt.builtin_verdict =
                default_table(self.attempt.outcome, self.attempt.attempt);
        }
        self.attempt
    }
}

/// How many attempts `auth_refused` and `not_found` get by default.
const DEFAULT_GIVE_UP_AFTER: u32 = 3;

/// hookgate's default classification, for attempts built in tests.
fn default_table(outcome: Outcome, attempt: u32) -> Verdict {
    match outcome {
        Outcome::Failure(FailureKind::TooLarge) => {
            Verdict::GiveUp("too_large: the default gives up at once".into())
        }
        Outcome::Failure(kind @ (FailureKind::AuthRefused | FailureKind::NotFound))
            if attempt >= DEFAULT_GIVE_UP_AFTER =>
        {
            Verdict::GiveUp(format!(
                "{} on {attempt} attempts: the default gives up after {DEFAULT_GIVE_UP_AFTER}",
                kind.as_str()
            ))
        }
        Outcome::Failure(_) => Verdict::Retry,
        Outcome::Status(200..=299) => Verdict::Delivered,
        Outcome::Status(408 | 429 | 300..=399 | 500..=599) => Verdict::Retry,
        Outcome::Status(s) => Verdict::GiveUp(format!("status {s}")),
    }
}
