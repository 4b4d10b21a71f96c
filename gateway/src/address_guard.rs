//! The SSRF guard: the one place that decides which endpoint URLs and IP
//! addresses hookgate may reach (design §1 rule 9).
//!
//! Endpoint URLs are normalized with the `url` crate before they are stored,
//! so `127.1` and `0x7f.1` are seen as `127.0.0.1`. Any address that is not
//! globally routable is refused twice: when an endpoint is created
//! ([`AddressGuard::check_at_creation`], best effort because DNS can change)
//! and when a connection is opened ([`AddressGuard::resolve_for_connect`],
//! authoritative: the connector connects only to the addresses it returns).
//! `allow_private_subnets` lifts the block for listed CIDRs.
//!
//! IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are always judged as the
//! IPv4 address they carry, for blocking and for the allow list alike.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use ipnet::IpNet;
use url::{Host, Url};

/// How long endpoint creation waits for DNS before accepting the URL anyway.
const CREATION_RESOLVE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a connection waits for DNS; matches the 5 s connect timeout.
const CONNECT_RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Every range hookgate refuses to reach unless allow-listed, by name.
///
/// The IANA special-purpose registries plus the documentation ranges. Some
/// of these are marked "global" by IANA (NAT64, 6to4, TEREDO) but can lead
/// back into private networks, so the design blocks them wholesale.
const BLOCKED: &[(IpNet, &str)] = &[
    (v4(0, 0, 0, 0, 8), "\"this network\" (RFC 791)"),
    (v4(10, 0, 0, 0, 8), "private-use (RFC 1918)"),
    (
        v4(100, 64, 0, 0, 10),
        "shared address space / CGNAT (RFC 6598)",
    ),
    (v4(127, 0, 0, 0, 8), "loopback (RFC 1122)"),
    (
        v4(169, 254, 0, 0, 16),
        "link-local, cloud metadata (RFC 3927)",
    ),
    (v4(172, 16, 0, 0, 12), "private-use (RFC 1918)"),
    (v4(192, 0, 0, 0, 24), "IETF protocol assignments (RFC 6890)"),
    (v4(192, 0, 2, 0, 24), "documentation TEST-NET-1 (RFC 5737)"),
    (v4(192, 168, 0, 0, 16), "private-use (RFC 1918)"),
    (v4(198, 18, 0, 0, 15), "benchmarking (RFC 2544)"),
    (
        v4(198, 51, 100, 0, 24),
        "documentation TEST-NET-2 (RFC 5737)",
    ),
    (
        v4(203, 0, 113, 0, 24),
        "documentation TEST-NET-3 (RFC 5737)",
    ),
    (v4(224, 0, 0, 0, 4), "multicast (RFC 5771)"),
    (
        v4(240, 0, 0, 0, 4),
        "reserved and limited broadcast (RFC 1112, RFC 919)",
    ),
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), "unspecified (RFC 4291)"),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), "loopback (RFC 4291)"),
    // Never matches after `to_canonical`; kept as a backstop and as the record.
    (
        v6([0, 0, 0, 0, 0, 0xffff, 0, 0], 96),
        "IPv4-mapped, checked as IPv4 (RFC 4291)",
    ),
    (
        v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96),
        "NAT64 well-known prefix (RFC 6052)",
    ),
    (
        v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),
        "NAT64 local-use (RFC 8215)",
    ),
    (
        v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64),
        "discard-only (RFC 6666)",
    ),
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32), "TEREDO (RFC 4380)"),
    (
        v6([0x2001, 0x10, 0, 0, 0, 0, 0, 0], 28),
        "ORCHID, deprecated (RFC 4843)",
    ),
    (
        v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28),
        "ORCHIDv2 (RFC 7343)",
    ),
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
        "documentation (RFC 3849)",
    ),
    (v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16), "6to4 (RFC 3056)"),
    (
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
        "unique local (RFC 4193)",
    ),
    (
        v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
        "link-local unicast (RFC 4291)",
    ),
    (
        v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),
        "site-local, deprecated (RFC 3879)",
    ),
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), "multicast (RFC 4291)"),
];

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> IpNet {
    IpNet::new_assert(IpAddr::V4(Ipv4Addr::new(a, b, c, d)), prefix)
}

const fn v6(s: [u16; 8], prefix: u8) -> IpNet {
    let addr = Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    IpNet::new_assert(IpAddr::V6(addr), prefix)
}

/// Why an endpoint URL was refused; the API maps these to 422 responses.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum UrlError {
    /// The input is not a URL; the message says why.
    #[error("invalid URL: {0}")]
    Invalid(String),
    /// Only `http` and `https` are delivered to.
    #[error("unsupported URL scheme {0:?}: only http and https are allowed")]
    Scheme(String),
    /// The input is longer than the configured limit.
    #[error("URL is longer than {max} bytes")]
    TooLong {
        /// The limit, in bytes.
        max: usize,
    },
    /// `user:pass@` would leak into logs and requests, so it is refused.
    #[error("URL must not contain credentials")]
    HasCredentials,
    /// There is nothing to connect to.
    #[error("URL has no host")]
    NoHost,
    /// The host is, or resolves to, an address hookgate may not reach.
    #[error("URL host is or resolves to the blocked address {addr}")]
    Blocked {
        /// The first address that was refused.
        addr: IpAddr,
    },
}

/// Why the connector refused to open a connection.
#[derive(Debug, thiserror::Error)]
pub enum ConnectGuardError {
    /// The host is, or resolves to, an address hookgate may not reach; the
    /// delivery becomes dead (`blocked_address`) rather than retried.
    #[error("connection to blocked address {addr} refused")]
    Blocked {
        /// The first address that was refused.
        addr: IpAddr,
    },
    /// The host could not be resolved (a retryable DNS failure).
    #[error("could not resolve host: {0}")]
    Resolve(#[source] io::Error),
}

/// Parses and normalizes an endpoint URL so the stored form is the one that
/// gets checked and connected to.
///
/// The `url` crate turns `127.1` and `0x7f.1` into `127.0.0.1`, lower-cases
/// the host and drops the scheme's default port. The fragment is removed.
/// `max_len` (in bytes) applies to the input.
///
/// # Errors
///
/// [`UrlError::TooLong`], [`UrlError::Invalid`], [`UrlError::Scheme`] (not
/// http or https), [`UrlError::HasCredentials`] or [`UrlError::NoHost`].
/// Addresses are not checked here; see [`AddressGuard::check_at_creation`].
pub fn normalize_endpoint_url(input: &str, max_len: usize) -> Result<Url, UrlError> {
    if input.len() > max_len {
        return Err(UrlError::TooLong { max: max_len });
    }
    let mut url = Url::parse(input).map_err(|e| UrlError::Invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlError::Scheme(url.scheme().to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlError::HasCredentials);
    }
    if url.host().is_none() {
        return Err(UrlError::NoHost);
    }
    url.set_fragment(None);
    Ok(url)
}

/// Whether an address is globally routable, per the IANA special-purpose
/// registries as narrowed by the design (our own table, since
/// `IpAddr::is_global` is unstable). IPv4-mapped IPv6 is judged as IPv4.
pub fn is_global(addr: IpAddr) -> bool {
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
pub struct AddressGuard {
    allow: Vec<IpNet>,
    resolver: std::sync::Arc<dyn Resolver>,
}

impl std::fmt::Debug for AddressGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddressGuard").field("allow", &self.allow).finish_non_exhaustive()
    }
}

impl Default for AddressGuard {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

/// A future of resolved addresses.
pub type LookupFuture<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>>;

/// Name resolution, replaceable so tests can play a rebinding DNS server.
pub trait Resolver: Send + Sync + 'static {
    /// Resolves `host:port`.
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> LookupFuture<'a>;
}

/// The system resolver (getaddrinfo, through tokio).
#[derive(Debug, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> LookupFuture<'a> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host, port)).await?.collect()) })
    }
}

impl AddressGuard {
    /// Builds a guard that also permits `allow_private_subnets` (tests, the
    /// quickstart and the demo allow `127.0.0.0/8`).
    pub fn new(allow_private_subnets: Vec<IpNet>) -> Self {
        let allow = allow_private_subnets
            .into_iter()
            .map(canonical_net)
            .collect();
        Self { allow, resolver: std::sync::Arc::new(SystemResolver) }
    }

    /// The same guard resolving names with `resolver`.
    pub fn with_resolver(mut self, resolver: std::sync::Arc<dyn Resolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// True if hookgate may connect to `addr`: global, or inside an allowed
    /// subnet. IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is checked as the IPv4
    /// address, both for blocking and for the allow list.
    pub fn permits(&self, addr: IpAddr) -> bool {
        let addr = addr.to_canonical();
        is_global(addr) || self.allow.iter().any(|net| net.contains(&addr))
    }

    /// Checks an endpoint URL when it is created or changed, so a blocked
    /// target is refused with 422 `url_blocked` up front.
    ///
    /// An IP-literal host is checked directly. A name is resolved (2 s
    /// timeout) and every address must be permitted. A name that does not
    /// resolve (NXDOMAIN, resolver error, timeout) is accepted with a warning:
    /// DNS may change, and the connect-time check still applies.
    ///
    /// # Errors
    ///
    /// [`UrlError::Blocked`] for the first refused address, or
    /// [`UrlError::NoHost`] if the URL has no host.
    pub async fn check_at_creation(&self, url: &Url) -> Result<(), UrlError> {
        let domain = match url.host() {
            None => return Err(UrlError::NoHost),
            Some(Host::Ipv4(a)) => return self.check_one(IpAddr::V4(a)),
            Some(Host::Ipv6(a)) => return self.check_one(IpAddr::V6(a)),
            Some(Host::Domain(d)) => d,
        };
        let port = url.port_or_known_default().unwrap_or(80);
        let lookup = tokio::time::timeout(CREATION_RESOLVE_TIMEOUT, self.resolver.lookup(domain, port)).await;
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
    /// [`ConnectGuardError::Blocked`] for the first refused address;
    /// [`ConnectGuardError::Resolve`] if resolution fails, times out (5 s)
    /// or returns no address.
    pub async fn resolve_for_connect(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, ConnectGuardError> {
        let resolved: Vec<SocketAddr> = match parse_ip_literal(host)? {
            Some(ip) => vec![SocketAddr::new(ip, port)],
            None => {
                let lookup = tokio::time::timeout(CONNECT_RESOLVE_TIMEOUT, self.resolver.lookup(host, port))
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
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("test address")
    }

    fn net(s: &str) -> IpNet {
        s.parse().expect("test net")
    }

    /// `range_test!(name, [inside..], [outside..])`: one test per blocked
    /// range; addresses inside are blocked, neighbours outside are global.
    macro_rules! range_test {
        ($name:ident, [$($b:literal),+], [$($g:literal),*]) => {
            #[test]
            fn $name() {
                $(assert!(!is_global(ip($b)), "{} should be blocked", $b);)+
                $(assert!(is_global(ip($g)), "{} should be global", $g);)*
                $(assert!(!AddressGuard::default().permits(ip($b)));)+
                $(assert!(AddressGuard::default().permits(ip($g)));)*
            }
        };
    }

    range_test!(v4_this_network, ["0.0.0.0", "0.255.255.255"], ["1.0.0.1"]);
    range_test!(
        v4_private_10,
        ["10.0.0.1", "10.255.255.255"],
        ["9.255.255.255", "11.0.0.1"]
    );
    range_test!(
        v4_cgnat,
        ["100.64.0.1", "100.127.255.255"],
        ["100.63.255.255", "100.128.0.1"]
    );
    range_test!(
        v4_loopback,
        ["127.0.0.1", "127.255.255.254"],
        ["126.255.255.255", "128.0.0.1"]
    );
    range_test!(
        v4_link_local,
        ["169.254.169.254", "169.254.0.1"],
        ["169.253.255.255", "169.255.0.1"]
    );
    range_test!(
        v4_private_172,
        ["172.16.0.1", "172.31.255.255"],
        ["172.15.255.255", "172.32.0.1"]
    );
    range_test!(
        v4_ietf_protocol,
        ["192.0.0.8", "192.0.0.9", "192.0.0.255"],
        ["191.255.255.255", "192.0.1.1"]
    );
    range_test!(v4_test_net_1, ["192.0.2.1", "192.0.2.255"], ["192.0.3.1"]);
    range_test!(
        v4_private_192,
        ["192.168.0.1", "192.168.255.255"],
        ["192.167.255.255", "192.169.0.1"]
    );
    range_test!(
        v4_benchmarking,
        ["198.18.0.1", "198.19.255.255"],
        ["198.17.255.255", "198.20.0.1"]
    );
    range_test!(
        v4_test_net_2,
        ["198.51.100.7"],
        ["198.51.99.1", "198.51.101.1"]
    );
    range_test!(
        v4_test_net_3,
        ["203.0.113.5"],
        ["203.0.112.1", "203.0.114.1"]
    );
    range_test!(
        v4_multicast,
        ["224.0.0.1", "239.255.255.250"],
        ["223.255.255.254"]
    );
    range_test!(
        v4_reserved_broadcast,
        ["240.0.0.1", "255.255.255.255"],
        ["8.8.8.8", "1.1.1.1"]
    );
    range_test!(v6_unspecified, ["::"], ["2606:4700::1111"]);
    range_test!(v6_loopback, ["::1"], ["2606:4700::1111"]);
    range_test!(
        v6_ipv4_mapped,
        ["::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:0.0.0.0"],
        ["::ffff:8.8.8.8"]
    );
    range_test!(
        v6_nat64,
        ["64:ff9b::808:808", "64:ff9b::7f00:1"],
        ["2606:4700::1111"]
    );
    range_test!(
        v6_nat64_local,
        ["64:ff9b:1::1", "64:ff9b:1:ffff::1"],
        ["2606:4700::1111"]
    );
    range_test!(
        v6_discard,
        ["100::1", "100::ffff:ffff:ffff:ffff"],
        ["2606:4700::1111"]
    );
    range_test!(
        v6_teredo,
        ["2001::1", "2001:0:ffff::1"],
        ["2001:4860:4860::8888"]
    );
    range_test!(
        v6_orchid,
        ["2001:10::1", "2001:1f:ffff::1"],
        ["2001:4860:4860::8888"]
    );
    range_test!(
        v6_orchid_v2,
        ["2001:20::1", "2001:2f:ffff::1"],
        ["2001:4860:4860::8888"]
    );
    range_test!(
        v6_documentation,
        ["2001:db8::1", "2001:db8:ffff::1"],
        ["2001:db9::1"]
    );
    range_test!(
        v6_6to4,
        ["2002::1", "2002:7f00:1::1"],
        ["2003::1", "2001:4860:4860::8888"]
    );
    range_test!(
        v6_unique_local,
        ["fc00::1", "fd12:3456::1"],
        ["2606:4700::1111"]
    );
    range_test!(v6_link_local, ["fe80::1", "febf::1"], ["2606:4700::1111"]);
    range_test!(v6_site_local, ["fec0::1", "feff::1"], ["2606:4700::1111"]);
    range_test!(v6_multicast, ["ff02::1", "ff0e::1"], ["2606:4700::1111"]);

    #[test]
    fn table_entries_are_canonical_networks() {
        for (net, name) in BLOCKED {
            assert_eq!(*net, net.trunc(), "{name}: host bits set in {net}");
            assert!(!name.is_empty());
        }
    }

    #[test]
    fn normalize_resolves_ipv4_shorthand() {
        let url = normalize_endpoint_url("http://127.1/x", 2048).unwrap();
        assert_eq!(url.host_str(), Some("127.0.0.1"));
        assert_eq!(url.as_str(), "http://127.0.0.1/x");
        let url = normalize_endpoint_url("http://0x7f.1/", 2048).unwrap();
        assert_eq!(url.host_str(), Some("127.0.0.1"));
    }

    #[test]
    fn normalize_lowercases_and_drops_default_port_and_fragment() {
        let url = normalize_endpoint_url("HTTP://Example.COM:80/a", 2048).unwrap();
        assert_eq!(url.as_str(), "http://example.com/a");
        let url = normalize_endpoint_url("https://example.com:443/a?b=1#frag", 2048).unwrap();
        assert_eq!(url.as_str(), "https://example.com/a?b=1");
    }

    #[test]
    fn normalize_keeps_ipv6_host_and_port() {
        let url = normalize_endpoint_url("https://[::1]:8443/", 2048).unwrap();
        assert_eq!(url.host_str(), Some("[::1]"));
        assert_eq!(url.port(), Some(8443));
    }

    #[test]
    fn normalize_refuses_bad_input() {
        let n = |s| normalize_endpoint_url(s, 64);
        assert_eq!(n("ftp://x"), Err(UrlError::Scheme("ftp".into())));
        assert_eq!(
            n("file:///etc/passwd"),
            Err(UrlError::Scheme("file".into()))
        );
        assert_eq!(
            n("http://user:pw@example.com"),
            Err(UrlError::HasCredentials)
        );
        assert_eq!(n("http://user@example.com"), Err(UrlError::HasCredentials));
        let long = format!("http://example.com/{}", "a".repeat(64));
        assert_eq!(n(&long), Err(UrlError::TooLong { max: 64 }));
        assert!(matches!(n("not a url"), Err(UrlError::Invalid(_))));
        assert!(matches!(n("http://"), Err(UrlError::Invalid(_))));
        assert!(matches!(
            n("http://exa mple.com/"),
            Err(UrlError::Invalid(_))
        ));
        assert!(matches!(n("http://[::1/"), Err(UrlError::Invalid(_))));
    }

    #[test]
    fn allow_list_lifts_only_listed_subnets() {
        let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
        assert!(guard.permits(ip("127.0.0.1")));
        assert!(guard.permits(ip("::ffff:127.0.0.1")));
        assert!(!guard.permits(ip("10.0.0.1")));
        assert!(!guard.permits(ip("::1")));
        assert!(guard.permits(ip("8.8.8.8")));
    }

    #[test]
    fn allow_list_entries_in_mapped_form_cover_ipv4() {
        let guard = AddressGuard::new(vec![net("::ffff:10.0.0.0/104")]);
        assert!(guard.permits(ip("10.1.2.3")));
        assert!(guard.permits(ip("::ffff:10.1.2.3")));
        assert!(!guard.permits(ip("192.168.0.1")));
    }

    #[tokio::test]
    async fn creation_check_blocks_literals_unless_allowed() {
        let url = normalize_endpoint_url("http://127.0.0.1:9/", 2048).unwrap();
        let blocked = AddressGuard::default().check_at_creation(&url).await;
        assert_eq!(
            blocked,
            Err(UrlError::Blocked {
                addr: ip("127.0.0.1")
            })
        );
        let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
        assert_eq!(guard.check_at_creation(&url).await, Ok(()));

        let url = normalize_endpoint_url("http://0x7f.1/", 2048).unwrap();
        let blocked = AddressGuard::default().check_at_creation(&url).await;
        assert_eq!(
            blocked,
            Err(UrlError::Blocked {
                addr: ip("127.0.0.1")
            })
        );
        let url = normalize_endpoint_url("http://[::ffff:169.254.169.254]/", 2048).unwrap();
        assert!(
            AddressGuard::default()
                .check_at_creation(&url)
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn creation_check_resolves_names() {
        let url = normalize_endpoint_url("http://localhost:8080/", 2048).unwrap();
        let result = AddressGuard::default().check_at_creation(&url).await;
        assert!(
            matches!(result, Err(UrlError::Blocked { .. })),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn creation_check_accepts_unresolvable_names() {
        let url = normalize_endpoint_url("https://no-such-host.invalid/hook", 2048).unwrap();
        assert_eq!(
            AddressGuard::default().check_at_creation(&url).await,
            Ok(())
        );
    }

    #[tokio::test]
    async fn connect_blocks_literals_unless_allowed() {
        let err = AddressGuard::default()
            .resolve_for_connect("127.0.0.1", 80)
            .await;
        assert!(matches!(err, Err(ConnectGuardError::Blocked { addr }) if addr == ip("127.0.0.1")));
        let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
        let addrs = guard.resolve_for_connect("127.0.0.1", 80).await.unwrap();
        assert_eq!(addrs, vec!["127.0.0.1:80".parse::<SocketAddr>().unwrap()]);
    }

    #[tokio::test]
    async fn connect_handles_bracketed_ipv6() {
        let err = AddressGuard::default()
            .resolve_for_connect("[::1]", 80)
            .await;
        assert!(matches!(err, Err(ConnectGuardError::Blocked { .. })));
        let guard = AddressGuard::new(vec![net("::1/128")]);
        let addrs = guard.resolve_for_connect("[::1]", 80).await.unwrap();
        assert_eq!(addrs, vec!["[::1]:80".parse::<SocketAddr>().unwrap()]);
        let bad = guard.resolve_for_connect("[localhost]", 80).await;
        assert!(matches!(bad, Err(ConnectGuardError::Resolve(_))));
    }

    #[tokio::test]
    async fn connect_unmaps_ipv4_mapped_literals() {
        let guard = AddressGuard::new(vec![net("127.0.0.0/8")]);
        let addrs = guard
            .resolve_for_connect("[::ffff:127.0.0.1]", 8080)
            .await
            .unwrap();
        assert_eq!(addrs, vec!["127.0.0.1:8080".parse::<SocketAddr>().unwrap()]);
        let err = AddressGuard::default()
            .resolve_for_connect("::ffff:10.0.0.1", 80)
            .await;
        assert!(matches!(err, Err(ConnectGuardError::Blocked { .. })));
    }

    #[tokio::test]
    async fn connect_refuses_names_resolving_to_blocked_addresses() {
        let err = AddressGuard::default()
            .resolve_for_connect("localhost", 80)
            .await;
        assert!(
            matches!(err, Err(ConnectGuardError::Blocked { .. })),
            "{err:?}"
        );
        let guard = AddressGuard::new(vec![net("127.0.0.0/8"), net("::1/128")]);
        let addrs = guard.resolve_for_connect("localhost", 80).await.unwrap();
        assert!(addrs.iter().all(|a| a.ip().is_loopback() && a.port() == 80));
    }

    #[tokio::test]
    async fn connect_reports_resolution_failure() {
        let err = AddressGuard::default()
            .resolve_for_connect("no-such-host.invalid", 80)
            .await;
        assert!(matches!(err, Err(ConnectGuardError::Resolve(_))), "{err:?}");
    }
}
