//! Due work as the delivery engine holds it. A [`Lease`] names one delivery due
//! at one time; the worker carries it from the due scan to the outcome write, and
//! the store writes the outcome only while the lease is still current (else
//! `Stale`). What makes it current is the backend's own business.

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
/// store that made it reads what it holds: the schedule entry, and the token
/// of a backend that fences claims (0 where the entry itself is the fence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease(pub(crate) DueEntry, pub(crate) i64);

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
