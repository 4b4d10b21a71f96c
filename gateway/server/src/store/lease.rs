//! Due work as the delivery engine holds it. A [`Lease`] names one delivery due
//! at one time; the worker carries it from the due scan to the outcome write, and
//! the store writes the outcome only while the lease is still current (else
//! `Stale`). What makes it current is the backend's own business.

use std::time::{Duration, Instant};

use crate::ids::{DeliveryId, EndpointId};

/// Which queue due work sits in. First attempts and retries are kept in separate
/// lanes so that new deliveries are never stuck behind a backlog of retries; the
/// scheduler interleaves the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lane {
    /// The first attempt of a series (a new event, or a replay).
    First,
    /// Every later attempt.
    Retry,
}

impl Lane {
    /// Both lanes, first attempts first.
    pub const ALL: [Lane; 2] = [Lane::First, Lane::Retry];
}

/// A schedule entry: which delivery of which endpoint is due when, in which
/// lane. Both backends build it; how each keeps it (a sled key, a `queue` row)
/// is their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DueEntry {
    pub(crate) lane: Lane,
    /// The endpoint the delivery goes to.
    pub(crate) endpoint_id: EndpointId,
    /// When the next attempt is due, Unix ms.
    pub(crate) due_ms: u64,
    /// The delivery.
    pub(crate) delivery_id: DeliveryId,
}

/// One delivery due at one time, as the store handed it out. Opaque: only the
/// store that made it reads what it holds: the schedule entry, the token of a
/// backend that fences claims (0 where the entry itself is the fence), and,
/// where other nodes may retake the work, when the lease ends on this
/// process's monotonic clock (no earlier than the store's own expiry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease(
    pub(crate) DueEntry,
    pub(crate) i64,
    pub(crate) Option<Instant>,
);

impl Lease {
    /// The delivery this lease is for.
    pub fn delivery_id(&self) -> &str {
        &self.0.delivery_id
    }

    /// The endpoint the delivery goes to.
    pub fn endpoint_id(&self) -> &str {
        &self.0.endpoint_id
    }

    /// When the attempt was due, Unix ms.
    pub fn due_ms(&self) -> u64 {
        self.0.due_ms
    }

    /// The lane it was due in.
    pub fn lane(&self) -> Lane {
        self.0.lane
    }

    /// How long a request sent `now` may take: `timeout`, cut to what is
    /// left of the lease; `None` once the lease has ended, when nothing may be
    /// sent (a node paused past it may find another node in its place). The
    /// monotonic clock keeps counting while a process is stopped, so a node
    /// that wakes late knows it.
    pub(crate) fn time_left(&self, now: Instant, timeout: Duration) -> Option<Duration> {
        match self.2 {
            None => Some(timeout),
            Some(end) => end
                .checked_duration_since(now)
                .filter(|left| !left.is_zero())
                .map(|left| left.min(timeout)),
        }
    }
}

/// Alternates first attempts and retries, first attempts first, so neither lane
/// starves the other.
pub(crate) fn interleave<T>(first: Vec<T>, retry: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(first.len() + retry.len());
    let (mut a, mut b) = (first.into_iter(), retry.into_iter());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_sent_once_the_lease_has_ended_and_a_request_ends_with_it() {
        let entry = DueEntry {
            lane: Lane::First,
            endpoint_id: "ep".into(),
            due_ms: 0,
            delivery_id: "d".into(),
        };
        let now = Instant::now();
        let timeout = Duration::from_secs(5);
        let unfenced = Lease(entry.clone(), 0, None);
        assert_eq!(unfenced.time_left(now, timeout), Some(timeout));
        let lease = Lease(entry, 1, Some(now + Duration::from_secs(2)));
        assert_eq!(lease.time_left(now, timeout), Some(Duration::from_secs(2)));
        let later = now + Duration::from_secs(1);
        assert_eq!(
            lease.time_left(later, Duration::from_millis(300)),
            Some(Duration::from_millis(300))
        );
        assert_eq!(lease.time_left(now + Duration::from_secs(2), timeout), None);
        assert_eq!(
            lease.time_left(now + Duration::from_secs(60), timeout),
            None
        );
    }

    #[test]
    fn new_first_attempts_are_not_stuck_behind_retries() {
        assert_eq!(
            interleave(vec![1, 2], vec![10, 20, 30, 40]),
            [1, 10, 2, 20, 30, 40]
        );
        assert_eq!(interleave(vec![1, 2, 3], Vec::new()), [1, 2, 3]);
        assert_eq!(interleave(Vec::<u8>::new(), vec![9]), [9]);
        // With a backlog of due retries, the first permit still goes to a new delivery.
        assert_eq!(interleave(vec!["new"], vec!["old"; 100])[0], "new");
    }
}
