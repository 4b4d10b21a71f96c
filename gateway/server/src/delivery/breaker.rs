//! The per-endpoint circuit breaker.
//!
//! It counts raw outcomes (a non-2xx or a transport error is a failure), not
//! verdicts. After `failure_threshold` consecutive failures it opens for the next
//! cool-down of the ladder; afterwards exactly one half-open probe goes out. A
//! successful probe closes it and resets the ladder; a failed one re-opens it one
//! step further up. Waiting on an open breaker is never an attempt.

use crate::config::BreakerConfig;
use crate::store::{BreakerRecord, BreakerState};

/// What one attempt produced, as the breaker counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawOutcome {
    Success,
    Failure,
    /// Not counted: a blocked address, or no attempt was made after all.
    Neutral,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed,
    Open { until_ms: u64 },
    HalfOpen { probing: bool },
}

/// How much traffic the breaker lets through now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Closed: as much as the other limits allow.
    All,
    /// Half-open: exactly one probe.
    Probe,
    /// Open until then (or, with `None`, until the probe in flight reports).
    Wait(Option<u64>),
}

/// A state change worth persisting and alerting on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transition {
    Tripped { until_ms: u64, trips: u32 },
    Recovered,
}

/// One endpoint's breaker.
#[derive(Debug, Clone)]
pub(crate) struct Breaker {
    state: State,
    streak: u32,
    trips: u32,
    failing_since_ms: Option<u64>,
}

impl Breaker {
    /// Restores a breaker from its stored record.
    pub(crate) fn from_record(rec: &BreakerRecord) -> Self {
        let state = match (rec.state.known(), rec.open_until_ms) {
            (Some(BreakerState::Open), Some(until_ms)) => State::Open { until_ms },
            (Some(BreakerState::HalfOpen), _) | (Some(BreakerState::Open), None) => {
                State::HalfOpen { probing: false }
            }
            _ => State::Closed,
        };
        Self {
            state,
            streak: rec.failure_streak,
            trips: rec.trips,
            failing_since_ms: rec.failing_since_ms,
        }
    }

    /// The breaker every node shares: its record, with a half-open probe out
    /// (on any node) until `probe_until_ms`.
    pub(crate) fn from_shared(
        rec: &BreakerRecord,
        probe_until_ms: Option<u64>,
        now_ms: u64,
    ) -> Self {
        let mut breaker = Self::from_record(rec);
        if probe_until_ms.is_some_and(|until| until > now_ms)
            && matches!(breaker.state, State::HalfOpen { .. })
        {
            breaker.state = State::HalfOpen { probing: true };
        }
        breaker
    }

    /// A half-open probe is out.
    pub(crate) fn probing(&self) -> bool {
        self.state == (State::HalfOpen { probing: true })
    }

    /// Closed, with no failure counted since the last success.
    pub(crate) fn pristine(&self) -> bool {
        self.state == State::Closed && self.streak == 0
    }

    /// The record to store and show on the endpoint.
    pub(crate) fn to_record(&self) -> BreakerRecord {
        let (state, open_until_ms) = match self.state {
            State::Closed => (BreakerState::Closed, None),
            State::Open { until_ms } => (BreakerState::Open, Some(until_ms)),
            State::HalfOpen { .. } => (BreakerState::HalfOpen, None),
        };
        BreakerRecord {
            state: state.into(),
            open_until_ms,
            trips: self.trips,
            failure_streak: self.streak,
            failing_since_ms: self.failing_since_ms,
        }
    }

    /// What may go out at `now_ms`; an expired cool-down turns half-open here.
    pub(crate) fn admit(&mut self, now_ms: u64) -> Admit {
        match self.state {
            State::Closed => Admit::All,
            State::Open { until_ms } if now_ms < until_ms => Admit::Wait(Some(until_ms)),
            State::Open { .. } | State::HalfOpen { probing: false } => {
                self.state = State::HalfOpen { probing: false };
                Admit::Probe
            }
            State::HalfOpen { probing: true } => Admit::Wait(None),
        }
    }

    /// An operator replayed work (the receiver is said to be fixed): an open
    /// breaker lets its half-open probe go now instead of at the cool-down's end.
    /// `true` if that changed the state.
    pub(crate) fn probe_now(&mut self) -> bool {
        let open = matches!(self.state, State::Open { .. });
        if open {
            self.state = State::HalfOpen { probing: false };
        }
        open
    }

    /// Closed by hand: the streak, the ladder and the failing run start over.
    /// `true` if it was not closed.
    pub(crate) fn reset(&mut self) -> bool {
        let was_closed = self.state == State::Closed;
        *self = Self::from_record(&BreakerRecord::default());
        !was_closed
    }

    /// What [`Breaker::admit`] would answer at `now_ms`, without the state change
    /// an expired cool-down makes there.
    pub(crate) fn peek(&self, now_ms: u64) -> Admit {
        match self.state {
            State::Closed => Admit::All,
            State::Open { until_ms } if now_ms < until_ms => Admit::Wait(Some(until_ms)),
            State::Open { .. } | State::HalfOpen { probing: false } => Admit::Probe,
            State::HalfOpen { probing: true } => Admit::Wait(None),
        }
    }

    /// The half-open probe has been sent.
    pub(crate) fn probe_sent(&mut self) {
        if let State::HalfOpen { .. } = self.state {
            self.state = State::HalfOpen { probing: true };
        }
    }

    /// When the current run of failures began.
    pub(crate) fn failing_since_ms(&self) -> Option<u64> {
        self.failing_since_ms
    }

    /// Counts one outcome; returns a transition if the state changed.
    pub(crate) fn record(
        &mut self,
        outcome: RawOutcome,
        now_ms: u64,
        cfg: &BreakerConfig,
    ) -> Option<Transition> {
        match outcome {
            RawOutcome::Neutral => {
                if self.state == (State::HalfOpen { probing: true }) {
                    self.state = State::HalfOpen { probing: false };
                }
                None
            }
            RawOutcome::Success => {
                self.streak = 0;
                self.failing_since_ms = None;
                let was_closed = self.state == State::Closed;
                self.state = State::Closed;
                self.trips = 0;
                (!was_closed).then_some(Transition::Recovered)
            }
            RawOutcome::Failure => {
                self.streak = self.streak.saturating_add(1);
                self.failing_since_ms.get_or_insert(now_ms);
                let trip = match self.state {
                    State::Closed => self.streak >= cfg.failure_threshold,
                    State::HalfOpen { .. } => true,
                    State::Open { .. } => false,
                };
                trip.then(|| self.trip(now_ms, cfg))
            }
        }
    }

    fn trip(&mut self, now_ms: u64, cfg: &BreakerConfig) -> Transition {
        let step = (self.trips as usize).min(cfg.cooldowns.len().saturating_sub(1));
        let until_ms = now_ms.saturating_add(cfg.cooldowns.get(step).copied().unwrap_or(600_000));
        self.trips += 1;
        self.state = State::Open { until_ms };
        Transition::Tripped {
            until_ms,
            trips: self.trips,
        }
    }
}

#[cfg(test)]
mod tests;
