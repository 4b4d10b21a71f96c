//! Resolvers that tests inject in place of DNS.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};

use hookgate_server::{LookupFuture, Resolver};

/// Answers a public address the first time (the check at endpoint creation) and
/// `then` afterwards (at connect time): a DNS-rebinding attack.
pub struct RebindingResolver {
    port: u16,
    then: IpAddr,
    calls: AtomicUsize,
}

impl RebindingResolver {
    /// Rebinds to `then`, on the receiver's `port`.
    pub fn new(port: u16, then: IpAddr) -> Self {
        Self {
            port,
            then,
            calls: AtomicUsize::new(0),
        }
    }

    /// How many lookups were made.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Resolver for RebindingResolver {
    fn lookup<'a>(&'a self, _host: &'a str, _port: u16) -> LookupFuture<'a> {
        let first = self.calls.fetch_add(1, Ordering::SeqCst) == 0;
        let ip = if first {
            [93, 184, 216, 34].into()
        } else {
            self.then
        };
        let addr = SocketAddr::new(ip, self.port);
        Box::pin(async move { Ok(vec![addr]) })
    }
}

/// Counts the lookups it is asked for and answers none of them, for tests
/// that must show a decision was made without DNS.
#[derive(Default)]
pub struct CountingResolver {
    calls: AtomicUsize,
}

impl CountingResolver {
    /// How many lookups were asked for.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Resolver for CountingResolver {
    fn lookup<'a>(&'a self, host: &'a str, _port: u16) -> LookupFuture<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let error = std::io::Error::new(std::io::ErrorKind::NotFound, format!("{host}: no DNS"));
        Box::pin(async move { Err(error) })
    }
}
