//! The SSRF guard: the one place that decides which endpoint URLs and IP
//! addresses hookgate may reach.
//!
//! Endpoint URLs are normalized with the `url` crate before they are stored,
//! so `127.1` and `0x7f.1` are seen as `127.0.0.1`. Any address that is not
//! globally routable is refused twice: when an endpoint is created
//! ([`AddressGuard::check_at_creation`], best effort because DNS can change)
//! and when a connection is opened ([`AddressGuard::resolve_for_connect`],
//! authoritative: the connector connects only to the addresses it returns).
//! `allow_private_subnets` lifts the block for listed CIDRs.
//!
//! With `outbound.allow_only` set, the URL's host must also match the egress
//! allow-list ([`EgressAllowList`]), at both checks and before any lookup.
//!
//! IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are always judged as the
//! IPv4 address they carry, for blocking and for the allow list alike.
//!
//! Names are resolved by an async [`DnsResolver`], never on tokio's blocking
//! pool, at most [`MAX_CONCURRENT_LOOKUPS`] at once and each within a timeout;
//! those asking for the same host meanwhile share its answer, so a host with a
//! slow nameserver takes one slot however many deliveries wait for it.

use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use ipnet::IpNet;
use url::{Host, Url};

/// How long endpoint creation waits for DNS before accepting the URL anyway.
const CREATION_RESOLVE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a connection waits for DNS; matches the 5 s connect timeout.
const CONNECT_RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// How many lookups may be in flight at once, whatever the resolver; more
/// wait (inside their timeout) rather than pile up sockets or threads.
/// Concurrent lookups of one host and port are one lookup.
pub(crate) const MAX_CONCURRENT_LOOKUPS: usize = 64;

mod egress;
mod endpoint_url;
mod lookups;
mod ranges;
mod resolver;
pub(crate) use egress::EgressAllowList;
pub use egress::EgressRule;
pub use endpoint_url::normalize_endpoint_url;
pub(crate) use endpoint_url::{ConnectGuardError, UrlError, is_origin};
use lookups::Lookups;
use ranges::BLOCKED;
pub use resolver::DnsResolver;
pub use resolver::LookupFuture;
pub use resolver::Resolver;

/// Whether an address is globally routable, per the IANA special-purpose
/// registries as narrowed by the design (our own table, since
/// `IpAddr::is_global` is unstable). IPv4-mapped IPv6 is judged as IPv4.
pub(crate) fn is_global(addr: IpAddr) -> bool {
    blocked_range(addr).is_none()
}

/// The name of the blocked range holding `addr`, if any (after unmapping).
fn blocked_range(addr: IpAddr) -> Option<&'static str> {
    let addr = addr.to_canonical();
    BLOCKED
        .iter()
        .find(|(net, _)| net.contains(&addr))
        .map(|&(_, name)| name)
}

/// Turns an allow-list entry inside `::ffff:0:0/96` into the IPv4 net it
/// covers, so the allow list is matched against canonical addresses.
fn canonical_net(net: IpNet) -> IpNet {
    if let IpNet::V6(v6) = net
        && v6.prefix_len() >= 96
        && let Some(v4) = v6.addr().to_ipv4_mapped()
        && let Ok(n) = IpNet::new(IpAddr::V4(v4), v6.prefix_len() - 96)
    {
        return n.trunc();
    }
    net.trunc()
}

/// Decides, at endpoint creation and at connect time, whether hookgate may
/// reach an address: global ones always, others only inside an allowed
/// subnet (`allow_private_subnets`).
#[derive(Clone)]
pub(crate) struct AddressGuard {
    allow: Vec<IpNet>,
    /// `outbound.allow_only`; `None` lets any host through to the address checks.
    allow_only: Option<Arc<EgressAllowList>>,
    /// Shared by the guard's clones: bounds lookups across all deliveries.
    lookups: Arc<Lookups>,
}

impl std::fmt::Debug for AddressGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddressGuard")
            .field("allow", &self.allow)
            .field("allow_only", &self.allow_only)
            .finish_non_exhaustive()
    }
}

impl Default for AddressGuard {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl AddressGuard {
    /// Builds a guard that also permits `allow_private_subnets` (tests, the
    /// quickstart and the demo allow `127.0.0.0/8`).
    pub(crate) fn new(allow_private_subnets: Vec<IpNet>) -> Self {
        let allow = allow_private_subnets
            .into_iter()
            .map(canonical_net)
            .collect();
        Self {
            allow,
            allow_only: None,
            lookups: Arc::new(Lookups::new(Arc::new(DnsResolver::from_system()))),
        }
    }

    /// The same guard resolving names with `resolver`.
    pub(crate) fn with_resolver(mut self, resolver: Arc<dyn Resolver>) -> Self {
        self.lookups = Arc::new(Lookups::new(resolver));
        self
    }

    /// The same guard refusing, before any lookup, every host that matches
    /// none of `rules` (`outbound.allow_only`); `None` refuses none.
    pub(crate) fn with_allow_only(mut self, rules: Option<&[EgressRule]>) -> Self {
        self.allow_only = rules.map(|rules| Arc::new(EgressAllowList::new(rules)));
        self
    }

    /// True if the URL host `host` (`literal` when it is an IP address) may be
    /// reached as far as the egress allow-list is concerned.
    fn allow_listed(&self, host: &str, literal: Option<IpAddr>) -> bool {
        match (&self.allow_only, literal) {
            (None, _) => true,
            (Some(list), Some(addr)) => list.permits_ip(addr),
            (Some(list), None) => list.permits_name(host),
        }
    }

    /// True if hookgate may connect to `addr`: global, or inside an allowed
    /// subnet. IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is checked as the IPv4
    /// address, both for blocking and for the allow list.
    pub(crate) fn permits(&self, addr: IpAddr) -> bool {
        let addr = addr.to_canonical();
        is_global(addr) || self.allow.iter().any(|net| net.contains(&addr))
    }

    /// Checks an endpoint URL when it is created or changed, so a blocked
    /// target is refused with 422 `url_blocked` up front.
    ///
    /// The host is first matched against the egress allow-list, if any, with
    /// no lookup. An IP-literal host is checked directly. A name is resolved (2 s
    /// timeout) and every address must be permitted. A name that does not
    /// resolve (NXDOMAIN, resolver error, timeout) is accepted with a warning:
    /// DNS may change, and the connect-time check still applies.
    ///
    /// # Errors
    ///
    /// [`UrlError::NotAllowListed`] for a host outside `outbound.allow_only`,
    /// [`UrlError::Blocked`] for the first refused address, or
    /// [`UrlError::NoHost`] if the URL has no host.
    pub(crate) async fn check_at_creation(&self, url: &Url) -> Result<(), UrlError> {
        let (host, literal) = match url.host() {
            None => return Err(UrlError::NoHost),
            Some(Host::Ipv4(a)) => (url.host_str().unwrap_or_default(), Some(IpAddr::V4(a))),
            Some(Host::Ipv6(a)) => (url.host_str().unwrap_or_default(), Some(IpAddr::V6(a))),
            Some(Host::Domain(d)) => (d, None),
        };
        if !self.allow_listed(host, literal) {
            let host = host.to_owned();
            return Err(UrlError::NotAllowListed { host });
        }
        let domain = match literal {
            Some(addr) => return self.check_one(addr),
            None => host,
        };
        let port = url.port_or_known_default().unwrap_or(80);
        let lookup = self
            .lookups
            .resolve(domain, port, CREATION_RESOLVE_TIMEOUT)
            .await;
        let addrs = match lookup {
            Ok(Ok(addrs)) => addrs,
            Ok(Err(error)) => {
                tracing::warn!(host = domain, %error,
                    "endpoint host does not resolve; accepted, checked again at connect time");
                return Ok(());
            }
            Err(_) => {
                tracing::warn!(host = domain, timeout = ?CREATION_RESOLVE_TIMEOUT,
                    "endpoint host resolution timed out; accepted, checked again at connect time");
                return Ok(());
            }
        };
        for sa in addrs {
            self.check_one(sa.ip())?;
        }
        Ok(())
    }

    fn check_one(&self, addr: IpAddr) -> Result<(), UrlError> {
        if self.permits(addr) {
            Ok(())
        } else {
            Err(UrlError::Blocked { addr })
        }
    }

    /// Resolves `host:port` for a connection and returns the only addresses
    /// the connector may connect to (IPv4-mapped ones unmapped, duplicates
    /// removed). IP literals, including bracketed IPv6 as returned by
    /// `Url::host_str`, skip DNS.
    ///
    /// If any resolved address is refused the whole host is refused, so a
    /// DNS answer mixing public and private addresses (rebinding) gains
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`ConnectGuardError::NotAllowListed`] for a host outside
    /// `outbound.allow_only` (checked before any lookup);
    /// [`ConnectGuardError::Blocked`] for the first refused address;
    /// [`ConnectGuardError::Resolve`] if resolution fails, times out (5 s)
    /// or returns no address.
    pub(crate) async fn resolve_for_connect(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, ConnectGuardError> {
        let literal = parse_ip_literal(host)?;
        if !self.allow_listed(host, literal) {
            tracing::debug!(host, "host not in outbound.allow_only");
            let host = host.to_owned();
            return Err(ConnectGuardError::NotAllowListed { host });
        }
        let resolved: Vec<SocketAddr> = match literal {
            Some(ip) => vec![SocketAddr::new(ip, port)],
            None => {
                let lookup = self
                    .lookups
                    .resolve(host, port, CONNECT_RESOLVE_TIMEOUT)
                    .await
                    .map_err(|_| {
                        ConnectGuardError::Resolve(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("resolving {host} timed out"),
                        ))
                    })?;
                lookup.map_err(ConnectGuardError::Resolve)?
            }
        };
        let mut out: Vec<SocketAddr> = Vec::with_capacity(resolved.len());
        for sa in resolved {
            let ip = sa.ip();
            if !self.permits(ip) {
                tracing::debug!(host, %ip, range = blocked_range(ip), "blocked address");
                return Err(ConnectGuardError::Blocked { addr: ip });
            }
            let sa = SocketAddr::new(ip.to_canonical(), sa.port());
            if !out.contains(&sa) {
                out.push(sa);
            }
        }
        if out.is_empty() {
            return Err(ConnectGuardError::Resolve(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{host} resolved to no address"),
            )));
        }
        Ok(out)
    }
}

/// Parses `host` as an IP literal (`1.2.3.4`, `::1` or `[::1]`); `None`
/// means it is a name. Brackets around something that is not IPv6 are an
/// error rather than a name to look up.
fn parse_ip_literal(host: &str) -> Result<Option<IpAddr>, ConnectGuardError> {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner
            .parse::<Ipv6Addr>()
            .map(|a| Some(IpAddr::V6(a)))
            .map_err(|_| {
                ConnectGuardError::Resolve(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("invalid IPv6 literal {host:?}"),
                ))
            });
    }
    Ok(host.parse::<IpAddr>().ok())
}

#[cfg(test)]
mod tests;
