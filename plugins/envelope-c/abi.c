/*
 * The allocator the canonical ABI asks for: `cabi_realloc`, exported, and
 * `hg_alloc` for the transform's own answer. A bump heap from `__heap_base`
 * (where wasm-ld ends the data and the stack), grown a page at a time with
 * `memory.grow`; the host's limit (16 MiB) makes a grow fail, and then this
 * traps instead of writing past the end.
 *
 * Nothing is freed during a call. The host runs a transform in a fresh
 * instance, but its upload checks also run every sample again in one reused
 * instance: so when a call has returned (`hg_call_done`), the next
 * `cabi_realloc`, which can only be the host lowering the next call's input,
 * starts the heap over.
 */
#include "abi.h"

#define PAGE 65536u

/* Where wasm-ld puts the first byte no data or stack uses. */
extern uint8_t __heap_base;

static uint32_t heap_start;
static uint32_t heap_top;
static int call_done;

static void heap_reset(void) {
    heap_start = (uint32_t)(uintptr_t)&__heap_base;
    heap_top = heap_start;
    call_done = 0;
}

void *hg_alloc(uint32_t size, uint32_t align) {
    if (heap_start == 0) {
        heap_reset();
    }
    if (align == 0 || (align & (align - 1)) != 0) {
        __builtin_trap();
    }
    uint32_t p = (heap_top + (align - 1)) & ~(align - 1);
    if (p < heap_top || size > UINT32_MAX - p) {
        __builtin_trap();
    }
    uint32_t end = p + size;
    uint32_t have = (uint32_t)__builtin_wasm_memory_size(0) * PAGE;
    if (end > have) {
        uint32_t pages = (end - have + (PAGE - 1)) / PAGE;
        if (__builtin_wasm_memory_grow(0, pages) == (size_t)-1) {
            __builtin_trap();
        }
    }
    heap_top = end;
    return (void *)(uintptr_t)p;
}

void hg_call_done(void) {
    call_done = 1;
}

__attribute__((export_name("cabi_realloc")))
void *cabi_realloc(void *old_ptr, uint32_t old_size, uint32_t align, uint32_t new_size) {
    if (call_done) {
        heap_reset();
    }
    if (old_ptr != 0 && new_size <= old_size) {
        return old_ptr;
    }
    void *p = hg_alloc(new_size, align);
    if (old_ptr != 0) {
        __builtin_memcpy(p, old_ptr, old_size);
    }
    return p;
}
