//! Large fixed arenas: allocated once when a table is built, and backed by transparent huge
//! pages where the kernel allows it, so that random probes into gigabyte-sized tables do not
//! also miss the TLB on every access.
//!
//! An arena is its own anonymous mapping, aligned to a huge page and advised for huge pages
//! before its first write. Memory from the allocator would not do: a block the allocator hands
//! back from its heap has usually been written before (a benchmark's or the router's set-up
//! garbage), so it is already backed by 4 KB pages, and advice given then changes nothing until
//! the kernel's background collapse gets round to it. Measured with the 1M-entry benchmark
//! (`cascade bench engine --quick`): of 1.6 GB resident, only the FIB's arenas (which the
//! allocator happened to map afresh) were on huge pages; the PIT and name arenas were not.

use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

/// Huge-page size on x86-64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// A fixed-size array of `T` in its own huge-page-advised mapping.
pub struct FixedArena<T> {
    ptr: NonNull<T>,
    len: usize,
    /// The mapping: its start and length (length 0: nothing mapped, `ptr` is dangling).
    map: (usize, usize),
}

// SAFETY: the arena owns its items exactly as a `Box<[T]>` would.
unsafe impl<T: Send> Send for FixedArena<T> {}
// SAFETY: shared access only hands out `&[T]`.
unsafe impl<T: Sync> Sync for FixedArena<T> {}

impl<T> Deref for FixedArena<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` points at `len` initialised items (or is dangling with len 0).
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for FixedArena<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for FixedArena<T> {
    fn drop(&mut self) {
        // SAFETY: the items are initialised and dropped once, here; the mapping is ours.
        unsafe {
            core::ptr::drop_in_place(core::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr(),
                self.len,
            ));
            unmap(self.map);
        }
    }
}

impl<T: core::fmt::Debug> core::fmt::Debug for FixedArena<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FixedArena")
            .field("len", &self.len)
            .finish()
    }
}

/// An arena of `n` items made by `f`, in a fresh mapping advised for huge pages before the
/// first write (the kernel then backs each aligned 2 MB of it with one page where it can).
/// Aborts like `Vec` when the memory cannot be had.
pub fn arena<T>(n: usize, mut f: impl FnMut(usize) -> T) -> FixedArena<T> {
    let bytes = n
        .checked_mul(core::mem::size_of::<T>())
        .expect("arena size overflows usize");
    let (ptr, map) = if bytes == 0 {
        // Aligned for `T`: an empty slice (or one of zero-sized items) still needs that.
        (NonNull::<T>::dangling().cast::<u8>(), (0, 0))
    } else {
        map_huge(bytes, core::mem::align_of::<T>(), 0)
    };
    let mut a: FixedArena<T> = FixedArena {
        ptr: ptr.cast(),
        len: 0,
        map,
    };
    for i in 0..n {
        // SAFETY: i < n, inside the mapping; `len` counts the items written so far, so a panic
        // in `f` drops exactly those.
        unsafe { a.ptr.as_ptr().add(i).write(f(i)) };
        a.len = i + 1;
    }
    a
}

/// An arena of `n` zero bytes in a fresh mapping advised for huge pages beyond its first
/// [`LAZY_SMALL_PAGE_BYTES`], none of it touched: a page becomes memory when it is first
/// written (reads before that see zeros), so a large reservation costs only what is used of it.
///
/// Unlike [`arena`]'s, these pages are first written while the router forwards (the CS's Data
/// slots fill as it caches). The first write into a huge-page-advised region makes the kernel
/// find, and zero, a 2 MB page right then, compacting memory for it when none is free: on a
/// loaded machine that took 1–5 ms of CPU in the faulting worker (measured with the storage
/// stall test: the iterations over 1 ms on CPU were those with such faults, and with huge
/// pages turned off for the process their worst fell to about 1.1 ms). So a small arena (a
/// small CS's classes) stays on 4 KB pages, whose first writes cost a few µs, and a large one
/// pays the 2 MB faults only beyond its first 2 MB.
pub fn zeroed_bytes(n: usize) -> FixedArena<u8> {
    let (ptr, map) = if n == 0 {
        (NonNull::dangling(), (0, 0))
    } else {
        map_huge(n, 1, LAZY_SMALL_PAGE_BYTES)
    };
    // SAFETY: a fresh anonymous mapping (or a zeroed allocation) reads as zeros, and every
    // bit pattern is a valid `u8`.
    FixedArena { ptr, len: n, map }
}

/// Rewrites one byte of every 4 KB page of `bytes` with the value it holds (volatile, so
/// that neither is optimised away: a store of the zero a fresh mapping already reads as would
/// be), which makes the kernel map each page for writing now.
pub fn touch_pages(bytes: &mut [u8]) {
    for b in bytes.iter_mut().step_by(4096) {
        let p: *mut u8 = b;
        // SAFETY: `p` comes from a live `&mut u8`.
        unsafe { core::ptr::write_volatile(p, core::ptr::read_volatile(p)) };
    }
}

/// Rewrites one byte of every 4 KB page of `items` with the value it holds (volatile, as
/// [`touch_pages`]), which makes the kernel map each page for writing now.
pub fn touch_slice<T: Copy>(items: &mut [T]) {
    let bytes = core::mem::size_of_val(items);
    let p = items.as_mut_ptr().cast::<u8>();
    for off in (0..bytes).step_by(4096) {
        // SAFETY: in bounds of `items`, initialised memory held exclusively; `T: Copy`, so
        // rewriting one of its bytes with itself leaves a valid value.
        unsafe { core::ptr::write_volatile(p.add(off), core::ptr::read_volatile(p.add(off))) };
    }
}

/// Writes one zero byte in every 4 KB page of `v`'s reserved but unused memory (volatile, so
/// that it is not optimised away), making the kernel map it now; returns its length in bytes.
pub fn touch_spare<T>(v: &mut Vec<T>) -> usize {
    let spare = v.spare_capacity_mut();
    let bytes = core::mem::size_of_val(spare);
    let p = spare.as_mut_ptr().cast::<u8>();
    for off in (0..bytes).step_by(4096) {
        // SAFETY: in bounds of the vector's spare capacity, which nothing reads before it is
        // written by a push.
        unsafe { core::ptr::write_volatile(p.add(off), 0) };
    }
    bytes
}

/// Bytes at the start of a [`zeroed_bytes`] arena left on small pages.
pub const LAZY_SMALL_PAGE_BYTES: usize = HUGE_PAGE;

/// Maps `bytes` of fresh anonymous memory starting on a huge-page boundary, advised for huge
/// pages except for its first `small` bytes (a multiple of the huge page); returns the aligned
/// start and the whole mapping.
#[cfg(target_os = "linux")]
fn map_huge(bytes: usize, align: usize, small: usize) -> (NonNull<u8>, (usize, usize)) {
    assert!(align <= HUGE_PAGE);
    let len = bytes.next_multiple_of(HUGE_PAGE) + HUGE_PAGE;
    // SAFETY: a new private anonymous mapping; no existing memory is affected.
    let base = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        let layout = std::alloc::Layout::from_size_align(bytes, align)
            .unwrap_or(std::alloc::Layout::new::<u8>());
        std::alloc::handle_alloc_error(layout);
    }
    let start = (base as usize).next_multiple_of(HUGE_PAGE);
    let advised = bytes.next_multiple_of(HUGE_PAGE).saturating_sub(small);
    if advised > 0 {
        // SAFETY: [start + small, start + small + advised) lies inside the mapping just made,
        // which nothing has touched yet; MADV_HUGEPAGE only changes how the kernel backs it,
        // and a refusal (THP disabled) is harmless, so the result is ignored.
        unsafe {
            libc::madvise(
                (start + small) as *mut libc::c_void,
                advised,
                libc::MADV_HUGEPAGE,
            );
        }
    }
    let Some(p) = NonNull::new(start as *mut u8) else {
        unreachable!("mmap does not return null")
    };
    (p, (base as usize, len))
}

/// Unmaps what [`map_huge`] mapped.
///
/// # Safety
/// `map` came from [`map_huge`] (or has length 0) and nothing refers into it any more.
#[cfg(target_os = "linux")]
unsafe fn unmap(map: (usize, usize)) {
    if map.1 != 0 {
        // SAFETY: the caller's contract.
        unsafe { libc::munmap(map.0 as *mut libc::c_void, map.1) };
    }
}

#[cfg(not(target_os = "linux"))]
fn map_huge(bytes: usize, align: usize, _small: usize) -> (NonNull<u8>, (usize, usize)) {
    let layout =
        std::alloc::Layout::from_size_align(bytes, align.max(HUGE_PAGE)).expect("arena layout");
    // SAFETY: bytes > 0. Zeroed: `zeroed_bytes` relies on it.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    match NonNull::new(p) {
        Some(p) => (p, (p.as_ptr() as usize, bytes)),
        None => std::alloc::handle_alloc_error(layout),
    }
}

#[cfg(not(target_os = "linux"))]
unsafe fn unmap(map: (usize, usize)) {
    if map.1 != 0 {
        let layout = std::alloc::Layout::from_size_align(map.1, HUGE_PAGE).expect("arena layout");
        // SAFETY: allocated with this layout by `map_huge`.
        unsafe { std::alloc::dealloc(map.0 as *mut u8, layout) };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn arena_holds_what_f_made() {
        let a = super::arena(5_000_000, |i| i as u32 * 3);
        assert_eq!(a.len(), 5_000_000);
        assert!(a.iter().enumerate().all(|(i, &x)| x == i as u32 * 3));
        assert_eq!(a.as_ptr() as usize % super::HUGE_PAGE, 0);
        assert!(super::arena(0, |_| 0u8).is_empty());
        assert!(super::arena(0, |_| 0u64).is_empty());
        assert!(super::arena(10, |_| ()).len() == 10);
    }

    #[test]
    fn zeroed_bytes_read_as_zero_and_take_writes() {
        let mut a = super::zeroed_bytes(3 * super::HUGE_PAGE + 5);
        assert_eq!(a.len(), 3 * super::HUGE_PAGE + 5);
        assert_eq!(a.as_ptr() as usize % super::HUGE_PAGE, 0);
        assert!(a.iter().step_by(4096).all(|&b| b == 0));
        let last = a.len() - 1;
        a[last] = 7;
        a[0] = 9;
        assert_eq!((a[0], a[1], a[last]), (9, 0, 7));
        assert!(super::zeroed_bytes(0).is_empty());
    }

    #[test]
    fn arena_drops_its_items_once() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct D(#[allow(dead_code)] u64);
        impl Drop for D {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        let mut a = super::arena(1000, |i| D(i as u64));
        a[3] = D(7); // the replaced item is dropped here
        assert_eq!(DROPS.load(Ordering::Relaxed), 1);
        drop(a);
        assert_eq!(DROPS.load(Ordering::Relaxed), 1001);
    }

    #[test]
    fn a_panicking_constructor_drops_what_it_made() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct D;
        impl Drop for D {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        let r = std::panic::catch_unwind(|| {
            super::arena(100, |i| {
                assert!(i < 40, "boom");
                D
            })
        });
        assert!(r.is_err());
        assert_eq!(DROPS.load(Ordering::Relaxed), 40);
    }
}
