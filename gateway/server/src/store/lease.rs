//! Due work as the delivery engine holds it. A [`Lease`] names one delivery due
//! at one time; the worker carries it from the due scan to the outcome write, and
//! the store writes the outcome only while the lease is still current (else
//! `Stale`). What makes it current is the backend's own business.

use super::sled::keys::ScheduleKey;

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

/// One delivery due at one time, as the store handed it out. Opaque: only the
/// store that made it reads what it holds: the schedule entry, and the token
/// of a backend that fences claims (0 where the entry itself is the fence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease(pub(crate) ScheduleKey, pub(crate) i64);

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
