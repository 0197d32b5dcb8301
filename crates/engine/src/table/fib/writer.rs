//! The writer: updates published by RCU, virtual entries and `md`, changes of M.

use core::sync::atomic::Ordering;
use std::collections::HashMap;
use std::sync::mpsc::Receiver;
use std::sync::MutexGuard;

use crossbeam_epoch as epoch;
use wire::Name;

use super::{
    value_of, wait_grace_period, Fib, FibEntry, FibError, NextHop, NextHops, MAX_NEXTHOPS,
};
use crate::hash::{name_hash, MAX_PREFIX_STATES};

/// A prefix kept by the writer for listing, as its Name TLV: one allocation of ~50 bytes
/// instead of an owned [`Name`]'s one per component (16M routes: ~1 GB instead of ~4.5 GB).
#[derive(Debug, Clone)]
pub(super) struct StoredName(Box<[u8]>);

impl StoredName {
    pub(super) fn new(name: &Name) -> Self {
        StoredName(name.to_wire().into_boxed_slice())
    }

    pub(super) fn name(&self) -> Name {
        // Encoded by `new` from a valid name, so it decodes (limits are the defaults, which a
        // FIB prefix of at most MAX_PREFIX_STATES components always meets).
        Name::decode(&self.0).unwrap_or_default()
    }
}

/// Depth histogram of the real prefixes below one prefix: (depth, count) pairs with non-zero
/// counts. Most prefixes have one or two depths below them, so this stays inline (24 bytes)
/// where a dense array over all depths would take 132 bytes for each of millions of prefixes.
#[derive(Debug, Clone, Default)]
pub(super) struct Hist(smallvec::SmallVec<[(u8, u32); 2]>);

impl Hist {
    pub(super) fn add(&mut self, depth: usize) {
        match self.0.iter_mut().find(|(d, _)| usize::from(*d) == depth) {
            Some((_, c)) => *c += 1,
            None => self.0.push((depth as u8, 1)),
        }
    }

    pub(super) fn sub(&mut self, depth: usize) {
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
pub(super) enum Real {
    /// Keep whatever the current entry has.
    Keep,
    /// The prefix is real with these next hops (empty = not real).
    Set(NextHops),
}

/// What the writer needs of a published entry, copied out of the arena.
#[derive(Clone, Copy)]
pub(super) struct Current {
    pub(super) slot: u32,
    pub(super) md: u8,
    pub(super) is_virtual: bool,
    pub(super) nexthops: NextHops,
}

/// Writer-only state, behind the writer mutex.
pub(super) struct Writer {
    /// Free slots that have been used before (retired, past their grace period).
    pub(super) recycled: Vec<u32>,
    /// Slots from here to the end of the arena have never been used.
    pub(super) fresh: u32,
    /// Slots whose grace period has passed, sent by deferred functions.
    pub(super) retired: Receiver<u32>,
    /// The prefix of every published entry, by slot (`None` for free and retiring slots).
    pub(super) names: Vec<Option<StoredName>>,
    /// Depths at which virtual entries and `md` are maintained: the published M, plus, during a
    /// change of M (or if a grace period could not be observed), the previous one(s).
    pub(super) active: Vec<usize>,
    /// For each active depth d: d-component prefix → depth histogram of the real prefixes at
    /// depth ≥ d below it (itself included).
    pub(super) below: HashMap<usize, HashMap<Name, Hist>>,
    /// Number of real prefixes by depth (for the most-likely M heuristic and longest-first).
    pub(super) real_depths: [usize; MAX_PREFIX_STATES + 1],
}

impl Writer {
    /// The writer of an empty FIB with M = `m`; retired slots arrive on `retired`.
    pub(super) fn new(retired: Receiver<u32>, m: usize) -> Self {
        Writer {
            recycled: Vec::new(),
            fresh: 0,
            retired,
            names: Vec::new(),
            active: vec![m],
            below: HashMap::from([(m, HashMap::new())]),
            real_depths: [0; MAX_PREFIX_STATES + 1],
        }
    }
}

impl Fib {
    pub(super) fn lock(&self) -> MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The published entry in `slot`, read by the writer (the `&Writer` shows the lock is held).
    pub(super) fn published<'a>(&'a self, _w: &'a Writer, slot: u32) -> Option<&'a FibEntry> {
        // SAFETY: the caller holds the writer mutex for `'a` (it borrows the `Writer`) and found
        // `slot` published (in the index or in `names`); only this writer frees slots, and it
        // cannot do so while `_w` is borrowed.
        unsafe { self.arena.get(slot) }
    }

    /// The entry for exactly this prefix, copied out.
    pub(super) fn find_exact(&self, w: &Writer, hash: u64, value: &[u8]) -> Option<Current> {
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
    pub(super) fn drain_retired(w: &mut Writer) {
        while let Ok(slot) = w.retired.try_recv() {
            w.recycled.push(slot);
        }
    }

    /// Free slots available without waiting.
    pub(super) fn available(&self, w: &Writer) -> usize {
        w.recycled.len() + (self.arena.len() - w.fresh as usize)
    }

    /// Makes sure `n` free slots are available, waiting for a grace period if needed.
    pub(super) fn reserve(&self, w: &mut Writer, n: usize) -> Result<(), FibError> {
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
    pub(super) fn alloc(&self, w: &mut Writer) -> Result<u32, FibError> {
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
    pub(super) fn stage(
        &self,
        w: &mut Writer,
        entry: FibEntry,
        name: Name,
    ) -> Result<u32, FibError> {
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
    pub(super) fn unstage(w: &mut Writer, slot: u32) {
        w.names[slot as usize] = None;
        w.recycled.push(slot);
    }

    /// Hands an unpublished slot to the collector: it comes back to the free list once every
    /// reader that may have found it has unpinned.
    pub(super) fn retire(&self, w: &mut Writer, slot: u32) {
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
    pub(super) fn sync(&self, w: &mut Writer, name: &Name, real: Real) -> Result<(), FibError> {
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

    pub(super) fn count(&self, is_virtual: bool, n: usize) {
        let c = if is_virtual { &self.virt } else { &self.real };
        c.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn uncount(&self, is_virtual: bool) {
        let c = if is_virtual { &self.virt } else { &self.real };
        c.fetch_sub(1, Ordering::Relaxed);
    }

    pub(super) fn hist_add(w: &mut Writer, d: usize, prefix: &Name, depth: usize) {
        let h = w
            .below
            .entry(d)
            .or_default()
            .entry(prefix.clone())
            .or_default();
        h.add(depth);
    }

    pub(super) fn hist_sub(w: &mut Writer, d: usize, prefix: &Name, depth: usize) {
        if let Some(map) = w.below.get_mut(&d) {
            if let Some(h) = map.get_mut(prefix) {
                h.sub(depth);
                if hist_max(h).is_none() {
                    map.remove(prefix);
                }
            }
        }
    }

    pub(super) fn refresh_depth_summary(&self, w: &Writer) {
        let max = w.real_depths.iter().rposition(|&c| c != 0).unwrap_or(0);
        self.max_real_depth.store(max, Ordering::Release);
        self.has_root
            .store(w.real_depths[0] != 0, Ordering::Release);
    }

    /// Sets the real next hops of `name` (empty = not a real prefix), maintaining the virtual
    /// entries and `md` of every active depth.
    pub(super) fn set_real(
        &self,
        w: &mut Writer,
        name: &Name,
        nexthops: NextHops,
    ) -> Result<(), FibError> {
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
    pub(super) fn unregister(&self, w: &mut Writer, name: &Name, depths: &[usize]) {
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
        let added = match nh.iter_mut().find(|n| n.face == face) {
            Some(n) => {
                n.cost = cost;
                false
            }
            None if full => return Err(FibError::TooManyNextHops),
            None => {
                nh.push(NextHop { face, cost });
                true
            }
        };
        nh.sort_by_key(|n| (n.cost, n.face));
        self.set_real(&mut w, name, NextHops::new(&nh))?;
        if added {
            let n = self.additions.load(Ordering::Relaxed) + 1;
            self.log_addition(n, hash, face);
            self.additions.store(n, Ordering::Release);
        }
        Ok(())
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
    pub(super) fn remove_face_from(
        &self,
        w: &mut Writer,
        name: &Name,
        nh: &NextHops,
        face: u32,
    ) -> bool {
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

    /// The M of So et al.'s most-likely heuristic: the depth (≥ 1) with the most real prefixes
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

    /// Changes M (clamped to `1..=MAX_PREFIX_STATES`) without stopping readers, in So et al.'s
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
    pub(super) fn activate(&self, w: &mut Writer, d: usize) -> Result<(), FibError> {
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
