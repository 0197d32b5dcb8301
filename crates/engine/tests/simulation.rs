//! A deterministic simulation of three forwarding workers sharing one FIB.
//!
//! A seeded PRNG drives random Interests (CanBePrefix, MustBeFresh, implicit digests, HopLimits,
//! PIT tokens, NextHopFaceIds), retransmissions, Data and Nacks from upstreams, looping
//! Interests, unsolicited Data, malformed bytes, FIB changes and time jumps through three
//! engines. Every packet goes to the engine owning its name ([`worker_of`] of the full-name
//! hash), as the I/O threads would dispatch it. Names come from a small alphabet so that
//! aggregation, CS hits, PIT overflow and loops all happen. Worker 1 has a slower CS tier whose
//! pending lookups the simulator completes at random, with Data or with a miss.
//!
//! After every batch the simulator checks, for every engine:
//! - the table's own invariants ([`PitCs::check_invariants`]);
//! - no PIT entry outlives its lifetime: every live entry (found through the table's read-only
//!   API at the names the engine was sent) expires after `now` and no later than the longest
//!   lifetime of the Interests received for it, and these entries are all of `pit_len`; once
//!   time passes every lifetime, the PIT is empty;
//! - every downstream Interest is answered (Data or Nack) at most once, and every answer goes to
//!   a face that asked for it;
//! - scope: nothing under `/localhost` and no Interest with HopLimit 0 leaves by a non-local face,
//!   no Nack goes to a multi-access face, no Interest goes back to the face it came from;
//! - memory stays bounded: PIT and CS within capacity, name entries within PIT + CS capacity;
//! - every input packet is accounted for by exactly one counter.
//!
//! [`PitCs::check_invariants`]: engine::table::pit_cs::PitCs::check_invariants

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use engine::fw::pipeline::{
    DropReason, Engine, EngineConfig, FaceInfo, Output, PacketRef, SendKind, SlowTier,
};
use engine::fw::strategy::StrategyKind;
use engine::hash::{name_hash, HashKey};
use engine::partition::worker_of;
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId, PitCsConfig, NONE};
use wire::lp::NackReason;
use wire::{
    sha256, Component, Data, DataView, Interest, InterestView, Limits, LpPacket, MetaInfo, Name,
};

const KEY: HashKey = HashKey::fixed(0xC0FF_EE00, 0x5EED);
const WORKERS: usize = 3;
const FACES: u32 = 8;
const LOCAL: [FaceId; 2] = [1, 2];
const MULTI_ACCESS: FaceId = 8;
const PACKETS_PER_SEED: usize = 25_000;
/// The worker with a slower CS tier.
const TIERED: usize = 1;

type Lookups = Arc<Mutex<Vec<(u64, Vec<u8>)>>>;
/// (worker, nonce) → the faces that sent that nonce in this batch, and whether the Interest
/// carried a NextHopFaceId.
type Arrivals = HashMap<(usize, [u8; 4]), Vec<(FaceId, bool)>>;

/// A slower CS tier that answers "pending" for a quarter of the names and queues the lookup for
/// the simulator to complete later.
struct SimTier {
    queue: Lookups,
}

impl SlowTier for SimTier {
    fn lookup(&mut self, full_hash: u64, name_value: &[u8]) -> bool {
        let pending = full_hash % 4 == 0;
        if pending {
            self.queue
                .lock()
                .unwrap()
                .push((full_hash, name_value.to_vec()));
        }
        pending
    }
}

/// Copies the actions out of an [`Output`]: (face, kind, bytes, input index if forwarded as is).
fn owned_actions(
    out: &Output<'_>,
    inputs: &[(FaceId, &[u8])],
) -> Vec<(FaceId, SendKind, Vec<u8>, Option<usize>)> {
    out.actions
        .iter()
        .map(|a| {
            let input = match a.packet {
                PacketRef::Input { index, .. } => Some(index as usize),
                PacketRef::Out(_) => None,
            };
            (a.face, a.kind, out.bytes(a, inputs).to_vec(), input)
        })
        .collect()
}

/// SplitMix64: small, seedable, good enough to drive a simulation.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True with probability `pct` percent.
    fn pct(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.index(xs.len())]
    }

    fn face(&mut self) -> FaceId {
        self.below(u64::from(FACES)) as FaceId + 1
    }
}

fn is_local(face: FaceId) -> bool {
    LOCAL.contains(&face)
}

fn first_is(name: &Name, s: &str) -> bool {
    name.components
        .first()
        .is_some_and(|c| c.typ == 8 && c.value == s.as_bytes())
}

fn make_data(name: &Name, variant: u8, freshness_ms: Option<u64>) -> Vec<u8> {
    let mut d = Data::new(name.clone(), vec![variant; 1 + usize::from(variant)]);
    d.meta_info = freshness_ms.map(|f| MetaInfo {
        freshness_ms: Some(f),
        ..MetaInfo::default()
    });
    d.sign_digest_sha256();
    d.to_wire()
}

fn digest_name(name: &Name, data_wire: &[u8]) -> Name {
    name.clone()
        .with(Component::implicit_digest(sha256(&[data_wire])))
}

/// An Interest the simulator sent to an engine, waiting for at most one answer.
#[derive(Debug)]
struct Open {
    name: Name,
    cbp: bool,
    mbf: bool,
    nonce: [u8; 4],
    expiry: u64,
    /// Batch number and index in that engine's batch.
    batch: u64,
    index: usize,
    answered: bool,
}

impl Open {
    fn matches_data(&self, data_name: &Name, data_wire: &[u8]) -> bool {
        self.name == *data_name
            || (self.cbp && self.name.is_prefix_of(data_name))
            || (self.name.len() == data_name.len() + 1
                && self.name == digest_name(data_name, data_wire))
    }
}

/// A packet about to be fed to an engine.
struct Item {
    face: FaceId,
    bytes: Vec<u8>,
    /// The name that picks the worker (None: malformed, any worker).
    name: Option<Name>,
    /// Set for Interests: what the answer must match.
    interest: Option<Interest>,
    /// The Interest carries a NextHopFaceId (it may then go anywhere).
    next_hop: bool,
}

/// An Interest an engine sent upstream.
struct Upstream {
    face: FaceId,
    bytes: Vec<u8>,
    interest: Interest,
}

struct Sim {
    rng: Rng,
    now: u64,
    batch: u64,
    engines: Vec<Engine>,
    fib: Arc<Fib>,
    names: Vec<Name>,
    nonce_counter: u32,
    /// Downstream face of each nonce the simulator drew.
    nonce_origin: HashMap<[u8; 4], FaceId>,
    echoed: HashSet<(FaceId, [u8; 4])>,
    /// Digest name → the Data it names.
    by_digest: HashMap<Name, Vec<u8>>,
    /// Recent downstream Interests (for retransmissions).
    recent: Vec<(FaceId, Interest)>,
    /// Interests the engines sent upstream, not yet answered by the simulated network.
    upstream: Vec<Upstream>,
    /// Per (engine, face): Interests sent and not answered yet.
    open: HashMap<(usize, FaceId), Vec<Open>>,
    /// Per engine: the latest expiry of each (name, CanBePrefix, MustBeFresh) it received.
    pit_keys: Vec<BTreeMap<(Name, bool, bool), u64>>,
    /// Per engine: every name it received an Interest for and may still have PIT entries at,
    /// with its hash and TLV-VALUE (to find the entries through the table's read-only API).
    pit_names: Vec<HashMap<Name, (u64, Vec<u8>)>>,
    deferred: Vec<Item>,
    /// Lookups the slower tier of worker [`TIERED`] has pending.
    tier_queue: Lookups,
    /// Slower-tier completions: (Data sent, Interests forwarded, Nacks sent).
    tier_stats: (u64, u64, u64),
    /// Largest dead-nonce list seen on any engine (to show the bound was exercised).
    max_dead_nonces: usize,
    fed: u64,
    answers: u64,
    fib_toggle: bool,
}

fn config(w: usize) -> EngineConfig {
    EngineConfig {
        pit_cs: PitCsConfig {
            pit_capacity: [64, 24, 8][w],
            cs_capacity: [32, 32, 1][w],
            cs_policy: [CsPolicy::Fifo, CsPolicy::Lru, CsPolicy::Lru][w],
            max_in_records: 3,
            max_out_records: 4,
        },
        dead_nonce_capacity: 64,
        ..EngineConfig::default()
    }
}

impl Sim {
    fn new(seed: u64) -> Self {
        let fib = Arc::new(Fib::new(KEY, 128, 2));
        let routes: &[(&str, &[(FaceId, u32)])] = &[
            ("/a", &[(3, 10), (4, 20)]),
            ("/a/b", &[(5, 5), (6, 15), (1, 30)]),
            ("/b", &[(4, 1), (7, 2), (8, 3)]),
            ("/c", &[(2, 1)]),
            ("/localhost", &[(1, 10), (2, 20), (3, 1)]),
            ("/localhop", &[(3, 1), (2, 2), (6, 3)]),
        ];
        for (prefix, hops) in routes {
            for &(face, cost) in *hops {
                fib.add_nexthop(&Name::from_uri(prefix).unwrap(), face, cost)
                    .unwrap();
            }
        }
        let tier_queue = Lookups::default();
        let engines = (0..WORKERS)
            .map(|w| {
                let mut e = Engine::new(KEY, fib.clone(), config(w));
                if w == TIERED {
                    e.set_slow_tier(Box::new(SimTier {
                        queue: tier_queue.clone(),
                    }));
                }
                for f in LOCAL {
                    e.set_face(
                        f,
                        FaceInfo {
                            local: true,
                            multi_access: false,
                            local_fields: true,
                        },
                    );
                }
                e.set_face(
                    MULTI_ACCESS,
                    FaceInfo {
                        multi_access: true,
                        ..FaceInfo::default()
                    },
                );
                let s = e.strategies_mut();
                s.set(&Name::from_uri("/b").unwrap(), StrategyKind::Multicast);
                s.set(
                    &Name::from_uri("/localhop").unwrap(),
                    StrategyKind::Multicast,
                );
                e
            })
            .collect();
        let mut names = Vec::new();
        for f in ["a", "b", "c", "d", "localhost", "localhop"] {
            let n1 = Name::new().with_str(f);
            names.push(n1.clone());
            for s in ["b", "x", "y"] {
                let n2 = n1.clone().with_str(s);
                names.push(n2.clone());
                for t in ["0", "1"] {
                    names.push(n2.clone().with_str(t));
                }
            }
        }
        Sim {
            rng: Rng(seed),
            now: 1000,
            batch: 0,
            engines,
            fib,
            names,
            nonce_counter: 0,
            nonce_origin: HashMap::new(),
            echoed: HashSet::new(),
            by_digest: HashMap::new(),
            recent: Vec::new(),
            upstream: Vec::new(),
            open: HashMap::new(),
            pit_keys: vec![BTreeMap::new(); WORKERS],
            pit_names: vec![HashMap::new(); WORKERS],
            deferred: Vec::new(),
            tier_queue,
            tier_stats: (0, 0, 0),
            max_dead_nonces: 0,
            fed: 0,
            answers: 0,
            fib_toggle: false,
        }
    }

    /// A nonce never drawn before (an odd multiplier is a bijection on u32).
    fn fresh_nonce(&mut self) -> [u8; 4] {
        self.nonce_counter += 1;
        let x = self.nonce_counter.wrapping_mul(0x9E37_79B1);
        (x ^ (x >> 16)).to_be_bytes()
    }

    fn random_name(&mut self) -> Name {
        let i = self.rng.index(self.names.len());
        self.names[i].clone()
    }

    fn freshness(&mut self) -> Option<u64> {
        self.rng
            .pick(&[None, Some(0), Some(30), Some(300), Some(3000)])
    }

    fn interest_item(&mut self, face: FaceId, i: Interest) -> Item {
        let mut next_hop = false;
        let bytes = if self.rng.pct(30) {
            let mut lp = LpPacket {
                fragment: Some(i.to_wire()),
                ..LpPacket::default()
            };
            let tlen = 1 + self.rng.index(8);
            lp.pit_token = Some((0..tlen).map(|_| self.rng.next() as u8).collect());
            // Only the local faces (LocalFieldsEnabled) may carry it; from the others the
            // Interest would be dropped.
            if is_local(face) && self.rng.pct(15) {
                lp.next_hop_face_id = Some(u64::from(self.rng.face()));
                next_hop = true;
            }
            lp.to_wire()
        } else {
            i.to_wire()
        };
        Item {
            face,
            bytes,
            name: Some(i.name.clone()),
            interest: Some(i),
            next_hop,
        }
    }

    fn new_interest(&mut self) -> Item {
        let face = self.rng.face();
        let nonce = self.fresh_nonce();
        self.nonce_origin.insert(nonce, face);
        let name = if self.rng.pct(6) {
            // By implicit digest, of a Data the network may send.
            let n = self.random_name();
            let fresh = self.freshness();
            let d = make_data(&n, self.rng.below(2) as u8, fresh);
            let full = digest_name(&n, &d);
            self.by_digest.insert(full.clone(), d);
            full
        } else {
            self.random_name()
        };
        let i = Interest {
            can_be_prefix: self.rng.pct(20),
            must_be_fresh: self.rng.pct(30),
            lifetime_ms: self.rng.pick(&[
                None,
                Some(1),
                Some(20),
                Some(100),
                Some(500),
                Some(2000),
                Some(9000),
            ]),
            hop_limit: self
                .rng
                .pick(&[None, None, None, None, Some(0), Some(1), Some(2), Some(8)]),
            ..Interest::new(name, nonce)
        };
        if self.recent.len() >= 64 {
            let k = self.rng.index(64);
            self.recent.swap_remove(k);
        }
        self.recent.push((face, i.clone()));
        self.interest_item(face, i)
    }

    fn retransmission(&mut self) -> Option<Item> {
        if self.recent.is_empty() {
            return None;
        }
        let (face, mut i) = self.recent[self.rng.index(self.recent.len())].clone();
        let nonce = self.fresh_nonce();
        self.nonce_origin.insert(nonce, face);
        i.nonce = Some(nonce);
        Some(self.interest_item(face, i))
    }

    /// The simulated network answers (or loops) an Interest an engine sent upstream.
    fn upstream_reply(&mut self) -> Option<Item> {
        if self.upstream.is_empty() {
            return None;
        }
        let k = self.rng.index(self.upstream.len());
        let keep = self.rng.pct(10); // sometimes answer twice
        let up = if keep {
            let u = &self.upstream[k];
            Upstream {
                face: u.face,
                bytes: u.bytes.clone(),
                interest: u.interest.clone(),
            }
        } else {
            self.upstream.swap_remove(k)
        };
        let roll = self.rng.below(100);
        if roll < 65 {
            let name = up.interest.name.clone();
            let data = if let Some(d) = self.by_digest.get(&name) {
                d.clone()
            } else {
                let n = if up.interest.can_be_prefix && self.rng.pct(60) {
                    name.with_str(self.rng.pick(&["0", "1", "v"]))
                } else {
                    name
                };
                let fresh = self.freshness();
                make_data(&n, self.rng.below(2) as u8, fresh)
            };
            let dname = DataView::decode(&data, &Limits::default())
                .unwrap()
                .name()
                .to_name();
            let bytes = if self.rng.pct(25) {
                LpPacket {
                    fragment: Some(data),
                    congestion_mark: self.rng.pct(50).then_some(1),
                    cache_policy: self.rng.pct(30).then_some(1),
                    pit_token: self.rng.pct(30).then(|| vec![0xAB; 4]),
                    ..LpPacket::default()
                }
                .to_wire()
            } else {
                data
            };
            Some(Item {
                face: up.face,
                bytes,
                name: Some(dname),
                interest: None,
                next_hop: false,
            })
        } else if roll < 85 {
            let reason = self.rng.pick(&[
                NackReason::Congestion,
                NackReason::Duplicate,
                NackReason::NoRoute,
                NackReason::Other(7),
            ]);
            Some(Item {
                face: up.face,
                bytes: LpPacket::nack(up.bytes, reason).to_wire(),
                name: Some(up.interest.name.clone()),
                interest: None,
                next_hop: false,
            })
        } else {
            // A loop: the same Interest (same nonce) comes back by another face.
            let nonce = up.interest.nonce?;
            let origin = self.nonce_origin.get(&nonce).copied();
            let v = self.rng.face();
            if Some(v) == origin || !self.echoed.insert((v, nonce)) {
                return None;
            }
            Some(Item {
                face: v,
                name: Some(up.interest.name.clone()),
                bytes: up.bytes,
                interest: Some(up.interest),
                next_hop: false,
            })
        }
    }

    fn unsolicited(&mut self) -> Item {
        let mut n = self.random_name();
        if self.rng.pct(30) {
            n = n.with_str("0");
        }
        let fresh = self.freshness();
        let bytes = make_data(&n, 0, fresh);
        Item {
            face: self.rng.face(),
            bytes,
            name: Some(n),
            interest: None,
            next_hop: false,
        }
    }

    fn malformed(&mut self) -> Item {
        let mut bytes = if self.rng.pct(50) {
            let i = Interest::new(self.random_name(), [1, 2, 3, 4]).to_wire();
            let cut = self.rng.index(i.len());
            i[..cut].to_vec()
        } else {
            let n = self.rng.index(24);
            (0..n).map(|_| self.rng.next() as u8).collect()
        };
        if bytes.first() == Some(&0x05) || bytes.first() == Some(&0x06) {
            bytes.truncate(1); // surely malformed
        }
        Item {
            face: self.rng.face(),
            bytes,
            name: None,
            interest: None,
            next_hop: false,
        }
    }

    fn generate(&mut self) -> Item {
        loop {
            let roll = self.rng.below(100);
            let item = match roll {
                0..=39 => Some(self.new_interest()),
                40..=49 => self.retransmission(),
                50..=84 => self.upstream_reply(),
                85..=94 => Some(self.unsolicited()),
                _ => Some(self.malformed()),
            };
            if let Some(item) = item {
                return item;
            }
        }
    }

    fn worker_for(&mut self, item: &Item) -> usize {
        match &item.name {
            Some(n) => worker_of(name_hash(KEY, n), WORKERS),
            None => self.rng.index(WORKERS),
        }
    }

    fn step(&mut self) {
        self.batch += 1;
        let size = 1 + self.rng.index(32);
        let mut items: Vec<Item> = std::mem::take(&mut self.deferred);
        while items.len() < size {
            let it = self.generate();
            items.push(it);
        }
        // Assign to workers; at most one Interest per (face, worker) per batch, so that a CS hit
        // can be matched to the Interest it answers.
        let mut batches: Vec<Vec<(FaceId, Vec<u8>)>> = vec![Vec::new(); WORKERS];
        let mut used = HashSet::new();
        let mut arrivals = Arrivals::new();
        for item in items {
            let w = self.worker_for(&item);
            if let Some(i) = &item.interest {
                if !used.insert((item.face, w)) || batches[w].len() >= 48 {
                    self.deferred.push(item);
                    continue;
                }
                let expiry = self.now + i.lifetime_ms.unwrap_or(4000);
                self.open.entry((w, item.face)).or_default().push(Open {
                    name: i.name.clone(),
                    cbp: i.can_be_prefix,
                    mbf: i.must_be_fresh,
                    nonce: i.nonce.unwrap(),
                    expiry,
                    batch: self.batch,
                    index: batches[w].len(),
                    answered: false,
                });
                self.pit_names[w].entry(i.name.clone()).or_insert_with(|| {
                    let wire = i.name.to_wire();
                    assert!(wire.len() < 255);
                    (name_hash(KEY, &i.name), wire[2..].to_vec())
                });
                let k = self.pit_keys[w]
                    .entry((i.name.clone(), i.can_be_prefix, i.must_be_fresh))
                    .or_insert(0);
                *k = (*k).max(expiry);
                arrivals
                    .entry((w, i.nonce.unwrap()))
                    .or_default()
                    .push((item.face, item.next_hop));
            } else if batches[w].len() >= 48 {
                self.deferred.push(item);
                continue;
            }
            batches[w].push((item.face, item.bytes));
        }
        for (w, batch) in batches.iter().enumerate() {
            self.fed += batch.len() as u64;
            let refs: Vec<(FaceId, &[u8])> =
                batch.iter().map(|(f, b)| (*f, b.as_slice())).collect();
            let out = self.engines[w].process(self.now, &refs);
            let sent = owned_actions(&out, &refs);
            for (face, kind, bytes, input) in sent {
                self.check_action(w, face, kind, bytes, input, &arrivals);
            }
        }
        self.complete_slow_tier();
        self.check_engines();
        // FIB churn, seen by every worker at once.
        if self.batch % 97 == 0 {
            let p = Name::from_uri("/a/b/x").unwrap();
            let c = Name::from_uri("/c").unwrap();
            if self.fib_toggle {
                assert!(self.fib.remove_nexthop(&p, 7));
                assert!(self.fib.remove_nexthop(&c, 6));
            } else {
                self.fib.add_nexthop(&p, 7, 1).unwrap();
                self.fib.add_nexthop(&c, 6, 0).unwrap();
            }
            self.fib_toggle = !self.fib_toggle;
        }
        // Time.
        let dt = match self.rng.below(100) {
            0..=69 => self.rng.below(6),
            70..=95 => 5 + self.rng.below(60),
            96..=98 => 200 + self.rng.below(2000),
            _ => 5000 + self.rng.below(4000),
        };
        self.now += dt;
    }

    fn check_action(
        &mut self,
        w: usize,
        face: FaceId,
        kind: SendKind,
        bytes: Vec<u8>,
        input: Option<usize>,
        arrivals: &Arrivals,
    ) {
        let limits = Limits::default();
        assert!((1..=FACES).contains(&face), "unknown face {face}");
        match kind {
            SendKind::Interest => {
                let v = InterestView::decode(&bytes, &limits).expect("a valid Interest");
                let i = v.to_interest();
                if first_is(&i.name, "localhost") {
                    assert!(is_local(face), "/localhost Interest to face {face}");
                }
                if i.hop_limit == Some(0) {
                    assert!(is_local(face), "HopLimit 0 Interest to face {face}");
                }
                let nonce = i.nonce.unwrap();
                if let Some(&[(from, next_hop)]) = arrivals.get(&(w, nonce)).map(Vec::as_slice) {
                    // Unless a local application chose the face, never back where it came from.
                    // (Only checked when a single face sent this nonce in the batch: copies of
                    // one looping Interest may legitimately go to each other's faces.)
                    assert!(
                        from != face || next_hop,
                        "Interest {} sent back to face {face}",
                        i.name
                    );
                }
                if self.upstream.len() >= 256 {
                    let k = self.rng.index(256);
                    self.upstream.swap_remove(k);
                }
                self.upstream.push(Upstream {
                    face,
                    bytes,
                    interest: i,
                });
            }
            SendKind::Data => {
                self.answers += 1;
                let v = DataView::decode(&bytes, &limits).expect("a valid Data");
                let name = v.name().to_name();
                if first_is(&name, "localhost") {
                    assert!(is_local(face), "/localhost Data to face {face}");
                }
                let (now, batch) = (self.now, self.batch);
                let open = self.open.entry((w, face)).or_default();
                if let Some(index) = input {
                    // Data from upstream (input `index`): satisfies every pending Interest of
                    // this face that it matches and that arrived before it.
                    let mut n = 0;
                    for o in open.iter_mut() {
                        let before = o.batch < batch || o.index < index;
                        if before && !o.answered && o.expiry > now && o.matches_data(&name, &bytes)
                        {
                            o.answered = true;
                            n += 1;
                        }
                    }
                    assert!(
                        n > 0,
                        "Data {name} to face {face} (engine {w}) answers nothing"
                    );
                } else {
                    // From the CS: answers the one Interest this face sent in this batch.
                    let o = open
                        .iter_mut()
                        .find(|o| o.batch == batch && !o.answered)
                        .unwrap_or_else(|| {
                            panic!("CS Data {name} to face {face} (engine {w}) answers nothing")
                        });
                    assert!(
                        o.matches_data(&name, &bytes),
                        "CS Data {name} for {}",
                        o.name
                    );
                    o.answered = true;
                }
            }
            SendKind::Idle => panic!("an IDLE packet to face {face} without NB-CC"),
            SendKind::Nack(_) => {
                self.answers += 1;
                assert_ne!(face, MULTI_ACCESS, "Nack on a multi-access face");
                let v = InterestView::decode(&bytes, &limits).expect("a valid Nack");
                let i = v.to_interest();
                let open = self.open.entry((w, face)).or_default();
                let o = open
                    .iter_mut()
                    .find(|o| {
                        !o.answered
                            && o.name == i.name
                            && o.nonce == i.nonce.unwrap()
                            && o.cbp == i.can_be_prefix
                            && o.mbf == i.must_be_fresh
                    })
                    .unwrap_or_else(|| {
                        panic!(
                            "Nack {} {:?} to face {face} (engine {w}) answers nothing",
                            i.name, i.nonce
                        )
                    });
                o.answered = true;
            }
        }
    }

    /// Completes some of the slower tier's pending lookups, with Data or with a miss, and checks
    /// that exactly the parked downstreams are answered.
    fn complete_slow_tier(&mut self) {
        let queued = std::mem::take(&mut *self.tier_queue.lock().unwrap());
        let mut keep = Vec::new();
        let mut done = HashSet::new();
        let now = self.now;
        for (hash, value) in queued {
            if done.contains(&value) {
                continue; // completed already: the same parked entries
            }
            if !self.rng.pct(40) {
                keep.push((hash, value));
                continue;
            }
            done.insert(value.clone());
            // Which (face, CanBePrefix, MustBeFresh) in-records are parked there now.
            let t = self.engines[TIERED].table();
            let mut parked: Vec<(FaceId, bool, bool)> = Vec::new();
            if let Some(e) = t.find(hash, &value) {
                for p in t.pits_of(e).into_iter().filter(|&p| p != NONE) {
                    let pe = t.pit(p);
                    if pe.cs_pending {
                        parked.extend(
                            pe.in_records
                                .iter()
                                .filter(|r| r.expiry_ms > now)
                                .map(|r| (r.face, pe.can_be_prefix, pe.must_be_fresh)),
                        );
                    }
                }
            }
            assert!(value.len() < 253);
            let mut name_wire = vec![0x07, value.len() as u8];
            name_wire.extend_from_slice(&value);
            let name = Name::decode(&name_wire).unwrap();
            let is_digest = name.components.last().is_some_and(|c| c.typ == 1);
            let data = (!is_digest && self.rng.pct(50)).then(|| {
                let fresh = self.freshness();
                make_data(&name, self.rng.below(2) as u8, fresh)
            });
            let out = self.engines[TIERED].complete_pending(now, hash, &value, data.as_deref());
            let sent = owned_actions(&out, &[]);
            for (face, kind, bytes, _) in sent {
                match kind {
                    SendKind::Data => {
                        self.answers += 1;
                        self.tier_stats.0 += 1;
                        assert!(data.as_deref() == Some(&bytes[..]));
                        let open = self.open.entry((TIERED, face)).or_default();
                        let mut n = 0;
                        for o in open.iter_mut() {
                            if !o.answered
                                && o.expiry > now
                                && o.name == name
                                && parked.contains(&(face, o.cbp, o.mbf))
                            {
                                o.answered = true;
                                n += 1;
                            }
                        }
                        assert!(
                            n > 0,
                            "slow-tier Data {name} to face {face} answers nothing"
                        );
                    }
                    _ => {
                        assert!(data.is_none(), "a tier hit only sends Data");
                        if kind == SendKind::Interest {
                            self.tier_stats.1 += 1;
                        }
                        if let SendKind::Nack(r) = kind {
                            self.tier_stats.2 += 1;
                            assert_eq!(r, NackReason::NoRoute);
                            assert!(parked.iter().any(|p| p.0 == face));
                        }
                        self.check_action(TIERED, face, kind, bytes, None, &HashMap::new());
                    }
                }
            }
        }
        self.tier_queue.lock().unwrap().extend(keep);
    }

    fn check_engines(&mut self) {
        let now = self.now;
        for (w, e) in self.engines.iter_mut().enumerate() {
            // Idle workers still advance their clocks.
            e.advance(now);
            let t = e.table();
            t.check_invariants()
                .unwrap_or_else(|err| panic!("engine {w} at {now}: {err}"));
            let c = t.config();
            assert!(e.dead_nonce_len() <= e.config().dead_nonce_capacity);
            self.max_dead_nonces = self.max_dead_nonces.max(e.dead_nonce_len());
            assert!(t.pit_len() <= c.pit_capacity);
            assert!(t.cs_len() <= c.cs_capacity);
            assert!(t.names_len() <= c.pit_capacity + c.cs_capacity);
            let keys = &mut self.pit_keys[w];
            keys.retain(|_, &mut exp| exp > now);
            // Every live PIT entry: it expires in the future, and no later than the longest
            // lifetime of the Interests received for it.
            let mut live = 0;
            self.pit_names[w].retain(|name, (hash, value)| {
                let Some(e) = t.find(*hash, value) else {
                    return false;
                };
                let mut here = 0;
                for p in t.pits_of(e).into_iter().filter(|&p| p != NONE) {
                    let pe = t.pit(p);
                    let key = (name.clone(), pe.can_be_prefix, pe.must_be_fresh);
                    let latest = keys.get(&key).copied().unwrap_or(0);
                    assert!(
                        pe.expiry_ms > now && pe.expiry_ms <= latest,
                        "engine {w} at {now}: PIT entry {key:?} expires at {} (Interests until {latest})",
                        pe.expiry_ms
                    );
                    here += 1;
                }
                live += here;
                here > 0
            });
            assert_eq!(
                live,
                t.pit_len(),
                "engine {w}: PIT entries at unknown names"
            );
        }
        for v in self.open.values_mut() {
            v.retain(|o| !o.answered && o.expiry > now);
        }
        let counted: u64 = self
            .engines
            .iter()
            .map(|e| {
                let c = e.counters();
                let d = |r: DropReason| c.drops[r.index()];
                c.in_interests
                    + c.in_data
                    + c.in_nacks
                    + d(DropReason::Malformed)
                    + d(DropReason::Fragment)
                    + d(DropReason::NoPayload)
                    + d(DropReason::BatchOverflow)
                    + d(DropReason::LinkField)
            })
            .sum();
        assert_eq!(counted, self.fed, "every packet is counted once");
    }

    fn finish(&mut self) {
        // Past every lifetime, nothing is pending anywhere.
        let later = self.now + 60_000;
        for e in &mut self.engines {
            e.advance(later);
            let t = e.table();
            t.check_invariants().unwrap();
            assert_eq!(t.pit_len(), 0);
            assert_eq!(t.names_len(), t.cs_len());
        }
    }
}

fn simulate(seed: u64) -> Sim {
    let mut sim = Sim::new(seed);
    while sim.fed < PACKETS_PER_SEED as u64 {
        sim.step();
    }
    sim.finish();
    sim
}

#[test]
fn random_traffic_keeps_every_invariant() {
    for seed in [2, 1, 3, 0xDEAD_BEEF, 42, 2026] {
        let sim = simulate(seed);
        let (mut hits, mut sat, mut nacks, mut loops, mut supp, mut full, mut expired) =
            (0, 0, 0, 0, 0, 0, 0);
        for e in &sim.engines {
            let c = e.counters();
            hits += e.table().counters.cs_hits;
            sat += c.satisfied;
            nacks += c.out_nacks;
            loops += c.drops[DropReason::Loop.index()];
            supp += c.drops[DropReason::Suppressed.index()];
            full += c.drops[DropReason::PitFull.index()];
            expired += c.unsatisfied;
        }
        println!("seed {seed}: tier {:?} hits {hits} sat {sat} nacks {nacks} loops {loops} supp {supp} full {full} expired {expired} answers {} now {} pit {:?}", sim.tier_stats, sim.answers, sim.now, sim.engines.iter().map(|e| e.table().pit_len()).collect::<Vec<_>>());
        // The traffic really exercised the interesting paths.
        assert!(hits > 100, "seed {seed}: {hits} CS hits");
        assert!(sat > 100, "seed {seed}: {sat} satisfied");
        assert!(nacks > 100, "seed {seed}: {nacks} Nacks");
        assert!(loops > 10, "seed {seed}: {loops} loops");
        assert!(supp > 10, "seed {seed}: {supp} suppressed");
        assert!(full > 0, "seed {seed}: PIT never full");
        assert!(expired > 100, "seed {seed}: {expired} expired");
        assert!(sim.answers > 1000, "seed {seed}: {} answers", sim.answers);
        assert!(
            sim.max_dead_nonces > 0,
            "seed {seed}: the dead-nonce list was never used"
        );
        let (td, tf, tn) = sim.tier_stats;
        assert!(
            td > 10 && tf > 10 && tn > 10,
            "seed {seed}: tier {:?}",
            sim.tier_stats
        );
    }
}

#[test]
fn simulation_is_deterministic() {
    let a = simulate(7);
    let b = simulate(7);
    for (x, y) in a.engines.iter().zip(&b.engines) {
        assert_eq!(x.counters(), y.counters());
        assert_eq!(x.table().counters, y.table().counters);
    }
    assert_eq!((a.now, a.answers), (b.now, b.answers));
}
