//! Large fixed arenas: allocated once when a table is built, and backed by transparent huge
//! pages where the kernel allows it, so that random probes into gigabyte-sized tables do not
//! also miss the TLB on every access.

/// Huge-page size on x86-64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// A boxed slice of `n` items made by `f`, with the memory advised for huge pages before the
/// first write (the kernel then backs each aligned 2 MB of it with one page).
pub fn arena<T>(n: usize, mut f: impl FnMut(usize) -> T) -> Box<[T]> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge(
        v.as_ptr() as usize,
        n.saturating_mul(core::mem::size_of::<T>()),
    );
    for i in 0..n {
        v.push(f(i));
    }
    v.into_boxed_slice()
}

#[cfg(target_os = "linux")]
fn advise_huge(addr: usize, len: usize) {
    let start = addr.next_multiple_of(HUGE_PAGE);
    let end = (addr + len) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: [start, end) lies inside the allocation just made (rounded inwards to whole
        // huge pages); MADV_HUGEPAGE only changes how the kernel backs it, never its contents,
        // and a refusal (old kernel, THP disabled) is harmless, so the result is ignored.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_addr: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn arena_holds_what_f_made() {
        let a = super::arena(5_000_000, |i| i as u32 * 3);
        assert_eq!(a.len(), 5_000_000);
        assert!(a.iter().enumerate().all(|(i, &x)| x == i as u32 * 3));
        assert!(super::arena(0, |_| 0u8).is_empty());
    }
}
