//! Handing a pending CanBePrefix Interest on to another engine ([`Engine::hand_on_pending`],
//! [`Engine::process_handed_on`]): the engine that takes it treats it as the Interest its
//! downstream sent to the first one — link fields, lifetime, one count — and a hand-over
//! refused partway leaves the downstreams handed on before to the other engine alone.

use std::sync::Arc;

use engine::fw::pipeline::{Engine, EngineConfig, FaceInfo, SendKind, SlowTier};
use engine::hash::{name_hash, HashKey};
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId, PitCsConfig};
use wire::{Data, Interest, InterestView, Limits, LpPacket, Name};

const KEY: HashKey = HashKey::fixed(0x1234, 0x5678);

/// A slower tier that answers "pending" for every lookup of a name under `/t`.
struct Tier;

impl SlowTier for Tier {
    fn lookup(&mut self, _full_hash: u64, name_value: &[u8]) -> bool {
        name_value.get(2) == Some(&b't')
    }
}

fn engine(tier: bool) -> (Engine, Arc<Fib>) {
    let fib = Arc::new(Fib::new(KEY, 256, 2));
    let config = EngineConfig {
        pit_cs: PitCsConfig {
            pit_capacity: 256,
            cs_capacity: 256,
            cs_policy: CsPolicy::Lru,
            max_in_records: 8,
            max_out_records: 8,
        },
        dead_nonce_capacity: 256,
        ..EngineConfig::default()
    };
    let mut e = Engine::new(KEY, fib.clone(), config);
    if tier {
        e.set_slow_tier(Box::new(Tier));
    }
    fib.add_nexthop(&name("/t"), 2, 1).unwrap();
    (e, fib)
}

fn name(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

/// A CanBePrefix Interest with a lifetime of 1 s.
fn cbp(uri: &str, nonce: u32) -> Vec<u8> {
    Interest {
        lifetime_ms: Some(1000),
        can_be_prefix: true,
        ..Interest::new(name(uri), nonce.to_be_bytes())
    }
    .to_wire()
}

fn lp(fragment: Vec<u8>, f: impl FnOnce(&mut LpPacket)) -> Vec<u8> {
    let mut p = LpPacket {
        fragment: Some(fragment),
        ..LpPacket::default()
    };
    f(&mut p);
    p.to_wire()
}

/// An action with its bytes copied out.
#[derive(Debug, Clone, PartialEq)]
struct Sent {
    face: FaceId,
    kind: SendKind,
    bytes: Vec<u8>,
    token: Option<Vec<u8>>,
}

fn collect(out: &engine::fw::pipeline::Output<'_>, inputs: &[(FaceId, &[u8])]) -> Vec<Sent> {
    out.actions
        .iter()
        .map(|a| Sent {
            face: a.face,
            kind: a.kind,
            bytes: out.bytes(a, inputs).to_vec(),
            token: out.pit_token(a).map(<[u8]>::to_vec),
        })
        .collect()
}

fn run(e: &mut Engine, now: u64, face: FaceId, bytes: &[u8]) -> Vec<Sent> {
    let inputs = [(face, bytes)];
    let out = e.process(now, &inputs);
    collect(&out, &inputs)
}

/// One handed-on Interest as the router passes it on: the stored Interest in an LpPacket with
/// the downstream's PIT token and the NextHopFaceId, from the downstream's face.
#[derive(Debug, Clone, PartialEq)]
struct Taken {
    face: FaceId,
    token: Option<Vec<u8>>,
    next_hop: Option<FaceId>,
    left_ms: u64,
    interest: Vec<u8>,
}

impl Taken {
    fn link(&self) -> Vec<u8> {
        lp(self.interest.clone(), |p| {
            p.pit_token = self.token.clone();
            p.next_hop_face_id = self.next_hop.map(u64::from);
        })
    }

    fn nonce(&self) -> [u8; 4] {
        let i = InterestView::decode(&self.interest, &Limits::default()).unwrap();
        i.nonce().unwrap()
    }
}

/// Completes the slower tier's lookup of `uri` without data after handing its Interests on,
/// `room` of them at most: the Interests taken, then what the completion sent.
fn miss_and_hand_on(e: &mut Engine, now: u64, uri: &str, room: usize) -> (Vec<Taken>, Vec<Sent>) {
    let n = name(uri);
    let value = n.to_wire()[2..].to_vec();
    let hash = name_hash(KEY, &n);
    let mut taken = Vec::new();
    e.hand_on_pending(now, hash, &value, |h| {
        if taken.len() == room {
            return false;
        }
        taken.push(Taken {
            face: h.face,
            token: h.pit_token.map(<[u8]>::to_vec),
            next_hop: h.next_hop,
            left_ms: h.lifetime_left_ms,
            interest: h.interest.to_vec(),
        });
        true
    });
    let out = e.complete_pending(now, hash, &value, None);
    let sent = collect(&out, &[]);
    e.table().check_invariants().unwrap();
    (taken, sent)
}

/// Runs handed-on Interests through an engine as the router's receiving worker does.
fn take(e: &mut Engine, now: u64, taken: &[Taken]) -> Vec<Sent> {
    let links: Vec<Vec<u8>> = taken.iter().map(Taken::link).collect();
    let inputs: Vec<(FaceId, &[u8])> = taken
        .iter()
        .zip(&links)
        .map(|(t, l)| (t.face, l.as_slice()))
        .collect();
    let left: Vec<u64> = taken.iter().map(|t| t.left_ms).collect();
    let out = e.process_handed_on(now, &inputs, &[], &left);
    let sent = collect(&out, &inputs);
    e.table().check_invariants().unwrap();
    sent
}

fn local_fields() -> FaceInfo {
    FaceInfo {
        local: true,
        local_fields: true,
        ..FaceInfo::default()
    }
}

#[test]
fn a_parked_interest_keeps_its_next_hop_face_id_here_and_at_the_engine_it_is_handed_on_to() {
    // One engine: a parked Interest that misses goes to its NextHopFaceId (NFD's
    // onContentStoreMiss), not to the FIB's next hop.
    let (mut a, _fib) = engine(true);
    a.set_face(1, local_fields());
    let with_hop = |nonce| lp(cbp("/t/x", nonce), |p| p.next_hop_face_id = Some(7));
    assert!(run(&mut a, 1000, 1, &with_hop(1)).is_empty());
    let n = name("/t/x");
    let out = a.complete_pending(1001, name_hash(KEY, &n), &n.to_wire()[2..], None);
    let sent = collect(&out, &[]);
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (7, SendKind::Interest));

    // Handed on: the Interest carries it, and the engine that takes it forwards there.
    let (mut a, _fib) = engine(true);
    a.set_face(1, local_fields());
    assert!(run(&mut a, 1000, 1, &with_hop(2)).is_empty());
    let (taken, sent) = miss_and_hand_on(&mut a, 1001, "/t/x", usize::MAX);
    assert!(sent.is_empty());
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].next_hop, Some(7));
    let (mut b, _fib) = engine(false);
    b.set_face(1, local_fields());
    let sent = take(&mut b, 1001, &taken);
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (7, SendKind::Interest));
}

#[test]
fn a_handed_on_interest_expires_when_it_would_have_at_the_first_engine() {
    let (mut a, _fib) = engine(true);
    // Lifetime 1 s from 1000: its in-record here expires at 2000.
    assert!(run(&mut a, 1000, 1, &cbp("/t/x", 1)).is_empty());
    let (taken, _) = miss_and_hand_on(&mut a, 1600, "/t/x", usize::MAX);
    assert_eq!(taken[0].left_ms, 400);
    assert_eq!(a.table().pit_len(), 0);
    let (mut b, _fib) = engine(false);
    let sent = take(&mut b, 1600, &taken);
    assert_eq!((sent[0].face, sent[0].kind), (2, SendKind::Interest));
    b.advance(1950);
    assert_eq!(b.table().pit_len(), 1);
    // Not at 2600 (a lifetime restarted at the hand-over): by 2000 and a wheel tick.
    b.advance(2020);
    assert_eq!(b.table().pit_len(), 0);
    assert_eq!(b.counters().unsatisfied, 1);
    // A Data after that is unsolicited.
    let d = Data::new(name("/t/x/1"), vec![1]).to_wire();
    assert!(run(&mut b, 2030, 2, &d).is_empty());
}

#[test]
fn a_handed_on_interest_counts_once_as_incoming() {
    let (mut a, _fib) = engine(true);
    assert!(run(&mut a, 1000, 1, &cbp("/t/x", 1)).is_empty());
    let (taken, _) = miss_and_hand_on(&mut a, 1001, "/t/x", usize::MAX);
    let (mut b, _fib) = engine(true);
    assert!(take(&mut b, 1001, &taken).is_empty(), "parked on b's tier");
    assert_eq!(a.counters().in_interests, 1);
    assert_eq!(
        (b.counters().in_interests, b.counters().handed_on_in),
        (0, 1)
    );
    // Handed on again, to a third engine: still one Interest in.
    let (taken, _) = miss_and_hand_on(&mut b, 1002, "/t/x", usize::MAX);
    let (mut c, _fib) = engine(false);
    assert_eq!(take(&mut c, 1002, &taken).len(), 1);
    let ins = [&a, &b, &c].map(|e| e.counters().in_interests);
    assert_eq!(ins.iter().sum::<u64>(), 1);
    assert_eq!(c.counters().handed_on_in, 1);
    // An Interest from a face after a hand-on batch counts as incoming again.
    assert_eq!(run(&mut c, 1003, 4, &cbp("/t/y", 9)).len(), 1);
    assert_eq!(c.counters().in_interests, 1);
}

#[test]
fn a_hand_over_refused_partway_leaves_the_downstreams_handed_on_to_the_other_engine() {
    let (mut a, _fib) = engine(true);
    let with_token = |nonce, t: u8| lp(cbp("/t/x", nonce), |p| p.pit_token = Some(vec![t]));
    assert!(run(&mut a, 1000, 1, &with_token(1, 0xA1)).is_empty());
    assert!(run(&mut a, 1000, 3, &with_token(3, 0xA3)).is_empty());
    assert!(run(&mut a, 1000, 4, &with_token(4, 0xA4)).is_empty());
    // Room for one: face 1's Interest goes, the ring is full for face 3's.
    let (taken, sent) = miss_and_hand_on(&mut a, 1001, "/t/x", 1);
    assert_eq!(taken.len(), 1);
    assert_eq!((taken[0].face, taken[0].nonce()), (1, 1u32.to_be_bytes()));
    assert_eq!(taken[0].token.as_deref(), Some(&[0xA1][..]));
    // The entry stays and goes upstream for faces 3 and 4, with a nonce of theirs (face 1's
    // goes upstream from the other engine).
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (2, SendKind::Interest));
    let up = InterestView::decode(&sent[0].bytes, &Limits::default()).unwrap();
    assert_eq!(up.nonce(), Some(3u32.to_be_bytes()));
    // The Data answers faces 3 and 4 here, face 1 only from the other engine.
    let d = Data::new(name("/t/x/1"), vec![1]).to_wire();
    let sent = run(&mut a, 1002, 2, &d);
    let mut faces: Vec<FaceId> = sent.iter().map(|s| s.face).collect();
    faces.sort_unstable();
    assert_eq!(faces, [3, 4]);
    let (mut b, _fib) = engine(false);
    assert_eq!(take(&mut b, 1001, &taken).len(), 1);
    let sent = run(&mut b, 1002, 2, &d);
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].face, sent[0].token.as_deref()),
        (1, Some(&[0xA1][..]))
    );
    assert_eq!(a.table().pit_len() + b.table().pit_len(), 0);
}
