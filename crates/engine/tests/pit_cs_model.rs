//! Model-based property tests of the PIT+CS table and the dead-nonce list.
//!
//! Random operation sequences run against the real [`PitCs`] (driven the way the pipeline
//! drives it) and against a plain reference model built from `BTreeMap` and `VecDeque`, with the
//! same semantics: name entries that exist while they hold a PIT entry or a CS entry; up to four
//! PIT entries per name (CanBePrefix × MustBeFresh) with in- and out-records; a CS of direct
//! entries and CanBePrefix indirections, evicted in FIFO or LRU order; MustBeFresh lookups; the
//! implicit-digest lookup; Data matching (exact, CanBePrefix prefixes, implicit digest); and
//! expiry when time advances. After every step the whole observable state is compared: lookups,
//! counts, every name's PIT entries and records, cached bytes and the table's own invariants.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use engine::hash::{HashKey, PrefixHashes};
use engine::table::dead_nonce::{dead_nonce_key, DeadNonceList};
use engine::table::pit_cs::{CsMatch, CsPolicy, PitCs, PitCsConfig, TableFull, NONE};
use proptest::prelude::*;
use wire::{sha256, Component, Limits, Name, NameView};

const KEY: HashKey = HashKey::fixed(7, 11);

/// Base names (Data names), chosen so that several are prefixes of others; the last two are
/// longer than a name entry holds inline (one in the pool of long names, one in the pool of
/// whole-packet names), each a prefix of the next.
static BASE: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    let long = format!("/b/a/c/{}", "x".repeat(100));
    let huge = format!("{long}/{}", "y".repeat(700));
    ["/a", "/a/b", "/a/b/c", "/a/c", "/b", "/b/a/c"]
        .into_iter()
        .map(String::from)
        .chain([long, huge])
        .collect()
});
/// Data variants per base name.
const VARIANTS: usize = 2;

/// A name of the pool: base names first, then each base name + the digest of each variant.
struct NameInfo {
    name: Name,
    wire: Vec<u8>,
}

impl NameInfo {
    fn new(name: Name) -> Self {
        let wire = name.to_wire();
        NameInfo { name, wire }
    }

    fn view(&self) -> NameView<'_> {
        NameView::decode(&self.wire, &Limits::default()).unwrap()
    }

    fn value(&self) -> &[u8] {
        self.view().value()
    }

    fn hashes(&self) -> PrefixHashes {
        PrefixHashes::new(KEY, &self.view())
    }
}

/// A Data's bytes: of sizes spread over the CS's slot classes (so that a name's Data replaced by
/// its other variant may change class).
fn data_bytes(base: usize, variant: usize) -> Vec<u8> {
    let mut d = format!("data of {} #{variant}", BASE[base]).into_bytes();
    let filler = [0, 150, 700, 3_000, 8_700][(base + 3 * variant) % 5];
    d.resize(filler.max(d.len()), b'a' + (base % 26) as u8);
    d
}

fn pool() -> Vec<NameInfo> {
    let mut v: Vec<NameInfo> = BASE
        .iter()
        .map(|u| NameInfo::new(Name::from_uri(u).unwrap()))
        .collect();
    for (b, uri) in BASE.iter().enumerate() {
        for var in 0..VARIANTS {
            let d = sha256(&[&data_bytes(b, var)]);
            v.push(NameInfo::new(
                Name::from_uri(uri)
                    .unwrap()
                    .with(Component::implicit_digest(d)),
            ));
        }
    }
    v
}

// ------------------------------------------------------------------------------------- model

#[derive(Debug, Clone, PartialEq)]
enum MCs {
    None,
    Direct { data: Vec<u8>, fresh_until: u64 },
    Indirect { target: usize, incarnation: u64 },
}

#[derive(Debug, Clone, Default)]
struct MPit {
    in_records: Vec<(u32, [u8; 4], u64)>,
    out_records: Vec<(u32, [u8; 4])>,
    expiry: u64,
}

#[derive(Debug, Clone)]
struct MEntry {
    incarnation: u64,
    pits: BTreeMap<(bool, bool), MPit>,
    cs: MCs,
}

/// The reference model: name index → entry, and the CS replacement order.
#[derive(Debug)]
struct Model {
    config: PitCsConfig,
    entries: BTreeMap<usize, MEntry>,
    order: VecDeque<usize>,
    incarnations: u64,
    evictions: u64,
    /// Data evicted since the last drain (what the table's eviction log must hold).
    evicted: Vec<Vec<u8>>,
    hits: u64,
    misses: u64,
}

impl Model {
    fn new(config: PitCsConfig) -> Self {
        Model {
            config,
            entries: BTreeMap::new(),
            order: VecDeque::new(),
            incarnations: 0,
            evictions: 0,
            evicted: Vec::new(),
            hits: 0,
            misses: 0,
        }
    }

    fn pit_len(&self) -> usize {
        self.entries.values().map(|e| e.pits.len()).sum()
    }

    fn ensure(&mut self, n: usize) {
        if !self.entries.contains_key(&n) {
            self.incarnations += 1;
            self.entries.insert(
                n,
                MEntry {
                    incarnation: self.incarnations,
                    pits: BTreeMap::new(),
                    cs: MCs::None,
                },
            );
        }
    }

    fn release_if_empty(&mut self, n: usize) {
        if let Some(e) = self.entries.get(&n) {
            if e.pits.is_empty() && e.cs == MCs::None {
                self.entries.remove(&n);
            }
        }
    }

    fn evict_one(&mut self) {
        if let Some(n) = self.order.pop_front() {
            let old = std::mem::replace(&mut self.entries.get_mut(&n).unwrap().cs, MCs::None);
            if let MCs::Direct { data, .. } = old {
                self.evicted.push(data);
            }
            self.evictions += 1;
            self.release_if_empty(n);
        }
    }

    fn cs_insert(&mut self, n: usize, data: Vec<u8>, fresh_until: u64) {
        if self.config.cs_capacity == 0 {
            self.release_if_empty(n);
            return;
        }
        if self.entries[&n].cs != MCs::None {
            self.order.retain(|&x| x != n);
        } else if self.order.len() >= self.config.cs_capacity {
            self.evict_one();
        }
        self.entries.get_mut(&n).unwrap().cs = MCs::Direct { data, fresh_until };
        self.order.push_back(n);
    }

    fn is_direct(&self, n: usize) -> bool {
        self.entries
            .get(&n)
            .is_some_and(|e| matches!(e.cs, MCs::Direct { .. }))
    }

    fn cs_insert_indirect(&mut self, at: usize, target: usize) {
        if self.config.cs_capacity < 2 || at == target || self.entries[&at].cs != MCs::None {
            return;
        }
        if !self.is_direct(target) {
            return;
        }
        if self.order.len() >= self.config.cs_capacity {
            self.evict_one();
            if !self.is_direct(target) || !self.entries.contains_key(&at) {
                return;
            }
        }
        let incarnation = self.entries[&target].incarnation;
        self.entries.get_mut(&at).unwrap().cs = MCs::Indirect {
            target,
            incarnation,
        };
        self.order.push_back(at);
    }

    fn pit_remove(&mut self, n: usize, slot: (bool, bool)) -> Vec<[u8; 4]> {
        let pit = self
            .entries
            .get_mut(&n)
            .unwrap()
            .pits
            .remove(&slot)
            .unwrap();
        self.release_if_empty(n);
        pit.out_records.iter().map(|r| r.1).collect()
    }

    fn fresh_ok(&self, n: usize, mbf: bool, now: u64) -> bool {
        match &self.entries[&n].cs {
            MCs::Direct { fresh_until, .. } => !mbf || *fresh_until > now,
            _ => false,
        }
    }

    /// The CS lookup of the Interest name `n`: the entry whose Data answers it.
    fn cs_lookup(
        &mut self,
        names: &[NameInfo],
        n: usize,
        cbp: bool,
        mbf: bool,
        now: u64,
    ) -> Option<usize> {
        if self.order.is_empty() {
            self.misses += 1;
            return None;
        }
        let found = if n >= BASE.len() {
            // Implicit digest: the base name's Data, if its digest is the one asked for.
            let base = (n - BASE.len()) / VARIANTS;
            let digest = &names[n].name.components.last().unwrap().value;
            match self.entries.get(&base).map(|e| &e.cs) {
                Some(MCs::Direct { data, .. })
                    if sha256(&[data]).as_slice() == digest.as_slice()
                        && self.fresh_ok(base, mbf, now) =>
                {
                    Some(base)
                }
                _ => None,
            }
        } else {
            match self.entries.get(&n).map(|e| e.cs.clone()) {
                Some(MCs::Direct { .. }) => self.fresh_ok(n, mbf, now).then_some(n),
                Some(MCs::Indirect {
                    target,
                    incarnation,
                }) if cbp => {
                    let valid = self
                        .entries
                        .get(&target)
                        .is_some_and(|t| t.incarnation == incarnation)
                        && self.is_direct(target);
                    (valid && self.fresh_ok(target, mbf, now)).then_some(target)
                }
                _ => None,
            }
        };
        match found {
            Some(e) => {
                self.hits += 1;
                if self.config.cs_policy == CsPolicy::Lru {
                    self.order.retain(|&x| x != e);
                    self.order.push_back(e);
                }
            }
            None => self.misses += 1,
        }
        found
    }

    /// The PIT entries that Data `base`/`variant` satisfies: (name, slot, exact name).
    fn matching(
        &self,
        names: &[NameInfo],
        base: usize,
        variant: usize,
    ) -> BTreeSet<(usize, (bool, bool), bool)> {
        let data_name = &names[base].name;
        let digest_name = &names[BASE.len() + base * VARIANTS + variant].name;
        let mut out = BTreeSet::new();
        for (&n, e) in &self.entries {
            let name = &names[n].name;
            for &slot in e.pits.keys() {
                if name == data_name {
                    out.insert((n, slot, true));
                } else if (slot.0 && name.is_prefix_of(data_name)) || name == digest_name {
                    out.insert((n, slot, false));
                }
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------- operations

#[derive(Debug, Clone)]
enum Op {
    /// An Interest arrives: find or create its name and PIT entry, add the in-record.
    Interest {
        name: usize,
        cbp: bool,
        mbf: bool,
        face: u32,
        nonce: u8,
        lifetime: u64,
    },
    /// The pending Interest was sent upstream.
    OutRecord {
        name: usize,
        cbp: bool,
        mbf: bool,
        face: u32,
        nonce: u8,
    },
    /// A PIT entry is removed (rejected, Nacked).
    PitRemove { name: usize, cbp: bool, mbf: bool },
    /// Data is cached directly (e.g. from a slower tier).
    CsInsert {
        base: usize,
        variant: usize,
        freshness: u64,
    },
    /// Data arrives: satisfies the matching PIT entries and is cached, as the pipeline does.
    Data {
        base: usize,
        variant: usize,
        freshness: u64,
    },
    /// A CS lookup for an Interest.
    Lookup { name: usize, cbp: bool, mbf: bool },
    /// Time passes; expired PIT entries are removed.
    Advance { dt: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    let names = 0..BASE.len() * (1 + VARIANTS);
    let lifetime = prop::sample::select(vec![
        0u64, 1, 7, 8, 9, 100, 4000, 8191, 8192, 8193, 12_000, 20_000,
    ]);
    let dt = prop::sample::select(vec![0u64, 1, 7, 8, 100, 1000, 4000, 8192, 9000, 17_000]);
    let freshness = prop::sample::select(vec![0u64, 1, 50, 1000, 10_000]);
    prop_oneof![
        4 => (names.clone(), any::<bool>(), any::<bool>(), 1..4u32, 0..4u8, lifetime)
            .prop_map(|(name, cbp, mbf, face, nonce, lifetime)| Op::Interest { name, cbp, mbf, face, nonce, lifetime }),
        2 => (names.clone(), any::<bool>(), any::<bool>(), 1..6u32, 0..4u8)
            .prop_map(|(name, cbp, mbf, face, nonce)| Op::OutRecord { name, cbp, mbf, face, nonce }),
        1 => (names.clone(), any::<bool>(), any::<bool>())
            .prop_map(|(name, cbp, mbf)| Op::PitRemove { name, cbp, mbf }),
        1 => (0..BASE.len(), 0..VARIANTS, freshness.clone())
            .prop_map(|(base, variant, freshness)| Op::CsInsert { base, variant, freshness }),
        3 => (0..BASE.len(), 0..VARIANTS, freshness)
            .prop_map(|(base, variant, freshness)| Op::Data { base, variant, freshness }),
        3 => (names, any::<bool>(), any::<bool>())
            .prop_map(|(name, cbp, mbf)| Op::Lookup { name, cbp, mbf }),
        2 => dt.prop_map(|dt| Op::Advance { dt }),
    ]
}

fn config() -> impl Strategy<Value = PitCsConfig> {
    (1..7usize, 0..6usize, any::<bool>(), 1..4usize, 1..3usize).prop_map(
        |(pit_capacity, cs_capacity, lru, max_in_records, max_out_records)| PitCsConfig {
            pit_capacity,
            cs_capacity,
            cs_policy: if lru { CsPolicy::Lru } else { CsPolicy::Fifo },
            max_in_records,
            max_out_records,
        },
    )
}

// ------------------------------------------------------------------------------------- harness

struct Harness {
    names: Vec<NameInfo>,
    t: PitCs,
    m: Model,
    now: u64,
}

impl Harness {
    fn find(&self, n: usize) -> Option<u32> {
        let info = &self.names[n];
        self.t.find(info.hashes().full(), info.value())
    }

    fn name_of_entry(&self, e: u32) -> usize {
        let v = self.t.name_value(e);
        self.names
            .iter()
            .position(|n| n.value() == v)
            .expect("an entry for a name of the pool")
    }

    fn pit(&self, n: usize, cbp: bool, mbf: bool) -> Option<u32> {
        self.find(n).and_then(|e| self.t.pit_of(e, cbp, mbf))
    }

    /// The evicted Data the table logged since the last call equal the model's.
    fn check_evictions(&mut self) {
        let mut logged = Vec::new();
        self.t.drain_evicted(|d| logged.push(d.to_vec()));
        assert_eq!(logged, std::mem::take(&mut self.m.evicted));
    }

    fn apply(&mut self, op: &Op) {
        let now = self.now;
        match *op {
            Op::Interest {
                name,
                cbp,
                mbf,
                face,
                nonce,
                lifetime,
            } => {
                let info = &self.names[name];
                let h = info.hashes();
                let is_digest = name >= BASE.len();
                let nonce = [nonce, 0, 0, 1];
                let expiry = now + lifetime;
                let e = self
                    .t
                    .find_or_insert(h.full(), info.value(), h.len())
                    .expect("names are sized for PIT + CS");
                let full = self.m.pit_len() >= self.m.config.pit_capacity
                    && !self
                        .m
                        .entries
                        .get(&name)
                        .is_some_and(|x| x.pits.contains_key(&(cbp, mbf)));
                match self.t.pit_get_or_insert(e, cbp, mbf, is_digest) {
                    Err(err) => {
                        assert_eq!(err, TableFull::Pit);
                        assert!(full, "PIT refused below capacity");
                    }
                    Ok((p, is_new)) => {
                        assert!(!full, "PIT beyond capacity");
                        self.m.ensure(name);
                        let entry = self.m.entries.get_mut(&name).unwrap();
                        assert_eq!(is_new, !entry.pits.contains_key(&(cbp, mbf)));
                        let max = self.m.config.max_in_records;
                        let mp = entry.pits.entry((cbp, mbf)).or_default();
                        let added = if let Some(r) = mp.in_records.iter_mut().find(|r| r.0 == face)
                        {
                            r.1 = nonce;
                            r.2 = expiry;
                            true
                        } else if mp.in_records.len() < max {
                            mp.in_records.push((face, nonce, expiry));
                            true
                        } else {
                            false
                        };
                        if added {
                            mp.expiry = mp.in_records.iter().map(|r| r.2).max().unwrap();
                        }
                        assert_eq!(self.t.add_in_record(p, face, nonce, expiry, None), added);
                        if !added && is_new {
                            self.t.pit_remove(p, |_| {});
                            self.m.pit_remove(name, (cbp, mbf));
                        }
                    }
                }
            }
            Op::OutRecord {
                name,
                cbp,
                mbf,
                face,
                nonce,
            } => {
                let Some(p) = self.pit(name, cbp, mbf) else {
                    return;
                };
                let nonce = [nonce, 0, 0, 2];
                let max = self.m.config.max_out_records;
                let mp = self
                    .m
                    .entries
                    .get_mut(&name)
                    .unwrap()
                    .pits
                    .get_mut(&(cbp, mbf))
                    .unwrap();
                let added = if let Some(r) = mp.out_records.iter_mut().find(|r| r.0 == face) {
                    r.1 = nonce;
                    true
                } else if mp.out_records.len() < max {
                    mp.out_records.push((face, nonce));
                    true
                } else {
                    false
                };
                assert_eq!(self.t.add_out_record(p, face, nonce, now, now + 100), added);
            }
            Op::PitRemove { name, cbp, mbf } => {
                let Some(p) = self.pit(name, cbp, mbf) else {
                    return;
                };
                let mut nonces = Vec::new();
                self.t.pit_remove(p, |n| nonces.push(n));
                assert_eq!(nonces, self.m.pit_remove(name, (cbp, mbf)));
            }
            Op::CsInsert {
                base,
                variant,
                freshness,
            } => {
                let info = &self.names[base];
                let h = info.hashes();
                let data = data_bytes(base, variant);
                let e = self
                    .t
                    .find_or_insert(h.full(), info.value(), h.len())
                    .unwrap();
                self.t.cs_insert(e, &data, freshness, now);
                self.m.ensure(base);
                self.m.cs_insert(base, data, now + freshness);
            }
            Op::Data {
                base,
                variant,
                freshness,
            } => {
                let info = &self.names[base];
                let h = info.hashes();
                let data = data_bytes(base, variant);
                let mut pits = Vec::new();
                self.t
                    .matching_pits(&info.view(), &h, &data, |p, exact| pits.push((p, exact)));
                let got: BTreeSet<(usize, (bool, bool), bool)> = pits
                    .iter()
                    .map(|&(p, exact)| {
                        let pe = self.t.pit(p);
                        (
                            self.name_of_entry(pe.owner),
                            (pe.can_be_prefix, pe.must_be_fresh),
                            exact,
                        )
                    })
                    .collect();
                assert_eq!(got.len(), pits.len(), "a PIT entry matched twice");
                let want = self.m.matching(&self.names, base, variant);
                assert_eq!(got, want, "matching PIT entries");
                if pits.is_empty() {
                    return; // unsolicited: not cached
                }
                // As the pipeline: cache, point CanBePrefix names at the Data, satisfy.
                let e = self
                    .t
                    .find_or_insert(h.full(), info.value(), h.len())
                    .unwrap();
                self.t.cs_insert(e, &data, freshness, now);
                self.m.ensure(base);
                self.m.cs_insert(base, data, now + freshness);
                for &(p, exact) in &pits {
                    let pe = self.t.pit(p);
                    let (owner, cbp, mbf) = (pe.owner, pe.can_be_prefix, pe.must_be_fresh);
                    let n = self.name_of_entry(owner);
                    if !exact && cbp {
                        self.t.cs_insert_indirect(owner, e);
                        self.m.cs_insert_indirect(n, base);
                    }
                    let mut nonces = Vec::new();
                    self.t.pit_remove(p, |x| nonces.push(x));
                    assert_eq!(nonces, self.m.pit_remove(n, (cbp, mbf)));
                }
            }
            Op::Lookup { name, cbp, mbf } => {
                let info = &self.names[name];
                let h = info.hashes();
                let entry = self.find(name);
                let got = match self.t.cs_lookup(&info.view(), &h, entry, cbp, mbf, now) {
                    CsMatch::Hit(e) => {
                        let n = self.name_of_entry(e);
                        let data = self.t.data(e).expect("a hit has Data");
                        match &self.m.entries[&n].cs {
                            MCs::Direct { data: d, .. } => assert_eq!(d.as_slice(), data),
                            cs => panic!("hit on {cs:?}"),
                        }
                        Some(n)
                    }
                    CsMatch::Miss => None,
                };
                let want = self.m.cs_lookup(&self.names, name, cbp, mbf, now);
                assert_eq!(got, want, "lookup of {} cbp={cbp} mbf={mbf}", info.name);
            }
            Op::Advance { dt } => {
                self.now += dt;
                let now = self.now;
                let mut expired = Vec::new();
                self.t.expire(now, &mut expired);
                let mut got = BTreeSet::new();
                for &p in &expired {
                    let pe = self.t.pit(p);
                    got.insert((
                        self.name_of_entry(pe.owner),
                        (pe.can_be_prefix, pe.must_be_fresh),
                    ));
                }
                assert_eq!(got.len(), expired.len(), "an entry expired twice");
                let want: BTreeSet<(usize, (bool, bool))> = self
                    .m
                    .entries
                    .iter()
                    .flat_map(|(&n, e)| {
                        e.pits
                            .iter()
                            .filter(|(_, p)| p.expiry <= now)
                            .map(move |(&s, _)| (n, s))
                    })
                    .collect();
                assert_eq!(got, want, "expired at {now}");
                for &p in &expired {
                    self.t.pit_remove(p, |_| {});
                }
                for (n, s) in want {
                    self.m.pit_remove(n, s);
                }
            }
        }
    }

    /// Compares the whole observable state.
    fn compare(&self) {
        self.t.check_invariants().unwrap();
        assert_eq!(self.t.pit_len(), self.m.pit_len());
        assert_eq!(self.t.cs_len(), self.m.order.len());
        assert_eq!(self.t.names_len(), self.m.entries.len());
        assert!(self.t.pit_len() <= self.m.config.pit_capacity);
        assert!(self.t.cs_len() <= self.m.config.cs_capacity);
        let c = self.t.counters;
        assert_eq!(
            (c.cs_evictions, c.cs_hits, c.cs_misses),
            (self.m.evictions, self.m.hits, self.m.misses)
        );
        for n in 0..self.names.len() {
            let e = self.find(n);
            let me = self.m.entries.get(&n);
            assert_eq!(e.is_some(), me.is_some(), "entry of {}", self.names[n].name);
            let (Some(e), Some(me)) = (e, me) else {
                continue;
            };
            match &me.cs {
                MCs::Direct { data, .. } => assert_eq!(self.t.data(e), Some(data.as_slice())),
                _ => assert_eq!(self.t.data(e), None),
            }
            let slots: Vec<(bool, bool)> =
                [(false, false), (false, true), (true, false), (true, true)]
                    .into_iter()
                    .filter(|&(c, f)| self.t.pit_of(e, c, f).is_some())
                    .collect();
            assert_eq!(slots, me.pits.keys().copied().collect::<Vec<_>>());
            for (&(cbp, mbf), mp) in &me.pits {
                let p = self.t.pit_of(e, cbp, mbf).unwrap();
                let pe = self.t.pit(p);
                assert_eq!(pe.owner, e);
                assert_eq!(pe.expiry_ms, mp.expiry);
                let ins: Vec<(u32, [u8; 4], u64)> = pe
                    .in_records
                    .iter()
                    .map(|r| (r.face, r.nonce, r.expiry_ms))
                    .collect();
                assert_eq!(ins, mp.in_records);
                let outs: Vec<(u32, [u8; 4])> =
                    pe.out_records.iter().map(|r| (r.face, r.nonce)).collect();
                assert_eq!(outs, mp.out_records);
            }
            assert!(self.t.pits_of(e).iter().filter(|&&p| p != NONE).count() == me.pits.len());
        }
    }
}

/// An indirect CS entry whose target was evicted stays dead, even once the target's slot is
/// reused for Data under the same prefix (a scenario random sequences rarely reach).
#[test]
fn indirect_entries_die_with_their_target() {
    let config = PitCsConfig {
        pit_capacity: 3,
        cs_capacity: 3,
        cs_policy: CsPolicy::Fifo,
        max_in_records: 2,
        max_out_records: 1,
    };
    let mut h = Harness {
        names: pool(),
        t: PitCs::new(config),
        m: Model::new(config),
        now: 1000,
    };
    let cbp = |name| Op::Interest {
        name,
        cbp: true,
        mbf: false,
        face: 1,
        nonce: 0,
        lifetime: 4000,
    };
    let lookup = |name| Op::Lookup {
        name,
        cbp: true,
        mbf: false,
    };
    let ops = [
        cbp(0), // /a
        cbp(1), // /a/b
        // /a/b/c satisfies both: CS = [/a/b/c, /a -> it, /a/b -> it]
        Op::Data {
            base: 2,
            variant: 0,
            freshness: 1000,
        },
        lookup(0),
        lookup(1),
        // /b evicts /a/b/c, whose slot is freed
        Op::CsInsert {
            base: 4,
            variant: 0,
            freshness: 1000,
        },
        // /a/b/c again, in the freed slot; evicts /a
        Op::CsInsert {
            base: 2,
            variant: 1,
            freshness: 1000,
        },
        lookup(1),
        lookup(0),
    ];
    let mut hits = Vec::new();
    for op in &ops {
        h.apply(op);
        h.compare();
        if let Op::Lookup { .. } = op {
            hits.push(h.m.hits);
        }
    }
    // The two lookups before the eviction hit; the two after miss.
    assert_eq!(hits, [1, 2, 2, 2]);
}

/// Long names take slots of fixed pools: when the pool is empty a new long name is refused
/// (the table never allocates for it), and a released name gives its slot back.
#[test]
fn long_names_come_from_a_bounded_pool() {
    let mut t = PitCs::new(PitCsConfig {
        pit_capacity: 1000,
        cs_capacity: 0,
        ..PitCsConfig::default()
    });
    let names: Vec<NameInfo> = (0..17)
        .map(|i| NameInfo::new(Name::from_uri(&format!("/n{i}/{}", "z".repeat(600))).unwrap()))
        .collect();
    let insert = |t: &mut PitCs, n: &NameInfo| {
        let h = n.hashes();
        let e = t.find_or_insert(h.full(), n.value(), h.len())?;
        t.pit_get_or_insert(e, false, false, false)
            .map(|(p, _)| (e, p))
    };
    // 1,001 name entries: the pool of whole-packet names has its minimum of 16 slots.
    let mut held = Vec::new();
    for n in &names[..16] {
        let (e, p) = insert(&mut t, n).expect("a slot is free");
        assert_eq!(t.name_value(e), n.value());
        held.push(p);
    }
    assert_eq!(insert(&mut t, &names[16]), Err(TableFull::Names));
    assert_eq!(t.find(names[16].hashes().full(), names[16].value()), None);
    t.pit_remove(held[3], |_| {});
    assert_eq!(t.find(names[3].hashes().full(), names[3].value()), None);
    let (e, _) = insert(&mut t, &names[16]).expect("the released slot");
    assert_eq!(t.name_value(e), names[16].value());
    for (i, n) in names.iter().enumerate().filter(|&(i, _)| i != 3) {
        assert!(t.find(n.hashes().full(), n.value()).is_some(), "name {i}");
    }
}

/// Each logged evicted Data comes with the end of its freshness in the CS (its insertion time
/// plus the freshness it had left), from which a write-back tier tells its arrival.
#[test]
fn eviction_log_keeps_each_data_s_fresh_until() {
    let config = PitCsConfig {
        cs_capacity: 1,
        ..PitCsConfig::default()
    };
    let mut h = Harness {
        names: pool(),
        t: PitCs::new(config),
        m: Model::new(config),
        now: 1000,
    };
    h.t.log_evictions(8, 1 << 20);
    for (base, freshness) in [(0, 1000), (1, 0), (2, 5)] {
        h.apply(&Op::CsInsert {
            base,
            variant: 0,
            freshness,
        });
        h.apply(&Op::Advance { dt: 10 });
    }
    let mut logged = Vec::new();
    h.t.drain_evicted_fresh(|d, until| logged.push((d.to_vec(), until)));
    let want: Vec<(Vec<u8>, u64)> = h.m.evicted.iter().cloned().zip([2000, 1010]).collect();
    assert_eq!(logged, want);
    // Drained: empty until the next eviction.
    h.t.drain_evicted_fresh(|_, _| panic!("drained"));
}

/// The eviction log is bounded: past its entry limit, evictions are counted and not kept, and a
/// drain makes room again.
#[test]
fn eviction_log_is_bounded() {
    let config = PitCsConfig {
        cs_capacity: 1,
        ..PitCsConfig::default()
    };
    let mut h = Harness {
        names: pool(),
        t: PitCs::new(config),
        m: Model::new(config),
        now: 1000,
    };
    h.t.log_evictions(2, 1 << 20);
    let insert = |base| Op::CsInsert {
        base,
        variant: 0,
        freshness: 1000,
    };
    for base in 0..5 {
        h.apply(&insert(base)); // each insert after the first evicts its predecessor
    }
    let mut logged = Vec::new();
    h.t.drain_evicted(|d| logged.push(d.to_vec()));
    assert_eq!(logged, h.m.evicted[..2].to_vec());
    assert_eq!(h.t.counters.cs_evictions, 4);
    assert_eq!(h.t.counters.cs_evictions_unlogged, 2);
    h.m.evicted.clear();
    h.apply(&insert(0));
    h.check_evictions();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn pit_cs_agrees_with_the_model(config in config(), ops in prop::collection::vec(op(), 1..120)) {
        let mut h = Harness {
            names: pool(),
            t: PitCs::new(config),
            m: Model::new(config),
            now: 1000,
        };
        h.t.log_evictions(1024, 1 << 20);
        for op in &ops {
            h.apply(op);
            h.compare();
            h.check_evictions();
        }
        // Past every lifetime, no PIT entry is left.
        h.apply(&Op::Advance { dt: 100_000 });
        h.compare();
        prop_assert_eq!(h.t.pit_len(), 0);
    }

    #[test]
    fn dead_nonce_list_agrees_with_the_model(
        capacity in 1..8usize,
        lifetime in 1..60u64,
        ops in prop::collection::vec((0..3u8, 0..6u64, 0..4u32, 0..25u64), 1..200),
    ) {
        let mut d = DeadNonceList::new(capacity, lifetime);
        let mut model: VecDeque<(u64, u64)> = VecDeque::new();
        let mut now = 0u64;
        let key = |name: u64, nonce: u32| {
            let k = dead_nonce_key(name.wrapping_mul(0x9E37_79B9_7F4A_7C15), nonce.to_be_bytes());
            assert_ne!(k, 0);
            k
        };
        let expire = |model: &mut VecDeque<(u64, u64)>, now: u64| {
            while model.front().is_some_and(|&(_, t)| t + lifetime <= now) {
                model.pop_front();
            }
        };
        for (what, name, nonce, dt) in ops {
            now += dt;
            let k = key(name, nonce);
            match what {
                0 => {
                    d.insert(k, now);
                    expire(&mut model, now);
                    if model.len() == capacity {
                        model.pop_front();
                    }
                    model.push_back((k, now));
                }
                1 => {
                    d.expire(now);
                    expire(&mut model, now);
                }
                _ => {}
            }
            let want = model.iter().any(|&(x, t)| x == k && t + lifetime > now);
            prop_assert_eq!(d.contains(k, now), want);
            prop_assert_eq!(d.len(), model.len());
            prop_assert!(d.len() <= d.capacity());
            for &(x, _) in &model {
                let live = model.iter().any(|&(y, t)| y == x && t + lifetime > now);
                prop_assert_eq!(d.contains(x, now), live);
            }
        }
    }
}
