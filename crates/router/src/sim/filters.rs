//! The L2 filters in the simulation: each worker's counting Bloom filter in front of its CS
//! (the real [`store::CountingBloom`], shared by the engine's RAM tier through
//! [`store::BloomHandle`] and by the store), and, with two workers or more, each worker's
//! prefix filter read by the dispatchers ([`crate::dispatch::L2Prefixes`]).
//!
//! Checks: no counter of either filter ever went below zero (the filters count underflows);
//! no false negative: every chunk the store's index holds is in the CS filter (after every
//! step), and every name prefix of a chunk L2 would serve is in the worker's prefix filter;
//! and the counts agree: the CS filter's counters are those of a filter built afresh from
//! the names the RAM tier holds (recorded as the engine tells its filter) and the chunks the
//! index holds, and the prefix filter's those of one built from the prefixes the store's
//! prefix index has a list for (after every reopen and every read-back).
//!
//! The store keys a chunk by its name less a trailing segment component and by the segment
//! (0 for a name without one), so `/X` and `/X/seg=0` share a slot: the checker takes a held
//! slot under the one name its chunk carries ([`held`]), never under both.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use engine::fw::pipeline::CsFilter;
use engine::hash::{value_hash, HashKey};
use store::sim::{read_back, ReadBack, SimDisk};
use store::{BloomHandle, ChunkName, CountingBloom, L2File};
use wire::{DataView, Limits, Name};

/// Target false-positive rate of the simulation's filters: high, so that names share
/// counters and a count that is off shows.
const FP_RATE: f64 = 0.05;

/// The CS filter as the engine holds it: the real filter, and the multiset of names the RAM
/// tier put in it (the checker's record; a removal of a name it does not hold is noted).
#[derive(Debug)]
struct Recording {
    inner: BloomHandle,
    ram: Arc<Mutex<RamNames>>,
}

/// The names the RAM tier holds in the filter, by hash, and removals of names it did not.
#[derive(Debug, Default)]
struct RamNames {
    held: BTreeMap<u64, u32>,
    unmatched_removals: u64,
    /// Insertions and removals so far.
    changes: u64,
}

impl CsFilter for Recording {
    fn prefetch(&self, full_hash: u64) {
        self.inner.prefetch(full_hash);
    }

    fn may_hold(&self, full_hash: u64) -> bool {
        self.inner.may_hold(full_hash)
    }

    fn insert(&mut self, full_hash: u64) {
        self.inner.insert(full_hash);
        let mut r = lock(&self.ram);
        *r.held.entry(full_hash).or_default() += 1;
        r.changes += 1;
    }

    fn remove(&mut self, full_hash: u64) {
        self.inner.remove(full_hash);
        let mut r = lock(&self.ram);
        r.changes += 1;
        match r.held.get_mut(&full_hash) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                r.held.remove(&full_hash);
            }
            None => r.unmatched_removals += 1,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One worker's filters, as the simulation holds them.
pub(super) struct SimFilters {
    key: HashKey,
    /// The CS filter (RAM tier and L2).
    pub cs: Arc<CountingBloom>,
    /// The worker's prefix filter (with two workers or more).
    pub prefixes: Option<Arc<CountingBloom>>,
    ram: Arc<Mutex<RamNames>>,
}

impl SimFilters {
    /// A CS filter for `names` names (the worker's RAM CS and L2), and the prefix filter
    /// `prefixes` (made by [`prefix_filters`]).
    pub fn new(key: HashKey, names: u64, prefixes: Option<Arc<CountingBloom>>) -> Self {
        let cs = CountingBloom::with_fp_rate(names.max(1), FP_RATE)
            .expect("a small filter is always possible");
        SimFilters {
            key,
            cs: Arc::new(cs),
            prefixes,
            ram: Arc::default(),
        }
    }

    /// The filter for the engine's CS (the real one, recorded).
    pub fn engine_filter(&self) -> Box<dyn CsFilter> {
        Box::new(Recording {
            inner: BloomHandle(self.cs.clone()),
            ram: self.ram.clone(),
        })
    }

    /// The links the store keeps its names and prefixes in.
    pub fn links(&self) -> (Option<store::FilterLink>, Option<store::FilterLink>) {
        let link = |filter: &Arc<CountingBloom>| store::FilterLink {
            filter: filter.clone(),
            key: self.key,
        };
        (Some(link(&self.cs)), self.prefixes.as_ref().map(link))
    }

    /// Takes a held chunk's name out of the CS filter, behind the store's back (a test of
    /// the checker); true if the store held one.
    pub fn unfilter_one(&self, held: &Held<'_>) -> bool {
        let first = held.names.first();
        if let Some((_, v)) = first {
            self.cs.remove(value_hash(self.key, v));
        }
        first.is_some()
    }

    /// What the CS filter's content depends on, moved by every change of the RAM tier's
    /// names or of the store's index (a write completed, an extent evicted, a slot dropped,
    /// a fault): the checks of a worker whose mark has not moved are skipped.
    pub fn mark(&self, l2: &L2File) -> [u64; 6] {
        let c = l2.counters();
        [
            lock(&self.ram).changes,
            c.bytes_written,
            c.evictions,
            c.checksum_failures + c.name_mismatches,
            u64::from(l2.fault().is_some()),
            l2.stored_chunks(),
        ]
    }

    /// After every step: no underflow, and every chunk the index holds is in the CS filter
    /// (`held`: the chunks by name, [`held`]).
    pub fn check(&self, l2: &L2File, held: &Held<'_>) -> Result<(), String> {
        let under =
            self.cs.stats().underflows + self.prefixes.as_ref().map_or(0, |p| p.stats().underflows);
        if under > 0 {
            return Err(format!("a filter counter went below zero ({under} times)"));
        }
        let unmatched = lock(&self.ram).unmatched_removals;
        if unmatched > 0 {
            return Err(format!(
                "the RAM tier took {unmatched} names it did not hold out of the CS filter"
            ));
        }
        for (name, v) in &held.names {
            if !self.cs.may_contain(value_hash(self.key, v)) {
                return Err(format!(
                    "L2 holds {name} but the CS filter says it does not (a false negative)"
                ));
            }
        }
        // The counts are compared over `names` only: they must cover every chunk held.
        if l2.fault().is_none() && (held.slots as u64) < l2.stored_chunks() {
            return Err(format!(
                "L2 holds {} chunks, but only {} under a name the router was given",
                l2.stored_chunks(),
                held.slots
            ));
        }
        Ok(())
    }

    /// After a reopen and at every read-back: the filters' counts are those of filters built
    /// afresh from what the RAM tier and the store hold (`names` probed, `held` the chunks by
    /// name); `served`: the chunks L2 would serve, each of whose name prefixes must be in the
    /// prefix filter. The CS filter's counts are not compared while a held slot has no name
    /// ([`Held::unnamed`]).
    pub fn check_counts(
        &self,
        l2: &L2File,
        names: &[(Name, Vec<u8>)],
        held: &Held<'_>,
        served: &[&Name],
    ) -> Result<(), String> {
        let mut probes: Vec<u64> = Vec::new();
        let expect = CountingBloom::new(self.cs.geometry(), self.cs.capacity());
        for (&h, &n) in &lock(&self.ram).held {
            (0..n).for_each(|_| expect.insert(h));
            probes.push(h);
        }
        probes.extend(names.iter().map(|(_, v)| value_hash(self.key, v)));
        for (_, v) in &held.names {
            expect.insert(value_hash(self.key, v));
        }
        if self.cs.stats().saturated == 0 && held.unnamed == 0 {
            if let Some(&h) = probes
                .iter()
                .find(|&&h| self.cs.counts(h) != expect.counts(h))
            {
                return Err(format!(
                    "the CS filter counts {:?} for a name, the RAM CS and the index {:?}",
                    self.cs.counts(h),
                    expect.counts(h)
                ));
            }
        }
        let Some(pf) = &self.prefixes else {
            return Ok(());
        };
        let expect = CountingBloom::new(pf.geometry(), pf.capacity());
        let linked = store::sim::linked_prefixes(l2);
        // A store that a fault turned off keeps no prefix in the filter.
        if l2.fault().is_none() {
            linked.iter().for_each(|&h| expect.insert(h));
        }
        let mut probes = linked;
        for &name in served {
            for p in name_prefixes(name) {
                let h = value_hash(self.key, &p).max(1);
                if !pf.may_contain(h) {
                    return Err(format!(
                        "L2 serves {name} but the prefix filter has not its prefix {} (a \
                         false negative; in the store's prefix index: {})",
                        Name::decode(&[&[7, p.len() as u8][..], &p].concat())
                            .map_or_else(|_| "?".into(), |n| n.to_string()),
                        probes.contains(&h)
                    ));
                }
                probes.push(h);
            }
        }
        if pf.stats().saturated == 0 {
            if let Some(&h) = probes.iter().find(|&&h| pf.counts(h) != expect.counts(h)) {
                return Err(format!(
                    "the prefix filter counts {:?} for a prefix, the prefix index {:?}",
                    pf.counts(h),
                    expect.counts(h)
                ));
            }
        }
        Ok(())
    }
}

/// The name TLV values of a chunk name's prefixes the prefix index links: the
/// [`store::l2::PREFIX_LEVELS`] longest of its name without a trailing segment component (the
/// whole name when it has none), as the store splits it ([`ChunkName::parse`]).
fn name_prefixes(name: &Name) -> Vec<Vec<u8>> {
    let value = name.to_wire()[2..].to_vec();
    let segmented = ChunkName::parse(&value).is_some_and(|c| c.prefix.len() < value.len());
    let n = name.len() - usize::from(segmented);
    (n.saturating_sub(store::l2::PREFIX_LEVELS - 1).max(1)..=n)
        .map(|k| name.prefix(k).to_wire()[2..].to_vec())
        .collect()
}

/// A name and its name TLV value.
type NameValue = (Name, Vec<u8>);

/// The chunks a store holds, each under the name it was stored with.
#[derive(Debug, Default)]
pub(super) struct Held<'n> {
    /// One per held slot that a name accounts for: that name.
    pub names: Vec<&'n NameValue>,
    /// Held slots that some name maps to.
    pub slots: usize,
    /// Held slots that several names map to (`/X` and `/X/seg=0`) and whose chunk does not read
    /// back (its slot fails the store's checks), so which name it carries is unknown.
    pub unnamed: usize,
}

/// What `l2` holds, by name: each name of `names` maps to the slot the store would keep it in
/// ([`store::sim::held_slot`]); a slot only one name maps to holds that name (the router was
/// given every name a store holds; the per-step check reports a slot no name maps to), and a
/// slot several names map to holds the one its chunk carries (read back from `disk`). So a
/// chunk is counted once, under its own name.
pub(super) fn held<'n>(l2: &L2File, disk: &SimDisk, names: &'n [NameValue]) -> Held<'n> {
    let mut by_slot: BTreeMap<(u32, u32), Vec<&'n NameValue>> = BTreeMap::new();
    for n in names {
        if let Some(slot) = ChunkName::parse(&n.1).and_then(|c| store::sim::held_slot(l2, &c)) {
            by_slot.entry(slot).or_default().push(n);
        }
    }
    let mut held = Held {
        slots: by_slot.len(),
        ..Held::default()
    };
    for candidates in by_slot.into_values() {
        if let [only] = candidates[..] {
            held.names.push(only);
            continue;
        }
        let carried =
            ChunkName::parse(&candidates[0].1).and_then(|c| match read_back(l2, disk, &c) {
                ReadBack::Served(bytes) => DataView::decode(&bytes, &Limits::default())
                    .ok()
                    .and_then(|d| {
                        candidates
                            .iter()
                            .copied()
                            .find(|(_, v)| v[..] == *d.name().value())
                    }),
                ReadBack::NotHeld | ReadBack::Miss => None,
            });
        match carried {
            Some(n) => held.names.push(n),
            None => held.unnamed += 1,
        }
    }
    held
}

/// With two workers or more, one prefix filter per worker sized for its store's prefixes
/// ([`store::l2::PREFIX_LEVELS`] per extent), as the router makes them.
pub(super) fn prefix_filters(workers: usize, extents: u32) -> Option<Vec<Arc<CountingBloom>>> {
    if workers < 2 {
        return None;
    }
    let names = u64::from(extents.max(1)) * store::l2::PREFIX_LEVELS as u64;
    Some(
        (0..workers)
            .map(|_| {
                Arc::new(
                    CountingBloom::with_fp_rate(names, FP_RATE)
                        .expect("a small filter is always possible"),
                )
            })
            .collect(),
    )
}
