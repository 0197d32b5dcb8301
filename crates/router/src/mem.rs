//! Steady memory for the forwarding threads.
//!
//! A worker that blocks in the kernel stalls every packet it owns. Measured with `perf record
//! -e sched:sched_switch` on the storage-stall test, the blocks that remained were on the
//! process-wide `mmap_lock`: a page fault on memory touched for the first time, waiting for
//! another thread's `mmap`/`munmap`/`mprotect`, or the thread's own `mprotect` when glibc grew
//! its malloc arena (a per-thread heap is grown a few pages at a time, one `mprotect` each:
//! hundreds per thread in that test) or trimmed it. So:
//!
//! - [`steady_allocator`] (once per process, glibc only) makes a new per-thread malloc heap
//!   readable and writable in full when it is created (`M_TOP_PAD` = 64 MiB, glibc's largest
//!   heap) instead of growing it page by page, never gives freed memory back to the kernel
//!   (`M_TRIM_THRESHOLD` = 1 GiB, which also keeps heaps from being unmapped), and serves
//!   allocations below 32 MiB from the arenas instead of a `mmap`/`munmap` pair each
//!   (`M_MMAP_THRESHOLD`, which also stops glibc from moving that threshold and the trim
//!   threshold at run time). Freed memory stays with the process: its resident size is the
//!   high-water mark of what it used.
//! - [`prefault_arena`] (each worker and the I/O thread, when it starts) allocates, touches and
//!   frees memory in the calling thread's own arena, so that what the thread allocates later
//!   (the CS's Data, pool buffers it creates, the admission backlog) lands on pages that are
//!   already there.
//! - The packet pool ([`crate::pool::Pool::prefault`]) and the L2 tier's read buffers (`store`)
//!   are touched when they are created.
//! - [`prefault_stack`] (each worker and the I/O thread, when it starts) writes the stack its
//!   loop will use, and [`crate::worker::Worker::prefault`] the CS's lazily written memory (the
//!   small-page part of its Data slots, its eviction log): measured with `perf record -e
//!   minor-faults` on the storage-stall test, these were the first-touch faults left in a
//!   worker's loop (docs/performance.md).

use std::sync::OnceLock;

/// Allocations of at least this many bytes get their own `mmap` (glibc's largest setting).
pub const MMAP_THRESHOLD_BYTES: usize = 32 << 20;
/// Free memory at the top of a heap is given back only beyond this (never, in practice).
pub const TRIM_THRESHOLD_BYTES: usize = 1 << 30;
/// Extra memory asked for whenever a heap is created or the main heap grows.
pub const TOP_PAD_BYTES: usize = 64 << 20;
/// Size of the pieces [`prefault_arena`] allocates (below the `mmap` threshold).
const PREFAULT_PIECE_BYTES: usize = 1 << 20;

/// Sets the process's allocator up for steady memory (see the module documentation). Runs
/// once; later calls do nothing. Returns whether the settings were applied (glibc on Linux).
pub fn steady_allocator() -> bool {
    static APPLIED: OnceLock<bool> = OnceLock::new();
    *APPLIED.get_or_init(apply)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn apply() -> bool {
    let set = |param: libc::c_int, value: usize| -> bool {
        let value = libc::c_int::try_from(value).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only records the parameter; it returns 1 on success.
        unsafe { libc::mallopt(param, value) == 1 }
    };
    // The order matters: setting the mmap threshold last would be fine too, but each of these
    // turns glibc's dynamic thresholds off, so set them together.
    set(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
        & set(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
        & set(libc::M_TOP_PAD, TOP_PAD_BYTES)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn apply() -> bool {
    false
}

/// Allocates `bytes` (rounded up to 1 MiB pieces) in the calling thread's malloc arena, writes
/// every page, and frees it, so that the thread's later allocations reuse resident pages.
/// Needs [`steady_allocator`] first, or glibc may give the memory straight back.
pub fn prefault_arena(bytes: usize) {
    let pieces = bytes.div_ceil(PREFAULT_PIECE_BYTES);
    let mut held: Vec<Vec<u8>> = Vec::with_capacity(pieces);
    for _ in 0..pieces {
        let mut v: Vec<u8> = Vec::with_capacity(PREFAULT_PIECE_BYTES);
        touch(v.spare_capacity_mut());
        held.push(v);
    }
    drop(std::hint::black_box(held));
}

/// Writes `bytes` (rounded up to 16 KiB pieces) of the calling thread's stack below the caller's
/// frame, so that the pages a loop called later uses for its frames are already mapped: a page
/// of stack touched for the first time is a page fault, which on a busy process can wait on the
/// memory-map lock. Never goes deeper than the thread's stack allows (its bounds from
/// `pthread_getattr_np`, less [`STACK_MARGIN_BYTES`]). Returns the bytes written.
pub fn prefault_stack(bytes: usize) -> usize {
    let room = stack_room_bytes().map_or(0, |r| r.saturating_sub(STACK_MARGIN_BYTES));
    let pieces = bytes.min(room) / STACK_PIECE_BYTES;
    if pieces > 0 {
        touch_stack(pieces);
    }
    pieces * STACK_PIECE_BYTES
}

/// Size of one frame of [`prefault_stack`].
const STACK_PIECE_BYTES: usize = 16 << 10;
/// Stack [`prefault_stack`] leaves unwritten at the bottom of the thread's stack.
pub const STACK_MARGIN_BYTES: usize = 64 << 10;

/// One frame of `STACK_PIECE_BYTES` written page by page, then `pieces - 1` more below it.
#[inline(never)]
fn touch_stack(pieces: usize) {
    let mut frame = [std::mem::MaybeUninit::<u8>::uninit(); STACK_PIECE_BYTES];
    touch(&mut frame);
    if pieces > 1 {
        touch_stack(pieces - 1);
    }
    // Keeps the frame (and so the recursion) from being optimised away.
    std::hint::black_box(&mut frame);
}

/// Bytes of the calling thread's stack below the caller's frame (`None` if unknown).
pub fn stack_room_bytes() -> Option<usize> {
    let (low, _) = stack_bounds()?;
    let local = 0u8;
    let here = std::hint::black_box(&local) as *const u8 as usize;
    Some(here.saturating_sub(low))
}

/// The calling thread's stack, as (lowest address, size in bytes), guard page included.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: the attribute object is initialised by pthread_getattr_np before it is read and
    // destroyed after; the out-pointers point at locals.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        ok.then_some((addr as usize, size))
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn stack_bounds() -> Option<(usize, usize)> {
    None
}

/// How many of the 4 KiB pages overlapping `len` bytes at `addr` are resident (`mincore`);
/// `None` if the kernel refuses (or not on Linux).
#[cfg(target_os = "linux")]
pub fn resident_pages(addr: usize, len: usize) -> Option<usize> {
    const PAGE: usize = 4096;
    let start = addr & !(PAGE - 1);
    let pages = (addr + len).div_ceil(PAGE) - start / PAGE;
    let mut vec = vec![0u8; pages];
    // SAFETY: mincore reads the page tables of the range and writes one byte per page into
    // `vec`, which has that many.
    let r = unsafe { libc::mincore(start as *mut libc::c_void, pages * PAGE, vec.as_mut_ptr()) };
    (r == 0).then(|| vec.iter().filter(|&&b| b & 1 == 1).count())
}

#[cfg(not(target_os = "linux"))]
pub fn resident_pages(_addr: usize, _len: usize) -> Option<usize> {
    None
}

/// Stack each forwarding thread writes when it starts ([`prefault_stack`]): several times what
/// the loop was measured to use (its deepest frames, the engine's pipeline under an L2
/// completion, stayed within 6 pages of the thread's first frame in a debug build).
pub const LOOP_STACK_PREFAULT_BYTES: usize = 256 << 10;

/// Writes one byte in every 4 KiB page of `buf`.
pub fn touch(buf: &mut [std::mem::MaybeUninit<u8>]) {
    for b in buf.iter_mut().step_by(4096) {
        b.write(0);
    }
    if let Some(b) = buf.last_mut() {
        b.write(0);
    }
    std::hint::black_box(&buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_apply_once_and_prefault_runs() {
        let first = steady_allocator();
        assert_eq!(steady_allocator(), first);
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        assert!(first, "mallopt refused a setting");
        prefault_arena(3 << 20);
        prefault_arena(0);
        let mut v: Vec<u8> = Vec::with_capacity(10_000);
        touch(v.spare_capacity_mut());
        let mut w = vec![7u32; 5000];
        engine::table::mem::touch_slice(&mut w);
        assert!(w.iter().all(|&x| x == 7));
    }

    /// Resident pages of the `bytes` of the calling thread's stack below this frame.
    #[inline(never)]
    fn resident_below(bytes: usize) -> usize {
        let local = 0u8;
        let here = std::hint::black_box(&local) as *const u8 as usize;
        resident_pages(here - bytes, bytes).expect("mincore")
    }

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn prefault_stack_maps_every_page_it_promises_and_stays_inside_the_stack() {
        const WANT: usize = 512 << 10;
        // A stack size no other thread of the test process uses, so glibc cannot hand this
        // thread a cached stack that an earlier thread already touched.
        let (before, done, after) = std::thread::Builder::new()
            .stack_size(5 << 20)
            .spawn(|| {
                // Pages this frame and the check's own frames use are counted on both sides;
                // 64 KiB below here are left out.
                let skip = 64 << 10;
                let before = resident_below(skip + WANT) - resident_below(skip);
                let done = prefault_stack(skip + WANT);
                let after = resident_below(skip + WANT) - resident_below(skip);
                (before, done, after)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(done, (64 << 10) + WANT);
        assert!(before < WANT / 4096 / 2, "{before} pages resident before");
        assert_eq!(after, WANT / 4096, "{after} pages resident after");
        // Asked for more than the stack holds: it stops short of the bottom.
        let done = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(|| {
                let room = stack_room_bytes().unwrap();
                (prefault_stack(usize::MAX), room)
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(done.0 + STACK_MARGIN_BYTES <= done.1, "{done:?}");
    }
}
