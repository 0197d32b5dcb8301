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
    }
}
