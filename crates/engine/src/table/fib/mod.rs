//! The FIB: a shared, read-mostly hash table with the 2-stage longest-prefix match of So,
//! Narayanan and Oran, "Named Data Networking on a Router: Fast and DoS-resistant Forwarding with
//! Hash Tables" (ANCS 2013)
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
//! only after it is gone. Changing M follows the paper's safe order ([`Fib::set_m`]).

mod arena;
mod entry;
mod lookup;
#[cfg(test)]
mod tests;
mod writer;

use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

use crossbeam_epoch::{self as epoch, Collector};
use wire::Name;

use crate::hash::{HashKey, MAX_PREFIX_STATES};
use crate::table::index::HashIndex;

use arena::Arena;
pub use entry::{FibEntry, NextHop, NextHops, INLINE_PREFIX, MAX_NEXTHOPS};
pub use lookup::FibCursor;
use writer::Writer;

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

/// How many of the latest next-hop additions the FIB remembers ([`Fib::addition`]).
pub const ADDITION_LOG: usize = 64;

/// One logged next-hop addition: its number (0 while written), prefix hash and face.
#[derive(Debug, Default)]
struct LoggedAddition {
    n: AtomicU64,
    hash: AtomicU64,
    face: AtomicU64,
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
    /// Next hops added so far ([`Fib::nexthop_additions`]).
    additions: AtomicU64,
    /// The last [`ADDITION_LOG`] additions ([`Fib::addition`]).
    log: [LoggedAddition; ADDITION_LOG],
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
pub(super) fn value_of(name: &Name) -> Vec<u8> {
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
            additions: AtomicU64::new(0),
            log: core::array::from_fn(|_| LoggedAddition::default()),
            collector: epoch::default_collector(),
            writer: Mutex::new(Writer::new(retired, m)),
        }
    }

    /// How many next hops were added to prefixes so far (a face new to its prefix; a cost
    /// update is none): an engine that sees it change looks for pending Interests the new next
    /// hops can take (multicast's afterNewNextHop).
    #[inline]
    pub fn nexthop_additions(&self) -> u64 {
        self.additions.load(Ordering::Acquire)
    }

    /// The next hop the `n`th addition added (`n` from 1, as [`Fib::nexthop_additions`]
    /// counts them): its prefix's hash ([`FibEntry::hash`]) and its face; `None` once
    /// [`ADDITION_LOG`] later additions have taken its place, or while one is writing it.
    /// Lets an engine tell a next hop added again (removed, then added while an Interest
    /// waited) from one that never left.
    pub fn addition(&self, n: u64) -> Option<(u64, u32)> {
        let slot = &self.log[(n % ADDITION_LOG as u64) as usize];
        // A sequence lock: the slot is the `n`th addition if its number reads `n` before and
        // after its fields.
        if slot.n.load(Ordering::Acquire) != n || n == 0 {
            return None;
        }
        let hash = slot.hash.load(Ordering::Relaxed);
        let face = slot.face.load(Ordering::Relaxed);
        core::sync::atomic::fence(Ordering::Acquire);
        (slot.n.load(Ordering::Relaxed) == n).then_some((hash, face as u32))
    }

    /// Logs the `n`th addition (the writer's lock held), before it is counted.
    fn log_addition(&self, n: u64, hash: u64, face: u32) {
        let slot = &self.log[(n % ADDITION_LOG as u64) as usize];
        slot.n.store(0, Ordering::Relaxed);
        core::sync::atomic::fence(Ordering::Release);
        slot.hash.store(hash, Ordering::Relaxed);
        slot.face.store(u64::from(face), Ordering::Relaxed);
        slot.n.store(n, Ordering::Release);
    }

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

    /// FIB expansion: virtual entries as a percentage of real ones (Table 5 of So et al.).
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
}

impl Drop for Fib {
    fn drop(&mut self) {
        // A reader may still hold an entry (its lifetime is the guard's, not the FIB's), so the
        // arena goes through the collector rather than being freed here.
        let arena = Arc::clone(&self.arena);
        epoch::pin().defer(move || drop(arena));
    }
}
