//! What a drill's receiver saw: requests and 2xx answers per `webhook-id` and per
//! second, the requests in progress (and from which client port), and when each
//! id arrived.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Requests and 2xx answers for one id.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PerId {
    pub(crate) requests: u32,
    pub(crate) ok: u32,
}

/// Requests that arrived at a drill's receiver, and 2xx answers it gave, in one
/// second.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PerSecond {
    pub requests: u64,
    pub ok: u64,
}

#[derive(Default)]
struct Counts {
    requests: u64,
    ok: u64,
    per_id: HashMap<String, PerId>,
    per_second: Vec<PerSecond>,
    /// When each id arrived, since the start, oldest first.
    arrivals: HashMap<String, Vec<Duration>>,
    /// The id of the request in progress on each client port (one at a time per
    /// connection).
    in_progress: HashMap<u16, String>,
}

/// What the receiver saw.
pub(crate) struct Tally {
    started: Instant,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    counts: Mutex<Counts>,
}

impl Tally {
    pub(super) fn new() -> Self {
        Self {
            started: Instant::now(),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            counts: Mutex::new(Counts::default()),
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn second(&self) -> usize {
        usize::try_from(self.started.elapsed().as_secs()).unwrap_or(usize::MAX)
    }

    /// A request has been read (from client port `port`); returns its attempt
    /// number for this id.
    pub(super) fn arrived(&self, id: &str, port: Option<u16>) -> u32 {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let second = self.second();
        let since_start = self.started.elapsed();
        let mut c = self.counts();
        if let Some(port) = port {
            c.in_progress.insert(port, id.to_owned());
        }
        c.arrivals
            .entry(id.to_owned())
            .or_default()
            .push(since_start);
        c.requests += 1;
        if c.per_second.len() <= second {
            c.per_second.resize(second + 1, PerSecond::default());
        }
        c.per_second[second].requests += 1;
        let entry = c.per_id.entry(id.to_owned()).or_default();
        entry.requests += 1;
        entry.requests - 1
    }

    /// The request is over: answered `status`, or reset or hung up on (`None`).
    pub(super) fn finished(&self, id: &str, port: Option<u16>, status: Option<u16>) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if let Some(port) = port {
            self.counts().in_progress.remove(&port);
        }
        if status.is_some_and(|s| (200..300).contains(&s)) {
            let second = self.second();
            let mut c = self.counts();
            c.ok += 1;
            if c.per_second.len() <= second {
                c.per_second.resize(second + 1, PerSecond::default());
            }
            c.per_second[second].ok += 1;
            c.per_id.entry(id.to_owned()).or_default().ok += 1;
        }
    }

    /// Requests in progress now.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// The most requests ever in progress at once.
    pub(crate) fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    /// Requests that arrived, and 2xx answers given, in all.
    pub(crate) fn totals(&self) -> (u64, u64) {
        let c = self.counts();
        (c.requests, c.ok)
    }

    /// Distinct ids that arrived.
    pub(crate) fn distinct(&self) -> usize {
        self.counts().per_id.len()
    }

    /// The ids answered 2xx at least once.
    pub(crate) fn delivered(&self) -> HashSet<String> {
        let c = self.counts();
        c.per_id
            .iter()
            .filter(|(_, n)| n.ok > 0)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Every id's counts.
    pub(crate) fn per_id(&self) -> HashMap<String, PerId> {
        self.counts().per_id.clone()
    }

    /// The ids of the requests in progress from any of these client ports.
    pub(crate) fn in_progress_from(&self, ports: &HashSet<u16>) -> Vec<String> {
        let c = self.counts();
        c.in_progress
            .iter()
            .filter(|(port, _)| ports.contains(port))
            .map(|(_, id)| id.clone())
            .collect()
    }

    /// When `id` first arrived after `after` (both since the receiver's start).
    pub(crate) fn arrival_after(&self, id: &str, after: Duration) -> Option<Duration> {
        let c = self.counts();
        let times = c.arrivals.get(id)?;
        times.iter().copied().find(|t| *t > after)
    }

    /// Requests that arrived from `from` until (not including) `to`.
    pub(crate) fn arrived_between(&self, from: Instant, to: Instant) -> u64 {
        let from = from.saturating_duration_since(self.started);
        let to = to.saturating_duration_since(self.started);
        let c = self.counts();
        let within = c
            .arrivals
            .values()
            .flatten()
            .filter(|t| **t >= from && **t < to);
        within.count() as u64
    }

    /// Counts per second since the receiver started.
    pub(crate) fn per_second(&self) -> Vec<PerSecond> {
        self.counts().per_second.clone()
    }

    /// Time since the receiver started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}
