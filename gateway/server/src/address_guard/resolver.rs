//! Name resolution for endpoint hosts.
//!
//! Lookups use an async DNS client (hickory) on the runtime's workers, not
//! getaddrinfo on tokio's blocking pool: a getaddrinfo call that a timeout
//! stops waiting for still holds its blocking thread until the nameserver
//! answers, so one tenant's slow nameserver could occupy every blocking thread.
//! [`Resolver`] stays a trait so tests can play any DNS server they need.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{
    ConnectionConfig, NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;

/// How long one query to one nameserver may take; with [`QUERY_ATTEMPTS`] it
/// stays inside the guard's own lookup bound.
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// How many times a query is sent before the lookup fails.
const QUERY_ATTEMPTS: usize = 2;

/// Where to ask when `/etc/resolv.conf` cannot be read: glibc's own default.
const FALLBACK_NAMESERVER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 53);

/// A future of resolved addresses.
pub type LookupFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>>;

/// Name resolution, replaceable so tests can play a rebinding or slow DNS server.
pub trait Resolver: Send + Sync + 'static {
    /// Resolves `host:port`.
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> LookupFuture<'a>;
}

/// Why a resolver could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ResolverSetupError {
    /// hickory refused the configuration.
    #[error("cannot build the DNS resolver: {0}")]
    Build(String),
}

/// The production resolver: hickory over UDP/TCP, configured like the system
/// resolver (`/etc/resolv.conf`, `/etc/hosts`).
pub struct DnsResolver {
    inner: Result<TokioResolver, ResolverSetupError>,
}

impl std::fmt::Debug for DnsResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DnsResolver")
            .field("ready", &self.inner.is_ok())
            .finish()
    }
}

impl DnsResolver {
    /// A resolver configured from `/etc/resolv.conf` and `/etc/hosts`. If the
    /// system configuration cannot be read it asks `127.0.0.1:53`, as glibc
    /// does. If even that cannot be built, every lookup fails (a retryable DNS
    /// failure) and the reason is logged once here.
    pub fn from_system() -> Self {
        let mut builder = match TokioResolver::builder_tokio() {
            Ok(builder) => builder,
            Err(error) => {
                tracing::warn!(%error, nameserver = %FALLBACK_NAMESERVER,
                    "cannot read the system DNS configuration; using the fallback nameserver");
                let config =
                    ResolverConfig::from_name_servers(vec![udp_and_tcp(FALLBACK_NAMESERVER)]);
                TokioResolver::builder_with_config(config, TokioRuntimeProvider::default())
            }
        };
        // resolv.conf may ask for longer; the guard would stop waiting anyway.
        let options = builder.options_mut();
        options.timeout = options.timeout.min(QUERY_TIMEOUT);
        options.attempts = options.attempts.clamp(1, QUERY_ATTEMPTS);
        let inner = builder
            .build()
            .map_err(|e| ResolverSetupError::Build(e.to_string()));
        if let Err(error) = &inner {
            tracing::error!(%error, "endpoint host names will not resolve");
        }
        Self { inner }
    }

    /// A resolver that asks only `nameservers` (over UDP, at their own
    /// ports) and ignores `/etc/hosts`: for tests against a DNS stub.
    ///
    /// # Errors
    /// [`ResolverSetupError::Build`] if hickory refuses the configuration.
    pub fn with_nameservers(nameservers: &[SocketAddr]) -> Result<Self, ResolverSetupError> {
        let servers = nameservers
            .iter()
            .map(|&addr| {
                let mut udp = ConnectionConfig::udp();
                udp.port = addr.port();
                NameServerConfig::new(addr.ip(), true, vec![udp])
            })
            .collect();
        let mut options = ResolverOpts::default();
        options.timeout = QUERY_TIMEOUT;
        options.attempts = QUERY_ATTEMPTS;
        options.use_hosts_file = ResolveHosts::Never;
        let inner = TokioResolver::builder_with_config(
            ResolverConfig::from_name_servers(servers),
            TokioRuntimeProvider::default(),
        )
        .with_options(options)
        .build()
        .map_err(|e| ResolverSetupError::Build(e.to_string()))?;
        Ok(Self { inner: Ok(inner) })
    }
}

/// A nameserver asked over UDP, and over TCP for truncated answers.
fn udp_and_tcp(addr: SocketAddr) -> NameServerConfig {
    let mut udp = ConnectionConfig::udp();
    udp.port = addr.port();
    let mut tcp = ConnectionConfig::tcp();
    tcp.port = addr.port();
    NameServerConfig::new(addr.ip(), true, vec![udp, tcp])
}

impl Resolver for DnsResolver {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> LookupFuture<'a> {
        Box::pin(async move {
            let resolver = self
                .inner
                .as_ref()
                .map_err(|e| io::Error::other(e.to_string()))?;
            let answer = resolver
                .lookup_ip(host)
                .await
                .map_err(|e| io::Error::other(format!("resolving {host}: {e}")))?;
            Ok(answer.iter().map(|ip| SocketAddr::new(ip, port)).collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::address_guard::{AddressGuard, ConnectGuardError, MAX_CONCURRENT_LOOKUPS};

    /// Answers after a pause, counting how many lookups run at once.
    #[derive(Default)]
    struct Crowded {
        now: AtomicUsize,
        most: AtomicUsize,
    }

    impl Resolver for Crowded {
        fn lookup<'a>(&'a self, _host: &'a str, port: u16) -> LookupFuture<'a> {
            Box::pin(async move {
                let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
                self.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(100)).await;
                self.now.fetch_sub(1, Ordering::SeqCst);
                Ok(vec![SocketAddr::new(
                    Ipv4Addr::new(93, 184, 216, 34).into(),
                    port,
                )])
            })
        }
    }

    #[tokio::test]
    async fn concurrent_lookups_are_bounded() {
        let crowded = Arc::new(Crowded::default());
        let guard = AddressGuard::new(Vec::new()).with_resolver(crowded.clone());
        let lookups = (0..3 * MAX_CONCURRENT_LOOKUPS).map(|n| {
            let guard = guard.clone();
            tokio::spawn(async move {
                guard
                    .resolve_for_connect(&format!("h{n}.example"), 80)
                    .await
            })
        });
        for lookup in futures_util::future::join_all(lookups).await {
            assert!(lookup.unwrap().is_ok());
        }
        let most = crowded.most.load(Ordering::SeqCst);
        assert!(
            (2..=MAX_CONCURRENT_LOOKUPS).contains(&most),
            "{most} at once"
        );
    }

    #[tokio::test]
    async fn a_nameserver_that_never_answers_is_a_resolve_failure() {
        let stub = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let resolver = DnsResolver::with_nameservers(&[stub.local_addr().unwrap()]).unwrap();
        let guard = AddressGuard::new(Vec::new()).with_resolver(Arc::new(resolver));
        let lookup = tokio::spawn(async move {
            guard
                .resolve_for_connect("never-answers.example.com", 443)
                .await
        });
        // The query reaches the stub, which keeps it unanswered.
        let mut query = [0u8; 512];
        let asked = tokio::time::timeout(Duration::from_secs(10), stub.recv_from(&mut query)).await;
        assert!(matches!(asked, Ok(Ok(_))), "{asked:?}");
        let result = tokio::time::timeout(Duration::from_secs(30), lookup)
            .await
            .unwrap()
            .unwrap();
        assert!(
            matches!(result, Err(ConnectGuardError::Resolve(_))),
            "{result:?}"
        );
    }
}
