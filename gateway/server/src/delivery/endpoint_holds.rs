//! Endpoints whose due work waits on their own limits: an open or half-open
//! breaker, or a rate limit that is holding some back. The scheduler marks
//! them at each turn; ingest admission leaves their backlog out, because it
//! is the receiver's pace, not the machine's, and accepting more for them
//! takes nothing from delivery.

use std::collections::HashSet;
use std::sync::Mutex;

use crate::ids::EndpointId;

/// The endpoints held by their own limits at their last turn on this node.
#[derive(Debug, Default)]
pub(crate) struct EndpointHolds(Mutex<HashSet<EndpointId>>);

impl EndpointHolds {
    /// Marks `endpoint` as held (or no longer held) by its own limits.
    pub(crate) fn set(&self, endpoint: &EndpointId, held: bool) {
        let Ok(mut set) = self.0.lock() else { return };
        if held {
            if !set.contains(endpoint) {
                set.insert(endpoint.clone());
            }
        } else {
            set.remove(endpoint);
        }
    }

    /// Whether `endpoint`'s last turn found it held by its own limits.
    pub(crate) fn is_held(&self, endpoint: &EndpointId) -> bool {
        self.0.lock().is_ok_and(|set| set.contains(endpoint))
    }
}
