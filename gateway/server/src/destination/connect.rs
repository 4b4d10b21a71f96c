//! Where a broker client may connect: the destination's host passed through
//! the address guard and `outbound.allow_only`, as HTTP endpoints are.
//!
//! For a plain scheme the client is given the vetted address itself, so a
//! DNS answer cannot change between the check and the connection. A TLS
//! scheme keeps the host name, which the certificate is checked against; its
//! addresses are vetted first, and a rebinding in between is the gap
//! docs/destinations.md names.

use std::io;

use url::Url;

use super::{Credentials, PublishFailure};
use crate::address_guard::{AddressGuard, ConnectGuardError};
use crate::policy::FailureKind;

/// Why no connection was made.
#[derive(Debug)]
pub(crate) enum ConnectRefusal {
    /// The guard refused the host or an address it resolved to: the delivery
    /// is dead, as for HTTP.
    Blocked(String),
    /// The connection or the publish failed.
    Failed(PublishFailure),
}

impl From<PublishFailure> for ConnectRefusal {
    fn from(f: PublishFailure) -> Self {
        Self::Failed(f)
    }
}

/// A destination's vetted address and the credentials to present there.
pub(super) struct Target {
    url: Url,
    pub(super) credentials: Option<Credentials>,
}

/// The port each scheme uses when its URL names none.
fn default_port(scheme: &str) -> u16 {
    match scheme {
        "amqp" => 5672,
        "amqps" => 5671,
        "nats" | "tls" => 4222,
        "https" => 443,
        "http" => 80,
        _ => 6379,
    }
}

fn is_tls(scheme: &str) -> bool {
    matches!(scheme, "amqps" | "tls" | "rediss" | "https")
}

impl Target {
    /// Vets `url`'s host through `guard`.
    pub(super) async fn vet(
        guard: &AddressGuard,
        url: &Url,
        credentials: Option<Credentials>,
    ) -> Result<Self, ConnectRefusal> {
        let host = url.host_str().unwrap_or_default();
        let port = url.port().unwrap_or_else(|| default_port(url.scheme()));
        let addrs = guard
            .resolve_for_connect(host, port)
            .await
            .map_err(|e| match e {
                ConnectGuardError::Blocked { addr } => {
                    ConnectRefusal::Blocked(format!("address {addr} is blocked"))
                }
                ConnectGuardError::NotAllowListed { host } => ConnectRefusal::Blocked(format!(
                    "host {host} is not in the egress allow-list (outbound.allow_only)"
                )),
                ConnectGuardError::Resolve(io) => ConnectRefusal::Failed(PublishFailure::new(
                    FailureKind::Dns,
                    format!("resolving {host}: {io}"),
                )),
            })?;
        let mut url = url.clone();
        if url.port().is_none() {
            let _ = url.set_port(Some(port));
        }
        if !is_tls(url.scheme())
            && let Some(first) = addrs.first()
        {
            let _ = url.set_ip_host(first.ip());
        }
        Ok(Self { url, credentials })
    }

    /// The vetted URL, without credentials.
    pub(super) fn url(&self) -> &Url {
        &self.url
    }

    /// The vetted URL with the username and password in it, percent-encoded,
    /// for the clients that take them there.
    pub(super) fn url_with_credentials(&self) -> Url {
        let mut url = self.url.clone();
        if let Some(c) = &self.credentials {
            if let Some(user) = &c.username {
                let _ = url.set_username(user);
            }
            if let Some(password) = c.password.as_ref().or(c.token.as_ref()) {
                let _ = url.set_password(Some(password));
            }
        }
        url
    }
}

/// The failure kind of an I/O error on a broker connection.
pub(super) fn io_kind(e: &io::Error) -> FailureKind {
    use io::ErrorKind as K;
    match e.kind() {
        K::ConnectionReset | K::BrokenPipe | K::UnexpectedEof | K::ConnectionAborted => {
            FailureKind::Reset
        }
        K::TimedOut => FailureKind::Timeout,
        _ => FailureKind::Connect,
    }
}
