//! Endpoints ordered by when they next have work due: the scheduler's heap.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Endpoints ordered by when they next have work due; stale heap entries are skipped.
#[derive(Default)]
pub(crate) struct ScheduleIndex {
    heap: BinaryHeap<Reverse<(u64, u64, String)>>,
    queued: HashMap<String, u64>,
    seq: u64,
}

impl ScheduleIndex {
    /// Queues `endpoint` for `due_ms` unless it is already queued no later.
    pub(crate) fn push(&mut self, endpoint: &str, due_ms: u64) {
        if self.queued.get(endpoint).is_some_and(|q| *q <= due_ms) {
            return;
        }
        self.seq += 1;
        self.queued.insert(endpoint.to_owned(), due_ms);
        self.heap
            .push(Reverse((due_ms, self.seq, endpoint.to_owned())));
    }

    /// When `endpoint` is queued for, if it is.
    pub(crate) fn queued_at(&self, endpoint: &str) -> Option<u64> {
        self.queued.get(endpoint).copied()
    }

    /// The earliest queued due time.
    pub(crate) fn next_due(&mut self) -> Option<u64> {
        while let Some(Reverse((due, _, ep))) = self.heap.peek() {
            if self.queued.get(ep) == Some(due) {
                return Some(*due);
            }
            self.heap.pop();
        }
        None
    }

    /// Takes the next endpoint due at or before `now_ms`, in due order, FIFO among equals.
    pub(crate) fn pop_due(&mut self, now_ms: u64) -> Option<String> {
        let due = self.next_due()?;
        if due > now_ms {
            return None;
        }
        let Reverse((_, _, ep)) = self.heap.pop()?;
        self.queued.remove(&ep);
        Some(ep)
    }

    /// Forgets an endpoint.
    pub(crate) fn remove(&mut self, endpoint: &str) {
        self.queued.remove(endpoint);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_serves_due_endpoints_in_order_and_round_robin() {
        let mut ix = ScheduleIndex::default();
        ix.push("b", 20);
        ix.push("a", 10);
        ix.push("c", 10);
        ix.push("a", 30); // later than queued: ignored
        assert_eq!(ix.next_due(), Some(10));
        assert_eq!(ix.pop_due(5), None);
        assert_eq!(ix.pop_due(25).as_deref(), Some("a"));
        ix.push("a", 25); // back of the queue at the same time as nothing else
        assert_eq!(ix.pop_due(25).as_deref(), Some("c"));
        assert_eq!(ix.pop_due(25).as_deref(), Some("b"));
        assert_eq!(ix.pop_due(25).as_deref(), Some("a"));
        assert_eq!(ix.pop_due(100), None);
    }

    #[test]
    fn earlier_pushes_replace_later_ones_and_removed_endpoints_vanish() {
        let mut ix = ScheduleIndex::default();
        ix.push("a", 50);
        ix.push("a", 10);
        assert_eq!(ix.pop_due(10).as_deref(), Some("a"));
        assert_eq!(ix.pop_due(100), None, "the stale entry at 50 is skipped");
        ix.push("b", 5);
        ix.remove("b");
        assert_eq!(ix.next_due(), None);
    }
}
