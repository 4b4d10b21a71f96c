//! The guest allocator: a fixed arena in `.bss` that is handed out by bumping an
//! offset, and never given back.
//!
//! Every decision runs in a fresh instance that is thrown away afterwards, so
//! freeing is wasted work, and growing the heap is what costs: the system
//! allocator (dlmalloc) takes its first segment with `memory.grow`, which the
//! host pays for on every instantiation. The arena is part of the module's
//! initial memory instead, so a normal decision never grows it. An allocation
//! that does not fit goes to the system allocator, which still frees its own.
//!
//! Installed as the `#[global_allocator]` on `wasm32` with the default feature
//! `arena-allocator`; a plugin that wants another allocator turns default
//! features off.

#![allow(
    unsafe_code,
    reason = "a global allocator is an unsafe trait; each unsafe block is justified"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where an allocation of `size` bytes aligned to `align` goes in an arena that
/// starts at address `base`, holds `capacity` bytes and has its first `used`
/// taken: `(start, new_used)` as offsets from `base`, or `None` when it does not
/// fit (or the arithmetic would overflow). `align` is a power of two.
pub(crate) fn bump(
    base: usize,
    used: usize,
    size: usize,
    align: usize,
    capacity: usize,
) -> Option<(usize, usize)> {
    let start = base.checked_add(used)?.checked_next_multiple_of(align)? - base;
    let end = start.checked_add(size)?;
    (end <= capacity).then_some((start, end))
}

/// A bump allocator over `N` bytes of its own, falling back to [`System`].
pub(crate) struct Arena<const N: usize> {
    bytes: UnsafeCell<[MaybeUninit<u8>; N]>,
    /// How many bytes from the start are taken; only ever grows.
    used: AtomicUsize,
}

// SAFETY: the arena's bytes are only reached through the ranges `alloc` hands
// out, and the atomic `used` gives every caller, on any thread, a range no other
// caller gets.
unsafe impl<const N: usize> Sync for Arena<N> {}

impl<const N: usize> Arena<N> {
    /// An empty arena (all zero, so it lives in `.bss`).
    pub(crate) const fn new() -> Self {
        Self {
            bytes: UnsafeCell::new([MaybeUninit::uninit(); N]),
            used: AtomicUsize::new(0),
        }
    }

    fn base(&self) -> *mut u8 {
        self.bytes.get().cast::<u8>()
    }

    /// Whether `ptr` points into the arena (and so must not reach [`System`]).
    fn owns(&self, ptr: *mut u8) -> bool {
        ptr.addr().wrapping_sub(self.base().addr()) < N
    }

    /// Takes a range for `layout`, or `None` when the rest of the arena is too
    /// small.
    fn take(&self, layout: Layout) -> Option<*mut u8> {
        let base = self.base().addr();
        let mut start = 0;
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                let (s, new_used) = bump(base, used, layout.size(), layout.align(), N)?;
                start = s;
                Some(new_used)
            })
            .ok()?;
        // In bounds: `bump` checked that start + size <= N.
        Some(self.base().wrapping_add(start))
    }
}

// SAFETY: `alloc` returns either a range of the arena that `take` gave to this
// caller alone, aligned and `layout.size()` long, or what `System` returned;
// `dealloc` passes to `System` exactly the pointers that did not come from the
// arena. The default `realloc` goes through these two.
unsafe impl<const N: usize> GlobalAlloc for Arena<N> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.take(layout) {
            Some(ptr) => ptr,
            // SAFETY: the caller's contract (a layout of non-zero size) is
            // passed on unchanged.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !self.owns(ptr) {
            // SAFETY: not the arena's, so `System.alloc` made it with this
            // layout (the caller's contract).
            unsafe { System.dealloc(ptr, layout) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bump_aligns_the_address_not_just_the_offset() {
        // Base 0x1003: the first 8-aligned address is 0x1008, offset 5.
        assert_eq!(bump(0x1003, 0, 4, 8, 64), Some((5, 9)));
        assert_eq!(bump(0x1000, 0, 4, 8, 64), Some((0, 4)));
        assert_eq!(bump(0x1000, 4, 4, 8, 64), Some((8, 12)));
        assert_eq!(bump(0x1000, 5, 1, 1, 64), Some((5, 6)));
    }

    #[test]
    fn bump_refuses_what_does_not_fit() {
        assert_eq!(bump(0x1000, 60, 4, 4, 64), Some((60, 64)), "an exact fit");
        assert_eq!(bump(0x1000, 60, 5, 1, 64), None);
        assert_eq!(bump(0x1000, 57, 4, 8, 64), None, "fits only unaligned");
        assert_eq!(bump(0x1000, 0, 65, 1, 64), None);
    }

    #[test]
    fn bump_never_overflows() {
        assert_eq!(bump(usize::MAX - 2, 0, 1, 8, 64), None);
        assert_eq!(bump(0x1000, 8, usize::MAX, 1, usize::MAX), None);
        assert_eq!(bump(0x1000, usize::MAX - 0xfff, 1, 1, usize::MAX), None);
    }

    /// Allocates through the allocator's trait, as the standard library would.
    fn alloc(arena: &Arena<256>, size: usize, align: usize) -> *mut u8 {
        let layout = Layout::from_size_align(size, align).expect("a valid layout");
        // SAFETY: a non-zero size.
        let ptr = unsafe { arena.alloc(layout) };
        assert!(!ptr.is_null());
        ptr
    }

    #[test]
    fn the_arena_serves_aligned_disjoint_ranges_then_falls_back() {
        let arena = Arena::<256>::new();
        let a = alloc(&arena, 3, 1);
        let b = alloc(&arena, 16, 16);
        let c = alloc(&arena, 100, 4);
        for (ptr, align) in [(a, 1), (b, 16), (c, 4)] {
            assert!(arena.owns(ptr));
            assert_eq!(ptr.addr() % align, 0);
        }
        assert!(b.addr() >= a.addr() + 3 && c.addr() >= b.addr() + 16);

        // Too big for what is left: the system allocator's, freed there.
        let big = alloc(&arena, 200, 8);
        assert!(!arena.owns(big));
        let layout = Layout::from_size_align(200, 8).expect("a valid layout");
        // SAFETY: `big` came from `alloc` with this layout.
        unsafe { arena.dealloc(big, layout) };

        // Freeing arena memory gives nothing back: the next range is fresh.
        let layout = Layout::from_size_align(100, 4).expect("a valid layout");
        // SAFETY: `c` came from `alloc` with this layout.
        unsafe { arena.dealloc(c, layout) };
        let d = alloc(&arena, 8, 8);
        assert!(arena.owns(d) && d.addr() >= c.addr() + 100);
    }

    #[test]
    fn the_arena_is_really_writable_memory() {
        let arena = Arena::<256>::new();
        let layout = Layout::array::<u64>(4).expect("a valid layout");
        // SAFETY: a non-zero size; the range is ours, aligned for u64 and 4 long.
        let values = unsafe {
            let ptr = arena.alloc(layout).cast::<u64>();
            for i in 0..4 {
                ptr.add(i).write(i as u64 * 7);
            }
            std::slice::from_raw_parts(ptr, 4).to_vec()
        };
        assert_eq!(values, [0, 7, 14, 21]);
    }
}
