//! The HTTP server loop: hyper's HTTP/1 with header limits and a deadline for
//! each request head (idle time before it included), a cap on concurrent
//! connections and on those of one address, guarded body reads (a whole-body deadline and a per-tenant cap on
//! reads at once, see [`read_guard`]), answers sent before their body's end
//! marked `Connection: close` and their connection closed without a reset (see
//! `body/unread.rs` and `lingering_close.rs`), and graceful shutdown that lets requests
//! in progress finish.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use super::body::read_guard::{GuardedBody, ReadClaim, TenantReadGate};
use super::body::unread::{self, BodyEnd, EndTracked};
use super::lingering_close::LingeringClose;
use super::peer_connections::PeerConnections;
use crate::config::Limits;

/// How long shutdown waits for requests in progress.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// The answer to a connection over `max_connections`.
const TOO_MANY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
connection: close\r\ncontent-length: 91\r\n\r\n\
{\"error\":{\"code\":\"too_many_connections\",\"message\":\"connection limit reached; retry later\"}}";

/// Serves `app` on `listener` until `shutdown`.
///
/// # Errors
/// Only if the listener itself fails.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let connections = Arc::new(Semaphore::new(limits.max_connections));
    let peers = PeerConnections::new(limits.connections_per_peer);
    let read_gate = TenantReadGate::new(limits.body_reads_per_tenant);
    let body_deadline = Duration::from_millis(limits.body_read_timeout);
    let graceful = GracefulShutdown::new();
    let mut http = http1::Builder::new();
    http.max_headers(limits.max_headers)
        .max_buf_size(limits.header_bytes)
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(limits.header_read_timeout));
    loop {
        let (mut stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let permits = peers
            .try_open(peer.ip())
            .and_then(|p| Some((p, Arc::clone(&connections).try_acquire_owned().ok()?)));
        let Some(permit) = permits else {
            tokio::spawn(async move {
                let _ = stream.write_all(TOO_MANY).await;
                let _ = stream.shutdown().await;
            });
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let read_gate = Arc::clone(&read_gate);
        let stream = LingeringClose::new(stream);
        let linger = stream.wanted();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let (request, end) = guard_body(request, &read_gate, body_deadline);
            let answer = app.clone().call(request);
            let linger = Arc::clone(&linger);
            async move {
                let mut response = answer.await?;
                if unread::close_if_unread(&mut response, &end) {
                    linger.store(true, Ordering::Relaxed);
                }
                Ok::<_, Infallible>(response)
            }
        });
        let conn = http.serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still running after the drain timeout; closing them");
    }
    Ok(())
}

/// Wraps the body in the read guards; the deadline runs from the end of the head.
/// The [`BodyEnd`] says, once answered, whether the body was read to its end.
fn guard_body(
    request: Request<Incoming>,
    read_gate: &Arc<TenantReadGate>,
    deadline: Duration,
) -> (Request<Body>, BodyEnd) {
    let (mut parts, body) = request.into_parts();
    let claim = ReadClaim::new(Arc::clone(read_gate));
    // Authentication finds the claim here and names the tenant on it.
    parts.extensions.insert(claim.clone());
    let deadline = tokio::time::Instant::now() + deadline;
    let (body, end) = EndTracked::new(body);
    let body = Body::new(GuardedBody::new(body, deadline, claim));
    (Request::from_parts(parts, body), end)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_overload_answer_is_well_formed() {
        let text = std::str::from_utf8(super::TOO_MANY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(body.len(), len);
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "too_many_connections");
    }
}
