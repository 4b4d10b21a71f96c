//! Lookups in flight: at most [`MAX_CONCURRENT_LOOKUPS`] at once, and one per
//! host and port, whose answer everyone asking meanwhile shares.
//!
//! Sharing is what keeps the bound fair. A tenant's endpoint with 1024
//! deliveries in flight to a host whose nameserver is slow asks once, not 1024
//! times, so it holds one slot and leaves the rest to other hosts. Each lookup
//! runs in a task of its own, bounded by [`LOOKUP_LIMIT`], so a slot is always
//! given back even when every asker has stopped waiting.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{Semaphore, watch};

use super::{MAX_CONCURRENT_LOOKUPS, Resolver};

/// The longest one lookup may run, waiting for a slot included: the longest
/// any asker waits (the connect-time bound).
const LOOKUP_LIMIT: Duration = super::CONNECT_RESOLVE_TIMEOUT;

/// A finished lookup, shareable between askers (`io::Error` is not `Clone`).
type Answer = Result<Vec<SocketAddr>, (io::ErrorKind, String)>;

/// The lookups running, by host and port; each entry is told its answer.
type InFlight = HashMap<(String, u16), watch::Receiver<Option<Answer>>>;

/// The lookups of one resolver.
pub(super) struct Lookups {
    resolver: Arc<dyn Resolver>,
    slots: Arc<Semaphore>,
    in_flight: Arc<Mutex<InFlight>>,
}

impl Lookups {
    pub(super) fn new(resolver: Arc<dyn Resolver>) -> Self {
        Self {
            resolver,
            slots: Arc::new(Semaphore::new(MAX_CONCURRENT_LOOKUPS)),
            in_flight: Arc::default(),
        }
    }

    /// Resolves `host:port`, joining a lookup already in flight for it, and
    /// waits at most `limit`. `Err(Elapsed)` means the answer took too long.
    pub(super) async fn resolve(
        &self,
        host: &str,
        port: u16,
        limit: Duration,
    ) -> Result<io::Result<Vec<SocketAddr>>, tokio::time::error::Elapsed> {
        let mut answer = self.join_or_start(host, port);
        tokio::time::timeout(limit, async move {
            match answer.wait_for(Option::is_some).await {
                Ok(done) => match done.as_ref() {
                    Some(Ok(addrs)) => Ok(addrs.clone()),
                    Some(Err((kind, message))) => Err(io::Error::new(*kind, message.clone())),
                    None => Err(io::Error::other("lookup ended without an answer")),
                },
                Err(_) => Err(io::Error::other("lookup ended without an answer")),
            }
        })
        .await
    }

    fn join_or_start(&self, host: &str, port: u16) -> watch::Receiver<Option<Answer>> {
        let key = (host.to_owned(), port);
        // A panic cannot leave the map half-changed: each change is one call.
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(answer) = in_flight.get(&key) {
            return answer.clone();
        }
        let (publish, answer) = watch::channel(None);
        in_flight.insert(key.clone(), answer.clone());
        drop(in_flight);
        let (resolver, slots, in_flight) = (
            Arc::clone(&self.resolver),
            Arc::clone(&self.slots),
            Arc::clone(&self.in_flight),
        );
        tokio::spawn(async move {
            let (host, port) = (&key.0, key.1);
            let outcome = tokio::time::timeout(LOOKUP_LIMIT, async {
                let _slot = slots
                    .acquire()
                    .await
                    .map_err(|_| io::Error::other("lookups are closed"))?;
                resolver.lookup(host, port).await
            })
            .await
            .unwrap_or_else(|_| {
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("resolving {host} timed out"),
                ))
            });
            // Forgotten before it is told, so a later asker starts afresh.
            in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
            publish.send_replace(Some(outcome.map_err(|e| (e.kind(), e.to_string()))));
        });
        answer
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::address_guard::{AddressGuard, LookupFuture};

    /// `slow.example` answers after a long while; any other host at once.
    #[derive(Default)]
    struct OneSlowHost {
        slow_lookups: AtomicUsize,
    }

    impl Resolver for OneSlowHost {
        fn lookup<'a>(&'a self, host: &'a str, port: u16) -> LookupFuture<'a> {
            Box::pin(async move {
                if host == "slow.example" {
                    self.slow_lookups.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
                Ok(vec![SocketAddr::new(
                    Ipv4Addr::new(93, 184, 216, 34).into(),
                    port,
                )])
            })
        }
    }

    #[tokio::test]
    async fn askers_for_one_slow_host_share_a_lookup_and_leave_slots_to_others() {
        let resolver = Arc::new(OneSlowHost::default());
        let guard = AddressGuard::new(Vec::new()).with_resolver(resolver.clone());
        let waiting: Vec<_> = (0..4 * MAX_CONCURRENT_LOOKUPS)
            .map(|_| {
                let guard = guard.clone();
                tokio::spawn(async move { guard.resolve_for_connect("slow.example", 443).await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(200)).await;
        for n in 0..MAX_CONCURRENT_LOOKUPS {
            let host = format!("fast{n}.example");
            let answer = tokio::time::timeout(
                Duration::from_secs(3),
                guard.resolve_for_connect(&host, 443),
            )
            .await;
            assert!(matches!(answer, Ok(Ok(_))), "{host}: {answer:?}");
        }
        assert_eq!(resolver.slow_lookups.load(Ordering::SeqCst), 1);
        for asker in waiting {
            asker.abort();
        }
    }
}
