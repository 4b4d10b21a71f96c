//! This node's delivery places: how many attempts it has in flight over all
//! endpoints, against `cluster.node_max_in_flight`, and which endpoints found
//! it full and wait for a place to come free.

use std::collections::HashSet;

use crate::delivery::in_flight::{InFlight, InFlightGuard};
use crate::ids::EndpointId;

/// This node's places and who waits for them.
pub(super) struct NodePlaces {
    in_flight: InFlight,
    max: usize,
    /// Endpoints that found the node full; served again as attempts finish.
    waiting: HashSet<EndpointId>,
}

impl NodePlaces {
    pub(super) fn new(max: usize) -> Self {
        Self {
            in_flight: InFlight::default(),
            max: max.max(1),
            waiting: HashSet::new(),
        }
    }

    /// The places free for `endpoint_id`; with none, it waits for the next
    /// attempt to finish.
    pub(super) fn free_for(&mut self, endpoint_id: &EndpointId) -> usize {
        let free = self.in_flight.free(self.max);
        if free == 0 {
            self.waiting.insert(endpoint_id.to_owned());
        }
        free
    }

    /// Takes one place, if the node has one; given back when the guard drops.
    pub(super) fn try_take(&self) -> Option<InFlightGuard> {
        self.in_flight.try_start(self.max)
    }

    /// The endpoints that waited for a place, once one is free again.
    pub(super) fn take_waiting(&mut self) -> Vec<EndpointId> {
        if self.waiting.is_empty() || self.in_flight.free(self.max) == 0 {
            return Vec::new();
        }
        self.waiting.drain().collect()
    }
}
