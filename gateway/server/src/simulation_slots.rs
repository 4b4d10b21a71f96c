//! The room a gateway keeps for herd simulations running at once, so that many
//! callers together cannot take the cores the deliveries need, and no one
//! caller (a tenant, or the admin) can take every slot and keep the others
//! out. The simulator itself (`policy/simulator.rs`) is pure and knows nothing
//! of it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Policy simulations that may run at once on one gateway.
pub(crate) const SIMULATIONS_AT_ONCE: usize = 2;

/// Of those, how many one caller may run at once.
pub(crate) const SIMULATIONS_PER_CALLER: usize = 1;

/// [`SIMULATIONS_AT_ONCE`] slots, each held until its run ends, even when the
/// caller has gone; at most [`SIMULATIONS_PER_CALLER`] per caller.
#[derive(Debug, Clone)]
pub(crate) struct SimulationSlots {
    slots: Arc<Semaphore>,
    held: Arc<Mutex<HashMap<String, usize>>>,
}

/// Why no slot was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoSlot {
    /// This caller runs its share already.
    CallerBusy,
    /// Every slot is taken (by other callers).
    AllBusy,
}

/// One slot, held until dropped.
pub(crate) struct SimulationSlot {
    _slot: OwnedSemaphorePermit,
    caller: String,
    held: Arc<Mutex<HashMap<String, usize>>>,
}

impl SimulationSlots {
    /// A slot for `caller`, or why not.
    pub(crate) fn try_take(&self, caller: &str) -> Result<SimulationSlot, NoSlot> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let mine = held.get(caller).copied().unwrap_or(0);
        if mine >= SIMULATIONS_PER_CALLER {
            return Err(NoSlot::CallerBusy);
        }
        let slot = Arc::clone(&self.slots)
            .try_acquire_owned()
            .map_err(|_| NoSlot::AllBusy)?;
        held.insert(caller.to_owned(), mine + 1);
        Ok(SimulationSlot {
            _slot: slot,
            caller: caller.to_owned(),
            held: Arc::clone(&self.held),
        })
    }
}

impl Drop for SimulationSlot {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = held.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.caller);
            }
        }
    }
}

impl Default for SimulationSlots {
    fn default() -> Self {
        Self {
            slots: Arc::new(Semaphore::new(SIMULATIONS_AT_ONCE)),
            held: Arc::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Item 5 of tenant fairness: one caller cannot hold every slot.
    #[test]
    fn the_simulation_slots_are_shared_per_tenant() {
        let slots = SimulationSlots::default();
        let a = slots.try_take("tenant:a").unwrap();
        assert_eq!(slots.try_take("tenant:a").err(), Some(NoSlot::CallerBusy));
        let b = slots.try_take("tenant:b").unwrap();
        assert_eq!(slots.try_take("tenant:c").err(), Some(NoSlot::AllBusy));
        drop(a);
        let c = slots.try_take("tenant:c").unwrap();
        drop((b, c));
        assert!(slots.try_take("tenant:a").is_ok(), "every slot came back");
    }
}
