//! A turn on a store that several gateways share: the endpoint's breaker, rate
//! window and in-flight count are the cluster's, read and changed by one node
//! at a time under the endpoint's row lock ([`Store::claim_turn`]). This node
//! brings only what it may take on: the endpoint's places it has free and its
//! own cap.
//!
//! [`Store::claim_turn`]: crate::store::Store::claim_turn

use std::sync::Arc;

use super::Turn;
use super::admission::TurnLimits;
use super::attempt_starter::Admitted;
use crate::clock::Clock;
use crate::delivery::breaker::{Admit, Breaker};
use crate::delivery::rate_limit::RateWindow;
use crate::delivery::shared_breaker::SharedBreaker;
use crate::ids::EndpointId;
use crate::store::{ClaimedTurn, RuntimeRecord, TurnPlan};

/// Another node is planning the endpoint: look again this soon.
const BUSY_RETRY_MS: u64 = 20;
/// The cluster's in-flight places are full, or a probe is out on some node:
/// look again this soon (what other nodes finish is not announced).
const FULL_RETRY_MS: u64 = 200;
/// The shared state could not be read: look again this soon.
const ERROR_RETRY_MS: u64 = 1_000;
/// How long a claimed attempt may take to leave after its claim (the commit,
/// the worker's start): starts are stamped that much later, so a receiver
/// never sees more than the rate in a second however the two vary.
const SEND_SLACK_MS: u64 = 50;

/// What a turn may start under the shared state, and why not more.
struct SharedTurn {
    now: u64,
    /// Stamps the starts when they are claimed, not when the turn began: the
    /// claim may take a while under load, and the window must not open early.
    clock: Arc<dyn Clock>,
    /// What this node may take on for the endpoint.
    want: usize,
    max_in_flight: usize,
    rate_limit_per_s: Option<u32>,
    allowed: usize,
    probing: bool,
    /// The endpoint's breaker or rate window held some of its work back.
    held: bool,
    /// Why nothing more may start, and when to look again.
    again_at: Option<u64>,
}

impl TurnPlan for SharedTurn {
    fn allowed(&mut self, runtime: &RuntimeRecord, live_leases: usize) -> usize {
        let now = self.now;
        // The cluster's places, breaker and window, as the row holds them.
        let free = self.max_in_flight.saturating_sub(live_leases);
        let mut breaker = Breaker::from_shared(&runtime.breaker, runtime.probe_until_ms, now);
        let mut window = self
            .rate_limit_per_s
            .map(|per_s| RateWindow::from_starts(per_s, &runtime.starts));
        let mut limits = TurnLimits {
            breaker: &mut breaker,
            rate: window.as_mut(),
        };
        let admission = limits.admit(free, self.want, now);
        self.probing = admission.probing;
        self.held = admission.held_by_own_limits();
        // What other nodes finish is not announced: a full endpoint, or a probe
        // out on some node, is looked at again soon.
        if let Some(until) = admission.breaker_until {
            self.again_at = Some(until.unwrap_or(now + FULL_RETRY_MS));
        }
        if free == 0 {
            self.again_at = Some(now + FULL_RETRY_MS);
        }
        if let Some(at) = admission.rate_free_at {
            self.again_at = Some(at);
        }
        self.allowed = admission.allowed;
        self.allowed
    }

    fn started(&mut self, runtime: &mut RuntimeRecord, started: usize, lease_until_ms: u64) {
        let now = self.now;
        if let Some(per_s) = self.rate_limit_per_s {
            let at = self.clock.now_ms().max(now) + SEND_SLACK_MS;
            let mut window = RateWindow::from_starts(per_s, &runtime.starts);
            for _ in 0..started {
                window.started(at);
            }
            runtime.starts = window.starts(at);
        } else {
            runtime.starts.clear();
        }
        let mut breaker = Breaker::from_shared(&runtime.breaker, runtime.probe_until_ms, now);
        if let Admit::Probe = breaker.admit(now) {
            // An expired cool-down is half-open now, for every node.
            runtime.breaker = breaker.to_record();
            if self.probing && started > 0 {
                runtime.probe_until_ms = Some(lease_until_ms);
            }
        }
    }
}

/// One turn for a due endpoint, planned under the shared state.
pub(super) async fn serve(mut turn: Turn<'_>, endpoint_id: &EndpointId, now: u64) {
    let Some(node_free) = turn.node_room(endpoint_id) else {
        return;
    };
    let Turn {
        endpoints,
        places,
        starter,
    } = turn;
    let Some(slot) = endpoints.slot(endpoint_id) else {
        return;
    };
    let max_in_flight = slot.record.max_in_flight as usize;
    let want = slot.in_flight.free(max_in_flight).min(node_free);
    if want == 0 {
        return; // a finishing attempt requeues the endpoint
    }
    let ctx = Arc::clone(endpoints.ctx());
    // The claim's own time, not the pass's (which may be old by now): leases
    // run from it, and this node's monotonic lease end with them.
    let now = ctx.clock.now_ms().max(now);
    let mut plan = SharedTurn {
        now,
        clock: Arc::clone(&ctx.clock),
        want,
        max_in_flight,
        rate_limit_per_s: slot.record.rate_limit_per_s,
        allowed: 0,
        probing: false,
        held: false,
        again_at: None,
    };
    let claimed = ctx.store.claim_turn(endpoint_id, now, &mut plan).await;
    // Only a turn that read the endpoint's shared state knows whether its
    // limits hold it; a busy row (another node's turn) says nothing.
    if let Ok(ClaimedTurn::Claimed { .. }) = &claimed {
        ctx.holds.set(endpoint_id, plan.held);
    }
    let (leases, runtime) = match claimed {
        Ok(ClaimedTurn::Claimed { leases, runtime }) => (leases, runtime),
        Ok(ClaimedTurn::Busy) => {
            endpoints.push(endpoint_id, now + BUSY_RETRY_MS);
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, endpoint_id = %endpoint_id, "cannot claim due work");
            endpoints.push(endpoint_id, now + ERROR_RETRY_MS);
            return;
        }
    };
    let breaker = Breaker::from_shared(&runtime.breaker, runtime.probe_until_ms, now);
    let shared = SharedBreaker {
        config: endpoints.protection().breaker.clone(),
        pristine: breaker.pristine(),
        probe: plan.probing,
    };
    let claimed = leases.len();
    let started = match endpoints.slot_mut(endpoint_id) {
        Some(slot) => {
            slot.breaker = breaker;
            let admitted = Admitted {
                entries: leases,
                allowed: plan.allowed,
                probing: false,
                shared: Some(shared),
            };
            starter.start(slot, places, admitted)
        }
        None => 0,
    };
    if started < claimed {
        // Claimed but not started (this node filled up meanwhile): they come
        // due again when their leases expire.
        tracing::debug!(
            endpoint_id = %endpoint_id,
            claimed,
            started,
            "claimed work left to its lease"
        );
    }
    // Used this turn's share: again in the next pass, not this one (its
    // attempts finish while it claims, so within one pass it would always
    // have room again and the pass would never end). One that started
    // nothing waits.
    let later = plan.again_at.filter(|at| *at > now);
    if claimed > 0 && claimed == plan.allowed && !plan.probing {
        endpoints.push(endpoint_id, later.unwrap_or(now + 1));
    } else if let Some(at) = later {
        endpoints.push(endpoint_id, at);
    } else {
        endpoints.requeue_after(endpoint_id, now).await;
    }
}
