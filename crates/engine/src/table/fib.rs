//! The FIB: a shared, read-mostly hash table with the 2-stage longest-prefix match of seed 002
//! (§2.3, Algorithm 1, Table 2).
//!
//! # Structure
//! Every FIB prefix is one immutable [`FibEntry`] in a fixed-capacity slot array, found through
//! a [`HashIndex`] (64-bit prefix hash → slot). A lookup compares the full 64-bit hash stored in
//! the entry, then the name bytes. Besides the real prefixes, the table holds *virtual* entries at
//! depth M: when a real prefix deeper than M is added, its M-component prefix gets an entry (a
//! virtual one if that prefix is not itself in the FIB) whose `md` records the maximum depth of
//! the real prefixes below it. The first stage of a lookup starts at depth min(n, M) and walks
//! towards the root; a hit at depth M whose `md` is deeper restarts at min(n, md) (the second
//! stage), and falls back to the depth-M entry (or below it) if nothing deeper matches. The probe
//! count is bounded by the FIB, not by the Interest: a long garbage name costs at most M probes.
//!
//! # Concurrency
//! Forwarding workers read the FIB without locks. Entries are never modified in place: an update
//! builds a new entry and swaps it into its slot (copy-on-write), and the old one is reclaimed
//! through `crossbeam_epoch` once no reader can hold it. Readers pass a guard from
//! [`crossbeam_epoch::pin`] (workers pin once per batch) and see either the old or the new entry.
//! Writers (the management thread) are serialised by an internal mutex that readers never touch.
//!
//! Updates are ordered so that a concurrent lookup never loses an unrelated route: the virtual
//! entry and `md` a new deep prefix needs are published before the prefix itself, and lowered
//! only after it is gone. Changing M follows the seed's safe order ([`Fib::set_m`]).

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crossbeam_epoch::{self as epoch, Atomic, Collector, Guard, Owned, Shared};
use wire::{Name, NameView};

use crate::hash::{name_hash, HashKey, PrefixHashes, MAX_PREFIX_STATES};
use crate::table::index::HashIndex;

/// One next hop of a FIB entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NextHop {
    /// Outgoing face.
    pub face: u32,
    /// Routing cost (lower is better).
    pub cost: u32,
}

/// One FIB entry, immutable once published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FibEntry {
    /// The prefix.
    pub name: Name,
    /// The prefix's components back to back (TLV encoded), as in `&name.value()[..prefix_end]`
    /// of a matching Interest name.
    pub value: Vec<u8>,
    /// Keyed hash of the prefix ([`crate::hash::name_hash`]).
    pub hash: u64,
    /// Number of components of the prefix.
    pub depth: u8,
    /// Maximum depth of the real prefixes under this prefix (itself included if real). Kept
    /// exact for entries at depth M (the only ones a lookup consults it on); equal to `depth`
    /// elsewhere.
    pub md: u8,
    /// True for an entry that exists only to carry `md` at depth M (no next hops).
    pub is_virtual: bool,
    /// Next hops, sorted by cost (then face). Empty for a virtual entry.
    pub nexthops: Vec<NextHop>,
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
    /// Every entry slot is in use (real and virtual entries share the capacity).
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
            FibError::Full => f.write_str("FIB is full"),
            FibError::IndexFull => f.write_str("FIB hash index overflow pool exhausted"),
        }
    }
}

impl std::error::Error for FibError {}

/// Depth histogram of the real prefixes below one prefix at an active M depth.
type Hist = [u32; MAX_PREFIX_STATES + 1];

fn hist_max(h: &Hist) -> Option<usize> {
    h.iter().rposition(|&c| c != 0)
}

/// What [`Fib::sync`] should do with a prefix's real next hops.
enum Real {
    /// Keep whatever the current entry has.
    Keep,
    /// The prefix is real with these next hops (empty = not real).
    Set(Vec<NextHop>),
}

/// Writer-only state, behind the writer mutex.
struct Writer {
    /// Free entry slots.
    free: Vec<u32>,
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
    slots: Box<[Atomic<FibEntry>]>,
    index: HashIndex,
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
            .field("capacity", &self.slots.len())
            .field("m", &self.m())
            .field("real", &self.real_len())
            .field("virtual", &self.virtual_len())
            .finish()
    }
}

/// Reads a published entry.
#[inline(always)]
fn deref<'g>(p: Shared<'g, FibEntry>) -> Option<&'g FibEntry> {
    // SAFETY: every non-null pointer stored in a slot comes from `Owned::new` and is only freed
    // through `Guard::defer_destroy` after it has been unlinked from its slot. `p` was loaded
    // under a guard of the default collector (checked by the callers), so the entry outlives
    // `'g`. Entries are never mutated after publication, so a shared reference is sound.
    unsafe { p.as_ref() }
}

/// Frees an unlinked entry once no reader can still hold it.
fn retire(guard: &Guard, p: Shared<'_, FibEntry>) {
    if !p.is_null() {
        // SAFETY: `p` has just been swapped out of its slot by the (single) writer, so no new
        // reader can reach it; readers that loaded it hold a pinned guard of the same (default)
        // collector, which delays destruction until they unpin. It is retired exactly once.
        unsafe { guard.defer_destroy(p) };
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
    /// `1..=MAX_PREFIX_STATES`.
    pub fn new(key: HashKey, capacity: usize, m: usize) -> Self {
        let capacity = capacity.clamp(1, u32::MAX as usize - 1);
        let m = m.clamp(1, MAX_PREFIX_STATES);
        Fib {
            key,
            slots: (0..capacity).map(|_| Atomic::null()).collect(),
            index: HashIndex::with_capacity(capacity),
            m: AtomicUsize::new(m),
            max_real_depth: AtomicUsize::new(0),
            has_root: AtomicBool::new(false),
            real: AtomicUsize::new(0),
            virt: AtomicUsize::new(0),
            collector: epoch::default_collector(),
            writer: Mutex::new(Writer {
                free: (0..capacity as u32).rev().collect(),
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

    /// Slot capacity (real and virtual entries together).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    #[inline(always)]
    fn check_guard(&self, guard: &Guard) {
        // Entries are reclaimed through the default collector; a guard of another collector
        // (or `unprotected`) would not hold them alive.
        assert!(
            guard.collector() == Some(self.collector),
            "FIB lookups need a guard from crossbeam_epoch::pin()"
        );
    }

    #[inline(always)]
    fn load<'g>(&self, slot: u32, guard: &'g Guard) -> Option<&'g FibEntry> {
        deref(
            self.slots
                .get(slot as usize)?
                .load(Ordering::Acquire, guard),
        )
    }

    /// One hash-table probe for the first `k` components of the Interest name.
    #[inline]
    fn probe<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        k: usize,
        guard: &'g Guard,
        stats: &mut LpmStats,
    ) -> Option<&'g FibEntry> {
        let hash = h.prefix(k)?;
        let end = h.prefix_end(k, name)?;
        let bytes = name.value().get(..end)?;
        stats.probes += 1;
        let mut found = None;
        self.index.find(hash, |slot| match self.load(slot, guard) {
            Some(e) if e.hash == hash && e.value[..] == *bytes => {
                found = Some(e);
                true
            }
            _ => false,
        });
        found
    }

    /// The `/` entry if the FIB has one (a default route), else no probe.
    #[inline]
    fn probe_root<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        stats: &mut LpmStats,
    ) -> Option<&'g FibEntry> {
        if self.has_root.load(Ordering::Acquire) {
            self.probe(name, h, 0, guard, stats)
                .filter(|e| !e.is_virtual)
        } else {
            None
        }
    }

    /// Real entries from depth `from` down to 1, then `/`.
    #[inline]
    fn descend<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        from: usize,
        guard: &'g Guard,
        stats: &mut LpmStats,
    ) -> Option<&'g FibEntry> {
        for k in (1..=from).rev() {
            if let Some(e) = self.probe(name, h, k, guard, stats) {
                if !e.is_virtual {
                    return Some(e);
                }
            }
        }
        self.probe_root(name, h, guard, stats)
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
        let m = self.m.load(Ordering::Acquire);
        let n = h.len();
        // Stage 1: from min(n, M) down to 1.
        for k in (1..=n.min(m)).rev() {
            let Some(e) = self.probe(name, h, k, guard, stats) else {
                continue;
            };
            let md = usize::from(e.md);
            if usize::from(e.depth) == m && md > m && n > m {
                // Stage 2: from min(n, MD) down to M + 1, then the stage-1 entry if real.
                for k2 in (m + 1..=n.min(md)).rev() {
                    if let Some(e2) = self.probe(name, h, k2, guard, stats) {
                        if !e2.is_virtual {
                            return Some(e2);
                        }
                    }
                }
                if !e.is_virtual {
                    return Some(e);
                }
                return self.descend(name, h, m - 1, guard, stats);
            }
            if !e.is_virtual {
                return Some(e);
            }
        }
        self.probe_root(name, h, guard, stats)
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
        self.descend(name, h, start, guard, stats)
    }

    /// Prefetches the index bucket of the first probe of [`Fib::lookup`] (prefix min(n, M)).
    #[inline]
    pub fn prefetch(&self, h: &PrefixHashes) {
        let k = h.len().min(self.m.load(Ordering::Relaxed));
        if let Some(hash) = h.prefix(k) {
            self.index.prefetch(hash);
        }
    }

    // ---------------------------------------------------------------- writer side

    fn lock(&self) -> MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The entry for exactly this prefix, with its slot.
    fn find_exact<'g>(
        &self,
        hash: u64,
        value: &[u8],
        guard: &'g Guard,
    ) -> Option<(u32, &'g FibEntry)> {
        let mut found = None;
        self.index.find(hash, |slot| match self.load(slot, guard) {
            Some(e) if e.hash == hash && e.value[..] == *value => {
                found = Some((slot, e));
                true
            }
            _ => false,
        });
        found
    }

    /// Makes the entry of `name` what the writer state says it should be: present if real or if
    /// it is at an active depth with real prefixes below it; `md` from the histogram at active
    /// depths. Only publishing a new entry can fail.
    fn sync(&self, w: &mut Writer, name: &Name, real: Real, guard: &Guard) -> Result<(), FibError> {
        let depth = name.len();
        let hash = name_hash(self.key, name);
        let value = value_of(name);
        let cur = self.find_exact(hash, &value, guard);
        let nexthops = match real {
            Real::Set(v) => v,
            Real::Keep => cur.map(|(_, e)| e.nexthops.clone()).unwrap_or_default(),
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
            (Some((slot, old)), true) => {
                if old.md as usize == md && old.is_virtual == is_virtual && old.nexthops == nexthops
                {
                    return Ok(());
                }
                let entry = FibEntry {
                    name: name.clone(),
                    value,
                    hash,
                    depth: depth as u8,
                    md: md as u8,
                    is_virtual,
                    nexthops,
                };
                let prev =
                    self.slots[slot as usize].swap(Owned::new(entry), Ordering::AcqRel, guard);
                retire(guard, prev);
                if old.is_virtual != is_virtual {
                    self.count(is_virtual, 1);
                    self.uncount(old.is_virtual);
                }
                Ok(())
            }
            (Some((slot, old)), false) => {
                self.index.remove(hash, slot);
                let prev = self.slots[slot as usize].swap(Shared::null(), Ordering::AcqRel, guard);
                retire(guard, prev);
                w.free.push(slot);
                self.uncount(old.is_virtual);
                Ok(())
            }
            (None, true) => {
                let slot = w.free.pop().ok_or(FibError::Full)?;
                let entry = FibEntry {
                    name: name.clone(),
                    value,
                    hash,
                    depth: depth as u8,
                    md: md as u8,
                    is_virtual,
                    nexthops,
                };
                self.slots[slot as usize].store(Owned::new(entry), Ordering::Release);
                if self.index.insert(hash, slot).is_err() {
                    let prev =
                        self.slots[slot as usize].swap(Shared::null(), Ordering::AcqRel, guard);
                    retire(guard, prev);
                    w.free.push(slot);
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
            .or_insert([0; MAX_PREFIX_STATES + 1]);
        h[depth] += 1;
    }

    fn hist_sub(w: &mut Writer, d: usize, prefix: &Name, depth: usize) {
        if let Some(map) = w.below.get_mut(&d) {
            if let Some(h) = map.get_mut(prefix) {
                h[depth] = h[depth].saturating_sub(1);
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
    fn set_real(
        &self,
        w: &mut Writer,
        name: &Name,
        nexthops: Vec<NextHop>,
        guard: &Guard,
    ) -> Result<(), FibError> {
        let depth = name.len();
        let hash = name_hash(self.key, name);
        let value = value_of(name);
        let cur = self.find_exact(hash, &value, guard);
        let was_real = cur.is_some_and(|(_, e)| !e.is_virtual);
        let now_real = !nexthops.is_empty();
        let above: Vec<usize> = w.active.iter().copied().filter(|&d| d < depth).collect();
        let at_active = w.active.contains(&depth);
        match (was_real, now_real) {
            (false, false) => Ok(()),
            (true, true) => self.sync(w, name, Real::Set(nexthops), guard),
            (false, true) => {
                // Refuse up front rather than half-way when slots are short.
                let mut needed = usize::from(cur.is_none());
                for &d in &above {
                    let p = name.prefix(d);
                    let ph = name_hash(self.key, &p);
                    needed += usize::from(self.find_exact(ph, &value_of(&p), guard).is_none());
                }
                if w.free.len() < needed {
                    return Err(FibError::Full);
                }
                // Virtual entries and md first, so that readers never miss a route.
                for (i, &d) in above.iter().enumerate() {
                    let p = name.prefix(d);
                    Self::hist_add(w, d, &p, depth);
                    if let Err(e) = self.sync(w, &p, Real::Keep, guard) {
                        self.unregister(w, name, &above[..=i], guard);
                        return Err(e);
                    }
                }
                if at_active {
                    Self::hist_add(w, depth, name, depth);
                }
                if let Err(e) = self.sync(w, name, Real::Set(nexthops), guard) {
                    if at_active {
                        Self::hist_sub(w, depth, name, depth);
                    }
                    self.unregister(w, name, &above, guard);
                    return Err(e);
                }
                w.real_depths[depth] += 1;
                self.refresh_depth_summary(w);
                Ok(())
            }
            (true, false) => {
                // The prefix goes first, then the md and virtual entries it needed.
                if at_active {
                    Self::hist_sub(w, depth, name, depth);
                }
                let r = self.sync(w, name, Real::Set(Vec::new()), guard);
                debug_assert!(r.is_ok());
                self.unregister(w, name, &above, guard);
                w.real_depths[depth] -= 1;
                self.refresh_depth_summary(w);
                Ok(())
            }
        }
    }

    /// Removes the real prefix `name` from the histograms of `depths` and resyncs those
    /// prefixes (lowering md, removing virtual entries: never needs a new slot).
    fn unregister(&self, w: &mut Writer, name: &Name, depths: &[usize], guard: &Guard) {
        for &d in depths.iter().rev() {
            let p = name.prefix(d);
            Self::hist_sub(w, d, &p, name.len());
            let r = self.sync(w, &p, Real::Keep, guard);
            debug_assert!(r.is_ok());
        }
    }

    /// Adds (or updates the cost of) next hop `face` on prefix `name`, creating the prefix if
    /// needed.
    pub fn add_nexthop(&self, name: &Name, face: u32, cost: u32) -> Result<(), FibError> {
        if name.len() > MAX_PREFIX_STATES {
            return Err(FibError::TooDeep { depth: name.len() });
        }
        let mut w = self.lock();
        let guard = epoch::pin();
        let hash = name_hash(self.key, name);
        let mut nh = self
            .find_exact(hash, &value_of(name), &guard)
            .map(|(_, e)| e.nexthops.clone())
            .unwrap_or_default();
        match nh.iter_mut().find(|n| n.face == face) {
            Some(n) => n.cost = cost,
            None => nh.push(NextHop { face, cost }),
        }
        nh.sort_by_key(|n| (n.cost, n.face));
        self.set_real(&mut w, name, nh, &guard)
    }

    /// Removes next hop `face` from prefix `name`; a prefix left without next hops is removed.
    /// Returns whether the next hop was there.
    pub fn remove_nexthop(&self, name: &Name, face: u32) -> bool {
        if name.len() > MAX_PREFIX_STATES {
            return false;
        }
        let mut w = self.lock();
        let guard = epoch::pin();
        let hash = name_hash(self.key, name);
        let Some((_, e)) = self.find_exact(hash, &value_of(name), &guard) else {
            return false;
        };
        if !e.nexthops.iter().any(|n| n.face == face) {
            return false;
        }
        let nh: Vec<NextHop> = e
            .nexthops
            .iter()
            .copied()
            .filter(|n| n.face != face)
            .collect();
        let r = self.set_real(&mut w, name, nh, &guard);
        debug_assert!(r.is_ok(), "removing a next hop never needs a slot");
        true
    }

    /// Removes `face` from every prefix (the face went down). Returns the number of prefixes it
    /// was removed from.
    pub fn remove_face(&self, face: u32) -> usize {
        let mut w = self.lock();
        let guard = epoch::pin();
        let affected: Vec<(Name, Vec<NextHop>)> = self
            .slots
            .iter()
            .filter_map(|s| deref(s.load(Ordering::Acquire, &guard)))
            .filter(|e| !e.is_virtual && e.nexthops.iter().any(|n| n.face == face))
            .map(|e| {
                let nh = e.nexthops.iter().copied().filter(|n| n.face != face);
                (e.name.clone(), nh.collect())
            })
            .collect();
        for (name, nh) in &affected {
            let r = self.set_real(&mut w, name, nh.clone(), &guard);
            debug_assert!(r.is_ok());
        }
        affected.len()
    }

    /// The real prefixes and their next hops, sorted by name (for status datasets).
    pub fn entries(&self) -> Vec<(Name, Vec<NextHop>)> {
        let guard = epoch::pin();
        let mut v: Vec<(Name, Vec<NextHop>)> = self
            .slots
            .iter()
            .filter_map(|s| deref(s.load(Ordering::Acquire, &guard)))
            .filter(|e| !e.is_virtual)
            .map(|e| (e.name.clone(), e.nexthops.clone()))
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
        let guard = epoch::pin();
        w.active.retain(|&d| d == m);
        for d in stale {
            let names: Vec<Name> = w.below.remove(&d).unwrap_or_default().into_keys().collect();
            for p in &names {
                let r = self.sync(&mut w, p, Real::Keep, &guard);
                debug_assert!(r.is_ok());
            }
        }
        Ok(())
    }

    /// Starts maintaining virtual entries and md at depth `d`.
    fn activate(&self, w: &mut Writer, d: usize) -> Result<(), FibError> {
        let guard = epoch::pin();
        let mut map: HashMap<Name, Hist> = HashMap::new();
        for e in self
            .slots
            .iter()
            .filter_map(|s| deref(s.load(Ordering::Acquire, &guard)))
            .filter(|e| !e.is_virtual && usize::from(e.depth) >= d)
        {
            map.entry(e.name.prefix(d))
                .or_insert([0; MAX_PREFIX_STATES + 1])[usize::from(e.depth)] += 1;
        }
        let names: Vec<Name> = map.keys().cloned().collect();
        let needed = names
            .iter()
            .filter(|p| {
                let h = name_hash(self.key, p);
                self.find_exact(h, &value_of(p), &guard).is_none()
            })
            .count();
        if needed > w.free.len() {
            return Err(FibError::Full);
        }
        w.active.push(d);
        w.below.insert(d, map);
        for p in &names {
            if let Err(e) = self.sync(w, p, Real::Keep, &guard) {
                w.active.retain(|&x| x != d);
                w.below.remove(&d);
                for p in &names {
                    let r = self.sync(w, p, Real::Keep, &guard);
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
        // entries go through the collector rather than being freed here.
        let guard = epoch::pin();
        for s in self.slots.iter() {
            retire(&guard, s.swap(Shared::null(), Ordering::AcqRel, &guard));
        }
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
        fib.prefetch(&h);
        let e = if two_stage {
            fib.lookup(&v, &h, &guard, &mut st)
        } else {
            fib.lookup_longest_first(&v, &h, &guard, &mut st)
        };
        assert_eq!(st.lookups, 1);
        if let Some(e) = e {
            assert!(!e.is_virtual);
            assert_eq!(e.hash, name_hash(KEY, &e.name));
        }
        (e.map(|e| (e.name.clone(), e.nexthops.clone())), st.probes)
    }

    fn matched(fib: &Fib, uri: &str, two_stage: bool) -> (Option<Name>, u64) {
        let (e, p) = lpm(fib, &n(uri), two_stage);
        (e.map(|(name, _)| name), p)
    }

    /// The invariants of the virtual entries at M, checked on the table itself.
    fn check_invariants(fib: &Fib) {
        let guard = epoch::pin();
        let m = fib.m();
        let all: Vec<&FibEntry> = fib
            .slots
            .iter()
            .filter_map(|s| deref(s.load(Ordering::Acquire, &guard)))
            .collect();
        let real: Vec<&FibEntry> = all.iter().copied().filter(|e| !e.is_virtual).collect();
        assert_eq!(fib.real_len(), real.len());
        assert_eq!(fib.virtual_len(), all.len() - real.len());
        assert_eq!(fib.index.len(), all.len());
        for e in &all {
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
            let guard = epoch::pin();
            let h = name_hash(KEY, &n("/a/b/c"));
            let (_, v) = fib.find_exact(h, &value_of(&n("/a/b/c")), &guard).unwrap();
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

    #[test]
    fn readers_never_lose_stable_routes_during_churn() {
        use std::sync::atomic::AtomicBool;
        let fib = Arc::new(Fib::new(KEY, 4096, 3));
        // Stable routes at depths 2 and 4, never touched by the writer.
        let mut cases: Vec<(Name, Name)> = Vec::new(); // (interest, expected LPM)
        for i in 0..16 {
            let s = n(&format!("/s/{i}"));
            fib.add_nexthop(&s, 1, 0).unwrap();
            cases.push((n(&format!("/s/{i}/x/r/w")), s.clone()));
            cases.push((n(&format!("/s/{i}/q")), s.clone()));
            if i % 2 == 0 {
                let deep = n(&format!("/s/{i}/q/r"));
                fib.add_nexthop(&deep, 2, 0).unwrap();
                cases.push((n(&format!("/s/{i}/q/r/w/v/u")), deep.clone()));
                cases.push((deep.clone(), deep));
            } else {
                cases.push((n(&format!("/s/{i}/q/r/w/v/u")), s.clone()));
            }
        }
        let done = Arc::new(AtomicBool::new(false));
        let reader = {
            let fib = Arc::clone(&fib);
            let done = Arc::clone(&done);
            let prepared: Vec<(Vec<u8>, Name)> = cases
                .iter()
                .map(|(i, e)| (i.to_wire(), e.clone()))
                .collect();
            std::thread::spawn(move || {
                let mut batches = 0u64;
                let mut st = LpmStats::default();
                while !done.load(Ordering::Acquire) || batches < 50 {
                    let guard = epoch::pin();
                    for (w, want) in &prepared {
                        let v = NameView::decode(w, &Limits::default()).unwrap();
                        let h = PrefixHashes::new(KEY, &v);
                        let got = fib.lookup(&v, &h, &guard, &mut st).map(|e| &e.name);
                        assert_eq!(got, Some(want), "2-stage lost a route (M={})", fib.m());
                        let got = fib
                            .lookup_longest_first(&v, &h, &guard, &mut st)
                            .map(|e| &e.name);
                        assert_eq!(got, Some(want), "longest-first lost a route");
                    }
                    drop(guard);
                    batches += 1;
                    std::thread::yield_now();
                }
                batches
            })
        };
        // Churn: prefixes that share M-prefixes with the stable ones (changing md and virtual
        // entries under them) without ever being a longer match for the readers' names.
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
            if round % 100 == 0 {
                fib.set_m(1 + (round as usize / 100) % 5).unwrap();
            }
        }
        done.store(true, Ordering::Release);
        let batches = reader.join().expect("reader panicked");
        assert!(batches >= 50);
        check_invariants(&fib);
    }
}
