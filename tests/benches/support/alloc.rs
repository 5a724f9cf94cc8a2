//! A global allocator that counts the bytes live, to measure what a component holds as the
//! difference between two readings (the bytes freed when it is dropped), and the bytes
//! allocated in all (freed since or not), to measure what some work allocates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::time::Duration;

/// The system allocator, counting the bytes live in [`allocated`].
pub struct Counting;

static ALLOCATED: AtomicIsize = AtomicIsize::new(0);
static TOTAL: AtomicUsize = AtomicUsize::new(0);

// SAFETY: delegates to the system allocator, only counting sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as isize, Ordering::Relaxed);
        TOTAL.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ALLOCATED.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        TOTAL.fetch_add(new_size.saturating_sub(layout.size()), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The bytes live now (only meaningful in a binary whose global allocator is [`Counting`]).
pub fn allocated() -> isize {
    ALLOCATED.load(Ordering::Relaxed)
}

/// The bytes allocated so far, freed since or not (a reallocation counts what it grew by).
pub fn total() -> usize {
    TOTAL.load(Ordering::Relaxed)
}

/// The bytes live once background tasks (sweepers, connection handlers) had time to drop what
/// they hold.
pub async fn settled() -> isize {
    tokio::time::sleep(Duration::from_millis(500)).await;
    allocated()
}
