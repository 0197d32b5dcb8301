//! The cache-line hash index shared by every table (So, Narayanan and Oran, "Named Data
//! Networking on a Router: Fast and DoS-resistant Forwarding with Hash Tables", ANCS 2013, §3.1).
//!
//! A bucket is one 64-byte cache line holding 7 slots and the index of an overflow bucket. A slot
//! packs a 32-bit fragment of the 64-bit hash (its high half) with a 32-bit entry index; the
//! table that owns the entries keeps the full 64-bit hash and the name, and compares name bytes
//! only when the full hash matches. Buckets are chosen by the low bits of the hash; the bucket
//! count is a power of two sized for the design load factor of 4 entries per bucket, so most
//! lookups touch one cache line for the index and one for the entry.
//!
//! Capacity is fixed at start-up: the main array and a pool of overflow buckets are allocated
//! once. Slots are atomics so the same index serves per-worker tables (one writer, no readers
//! elsewhere; relaxed atomics compile to plain loads and stores on x86-64) and the shared FIB
//! (one writer, many lock-free readers: a slot is published with a release store after the entry
//! it points to is complete).

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Slots per bucket: 7 × 8 bytes plus the overflow link fill one cache line.
pub const SLOTS: usize = 7;
/// Design load factor (entries per bucket).
pub const LOAD_FACTOR: usize = 4;

const NO_NEXT: u32 = 0;

/// One cache line: 7 slots (0 = empty, else `fragment << 32 | (entry + 1)`) and an overflow link
/// (0 = none, else overflow bucket number + 1).
#[repr(C, align(64))]
struct Bucket {
    slots: [AtomicU64; SLOTS],
    next: AtomicU32,
    _pad: u32,
}

impl Bucket {
    fn new() -> Self {
        Bucket {
            slots: Default::default(),
            next: AtomicU32::new(NO_NEXT),
            _pad: 0,
        }
    }
}

const _: () = assert!(core::mem::size_of::<Bucket>() == 64);

/// How a lookup reads the memory it visits: [`Direct`]ly, or in a planning pass that only reads
/// lines it already asked the CPU for ([`LinePlan`]).
pub trait Touch {
    /// About to read the cache line at `line`: `true` to go ahead, `false` to stop the lookup
    /// here (the line was requested instead).
    fn touch(&mut self, line: *const u8) -> bool;
}

/// Reads everything (the real lookup).
#[derive(Debug, Default, Clone, Copy)]
pub struct Direct;

impl Touch for Direct {
    #[inline(always)]
    fn touch(&mut self, _line: *const u8) -> bool {
        true
    }
}

/// Lines a planning pass may read (asked for in an earlier pass, so in cache or on their way).
pub(crate) const PLAN_LINES: usize = 12;

/// The lines of a lookup planned over several passes of a batch (So et al.'s prefetching,
/// generalised to dependent reads): each pass resumes the lookup where it stopped, reads only
/// lines already requested, and requests the next one it needs, so that every packet of the
/// batch has a miss in flight at once. The pass that reaches the end has the lookup's answer
/// (the FIB's plan compares name bytes as the real lookup does).
///
/// A request is only recorded; [`LinePlan::issue`] prefetches the lines requested since its
/// last call. The pipeline issues a whole pass's requests together after the pass: on this
/// project's machine a prefetch to a page whose translation is not cached holds up the core
/// for its page walk, and walks started back to back overlap one another, while a walk between
/// two packets' computations overlaps nothing (`memlat batch`, docs/performance.md).
#[derive(Debug, Default, Clone, Copy)]
pub struct LinePlan {
    lines: [usize; PLAN_LINES],
    len: u8,
    issued: u8,
    /// The lookup reached its end: nothing more to request.
    pub complete: bool,
}

impl LinePlan {
    /// Forgets every requested line (a new packet).
    #[inline(always)]
    pub fn reset(&mut self) {
        self.len = 0;
        self.issued = 0;
        self.complete = false;
    }

    /// Whether the cache line holding `line` was requested.
    #[inline(always)]
    pub fn contains(&self, line: *const u8) -> bool {
        self.lines[..usize::from(self.len)].contains(&(line as usize & !63))
    }

    /// Every line the plan can hold has been requested.
    #[inline(always)]
    pub fn is_full(&self) -> bool {
        usize::from(self.len) >= PLAN_LINES
    }

    /// Requests `line` (it counts as readable in later passes, and is prefetched by the next
    /// [`LinePlan::issue`]); `false` when the plan is full.
    #[inline(always)]
    pub fn request(&mut self, line: *const u8) -> bool {
        if usize::from(self.len) >= PLAN_LINES {
            return false;
        }
        self.lines[usize::from(self.len)] = line as usize & !63;
        self.len += 1;
        true
    }

    /// Prefetches the lines requested since the last call.
    #[inline(always)]
    pub fn issue(&mut self) {
        for &l in &self.lines[usize::from(self.issued)..usize::from(self.len)] {
            prefetch_line(l as *const u8);
        }
        self.issued = self.len;
    }
}

impl Touch for LinePlan {
    #[inline(always)]
    fn touch(&mut self, line: *const u8) -> bool {
        if self.contains(line) {
            return true;
        }
        // A full plan stops for good (the real lookup reads the rest unprefetched).
        let _ = self.request(line);
        false
    }
}

/// A planning pass stopped at a line it had not requested before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

/// Why an insertion failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexError {
    /// Every overflow bucket is in use.
    OverflowExhausted,
}

/// The hash index: hash → candidate entry indices.
pub struct HashIndex {
    buckets: super::mem::FixedArena<Bucket>,
    overflow: super::mem::FixedArena<Bucket>,
    overflow_used: AtomicU32,
    mask: u64,
    len: AtomicU32,
}

impl core::fmt::Debug for HashIndex {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HashIndex")
            .field("buckets", &self.buckets.len())
            .field("overflow", &self.overflow.len())
            .field("len", &self.len())
            .finish()
    }
}

#[inline(always)]
fn fragment(hash: u64) -> u64 {
    hash >> 32
}

#[inline(always)]
fn pack(hash: u64, entry: u32) -> u64 {
    debug_assert!(entry < u32::MAX);
    fragment(hash) << 32 | u64::from(entry + 1)
}

impl HashIndex {
    /// An index sized for `capacity` entries at the design load factor, with an overflow pool of
    /// a quarter of the main buckets (at least 16).
    pub fn with_capacity(capacity: usize) -> Self {
        let n = (capacity / LOAD_FACTOR).max(1).next_power_of_two();
        let overflow = (n / 4).max(16);
        HashIndex {
            buckets: super::mem::arena(n, |_| Bucket::new()),
            overflow: super::mem::arena(overflow, |_| Bucket::new()),
            overflow_used: AtomicU32::new(0),
            mask: (n - 1) as u64,
            len: AtomicU32::new(0),
        }
    }

    /// Number of entries indexed.
    #[inline]
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed) as usize
    }

    /// True when nothing is indexed.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of main buckets.
    pub fn bucket_count(&self) -> usize {
        self.buckets.len()
    }

    /// Overflow buckets in use (for statistics).
    pub fn overflow_in_use(&self) -> usize {
        self.overflow_used.load(Ordering::Relaxed) as usize
    }

    /// Bytes of memory the index occupies.
    pub fn memory_bytes(&self) -> usize {
        (self.buckets.len() + self.overflow.len()) * 64
    }

    #[inline(always)]
    fn home(&self, hash: u64) -> &Bucket {
        &self.buckets[(hash & self.mask) as usize]
    }

    #[inline(always)]
    fn next_of(&self, b: &Bucket) -> Option<&Bucket> {
        match b.next.load(Ordering::Acquire) {
            NO_NEXT => None,
            n => self.overflow.get(n as usize - 1),
        }
    }

    /// Asks the CPU to start loading the bucket `hash` lives in.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        prefetch_line(self.home(hash) as *const Bucket as *const u8);
    }

    /// The address of `hash`'s home bucket (nothing is read).
    #[inline(always)]
    pub fn home_line(&self, hash: u64) -> *const u8 {
        self.home(hash) as *const Bucket as *const u8
    }

    /// The first entry in `hash`'s home bucket whose fragment matches, without chasing overflow
    /// buckets: a second-level prefetch hint (the bucket itself should be in cache already).
    #[inline(always)]
    pub fn first_candidate(&self, hash: u64) -> Option<u32> {
        let frag = fragment(hash);
        self.home(hash).slots.iter().find_map(|s| {
            let v = s.load(Ordering::Acquire);
            (v != 0 && v >> 32 == frag).then(|| (v as u32) - 1)
        })
    }

    /// Calls `f` with every entry whose slot fragment matches `hash`, until `f` returns true;
    /// returns that entry. `probes` counts the buckets visited.
    #[inline]
    pub fn find(&self, hash: u64, mut f: impl FnMut(u32) -> bool) -> Option<u32> {
        // `Direct` never stops the lookup.
        self.find_touched(hash, &mut Direct, |e, _| Ok(f(e)))
            .unwrap_or(None)
    }

    /// [`HashIndex::find`] reading through `t`: `f` gets each candidate entry (and `t`, to touch
    /// the entry's lines), and may stop the lookup too.
    #[inline(always)]
    pub fn find_touched<T: Touch>(
        &self,
        hash: u64,
        t: &mut T,
        mut f: impl FnMut(u32, &mut T) -> Result<bool, Stopped>,
    ) -> Result<Option<u32>, Stopped> {
        let frag = fragment(hash);
        let mut b = Some(self.home(hash));
        // The chain is bounded by the overflow pool: each overflow bucket appears once.
        while let Some(bucket) = b {
            if !t.touch(bucket as *const Bucket as *const u8) {
                return Err(Stopped);
            }
            // All seven slots compared first, without branching on each (which slots are full
            // and where a fragment matches vary from bucket to bucket, so per-slot branches
            // mispredicted); then only the matches, usually none or one, are visited.
            let mut vals = [0u64; SLOTS];
            let mut hits = 0u32;
            for (j, s) in bucket.slots.iter().enumerate() {
                let v = s.load(Ordering::Acquire);
                vals[j] = v;
                hits |= u32::from(v != 0 && v >> 32 == frag) << j;
            }
            while hits != 0 {
                let j = hits.trailing_zeros() as usize;
                hits &= hits - 1;
                let e = (vals[j] as u32).wrapping_sub(1);
                if f(e, t)? {
                    return Ok(Some(e));
                }
            }
            b = self.next_of(bucket);
        }
        Ok(None)
    }

    /// Indexes `entry` under `hash`. The caller guarantees it is not indexed already. Single
    /// writer: concurrent `insert`/`remove` calls must be serialised by the owner.
    pub fn insert(&self, hash: u64, entry: u32) -> Result<(), IndexError> {
        let v = pack(hash, entry);
        let mut bucket = self.home(hash);
        loop {
            for s in &bucket.slots {
                if s.load(Ordering::Relaxed) == 0 {
                    s.store(v, Ordering::Release);
                    self.len.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
            }
            match self.next_of(bucket) {
                Some(n) => bucket = n,
                None => {
                    let used = self.overflow_used.load(Ordering::Relaxed);
                    let Some(fresh) = self.overflow.get(used as usize) else {
                        return Err(IndexError::OverflowExhausted);
                    };
                    self.overflow_used.store(used + 1, Ordering::Relaxed);
                    fresh.slots[0].store(v, Ordering::Relaxed);
                    // Publish the bucket only once its first slot is written.
                    bucket.next.store(used + 1, Ordering::Release);
                    self.len.fetch_add(1, Ordering::Relaxed);
                    return Ok(());
                }
            }
        }
    }

    /// Removes `entry` indexed under `hash`; returns whether it was there.
    pub fn remove(&self, hash: u64, entry: u32) -> bool {
        let v = pack(hash, entry);
        let mut b = Some(self.home(hash));
        while let Some(bucket) = b {
            for s in &bucket.slots {
                if s.load(Ordering::Relaxed) == v {
                    s.store(0, Ordering::Release);
                    self.len.fetch_sub(1, Ordering::Relaxed);
                    return true;
                }
            }
            b = self.next_of(bucket);
        }
        false
    }

    /// Re-points the slot of `old` indexed under `hash` to `new`, in one atomic store (readers
    /// see either entry, never neither); returns whether `old` was there. Same single-writer
    /// rule as [`HashIndex::insert`]; `new` must be complete before the call (release store).
    pub fn replace(&self, hash: u64, old: u32, new: u32) -> bool {
        let (from, to) = (pack(hash, old), pack(hash, new));
        let mut b = Some(self.home(hash));
        while let Some(bucket) = b {
            for s in &bucket.slots {
                if s.load(Ordering::Relaxed) == from {
                    s.store(to, Ordering::Release);
                    return true;
                }
            }
            b = self.next_of(bucket);
        }
        false
    }

    /// Buckets visited by a lookup of `hash` that scans the whole chain (for statistics).
    pub fn chain_len(&self, hash: u64) -> usize {
        let mut n = 0;
        let mut b = Some(self.home(hash));
        while let Some(bucket) = b {
            n += 1;
            b = self.next_of(bucket);
        }
        n
    }
}

/// Prefetches one cache line that is about to be written, in exclusive state (PREFETCHW), so the
/// write does not wait for ownership afterwards (a plain prefetch where unsupported).
#[inline(always)]
pub fn prefetch_line_for_write(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        // SAFETY: prefetching is a hint; it never faults, whatever the address.
        unsafe { _mm_prefetch(p as *const i8, _MM_HINT_ET0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = p;
    }
}

/// Prefetches every cache line of the `bytes` bytes from `p` (for reading).
#[inline(always)]
pub fn prefetch_lines(p: *const u8, bytes: usize) {
    let mut off = 0;
    while off < bytes {
        prefetch_line(p.wrapping_add(off));
        off += 64;
    }
}

/// Prefetches every cache line of the `bytes` bytes from `p` for writing
/// ([`prefetch_line_for_write`]).
#[inline(always)]
pub fn prefetch_lines_for_write(p: *const u8, bytes: usize) {
    let mut off = 0;
    while off < bytes {
        prefetch_line_for_write(p.wrapping_add(off));
        off += 64;
    }
}

/// Prefetches one cache line into all cache levels (a no-op where unsupported).
#[inline(always)]
pub fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetching is a hint; it never faults, whatever the address.
        unsafe { _mm_prefetch(p as *const i8, _MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_find_remove_with_overflow() {
        let idx = HashIndex::with_capacity(16); // 4 buckets
        assert_eq!(idx.bucket_count(), 4);
        // 20 entries in the same bucket (low bits 0), distinct fragments: forces overflow chains.
        let hashes: Vec<u64> = (0..20u64).map(|i| (i + 1) << 32).collect();
        for (i, &h) in hashes.iter().enumerate() {
            idx.insert(h, i as u32).unwrap();
        }
        assert_eq!(idx.len(), 20);
        assert_eq!(idx.chain_len(0), 3); // 7 + 7 + 6
        for (i, &h) in hashes.iter().enumerate() {
            assert_eq!(idx.find(h, |e| e == i as u32), Some(i as u32));
        }
        assert!(idx.remove(hashes[3], 3));
        assert!(!idx.remove(hashes[3], 3));
        assert_eq!(idx.find(hashes[3], |_| true), None);
        // The freed slot is reused.
        idx.insert(hashes[3], 3).unwrap();
        assert_eq!(idx.chain_len(0), 3);
    }

    #[test]
    fn first_candidate_is_in_the_home_bucket_only() {
        let idx = HashIndex::with_capacity(16); // 4 buckets
        assert_eq!(idx.first_candidate(7 << 32), None);
        for i in 0..8u64 {
            idx.insert((i + 1) << 32, i as u32).unwrap(); // all in bucket 0; the 8th overflows
        }
        assert_eq!(idx.first_candidate(3 << 32), Some(2));
        // The overflowed entry is found by `find`, not by the hint.
        assert_eq!(idx.first_candidate(8 << 32), None);
        assert_eq!(idx.find(8 << 32, |_| true), Some(7));
    }

    #[test]
    fn same_fragment_entries_are_all_offered() {
        let idx = HashIndex::with_capacity(64);
        idx.insert(0xAAAA_0000_0000_0001, 1).unwrap();
        idx.insert(0xAAAA_0000_0000_0001, 2).unwrap();
        let mut seen = Vec::new();
        assert_eq!(
            idx.find(0xAAAA_0000_0000_0001, |e| {
                seen.push(e);
                false
            }),
            None
        );
        seen.sort();
        assert_eq!(seen, [1, 2]);
    }

    #[test]
    fn replace_repoints_in_place() {
        let idx = HashIndex::with_capacity(16); // 4 buckets
        let hashes: Vec<u64> = (0..10u64).map(|i| (i + 1) << 32).collect(); // one chain
        for (i, &h) in hashes.iter().enumerate() {
            idx.insert(h, i as u32).unwrap();
        }
        assert!(idx.replace(hashes[8], 8, 100)); // in the overflow bucket
        assert!(idx.replace(hashes[2], 2, 102));
        assert!(!idx.replace(hashes[2], 2, 103)); // already moved
        assert!(!idx.replace(hashes[3], 4, 104)); // wrong hash
        assert_eq!(idx.len(), 10);
        assert_eq!(idx.find(hashes[8], |_| true), Some(100));
        assert_eq!(idx.find(hashes[2], |_| true), Some(102));
        assert_eq!(idx.find(hashes[2], |e| e == 2), None);
        assert!(idx.remove(hashes[2], 102));
        assert_eq!(idx.chain_len(0), 2);
    }

    #[test]
    fn overflow_pool_is_bounded() {
        let idx = HashIndex::with_capacity(4);
        let mut inserted = 0;
        let err = (0..10_000u32).find_map(|i| {
            let r = idx.insert(u64::from(i + 1) << 32, i);
            inserted += r.is_ok() as usize;
            r.err()
        });
        assert_eq!(err, Some(IndexError::OverflowExhausted));
        assert_eq!(inserted, 7 * (1 + 16));
    }
}
