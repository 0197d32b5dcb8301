//! NB-Cache's bypass decisions in the pipeline (Pan et al., "NB-Cache: Non-Blocking
//! In-Network Caching for High-Performance Content Routers"): the filter in front of the CS
//! (first stage), the storage-queue threshold (second stage), and the paper's cases A–D as
//! switches of one pipeline; then its congestion control: which Data are marked under plain
//! ECN and under NB-CC, NB-CC's Nack-α / Nack-β rounds, and a downstream that stops bypassing
//! to an upstream under a Nack-α.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use engine::fw::pipeline::{
    BypassCounters, CongestionConfig, CongestionCounters, CsFilter, Engine, EngineConfig, FaceInfo,
    SendKind, SlowTier,
};
use engine::hash::{name_hash, HashKey};
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId, PitCsConfig};
use wire::lp::{LpPacket, NbccSignal};
use wire::{Data, Interest, Name};

const KEY: HashKey = HashKey::fixed(7, 11);

/// The downstream the Interests come from, and the upstream of every route.
const DOWN: FaceId = 1;
const UP: FaceId = 2;

fn name(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

fn hash(uri: &str) -> u64 {
    name_hash(KEY, &name(uri))
}

fn interest(uri: &str, nonce: u32, cbp: bool) -> Vec<u8> {
    Interest {
        lifetime_ms: Some(4000),
        can_be_prefix: cbp,
        ..Interest::new(name(uri), nonce.to_be_bytes())
    }
    .to_wire()
}

fn data(uri: &str) -> Vec<u8> {
    let mut d = Data::new(name(uri), b"x".to_vec());
    d.sign_digest_sha256();
    d.to_wire()
}

/// One packet through the engine: (face, kind) of every action.
fn send(e: &mut Engine, now: u64, face: FaceId, packet: Vec<u8>) -> Vec<(FaceId, SendKind)> {
    let out = e.process(now, &[(face, packet.as_slice())]);
    out.actions.iter().map(|a| (a.face, a.kind)).collect()
}

/// An exact filter: the multiset of names the RAM CS reported, plus names the L2 "holds" and
/// names it answers "maybe" for without holding them (false positives).
#[derive(Debug, Default)]
struct Reference {
    ram: HashMap<u64, u32>,
    also: HashSet<u64>,
}

#[derive(Debug, Clone, Default)]
struct RefFilter(Arc<Mutex<Reference>>);

impl CsFilter for RefFilter {
    fn may_hold(&self, h: u64) -> bool {
        let r = self.0.lock().unwrap();
        r.ram.get(&h).is_some_and(|&c| c > 0) || r.also.contains(&h)
    }
    fn insert(&mut self, h: u64) {
        *self.0.lock().unwrap().ram.entry(h).or_default() += 1;
    }
    fn remove(&mut self, h: u64) {
        let mut r = self.0.lock().unwrap();
        let c = r.ram.get_mut(&h).expect("removal of a name never inserted");
        *c = c.checked_sub(1).expect("count below zero");
    }
}

/// A slow tier holding a set of names, with a queue length the test sets.
#[derive(Debug, Default)]
struct TierState {
    holds: HashSet<u64>,
    waiting: usize,
    lookups: Vec<u64>,
    /// Lookups miss as if the queue were full.
    busy: bool,
}

#[derive(Clone, Default)]
struct FakeTier(Arc<Mutex<TierState>>);

impl SlowTier for FakeTier {
    fn lookup(&mut self, h: u64, _name: &[u8]) -> bool {
        let mut t = self.0.lock().unwrap();
        t.lookups.push(h);
        let pending = t.holds.contains(&h) && !t.busy;
        t.waiting += usize::from(pending);
        pending
    }
    fn holds(&mut self, h: u64, _name: &[u8]) -> bool {
        self.0.lock().unwrap().holds.contains(&h)
    }
    fn waiting(&self) -> usize {
        self.0.lock().unwrap().waiting
    }
}

/// NB-Cache's switches: the filter and the queue threshold.
#[derive(Debug, Clone, Copy)]
struct Case {
    bloom: bool,
    threshold: Option<usize>,
}

struct Setup {
    e: Engine,
    fib: Arc<Fib>,
    filter: RefFilter,
    tier: FakeTier,
}

fn setup(case: Case, cs_capacity: usize) -> Setup {
    let config = EngineConfig {
        pit_cs: PitCsConfig {
            pit_capacity: 64,
            cs_capacity,
            cs_policy: CsPolicy::Fifo,
            ..PitCsConfig::default()
        },
        bypass_threshold: case.threshold,
        ..EngineConfig::default()
    };
    let fib = Arc::new(Fib::new(KEY, 64, 2));
    fib.add_nexthop(&name("/a"), UP, 1).unwrap();
    let mut e = Engine::new(KEY, fib.clone(), config);
    let tier = FakeTier::default();
    e.set_slow_tier(Box::new(tier.clone()));
    let filter = RefFilter::default();
    if case.bloom {
        e.set_cs_filter(Box::new(filter.clone()));
    }
    Setup {
        e,
        fib,
        filter,
        tier,
    }
}

impl Setup {
    fn tier_holds(&self, uri: &str) {
        let h = hash(uri);
        self.tier.0.lock().unwrap().holds.insert(h);
        self.filter.0.lock().unwrap().also.insert(h);
    }
    fn bypass(&self) -> BypassCounters {
        self.e.counters().bypass
    }
    fn lookups(&self) -> usize {
        self.tier.0.lock().unwrap().lookups.len()
    }
}

const B: Case = Case {
    bloom: true,
    threshold: Some(2),
};

#[test]
fn a_sure_miss_skips_the_cs_and_the_slow_tier() {
    let mut s = setup(B, 8);
    let sent = send(&mut s.e, 10, DOWN, interest("/a/absent", 1, false));
    assert_eq!(sent, [(UP, SendKind::Interest)]);
    assert_eq!(s.lookups(), 0, "the slow tier is not asked");
    assert_eq!(s.bypass().filter_skips, 1);
    assert_eq!(s.e.table().counters.cs_misses, 0, "nor the CS");
    // A name the tier holds passes the filter and waits for the tier.
    s.tier_holds("/a/held");
    assert!(send(&mut s.e, 11, DOWN, interest("/a/held", 2, false)).is_empty());
    assert_eq!(s.lookups(), 1);
    assert_eq!(s.bypass().filter_skips, 1);
}

#[test]
fn a_positive_that_misses_is_a_false_positive() {
    let mut s = setup(B, 8);
    // The filter says "maybe" for a name no tier holds.
    s.filter.0.lock().unwrap().also.insert(hash("/a/ghost"));
    let sent = send(&mut s.e, 10, DOWN, interest("/a/ghost", 1, false));
    assert_eq!(sent, [(UP, SendKind::Interest)]);
    assert_eq!(s.lookups(), 1);
    let b = s.bypass();
    assert_eq!((b.filter_skips, b.filter_false_positives), (0, 1));
    // A tier too busy to read a name it holds: a miss, but not the filter's false positive.
    s.tier_holds("/a/busy");
    s.tier.0.lock().unwrap().busy = true;
    let sent = send(&mut s.e, 11, DOWN, interest("/a/busy", 2, false));
    assert_eq!(sent, [(UP, SendKind::Interest)]);
    assert_eq!(s.bypass().filter_false_positives, 1);
}

#[test]
fn can_be_prefix_interests_are_not_filtered() {
    let mut s = setup(B, 8);
    send(&mut s.e, 10, DOWN, interest("/a/p", 1, true));
    assert_eq!(s.bypass().filter_skips, 0);
    assert_eq!(s.lookups(), 1, "asked, since a longer Data may be held");
}

#[test]
fn the_filter_follows_the_ram_cs_through_insertion_and_eviction() {
    let mut s = setup(B, 2);
    for (k, uri) in ["/a/1", "/a/2", "/a/3"].iter().enumerate() {
        send(&mut s.e, 10, DOWN, interest(uri, k as u32, false));
        send(&mut s.e, 11, UP, data(uri));
    }
    // FIFO of 2: /a/1 was evicted.
    let r = s.filter.0.lock().unwrap();
    let held: HashSet<u64> = r
        .ram
        .iter()
        .filter(|(_, &c)| c > 0)
        .map(|(&h, _)| h)
        .collect();
    assert_eq!(held, HashSet::from([hash("/a/2"), hash("/a/3")]));
    drop(r);
    // A RAM hit is served through the filter.
    let sent = send(&mut s.e, 12, DOWN, interest("/a/3", 9, false));
    assert_eq!(sent, [(DOWN, SendKind::Data)]);
    // Erasing the CS empties the filter.
    s.e.table_mut().erase_cs(&[], 100);
    assert!(s.filter.0.lock().unwrap().ram.values().all(|&c| c == 0));
    // A filter set on a CS that holds Data starts with its names.
    let mut t = setup(Case { bloom: false, ..B }, 4);
    send(&mut t.e, 10, DOWN, interest("/a/x", 1, false));
    send(&mut t.e, 11, UP, data("/a/x"));
    t.e.set_cs_filter(Box::new(t.filter.clone()));
    assert_eq!(t.filter.0.lock().unwrap().ram.get(&hash("/a/x")), Some(&1));
}

#[test]
fn past_the_threshold_a_held_name_goes_upstream_if_one_is_available() {
    let mut s = setup(B, 8);
    for k in 0..4 {
        s.tier_holds(&format!("/a/{k}"));
    }
    // Two lookups queue (the threshold is 2)...
    assert!(send(&mut s.e, 10, DOWN, interest("/a/0", 1, false)).is_empty());
    assert!(send(&mut s.e, 10, DOWN, interest("/a/1", 2, false)).is_empty());
    assert_eq!(s.lookups(), 2);
    // ...then the queue is at the threshold: the next goes upstream, not to the tier.
    let sent = send(&mut s.e, 10, DOWN, interest("/a/2", 3, false));
    assert_eq!(sent, [(UP, SendKind::Interest)]);
    assert_eq!(s.lookups(), 2);
    assert_eq!(s.bypass().queue_bypasses, 1);
    // A RAM hit is never bypassed.
    send(&mut s.e, 11, UP, data("/a/2"));
    assert_eq!(
        send(&mut s.e, 12, DOWN, interest("/a/2", 4, false)),
        [(DOWN, SendKind::Data)]
    );
    // No upstream available (the only next hop is where the Interest came from): it queues.
    let sent = send(&mut s.e, 13, UP, interest("/a/3", 5, false));
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(s.lookups(), 3);
    assert_eq!(s.bypass().queue_no_upstream, 1);
    // Neither without a route.
    s.tier_holds("/b/0");
    assert!(send(&mut s.e, 14, DOWN, interest("/b/0", 6, false)).is_empty());
    assert_eq!(s.bypass().queue_no_upstream, 2);
    s.fib.add_nexthop(&name("/b"), 3, 1).unwrap();
    s.tier_holds("/b/1");
    assert_eq!(
        send(&mut s.e, 15, DOWN, interest("/b/1", 7, false)),
        [(3, SendKind::Interest)]
    );
}

/// The paper's cases as switches (the I/O mode is the worker's, not the engine's): A and C
/// have no queue threshold, A and (here) D no filter. The same traffic: a name the tier holds
/// while its queue is long, and a name nobody holds.
#[test]
fn cases_a_to_d_are_switches_of_one_pipeline() {
    let cases = [
        (
            "A",
            Case {
                bloom: false,
                threshold: None,
            },
            (0, 0, 2),
        ),
        (
            "B",
            Case {
                bloom: true,
                threshold: Some(1),
            },
            (1, 1, 0),
        ),
        (
            "C",
            Case {
                bloom: true,
                threshold: None,
            },
            (1, 0, 1),
        ),
        (
            "D",
            Case {
                bloom: false,
                threshold: Some(1),
            },
            (0, 1, 1),
        ),
    ];
    for (label, case, (skips, bypasses, lookups)) in cases {
        let mut s = setup(case, 8);
        s.tier_holds("/a/queued");
        s.tier_holds("/a/held");
        // One lookup waits on the tier.
        assert!(send(&mut s.e, 10, DOWN, interest("/a/queued", 1, false)).is_empty());
        let held = send(&mut s.e, 11, DOWN, interest("/a/held", 2, false));
        let absent = send(&mut s.e, 12, DOWN, interest("/a/absent", 3, false));
        assert_eq!(absent, [(UP, SendKind::Interest)], "case {label}");
        let b = s.bypass();
        assert_eq!(
            (b.filter_skips, b.queue_bypasses, s.lookups() as u64 - 1),
            (skips, bypasses, lookups),
            "case {label}"
        );
        assert_eq!(held.is_empty(), bypasses == 0, "case {label}: {held:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Congestion control: plain ECN and NB-CC
// ---------------------------------------------------------------------------------------------

/// Another downstream.
const DOWN2: FaceId = 3;

/// One packet sent: face, kind, CongestionMark, NB-CC signal.
type Sent = (FaceId, SendKind, u64, Option<NbccSignal>);

fn sent_of(out: &engine::fw::pipeline::Output<'_>) -> Vec<Sent> {
    out.actions
        .iter()
        .map(|a| (a.face, a.kind, a.congestion_mark, a.nbcc))
        .collect()
}

/// Congestion control as the three choices of `cascade emulate --cc`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cc {
    None,
    Ecn,
    Nbcc,
}

/// Case B with the queue threshold at 1.
const B1: Case = Case {
    bloom: true,
    threshold: Some(1),
};

/// A case with congestion control (threshold 1), and its faces declared.
fn cc_setup(case: Case, cc: Cc) -> Setup {
    let mut s = setup(case, 8);
    s.e.set_congestion(CongestionConfig {
        ecn: cc != Cc::None,
        nbcc: cc == Cc::Nbcc,
        threshold: 1,
        interval_ms: 100,
        timeout_ms: 1000,
    });
    for f in [DOWN, UP, DOWN2] {
        s.e.set_face(f, FaceInfo::default());
    }
    s
}

impl Setup {
    fn full(&mut self, now: u64, face: FaceId, packet: Vec<u8>) -> Vec<Sent> {
        let out = self.e.process(now, &[(face, packet.as_slice())]);
        sent_of(&out)
    }
    /// The slow tier's read of `uri` completes with its Data.
    fn complete(&mut self, now: u64, uri: &str) -> Vec<Sent> {
        let w = name(uri).to_wire();
        let d = data(uri);
        self.tier.0.lock().unwrap().waiting -= 1;
        let out = self.e.complete_pending(now, hash(uri), &w[2..], Some(&d));
        sent_of(&out)
    }
    fn cc(&self) -> CongestionCounters {
        self.e.counters().congestion
    }
}

/// An IDLE LpPacket carrying `sig`.
fn idle(sig: NbccSignal) -> Vec<u8> {
    let mut v = Vec::new();
    sig.encode_idle(&mut v);
    v
}

/// The paper's cases with no congestion control, plain ECN and NB-CC: one lookup waits on
/// the tier (threshold 1, so the store is congested from the next batch on); then an Interest
/// for a name the tier holds and one for a name nobody holds. ECN marks both Data; NB-CC marks
/// only the held name's, and only where it could not bypass (no `aqm`); nothing marks without
/// congestion control. A held name bypasses exactly where `aqm` is on.
#[test]
fn which_data_are_marked_per_case_and_congestion_control() {
    let cases = [
        (
            "A",
            Case {
                bloom: false,
                threshold: None,
            },
        ),
        (
            "B",
            Case {
                bloom: true,
                threshold: Some(1),
            },
        ),
        (
            "C",
            Case {
                bloom: true,
                threshold: None,
            },
        ),
        (
            "D",
            Case {
                bloom: false,
                threshold: Some(1),
            },
        ),
    ];
    for (label, case) in cases {
        let aqm = case.threshold.is_some();
        for cc in [Cc::None, Cc::Ecn, Cc::Nbcc] {
            let mut s = cc_setup(case, cc);
            let what = format!("case {label}, {cc:?}");
            s.tier_holds("/a/queued");
            s.tier_holds("/a/held");
            assert!(s.full(10, DOWN, interest("/a/queued", 1, false)).is_empty());
            let held = s.full(11, DOWN, interest("/a/held", 2, false));
            assert_eq!(held.len(), usize::from(aqm), "{what}: {held:?}");
            let absent = s.full(12, DOWN, interest("/a/absent", 3, false));
            assert_eq!(absent.len(), 1, "{what}");
            // The Data of the held name: from upstream if it bypassed, else from the tier.
            let held_data = if aqm {
                s.full(13, UP, data("/a/held"))
            } else {
                s.complete(13, "/a/held")
            };
            let absent_data = s.full(14, UP, data("/a/absent"));
            let queued = s.complete(15, "/a/queued");
            let mark = |v: &[Sent]| {
                assert_eq!(
                    (v.len(), v[0].0, v[0].1),
                    (1, DOWN, SendKind::Data),
                    "{what}"
                );
                v[0].2 != 0
            };
            let expect_held = match cc {
                Cc::None => false,
                Cc::Ecn => true,
                Cc::Nbcc => !aqm,
            };
            assert_eq!(mark(&held_data), expect_held, "{what}: held");
            assert_eq!(mark(&absent_data), cc == Cc::Ecn, "{what}: absent");
            assert!(!mark(&queued), "{what}: queued before the congestion");
            let marked = u64::from(expect_held) + u64::from(cc == Cc::Ecn);
            assert_eq!(s.cc().data_marked, marked, "{what}");
        }
    }
}

/// A classic router reads its store blocking: the queue it congests on is the backlog in front
/// of the engine, which the worker reports. Plain ECN marks from that backlog as from reads
/// in flight, and not once the backlog has gone.
#[test]
fn a_blocking_routers_backlog_counts_in_the_storage_queue() {
    let a = Case {
        bloom: false,
        threshold: None,
    };
    let mut s = cc_setup(a, Cc::Ecn);
    s.e.set_waiting_before(1);
    let held = s.full(10, DOWN, interest("/a/one", 1, false));
    assert_eq!(held.len(), 1, "forwarded upstream: {held:?}");
    let marked = s.full(11, UP, data("/a/one"));
    assert_ne!(
        marked[0].2, 0,
        "marked while the backlog is past the threshold"
    );
    s.e.set_waiting_before(0);
    assert_eq!(s.full(12, DOWN, interest("/a/two", 2, false)).len(), 1);
    let unmarked = s.full(13, UP, data("/a/two"));
    assert_eq!(unmarked[0].2, 0, "not marked with no backlog");
    assert_eq!(s.cc().data_marked, 1);
    // NB-CC without a bypass (case A): an Interest that waits for the store behind the backlog
    // gets its Data marked.
    let mut s = cc_setup(a, Cc::Nbcc);
    s.tier_holds("/a/held");
    s.e.set_waiting_before(1);
    assert!(s.full(20, DOWN, interest("/a/held", 3, false)).is_empty());
    let held = s.complete(21, "/a/held");
    assert_ne!(held[0].2, 0, "marked: it waited behind the backlog");
    assert_eq!(s.cc().data_marked, 1);
}

/// Downstream under NB-CC: a Nack-α from the only upstream stops the bypass (the Interest
/// waits for the tier and its Data is marked), until a Nack-β or the timeout.
#[test]
fn a_nack_alpha_stops_the_bypass_until_a_nack_beta_or_the_timeout() {
    let mut s = cc_setup(B1, Cc::Nbcc);
    for k in 0..6 {
        s.tier_holds(&format!("/a/{k}"));
    }
    assert!(s.full(10, DOWN, interest("/a/0", 1, false)).is_empty());
    let sent = s.full(11, DOWN, interest("/a/1", 2, false));
    assert_eq!(sent, [(UP, SendKind::Interest, 0, None)], "bypassed");
    // The upstream's Nack-α (an IDLE LpPacket): the next held name waits for the tier.
    assert!(s.full(12, UP, idle(NbccSignal::Alpha)).is_empty());
    assert!(!s.e.bypass_available(UP, 12));
    assert_eq!(s.e.unavailable_faces(12), 1);
    assert!(s.full(13, DOWN, interest("/a/2", 3, false)).is_empty());
    let c = s.cc();
    assert_eq!(
        (c.alpha_received, c.faces_unavailable, c.bypass_unavailable),
        (1, 1, 1)
    );
    assert_eq!(s.bypass().queue_no_upstream, 1);
    let sent = s.complete(14, "/a/2");
    assert_eq!(
        (sent[0].0, sent[0].2),
        (DOWN, 1),
        "marked: no bypass was possible"
    );
    // A Nack-β on a Data (piggybacked): available again.
    let beta = LpPacket {
        nbcc: Some(NbccSignal::Beta),
        fragment: Some(data("/a/1")),
        ..LpPacket::default()
    };
    let sent = s.full(15, UP, beta.to_wire());
    assert_eq!(
        (sent[0].0, sent[0].2),
        (DOWN, 0),
        "the Data itself is forwarded"
    );
    assert_eq!(s.cc().beta_received, 1);
    assert_eq!(s.e.unavailable_faces(15), 0);
    let sent = s.full(16, DOWN, interest("/a/3", 4, false));
    assert_eq!(sent[0].0, UP, "bypassed again");
    // A Nack-α lapses after the timeout (1000 ms).
    s.full(20, UP, idle(NbccSignal::Alpha));
    assert!(s.full(1019, DOWN, interest("/a/4", 5, false)).is_empty());
    assert_eq!(
        (s.e.unavailable_faces(1019), s.e.unavailable_faces(1020)),
        (1, 0)
    );
    assert_eq!(s.full(1020, DOWN, interest("/a/5", 6, false))[0].0, UP);
    assert_eq!(s.cc().faces_unavailable, 2);
}

/// With several upstreams, a bypassed Interest goes to one that has sent no Nack-α (the
/// strategy's first choice is under one), and waits only when all are.
#[test]
fn a_bypass_takes_an_available_upstream() {
    let mut s = cc_setup(B1, Cc::Nbcc);
    s.fib.add_nexthop(&name("/a"), 4, 5).unwrap();
    s.e.set_face(4, FaceInfo::default());
    for k in 0..4 {
        s.tier_holds(&format!("/a/{k}"));
    }
    assert!(s.full(10, DOWN, interest("/a/0", 1, false)).is_empty());
    assert_eq!(
        s.full(11, DOWN, interest("/a/1", 2, false))[0].0,
        UP,
        "the cheaper one"
    );
    s.full(12, UP, idle(NbccSignal::Alpha));
    assert_eq!(s.full(13, DOWN, interest("/a/2", 3, false))[0].0, 4);
    s.full(14, 4, idle(NbccSignal::Alpha));
    assert!(s.full(15, DOWN, interest("/a/3", 4, false)).is_empty());
    assert_eq!(s.cc().bypass_unavailable, 1);
    // A face declared anew (a face id reused) starts available.
    s.e.set_face(UP, FaceInfo::default());
    assert!(s.e.bypass_available(UP, 16) && !s.e.bypass_available(4, 16));
}

/// Upstream under NB-CC: while its queue is past the threshold, each downstream gets a
/// Nack-α on its next Data, once per round and a new round every interval; when the queue
/// falls below, a Nack-β, but only to a face that had the Nack-α.
#[test]
fn nack_alpha_rounds_then_one_nack_beta() {
    let mut s = cc_setup(B1, Cc::Nbcc);
    s.tier_holds("/a/queued");
    assert!(s.full(10, DOWN, interest("/a/queued", 1, false)).is_empty());
    let fetch = |s: &mut Setup, now: u64, face: FaceId, k: u32| {
        let uri = format!("/a/x{k}");
        s.full(now, face, interest(&uri, 100 + k, false));
        let sent = s.full(now + 1, UP, data(&uri));
        assert_eq!((sent.len(), sent[0].0), (1, face));
        sent[0].3
    };
    // Round 1 begins with the first batch that sees the queue past the threshold.
    assert_eq!(fetch(&mut s, 20, DOWN, 0), Some(NbccSignal::Alpha));
    assert_eq!(fetch(&mut s, 30, DOWN, 1), None, "once per round");
    assert_eq!(fetch(&mut s, 40, DOWN2, 2), Some(NbccSignal::Alpha));
    // Round 2: an interval (100 ms) after round 1 began (the Data goes out at `now + 1`).
    assert_eq!(fetch(&mut s, 118, DOWN, 3), None);
    assert_eq!(fetch(&mut s, 121, DOWN, 4), Some(NbccSignal::Alpha));
    assert_eq!(s.cc().alpha_sent, 3);
    // The queue drains: the next batch starts a Nack-β round. DOWN2 had round 1's Nack-α, so
    // it gets the Nack-β too; a face that never had a Nack-α gets nothing.
    s.complete(130, "/a/queued");
    s.e.set_face(5, FaceInfo::default());
    assert_eq!(fetch(&mut s, 140, 5, 5), None);
    assert_eq!(fetch(&mut s, 150, DOWN, 6), Some(NbccSignal::Beta));
    assert_eq!(fetch(&mut s, 160, DOWN, 7), None);
    assert_eq!(fetch(&mut s, 170, DOWN2, 8), Some(NbccSignal::Beta));
    let c = s.cc();
    assert_eq!((c.alpha_sent, c.beta_sent), (3, 2));
    // Plain ECN sends no signals.
    let mut e = cc_setup(B1, Cc::Ecn);
    e.tier_holds("/a/queued");
    e.full(10, DOWN, interest("/a/queued", 1, false));
    assert_eq!(fetch(&mut e, 20, DOWN, 9), None);
    assert_eq!(e.cc().alpha_sent, 0);
}

/// A forwarder that runs without NB-CC takes a packet carrying the field like any other: it
/// forwards the Data (unmarked, the signal not passed on), counts the signals, and keeps
/// bypassing to the upstream that sent them.
#[test]
fn without_nbcc_the_field_is_read_and_ignored() {
    let mut s = cc_setup(B1, Cc::None);
    for k in 0..3 {
        s.tier_holds(&format!("/a/{k}"));
    }
    assert!(s.full(10, DOWN, interest("/a/0", 1, false)).is_empty());
    assert_eq!(s.full(11, DOWN, interest("/a/1", 2, false))[0].0, UP);
    let alpha = LpPacket {
        nbcc: Some(NbccSignal::Alpha),
        fragment: Some(data("/a/1")),
        ..LpPacket::default()
    };
    assert_eq!(
        s.full(12, UP, alpha.to_wire()),
        [(DOWN, SendKind::Data, 0, None)]
    );
    assert!(s.full(13, UP, idle(NbccSignal::Alpha)).is_empty());
    assert!(s.e.bypass_available(UP, 13));
    assert_eq!(s.full(14, DOWN, interest("/a/2", 3, false))[0].0, UP);
    assert_eq!(s.cc().alpha_received, 2);
    assert_eq!(
        s.e.counters().drops.iter().sum::<u64>(),
        0,
        "nothing dropped"
    );
}

/// Upstream under NB-CC, to downstreams no Data goes to: a downstream whose Interests bypass
/// (their Data not back yet) or that sent one long enough ago gets each round's signal alone,
/// on an IDLE LpPacket, half an interval after the round began — the Nack-α rounds, then the
/// Nack-β — once per face and round; a local face (an application) gets none, and a face that
/// has sent no Interest for `timeout_ms` and had its Nack-β is forgotten.
#[test]
fn downstreams_without_data_get_the_signals_on_idle_packets() {
    let mut s = cc_setup(B1, Cc::Nbcc);
    const APP: FaceId = 5;
    s.e.set_face(
        APP,
        FaceInfo {
            local: true,
            ..FaceInfo::default()
        },
    );
    s.tier_holds("/a/queued");
    assert!(s.full(10, DOWN, interest("/a/queued", 1, false)).is_empty());
    // Round 1 (a Nack-α) begins at 20; DOWN2's held names bypass to the upstream.
    for (k, now) in [20u64, 40, 60].into_iter().enumerate() {
        let uri = format!("/a/held{k}");
        s.tier_holds(&uri);
        let sent = s.full(now, DOWN2, interest(&uri, 10 + k as u32, false));
        assert_eq!(sent, [(UP, SendKind::Interest, 0, None)], "{uri} bypassed");
    }
    assert_eq!(s.full(61, APP, interest("/a/absent", 20, false))[0].0, UP);
    let tick = |s: &mut Setup, now: u64| sent_of(&s.e.tick(now));
    assert!(tick(&mut s, 69).is_empty(), "a Data may still carry it");
    let alpha = |f| (f, SendKind::Idle, 0, Some(NbccSignal::Alpha));
    assert_eq!(tick(&mut s, 70), [alpha(DOWN), alpha(DOWN2)]);
    assert!(tick(&mut s, 80).is_empty(), "once per round");
    let d = s.full(90, UP, data("/a/held0"));
    assert_eq!(d, [(DOWN2, SendKind::Data, 0, None)], "had this round's");
    // Round 2 begins at the first look past the interval (120).
    assert!(tick(&mut s, 120).is_empty() && tick(&mut s, 169).is_empty());
    assert_eq!(tick(&mut s, 170), [alpha(DOWN), alpha(DOWN2)]);
    // The queue drains (DOWN's Data carries nothing: it had round 2's): a Nack-β round.
    assert_eq!(
        s.complete(180, "/a/queued"),
        [(DOWN, SendKind::Data, 0, None)]
    );
    assert!(tick(&mut s, 190).is_empty() && tick(&mut s, 239).is_empty());
    let beta = |f| (f, SendKind::Idle, 0, Some(NbccSignal::Beta));
    assert_eq!(tick(&mut s, 240), [beta(DOWN), beta(DOWN2)]);
    assert!(tick(&mut s, 300).is_empty());
    let c = s.cc();
    assert_eq!((c.alpha_sent, c.beta_sent, c.idle_sent), (4, 2, 6));
    // Congested again long after the last Interests from DOWN and DOWN2: no Nack-α to them,
    // nor to the application whose Interest queues.
    s.tier_holds("/a/q2");
    assert!(s.full(1500, APP, interest("/a/q2", 30, false)).is_empty());
    for now in [1510, 1560, 1600, 1700] {
        assert!(tick(&mut s, now).is_empty(), "at {now}");
    }
    assert_eq!(s.cc().idle_sent, 6);
}

/// A downstream that has Data from this engine within the round gets the signal on it and no
/// IDLE packet; one that had none gets exactly one IDLE packet in the round, however many
/// batches and ticks go by.
#[test]
fn a_signal_on_data_takes_the_place_of_the_idle_packet() {
    let mut s = cc_setup(B1, Cc::Nbcc);
    s.tier_holds("/a/queued");
    assert!(s.full(10, DOWN, interest("/a/queued", 1, false)).is_empty());
    assert_eq!(s.full(20, DOWN2, interest("/a/x", 2, false))[0].0, UP);
    let sent = s.full(30, UP, data("/a/x"));
    assert_eq!(sent, [(DOWN2, SendKind::Data, 0, Some(NbccSignal::Alpha))]);
    let mut idle = Vec::new();
    for now in (40..120).step_by(5) {
        let sent = s.full(now, UP, data("/a/unsolicited"));
        idle.extend(sent.into_iter().chain(sent_of(&s.e.tick(now + 1))));
    }
    assert_eq!(
        idle,
        [(DOWN, SendKind::Idle, 0, Some(NbccSignal::Alpha))],
        "DOWN alone, once"
    );
    assert_eq!(s.cc().idle_sent, 1);
}
