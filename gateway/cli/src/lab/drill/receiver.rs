//! The drills' receiver: the lab's raw-socket receiver on loopback, so that besides
//! answering it can reset a connection or hang, and a tally of what it saw.
//!
//! Each request is handed to a behaviour, which picks the reply from the attempt
//! number (how many times its `webhook-id` arrived before) and the body. The tally
//! counts requests and 2xx answers per id and per second since the start, and the
//! requests in progress: from the moment a request has been read to the moment its
//! answer starts going out, a window that lies inside the gateway's own in-flight
//! window, so the tally never sees more than the gateway had.
//!
//! It also keeps, for the cluster drill, when each id arrived and which client port
//! each request in progress came from, to tell one killed gateway's requests apart.
//!
//! Every wait is bounded: reading a request, the idle time between two requests of a
//! connection, a hang, writing a reply.

use std::sync::Arc;
use std::time::Duration;

use super::DrillError;
use crate::lab::raw_receiver::ReplyBody as RawBody;
use crate::lab::raw_receiver::{
    Action, Outcome, RawRequest, ReadLimits, Responder, Response, RunningReceiver, Then,
};

/// What the receiver reads at most (the gateway's own ingest limit is 256 KiB), how
/// long a connection may idle between requests, and how long one read may take.
const LIMITS: ReadLimits = ReadLimits {
    max_head: 64 * 1024,
    max_body: 1024 * 1024,
    idle: Duration::from_secs(60),
    read: Duration::from_secs(30),
};

/// One request, as the behaviour sees it.
pub(crate) struct Arrival<'a> {
    /// 0 for the first request with this id, 1 for the second, ...
    pub(crate) attempt: u32,
    pub(crate) body: &'a [u8],
}

/// What the receiver does with a request.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// Answers `status` after `delay`, with `Retry-After` when given.
    Answer {
        status: u16,
        retry_after_s: Option<u64>,
        delay: Duration,
        body: ReplyBody,
    },
    /// Resets the connection (RST) without answering.
    Reset,
    /// Says nothing for this long (or until the peer gives up), then closes.
    Hang(Duration),
}

impl Reply {
    /// `status` at once, with a short body.
    pub(crate) fn status(status: u16) -> Self {
        Self::Answer {
            status,
            retry_after_s: None,
            delay: Duration::ZERO,
            body: ReplyBody::Small,
        }
    }
}

/// The body of an answer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ReplyBody {
    /// A few bytes.
    Small,
    /// `chunks` chunks of 100 bytes, one every `every`.
    Slow { chunks: u32, every: Duration },
    /// This many bytes, as fast as the peer reads them.
    Big(usize),
}

/// Picks the reply to a request from its attempt number and body.
pub(crate) type Behavior = Arc<dyn Fn(&Arrival<'_>) -> Reply + Send + Sync>;

pub use super::tally::PerSecond;
pub(crate) use super::tally::Tally;

/// The drills' side of the lab's raw-socket receiver: counts in the tally, replies
/// from the behaviour.
struct DrillResponder {
    behavior: Behavior,
    tally: Arc<Tally>,
}

impl Responder for DrillResponder {
    fn respond(&self, request: &RawRequest) -> Action {
        let port = request.peer.map(|p| p.port());
        let attempt = self
            .tally
            .arrived(request.header("webhook-id").unwrap_or(""), port);
        let reply = (self.behavior)(&Arrival {
            attempt,
            body: &request.body,
        });
        match reply {
            Reply::Reset => Action {
                delay: Duration::ZERO,
                then: Then::Reset,
            },
            Reply::Hang(d) => Action {
                delay: Duration::ZERO,
                then: Then::Hang(Some(d)),
            },
            Reply::Answer {
                status,
                retry_after_s,
                delay,
                body,
            } => {
                let body = match body {
                    ReplyBody::Small => RawBody::Text("ok\n".to_owned()),
                    ReplyBody::Slow { chunks, every } => RawBody::Slow { chunks, every },
                    ReplyBody::Big(n) => RawBody::Big(n),
                };
                let answer = Response {
                    status,
                    retry_after_s,
                    close: false,
                    body,
                };
                Action {
                    delay,
                    then: Then::Answer(answer),
                }
            }
        }
    }

    fn released(&self, request: &RawRequest, outcome: Outcome) {
        let status = match outcome {
            Outcome::Status(status) => Some(status),
            Outcome::Reset | Outcome::Hang => None,
        };
        let port = request.peer.map(|p| p.port());
        self.tally
            .finished(request.header("webhook-id").unwrap_or(""), port, status);
    }
}

/// A running receiver; stopped when dropped.
pub(crate) struct Receiver {
    pub(crate) url: String,
    pub(crate) tally: Arc<Tally>,
    running: RunningReceiver,
}

impl Receiver {
    /// Binds 127.0.0.1 on a free port and serves `behavior`.
    pub(crate) async fn start(behavior: Behavior) -> Result<Self, DrillError> {
        let tally = Arc::new(Tally::new());
        let responder = Arc::new(DrillResponder {
            behavior,
            tally: Arc::clone(&tally),
        });
        let running = RunningReceiver::start(responder, LIMITS)?;
        Ok(Self {
            url: format!("http://{}/webhook", running.addr),
            tally,
            running,
        })
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.running.addr.port()
    }
}
