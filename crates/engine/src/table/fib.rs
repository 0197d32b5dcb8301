//! The FIB: a shared, read-mostly hash table with the 2-stage longest-prefix match of seed 002
//! (§2.3, Algorithm 1, Table 2).
//!
//! # Structure
//! Every FIB prefix is one immutable [`FibEntry`] in a fixed arena allocated at start-up, found
//! through a [`HashIndex`] (64-bit prefix hash → arena slot). An entry is two cache lines, 128
//! bytes: a 16-byte header (the full 64-bit hash, the prefix length, depth, `md`, flags, the
//! number of next hops), then the prefix bytes from the front of the remaining 112 and the next
//! hops (at most [`MAX_NEXTHOPS`], 8 bytes each) from their back. A prefix is inline when it
//! fits beside the next hops: always up to [`INLINE_PREFIX`] bytes, up to 104 with one next hop;
//! a longer one is a heap copy referenced from the entry. A probe reads the index bucket
//! (prefetched) and then both lines of the candidate entry, one page and so one page walk: the
//! prefix may run into the second line, and the answer's next hops are there.
//! The owned [`Name`] of each entry is kept out of line, by slot, for the writer and listings.
//!
//! Besides the real prefixes, the table holds *virtual* entries at depth M: when a real prefix
//! deeper than M is added, its M-component prefix gets an entry (a virtual one if that prefix is
//! not itself in the FIB) whose `md` records the maximum depth of the real prefixes below it. The
//! first stage of a lookup starts at depth min(n, M) and walks towards the root; a hit at depth M
//! whose `md` is deeper restarts at min(n, md) (the second stage), and falls back to the depth-M
//! entry (or below it) if nothing deeper matches. The probe count is bounded by the FIB, not by
//! the Interest: a long garbage name costs at most M probes.
//!
//! # Concurrency (RCU)
//! Forwarding workers read the FIB without locks. A published entry is never modified: an update
//! writes a new entry into a free arena slot, publishes it by replacing the slot number in the
//! index (one atomic store with release ordering; lookups load it with acquire ordering), and
//! retires the old slot. A retired slot goes back to the free list only after a grace period
//! (`crossbeam_epoch`: a deferred function sends its number to the writer), so a reader that
//! found it keeps reading the same bytes until it unpins. Readers pass a guard from
//! [`crossbeam_epoch::pin`] (workers pin once per batch) and see either the old or the new entry.
//! Writers (the management thread) are serialised by an internal mutex that readers never touch.
//!
//! The arena has spare slots beyond the entry capacity for the copies updates make while the old
//! versions wait for their grace period. An update that finds none waits (boundedly) for a grace
//! period; if a reader stays pinned throughout, it fails with [`FibError::Full`].
//!
//! Updates are ordered so that a concurrent lookup never loses an unrelated route: the virtual
//! entry and `md` a new deep prefix needs are published before the prefix itself, and lowered
//! only after it is gone. Changing M follows the seed's safe order ([`Fib::set_m`]).

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::collections::HashMap;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};

use crossbeam_epoch::{self as epoch, Collector, Guard};
use wire::{Name, NameView};

use crate::hash::{name_hash, HashKey, PrefixHashes, MAX_PREFIX_STATES};
use crate::table::index::{Direct, HashIndex, LinePlan, Stopped, Touch};

/// Bytes of an entry after its 16-byte header: the prefix from the front, the next hops from
/// the back.
const BODY: usize = 112;

/// Prefix bytes (Name TLV-VALUE) an entry always holds inline, whatever its next hops; a longer
/// prefix is inline when it fits beside them (`len + 8 × next hops <= 112`), else a heap copy.
pub const INLINE_PREFIX: usize = BODY - 8 * MAX_NEXTHOPS;

/// Most next hops a prefix can have (at the back of the entry's body, beside the prefix).
pub const MAX_NEXTHOPS: usize = 7;

/// One next hop of a FIB entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct NextHop {
    /// Outgoing face.
    pub face: u32,
    /// Routing cost (lower is better).
    pub cost: u32,
}

const NO_HOP: NextHop = NextHop { face: 0, cost: 0 };

/// The next hops of an entry, sorted by cost (then face): a fixed array with a count, read as a
/// slice (`nexthops.iter()`, `nexthops.len()`, ...).
#[derive(Clone, Copy)]
#[repr(C)]
pub struct NextHops {
    len: u32,
    hops: [NextHop; MAX_NEXTHOPS],
}

impl NextHops {
    /// No next hop.
    pub const EMPTY: NextHops = NextHops {
        len: 0,
        hops: [NO_HOP; MAX_NEXTHOPS],
    };

    /// The first [`MAX_NEXTHOPS`] of `hops` (callers check the limit).
    fn new(hops: &[NextHop]) -> Self {
        debug_assert!(hops.len() <= MAX_NEXTHOPS);
        let mut n = NextHops::EMPTY;
        let len = hops.len().min(MAX_NEXTHOPS);
        n.hops[..len].copy_from_slice(&hops[..len]);
        n.len = len as u32;
        n
    }

    /// The next hops as a slice.
    #[inline(always)]
    pub fn as_slice(&self) -> &[NextHop] {
        &self.hops[..(self.len as usize).min(MAX_NEXTHOPS)]
    }
}

impl Default for NextHops {
    fn default() -> Self {
        NextHops::EMPTY
    }
}

impl core::ops::Deref for NextHops {
    type Target = [NextHop];
    #[inline(always)]
    fn deref(&self) -> &[NextHop] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a NextHops {
    type Item = &'a NextHop;
    type IntoIter = core::slice::Iter<'a, NextHop>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl PartialEq for NextHops {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for NextHops {}

impl core::fmt::Debug for NextHops {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// One FIB entry, immutable once published. Two cache lines (see the module documentation):
/// the header, then `body` with the prefix at its front and the next hops at its back.
#[repr(C, align(64))]
pub struct FibEntry {
    /// Keyed hash of the prefix ([`crate::hash::name_hash`]).
    pub hash: u64,
    value_len: u32,
    /// Number of components of the prefix.
    pub depth: u8,
    /// Maximum depth of the real prefixes under this prefix (itself included if real). Kept
    /// exact for entries at depth M (the only ones a lookup consults it on); equal to `depth`
    /// elsewhere.
    pub md: u8,
    /// True for an entry that exists only to carry `md` at depth M (no next hops).
    pub is_virtual: bool,
    hop_count: u8,
    /// The prefix bytes (inline) or the address of their heap copy from the front; the next
    /// hops, as `NextHop`s (8 bytes, 4-aligned), in the last `8 × hop_count` bytes.
    body: [u64; BODY / 8],
}

const _: () = {
    assert!(core::mem::size_of::<FibEntry>() == 128);
    assert!(core::mem::offset_of!(FibEntry, body) == 16);
    assert!(core::mem::size_of::<NextHop>() == 8 && core::mem::align_of::<NextHop>() <= 8);
    // A heap prefix's address and every next hop fit the body together.
    assert!(8 + 8 * MAX_NEXTHOPS <= BODY);
};

/// Whether a prefix of `len` bytes is inline in an entry with `hops` next hops.
#[inline(always)]
fn is_inline(len: usize, hops: usize) -> bool {
    len + 8 * hops <= BODY
}

impl FibEntry {
    fn new(hash: u64, value: &[u8], depth: usize, md: usize, nexthops: NextHops) -> Self {
        let hops = nexthops.as_slice();
        let mut e = FibEntry {
            hash,
            value_len: u32::try_from(value.len()).expect("prefix longer than 4 GiB"),
            depth: depth as u8,
            md: md as u8,
            is_virtual: hops.is_empty(),
            hop_count: hops.len() as u8,
            body: [0; BODY / 8],
        };
        if is_inline(value.len(), hops.len()) {
            // SAFETY: `is_inline` keeps the prefix inside the body's BODY bytes (in front of
            // the next hops), and the body is plain integers.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    value.as_ptr(),
                    e.body.as_mut_ptr() as *mut u8,
                    value.len(),
                )
            };
        } else {
            // Owned by the entry from here on: freed by `Drop` (the length is `value_len`).
            let heap: Box<[u8]> = value.into();
            e.body[0] = Box::into_raw(heap) as *mut u8 as u64;
        }
        let first = BODY / 8 - hops.len();
        for (i, h) in hops.iter().enumerate() {
            // SAFETY: word `first + i` is inside the body (hops.len() <= MAX_NEXTHOPS), 8-byte
            // aligned, and a `NextHop` is 8 bytes with an alignment of at most 8.
            unsafe { (e.body.as_mut_ptr().add(first + i) as *mut NextHop).write(*h) };
        }
        e
    }

    /// Whether the prefix is inline (else the body's first word addresses its heap copy).
    #[inline(always)]
    fn prefix_inline(&self) -> bool {
        is_inline(self.value_len as usize, usize::from(self.hop_count))
    }

    /// The prefix's components back to back (TLV encoded), as in `&name.value()[..prefix_end]`
    /// of a matching Interest name.
    #[inline(always)]
    pub fn value(&self) -> &[u8] {
        let len = self.value_len as usize;
        if self.prefix_inline() {
            // SAFETY: an inline prefix occupies the body's first `len` bytes (`new`; an
            // all-zero entry has length 0).
            unsafe { core::slice::from_raw_parts(self.body.as_ptr() as *const u8, len) }
        } else {
            // SAFETY: the first word is the address of the entry's own heap copy of `len`
            // bytes (`new`), freed only when the entry is dropped.
            unsafe { core::slice::from_raw_parts(self.body[0] as *const u8, len) }
        }
    }

    /// The first and the last cache line of a prefix kept on the heap (`None`: inline).
    #[inline(always)]
    fn heap_lines(&self) -> Option<(*const u8, *const u8)> {
        if self.prefix_inline() {
            return None;
        }
        let v = self.value();
        Some((
            v.as_ptr(),
            v.as_ptr().wrapping_add(v.len().saturating_sub(1)),
        ))
    }

    /// Next hops, sorted by cost (then face). Empty for a virtual entry.
    #[inline(always)]
    pub fn nexthops(&self) -> &[NextHop] {
        let n = usize::from(self.hop_count).min(MAX_NEXTHOPS);
        // SAFETY: `new` wrote `hop_count` (<= MAX_NEXTHOPS) next hops into the body's last
        // words, suitably aligned; they are never written again.
        unsafe {
            core::slice::from_raw_parts(self.body.as_ptr().add(BODY / 8 - n) as *const NextHop, n)
        }
    }
}

impl Default for FibEntry {
    fn default() -> Self {
        FibEntry::new(0, &[], 0, 0, NextHops::EMPTY)
    }
}

impl Drop for FibEntry {
    fn drop(&mut self) {
        if !self.prefix_inline() {
            let len = self.value_len as usize;
            // SAFETY: the first word is the address `Box::into_raw` gave for this entry's heap
            // copy of `len` bytes (`new`); it is freed here, exactly once.
            drop(unsafe {
                Box::from_raw(core::ptr::slice_from_raw_parts_mut(
                    self.body[0] as *mut u8,
                    len,
                ))
            });
        }
    }
}

impl core::fmt::Debug for FibEntry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FibEntry")
            .field("hash", &format_args!("{:#018x}", self.hash))
            .field("value", &self.value())
            .field("depth", &self.depth)
            .field("md", &self.md)
            .field("is_virtual", &self.is_virtual)
            .field("nexthops", &self.nexthops())
            .finish()
    }
}

/// Where a FIB lookup ([`Fib::lookup`], [`Fib::plan`]) is in Algorithm 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Phase {
    /// Not started: M is read and stage 1 begins at depth min(n, M).
    #[default]
    Start,
    /// Stage 1: probing depth `k`, from min(n, M) down to 1.
    Stage1,
    /// Stage 2: probing depth `k`, from min(n, MD) down to M + 1.
    Stage2,
    /// Below M after stage 2 found nothing and the depth-M entry was virtual: real entries
    /// from depth `k` down to 1.
    Descend,
    /// The default route `/`.
    Root,
    /// Answered.
    Done,
}

/// A FIB lookup's position in Algorithm 1, kept between the planning passes of a batch so that
/// each pass resumes the lookup at the probe it stopped in instead of replaying it from the
/// start. Valid for the guard its lookup runs under (`'g`): it holds the depth-M entry stage 2
/// may fall back to. Start each lookup from [`FibCursor::default`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FibCursor<'g> {
    phase: Phase,
    /// M, read once when the lookup starts (a concurrent change of M does not mix two Ms in
    /// one lookup).
    m: u8,
    /// The depth probed next (or being probed).
    k: u8,
    /// Probes finished so far.
    probes: u32,
    /// Stage 2's fall-back: the real depth-M entry whose MD sent the lookup there.
    stage1: Option<&'g FibEntry>,
}

/// One arena slot: an entry on its own pair of cache lines (the unit of the adjacent-line
/// prefetcher).
#[repr(C, align(128))]
#[derive(Default)]
struct Slot(UnsafeCell<FibEntry>);

/// The fixed entry arena shared by the writer and the readers.
///
/// Protocol (what makes the `unsafe` accessors sound): a slot is *free* (never published, or
/// retired and then past a grace period), *published* (its number is in the index), or
/// *retiring* (unpublished, waiting for its grace period). Only the writer, holding the writer
/// mutex, writes a slot, and only a free one: no reader can reach it (readers only follow slot
/// numbers loaded from the index under a pinned guard, and a retired slot becomes free only once
/// every guard pinned before its unpublication is gone), and the writer holds no reference to it.
/// The writes happen before the index's release store that publishes the slot; readers load slot
/// numbers with acquire ordering, so they see the complete entry. Published and retiring entries
/// are only read.
struct Arena {
    slots: super::mem::FixedArena<Slot>,
}

// SAFETY: entries are `Send + Sync` data; concurrent access to a slot follows the protocol above
// (writes only to slots no other thread can reach, synchronised through the index).
unsafe impl Sync for Arena {}

impl Arena {
    fn new(len: usize) -> Self {
        Arena {
            slots: super::mem::arena(len, |_| Slot::default()),
        }
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    /// The first cache line of `slot` (an address only: nothing is read).
    #[inline(always)]
    fn line(&self, slot: u32) -> *const u8 {
        self.slots
            .get(slot as usize)
            .map_or(core::ptr::null(), |s| s as *const Slot as *const u8)
    }

    /// Reads the entry in `slot`.
    ///
    /// # Safety
    /// `slot` must be published or retiring for as long as the returned reference lives: either
    /// its number was loaded from the index (acquire) under a guard that outlives the reference,
    /// or the caller is the writer, holds the writer mutex meanwhile, and found `slot` published.
    #[inline(always)]
    unsafe fn get(&self, slot: u32) -> Option<&FibEntry> {
        let s = self.slots.get(slot as usize)?;
        // SAFETY: per the contract, no one writes the slot while the reference lives (see the
        // protocol).
        Some(unsafe { &*s.0.get() })
    }

    /// Writes `entry` into `slot` (dropping the previous, dead contents).
    ///
    /// # Safety
    /// The caller is the writer (holds the writer mutex) and `slot` is free: never published,
    /// or retired and then past a grace period; the writer holds no reference into it.
    unsafe fn write(&self, slot: u32, entry: FibEntry) {
        let s = &self.slots[slot as usize];
        // SAFETY: per the contract, nobody else can access the slot now.
        unsafe { *s.0.get() = entry };
    }
}

/// Probe counters of FIB lookups (kept per worker, never shared).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LpmStats {
    /// Hash-table lookups (probes) performed.
    pub probes: u64,
    /// Longest-prefix-match lookups performed.
    pub lookups: u64,
}

/// Why a FIB update was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FibError {
    /// The prefix has more components than [`MAX_PREFIX_STATES`].
    TooDeep {
        /// Depth of the refused prefix.
        depth: usize,
    },
    /// The prefix already has [`MAX_NEXTHOPS`] next hops.
    TooManyNextHops,
    /// Every entry slot is in use (real and virtual entries share the capacity), or no slot for
    /// the copy an update needs came back from its grace period in time.
    Full,
    /// The hash index ran out of overflow buckets.
    IndexFull,
}

impl core::fmt::Display for FibError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FibError::TooDeep { depth } => write!(
                f,
                "FIB prefix has {depth} components, more than the limit of {MAX_PREFIX_STATES}"
            ),
            FibError::TooManyNextHops => write!(
                f,
                "FIB prefix already has the maximum of {MAX_NEXTHOPS} next hops"
            ),
            FibError::Full => f.write_str("FIB is full"),
            FibError::IndexFull => f.write_str("FIB hash index overflow pool exhausted"),
        }
    }
}

impl std::error::Error for FibError {}

/// Depth histogram of the real prefixes below one prefix at an active M depth.
/// A prefix kept by the writer for listing, as its Name TLV: one allocation of ~50 bytes
/// instead of an owned [`Name`]'s one per component (16M routes: ~1 GB instead of ~4.5 GB).
#[derive(Debug, Clone)]
struct StoredName(Box<[u8]>);

impl StoredName {
    fn new(name: &Name) -> Self {
        StoredName(name.to_wire().into_boxed_slice())
    }

    fn name(&self) -> Name {
        // Encoded by `new` from a valid name, so it decodes (limits are the defaults, which a
        // FIB prefix of at most MAX_PREFIX_STATES components always meets).
        Name::decode(&self.0).unwrap_or_default()
    }
}

/// Depth histogram of the real prefixes below one prefix: (depth, count) pairs with non-zero
/// counts. Most prefixes have one or two depths below them, so this stays inline (24 bytes)
/// where a dense array over all depths would take 132 bytes for each of millions of prefixes.
#[derive(Debug, Clone, Default)]
struct Hist(smallvec::SmallVec<[(u8, u32); 2]>);

impl Hist {
    fn add(&mut self, depth: usize) {
        match self.0.iter_mut().find(|(d, _)| usize::from(*d) == depth) {
            Some((_, c)) => *c += 1,
            None => self.0.push((depth as u8, 1)),
        }
    }

    fn sub(&mut self, depth: usize) {
        if let Some(i) = self.0.iter().position(|(d, _)| usize::from(*d) == depth) {
            self.0[i].1 -= 1;
            if self.0[i].1 == 0 {
                self.0.swap_remove(i);
            }
        }
    }
}

fn hist_max(h: &Hist) -> Option<usize> {
    h.0.iter().map(|&(d, _)| usize::from(d)).max()
}

/// What [`Fib::sync`] should do with a prefix's real next hops.
enum Real {
    /// Keep whatever the current entry has.
    Keep,
    /// The prefix is real with these next hops (empty = not real).
    Set(NextHops),
}

/// What the writer needs of a published entry, copied out of the arena.
#[derive(Clone, Copy)]
struct Current {
    slot: u32,
    md: u8,
    is_virtual: bool,
    nexthops: NextHops,
}

/// Writer-only state, behind the writer mutex.
struct Writer {
    /// Free slots that have been used before (retired, past their grace period).
    recycled: Vec<u32>,
    /// Slots from here to the end of the arena have never been used.
    fresh: u32,
    /// Slots whose grace period has passed, sent by deferred functions.
    retired: Receiver<u32>,
    /// The prefix of every published entry, by slot (`None` for free and retiring slots).
    names: Vec<Option<StoredName>>,
    /// Depths at which virtual entries and `md` are maintained: the published M, plus, during a
    /// change of M (or if a grace period could not be observed), the previous one(s).
    active: Vec<usize>,
    /// For each active depth d: d-component prefix → depth histogram of the real prefixes at
    /// depth ≥ d below it (itself included).
    below: HashMap<usize, HashMap<Name, Hist>>,
    /// Number of real prefixes by depth (for the most-likely M heuristic and longest-first).
    real_depths: [usize; MAX_PREFIX_STATES + 1],
}

/// The forwarding information base, shared by all workers (see the module documentation).
pub struct Fib {
    key: HashKey,
    /// Shared with a deferred function when the FIB is dropped: entries handed to readers live
    /// as long as their guard, which may outlive the `Fib`.
    arena: Arc<Arena>,
    index: HashIndex,
    capacity: usize,
    /// Where deferred functions send retired slots (to [`Writer::retired`]).
    retire_tx: Sender<u32>,
    m: AtomicUsize,
    max_real_depth: AtomicUsize,
    has_root: AtomicBool,
    real: AtomicUsize,
    virt: AtomicUsize,
    collector: &'static Collector,
    writer: Mutex<Writer>,
}

impl core::fmt::Debug for Fib {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Fib")
            .field("capacity", &self.capacity)
            .field("m", &self.m())
            .field("real", &self.real_len())
            .field("virtual", &self.virtual_len())
            .finish()
    }
}

/// Components of `name` back to back (the Name TLV-VALUE).
fn value_of(name: &Name) -> Vec<u8> {
    let mut v = Vec::with_capacity(name.value_len());
    for c in &name.components {
        c.encode(&mut v);
    }
    v
}

/// Waits (without sleeping, boundedly) until every guard pinned before the call has been
/// dropped. Returns false if that could not be observed, e.g. when the calling thread is pinned.
fn wait_grace_period() -> bool {
    let done = Arc::new(AtomicBool::new(false));
    {
        let guard = epoch::pin();
        let flag = Arc::clone(&done);
        guard.defer(move || flag.store(true, Ordering::Release));
        guard.flush();
    }
    for _ in 0..200_000 {
        if done.load(Ordering::Acquire) {
            return true;
        }
        epoch::pin().flush();
        std::thread::yield_now();
    }
    done.load(Ordering::Acquire)
}

impl Fib {
    /// An empty FIB of `capacity` entries (real and virtual together) with M = `m`, clamped to
    /// `1..=MAX_PREFIX_STATES`. The arena (128 bytes per slot) is allocated here, with spare
    /// slots (a sixteenth of the capacity, at least 256) for the copies updates make.
    pub fn new(key: HashKey, capacity: usize, m: usize) -> Self {
        let capacity = capacity.clamp(1, u32::MAX as usize / 2);
        let m = m.clamp(1, MAX_PREFIX_STATES);
        let (retire_tx, retired) = channel();
        Fib {
            key,
            arena: Arc::new(Arena::new(capacity + (capacity / 16).max(256))),
            index: HashIndex::with_capacity(capacity),
            capacity,
            retire_tx,
            m: AtomicUsize::new(m),
            max_real_depth: AtomicUsize::new(0),
            has_root: AtomicBool::new(false),
            real: AtomicUsize::new(0),
            virt: AtomicUsize::new(0),
            collector: epoch::default_collector(),
            writer: Mutex::new(Writer {
                recycled: Vec::new(),
                fresh: 0,
                retired,
                names: Vec::new(),
                active: vec![m],
                below: HashMap::from([(m, HashMap::new())]),
                real_depths: [0; MAX_PREFIX_STATES + 1],
            }),
        }
    }

    // ---------------------------------------------------------------- reader side

    /// The M currently used by lookups.
    #[inline]
    pub fn m(&self) -> usize {
        self.m.load(Ordering::Acquire)
    }

    /// Number of entries, real and virtual.
    pub fn len(&self) -> usize {
        self.real_len() + self.virtual_len()
    }

    /// True when the FIB has no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of real prefixes.
    pub fn real_len(&self) -> usize {
        self.real.load(Ordering::Relaxed)
    }

    /// Number of virtual entries.
    pub fn virtual_len(&self) -> usize {
        self.virt.load(Ordering::Relaxed)
    }

    /// FIB expansion: virtual entries as a percentage of real ones (Table 5 of seed 002).
    pub fn expansion_pct(&self) -> f64 {
        let real = self.real_len();
        if real == 0 {
            0.0
        } else {
            self.virtual_len() as f64 * 100.0 / real as f64
        }
    }

    /// Entry capacity (real and virtual entries together).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    #[inline(always)]
    fn check_guard(&self, guard: &Guard) {
        // Slots are recycled through the default collector; a guard of another collector (or
        // `unprotected`) would not hold them.
        assert!(
            guard.collector() == Some(self.collector),
            "FIB lookups need a guard from crossbeam_epoch::pin()"
        );
    }

    /// One hash-table probe for the first `k` components of the Interest name, reading memory
    /// through `t` (a planning pass stops at lines it has not requested yet). Counts the probe
    /// in `probes` when it finishes.
    #[inline(always)]
    fn probe<'g, T: Touch>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        k: usize,
        guard: &'g Guard,
        probes: &mut u32,
        t: &mut T,
    ) -> Result<Option<&'g FibEntry>, Stopped> {
        let (Some(hash), Some(end)) = (h.prefix(k, name), h.prefix_end(k, name)) else {
            return Ok(None);
        };
        let Some(bytes) = name.value().get(..end) else {
            return Ok(None);
        };
        let arena = self.arena_for(guard);
        let mut found = None;
        self.index.find_touched(hash, t, |slot, t| {
            // Both lines of the entry, requested together (one page, one walk): the prefix may
            // run into the second, where the answer's next hops are.
            let line = arena.line(slot);
            let (first, second) = (t.touch(line), t.touch(line.wrapping_add(64)));
            if !(first && second) {
                return Err(Stopped);
            }
            // SAFETY: `slot` was just loaded from the index with acquire ordering while `guard`
            // (checked by the callers to be of the default collector) is pinned, and it lives
            // for `'g`; a slot is recycled only after every such guard is gone.
            match unsafe { arena.get(slot) } {
                Some(e) if e.hash == hash => {
                    if let Some((head, tail)) = e.heap_lines() {
                        let (a, b) = (t.touch(head), t.touch(tail));
                        if !(a && b) {
                            return Err(Stopped);
                        }
                    }
                    let hit = e.value() == bytes;
                    if hit {
                        found = Some(e);
                    }
                    Ok(hit)
                }
                _ => Ok(false),
            }
        })?;
        *probes += 1;
        Ok(found)
    }

    /// The arena, for as long as a reader's guard is pinned: the arena is freed through the
    /// collector when the FIB is dropped, so it outlives every guard pinned before that.
    #[inline(always)]
    fn arena_for<'g>(&self, _guard: &'g Guard) -> &'g Arena {
        let p: *const Arena = Arc::as_ptr(&self.arena);
        // SAFETY: `Drop for Fib` hands its reference to the arena to a deferred function of the
        // default collector, which runs only after every guard pinned before it (such as
        // `_guard`, pinned while `self` is alive) has been dropped.
        unsafe { &*p }
    }

    /// The `/` entry if the FIB has one (a default route), else no probe.
    #[inline(always)]
    fn probe_root<'g, T: Touch>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        probes: &mut u32,
        t: &mut T,
    ) -> Result<Option<&'g FibEntry>, Stopped> {
        if self.has_root.load(Ordering::Acquire) {
            Ok(self
                .probe(name, h, 0, guard, probes, t)?
                .filter(|e| !e.is_virtual))
        } else {
            Ok(None)
        }
    }

    /// Longest-prefix match with the 2-stage algorithm of seed 002 (Algorithm 1). No lock, no
    /// allocation. `h` must be the prefix hashes of `name` under this FIB's key.
    ///
    /// # Panics
    /// If `guard` was not obtained from [`crossbeam_epoch::pin`].
    #[inline]
    pub fn lookup<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        stats: &mut LpmStats,
    ) -> Option<&'g FibEntry> {
        self.check_guard(guard);
        stats.lookups += 1;
        let mut c = FibCursor::default();
        // `Direct` never stops.
        let answer = self
            .two_stage(name, h, guard, &mut c, &mut Direct)
            .ok()
            .flatten();
        stats.probes += u64::from(c.probes);
        answer
    }

    /// Plans [`Fib::lookup`] of `name` over passes of a batch: resumes the lookup where
    /// `cursor` says it stopped, over the lines `plan` requested in earlier passes, and
    /// requests the next line it needs (one per pass, or the two lines of an entry). Sets
    /// `plan.complete` once the lookup reaches its end.
    ///
    /// The pass that completes the plan returns the lookup's answer and probe count, exactly
    /// what [`Fib::lookup`] would answer (every probe compares name bytes), so the caller need
    /// not look the name up again; every other pass returns `None`. `cursor` must start from
    /// [`FibCursor::default`] for each lookup and stay with `plan` (reset by [`Fib::prefetch`])
    /// and under the same `guard` until the plan completes.
    ///
    /// # Panics
    /// If `guard` was not obtained from [`crossbeam_epoch::pin`].
    #[inline]
    pub fn plan<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        plan: &mut LinePlan,
        cursor: &mut FibCursor<'g>,
    ) -> Option<(Option<&'g FibEntry>, u64)> {
        if plan.complete {
            return None;
        }
        self.check_guard(guard);
        let answer = self.two_stage(name, h, guard, cursor, plan).ok()?;
        plan.complete = true;
        Some((answer, u64::from(cursor.probes)))
    }

    /// Algorithm 1 as a resumable state machine, reading through `t`: runs from `c`'s position
    /// until the answer (`c` is then [`Phase::Done`]) or a line `t` stops at (`c` then stays at
    /// the probe that stopped, which the next call runs again from its bucket).
    #[inline(always)]
    fn two_stage<'g, T: Touch>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        c: &mut FibCursor<'g>,
        t: &mut T,
    ) -> Result<Option<&'g FibEntry>, Stopped> {
        let n = h.len();
        // At most one step per depth of each phase, and six phases: the loop ends.
        loop {
            let m = usize::from(c.m);
            let k = usize::from(c.k);
            match c.phase {
                Phase::Start => {
                    // M is at most MAX_PREFIX_STATES (it is a depth), and so is k below.
                    let m = self.m.load(Ordering::Acquire).min(MAX_PREFIX_STATES);
                    c.m = m as u8;
                    c.k = n.min(m) as u8;
                    c.phase = Phase::Stage1;
                }
                Phase::Stage1 if k == 0 => c.phase = Phase::Root,
                Phase::Stage1 => {
                    let e = self.probe(name, h, k, guard, &mut c.probes, t)?;
                    match e {
                        Some(e) if usize::from(e.depth) == m && usize::from(e.md) > m && n > m => {
                            c.stage1 = (!e.is_virtual).then_some(e);
                            c.phase = Phase::Stage2;
                            c.k = n.min(usize::from(e.md)) as u8;
                        }
                        Some(e) if !e.is_virtual => {
                            c.phase = Phase::Done;
                            return Ok(Some(e));
                        }
                        _ => c.k -= 1,
                    }
                }
                Phase::Stage2 if k <= m => match c.stage1 {
                    Some(e) => {
                        c.phase = Phase::Done;
                        return Ok(Some(e));
                    }
                    None => {
                        c.phase = Phase::Descend;
                        c.k = (m - 1) as u8;
                    }
                },
                Phase::Stage2 | Phase::Descend if k == 0 => c.phase = Phase::Root,
                Phase::Stage2 | Phase::Descend => {
                    let e = self.probe(name, h, k, guard, &mut c.probes, t)?;
                    match e {
                        Some(e) if !e.is_virtual => {
                            c.phase = Phase::Done;
                            return Ok(Some(e));
                        }
                        _ => c.k -= 1,
                    }
                }
                Phase::Root => {
                    let e = self.probe_root(name, h, guard, &mut c.probes, t)?;
                    c.phase = Phase::Done;
                    return Ok(e);
                }
                Phase::Done => return Ok(None),
            }
        }
    }

    /// Longest-prefix match the basic way (the baseline of seed 002): from depth
    /// min(n, deepest real prefix) down to `/`. Same contract as [`Fib::lookup`].
    ///
    /// # Panics
    /// If `guard` was not obtained from [`crossbeam_epoch::pin`].
    #[inline]
    pub fn lookup_longest_first<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        stats: &mut LpmStats,
    ) -> Option<&'g FibEntry> {
        self.check_guard(guard);
        stats.lookups += 1;
        let start = h.len().min(self.max_real_depth.load(Ordering::Acquire));
        // Real entries from `start` down to 1, then `/`: the part of Algorithm 1 below M.
        let mut c = FibCursor {
            phase: Phase::Descend,
            k: start.min(MAX_PREFIX_STATES) as u8,
            ..FibCursor::default()
        };
        let answer = self
            .two_stage(name, h, guard, &mut c, &mut Direct)
            .ok()
            .flatten();
        stats.probes += u64::from(c.probes);
        answer
    }

    /// Starts a lookup plan for a new packet: requests the index bucket of the first probe of
    /// [`Fib::lookup`]'s first stage (the prefix of min(n, M) components), which needs no
    /// earlier read (prefetched by the plan's next [`LinePlan::issue`]). Later passes go on with
    /// [`Fib::plan`].
    ///
    /// Only that one bucket: the next one (min(n, M) − 1 components) is needed only when the
    /// first probe misses, and on this project's machine every random line of a large table
    /// costs a page walk, during which the prefetch instruction itself holds up the core
    /// (README, "Why the 16M figures stay above the floors"), so a speculative request costs
    /// every Interest what it saves the few whose first probe misses.
    #[inline]
    pub fn prefetch(&self, name: &NameView<'_>, h: &PrefixHashes, plan: &mut LinePlan) {
        plan.reset();
        let k = h.len().min(self.m.load(Ordering::Relaxed));
        if let Some(hash) = h.prefix(k, name) {
            plan.request(self.index.home_line(hash));
        }
    }

    // ---------------------------------------------------------------- writer side

    fn lock(&self) -> MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The published entry in `slot`, read by the writer (the `&Writer` shows the lock is held).
    fn published<'a>(&'a self, _w: &'a Writer, slot: u32) -> Option<&'a FibEntry> {
        // SAFETY: the caller holds the writer mutex for `'a` (it borrows the `Writer`) and found
        // `slot` published (in the index or in `names`); only this writer frees slots, and it
        // cannot do so while `_w` is borrowed.
        unsafe { self.arena.get(slot) }
    }

    /// The entry for exactly this prefix, copied out.
    fn find_exact(&self, w: &Writer, hash: u64, value: &[u8]) -> Option<Current> {
        let mut found = None;
        self.index.find(hash, |slot| match self.published(w, slot) {
            Some(e) if e.hash == hash && e.value() == value => {
                found = Some(Current {
                    slot,
                    md: e.md,
                    is_virtual: e.is_virtual,
                    nexthops: NextHops::new(e.nexthops()),
                });
                true
            }
            _ => false,
        });
        found
    }

    /// Moves the slots whose grace period has passed to the free list.
    fn drain_retired(w: &mut Writer) {
        while let Ok(slot) = w.retired.try_recv() {
            w.recycled.push(slot);
        }
    }

    /// Free slots available without waiting.
    fn available(&self, w: &Writer) -> usize {
        w.recycled.len() + (self.arena.len() - w.fresh as usize)
    }

    /// Makes sure `n` free slots are available, waiting for a grace period if needed.
    fn reserve(&self, w: &mut Writer, n: usize) -> Result<(), FibError> {
        if self.available(w) < n {
            Self::drain_retired(w);
            if self.available(w) < n && wait_grace_period() {
                Self::drain_retired(w);
            }
        }
        if self.available(w) >= n {
            Ok(())
        } else {
            Err(FibError::Full)
        }
    }

    /// A free slot (recycled ones first, to keep the arena's working set small).
    fn alloc(&self, w: &mut Writer) -> Result<u32, FibError> {
        if w.recycled.is_empty() {
            Self::drain_retired(w);
        }
        if let Some(slot) = w.recycled.pop() {
            return Ok(slot);
        }
        if (w.fresh as usize) < self.arena.len() {
            w.fresh += 1;
            return Ok(w.fresh - 1);
        }
        self.reserve(w, 1)?;
        self.alloc(w)
    }

    /// Writes `entry` for `name` into a free slot (not yet published).
    fn stage(&self, w: &mut Writer, entry: FibEntry, name: Name) -> Result<u32, FibError> {
        let slot = self.alloc(w)?;
        // SAFETY: we are the writer and `slot` comes from the free list: never published, or
        // retired and past its grace period (its number came back through a deferred function),
        // and no reference into it is held.
        unsafe { self.arena.write(slot, entry) };
        let i = slot as usize;
        if w.names.len() <= i {
            w.names.resize_with(i + 1, || None);
        }
        w.names[i] = Some(StoredName::new(&name));
        Ok(slot)
    }

    /// Gives back a staged slot that was never published.
    fn unstage(w: &mut Writer, slot: u32) {
        w.names[slot as usize] = None;
        w.recycled.push(slot);
    }

    /// Hands an unpublished slot to the collector: it comes back to the free list once every
    /// reader that may have found it has unpinned.
    fn retire(&self, w: &mut Writer, slot: u32) {
        if let Some(n) = w.names.get_mut(slot as usize) {
            *n = None;
        }
        let tx = self.retire_tx.clone();
        epoch::pin().defer(move || {
            // The FIB (and its receiver) may be gone: then the slot is simply dropped.
            let _ = tx.send(slot);
        });
    }

    /// Makes the entry of `name` what the writer state says it should be: present if real or if
    /// it is at an active depth with real prefixes below it; `md` from the histogram at active
    /// depths. Publishing a new entry or a copy can fail (a copy only lowering `md` is skipped
    /// instead: a larger `md` costs probes, never routes).
    fn sync(&self, w: &mut Writer, name: &Name, real: Real) -> Result<(), FibError> {
        let depth = name.len();
        let hash = name_hash(self.key, name);
        let value = value_of(name);
        let cur = self.find_exact(w, hash, &value);
        let nexthops = match real {
            Real::Set(v) => v,
            Real::Keep => cur.map(|c| c.nexthops).unwrap_or_default(),
        };
        let hist = w
            .below
            .get(&depth)
            .and_then(|m| m.get(name))
            .filter(|h| hist_max(h).is_some());
        let md = hist.and_then(hist_max).unwrap_or(depth).max(depth);
        let is_virtual = nexthops.is_empty();
        let exists = !is_virtual || md > depth;
        match (cur, exists) {
            (None, false) => Ok(()),
            (Some(old), true) => {
                if usize::from(old.md) == md
                    && old.is_virtual == is_virtual
                    && old.nexthops == nexthops
                {
                    return Ok(());
                }
                let only_lowers_md = old.is_virtual == is_virtual
                    && old.nexthops == nexthops
                    && md < usize::from(old.md);
                let entry = FibEntry::new(hash, &value, depth, md, nexthops);
                let slot = match self.stage(w, entry, name.clone()) {
                    Ok(s) => s,
                    Err(e) => {
                        return if only_lowers_md { Ok(()) } else { Err(e) };
                    }
                };
                let swapped = self.index.replace(hash, old.slot, slot);
                debug_assert!(swapped, "published entry missing from the index");
                self.retire(w, old.slot);
                if old.is_virtual != is_virtual {
                    self.count(is_virtual, 1);
                    self.uncount(old.is_virtual);
                }
                Ok(())
            }
            (Some(old), false) => {
                self.index.remove(hash, old.slot);
                self.retire(w, old.slot);
                self.uncount(old.is_virtual);
                Ok(())
            }
            (None, true) => {
                if self.len() >= self.capacity {
                    return Err(FibError::Full);
                }
                let entry = FibEntry::new(hash, &value, depth, md, nexthops);
                let slot = self.stage(w, entry, name.clone())?;
                if self.index.insert(hash, slot).is_err() {
                    Self::unstage(w, slot);
                    return Err(FibError::IndexFull);
                }
                self.count(is_virtual, 1);
                Ok(())
            }
        }
    }

    fn count(&self, is_virtual: bool, n: usize) {
        let c = if is_virtual { &self.virt } else { &self.real };
        c.fetch_add(n, Ordering::Relaxed);
    }

    fn uncount(&self, is_virtual: bool) {
        let c = if is_virtual { &self.virt } else { &self.real };
        c.fetch_sub(1, Ordering::Relaxed);
    }

    fn hist_add(w: &mut Writer, d: usize, prefix: &Name, depth: usize) {
        let h = w
            .below
            .entry(d)
            .or_default()
            .entry(prefix.clone())
            .or_default();
        h.add(depth);
    }

    fn hist_sub(w: &mut Writer, d: usize, prefix: &Name, depth: usize) {
        if let Some(map) = w.below.get_mut(&d) {
            if let Some(h) = map.get_mut(prefix) {
                h.sub(depth);
                if hist_max(h).is_none() {
                    map.remove(prefix);
                }
            }
        }
    }

    fn refresh_depth_summary(&self, w: &Writer) {
        let max = w.real_depths.iter().rposition(|&c| c != 0).unwrap_or(0);
        self.max_real_depth.store(max, Ordering::Release);
        self.has_root
            .store(w.real_depths[0] != 0, Ordering::Release);
    }

    /// Sets the real next hops of `name` (empty = not a real prefix), maintaining the virtual
    /// entries and `md` of every active depth.
    fn set_real(&self, w: &mut Writer, name: &Name, nexthops: NextHops) -> Result<(), FibError> {
        let depth = name.len();
        let hash = name_hash(self.key, name);
        let value = value_of(name);
        let cur = self.find_exact(w, hash, &value);
        let was_real = cur.is_some_and(|c| !c.is_virtual);
        let now_real = !nexthops.is_empty();
        let above: Vec<usize> = w.active.iter().copied().filter(|&d| d < depth).collect();
        let at_active = w.active.contains(&depth);
        match (was_real, now_real) {
            (false, false) => Ok(()),
            (true, true) => self.sync(w, name, Real::Set(nexthops)),
            (false, true) => {
                // Refuse up front rather than half-way when entries or slots are short.
                let mut needed = usize::from(cur.is_none());
                for &d in &above {
                    let p = name.prefix(d);
                    let ph = name_hash(self.key, &p);
                    needed += usize::from(self.find_exact(w, ph, &value_of(&p)).is_none());
                }
                if self.len() + needed > self.capacity {
                    return Err(FibError::Full);
                }
                // One slot per entry written (a rollback only lowers md: it needs none).
                self.reserve(w, above.len() + 1)?;
                // Virtual entries and md first, so that readers never miss a route.
                for (i, &d) in above.iter().enumerate() {
                    let p = name.prefix(d);
                    Self::hist_add(w, d, &p, depth);
                    if let Err(e) = self.sync(w, &p, Real::Keep) {
                        self.unregister(w, name, &above[..=i]);
                        return Err(e);
                    }
                }
                if at_active {
                    Self::hist_add(w, depth, name, depth);
                }
                if let Err(e) = self.sync(w, name, Real::Set(nexthops)) {
                    if at_active {
                        Self::hist_sub(w, depth, name, depth);
                    }
                    self.unregister(w, name, &above);
                    return Err(e);
                }
                w.real_depths[depth] += 1;
                self.refresh_depth_summary(w);
                Ok(())
            }
            (true, false) => {
                // The prefix goes first (a copy if it stays as a virtual entry), then the md and
                // virtual entries it needed.
                self.reserve(w, 1)?;
                if at_active {
                    Self::hist_sub(w, depth, name, depth);
                }
                if let Err(e) = self.sync(w, name, Real::Set(NextHops::EMPTY)) {
                    if at_active {
                        Self::hist_add(w, depth, name, depth);
                    }
                    return Err(e);
                }
                self.unregister(w, name, &above);
                w.real_depths[depth] -= 1;
                self.refresh_depth_summary(w);
                Ok(())
            }
        }
    }

    /// Removes the real prefix `name` from the histograms of `depths` and resyncs those
    /// prefixes (lowering md, removing virtual entries: never fails, see [`Fib::sync`]).
    fn unregister(&self, w: &mut Writer, name: &Name, depths: &[usize]) {
        for &d in depths.iter().rev() {
            let p = name.prefix(d);
            Self::hist_sub(w, d, &p, name.len());
            let r = self.sync(w, &p, Real::Keep);
            debug_assert!(r.is_ok());
        }
    }

    /// Adds (or updates the cost of) next hop `face` on prefix `name`, creating the prefix if
    /// needed. A prefix has at most [`MAX_NEXTHOPS`] next hops.
    pub fn add_nexthop(&self, name: &Name, face: u32, cost: u32) -> Result<(), FibError> {
        if name.len() > MAX_PREFIX_STATES {
            return Err(FibError::TooDeep { depth: name.len() });
        }
        let mut w = self.lock();
        let hash = name_hash(self.key, name);
        let cur = self.find_exact(&w, hash, &value_of(name));
        let mut nh: Vec<NextHop> = cur.map(|c| c.nexthops.to_vec()).unwrap_or_default();
        let full = nh.len() >= MAX_NEXTHOPS;
        match nh.iter_mut().find(|n| n.face == face) {
            Some(n) => n.cost = cost,
            None if full => return Err(FibError::TooManyNextHops),
            None => nh.push(NextHop { face, cost }),
        }
        nh.sort_by_key(|n| (n.cost, n.face));
        self.set_real(&mut w, name, NextHops::new(&nh))
    }

    /// Removes next hop `face` from prefix `name`; a prefix left without next hops is removed.
    /// Returns whether the next hop was there (and is now gone: the removal fails, leaving it,
    /// only in the [`FibError::Full`] case of a reader pinned for too long).
    pub fn remove_nexthop(&self, name: &Name, face: u32) -> bool {
        if name.len() > MAX_PREFIX_STATES {
            return false;
        }
        let mut w = self.lock();
        let hash = name_hash(self.key, name);
        let Some(cur) = self.find_exact(&w, hash, &value_of(name)) else {
            return false;
        };
        self.remove_face_from(&mut w, name, &cur.nexthops, face)
    }

    /// Removes `face` from the next hops `nh` of `name`.
    fn remove_face_from(&self, w: &mut Writer, name: &Name, nh: &NextHops, face: u32) -> bool {
        if !nh.iter().any(|n| n.face == face) {
            return false;
        }
        let kept: Vec<NextHop> = nh.iter().copied().filter(|n| n.face != face).collect();
        self.set_real(w, name, NextHops::new(&kept)).is_ok()
    }

    /// Removes `face` from every prefix (the face went down). Returns the number of prefixes it
    /// was removed from.
    pub fn remove_face(&self, face: u32) -> usize {
        let mut w = self.lock();
        let affected: Vec<(Name, NextHops)> = w
            .names
            .iter()
            .enumerate()
            .filter_map(|(slot, n)| Some((n.as_ref()?, self.published(&w, slot as u32)?)))
            .filter(|(_, e)| !e.is_virtual && e.nexthops().iter().any(|n| n.face == face))
            .map(|(n, e)| (n.name(), NextHops::new(e.nexthops())))
            .collect();
        affected
            .iter()
            .filter(|(name, nh)| self.remove_face_from(&mut w, name, nh, face))
            .count()
    }

    /// The real prefixes and their next hops, sorted by name (for status datasets).
    pub fn entries(&self) -> Vec<(Name, Vec<NextHop>)> {
        let w = self.lock();
        let mut v: Vec<(Name, Vec<NextHop>)> = w
            .names
            .iter()
            .enumerate()
            .filter_map(|(slot, n)| Some((n.as_ref()?, self.published(&w, slot as u32)?)))
            .filter(|(_, e)| !e.is_virtual)
            .map(|(n, e)| (n.name(), e.nexthops().to_vec()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The M of the seed's most-likely heuristic: the depth (≥ 1) with the most real prefixes
    /// (the shallower one on a tie); the current M when the FIB has no prefix below `/`.
    pub fn most_likely_m(&self) -> usize {
        let w = self.lock();
        let mut best = (0, self.m());
        for (d, &c) in w.real_depths.iter().enumerate().skip(1) {
            if c > best.0 {
                best = (c, d);
            }
        }
        best.1
    }

    /// Changes M (clamped to `1..=MAX_PREFIX_STATES`) without stopping readers, in the seed's
    /// safe order: the virtual entries and `md` for the new M are put in place first, then the
    /// new M is published, then — once every reader that may still use the old M has unpinned —
    /// the virtual entries only the old M needed are deleted.
    ///
    /// Call it from a thread that is not pinned: if no grace period can be observed (the caller
    /// holds a guard), the old M's entries are kept, and maintained, until the next `set_m`.
    /// Fails, leaving M unchanged, if the new virtual entries do not fit.
    pub fn set_m(&self, m: usize) -> Result<(), FibError> {
        let m = m.clamp(1, MAX_PREFIX_STATES);
        let mut w = self.lock();
        if !w.active.contains(&m) {
            self.activate(&mut w, m)?;
        }
        self.m.store(m, Ordering::Release);
        let stale: Vec<usize> = w.active.iter().copied().filter(|&d| d != m).collect();
        if stale.is_empty() || !wait_grace_period() {
            return Ok(());
        }
        w.active.retain(|&d| d == m);
        for d in stale {
            let names: Vec<Name> = w.below.remove(&d).unwrap_or_default().into_keys().collect();
            for p in &names {
                // Removes virtual entries and lowers md: never fails (see `sync`).
                let r = self.sync(&mut w, p, Real::Keep);
                debug_assert!(r.is_ok());
            }
        }
        Ok(())
    }

    /// Starts maintaining virtual entries and md at depth `d`.
    fn activate(&self, w: &mut Writer, d: usize) -> Result<(), FibError> {
        let mut map: HashMap<Name, Hist> = HashMap::new();
        for (slot, name) in w.names.iter().enumerate() {
            let Some(name) = name else { continue };
            let Some(e) = self.published(w, slot as u32) else {
                continue;
            };
            if !e.is_virtual && usize::from(e.depth) >= d {
                map.entry(name.name().prefix(d))
                    .or_default()
                    .add(usize::from(e.depth));
            }
        }
        let names: Vec<Name> = map.keys().cloned().collect();
        let needed = names
            .iter()
            .filter(|p| {
                let h = name_hash(self.key, p);
                self.find_exact(w, h, &value_of(p)).is_none()
            })
            .count();
        if self.len() + needed > self.capacity {
            return Err(FibError::Full);
        }
        w.active.push(d);
        w.below.insert(d, map);
        for p in &names {
            if let Err(e) = self.sync(w, p, Real::Keep) {
                w.active.retain(|&x| x != d);
                w.below.remove(&d);
                for p in &names {
                    // Removes the new virtual entries and lowers md: never fails (see `sync`).
                    let r = self.sync(w, p, Real::Keep);
                    debug_assert!(r.is_ok());
                }
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Drop for Fib {
    fn drop(&mut self) {
        // A reader may still hold an entry (its lifetime is the guard's, not the FIB's), so the
        // arena goes through the collector rather than being freed here.
        let arena = Arc::clone(&self.arena);
        epoch::pin().defer(move || drop(arena));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use wire::{Component, Limits};

    const KEY: HashKey = HashKey::fixed(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);

    fn n(uri: &str) -> Name {
        Name::from_uri(uri).unwrap()
    }

    /// LPM of `name` by one of the two algorithms: (matched prefix and next hops, probes).
    fn lpm(fib: &Fib, name: &Name, two_stage: bool) -> (Option<(Name, Vec<NextHop>)>, u64) {
        let w = name.to_wire();
        let v = NameView::decode(&w, &Limits::default()).unwrap();
        let h = PrefixHashes::new(KEY, &v);
        let guard = epoch::pin();
        let mut st = LpmStats::default();
        // A plan resumes the lookup with at least one new line per pass until it reaches the
        // end or its line budget (a bucket and an entry's two lines per probe).
        let mut plan = LinePlan::default();
        fib.prefetch(&v, &h, &mut plan);
        let mut planned = None;
        let mut cursor = FibCursor::default();
        for _ in 0..crate::table::index::PLAN_LINES {
            if let Some(a) = fib.plan(&v, &h, &guard, &mut plan, &mut cursor) {
                assert!(planned.is_none(), "a plan answers once");
                planned = Some(a);
            }
        }
        assert!(plan.complete || plan.is_full(), "plan of {name} stuck");
        // The pass that completes a plan answers it.
        assert_eq!(planned.is_some(), plan.complete, "plan of {name}");
        if let Some((answer, probes)) = planned {
            // The plan's answer is the real lookup's.
            let mut direct = LpmStats::default();
            let want = fib.lookup(&v, &h, &guard, &mut direct);
            assert_eq!(
                answer.map(|e| e as *const FibEntry),
                want.map(|e| e as *const FibEntry),
                "plan of {name} answered differently"
            );
            assert_eq!(probes, direct.probes, "plan of {name} counted other probes");
        }
        if plan.complete {
            // The plan requested every line the real lookup reads.
            struct Audit<'a>(&'a LinePlan, usize);
            impl Touch for Audit<'_> {
                fn touch(&mut self, line: *const u8) -> bool {
                    self.1 += usize::from(!self.0.contains(line));
                    true
                }
            }
            let mut audit = Audit(&plan, 0);
            let real = fib.two_stage(&v, &h, &guard, &mut FibCursor::default(), &mut audit);
            assert!(real.is_ok());
            assert_eq!(audit.1, 0, "lines of {name}'s lookup left out of its plan");
        }
        let e = if two_stage {
            fib.lookup(&v, &h, &guard, &mut st)
        } else {
            fib.lookup_longest_first(&v, &h, &guard, &mut st)
        };
        assert_eq!(st.lookups, 1);
        let e = e.map(|e| {
            assert!(!e.is_virtual);
            // The matched prefix is the name's first `depth` components.
            let p = name.prefix(usize::from(e.depth));
            assert_eq!(e.hash, name_hash(KEY, &p));
            assert_eq!(e.value(), &value_of(&p)[..]);
            (p, e.nexthops().to_vec())
        });
        (e, st.probes)
    }

    fn matched(fib: &Fib, uri: &str, two_stage: bool) -> (Option<Name>, u64) {
        let (e, p) = lpm(fib, &n(uri), two_stage);
        (e.map(|(name, _)| name), p)
    }

    /// A published entry, copied out with its name.
    struct Dumped {
        name: Name,
        hash: u64,
        value: Vec<u8>,
        depth: u8,
        md: u8,
        is_virtual: bool,
        nexthops: Vec<NextHop>,
    }

    /// Every published entry (under the writer lock).
    fn dump(fib: &Fib) -> Vec<Dumped> {
        let w = fib.lock();
        w.names
            .iter()
            .enumerate()
            .filter_map(|(slot, name)| {
                let name = name.as_ref()?;
                let e = fib.published(&w, slot as u32).unwrap();
                Some(Dumped {
                    name: name.name(),
                    hash: e.hash,
                    value: e.value().to_vec(),
                    depth: e.depth,
                    md: e.md,
                    is_virtual: e.is_virtual,
                    nexthops: e.nexthops().to_vec(),
                })
            })
            .collect()
    }

    /// The invariants of the virtual entries at M, checked on the table itself.
    fn check_invariants(fib: &Fib) {
        let m = fib.m();
        let dumped = dump(fib);
        let all: Vec<&Dumped> = dumped.iter().collect();
        let real: Vec<&Dumped> = all.iter().copied().filter(|e| !e.is_virtual).collect();
        assert_eq!(fib.real_len(), real.len());
        assert_eq!(fib.virtual_len(), all.len() - real.len());
        assert_eq!(fib.index.len(), all.len());
        for e in &all {
            // Every published entry is reachable through the index.
            let w = fib.lock();
            let found = fib.find_exact(&w, e.hash, &e.value).expect("indexed");
            assert_eq!(fib.published(&w, found.slot).unwrap().hash, e.hash);
            drop(w);
            assert_eq!(usize::from(e.depth), e.name.len());
            assert_eq!(e.value, value_of(&e.name));
            assert_eq!(e.hash, name_hash(KEY, &e.name));
            assert_eq!(e.is_virtual, e.nexthops.is_empty());
            assert!(e.nexthops.windows(2).all(|p| p[0].cost <= p[1].cost));
            if e.is_virtual {
                // Every virtual entry has at least one real prefix below it.
                assert!(
                    real.iter()
                        .any(|r| r.name.len() > e.name.len() && e.name.is_prefix_of(&r.name)),
                    "orphan virtual entry {}",
                    e.name
                );
            }
            if usize::from(e.depth) == m {
                let md = real
                    .iter()
                    .filter(|r| e.name.is_prefix_of(&r.name))
                    .map(|r| r.name.len())
                    .max()
                    .unwrap();
                assert_eq!(usize::from(e.md), md, "md of {}", e.name);
            }
        }
        // Every real prefix deeper than M has an entry at depth M whose md covers it.
        for r in &real {
            if r.name.len() > m {
                let p = r.name.prefix(m);
                let e = all.iter().find(|e| e.name == p).expect("entry at depth M");
                assert!(usize::from(e.md) >= r.name.len());
            }
        }
    }

    fn paper_fib() -> Fib {
        let fib = Fib::new(KEY, 64, 3);
        fib.add_nexthop(&n("/a"), 1, 10).unwrap();
        fib.add_nexthop(&n("/a/b/d"), 2, 10).unwrap();
        fib.add_nexthop(&n("/a/b/c/d"), 3, 10).unwrap();
        fib
    }

    #[test]
    fn paper_example_algorithm_1() {
        let fib = paper_fib();
        check_invariants(&fib);
        assert_eq!((fib.real_len(), fib.virtual_len(), fib.len()), (3, 1, 4));
        {
            let w = fib.lock();
            let h = name_hash(KEY, &n("/a/b/c"));
            let v = fib.find_exact(&w, h, &value_of(&n("/a/b/c"))).unwrap();
            assert!(v.is_virtual);
            assert_eq!(v.md, 4);
        }
        // Seed 002 §2.3: 2, 3 and 1 probes (instead of 3, 6 and 3 starting at n).
        assert_eq!(
            matched(&fib, "/a/b/c/d/e/f", true),
            (Some(n("/a/b/c/d")), 2)
        );
        assert_eq!(matched(&fib, "/a/c/d/e/f/g", true), (Some(n("/a")), 3));
        assert_eq!(matched(&fib, "/a/b/d/e/f/g", true), (Some(n("/a/b/d")), 1));
        // The one penalised case of Table 2: /a/b/c/d costs 2 probes against 1.
        assert_eq!(matched(&fib, "/a/b/c/d", true), (Some(n("/a/b/c/d")), 2));
        assert_eq!(matched(&fib, "/a/b/c/d", false), (Some(n("/a/b/c/d")), 1));
        // Our baseline starts at min(n, deepest prefix = 4), not at n.
        assert_eq!(
            matched(&fib, "/a/b/c/d/e/f", false),
            (Some(n("/a/b/c/d")), 1)
        );
        assert_eq!(matched(&fib, "/a/c/d/e/f/g", false), (Some(n("/a")), 4));
        assert_eq!(matched(&fib, "/a/b/d/e/f/g", false), (Some(n("/a/b/d")), 2));
        // Stage 2 falls back below M through the virtual /a/b/c.
        assert_eq!(matched(&fib, "/a/b/c/x/y", true), (Some(n("/a")), 4));
        assert_eq!(matched(&fib, "/a/b", true), (Some(n("/a")), 2));
        assert_eq!(matched(&fib, "/b/c/d/e", true), (None, 3));
    }

    /// What the planning passes of `uri`'s lookup answer: (depth of the match, probes), or
    /// `None` when no pass answered.
    fn plan_answer(fib: &Fib, uri: &str) -> Option<(Option<u8>, u64)> {
        let w = n(uri).to_wire();
        let v = NameView::decode(&w, &Limits::default()).unwrap();
        let h = PrefixHashes::new(KEY, &v);
        let guard = epoch::pin();
        let mut plan = LinePlan::default();
        fib.prefetch(&v, &h, &mut plan);
        let mut cursor = FibCursor::default();
        let mut answers = (0..crate::table::index::PLAN_LINES)
            .filter_map(|_| fib.plan(&v, &h, &guard, &mut plan, &mut cursor));
        let first = answers
            .next()
            .map(|(e, probes)| (e.map(|e| e.depth), probes));
        assert!(answers.next().is_none(), "a plan answers once");
        assert!(plan.complete);
        first
    }

    #[test]
    fn the_pass_that_completes_a_plan_answers_the_lookup() {
        let fib = paper_fib();
        // The answer comes from the probe of the last pass: stage 2, stage 1 below M, the
        // fall-back below M through a virtual entry, and no route at all.
        assert_eq!(plan_answer(&fib, "/a/b/c/d/e/f"), Some((Some(4), 2)));
        assert_eq!(plan_answer(&fib, "/a/c/d/e/f/g"), Some((Some(1), 3)));
        assert_eq!(plan_answer(&fib, "/a/b/c/x/y"), Some((Some(1), 4)));
        assert_eq!(plan_answer(&fib, "/a/b/d/e/f/g"), Some((Some(3), 1)));
        assert_eq!(plan_answer(&fib, "/b/c/d/e"), Some((None, 3)));
    }

    #[test]
    fn nexthops_update_remove_and_virtual_cleanup() {
        let fib = paper_fib();
        fib.add_nexthop(&n("/a"), 5, 1).unwrap();
        fib.add_nexthop(&n("/a"), 1, 20).unwrap();
        let (e, _) = lpm(&fib, &n("/a/x"), true);
        assert_eq!(
            e.unwrap().1,
            vec![NextHop { face: 5, cost: 1 }, NextHop { face: 1, cost: 20 }]
        );
        assert!(!fib.remove_nexthop(&n("/a"), 9));
        assert!(!fib.remove_nexthop(&n("/a/b/c"), 3)); // virtual: no next hops
        assert!(fib.remove_nexthop(&n("/a/b/c/d"), 3));
        check_invariants(&fib);
        assert_eq!((fib.real_len(), fib.virtual_len()), (2, 0));
        assert_eq!(matched(&fib, "/a/b/c/d/e", true), (Some(n("/a")), 3));
        // A real entry at M keeps its md while deeper prefixes come and go.
        fib.add_nexthop(&n("/a/b/d/e/f"), 4, 0).unwrap();
        check_invariants(&fib);
        assert_eq!(
            matched(&fib, "/a/b/d/e/f/g", true),
            (Some(n("/a/b/d/e/f")), 2)
        );
        assert_eq!(matched(&fib, "/a/b/d/e/x", true), (Some(n("/a/b/d")), 3));
        assert_eq!(fib.remove_face(4), 1);
        assert_eq!(fib.remove_face(5), 1);
        check_invariants(&fib);
        assert_eq!(
            fib.entries(),
            vec![
                (n("/a"), vec![NextHop { face: 1, cost: 20 }]),
                (n("/a/b/d"), vec![NextHop { face: 2, cost: 10 }]),
            ]
        );
    }

    #[test]
    fn default_route_and_depth_limit() {
        let fib = Fib::new(KEY, 16, 2);
        assert_eq!(matched(&fib, "/x/y/z", true), (None, 2));
        fib.add_nexthop(&Name::new(), 7, 0).unwrap();
        assert_eq!(matched(&fib, "/x/y/z", true), (Some(Name::new()), 3));
        assert_eq!(matched(&fib, "/x/y/z", false), (Some(Name::new()), 1));
        assert_eq!(matched(&fib, "/", true), (Some(Name::new()), 1));
        let mut deep = Name::new();
        for i in 0..=MAX_PREFIX_STATES {
            deep.push(Component::generic(format!("{i}").into_bytes()));
        }
        assert_eq!(
            fib.add_nexthop(&deep, 1, 1),
            Err(FibError::TooDeep { depth: 33 })
        );
        fib.add_nexthop(&deep.prefix(MAX_PREFIX_STATES), 1, 1)
            .unwrap();
        check_invariants(&fib);
        assert_eq!(
            matched(&fib, &deep.to_string(), true).0,
            Some(deep.prefix(32))
        );
        assert!(fib.remove_nexthop(&Name::new(), 7));
        assert_eq!(matched(&fib, "/x/y/z", true), (None, 2));
    }

    #[test]
    fn capacity_is_enforced_without_partial_updates() {
        let fib = Fib::new(KEY, 3, 1);
        fib.add_nexthop(&n("/a/b"), 1, 0).unwrap(); // /a/b and virtual /a
        fib.add_nexthop(&n("/a/c"), 1, 0).unwrap();
        assert_eq!(fib.add_nexthop(&n("/b/c"), 1, 0), Err(FibError::Full)); // needs 2
        check_invariants(&fib);
        assert_eq!(fib.len(), 3);
        fib.add_nexthop(&n("/a"), 1, 0).unwrap(); // the virtual /a turns real
        assert_eq!(fib.set_m(2), Ok(())); // no new entry needed at depth 2
        check_invariants(&fib);
        assert!(fib.remove_nexthop(&n("/a"), 1));
        assert_eq!(fib.len(), 2);
    }

    #[test]
    fn garbage_tokens_cost_at_most_m_probes() {
        let fib = Fib::new(KEY, 256, 3);
        for uri in [
            "/com",
            "/com/example",
            "/com/example/www",
            "/org/ndn/x/y/z/w",
        ] {
            fib.add_nexthop(&n(uri), 1, 0).unwrap();
        }
        let mut garbage = n("/com/example");
        for i in 0..38 {
            garbage.push(Component::generic(format!("junk{i}").into_bytes()));
        }
        assert_eq!(garbage.len(), 40);
        let (e, p2) = lpm(&fib, &garbage, true);
        assert_eq!(e.unwrap().0, n("/com/example"));
        assert_eq!(p2, 2); // /com/example/junk0 misses, /com/example hits
        let (_, p1) = lpm(&fib, &garbage, false);
        assert_eq!(p1, 5); // from depth 6 (deepest prefix) down to 2
        let mut nomatch = Name::new();
        for i in 0..40 {
            nomatch.push(Component::generic(format!("g{i}").into_bytes()));
        }
        assert_eq!(lpm(&fib, &nomatch, true), (None, 3));
        assert_eq!(lpm(&fib, &nomatch, false), (None, 6));
        // The most-likely heuristic over this FIB's depths (1, 2, 3, 6) picks the first maximum.
        assert_eq!(fib.most_likely_m(), 1);
    }

    #[test]
    fn most_likely_m_follows_table_5() {
        // Table 5's per-depth distribution (in permille, depth 1 lumped into 3): M = 4.
        let fib = Fib::new(KEY, 2048, 8);
        let dist = [
            (2, 18),
            (3, 285),
            (4, 369),
            (5, 191),
            (6, 69),
            (7, 33),
            (8, 34),
        ];
        let mut added = 0;
        for (depth, count) in dist {
            for i in 0..count {
                let mut name = Name::new();
                name.push(Component::generic(format!("r{}", i % 7).into_bytes()));
                for d in 1..depth {
                    name.push(Component::generic(format!("c{d}-{depth}-{i}").into_bytes()));
                }
                fib.add_nexthop(&name, 1, 0).unwrap();
                added += 1;
            }
        }
        assert_eq!(fib.real_len(), added);
        assert_eq!(fib.most_likely_m(), 4);
        fib.set_m(fib.most_likely_m()).unwrap();
        assert_eq!(fib.m(), 4);
        check_invariants(&fib);
        // Each name below depth 4 has its own depth-4 prefix here: one virtual entry each.
        assert_eq!(fib.virtual_len(), 191 + 69 + 33 + 34);
        assert!(fib.expansion_pct() > 30.0);
        fib.set_m(8).unwrap();
        check_invariants(&fib);
        assert_eq!(fib.virtual_len(), 0);
        assert_eq!(fib.expansion_pct(), 0.0);
    }

    #[test]
    fn set_m_while_pinned_keeps_old_virtual_entries() {
        let fib = paper_fib();
        let guard = epoch::pin();
        fib.set_m(2).unwrap(); // no grace period can pass: old M's virtual /a/b/c stays
        assert_eq!(fib.m(), 2);
        assert_eq!(fib.virtual_len(), 2); // /a/b/c (old M) and /a/b (new M)
        drop(guard);
        fib.add_nexthop(&n("/a/b/c/d/e"), 1, 0).unwrap();
        check_invariants(&fib);
        assert_eq!(
            matched(&fib, "/a/b/c/d/e/f", true),
            (Some(n("/a/b/c/d/e")), 2)
        );
        fib.set_m(2).unwrap(); // now the old depth is retired
        check_invariants(&fib);
        assert_eq!(fib.virtual_len(), 1); // only /a/b is left
        assert_eq!(matched(&fib, "/a/b/c/x", true), (Some(n("/a")), 4));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(Name, u32, u32),
        Remove(Name, u32),
        RemoveFace(u32),
        SetM(usize),
    }

    fn name_strategy(max: usize) -> impl Strategy<Value = Name> {
        proptest::collection::vec(proptest::sample::select(vec!["a", "b", "c"]), 0..=max).prop_map(
            |cs| {
                let mut name = Name::new();
                for c in cs {
                    name.push(Component::generic(c.as_bytes()));
                }
                name
            },
        )
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        prop_oneof![
            5 => (name_strategy(6), 0..4u32, 0..5u32).prop_map(|(n, f, c)| Op::Add(n, f, c)),
            3 => (name_strategy(6), 0..4u32).prop_map(|(n, f)| Op::Remove(n, f)),
            1 => (0..4u32).prop_map(Op::RemoveFace),
            1 => (1..=6usize).prop_map(Op::SetM),
        ]
    }

    fn reference_lpm(
        r: &BTreeMap<Name, Vec<NextHop>>,
        name: &Name,
    ) -> Option<(Name, Vec<NextHop>)> {
        (0..=name.len()).rev().find_map(|k| {
            let p = name.prefix(k);
            r.get(&p).map(|nh| (p, nh.clone()))
        })
    }

    proptest! {
        #[test]
        fn agrees_with_reference_model(
            m0 in 1..=5usize,
            ops in proptest::collection::vec(op_strategy(), 1..40),
            interests in proptest::collection::vec(name_strategy(9), 1..24),
        ) {
            let fib = Fib::new(KEY, 512, m0);
            let mut reference: BTreeMap<Name, Vec<NextHop>> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Add(name, face, cost) => {
                        fib.add_nexthop(&name, face, cost).unwrap();
                        let nh = reference.entry(name).or_default();
                        match nh.iter_mut().find(|x| x.face == face) {
                            Some(x) => x.cost = cost,
                            None => nh.push(NextHop { face, cost }),
                        }
                        nh.sort_by_key(|x| (x.cost, x.face));
                    }
                    Op::Remove(name, face) => {
                        let had = reference.get(&name).is_some_and(|v| v.iter().any(|x| x.face == face));
                        prop_assert_eq!(fib.remove_nexthop(&name, face), had);
                        if let Some(v) = reference.get_mut(&name) {
                            v.retain(|x| x.face != face);
                            if v.is_empty() {
                                reference.remove(&name);
                            }
                        }
                    }
                    Op::RemoveFace(face) => {
                        let had = reference.values().filter(|v| v.iter().any(|x| x.face == face)).count();
                        prop_assert_eq!(fib.remove_face(face), had);
                        for v in reference.values_mut() {
                            v.retain(|x| x.face != face);
                        }
                        reference.retain(|_, v| !v.is_empty());
                    }
                    Op::SetM(m) => {
                        fib.set_m(m).unwrap();
                        prop_assert_eq!(fib.m(), m);
                    }
                }
                check_invariants(&fib);
                let listed: Vec<(Name, Vec<NextHop>)> =
                    reference.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                prop_assert_eq!(fib.entries(), listed);
                for i in &interests {
                    let want = reference_lpm(&reference, i);
                    let (two, p2) = lpm(&fib, i, true);
                    let (one, _) = lpm(&fib, i, false);
                    prop_assert_eq!(&two, &want, "2-stage, interest {}", i);
                    prop_assert_eq!(&one, &want, "longest-first, interest {}", i);
                    // Bounded by the FIB: at most max(M, deepest md) probes, plus `/`.
                    let bound = fib.m().max(reference.keys().map(Name::len).max().unwrap_or(0)) + 1;
                    prop_assert!(p2 as usize <= bound + 1);
                }
            }
        }
    }

    /// A 60-character component: prefixes with it do not fit inline.
    fn long(i: usize) -> String {
        format!("long-component-{i}-{}", "x".repeat(40))
    }

    /// Next hops of a flapping route: face 7 at cost 0 always, and any of faces 100..106 at cost
    /// 3 × face, sorted, without duplicates.
    fn valid_flapping_hops(nh: &[NextHop]) -> bool {
        nh.first() == Some(&NextHop { face: 7, cost: 0 })
            && nh[1..]
                .iter()
                .all(|h| (100..106).contains(&h.face) && h.cost == 3 * h.face)
            && nh
                .windows(2)
                .all(|p| (p[0].cost, p[0].face) < (p[1].cost, p[1].face))
    }

    #[test]
    fn readers_never_lose_routes_or_see_half_written_entries_during_churn() {
        use std::sync::atomic::AtomicBool;
        let fib = Arc::new(Fib::new(KEY, 4096, 3));
        // (interest, expected LPM, flapping): stable routes at depths 2 and 4, never touched by
        // the writer, and flapping routes whose next hops the writer keeps changing.
        let mut cases: Vec<(Name, Name, bool)> = Vec::new();
        for i in 0..16 {
            let s = n(&format!("/s/{i}"));
            fib.add_nexthop(&s, 1, 0).unwrap();
            cases.push((n(&format!("/s/{i}/x/r/w")), s.clone(), false));
            cases.push((n(&format!("/s/{i}/q")), s.clone(), false));
            if i % 2 == 0 {
                let deep = n(&format!("/s/{i}/q/r"));
                fib.add_nexthop(&deep, 2, 0).unwrap();
                cases.push((n(&format!("/s/{i}/q/r/w/v/u")), deep.clone(), false));
                cases.push((deep.clone(), deep, false));
            } else {
                cases.push((n(&format!("/s/{i}/q/r/w/v/u")), s.clone(), false));
            }
        }
        // Flapping routes at depths 2 and 4 (around M), half of them longer than INLINE_PREFIX:
        // inline while they have up to 6 next hops, a heap copy with 7.
        let flapping: Vec<Name> = (0..8)
            .map(|i| match i % 4 {
                0 => n(&format!("/f/{i}")),
                1 => n(&format!("/f/{}", long(i))),
                2 => n(&format!("/f/{i}/g/h")),
                _ => n(&format!("/f/{i}/g/{}", long(i))),
            })
            .collect();
        for f in &flapping {
            assert_eq!(
                f.value_len() > INLINE_PREFIX,
                f.to_string().contains("long")
            );
            fib.add_nexthop(f, 7, 0).unwrap();
            cases.push((
                f.clone().with(Component::generic(&b"x"[..])),
                f.clone(),
                true,
            ));
        }
        let done = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let fib = Arc::clone(&fib);
                let done = Arc::clone(&done);
                let prepared: Vec<(Vec<u8>, Name, bool)> = cases
                    .iter()
                    .map(|(i, e, f)| (i.to_wire(), e.clone(), *f))
                    .collect();
                std::thread::spawn(move || {
                    let mut batches = 0u64;
                    let mut st = LpmStats::default();
                    while !done.load(Ordering::Acquire) || batches < 50 {
                        let guard = epoch::pin();
                        // Entries found in this batch, with a copy of what they held.
                        let mut seen = Vec::new();
                        for (w, want, flaps) in &prepared {
                            let v = NameView::decode(w, &Limits::default()).unwrap();
                            let h = PrefixHashes::new(KEY, &v);
                            let mut plan = LinePlan::default();
                            fib.prefetch(&v, &h, &mut plan);
                            fib.plan(&v, &h, &guard, &mut plan, &mut FibCursor::default());
                            for two_stage in [true, false] {
                                let e = if two_stage {
                                    fib.lookup(&v, &h, &guard, &mut st)
                                } else {
                                    fib.lookup_longest_first(&v, &h, &guard, &mut st)
                                };
                                let e = e.unwrap_or_else(|| {
                                    panic!("lost {want} (2-stage: {two_stage}, M={})", fib.m())
                                });
                                assert_eq!(e.value(), &value_of(want)[..], "wrong match");
                                assert_eq!(e.hash, name_hash(KEY, want));
                                assert_eq!(usize::from(e.depth), want.len());
                                assert!(!e.is_virtual);
                                if *flaps {
                                    assert!(valid_flapping_hops(e.nexthops()), "{e:?}");
                                } else {
                                    assert_eq!(e.nexthops().len(), 1);
                                }
                                let copy =
                                    (e.value().to_vec(), e.nexthops().to_vec(), e.md, e.depth);
                                seen.push((e, copy));
                            }
                        }
                        // Nothing a reader holds changes while it is pinned (no slot reuse).
                        std::thread::yield_now();
                        for (e, (value, nh, md, depth)) in &seen {
                            assert_eq!((e.value(), e.nexthops()), (&value[..], &nh[..]));
                            assert_eq!((e.md, e.depth), (*md, *depth));
                        }
                        drop(guard);
                        batches += 1;
                        std::thread::yield_now();
                    }
                    batches
                })
            })
            .collect();
        // Churn: prefixes that share M-prefixes with the stable ones (changing md and virtual
        // entries under them) without ever being a longer match for the readers' names, and
        // next-hop changes on the flapping routes.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..3000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % 16) as usize;
            let uri = match (x >> 8) % 4 {
                0 => format!("/s/{i}/z"),
                1 => format!("/s/{i}/q/z/k/j"),
                2 => format!("/s/{i}/x/y/z/k/j"),
                _ => format!("/t/{i}/a/b/c"),
            };
            let name = n(&uri);
            if (x >> 20) % 2 == 0 {
                fib.add_nexthop(&name, 3, round).unwrap();
            } else {
                fib.remove_nexthop(&name, 3);
            }
            let f = &flapping[(x >> 24) as usize % flapping.len()];
            let face = 100 + (x >> 32) as u32 % 6;
            if (x >> 40) % 2 == 0 {
                fib.add_nexthop(f, face, 3 * face).unwrap();
            } else {
                fib.remove_nexthop(f, face);
            }
            if round % 100 == 0 {
                fib.set_m(1 + (round as usize / 100) % 5).unwrap();
            }
        }
        done.store(true, Ordering::Release);
        for r in readers {
            let batches = r.join().expect("reader panicked");
            assert!(batches >= 50);
        }
        check_invariants(&fib);
    }

    #[test]
    fn long_prefixes_and_the_next_hop_limit() {
        let fib = Fib::new(KEY, 64, 2);
        // Values of 56 (inline whatever the next hops), 104 (inline beside one next hop,
        // running into the entry's second line) and 105 bytes (a heap copy even with one): one
        // component of 54, 102 or 103 bytes; and three long components (a heap copy).
        let at = n(&format!("/{}", "y".repeat(54)));
        let fits = n(&format!("/{}", "y".repeat(102)));
        let over = n(&format!("/{}", "y".repeat(103)));
        let deep = n(&format!("/{}/{}/{}", long(1), long(2), long(3)));
        assert_eq!(
            (at.value_len(), fits.value_len(), over.value_len()),
            (INLINE_PREFIX, 104, 105)
        );
        let all = [&at, &fits, &over, &deep];
        for (i, p) in all.into_iter().enumerate() {
            fib.add_nexthop(p, i as u32 + 1, 0).unwrap();
        }
        check_invariants(&fib);
        // Where each prefix is kept, and the match and next hops read back from there.
        let stored_inline = |p: &Name| {
            let w = p.to_wire();
            let v = NameView::decode(&w, &Limits::default()).unwrap();
            let h = PrefixHashes::new(KEY, &v);
            let guard = epoch::pin();
            let e = fib
                .lookup(&v, &h, &guard, &mut LpmStats::default())
                .unwrap();
            assert_eq!(e.value(), &value_of(p)[..]);
            e.heap_lines().is_none()
        };
        assert_eq!(all.map(stored_inline), [true, true, false, false]);
        for (i, p) in all.into_iter().enumerate() {
            let (e, _) = lpm(&fib, &p.clone().with(Component::generic(&b"z"[..])), true);
            assert_eq!(
                e,
                Some((
                    p.clone(),
                    vec![NextHop {
                        face: i as u32 + 1,
                        cost: 0
                    }]
                ))
            );
        }
        // A second next hop leaves no room for 104 bytes beside it: the new entry keeps the
        // prefix on the heap, and the entry after the hop goes again holds it inline.
        fib.add_nexthop(&fits, 9, 5).unwrap();
        assert!(!stored_inline(&fits));
        let hops = vec![NextHop { face: 2, cost: 0 }, NextHop { face: 9, cost: 5 }];
        assert_eq!(lpm(&fib, &fits, true).0, Some((fits.clone(), hops)));
        assert_eq!(fib.remove_face(9), 1);
        assert!(stored_inline(&fits));
        check_invariants(&fib);
        // A prefix of the long one is a different entry.
        assert_eq!(lpm(&fib, &deep.prefix(2), true).0, None);
        // At most MAX_NEXTHOPS next hops; updating one of them is still fine.
        for face in 2..=MAX_NEXTHOPS as u32 {
            fib.add_nexthop(&deep, face + 10, face).unwrap();
        }
        assert_eq!(
            fib.add_nexthop(&deep, 99, 0),
            Err(FibError::TooManyNextHops)
        );
        fib.add_nexthop(&deep, 4, 50).unwrap();
        let (e, _) = lpm(&fib, &deep, true);
        let hops = e.unwrap().1;
        assert_eq!(hops.len(), MAX_NEXTHOPS);
        assert_eq!(hops.last(), Some(&NextHop { face: 4, cost: 50 }));
        assert_eq!(fib.remove_face(4), 1);
        check_invariants(&fib);
        assert_eq!(fib.entries().len(), 4);
    }

    #[test]
    fn retired_slots_are_recycled_after_a_grace_period() {
        // 4 entries, 256 spare slots: thousands of updates only work if slots come back.
        let fib = Fib::new(KEY, 4, 1);
        let p = n("/a/b");
        for round in 0..3000u32 {
            fib.add_nexthop(&p, 1, round).unwrap();
            if round % 3 == 0 {
                assert!(fib.remove_nexthop(&p, 1));
            }
        }
        check_invariants(&fib);
        assert_eq!(fib.len(), 2);
        assert!(fib.lock().fresh as usize <= fib.arena.len());
        // While this thread is pinned nothing comes back: updates fail once the spare slots are
        // used up, and work again after unpinning.
        let guard = epoch::pin();
        let err = (0..1000u32).find_map(|c| fib.add_nexthop(&p, 1, c).err());
        assert_eq!(err, Some(FibError::Full));
        check_invariants(&fib);
        drop(guard);
        fib.add_nexthop(&p, 1, 7).unwrap();
        assert_eq!(fib.entries(), vec![(p, vec![NextHop { face: 1, cost: 7 }])]);
    }
}
