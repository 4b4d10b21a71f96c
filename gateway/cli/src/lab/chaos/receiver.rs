//! The chaos receiver's server: a small HTTP/1.1 server on a raw socket, so that it
//! can do what a well-behaved server cannot: refuse connections for a while (the
//! port is bound but not listening), reset a connection (TCP RST) or never answer.
//!
//! Each request is read whole (`content-length` bodies; keep-alive honoured), counted
//! in the [`Tally`], verified against the signing secrets if any, then given the
//! [`Fault`] its arrival number draws. A request whose signature fails is answered
//! 401, as a verifying receiver would, unless its fault is a reset or a hang.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::plan::{Fault, FaultPlan};
use super::tally::{Outcome, Tally};
use hookgate_server::delivery::signer::{SigningSecret, verify};

/// The largest request head read.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The largest request body read.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// How far `webhook-timestamp` may be from now, as Standard Webhooks verifiers check.
const TOLERANCE_S: i64 = 5 * 60;
/// How long an idle keep-alive connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// What every connection shares.
#[derive(Debug)]
pub struct ReceiverContext {
    /// The faults to apply.
    pub plan: FaultPlan,
    /// Secrets to verify signatures with; empty means no check.
    pub secrets: Vec<SigningSecret>,
    /// The counters.
    pub tally: Arc<Tally>,
    arrivals: AtomicU64,
}

impl ReceiverContext {
    /// A context whose first request is number 1.
    pub fn new(plan: FaultPlan, secrets: Vec<SigningSecret>, tally: Arc<Tally>) -> Self {
        Self {
            plan,
            secrets,
            tally,
            arrivals: AtomicU64::new(0),
        }
    }
}

/// A bound socket that is not listening yet: connections to it are refused.
pub struct ReceiverSocket {
    socket: TcpSocket,
    addr: SocketAddr,
}

impl ReceiverSocket {
    /// Binds `addr` (port 0 picks one) without listening.
    ///
    /// # Errors
    /// If the address cannot be bound.
    pub fn bind(addr: SocketAddr) -> std::io::Result<Self> {
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        let addr = socket.local_addr()?;
        Ok(Self { socket, addr })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Starts listening: from now on connections are accepted (and queue until
    /// [`ReceiverListener::serve`] runs).
    ///
    /// # Errors
    /// If listening fails.
    pub fn listen(self) -> std::io::Result<ReceiverListener> {
        let listener = self.socket.listen(1024)?;
        Ok(ReceiverListener { listener })
    }

    /// Refuses connections for `down_for`, then serves until `shutdown`.
    ///
    /// # Errors
    /// If listening fails.
    pub async fn serve_after(
        self,
        down_for: Duration,
        ctx: Arc<ReceiverContext>,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        tokio::select! {
            () = tokio::time::sleep(down_for) => {}
            () = shutdown.cancelled() => return Ok(()),
        }
        self.listen()?.serve(ctx, shutdown).await
    }
}

/// A listening receiver.
pub struct ReceiverListener {
    listener: TcpListener,
}

impl ReceiverListener {
    /// Serves until `shutdown`, then drops every connection.
    ///
    /// # Errors
    /// None so far; failed accepts are skipped.
    pub async fn serve(
        self,
        ctx: Arc<ReceiverContext>,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                accepted = self.listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let _ = stream.set_nodelay(true);
                    connections.spawn(connection(stream, Arc::clone(&ctx), shutdown.clone()));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        connections.shutdown().await;
        Ok(())
    }
}

/// One request, read whole.
struct Request {
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    close: bool,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        let found = self.headers.iter().find(|(n, _)| n == name);
        found.map(|(_, v)| v.as_str())
    }
}

/// Why a connection stops without a request.
enum ReadError {
    /// The peer closed, the read failed, or the connection idled out.
    Gone,
    /// The request cannot be served; answer this status and close.
    Bad(u16),
}

async fn connection(mut stream: TcpStream, ctx: Arc<ReceiverContext>, shutdown: CancellationToken) {
    let mut buf = Vec::new();
    loop {
        let read = tokio::select! {
            () = shutdown.cancelled() => return,
            read = tokio::time::timeout(IDLE_TIMEOUT, read_request(&mut stream, &mut buf)) => read,
        };
        let request = match read {
            Ok(Ok(r)) => r,
            Ok(Err(ReadError::Bad(status))) => {
                let _ = write_response(&mut stream, status, None, true).await;
                return;
            }
            Ok(Err(ReadError::Gone)) | Err(_) => return,
        };
        let n = ctx.arrivals.fetch_add(1, Ordering::SeqCst) + 1;
        let id = request.header("webhook-id").map(str::to_owned);
        let signature_ok = (!ctx.secrets.is_empty()).then(|| signed(&ctx.secrets, &request));
        ctx.tally.arrived(id.as_deref(), signature_ok);
        let fault = ctx.plan.fault(n);
        let delay = match fault {
            Fault::Respond { delay, .. } | Fault::Reset { delay } => delay,
            Fault::Hang => Duration::ZERO,
        };
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(delay) => {}
        }
        match fault {
            Fault::Reset { .. } => {
                ctx.tally.ended(id.as_deref(), Outcome::Reset);
                // A zero linger turns the close into a TCP RST.
                let _ = stream.set_zero_linger();
                return;
            }
            Fault::Hang => {
                ctx.tally.ended(id.as_deref(), Outcome::Hang);
                hold_until_closed(&mut stream, &shutdown).await;
                return;
            }
            Fault::Respond { status, .. } => {
                let status = if signature_ok == Some(false) {
                    401
                } else {
                    status
                };
                let retry_after = ctx.plan.retry_after(status);
                let written = write_response(&mut stream, status, retry_after, request.close).await;
                ctx.tally.ended(id.as_deref(), Outcome::Status(status));
                if written.is_err() || request.close {
                    return;
                }
            }
        }
    }
}

/// Whether the Standard Webhooks headers verify with any secret, within the
/// timestamp tolerance.
fn signed(secrets: &[SigningSecret], request: &Request) -> bool {
    let (Some(id), Some(ts), Some(sig)) = (
        request.header("webhook-id"),
        request.header("webhook-timestamp"),
        request.header("webhook-signature"),
    ) else {
        return false;
    };
    let Ok(ts) = ts.trim().parse::<i64>() else {
        return false;
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    if (now - ts).abs() > TOLERANCE_S {
        return false;
    }
    secrets
        .iter()
        .any(|s| verify(s, id, ts, &request.body, sig))
}

/// Reads until the peer closes (or errs), discarding what it sends.
async fn hold_until_closed(stream: &mut TcpStream, shutdown: &CancellationToken) {
    let mut sink = [0u8; 4096];
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            read = stream.read(&mut sink) => {
                if !matches!(read, Ok(n) if n > 0) {
                    return;
                }
            }
        }
    }
}

/// Reads one request from `stream`; `buf` carries bytes already read past the
/// previous request.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<Request, ReadError> {
    let head_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Err(ReadError::Bad(431));
        }
        fill(stream, buf).await?;
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let version_ok = request_line
        .split(' ')
        .nth(2)
        .is_some_and(|v| v.starts_with("HTTP/1."));
    if !version_ok {
        return Err(ReadError::Bad(400));
    }
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(ReadError::Bad(400));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut request = Request {
        headers,
        body: Vec::new(),
        close: request_line.ends_with("HTTP/1.0"),
    };
    if let Some(conn) = request.header("connection") {
        request.close = conn.eq_ignore_ascii_case("close");
    }
    if request.header("transfer-encoding").is_some() {
        return Err(ReadError::Bad(411));
    }
    let len = match request.header("content-length") {
        None => 0,
        Some(v) => v.parse::<usize>().map_err(|_| ReadError::Bad(400))?,
    };
    if len > MAX_BODY_BYTES {
        return Err(ReadError::Bad(413));
    }
    let body_start = head_end + 4;
    while buf.len() < body_start + len {
        fill(stream, buf).await?;
    }
    request.body = buf[body_start..body_start + len].to_vec();
    buf.drain(..body_start + len);
    Ok(request)
}

async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Result<(), ReadError> {
    let mut chunk = [0u8; 8192];
    match stream.read(&mut chunk).await {
        Ok(n) if n > 0 => {
            buf.extend_from_slice(&chunk[..n]);
            Ok(())
        }
        _ => Err(ReadError::Gone),
    }
}

async fn write_response(
    stream: &mut TcpStream,
    status: u16,
    retry_after: Option<u64>,
    close: bool,
) -> std::io::Result<()> {
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown");
    let body = format!("chaos-receiver: {status} {reason}\n");
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\ndate: {}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n",
        httpdate::fmt_http_date(SystemTime::now()),
        body.len(),
    );
    if let Some(s) = retry_after {
        head.push_str(&format!("retry-after: {s}\r\n"));
    }
    if close {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    head.push_str(&body);
    stream.write_all(head.as_bytes()).await?;
    stream.flush().await
}
