//! The local kind of turn, which the embedded store's one process takes: how
//! much a due endpoint may start now, admitted against the limits this process
//! keeps, and which due entries, first attempts and retries interleaved.

use super::Turn;
use super::attempt_starter::Admitted;
use crate::ids::EndpointId;
use crate::store::{Lane, StoreError, interleave};

/// One round-robin turn for a due endpoint, with its limits in this process.
pub(super) async fn serve(mut turn: Turn<'_>, endpoint_id: &EndpointId, now: u64) {
    let Some(node_free) = turn.node_room(endpoint_id) else {
        return;
    };
    let Turn {
        endpoints,
        places,
        starter,
    } = turn;
    let Some(slot) = endpoints.slot_mut(endpoint_id) else {
        return;
    };
    let max_in_flight = slot.record.max_in_flight as usize;
    let free = slot.in_flight.free(max_in_flight);
    let admission = slot.limits().admit(free, node_free, now);
    let held = admission.held_by_own_limits();
    endpoints.ctx().holds.set(endpoint_id, held);
    if let Some(until) = admission.breaker_until {
        if let Some(until) = until {
            endpoints.push(endpoint_id, until);
        }
        return; // a finishing probe requeues the endpoint
    }
    let (allowed, probing) = (admission.allowed, admission.probing);
    if allowed == 0 {
        if let Some(at) = admission.rate_free_at {
            endpoints.push(endpoint_id, at);
        }
        return; // otherwise a finishing attempt requeues the endpoint
    }
    // Leased entries are still in the schedule (storage says pending until the
    // outcome is written), so look past up to `max_in_flight` of them.
    let limit = max_in_flight + allowed;
    let store = &endpoints.ctx().store;
    let due = async {
        let first = store.due_entries(Lane::First, endpoint_id, now, limit);
        let first = first.await?;
        let retry = store.due_entries(Lane::Retry, endpoint_id, now, limit);
        Ok::<_, StoreError>(interleave(first, retry.await?))
    };
    let entries = match due.await {
        Ok(entries) => entries,
        Err(e) => {
            tracing::warn!(error = %e, endpoint_id = %endpoint_id, "cannot read due work");
            return;
        }
    };
    let Some(slot) = endpoints.slot_mut(endpoint_id) else {
        return;
    };
    let admitted = Admitted {
        entries,
        allowed,
        probing,
        shared: None,
    };
    let started = starter.start(slot, places, admitted);
    if started == allowed && !probing {
        // Used this turn's share: others go first, then this endpoint again
        // (when its rate window allows), in the next pass: within this one
        // its finished attempts would keep giving it room, and new work for
        // other endpoints would wait for the pass to end.
        let at = slot.rate.as_ref().map_or(now, |r| r.next_free_at(now));
        endpoints.push(endpoint_id, at.max(now + 1));
    } else {
        endpoints.requeue_after(endpoint_id, now).await;
    }
}
