//! The room a gateway keeps for herd simulations running at once, so that many
//! callers together cannot take the cores the deliveries need. The simulator
//! itself (`policy/simulator.rs`) is pure and knows nothing of it.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Policy simulations that may run at once on one gateway.
pub(crate) const SIMULATIONS_AT_ONCE: usize = 2;

/// [`SIMULATIONS_AT_ONCE`] slots, each held until its run ends, even when the
/// caller has gone.
#[derive(Debug, Clone)]
pub(crate) struct SimulationSlots(Arc<Semaphore>);

/// One slot, held until dropped.
pub(crate) struct SimulationSlot(#[allow(dead_code)] OwnedSemaphorePermit);

impl SimulationSlots {
    /// A slot, or `None` when every slot is taken.
    pub(crate) fn try_take(&self) -> Option<SimulationSlot> {
        Arc::clone(&self.0)
            .try_acquire_owned()
            .ok()
            .map(SimulationSlot)
    }
}

impl Default for SimulationSlots {
    fn default() -> Self {
        Self(Arc::new(Semaphore::new(SIMULATIONS_AT_ONCE)))
    }
}
