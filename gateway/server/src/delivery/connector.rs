//! The SSRF-safe connector: resolves the host itself, checks every address with
//! the [`AddressGuard`], and connects only to checked addresses.
//!
//! hyper-util's `HttpConnector` skips the resolver for IP literals, so the check
//! cannot live in a resolver; it sits here, under TLS. Because the addresses we
//! connect to are the ones we checked, DNS rebinding between check and connect fails.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::address_guard::{AddressGuard, ConnectGuardError};

/// How long one TCP connect may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a connection was not made; the worker maps each to a failure kind.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error("address {0} is not allowed (non-global)")]
    Blocked(std::net::IpAddr),
    #[error("host {0} is not in the egress allow-list (outbound.allow_only)")]
    NotAllowListed(String),
    #[error("DNS resolution failed: {0}")]
    Dns(std::io::Error),
    #[error("connect failed: {0}")]
    Connect(std::io::Error),
    #[error("connect timed out")]
    Timeout,
    #[error("URL has no host")]
    NoHost,
}

/// A `tower::Service<Uri>` that hyper's client uses to open connections.
#[derive(Clone)]
pub(crate) struct GuardedConnector {
    guard: AddressGuard,
}

impl GuardedConnector {
    /// A connector that only reaches addresses `guard` permits.
    pub(crate) fn new(guard: AddressGuard) -> Self {
        Self { guard }
    }
}

async fn connect(guard: AddressGuard, uri: Uri) -> Result<TokioIo<TcpStream>, ConnectError> {
    let host = uri.host().ok_or(ConnectError::NoHost)?;
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    let addrs: Vec<SocketAddr> =
        guard
            .resolve_for_connect(host, port)
            .await
            .map_err(|e| match e {
                ConnectGuardError::Blocked { addr } => ConnectError::Blocked(addr),
                ConnectGuardError::NotAllowListed { host } => ConnectError::NotAllowListed(host),
                ConnectGuardError::Resolve(e) => ConnectError::Dns(e),
            })?;
    let mut last = None;
    for addr in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok(TokioIo::new(stream));
            }
            Ok(Err(e)) => last = Some(ConnectError::Connect(e)),
            Err(_) => last = Some(ConnectError::Timeout),
        }
    }
    Err(last.unwrap_or(ConnectError::Dns(std::io::Error::other("no addresses"))))
}

impl tower_service::Service<Uri> for GuardedConnector {
    type Response = TokioIo<TcpStream>;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, ConnectError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ConnectError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        Box::pin(connect(self.guard.clone(), uri))
    }
}
