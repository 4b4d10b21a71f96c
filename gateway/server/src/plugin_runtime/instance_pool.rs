//! The pooling allocator's shape: how many instance slots it keeps warm, and how
//! a freed memory slot is made clean for the next decision.
//!
//! With `PAGEMAP_SCAN` (Linux 6.7 and later) the allocator asks the kernel which
//! pages the guest dirtied and copies back only those, up to
//! [`DIRTY_KEEP_RESIDENT`]; they stay mapped, so the next decision in the slot
//! takes no page fault and sends no TLB-shootdown IPI. The scan does not report a
//! dirty page the kernel has swapped out, which would then be neither reset nor
//! released, so with any active swap the classic reset is kept: the first
//! [`CLASSIC_KEEP_RESIDENT`] bytes are zeroed and the rest decommitted.

use std::ops::RangeInclusive;

use wasmtime::{Enabled, Engine, PoolingAllocationConfig};

use super::engine::MEMORY_LIMIT_BYTES;

/// Instance slots when `plugins.slots` is not set.
pub(crate) const DEFAULT_SLOTS: u32 = 64;
/// The values `plugins.slots` accepts.
pub(crate) const SLOTS_RANGE: RangeInclusive<u32> = 2..=4096;
/// Linear memory kept resident per slot when only dirty pages are reset.
const DIRTY_KEEP_RESIDENT: usize = 1 << 20;
/// Linear memory zeroed in place per slot by the classic reset; the rest is
/// decommitted.
const CLASSIC_KEEP_RESIDENT: usize = 128 << 10;
/// Core instances and tables per slot: a componentized plugin has a few of each.
const CORE_INSTANCES_PER_SLOT: u32 = 4;

/// How a freed memory slot is reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResetMode {
    /// Only the pages the guest dirtied are copied back, found with `PAGEMAP_SCAN`.
    DirtyPages,
    /// The low pages are zeroed in place and the rest decommitted.
    Classic,
}

impl ResetMode {
    /// The mode for this host, and why: [`choose_reset`] over `/proc/swaps` and
    /// whether the kernel has `PAGEMAP_SCAN`.
    pub(crate) fn detect() -> (Self, &'static str) {
        let swaps = std::fs::read_to_string("/proc/swaps").ok();
        choose_reset(
            swaps.as_deref(),
            PoolingAllocationConfig::is_pagemap_scan_available(),
        )
    }

    /// The name `/metrics` and the start-up log use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::DirtyPages => "dirty_pages",
            Self::Classic => "classic",
        }
    }
}

/// Chooses the reset from the text of `/proc/swaps` (`None`: unreadable) and
/// whether `PAGEMAP_SCAN` is available. Dirty pages only with the scan and no
/// active swap, which the file shows as nothing below its header line.
pub(crate) fn choose_reset(swaps: Option<&str>, scan_available: bool) -> (ResetMode, &'static str) {
    let Some(swaps) = swaps else {
        return (ResetMode::Classic, "/proc/swaps cannot be read");
    };
    if swaps.lines().skip(1).any(|line| !line.trim().is_empty()) {
        return (ResetMode::Classic, "swap is active");
    }
    if !scan_available {
        return (ResetMode::Classic, "the kernel has no PAGEMAP_SCAN");
    }
    (
        ResetMode::DirtyPages,
        "PAGEMAP_SCAN is available and no swap is active",
    )
}

/// How many slots the pool has, and how it resets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PoolShape {
    /// Component instances, and memories, that can be live or warm at once.
    pub(crate) slots: u32,
    pub(crate) reset: ResetMode,
}

impl PoolShape {
    /// The allocator's configuration.
    pub(crate) fn config(self) -> PoolingAllocationConfig {
        let mut pool = PoolingAllocationConfig::new();
        match self.reset {
            ResetMode::DirtyPages => pool
                .pagemap_scan(Enabled::Yes)
                .linear_memory_keep_resident(DIRTY_KEEP_RESIDENT)
                .table_keep_resident(64 << 10),
            ResetMode::Classic => pool
                .pagemap_scan(Enabled::No)
                .linear_memory_keep_resident(CLASSIC_KEEP_RESIDENT)
                .table_keep_resident(16 << 10),
        };
        let core = self.slots.saturating_mul(CORE_INSTANCES_PER_SLOT);
        pool.total_component_instances(self.slots)
            .total_memories(self.slots)
            .total_core_instances(core)
            .total_tables(core)
            .max_memory_size(MEMORY_LIMIT_BYTES);
        pool
    }
}

/// The pool's memory slots, as `/metrics` shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// Memory slots in the pool (`plugins.slots`, or more for the decision threads).
    pub slots: u32,
    /// Linear memories live now.
    pub memories_in_use: u64,
    /// Memory slots free but used before, which a plugin's next instance prefers.
    pub memories_warm: u64,
}

impl PoolUsage {
    /// Reads the engine's pooling-allocator counters.
    pub(crate) fn read(engine: &Engine, shape: PoolShape) -> Self {
        let mut usage = Self {
            slots: shape.slots,
            ..Self::default()
        };
        if let Some(m) = engine.pooling_allocator_metrics() {
            usage.memories_in_use = m.memories() as u64;
            usage.memories_warm = u64::from(m.unused_warm_memories());
        }
        usage
    }
}

#[cfg(test)]
mod tests {
    use super::{PoolShape, ResetMode, SLOTS_RANGE, choose_reset};
    use crate::plugin_runtime::engine::{FUEL_PER_DECISION, Sandbox};

    const HEADER: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";

    #[test]
    fn dirty_pages_only_with_the_scan_and_no_active_swap() {
        assert_eq!(choose_reset(Some(HEADER), true).0, ResetMode::DirtyPages);
        let trailing_blank = format!("{HEADER}\n  \n");
        assert_eq!(
            choose_reset(Some(&trailing_blank), true).0,
            ResetMode::DirtyPages
        );
    }

    #[test]
    fn any_active_swap_keeps_the_classic_reset() {
        let partition = format!("{HEADER}/dev/vda2 partition\t8388604\t0\t-2\n");
        let file = format!("{HEADER}/swapfile file\t1048572\t5120\t-3\n");
        for swaps in [partition, file] {
            assert_eq!(
                choose_reset(Some(&swaps), true),
                (ResetMode::Classic, "swap is active")
            );
        }
    }

    #[test]
    fn no_scan_or_no_swap_list_keeps_the_classic_reset() {
        assert_eq!(
            choose_reset(Some(HEADER), false),
            (ResetMode::Classic, "the kernel has no PAGEMAP_SCAN")
        );
        assert_eq!(
            choose_reset(None, true),
            (ResetMode::Classic, "/proc/swaps cannot be read")
        );
    }

    #[test]
    fn the_largest_pool_plugins_slots_allows_starts() {
        let shape = PoolShape {
            slots: *SLOTS_RANGE.end(),
            reset: ResetMode::detect().0,
        };
        let sandbox = Sandbox::new(shape, FUEL_PER_DECISION, std::time::Duration::from_secs(1));
        let usage = sandbox.map(|s| s.pool_usage()).unwrap();
        assert_eq!((usage.slots, usage.memories_in_use), (4096, 0));
    }
}
