//! What a decision's `Store` holds: its [`StoreLimits`], whether the memory limit
//! was hit, and the most memory granted. With `trap_on_grow_failure` a memory-limit
//! error is not a `Trap`, so the limiter records it here.

use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};

use super::engine::MEMORY_LIMIT_BYTES;

/// What a decision's `Store` holds: its limits, and whether the memory limit was hit
/// (with `trap_on_grow_failure` that error is not a `Trap`, so it is recorded here).
pub(crate) struct PluginState {
    limits: StoreLimits,
    pub(crate) memory_exceeded: bool,
    /// The most linear memory granted, in bytes (what `plugin-check` reports).
    pub(crate) peak_memory: usize,
}

impl PluginState {
    pub(crate) fn new() -> Self {
        Self {
            limits: StoreLimitsBuilder::new()
                .memory_size(MEMORY_LIMIT_BYTES)
                .trap_on_grow_failure(true)
                .build(),
            memory_exceeded: false,
            peak_memory: 0,
        }
    }
}

impl ResourceLimiter for PluginState {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
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
