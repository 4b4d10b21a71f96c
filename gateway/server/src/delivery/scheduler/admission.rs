//! Admission: how much of an endpoint's due work may start now. Both turn kinds
//! ask the same question in the same order (breaker, then its probe, then the
//! rate window, then the endpoint's free places and this node's room); they
//! differ only in where the breaker, the window and the places come from: the
//! scheduler's own memory on a local turn, the cluster's row on a shared one.

use crate::delivery::breaker::{Admit, Breaker};
use crate::delivery::rate_limit::RateWindow;

/// An endpoint's limits as one turn sees them.
pub(super) struct TurnLimits<'a> {
    pub(super) breaker: &'a mut Breaker,
    pub(super) rate: Option<&'a mut RateWindow>,
}

/// What a turn may start, and why not more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Admission {
    /// How many attempts may start.
    pub(super) allowed: usize,
    /// The one allowed is the half-open breaker's probe.
    pub(super) probing: bool,
    /// The breaker holds everything: until then (`None`: until its probe reports).
    pub(super) breaker_until: Option<Option<u64>>,
    /// The rate window held some back; it has room again then.
    pub(super) rate_free_at: Option<u64>,
}

impl Admission {
    /// The endpoint's own breaker or rate window holds back some of its work:
    /// its backlog waits on the receiver's pace, not on this machine.
    pub(super) fn held_by_own_limits(&self) -> bool {
        self.breaker_until.is_some() || self.rate_free_at.is_some()
    }
}

impl TurnLimits<'_> {
    /// What may start now, given the endpoint's `free` in-flight places and the
    /// `room` this node has for it.
    pub(super) fn admit(&mut self, free: usize, room: usize, now: u64) -> Admission {
        let (mut allowed, probing) = match self.breaker.admit(now) {
            Admit::All => (free, false),
            Admit::Probe => (free.min(1), true),
            Admit::Wait(until) => {
                return Admission {
                    allowed: 0,
                    probing: false,
                    breaker_until: Some(until),
                    rate_free_at: None,
                };
            }
        };
        let mut rate_free_at = None;
        if let Some(rate) = self.rate.as_deref_mut() {
            let available = rate.available(now);
            if available < allowed.min(room) {
                rate_free_at = Some(rate.next_free_at(now));
            }
            allowed = allowed.min(available);
        }
        Admission {
            allowed: allowed.min(room),
            probing,
            breaker_until: None,
            rate_free_at,
        }
    }
}
