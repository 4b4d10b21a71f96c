//! What a decision's `Store` holds: its [`StoreLimits`], whether the memory limit
//! was hit, and the most memory granted. With `trap_on_grow_failure` a memory-limit
//! error is not a `Trap`, so the limiter records it here. An inline run also caps
//! growth past the instance's initial memory (see [`super::budget`]).

use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};

use super::engine::MEMORY_LIMIT_BYTES;

/// What a decision's `Store` holds: its limits, and whether the memory limit was hit
/// (with `trap_on_grow_failure` that error is not a `Trap`, so it is recorded here).
pub(crate) struct PluginState {
    limits: StoreLimits,
    pub(crate) memory_exceeded: bool,
    /// The most linear memory granted, in bytes (what `plugin-check` reports).
    pub(crate) peak_memory: usize,
    /// The memory the instance started with: the first size granted.
    pub(crate) initial_memory: Option<usize>,
    /// How far memory may grow past `initial_memory`; `None`: up to the limit.
    growth_cap: Option<usize>,
}

impl PluginState {
    /// A decision's state; `growth_cap` bounds growth past the initial memory.
    pub(crate) fn new(growth_cap: Option<usize>) -> Self {
        Self {
            limits: StoreLimitsBuilder::new()
                .memory_size(MEMORY_LIMIT_BYTES)
                .trap_on_grow_failure(true)
                .build(),
            memory_exceeded: false,
            peak_memory: 0,
            initial_memory: None,
            growth_cap,
        }
    }

    /// Bytes grown past the initial memory.
    pub(crate) fn grown_bytes(&self) -> usize {
        self.peak_memory
            .saturating_sub(self.initial_memory.unwrap_or(0))
    }

    /// Whether growing to `desired` passes the growth cap. Instantiating the
    /// memory is the first request, and sets the base the cap counts from.
    fn over_growth_cap(&mut self, desired: usize) -> bool {
        let Some(initial) = self.initial_memory else {
            self.initial_memory = Some(desired);
            return false;
        };
        self.growth_cap
            .is_some_and(|cap| desired.saturating_sub(initial) > cap)
    }
}

impl ResourceLimiter for PluginState {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if self.over_growth_cap(desired) {
            // A trap, not a refused grow: the guest must not see a smaller heap
            // inline than on the pool, or the two runs could answer differently.
            self.memory_exceeded = true;
            return Err(wasmtime::Error::msg("over the inline memory budget"));
        }
        let allowed = self.limits.memory_growing(current, desired, maximum);
        if matches!(allowed, Ok(true)) {
            self.peak_memory = self.peak_memory.max(desired);
        } else {
            self.memory_exceeded = true;
        }
        allowed
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.memory_exceeded = true;
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }
}
