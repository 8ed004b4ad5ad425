//! The largest single allocation a call makes, per thread (so tests running in parallel do
//! not mix): a global allocator that forwards to `System` and notes each request's size.
//! The hostile-input test binaries include this file (`#[path]`), which installs it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
}

/// The system allocator, noting the largest request of each thread.
struct Tracking;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; `note`
// only updates a thread-local `Cell` (const-initialized, no destructor, never allocates).
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract for `GlobalAlloc::alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract for `GlobalAlloc::alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (every allocation goes through it) with
        // `layout`, as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as `dealloc`, and the caller's contract for `GlobalAlloc::realloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// Runs `f` and returns its result and the largest single allocation this thread made
/// meanwhile.
pub fn largest_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|largest| largest.set(0));
    let out = f();
    (out, LARGEST.with(Cell::get))
}

/// The measure itself works (else every bound checked with it would pass for nothing).
#[test]
fn the_tracking_allocator_sees_allocations() {
    let (v, largest) = largest_during(|| vec![7u8; 5000]);
    assert_eq!((v.len(), largest), (5000, 5000));
    let (_, none) = largest_during(|| ());
    assert_eq!(none, 0);
}
