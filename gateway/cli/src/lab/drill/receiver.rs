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

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// Requests and 2xx answers for one id.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PerId {
    pub(crate) requests: u32,
    pub(crate) ok: u32,
}

/// Requests that arrived at a drill's receiver, and 2xx answers it gave, in one
/// second.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PerSecond {
    pub requests: u64,
    pub ok: u64,
}

#[derive(Default)]
struct Counts {
    requests: u64,
    ok: u64,
    per_id: HashMap<String, PerId>,
    per_second: Vec<PerSecond>,
    /// When each id arrived, since the start, oldest first.
    arrivals: HashMap<String, Vec<Duration>>,
    /// The id of the request in progress on each client port (one at a time per
    /// connection).
    in_progress: HashMap<u16, String>,
}

/// What the receiver saw.
pub(crate) struct Tally {
    started: Instant,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    counts: Mutex<Counts>,
}

impl Tally {
    fn new() -> Self {
        Self {
            started: Instant::now(),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            counts: Mutex::new(Counts::default()),
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn second(&self) -> usize {
        usize::try_from(self.started.elapsed().as_secs()).unwrap_or(usize::MAX)
    }

    /// A request has been read (from client port `port`); returns its attempt
    /// number for this id.
    fn arrived(&self, id: &str, port: Option<u16>) -> u32 {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let second = self.second();
        let since_start = self.started.elapsed();
        let mut c = self.counts();
        if let Some(port) = port {
            c.in_progress.insert(port, id.to_owned());
        }
        c.arrivals
            .entry(id.to_owned())
            .or_default()
            .push(since_start);
        c.requests += 1;
        if c.per_second.len() <= second {
            c.per_second.resize(second + 1, PerSecond::default());
        }
        c.per_second[second].requests += 1;
        let entry = c.per_id.entry(id.to_owned()).or_default();
        entry.requests += 1;
        entry.requests - 1
    }

    /// The request is over: answered `status`, or reset or hung up on (`None`).
    fn finished(&self, id: &str, port: Option<u16>, status: Option<u16>) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if let Some(port) = port {
            self.counts().in_progress.remove(&port);
        }
        if status.is_some_and(|s| (200..300).contains(&s)) {
            let second = self.second();
            let mut c = self.counts();
            c.ok += 1;
            if c.per_second.len() <= second {
                c.per_second.resize(second + 1, PerSecond::default());
            }
            c.per_second[second].ok += 1;
            c.per_id.entry(id.to_owned()).or_default().ok += 1;
        }
    }

    /// Requests in progress now.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// The most requests ever in progress at once.
    pub(crate) fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    /// Requests that arrived, and 2xx answers given, in all.
    pub(crate) fn totals(&self) -> (u64, u64) {
        let c = self.counts();
        (c.requests, c.ok)
    }

    /// Distinct ids that arrived.
    pub(crate) fn distinct(&self) -> usize {
        self.counts().per_id.len()
    }

    /// The ids answered 2xx at least once.
    pub(crate) fn delivered(&self) -> HashSet<String> {
        let c = self.counts();
        c.per_id
            .iter()
            .filter(|(_, n)| n.ok > 0)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Every id's counts.
    pub(crate) fn per_id(&self) -> HashMap<String, PerId> {
        self.counts().per_id.clone()
    }

    /// The ids of the requests in progress from any of these client ports.
    pub(crate) fn in_progress_from(&self, ports: &HashSet<u16>) -> Vec<String> {
        let c = self.counts();
        c.in_progress
            .iter()
            .filter(|(port, _)| ports.contains(port))
            .map(|(_, id)| id.clone())
            .collect()
    }

    /// When `id` first arrived after `after` (both since the receiver's start).
    pub(crate) fn arrival_after(&self, id: &str, after: Duration) -> Option<Duration> {
        let c = self.counts();
        let times = c.arrivals.get(id)?;
        times.iter().copied().find(|t| *t > after)
    }

    /// Counts per second since the receiver started.
    pub(crate) fn per_second(&self) -> Vec<PerSecond> {
        self.counts().per_second.clone()
    }

    /// Time since the receiver started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

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
