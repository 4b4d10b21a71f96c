//! The outbound HTTP(S) client: pooled hyper-util over the guarded connector and
//! rustls (ring, webpki roots plus `tls.extra_ca_file`).
//!
//! `timeout_ms` covers the whole request. Responses are read to at most 64 KiB,
//! and once a status has arrived a slow or oversized body never turns it into a
//! failure. Redirects are never followed.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Request};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::aws_transport::AwsTransport;
use super::connector::{ConnectError, GuardedConnector};
use crate::address_guard::AddressGuard;
use crate::destination::{NamedCredentials, Publishers};
use crate::policy::FailureKind;
use std::collections::BTreeMap;

/// At most this much of a response body is read.
pub(crate) const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// Why the client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("tls.extra_ca_file {path}: {message}")]
    ExtraCa { path: String, message: String },
    #[error("TLS setup: {0}")]
    Tls(#[from] rustls::Error),
}

/// What came back from one request.
#[derive(Debug)]
pub(crate) struct HttpResponse {
    pub status: u16,
    pub headers: HeaderMap,
    /// Up to [`MAX_RESPONSE_BYTES`] of the body.
    pub body: Bytes,
}

/// Why one request produced no status.
#[derive(Debug)]
pub(crate) enum SendFailure {
    /// The guard refused the host (outside `outbound.allow_only`) or an
    /// address it resolved to: the delivery is dead. Holds what was refused.
    Blocked(String),
    /// A transport failure, retried per the classification table.
    Transport { kind: FailureKind, message: String },
}

/// A pooled client shared by every delivery worker, with the publishers of
/// broker destinations behind the same address guard.
#[derive(Clone)]
pub(crate) struct DeliveryClient {
    http: HttpSender,
    publishers: Arc<Publishers>,
}

/// The pooled HTTP(S) client itself, which the AWS SDK also sends through.
#[derive(Clone)]
pub(crate) struct HttpSender {
    client: Client<HttpsConnector<GuardedConnector>, Full<Bytes>>,
}

fn tls_config(extra_ca: Option<&Path>) -> Result<rustls::ClientConfig, ClientError> {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = extra_ca {
        let err = |message: String| ClientError::ExtraCa {
            path: path.display().to_string(),
            message,
        };
        let certs = CertificateDer::pem_file_iter(path).map_err(|e| err(e.to_string()))?;
        let mut n = 0;
        for cert in certs {
            roots
                .add(cert.map_err(|e| err(e.to_string()))?)
                .map_err(|e| err(e.to_string()))?;
            n += 1;
        }
        if n == 0 {
            return Err(err("no PEM certificates found".into()));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

impl DeliveryClient {
    /// Builds the client, its brokers' publishers with the operator's `named`
    /// credentials.
    ///
    /// # Errors
    /// If `extra_ca` cannot be read or holds no usable certificate.
    pub(crate) fn new(
        guard: AddressGuard,
        extra_ca: Option<&Path>,
        named: BTreeMap<String, NamedCredentials>,
    ) -> Result<Self, ClientError> {
        let http = HttpSender::new(guard.clone(), extra_ca)?;
        let aws = AwsTransport::new(http.clone()).shared();
        let publishers = Arc::new(Publishers::new(guard, named, aws));
        Ok(Self { http, publishers })
    }

    /// The publishers of broker destinations.
    pub(crate) fn publishers(&self) -> &Publishers {
        &self.publishers
    }

    /// Sends `req`, all within `timeout`.
    ///
    /// # Errors
    /// A [`SendFailure`] when no status arrived in time.
    pub(crate) async fn send(
        &self,
        req: Request<Full<Bytes>>,
        timeout: Duration,
    ) -> Result<HttpResponse, SendFailure> {
        self.http.send(req, timeout).await
    }
}

impl HttpSender {
    fn new(guard: AddressGuard, extra_ca: Option<&Path>) -> Result<Self, ClientError> {
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls_config(extra_ca)?)
            .https_or_http()
            .enable_http1()
            .wrap_connector(GuardedConnector::new(guard));
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(30))
            // As many as an endpoint may have in flight (`max_in_flight` ≤ 1024): with
            // fewer, every request above the cap opened and closed a connection.
            // Only connections some concurrency opened are kept, for at most 30 s.
            .pool_max_idle_per_host(1024)
            .build(https);
        Ok(Self { client })
    }

    /// Sends `req`, all within `timeout`.
    ///
    /// # Errors
    /// A [`SendFailure`] when no status arrived in time.
    pub(crate) async fn send(
        &self,
        req: Request<Full<Bytes>>,
        timeout: Duration,
    ) -> Result<HttpResponse, SendFailure> {
        let deadline = tokio::time::Instant::now() + timeout;
        let resp = match tokio::time::timeout_at(deadline, self.client.request(req)).await {
            Err(_) => {
                return Err(transport(
                    FailureKind::Timeout,
                    "no response within timeout_ms",
                ));
            }
            Ok(Err(e)) => return Err(classify_error(&e)),
            Ok(Ok(r)) => r,
        };
        let (parts, mut body) = resp.into_parts();
        let mut buf = BytesMut::new();
        // A status is in hand: a slow, broken or oversized body no longer matters.
        while buf.len() < MAX_RESPONSE_BYTES {
            match tokio::time::timeout_at(deadline, body.frame()).await {
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        let room = MAX_RESPONSE_BYTES - buf.len();
                        buf.extend_from_slice(&data[..data.len().min(room)]);
                    }
                }
                _ => break,
            }
        }
        Ok(HttpResponse {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: buf.freeze(),
        })
    }
}

fn transport(kind: FailureKind, message: impl Into<String>) -> SendFailure {
    SendFailure::Transport {
        kind,
        message: message.into(),
    }
}

/// Maps a client error to a failure kind by walking its source chain.
fn classify_error(e: &hyper_util::client::legacy::Error) -> SendFailure {
    let message = error_chain(e);
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(c) = err.downcast_ref::<ConnectError>() {
            return match c {
                ConnectError::Blocked(addr) => {
                    SendFailure::Blocked(format!("address {addr} is blocked"))
                }
                ConnectError::NotAllowListed(host) => SendFailure::Blocked(format!(
                    "host {host} is not in the egress allow-list (outbound.allow_only)"
                )),
                ConnectError::Dns(_) | ConnectError::NoHost => transport(FailureKind::Dns, message),
                ConnectError::Connect(io) if io.kind() == std::io::ErrorKind::ConnectionReset => {
                    transport(FailureKind::Reset, message)
                }
                ConnectError::Connect(_) => transport(FailureKind::Connect, message),
                ConnectError::Timeout => transport(FailureKind::Timeout, message),
            };
        }
        if err.downcast_ref::<rustls::Error>().is_some() {
            return transport(FailureKind::Tls, message);
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            )
        {
            return transport(FailureKind::Reset, message);
        }
        if let Some(h) = err.downcast_ref::<hyper::Error>()
            && h.is_incomplete_message()
        {
            return transport(FailureKind::Reset, message);
        }
        source = match err.downcast_ref::<std::io::Error>() {
            // io::Error::source() skips the error it wraps; step into it instead.
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => err.source(),
        };
    }
    let kind = if e.is_connect() {
        FailureKind::Connect
    } else {
        FailureKind::Protocol
    };
    transport(kind, message)
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(err) = src {
        s.push_str(": ");
        s.push_str(&err.to_string());
        src = err.source();
    }
    s
}
