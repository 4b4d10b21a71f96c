//! What the scheduler keeps of one endpoint: its record and resolved policy,
//! its in-flight count, breaker and rate window, and how each of those moves
//! when the endpoint is reloaded, an attempt reports, or an operator opens it.

use std::sync::Arc;

use super::TurnKind;
use super::admission::TurnLimits;
use crate::config::BreakerConfig;
use crate::delivery::breaker::{Admit, Breaker, Transition};
use crate::delivery::endpoint_policy::EndpointPolicy;
use crate::delivery::in_flight::InFlight;
use crate::delivery::rate_limit::RateWindow;
use crate::delivery::worker::AttemptReport;
use crate::policy::PolicySpec;
use crate::store::EndpointRecord;

/// One endpoint as the scheduler holds it.
pub(super) struct EndpointSlot {
    pub(super) record: Arc<EndpointRecord>,
    /// Resolved here, once per load, for every attempt until the next.
    pub(super) policy: Arc<EndpointPolicy>,
    pub(super) in_flight: InFlight,
    pub(super) breaker: Breaker,
    pub(super) rate: Option<RateWindow>,
}

impl EndpointSlot {
    /// The slot for a freshly read `ep`, carrying over from the `old` slot what
    /// must outlive a reload.
    pub(super) fn load(
        ep: EndpointRecord,
        old: Option<EndpointSlot>,
        kind: TurnKind,
        default_policy: &PolicySpec,
    ) -> Self {
        // What is in flight and what started this second outlive the reload: a
        // changed limit applies to them, it does not start a fresh count.
        let in_flight = old
            .as_ref()
            .map(|s| s.in_flight.clone())
            .unwrap_or_default();
        let rate =
            ep.rate_limit_per_s
                .map(|per_s| match old.as_ref().and_then(|s| s.rate.clone()) {
                    Some(window) => window.with_limit(per_s),
                    None => RateWindow::new(per_s),
                });
        // The in-memory breaker is ahead of the stored one, unless the endpoint was
        // just re-enabled (which resets it). Where gateways share the breaker, the
        // stored one is as fresh as any (each transition is stored), and each
        // claim reads the shared state anyway.
        let breaker = match (old, kind) {
            (Some(s), TurnKind::Local) if !s.record.disabled || ep.disabled => s.breaker,
            _ => Breaker::from_record(&ep.breaker),
        };
        let policy = Arc::new(EndpointPolicy::load(&ep, default_policy));
        Self {
            record: Arc::new(ep),
            policy,
            in_flight,
            breaker,
            rate,
        }
    }

    /// The endpoint's limits as this process keeps them (a local turn's).
    pub(super) fn limits(&mut self) -> TurnLimits<'_> {
        TurnLimits {
            breaker: &mut self.breaker,
            rate: self.rate.as_mut(),
        }
    }

    /// Counts a finished attempt on the breaker: this slot's own on a local
    /// turn; on a shared one the attempt's task counted it on the cluster's,
    /// and the slot takes that state over.
    pub(super) fn take_report(
        &mut self,
        report: AttemptReport,
        kind: TurnKind,
        now: u64,
        config: &BreakerConfig,
    ) -> Option<Transition> {
        match kind {
            TurnKind::Local => self.breaker.record(report.outcome, now, config),
            TurnKind::Shared => report.shared.and_then(|shared| {
                self.breaker = shared.breaker;
                shared.transition
            }),
        }
    }

    /// Whether the endpoint has failed without a success for `disable_after_ms`.
    pub(super) fn failing_too_long(&self, now: u64, disable_after_ms: u64) -> bool {
        self.breaker
            .failing_since_ms()
            .is_some_and(|since| now.saturating_sub(since) >= disable_after_ms)
    }

    /// An operator's replay (`reset` false) lets an open breaker probe now; a
    /// reset closes it. On a local turn, `Some(was_open)` when the breaker
    /// changed and must be stored; on a shared one the store changed the
    /// cluster's breaker already and the claim reads it.
    pub(super) fn open_by_hand(&mut self, reset: bool, kind: TurnKind, now: u64) -> Option<bool> {
        let was_open = match kind {
            TurnKind::Local => !matches!(self.breaker.admit(now), Admit::All),
            TurnKind::Shared => false,
        };
        let changed = if reset {
            self.breaker.reset()
        } else {
            self.breaker.probe_now()
        };
        (kind == TurnKind::Local && changed).then_some(was_open)
    }

    /// Whether a new due entry should queue the endpoint, and for when: a
    /// paused endpoint waits for its cool-down's end (queued once, at that
    /// time) or its probe's report, rather than piling up an entry per ingest.
    pub(super) fn wake_at(&self, due_ms: u64, kind: TurnKind, now: u64) -> Option<u64> {
        if self.record.disabled {
            return None;
        }
        match self.breaker.peek(now) {
            Admit::All | Admit::Probe => Some(due_ms),
            Admit::Wait(Some(until)) => Some(until),
            // Where gateways share the breaker, a probe out may be another
            // node's, whose report this one never hears: the claim decides.
            Admit::Wait(None) if kind == TurnKind::Shared => Some(due_ms),
            Admit::Wait(None) => None,
        }
    }
}
