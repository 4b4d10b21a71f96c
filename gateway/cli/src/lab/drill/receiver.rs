//! The drills' receiver: HTTP/1.1 on raw loopback TCP, so that besides answering it
//! can reset a connection or hang, and a tally of what it saw.
//!
//! Each request is handed to a behaviour, which picks the reply from the attempt
//! number (how many times its `webhook-id` arrived before) and the body. The tally
//! counts requests and 2xx answers per id and per second since the start, and the
//! requests in progress: from the moment a request has been read to the moment its
//! answer starts going out, a window that lies inside the gateway's own in-flight
//! window, so the tally never sees more than the gateway had.
//!
//! Every wait is bounded: reading a request, the idle time between two requests of a
//! connection, a hang, writing a reply.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::DrillError;

/// The largest request head read.
const MAX_HEAD: usize = 64 * 1024;
/// The largest request body read (the gateway's own ingest limit is 256 KiB).
const MAX_BODY: usize = 1024 * 1024;
/// A connection idle this long between requests is closed.
const IDLE: Duration = Duration::from_secs(60);
/// Reading one request, once it has begun, may take this long.
const READ_LIMIT: Duration = Duration::from_secs(30);
/// Writing one reply may take this long.
const WRITE_LIMIT: Duration = Duration::from_secs(30);

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

    /// A request has been read; returns its attempt number for this id.
    fn arrived(&self, id: &str) -> u32 {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let second = self.second();
        let mut c = self.counts();
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
    fn finished(&self, id: &str, status: Option<u16>) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
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

    /// Counts per second since the receiver started.
    pub(crate) fn per_second(&self) -> Vec<PerSecond> {
        self.counts().per_second.clone()
    }

    /// Time since the receiver started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// A running receiver; stopped when dropped.
pub(crate) struct Receiver {
    pub(crate) url: String,
    pub(crate) tally: Arc<Tally>,
    stop: CancellationToken,
}

impl Receiver {
    /// Binds 127.0.0.1 on a free port and serves `behavior`.
    pub(crate) async fn start(behavior: Behavior) -> Result<Self, DrillError> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let url = format!("http://{}/webhook", listener.local_addr()?);
        let tally = Arc::new(Tally::new());
        let stop = CancellationToken::new();
        let (t, s) = (Arc::clone(&tally), stop.clone());
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    () = s.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => {
                            // Out of descriptors, say: back off a little.
                            tokio::time::sleep(Duration::from_millis(10)).await;
                            continue;
                        }
                    },
                };
                let (b, t, s) = (Arc::clone(&behavior), Arc::clone(&t), s.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        () = s.cancelled() => {}
                        () = connection(stream, &b, &t) => {}
                    }
                });
            }
        });
        Ok(Self { url, tally, stop })
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Serves the requests of one connection, one after the other (keep-alive).
async fn connection(mut stream: TcpStream, behavior: &Behavior, tally: &Tally) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    loop {
        let Some((id, body)) = read_request(&mut stream, &mut buf).await else {
            return;
        };
        let attempt = tally.arrived(&id);
        let reply = behavior(&Arrival {
            attempt,
            body: &body,
        });
        match reply {
            Reply::Reset => {
                tally.finished(&id, None);
                let _ = stream.set_zero_linger();
                return;
            }
            Reply::Hang(d) => {
                let _ = tokio::time::timeout(d, wait_closed(&mut stream)).await;
                tally.finished(&id, None);
                return;
            }
            Reply::Answer {
                status,
                retry_after_s,
                delay,
                body,
            } => {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                tally.finished(&id, Some(status));
                let written = tokio::time::timeout(
                    WRITE_LIMIT,
                    write_reply(&mut stream, status, retry_after_s, body),
                )
                .await;
                if !matches!(written, Ok(Ok(()))) {
                    return;
                }
            }
        }
    }
}

/// Reads one request (head and `content-length` body) into `buf`; returns its
/// `webhook-id` and body. `None` when the peer closed, was idle too long, or sent
/// something this receiver does not take.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, Vec<u8>)> {
    let mut chunk = [0u8; 16 * 1024];
    let mut limit = IDLE;
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let (mut id, mut len) = (String::new(), 0usize);
            for line in head.lines().skip(1) {
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
                match name.as_str() {
                    "webhook-id" => value.clone_into(&mut id),
                    "content-length" => len = value.parse().ok()?,
                    "transfer-encoding" => return None,
                    _ => {}
                }
            }
            if len > MAX_BODY {
                return None;
            }
            let total = end + 4 + len;
            while buf.len() < total {
                let n = tokio::time::timeout(READ_LIMIT, stream.read(&mut chunk))
                    .await
                    .ok()?
                    .ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[end + 4..total].to_vec();
            buf.drain(..total);
            return Some((id, body));
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let n = tokio::time::timeout(limit, stream.read(&mut chunk))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        limit = READ_LIMIT;
    }
}

/// Returns when the peer closes the connection (or it fails).
async fn wait_closed(stream: &mut TcpStream) {
    let mut chunk = [0u8; 1024];
    while let Ok(n) = stream.read(&mut chunk).await {
        if n == 0 {
            return;
        }
    }
}

async fn write_reply(
    stream: &mut TcpStream,
    status: u16,
    retry_after_s: Option<u64>,
    body: ReplyBody,
) -> std::io::Result<()> {
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Drill");
    let len = match body {
        ReplyBody::Small => 3,
        ReplyBody::Slow { chunks, .. } => 100 * chunks as usize,
        ReplyBody::Big(n) => n,
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain\r\ncontent-length: {len}\r\n"
    );
    if let Some(s) = retry_after_s {
        head.push_str(&format!("retry-after: {s}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    match body {
        ReplyBody::Small => stream.write_all(b"ok\n").await?,
        ReplyBody::Slow { chunks, every } => {
            for _ in 0..chunks {
                tokio::time::sleep(every).await;
                stream.write_all(&[b's'; 100]).await?;
            }
        }
        ReplyBody::Big(n) => {
            let block = vec![b'x'; 64 * 1024];
            let mut left = n;
            while left > 0 {
                let k = left.min(block.len());
                stream.write_all(&block[..k]).await?;
                left -= k;
            }
        }
    }
    stream.flush().await
}
