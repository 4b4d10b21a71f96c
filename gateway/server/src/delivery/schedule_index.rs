//! Endpoints ordered by when they next have work due: the scheduler's heap.

use crate::ids::EndpointId;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Endpoints ordered by when they next have work due.
///
/// An endpoint is queued at most once: `queued` holds its due time and the
/// sequence number of its live heap entry. Moving it earlier pushes a new entry
/// and leaves the old one stale (recognised by its sequence number, skipped when
/// it surfaces); when stale entries outnumber live ones the heap is rebuilt, so
/// it never holds more than about two entries per queued endpoint.
#[derive(Default)]
pub(crate) struct ScheduleIndex {
    heap: BinaryHeap<Reverse<(u64, u64, EndpointId)>>,
    queued: HashMap<EndpointId, (u64, u64)>,
    seq: u64,
}

/// Entries a small heap may hold before stale ones are worth compacting.
const COMPACT_FLOOR: usize = 64;

impl ScheduleIndex {
    /// Queues `endpoint` for `due_ms` unless it is already queued no later.
    pub(crate) fn push(&mut self, endpoint: &EndpointId, due_ms: u64) {
        if self.queued.get(endpoint).is_some_and(|(q, _)| *q <= due_ms) {
            return;
        }
        self.seq += 1;
        self.queued.insert(endpoint.clone(), (due_ms, self.seq));
        self.heap
            .push(Reverse((due_ms, self.seq, endpoint.clone())));
        if self.heap.len() > COMPACT_FLOOR.max(2 * self.queued.len()) {
            self.compact();
        }
    }

    /// Rebuilds the heap from the live entries only.
    fn compact(&mut self) {
        self.heap = self
            .queued
            .iter()
            .map(|(ep, (due, seq))| Reverse((*due, *seq, ep.clone())))
            .collect();
    }

    /// When `endpoint` is queued for, if it is.
    pub(crate) fn queued_at(&self, endpoint: &EndpointId) -> Option<u64> {
        self.queued.get(endpoint).map(|(due, _)| *due)
    }

    fn is_live(&self, seq: u64, endpoint: &EndpointId) -> bool {
        self.queued.get(endpoint).is_some_and(|(_, s)| *s == seq)
    }

    /// The earliest queued due time.
    pub(crate) fn next_due(&mut self) -> Option<u64> {
        while let Some(Reverse((due, seq, ep))) = self.heap.peek() {
            if self.is_live(*seq, ep) {
                return Some(*due);
            }
            self.heap.pop();
        }
        None
    }

    /// Takes the next endpoint due at or before `now_ms`, in due order, FIFO among equals.
    pub(crate) fn pop_due(&mut self, now_ms: u64) -> Option<EndpointId> {
        let due = self.next_due()?;
        if due > now_ms {
            return None;
        }
        let Reverse((_, _, ep)) = self.heap.pop()?;
        self.queued.remove(&ep);
        Some(ep)
    }

    /// Forgets an endpoint.
    pub(crate) fn remove(&mut self, endpoint: &EndpointId) {
        self.queued.remove(endpoint);
    }

    /// Heap entries, live and stale (for tests of its bound).
    #[cfg(test)]
    pub(crate) fn heap_len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_serves_due_endpoints_in_order_and_round_robin() {
        let mut ix = ScheduleIndex::default();
        ix.push(&EndpointId::from("b"), 20);
        ix.push(&EndpointId::from("a"), 10);
        ix.push(&EndpointId::from("c"), 10);
        ix.push(&EndpointId::from("a"), 30); // later than queued: ignored
        assert_eq!(ix.next_due(), Some(10));
        assert_eq!(ix.pop_due(5), None);
        assert_eq!(ix.pop_due(25).as_deref(), Some("a"));
        ix.push(&EndpointId::from("a"), 25); // back of the queue at the same time as nothing else
        assert_eq!(ix.pop_due(25).as_deref(), Some("c"));
        assert_eq!(ix.pop_due(25).as_deref(), Some("b"));
        assert_eq!(ix.pop_due(25).as_deref(), Some("a"));
        assert_eq!(ix.pop_due(100), None);
    }

    #[test]
    fn earlier_pushes_replace_later_ones_and_removed_endpoints_vanish() {
        let mut ix = ScheduleIndex::default();
        ix.push(&EndpointId::from("a"), 50);
        ix.push(&EndpointId::from("a"), 10);
        assert_eq!(ix.pop_due(10).as_deref(), Some("a"));
        assert_eq!(ix.pop_due(100), None, "the stale entry at 50 is skipped");
        ix.push(&EndpointId::from("b"), 5);
        ix.remove(&EndpointId::from("b"));
        assert_eq!(ix.next_due(), None);
    }

    #[test]
    fn a_removed_then_requeued_endpoint_is_served_once() {
        let mut ix = ScheduleIndex::default();
        ix.push(&EndpointId::from("a"), 10);
        ix.remove(&EndpointId::from("a"));
        ix.push(&EndpointId::from("a"), 10);
        // Same due time: only the sequence number tells the stale entry apart.
        assert_eq!(ix.pop_due(10).as_deref(), Some("a"));
        assert_eq!(ix.pop_due(10), None, "served twice");
    }

    #[test]
    fn stale_entries_never_grow_the_heap_past_two_per_endpoint() {
        let mut ix = ScheduleIndex::default();
        for round in 0..10_000u64 {
            for ep in ["a", "b", "c"] {
                // Queued later, then earlier: each round leaves a stale entry.
                ix.remove(&EndpointId::from(ep));
                ix.push(&EndpointId::from(ep), 1_000_000 + round);
                ix.push(&EndpointId::from(ep), round);
            }
            assert!(ix.heap_len() <= COMPACT_FLOOR.max(2 * 3) + 1);
        }
        assert_eq!(ix.pop_due(u64::MAX).as_deref(), Some("a"));
    }
}
