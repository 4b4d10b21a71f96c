//! A webhook receiver on a raw socket, shared by the chaos receiver, the drills and
//! the tests: it can do what a well-behaved server cannot, refuse connections for a
//! while (the port is bound but not listening), reset a connection (TCP RST) or
//! never answer.
//!
//! Each request is read whole (`content-length` bodies; keep-alive honoured) and
//! handed to a [`Responder`], which picks an [`Action`]: an answer, a reset or a
//! hang, after a delay. Every wait is bounded: reading, idling between requests,
//! hanging (by the peer, a limit or the shutdown) and writing.

mod wire;

pub use wire::{RawRequest, ReadError, ReadLimits, ReplyBody, Response};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Writing one answer may take this long.
const WRITE_LIMIT: Duration = Duration::from_secs(30);

/// What the receiver does with a request, after `delay`.
#[derive(Debug, Clone)]
pub struct Action {
    pub delay: Duration,
    pub then: Then,
}

/// The receiver's move once the delay is over.
#[derive(Debug, Clone)]
pub enum Then {
    Answer(Response),
    /// Resets the connection (RST) without answering.
    Reset,
    /// Says nothing until the peer gives up (or this long, when given), then closes.
    Hang(Option<Duration>),
}

/// How a request ended, from the receiver's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with this status.
    Status(u16),
    /// The connection was reset without an answer.
    Reset,
    /// Never answered.
    Hang,
}

/// Decides what to do with each request, and hears how it ended.
pub trait Responder: Send + Sync + 'static {
    /// The action for `request`.
    fn respond(&self, request: &RawRequest) -> Action;

    /// The outcome is settled: called once the delay is over, before an answer is
    /// written, a reset sent, or a hang begun.
    fn settled(&self, _request: &RawRequest, _outcome: Outcome) {}

    /// The receiver is done with the request: before an answer is written, at a
    /// reset, and when a hang ends.
    fn released(&self, _request: &RawRequest, _outcome: Outcome) {}

    /// The answer to a request that cannot be served (`status` says why).
    fn bad_request(&self, status: u16) -> Response {
        Response::text(status, "")
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
    pub async fn serve_after<R: Responder>(
        self,
        down_for: Duration,
        responder: Arc<R>,
        limits: ReadLimits,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        tokio::select! {
            () = tokio::time::sleep(down_for) => {}
            () = shutdown.cancelled() => return Ok(()),
        }
        self.listen()?.serve(responder, limits, shutdown).await
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
    /// None so far; failed accepts are skipped (after a short pause).
    pub async fn serve<R: Responder>(
        self,
        responder: Arc<R>,
        limits: ReadLimits,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                accepted = self.listener.accept() => {
                    let Ok((stream, _)) = accepted else {
                        // Out of descriptors, say: back off a little.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    let responder = Arc::clone(&responder);
                    connections.spawn(connection(stream, responder, limits, shutdown.clone()));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        connections.shutdown().await;
        Ok(())
    }
}

/// A receiver serving on `127.0.0.1` in the background; stopped when dropped.
pub struct RunningReceiver {
    pub addr: SocketAddr,
    stop: CancellationToken,
}

impl RunningReceiver {
    /// Binds a free loopback port and serves `responder` there.
    ///
    /// # Errors
    /// If no port can be bound.
    pub fn start<R: Responder>(responder: Arc<R>, limits: ReadLimits) -> std::io::Result<Self> {
        let socket = ReceiverSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let addr = socket.local_addr();
        let listener = socket.listen()?;
        let stop = CancellationToken::new();
        tokio::spawn(listener.serve(responder, limits, stop.clone()));
        Ok(Self { addr, stop })
    }
}

impl Drop for RunningReceiver {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Serves the requests of one connection, one after the other.
async fn connection<R: Responder>(
    mut stream: TcpStream,
    responder: Arc<R>,
    limits: ReadLimits,
    shutdown: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().ok();
    let mut buf = Vec::new();
    loop {
        let read = tokio::select! {
            () = shutdown.cancelled() => return,
            read = wire::read_request(&mut stream, &mut buf, limits) => read,
        };
        let request = match read {
            Ok(r) => RawRequest { peer, ..r },
            Err(ReadError::Bad(status)) => {
                let mut answer = responder.bad_request(status);
                answer.close = true;
                let _ =
                    tokio::time::timeout(WRITE_LIMIT, wire::write_response(&mut stream, &answer))
                        .await;
                return;
            }
            Err(ReadError::Gone) => return,
        };
        let action = responder.respond(&request);
        if !action.delay.is_zero() {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(action.delay) => {}
            }
        }
        match action.then {
            Then::Reset => {
                responder.settled(&request, Outcome::Reset);
                responder.released(&request, Outcome::Reset);
                // A zero linger turns the close into a TCP RST.
                let _ = stream.set_zero_linger();
                return;
            }
            Then::Hang(limit) => {
                responder.settled(&request, Outcome::Hang);
                let held = hold_until_closed(&mut stream, &shutdown);
                match limit {
                    Some(limit) => drop(tokio::time::timeout(limit, held).await),
                    None => held.await,
                }
                responder.released(&request, Outcome::Hang);
                return;
            }
            Then::Answer(mut answer) => {
                let outcome = Outcome::Status(answer.status);
                responder.settled(&request, outcome);
                responder.released(&request, outcome);
                answer.close |= request.close;
                let written =
                    tokio::time::timeout(WRITE_LIMIT, wire::write_response(&mut stream, &answer))
                        .await;
                if !matches!(written, Ok(Ok(()))) || answer.close {
                    return;
                }
            }
        }
    }
}

/// Reads until the peer closes (or errs) or `shutdown`, discarding what it sends.
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
