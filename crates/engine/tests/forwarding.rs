//! Behavioural tests of the forwarding pipeline: one test per forwarding rule.
//!
//! Every test drives [`Engine::process`] with real encoded packets (built with the `wire` crate's
//! owned types) and checks the exact actions that come out — destination face, kind, the bytes
//! decoded back, PIT tokens and congestion marks — and the drop counters.

use std::sync::{Arc, Mutex};

use engine::fw::pipeline::{
    DropReason, Engine, EngineConfig, FaceInfo, SendKind, SlowTier, MAX_BATCH,
};
use engine::fw::strategy::StrategyKind;
use engine::hash::{name_hash, HashKey};
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId, PitCsConfig};
use wire::lp::{NackReason, CACHE_POLICY_NO_CACHE};
use wire::{Data, DataView, Interest, InterestView, Limits, LpPacket, MetaInfo, Name, Packet};

const KEY: HashKey = HashKey::fixed(0x1234, 0x5678);

// ------------------------------------------------------------------------------------ helpers

fn small_config() -> EngineConfig {
    EngineConfig {
        pit_cs: PitCsConfig {
            pit_capacity: 256,
            cs_capacity: 256,
            cs_policy: CsPolicy::Lru,
            max_in_records: 8,
            max_out_records: 8,
        },
        dead_nonce_capacity: 256,
        ..EngineConfig::default()
    }
}

fn engine_with(config: EngineConfig) -> (Engine, Arc<Fib>) {
    let fib = Arc::new(Fib::new(KEY, 256, 2));
    (Engine::new(KEY, fib.clone(), config), fib)
}

fn engine() -> (Engine, Arc<Fib>) {
    engine_with(small_config())
}

fn name(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

fn route(fib: &Fib, prefix: &str, face: FaceId, cost: u32) {
    fib.add_nexthop(&name(prefix), face, cost).unwrap();
}

fn interest(uri: &str, nonce: u32) -> Interest {
    Interest {
        lifetime_ms: Some(1000),
        ..Interest::new(name(uri), nonce.to_be_bytes())
    }
}

fn wire_of(i: &Interest) -> Vec<u8> {
    i.to_wire()
}

fn data_packet(uri: &str, content: &[u8], freshness_ms: Option<u64>) -> Data {
    let mut d = Data::new(name(uri), content.to_vec());
    d.meta_info = freshness_ms.map(|f| MetaInfo {
        freshness_ms: Some(f),
        ..MetaInfo::default()
    });
    d.sign_digest_sha256();
    d
}

fn data(uri: &str, freshness_ms: Option<u64>) -> Vec<u8> {
    data_packet(uri, uri.as_bytes(), freshness_ms).to_wire()
}

fn nack(interest_wire: &[u8], reason: NackReason) -> Vec<u8> {
    LpPacket::nack(interest_wire.to_vec(), reason).to_wire()
}

fn lp(fragment: Vec<u8>, f: impl FnOnce(&mut LpPacket)) -> Vec<u8> {
    let mut p = LpPacket {
        fragment: Some(fragment),
        ..LpPacket::default()
    };
    f(&mut p);
    p.to_wire()
}

/// An action with its bytes copied out of the engine.
#[derive(Debug, Clone, PartialEq)]
struct Sent {
    face: FaceId,
    kind: SendKind,
    bytes: Vec<u8>,
    token: Option<Vec<u8>>,
    mark: u64,
}

impl Sent {
    fn interest(&self) -> Interest {
        assert!(
            matches!(self.kind, SendKind::Interest | SendKind::Nack(_)),
            "{self:?}"
        );
        let v = InterestView::decode(&self.bytes, &Limits::default()).unwrap();
        v.to_interest()
    }

    fn data(&self) -> Data {
        assert_eq!(self.kind, SendKind::Data);
        DataView::decode(&self.bytes, &Limits::default())
            .unwrap()
            .to_data()
    }
}

fn run(e: &mut Engine, now: u64, inputs: &[(FaceId, Vec<u8>)]) -> Vec<Sent> {
    run_with_hashes(e, now, inputs, &[])
}

/// One batch through [`Engine::process_hashed`] (no hashes: [`Engine::process`]).
fn run_with_hashes(
    e: &mut Engine,
    now: u64,
    inputs: &[(FaceId, Vec<u8>)],
    hashes: &[Option<u64>],
) -> Vec<Sent> {
    let refs: Vec<(FaceId, &[u8])> = inputs.iter().map(|(f, b)| (*f, b.as_slice())).collect();
    let out = e.process_hashed(now, &refs, hashes);
    let sent = out
        .actions
        .iter()
        .map(|a| Sent {
            face: a.face,
            kind: a.kind,
            bytes: out.bytes(a, &refs).to_vec(),
            token: out.pit_token(a).map(<[u8]>::to_vec),
            mark: a.congestion_mark,
        })
        .collect();
    e.table().check_invariants().unwrap();
    sent
}

fn run1(e: &mut Engine, now: u64, face: FaceId, bytes: Vec<u8>) -> Vec<Sent> {
    run(e, now, &[(face, bytes)])
}

fn drops(e: &Engine, r: DropReason) -> u64 {
    e.counters().drops[r.index()]
}

fn faces_of(sent: &[Sent]) -> Vec<FaceId> {
    let mut f: Vec<FaceId> = sent.iter().map(|s| s.face).collect();
    f.sort_unstable();
    f
}

fn local() -> FaceInfo {
    FaceInfo {
        local: true,
        ..FaceInfo::default()
    }
}

fn multi_access() -> FaceInfo {
    FaceInfo {
        multi_access: true,
        ..FaceInfo::default()
    }
}

// ---------------------------------------------------------------------------------- the rules

#[test]
fn interest_follows_fib_route_and_data_returns_and_is_cached() {
    let (mut e, fib) = engine();
    route(&fib, "/a", 2, 10);
    let i = wire_of(&interest("/a/b", 1));
    let sent = run1(&mut e, 1000, 1, i.clone());
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (2, SendKind::Interest));
    // No HopLimit: the Interest goes on unchanged.
    assert_eq!(sent[0].bytes, i);
    assert_eq!(sent[0].token, None);
    assert_eq!(e.table().pit_len(), 1);

    let d = data("/a/b", Some(10_000));
    let sent = run1(&mut e, 1010, 2, d.clone());
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (1, SendKind::Data));
    assert_eq!(sent[0].bytes, d);
    assert_eq!(sent[0].data().name, name("/a/b"));
    assert_eq!(e.table().pit_len(), 0);
    assert_eq!(e.table().cs_len(), 1);
    assert_eq!(e.counters().satisfied, 1);

    // A second Interest is answered from the CS; nothing goes upstream.
    let sent = run1(&mut e, 1020, 3, wire_of(&interest("/a/b", 2)));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (3, SendKind::Data));
    assert_eq!(sent[0].bytes, d);
    assert_eq!(e.counters().out_interests, 1);
    assert_eq!(e.table().counters.cs_hits, 1);
    assert_eq!(e.table().pit_len(), 0);
}

#[test]
fn interests_from_two_downstreams_are_aggregated() {
    let (mut e, fib) = engine();
    route(&fib, "/a", 3, 10);
    let sent = run1(&mut e, 1000, 1, wire_of(&interest("/a/x", 1)));
    assert_eq!(faces_of(&sent), [3]);
    // The same Interest from another downstream, 1 ms later: aggregated, nothing upstream.
    let sent = run1(&mut e, 1001, 2, wire_of(&interest("/a/x", 2)));
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(e.table().pit_len(), 1);
    assert_eq!(e.counters().out_interests, 1);

    let d = data("/a/x", None);
    let sent = run1(&mut e, 1005, 3, d.clone());
    assert_eq!(faces_of(&sent), [1, 2]);
    assert!(sent
        .iter()
        .all(|s| s.kind == SendKind::Data && s.bytes == d));
    assert_eq!(e.table().pit_len(), 0);

    // Two downstreams in one batch behave the same.
    let sent = run(
        &mut e,
        2000,
        &[
            (1, wire_of(&interest("/a/y", 3))),
            (2, wire_of(&interest("/a/y", 4))),
        ],
    );
    assert_eq!(faces_of(&sent), [3]);
    let sent = run1(&mut e, 2001, 3, data("/a/y", None));
    assert_eq!(faces_of(&sent), [1, 2]);
}

#[test]
fn no_route_nacks_the_downstream_but_not_on_a_multi_access_face() {
    let (mut e, fib) = engine();
    e.set_face(4, multi_access());
    route(&fib, "/only-back", 1, 1);
    let i = wire_of(&interest("/z/1", 1));
    let sent = run1(&mut e, 1000, 1, i.clone());
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].face, sent[0].kind),
        (1, SendKind::Nack(NackReason::NoRoute))
    );
    assert_eq!(sent[0].bytes, i);
    assert_eq!(drops(&e, DropReason::NoRoute), 1);
    assert_eq!(e.table().pit_len(), 0);
    assert_eq!(e.table().names_len(), 0);

    // A route whose only next hop is the incoming face is no route.
    let sent = run1(&mut e, 1001, 1, wire_of(&interest("/only-back/x", 2)));
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].kind, SendKind::Nack(NackReason::NoRoute));

    // Multi-access downstream: no Nack, but still counted.
    let sent = run1(&mut e, 1002, 4, wire_of(&interest("/z/2", 3)));
    assert!(sent.is_empty());
    assert_eq!(drops(&e, DropReason::NoRoute), 3);
    assert_eq!(e.table().pit_len(), 0);
}

#[test]
fn duplicate_nonce_from_another_face_is_nacked_duplicate() {
    let (mut e, fib) = engine();
    route(&fib, "/a", 3, 1);
    let i = wire_of(&interest("/a/d", 7));
    assert_eq!(faces_of(&run1(&mut e, 1000, 1, i.clone())), [3]);
    let sent = run1(&mut e, 1050, 2, i.clone());
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].face, sent[0].kind),
        (2, SendKind::Nack(NackReason::Duplicate))
    );
    assert_eq!(sent[0].bytes, i);
    assert_eq!(drops(&e, DropReason::Loop), 1);
    // The looping face got no in-record: Data goes to the first downstream only.
    let sent = run1(&mut e, 1060, 3, data("/a/d", None));
    assert_eq!(faces_of(&sent), [1]);
}

#[test]
fn same_nonce_from_the_same_point_to_point_face_is_a_retransmission_not_a_loop() {
    let (mut e, fib) = engine();
    route(&fib, "/a", 3, 1);
    route(&fib, "/a", 4, 2);
    let i = wire_of(&interest("/a/r", 7));
    assert_eq!(faces_of(&run1(&mut e, 1000, 1, i.clone())), [3]);
    // Within the suppression interval: suppressed, not Nacked.
    assert!(run1(&mut e, 1005, 1, i.clone()).is_empty());
    assert_eq!(drops(&e, DropReason::Loop), 0);
    assert_eq!(drops(&e, DropReason::Suppressed), 1);
    // After it: forwarded to the next unused next hop.
    assert_eq!(faces_of(&run1(&mut e, 1020, 1, i.clone())), [4]);
    assert_eq!(drops(&e, DropReason::Loop), 0);
    // On a multi-access face the same nonce from the same face is a loop.
    e.set_face(5, multi_access());
    let j = wire_of(&interest("/a/m", 9));
    assert_eq!(faces_of(&run1(&mut e, 2000, 5, j.clone())), [3]);
    assert!(run1(&mut e, 2050, 5, j).is_empty());
    assert_eq!(drops(&e, DropReason::Loop), 1);
}

#[test]
fn dead_nonce_list_catches_loops_for_its_lifetime_after_the_pit_entry_expired() {
    let (mut e, fib) = engine();
    route(&fib, "/a", 2, 1);
    let i = Interest {
        lifetime_ms: Some(100),
        ..interest("/a/loop", 9)
    };
    let i = wire_of(&i);
    assert_eq!(faces_of(&run1(&mut e, 1000, 1, i.clone())), [2]);
    e.advance(1100);
    assert_eq!(e.table().pit_len(), 0);
    assert_eq!(e.counters().unsatisfied, 1);

    // The same name and nonce, back from another face: a loop.
    let sent = run1(&mut e, 1200, 3, i.clone());
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].face, sent[0].kind),
        (3, SendKind::Nack(NackReason::Duplicate))
    );
    assert_eq!(drops(&e, DropReason::Loop), 1);
    // Another nonce for the same name is not.
    let other = Interest {
        lifetime_ms: Some(100),
        ..interest("/a/loop", 10)
    };
    assert_eq!(faces_of(&run1(&mut e, 1200, 3, wire_of(&other))), [2]);
    e.advance(1300);

    // Still dead just before 6 s after it entered the list...
    let sent = run1(&mut e, 1100 + 5999, 3, i.clone());
    assert_eq!(sent[0].kind, SendKind::Nack(NackReason::Duplicate));
    assert_eq!(drops(&e, DropReason::Loop), 2);
    // ...and forgotten after.
    let sent = run1(&mut e, 1100 + 6000, 3, i.clone());
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (2, SendKind::Interest));
    assert_eq!(drops(&e, DropReason::Loop), 2);
}

#[test]
fn hop_limit_is_checked_and_decremented() {
    let (mut e, fib) = engine();
    e.set_face(5, local());
    route(&fib, "/a", 2, 1);
    route(&fib, "/a", 5, 10);
    route(&fib, "/b", 2, 1);
    let with_hops = |uri: &str, nonce: u32, h: u8| Interest {
        hop_limit: Some(h),
        ..interest(uri, nonce)
    };

    // HopLimit 0: dropped.
    assert!(run1(&mut e, 1000, 1, wire_of(&with_hops("/a/0", 1, 0))).is_empty());
    assert_eq!(drops(&e, DropReason::HopLimit), 1);
    assert_eq!(e.table().pit_len(), 0);

    // HopLimit 2: forwarded (to the cheaper, non-local next hop) with HopLimit 1.
    let orig = with_hops("/a/2", 2, 2);
    let sent = run1(&mut e, 1000, 1, wire_of(&orig));
    assert_eq!(faces_of(&sent), [2]);
    let fwd = sent[0].interest();
    assert_eq!(fwd.hop_limit, Some(1));
    assert_eq!(
        fwd,
        Interest {
            hop_limit: Some(1),
            ..orig
        }
    );

    // HopLimit 1: reaches 0, so only local faces.
    let sent = run1(&mut e, 1000, 1, wire_of(&with_hops("/a/1", 3, 1)));
    assert_eq!(faces_of(&sent), [5]);
    assert_eq!(sent[0].interest().hop_limit, Some(0));

    // HopLimit 1 and only a non-local route: nothing goes out, the downstream gets NoRoute.
    let sent = run1(&mut e, 1000, 1, wire_of(&with_hops("/b/1", 4, 1)));
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].face, sent[0].kind),
        (1, SendKind::Nack(NackReason::NoRoute))
    );
}

#[test]
fn localhost_is_confined_to_local_faces() {
    let (mut e, fib) = engine();
    e.set_face(5, local());
    e.set_face(6, local());
    route(&fib, "/localhost", 2, 1); // non-local, cheaper
    route(&fib, "/localhost", 6, 5);
    route(&fib, "/localhost/remote-only", 2, 1);
    e.strategies_mut()
        .set(&name("/localhost/mc"), StrategyKind::Multicast);

    // From a non-local face: dropped.
    assert!(run1(&mut e, 1000, 1, wire_of(&interest("/localhost/x", 1))).is_empty());
    assert_eq!(drops(&e, DropReason::Scope), 1);
    assert_eq!(e.table().pit_len(), 0);

    // From a local face: to the local next hop only.
    let sent = run1(&mut e, 1000, 5, wire_of(&interest("/localhost/x", 2)));
    assert_eq!(faces_of(&sent), [6]);
    let sent = run1(&mut e, 1000, 5, wire_of(&interest("/localhost/mc/x", 3)));
    assert_eq!(faces_of(&sent), [6]);
    // No local next hop: NoRoute, and nothing to the non-local face.
    let sent = run1(
        &mut e,
        1000,
        5,
        wire_of(&interest("/localhost/remote-only/x", 4)),
    );
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].face, sent[0].kind),
        (5, SendKind::Nack(NackReason::NoRoute))
    );

    // Not even NextHopFaceId sends /localhost out of a non-local face.
    let i = lp(wire_of(&interest("/localhost/nh", 5)), |p| {
        p.next_hop_face_id = Some(2)
    });
    let sent = run1(&mut e, 1000, 5, i);
    assert!(sent.iter().all(|s| s.face != 2), "{sent:?}");

    // /localhost Data from a non-local face is dropped, even when an Interest is pending.
    let before = drops(&e, DropReason::Scope);
    assert!(run1(&mut e, 1001, 1, data("/localhost/x", None)).is_empty());
    assert_eq!(drops(&e, DropReason::Scope), before + 1);
    assert_eq!(
        faces_of(&run1(&mut e, 1001, 6, data("/localhost/x", None))),
        [5]
    );
}

#[test]
fn localhop_from_a_non_local_face_is_not_sent_to_non_local_faces() {
    let (mut e, fib) = engine();
    e.set_face(5, local());
    e.set_face(6, local());
    route(&fib, "/localhop", 2, 1); // non-local, cheaper
    route(&fib, "/localhop", 6, 5);
    route(&fib, "/localhop/remote-only", 2, 1);
    // From a non-local face: the local next hop only.
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/localhop/x", 1)))),
        [6]
    );
    let sent = run1(
        &mut e,
        1000,
        1,
        wire_of(&interest("/localhop/remote-only/x", 2)),
    );
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].face, sent[0].kind),
        (1, SendKind::Nack(NackReason::NoRoute))
    );
    // From a local face: anywhere (the cheapest).
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 5, wire_of(&interest("/localhop/y", 3)))),
        [2]
    );
    assert_eq!(drops(&e, DropReason::Scope), 0);
}

#[test]
fn unsolicited_data_is_dropped_and_not_cached() {
    let (mut e, fib) = engine();
    route(&fib, "/a", 2, 1);
    assert!(run1(&mut e, 1000, 2, data("/a/nobody", Some(1000))).is_empty());
    assert_eq!(drops(&e, DropReason::Unsolicited), 1);
    assert_eq!(e.table().cs_len(), 0);
    assert_eq!(e.table().names_len(), 0);
    // A later Interest goes upstream.
    assert_eq!(
        faces_of(&run1(&mut e, 1001, 1, wire_of(&interest("/a/nobody", 1)))),
        [2]
    );
}

#[test]
fn upstream_nacks_reach_each_downstream_with_its_own_nonce_and_the_least_severe_reason() {
    // Best-route (NFD's `processNack`; multicast would let the entry expire).
    let (mut e, fib) = engine();
    route(&fib, "/m", 2, 1);
    route(&fib, "/m", 3, 2);
    let a = wire_of(&interest("/m/x", 0xA));
    let sent = run1(&mut e, 1000, 1, a.clone());
    assert_eq!(faces_of(&sent), [2]);
    // A second downstream, aggregated (suppressed upstream).
    assert!(run1(&mut e, 1001, 4, wire_of(&interest("/m/x", 0xB))).is_empty());
    // Its retransmission past the 10 ms goes to the unused upstream, with its nonce.
    let b = wire_of(&interest("/m/x", 0xB));
    assert_eq!(faces_of(&run1(&mut e, 1011, 4, b.clone())), [3]);

    // A Nack with a nonce that was never sent upstream matches nothing.
    let stray = wire_of(&interest("/m/x", 0xC));
    assert!(run1(&mut e, 1012, 2, nack(&stray, NackReason::Congestion)).is_empty());
    assert_eq!(drops(&e, DropReason::NackUnmatched), 1);
    // A Nack from a face that was not an upstream matches nothing either.
    assert!(run1(&mut e, 1012, 5, nack(&a, NackReason::Congestion)).is_empty());
    assert_eq!(drops(&e, DropReason::NackUnmatched), 2);

    // The first upstream Nacks: the other may still answer.
    assert!(run1(&mut e, 1013, 2, nack(&a, NackReason::NoRoute)).is_empty());
    assert_eq!(e.table().pit_len(), 1);
    // The second one Nacks too: both downstreams get the least severe reason.
    let sent = run1(&mut e, 1014, 3, nack(&b, NackReason::Congestion));
    assert_eq!(faces_of(&sent), [1, 4]);
    for s in &sent {
        assert_eq!(s.kind, SendKind::Nack(NackReason::Congestion));
        let i = s.interest();
        assert_eq!(i.name, name("/m/x"));
        let nonce = if s.face == 1 { 0xAu32 } else { 0xB };
        assert_eq!(i.nonce, Some(nonce.to_be_bytes()));
    }
    assert_eq!(e.table().pit_len(), 0);
    assert_eq!(e.counters().in_nacks, 4);

    // NoRoute vs Duplicate: Duplicate is less severe.
    let c = wire_of(&interest("/m/y", 0xD));
    assert_eq!(faces_of(&run1(&mut e, 2000, 1, c.clone())), [2]);
    let d = wire_of(&interest("/m/y", 0xE));
    assert_eq!(faces_of(&run1(&mut e, 2010, 1, d.clone())), [3]);
    assert!(run1(&mut e, 2011, 3, nack(&d, NackReason::Duplicate)).is_empty());
    let sent = run1(&mut e, 2012, 2, nack(&c, NackReason::NoRoute));
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].kind, SendKind::Nack(NackReason::Duplicate));
    // The downstream's latest nonce.
    assert_eq!(sent[0].interest().nonce, Some(0xEu32.to_be_bytes()));
}

#[test]
fn no_pit_entry_outlives_its_lifetime() {
    let (mut e, fib) = engine();
    route(&fib, "/a", 2, 1);
    // Lifetimes shorter than a tick, within a wheel lap, and over one and two laps (8.2 s).
    let lifetimes = [0u64, 5, 50, 300, 4000, 8191, 8192, 10_000, 20_000];
    let t0 = 1003;
    for (k, &l) in lifetimes.iter().enumerate() {
        let i = Interest {
            lifetime_ms: Some(l),
            ..interest(&format!("/a/{k}"), k as u32)
        };
        assert_eq!(faces_of(&run1(&mut e, t0, 1, wire_of(&i))), [2]);
    }
    let alive = |t: u64| lifetimes.iter().filter(|&&l| t0 + l > t).count();
    // Advance in uneven steps, landing exactly on every expiry and just before it.
    let mut checkpoints: Vec<u64> = lifetimes
        .iter()
        .flat_map(|&l| [t0 + l, (t0 + l).saturating_sub(1)])
        .chain((t0..t0 + 21_000).step_by(37))
        .filter(|&t| t >= t0)
        .collect();
    checkpoints.sort_unstable();
    checkpoints.dedup();
    for t in checkpoints {
        e.advance(t);
        assert_eq!(e.table().pit_len(), alive(t), "t = {t}");
        e.table().check_invariants().unwrap();
    }
    assert_eq!(e.table().pit_len(), 0);
    assert_eq!(e.table().names_len(), 0);
    assert_eq!(e.counters().unsatisfied, lifetimes.len() as u64);

    // A single jump over several laps expires everything too.
    for k in 0..5u32 {
        let i = Interest {
            lifetime_ms: Some(1000 + 7000 * u64::from(k)),
            ..interest(&format!("/a/j{k}"), 100 + k)
        };
        run1(&mut e, 30_000, 1, wire_of(&i));
    }
    assert_eq!(e.table().pit_len(), 5);
    e.advance(30_000 + 1000 + 7000 * 4);
    assert_eq!(e.table().pit_len(), 0);
}

#[test]
fn must_be_fresh_is_satisfied_from_the_cs_only_by_fresh_data() {
    let (mut e, fib) = engine();
    route(&fib, "/f", 2, 1);
    run1(&mut e, 1000, 1, wire_of(&interest("/f/s", 1)));
    let d = data("/f/s", Some(100));
    assert_eq!(faces_of(&run1(&mut e, 1000, 2, d.clone())), [1]);
    let mbf = |nonce: u32| Interest {
        must_be_fresh: true,
        ..interest("/f/s", nonce)
    };
    // Fresh: answered from the CS.
    let sent = run1(&mut e, 1099, 3, wire_of(&mbf(2)));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (3, SendKind::Data));
    assert_eq!(sent[0].bytes, d);
    // Stale: MustBeFresh goes upstream...
    let sent = run1(&mut e, 1100, 3, wire_of(&mbf(3)));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (2, SendKind::Interest));
    // ...while an Interest without MustBeFresh still takes the stale Data.
    let sent = run1(&mut e, 1100, 4, wire_of(&interest("/f/s", 4)));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (4, SendKind::Data));

    // Data without FreshnessPeriod never satisfies MustBeFresh from the CS.
    run1(&mut e, 2000, 1, wire_of(&interest("/f/nf", 5)));
    run1(&mut e, 2000, 2, data("/f/nf", None));
    let sent = run1(
        &mut e,
        2000,
        3,
        wire_of(&Interest {
            must_be_fresh: true,
            ..interest("/f/nf", 6)
        }),
    );
    assert_eq!(faces_of(&sent), [2]);
    assert_eq!(sent[0].kind, SendKind::Interest);
}

#[test]
fn can_be_prefix_is_satisfied_by_longer_data_and_later_hits_the_cs() {
    let (mut e, fib) = engine();
    route(&fib, "/c", 2, 1);
    let cbp = |nonce: u32| Interest {
        can_be_prefix: true,
        ..interest("/c/p", nonce)
    };
    assert_eq!(faces_of(&run1(&mut e, 1000, 1, wire_of(&cbp(1)))), [2]);
    let d = data("/c/p/v1", Some(500));
    let sent = run1(&mut e, 1001, 2, d.clone());
    assert_eq!(faces_of(&sent), [1]);
    assert_eq!(sent[0].bytes, d);
    assert_eq!(e.table().pit_len(), 0);

    // A later CanBePrefix Interest for the same prefix hits the CS.
    let sent = run1(&mut e, 1002, 3, wire_of(&cbp(2)));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (3, SendKind::Data));
    assert_eq!(sent[0].bytes, d);
    assert_eq!(e.counters().out_interests, 1);
    // With MustBeFresh, while the Data is fresh, too.
    let sent = run1(
        &mut e,
        1003,
        3,
        wire_of(&Interest {
            must_be_fresh: true,
            ..cbp(3)
        }),
    );
    assert_eq!(sent[0].kind, SendKind::Data);
    // Without CanBePrefix, /c/p is not /c/p/v1: upstream.
    let sent = run1(&mut e, 1004, 3, wire_of(&interest("/c/p", 4)));
    assert_eq!((sent[0].face, sent[0].kind), (2, SendKind::Interest));
    // Stale now: a MustBeFresh CanBePrefix Interest goes upstream.
    let sent = run1(
        &mut e,
        1501,
        3,
        wire_of(&Interest {
            must_be_fresh: true,
            ..cbp(5)
        }),
    );
    assert_eq!((sent[0].face, sent[0].kind), (2, SendKind::Interest));
    // The exact Data name is served as well.
    let sent = run1(&mut e, 1502, 4, wire_of(&interest("/c/p/v1", 6)));
    assert_eq!((sent[0].face, sent[0].kind), (4, SendKind::Data));
}

#[test]
fn implicit_digest_interests_are_satisfied_by_incoming_data_and_from_the_cs() {
    let (mut e, fib) = engine();
    route(&fib, "/g", 2, 1);
    let d = data_packet("/g/d", b"the content", Some(10_000));
    let full = d.full_name();
    let dw = d.to_wire();
    let by_digest = |nonce: u32| Interest::new(full.clone(), nonce.to_be_bytes());

    // Pending: another Data under the same name but other bytes does not satisfy it.
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&by_digest(1)))),
        [2]
    );
    let impostor = data_packet("/g/d", b"other content", Some(10_000)).to_wire();
    assert!(run1(&mut e, 1001, 2, impostor).is_empty());
    assert_eq!(drops(&e, DropReason::Unsolicited), 1);
    assert_eq!(e.table().pit_len(), 1);
    // The right one does.
    let sent = run1(&mut e, 1002, 2, dw.clone());
    assert_eq!(faces_of(&sent), [1]);
    assert_eq!(sent[0].bytes, dw);
    assert_eq!(e.table().pit_len(), 0);

    // From the CS.
    let sent = run1(&mut e, 1003, 3, wire_of(&by_digest(2)));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (3, SendKind::Data));
    assert_eq!(sent[0].bytes, dw);
    // A wrong digest misses.
    let wrong = data_packet("/g/d", b"nope", None).full_name();
    let sent = run1(
        &mut e,
        1004,
        3,
        wire_of(&Interest::new(wrong, 3u32.to_be_bytes())),
    );
    assert_eq!((sent[0].face, sent[0].kind), (2, SendKind::Interest));
}

#[test]
fn cache_policy_no_cache_is_forwarded_but_not_cached() {
    let (mut e, fib) = engine();
    route(&fib, "/n", 2, 1);
    run1(&mut e, 1000, 1, wire_of(&interest("/n/x", 1)));
    let d = data("/n/x", Some(10_000));
    let sent = run1(
        &mut e,
        1001,
        2,
        lp(d.clone(), |p| p.cache_policy = Some(CACHE_POLICY_NO_CACHE)),
    );
    assert_eq!(faces_of(&sent), [1]);
    assert_eq!(sent[0].bytes, d);
    assert_eq!(e.table().cs_len(), 0);
    assert_eq!(e.table().names_len(), 0);
    assert_eq!(
        faces_of(&run1(&mut e, 1002, 3, wire_of(&interest("/n/x", 2)))),
        [2]
    );
}

#[test]
fn best_route_takes_the_cheapest_hop_and_suppresses_early_retransmissions() {
    let (mut e, fib) = engine();
    route(&fib, "/b", 2, 30);
    route(&fib, "/b", 3, 10);
    route(&fib, "/b", 4, 20);
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/b/x", 1)))),
        [3]
    );
    // Never back to the incoming face, even when it is the cheapest.
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 3, wire_of(&interest("/b/y", 2)))),
        [4]
    );

    // Retransmissions of /b/x (new nonces, same downstream).
    let retx =
        |t: u64, nonce: u32, e: &mut Engine| run1(e, t, 1, wire_of(&interest("/b/x", nonce)));
    assert!(retx(1005, 10, &mut e).is_empty());
    assert_eq!(drops(&e, DropReason::Suppressed), 1);
    assert!(retx(1009, 11, &mut e).is_empty());
    // After 10 ms: the next unused next hop.
    let sent = retx(1010, 12, &mut e);
    assert_eq!(faces_of(&sent), [4]);
    assert_eq!(sent[0].interest().nonce, Some(12u32.to_be_bytes()));
    // The interval doubled to 20 ms.
    assert!(retx(1029, 13, &mut e).is_empty());
    assert_eq!(faces_of(&retx(1030, 14, &mut e)), [2]);
    // 40 ms; every next hop used: the one tried longest ago.
    assert!(retx(1069, 15, &mut e).is_empty());
    assert_eq!(faces_of(&retx(1070, 16, &mut e)), [3]);
    assert_eq!(drops(&e, DropReason::Suppressed), 4);

    // The Data from any upstream satisfies it.
    assert_eq!(faces_of(&run1(&mut e, 1080, 2, data("/b/x", None))), [1]);
}

#[test]
fn multicast_sends_to_every_next_hop_but_the_incoming_face() {
    let (mut e, fib) = engine();
    e.strategies_mut()
        .set(&name("/mc"), StrategyKind::Multicast);
    for f in 1..=4 {
        route(&fib, "/mc", f, f * 10);
    }
    let i = wire_of(&interest("/mc/x", 1));
    let sent = run1(&mut e, 1000, 2, i.clone());
    assert_eq!(faces_of(&sent), [1, 3, 4]);
    assert!(sent
        .iter()
        .all(|s| s.kind == SendKind::Interest && s.bytes == i));
    // A retransmission is suppressed on every upstream for 10 ms, then goes to all again.
    assert!(run1(&mut e, 1005, 2, wire_of(&interest("/mc/x", 2))).is_empty());
    assert_eq!(
        faces_of(&run1(&mut e, 1010, 2, wire_of(&interest("/mc/x", 3)))),
        [1, 3, 4]
    );
}

#[test]
fn strategy_is_chosen_per_prefix() {
    let (mut e, fib) = engine();
    route(&fib, "/s", 2, 1);
    route(&fib, "/s", 3, 2);
    route(&fib, "/t", 2, 1);
    route(&fib, "/t", 3, 2);
    e.strategies_mut()
        .set(&name("/s/multi"), StrategyKind::Multicast);
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/s/multi/x", 1)))),
        [2, 3]
    );
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/s/other", 2)))),
        [2]
    );
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/t/x", 3)))),
        [2]
    );
    // The root choice governs everything else.
    e.strategies_mut()
        .set(&Name::new(), StrategyKind::Multicast);
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/t/y", 4)))),
        [2, 3]
    );
    e.strategies_mut()
        .set(&name("/s/multi/best"), StrategyKind::BestRoute);
    assert_eq!(
        faces_of(&run1(
            &mut e,
            1000,
            1,
            wire_of(&interest("/s/multi/best/x", 5))
        )),
        [2]
    );
    assert!(e.strategies_mut().unset(&name("/s/multi")));
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/s/multi/y", 6)))),
        [2, 3]
    );
}

/// As NFD's GenericLinkService: NextHopFaceId is honoured from a face with LocalFieldsEnabled,
/// and an Interest carrying it from any other face (local or not) is dropped; NextHopFaceId on
/// a Data or a Nack, and CachePolicy on an Interest or a Nack, drop the packet; CachePolicy on
/// a Data needs no LocalFieldsEnabled.
#[test]
fn next_hop_face_id_is_honoured_only_from_faces_with_local_fields() {
    let (mut e, fib) = engine();
    let app = FaceInfo {
        local_fields: true,
        ..local()
    };
    e.set_face(5, app);
    e.set_face(6, local());
    route(&fib, "/h", 2, 1);
    let with_nh = |uri: &str, nonce: u32| {
        lp(wire_of(&interest(uri, nonce)), |p| {
            p.next_hop_face_id = Some(3)
        })
    };
    let sent = run1(&mut e, 1000, 5, with_nh("/h/x", 1));
    assert_eq!(faces_of(&sent), [3]);
    assert_eq!(sent[0].bytes, wire_of(&interest("/h/x", 1)));
    // Even without a route.
    assert_eq!(faces_of(&run1(&mut e, 1000, 5, with_nh("/none/x", 2))), [3]);
    // From a local face without LocalFieldsEnabled, and from a non-local face: dropped.
    assert_eq!(drops(&e, DropReason::LinkField), 0);
    assert!(run1(&mut e, 1000, 6, with_nh("/h/y", 3)).is_empty());
    assert!(run1(&mut e, 1000, 1, with_nh("/h/z", 4)).is_empty());
    assert_eq!(drops(&e, DropReason::LinkField), 2);
    // The same Interests without the field go by the FIB.
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/h/z", 4)))),
        [2]
    );
    // LocalFieldsEnabled turned off: dropped from then on.
    e.set_face(5, local());
    assert!(run1(&mut e, 1000, 5, with_nh("/h/w", 5)).is_empty());
    assert_eq!(drops(&e, DropReason::LinkField), 3);

    // Fields a packet type may not carry, from any face.
    let i6 = wire_of(&interest("/h/six", 6));
    let cp_interest = lp(i6.clone(), |p| p.cache_policy = Some(CACHE_POLICY_NO_CACHE));
    assert!(run1(&mut e, 1000, 5, cp_interest).is_empty());
    assert_eq!(drops(&e, DropReason::LinkField), 4);
    assert_eq!(faces_of(&run1(&mut e, 1000, 5, i6.clone())), [2]);
    let mut bad_nack = LpPacket::nack(i6.clone(), NackReason::NoRoute);
    bad_nack.next_hop_face_id = Some(1);
    assert!(run1(&mut e, 1001, 2, bad_nack.to_wire()).is_empty());
    let mut bad_nack = LpPacket::nack(i6, NackReason::NoRoute);
    bad_nack.cache_policy = Some(CACHE_POLICY_NO_CACHE);
    assert!(run1(&mut e, 1001, 2, bad_nack.to_wire()).is_empty());
    let d = data("/h/six", Some(10_000));
    let nh_data = lp(d.clone(), |p| p.next_hop_face_id = Some(1));
    assert!(run1(&mut e, 1002, 2, nh_data).is_empty());
    assert_eq!(drops(&e, DropReason::LinkField), 7);
    assert_eq!(e.counters().in_nacks + e.counters().in_data, 0);
    // The Interest is still pending: the Data without the field satisfies it.
    assert_eq!(faces_of(&run1(&mut e, 1003, 2, d)), [5]);
}

#[test]
fn each_downstream_gets_its_own_pit_token_back() {
    let (mut e, fib) = engine();
    route(&fib, "/p", 2, 1);
    let tok = |uri: &str, nonce: u32, t: &[u8]| {
        let t = t.to_vec();
        lp(wire_of(&interest(uri, nonce)), move |p| {
            p.pit_token = Some(t)
        })
    };
    let sent = run(
        &mut e,
        1000,
        &[
            (1, tok("/p/x", 1, &[1, 2, 3])),
            (4, tok("/p/x", 2, &[9; 32])),
        ],
    );
    assert_eq!(faces_of(&sent), [2]);
    // The downstream's token is not sent upstream.
    assert_eq!(sent[0].token, None);
    let d = data("/p/x", Some(1000));
    let sent = run1(
        &mut e,
        1001,
        2,
        lp(d.clone(), |p| p.pit_token = Some(vec![7])),
    );
    assert_eq!(faces_of(&sent), [1, 4]);
    for s in &sent {
        assert_eq!(s.bytes, d);
        let want: &[u8] = if s.face == 1 { &[1, 2, 3] } else { &[9; 32] };
        assert_eq!(s.token.as_deref(), Some(want));
    }
    // From the CS, and on a Nack.
    let sent = run1(&mut e, 1002, 3, tok("/p/x", 3, &[5, 5]));
    assert_eq!(
        (sent[0].kind, sent[0].token.as_deref()),
        (SendKind::Data, Some(&[5u8, 5][..]))
    );
    let sent = run1(&mut e, 1002, 3, tok("/q/x", 4, &[6]));
    assert_eq!(
        (sent[0].kind, sent[0].token.as_deref()),
        (SendKind::Nack(NackReason::NoRoute), Some(&[6u8][..]))
    );
    // No token in, none out.
    run1(&mut e, 1003, 1, wire_of(&interest("/p/y", 5)));
    let sent = run1(&mut e, 1004, 2, data("/p/y", None));
    assert_eq!(sent[0].token, None);
}

#[test]
fn congestion_mark_on_incoming_data_is_carried_downstream() {
    let (mut e, fib) = engine();
    route(&fib, "/cm", 2, 1);
    run(
        &mut e,
        1000,
        &[
            (1, wire_of(&interest("/cm/x", 1))),
            (3, wire_of(&interest("/cm/x", 2))),
            (1, wire_of(&interest("/cm/y", 3))),
        ],
    );
    let sent = run1(
        &mut e,
        1001,
        2,
        lp(data("/cm/x", None), |p| p.congestion_mark = Some(1)),
    );
    assert_eq!(faces_of(&sent), [1, 3]);
    assert!(sent.iter().all(|s| s.mark == 1));
    let sent = run1(&mut e, 1001, 2, data("/cm/y", None));
    assert_eq!((sent[0].face, sent[0].mark), (1, 0));
}

/// NFD keeps an incoming Interest's CongestionMark as a tag and its link service writes it on
/// the Interest it forwards: the mark travels upstream with the Interest, each Interest with its
/// own (an unmarked retransmission goes unmarked). A Nack is not relayed with the upstream's
/// mark: NFD builds the downstream's Nack afresh from the in-record's Interest.
#[test]
fn congestion_mark_on_an_interest_goes_upstream_with_it() {
    let (mut e, fib) = engine();
    route(&fib, "/cm", 2, 1);
    let marked = |uri: &str, nonce: u32, mark: u64| {
        lp(wire_of(&interest(uri, nonce)), |p| {
            p.congestion_mark = Some(mark)
        })
    };
    let sent = run1(&mut e, 1000, 1, marked("/cm/a", 1, 7));
    assert_eq!(
        (sent[0].face, sent[0].kind, sent[0].mark),
        (2, SendKind::Interest, 7)
    );
    let sent = run1(&mut e, 1000, 1, wire_of(&interest("/cm/b", 2)));
    assert_eq!((sent[0].face, sent[0].mark), (2, 0));
    // A retransmission past the suppression interval carries its own mark, here none.
    let sent = run1(&mut e, 1500, 1, wire_of(&interest("/cm/a", 3)));
    assert_eq!((sent[0].face, sent[0].mark), (2, 0));
    // The upstream's marked Nack reaches the downstream unmarked.
    let i = wire_of(&interest("/cm/c", 4));
    run1(&mut e, 1600, 1, marked("/cm/c", 4, 1));
    let mut marked_nack = LpPacket::nack(i, NackReason::NoRoute);
    marked_nack.congestion_mark = Some(1);
    let sent = run1(&mut e, 1601, 2, marked_nack.to_wire());
    assert_eq!(
        (sent[0].face, sent[0].kind, sent[0].mark),
        (1, SendKind::Nack(NackReason::NoRoute), 0)
    );
}

/// An Interest parked on the slower CS tier keeps its CongestionMark: when the tier misses, the
/// stored copy goes upstream with it.
#[test]
fn congestion_mark_of_an_interest_parked_on_the_slow_tier_goes_upstream_after_a_miss() {
    let (mut e, fib) = engine();
    e.set_slow_tier(Box::new(Tier {
        lookups: Arc::new(Mutex::new(Vec::new())),
    }));
    route(&fib, "/t", 2, 1);
    let i = lp(wire_of(&interest("/t/m", 1)), |p| {
        p.congestion_mark = Some(3)
    });
    assert!(run1(&mut e, 1000, 1, i).is_empty());
    let sent = complete(&mut e, 1001, "/t/m", None);
    assert_eq!(
        (sent[0].face, sent[0].kind, sent[0].mark),
        (2, SendKind::Interest, 3)
    );
    // The entry's next stored Interest starts unmarked.
    assert!(run1(&mut e, 1002, 1, wire_of(&interest("/t/n", 2))).is_empty());
    let sent = complete(&mut e, 1003, "/t/n", None);
    assert_eq!((sent[0].face, sent[0].mark), (2, 0));
}

#[test]
fn a_full_pit_nacks_congestion() {
    let mut config = small_config();
    config.pit_cs.pit_capacity = 2;
    let (mut e, fib) = engine_with(config);
    route(&fib, "/a", 2, 1);
    e.set_face(4, multi_access());
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/a/1", 1)))),
        [2]
    );
    assert_eq!(
        faces_of(&run1(&mut e, 1000, 1, wire_of(&interest("/a/2", 2)))),
        [2]
    );
    let i3 = wire_of(&interest("/a/3", 3));
    let sent = run1(&mut e, 1000, 3, i3.clone());
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].face, sent[0].kind),
        (3, SendKind::Nack(NackReason::Congestion))
    );
    assert_eq!(sent[0].bytes, i3);
    assert_eq!(drops(&e, DropReason::PitFull), 1);
    // On a multi-access face: dropped silently.
    assert!(run1(&mut e, 1000, 4, wire_of(&interest("/a/4", 4))).is_empty());
    assert_eq!(drops(&e, DropReason::PitFull), 2);
    // Aggregation still works when full.
    assert!(run1(&mut e, 1001, 3, wire_of(&interest("/a/1", 5))).is_empty());
    // Once an entry is satisfied there is room again.
    assert_eq!(faces_of(&run1(&mut e, 1002, 2, data("/a/1", None))), [1, 3]);
    assert_eq!(faces_of(&run1(&mut e, 1003, 1, i3)), [2]);
}

#[test]
fn cs_capacity_is_bounded_and_evicts_in_fifo_or_lru_order() {
    for policy in [CsPolicy::Fifo, CsPolicy::Lru] {
        let mut config = small_config();
        config.pit_cs.cs_capacity = 2;
        config.pit_cs.cs_policy = policy;
        let (mut e, fib) = engine_with(config);
        route(&fib, "/k", 2, 1);
        let mut nonce = 0;
        // Sends an Interest; true if the CS answered. A miss stays pending (no Data).
        let mut probe = |e: &mut Engine, t: u64, uri: &str| {
            nonce += 1;
            let sent = run1(e, t, 1, wire_of(&interest(uri, nonce)));
            sent[0].kind == SendKind::Data
        };
        let fetch = |e: &mut Engine,
                     t: u64,
                     uri: &str,
                     probe: &mut dyn FnMut(&mut Engine, u64, &str) -> bool| {
            let hit = probe(e, t, uri);
            if !hit {
                assert_eq!(faces_of(&run1(e, t, 2, data(uri, None))), [1]);
            }
            hit
        };
        assert!(!fetch(&mut e, 1000, "/k/a", &mut probe));
        assert!(!fetch(&mut e, 1001, "/k/b", &mut probe));
        assert!(fetch(&mut e, 1002, "/k/a", &mut probe)); // a hit: LRU moves /k/a to the back
        assert!(!fetch(&mut e, 1003, "/k/c", &mut probe)); // evicts one
        assert_eq!(e.table().cs_len(), 2);
        assert_eq!(e.table().counters.cs_evictions, 1);
        let (a, b) = (probe(&mut e, 1004, "/k/a"), probe(&mut e, 1005, "/k/b"));
        match policy {
            CsPolicy::Fifo => assert_eq!((a, b), (false, true), "FIFO evicts /k/a"),
            CsPolicy::Lru => assert_eq!((a, b), (true, false), "LRU evicts /k/b"),
        }
        for t in 0..20 {
            fetch(&mut e, 2000 + t, &format!("/k/many/{t}"), &mut probe);
            assert!(e.table().cs_len() <= 2);
            assert!(e.table().names_len() <= 2 + e.table().pit_len());
        }
    }
}

#[test]
fn data_is_cached_even_when_pit_and_cs_are_full() {
    let mut config = small_config();
    config.pit_cs.pit_capacity = 1;
    config.pit_cs.cs_capacity = 1;
    let (mut e, fib) = engine_with(config);
    route(&fib, "/k", 2, 1);
    run1(&mut e, 1000, 1, wire_of(&interest("/k/y", 1)));
    run1(&mut e, 1000, 2, data("/k/y", None));
    assert_eq!(e.table().cs_len(), 1);
    // The PIT is full (one CanBePrefix entry) and so is the CS, on another name.
    let cbp = Interest {
        can_be_prefix: true,
        ..interest("/k/x", 2)
    };
    assert_eq!(faces_of(&run1(&mut e, 1001, 1, wire_of(&cbp))), [2]);
    // Data under a third name satisfies it and replaces the cached one.
    let d = data("/k/x/1", None);
    assert_eq!(faces_of(&run1(&mut e, 1002, 2, d.clone())), [1]);
    assert_eq!(e.table().cs_len(), 1);
    assert_eq!(e.table().counters.cs_evictions, 1);
    let sent = run1(&mut e, 1003, 3, wire_of(&interest("/k/x/1", 3)));
    assert_eq!((sent[0].face, sent[0].kind), (3, SendKind::Data));
    assert_eq!(sent[0].bytes, d);
}

/// A slower tier that answers "pending" for names whose first component starts with `t`, and records the lookups.
struct Tier {
    lookups: Lookups,
}

/// The (full-name hash, name components) of every slower-tier lookup.
type Lookups = Arc<Mutex<Vec<(u64, Vec<u8>)>>>;

impl SlowTier for Tier {
    fn lookup(&mut self, full_hash: u64, name_value: &[u8]) -> bool {
        self.lookups
            .lock()
            .unwrap()
            .push((full_hash, name_value.to_vec()));
        name_value.get(2) == Some(&b't')
    }
}

fn complete(e: &mut Engine, now: u64, uri: &str, data: Option<&[u8]>) -> Vec<Sent> {
    let n = name(uri);
    let value = n.to_wire()[2..].to_vec();
    let out = e.complete_pending(now, name_hash(KEY, &n), &value, data);
    let sent = out
        .actions
        .iter()
        .map(|a| Sent {
            face: a.face,
            kind: a.kind,
            bytes: out.bytes(a, &[]).to_vec(),
            token: out.pit_token(a).map(<[u8]>::to_vec),
            mark: a.congestion_mark,
        })
        .collect();
    e.table().check_invariants().unwrap();
    sent
}

#[test]
fn slow_tier_parks_interests_and_completes_them_with_data_or_upstream() {
    let (mut e, fib) = engine();
    let lookups = Arc::new(Mutex::new(Vec::new()));
    e.set_slow_tier(Box::new(Tier {
        lookups: lookups.clone(),
    }));
    route(&fib, "/t", 2, 1);

    // Pending: the Interest waits in the PIT, nothing goes upstream.
    assert!(run1(&mut e, 1000, 1, wire_of(&interest("/t/x", 1))).is_empty());
    assert_eq!(e.table().pit_len(), 1);
    {
        let l = lookups.lock().unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].0, name_hash(KEY, &name("/t/x")));
        assert_eq!(l[0].1, name("/t/x").to_wire()[2..]);
    }
    // Another downstream joins while it is pending; the tier is not asked again.
    assert!(run1(&mut e, 1001, 3, wire_of(&interest("/t/x", 2))).is_empty());
    assert_eq!(lookups.lock().unwrap().len(), 1);

    // The tier has the Data: both downstreams get it and it is cached in RAM.
    let d = data("/t/x", Some(10_000));
    let sent = complete(&mut e, 1002, "/t/x", Some(&d));
    assert_eq!(faces_of(&sent), [1, 3]);
    assert!(sent
        .iter()
        .all(|s| s.kind == SendKind::Data && s.bytes == d));
    assert_eq!(e.table().pit_len(), 0);
    assert_eq!(e.table().cs_len(), 1);
    let sent = run1(&mut e, 1003, 4, wire_of(&interest("/t/x", 3)));
    assert_eq!((sent[0].face, sent[0].kind), (4, SendKind::Data));
    assert_eq!(sent[0].bytes, d);
    assert_eq!(e.counters().out_interests, 0);
    // Completing a name nobody waits for does nothing.
    assert!(complete(&mut e, 1003, "/t/nobody", None).is_empty());

    // The tier misses: the Interest goes upstream (HopLimit decremented), Data comes back.
    let i = Interest {
        hop_limit: Some(3),
        ..interest("/t/y", 4)
    };
    assert!(run1(&mut e, 1010, 1, wire_of(&i)).is_empty());
    let sent = complete(&mut e, 1011, "/t/y", None);
    assert_eq!(faces_of(&sent), [2]);
    assert_eq!(sent[0].kind, SendKind::Interest);
    let fwd = sent[0].interest();
    assert_eq!(fwd.name, name("/t/y"));
    assert_eq!(fwd.nonce, Some(4u32.to_be_bytes()));
    assert_eq!(fwd.hop_limit, Some(2));
    assert_eq!(faces_of(&run1(&mut e, 1012, 2, data("/t/y", None))), [1]);
    assert_eq!(e.table().pit_len(), 0);

    // The tier misses and there is no route: every downstream gets NoRoute.
    assert!(run1(&mut e, 1020, 1, wire_of(&interest("/tz/1", 5))).is_empty());
    let tz = lp(wire_of(&interest("/tz/1", 6)), |p| {
        p.pit_token = Some(vec![4, 2])
    });
    assert!(run1(&mut e, 1020, 3, tz).is_empty());
    let sent = complete(&mut e, 1021, "/tz/1", None);
    assert_eq!(faces_of(&sent), [1, 3]);
    for s in &sent {
        assert_eq!(s.kind, SendKind::Nack(NackReason::NoRoute));
        let nonce: u32 = if s.face == 1 { 5 } else { 6 };
        assert_eq!(s.interest().nonce, Some(nonce.to_be_bytes()));
        let token: Option<&[u8]> = if s.face == 3 { Some(&[4, 2]) } else { None };
        assert_eq!(s.token.as_deref(), token);
    }
    assert_eq!(e.table().pit_len(), 0);

    // A parked Interest still expires.
    assert!(run1(&mut e, 2000, 1, wire_of(&interest("/t/late", 7))).is_empty());
    e.advance(3000);
    assert_eq!(e.table().pit_len(), 0);
    assert!(complete(&mut e, 3001, "/t/late", None).is_empty());
}

#[test]
fn slow_tier_answers_a_face_once_even_on_two_parked_entries() {
    let (mut e, fib) = engine();
    e.set_slow_tier(Box::new(Tier {
        lookups: Arc::new(Mutex::new(Vec::new())),
    }));
    route(&fib, "/t", 2, 1);
    let cbp = Interest {
        can_be_prefix: true,
        ..interest("/t/two", 2)
    };
    let sent = run(
        &mut e,
        1000,
        &[(1, wire_of(&interest("/t/two", 1))), (1, wire_of(&cbp))],
    );
    assert!(sent.is_empty());
    assert_eq!(e.table().pit_len(), 2);
    let d = data("/t/two", None);
    let sent = complete(&mut e, 1001, "/t/two", Some(&d));
    assert_eq!(faces_of(&sent), [1], "one Data per downstream face");
    assert_eq!(e.table().pit_len(), 0);
    // Forwarded after a miss: one Interest upstream per parked entry, Data answers both once.
    let sent = run(
        &mut e,
        1002,
        &[
            (1, wire_of(&interest("/t/three", 3))),
            (
                1,
                wire_of(&Interest {
                    can_be_prefix: true,
                    ..interest("/t/three", 4)
                }),
            ),
        ],
    );
    assert!(sent.is_empty());
    let sent = complete(&mut e, 1003, "/t/three", None);
    assert_eq!(faces_of(&sent), [2, 2]);
    assert_eq!(
        faces_of(&run1(&mut e, 1004, 2, data("/t/three", None))),
        [1]
    );
}

#[test]
fn malformed_packets_and_fragments_are_counted_and_never_panic() {
    let (mut e, fib) = engine();
    route(&fib, "/a", 2, 1);
    let good = wire_of(&interest("/a/ok", 1));
    let fragment = LpPacket {
        frag_index: Some(0),
        frag_count: Some(2),
        fragment: Some(good[..good.len() / 2].to_vec()),
        ..LpPacket::default()
    }
    .to_wire();
    let idle = LpPacket {
        sequence: Some(1),
        ..LpPacket::default()
    }
    .to_wire();
    let inputs = vec![
        (1, vec![]),
        (1, vec![0xff]),
        (1, vec![0x05, 0x10, 0x07]),
        (1, good[..good.len() - 1].to_vec()),
        (1, lp(vec![0x05, 0x01, 0x00], |_| {})),
        (1, fragment),
        (1, idle),
        (1, good.clone()),
    ];
    let sent = run(&mut e, 1000, &inputs);
    assert_eq!(faces_of(&sent), [2]);
    assert_eq!(drops(&e, DropReason::Malformed), 5);
    assert_eq!(drops(&e, DropReason::Fragment), 1);
    assert_eq!(drops(&e, DropReason::NoPayload), 1);
    assert_eq!(e.counters().in_interests, 1);

    // Oversized batches: the excess is dropped and counted.
    let batch: Vec<(FaceId, Vec<u8>)> = (0..MAX_BATCH as u32 + 3)
        .map(|k| (1, wire_of(&interest(&format!("/a/batch/{k}"), 100 + k))))
        .collect();
    assert_eq!(run(&mut e, 1001, &batch).len(), MAX_BATCH);
    assert_eq!(drops(&e, DropReason::BatchOverflow), 3);

    // Random bytes and mutations of valid packets: never a panic, the table stays sound.
    let seeds: Vec<Vec<u8>> = vec![
        good.clone(),
        data("/a/ok", Some(5)),
        nack(&good, NackReason::Duplicate),
        lp(good.clone(), |p| {
            p.pit_token = Some(vec![1; 8]);
            p.next_hop_face_id = Some(2);
        }),
        Packet::Interest(Interest {
            can_be_prefix: true,
            must_be_fresh: true,
            hop_limit: Some(4),
            ..interest("/a/x/y", 9)
        })
        .to_wire(),
    ];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..300u64 {
        let batch: Vec<(FaceId, Vec<u8>)> = (0..16)
            .map(|_| {
                let mut b = seeds[(rnd() % seeds.len() as u64) as usize].clone();
                match rnd() % 4 {
                    0 => {
                        let len = (rnd() % 40) as usize;
                        b = (0..len).map(|_| rnd() as u8).collect();
                    }
                    1 => {
                        let k = (rnd() % b.len() as u64) as usize;
                        b[k] = rnd() as u8;
                    }
                    2 => {
                        let k = (rnd() % b.len() as u64) as usize;
                        b.truncate(k);
                    }
                    _ => {
                        for _ in 0..3 {
                            let k = (rnd() % b.len() as u64) as usize;
                            b[k] ^= 1 << (rnd() % 8);
                        }
                    }
                }
                ((rnd() % 4) as FaceId + 1, b)
            })
            .collect();
        run(&mut e, 2000 + round * 3, &batch);
    }
    e.advance(100_000);
    assert_eq!(e.table().pit_len(), 0);
}

#[test]
fn a_slower_tiers_data_keeps_the_freshness_it_had_left() {
    let (mut e, fib) = engine();
    e.set_slow_tier(Box::new(Tier {
        lookups: Arc::new(Mutex::new(Vec::new())),
    }));
    route(&fib, "/t", 2, 1);
    route(&fib, "/p", 2, 1);
    let mbf = |uri: &str, nonce: u32| Interest {
        must_be_fresh: true,
        ..interest(uri, nonce)
    };
    // Each Data is fresh for 1 s. The tier parks the first Interest (no MustBeFresh) and
    // completes it with a copy stored 1.5 s ago: served, cached, but already stale.
    let old = data("/t/old", Some(1000));
    assert!(run1(&mut e, 10_000, 1, wire_of(&interest("/t/old", 1))).is_empty());
    let n = name("/t/old");
    let out = e.complete_pending_aged(
        10_001,
        name_hash(KEY, &n),
        &n.to_wire()[2..],
        Some(&old),
        1500,
    );
    assert_eq!(out.actions.len(), 1);
    assert_eq!(e.table().cs_len(), 1);
    // Without MustBeFresh the cached copy answers; with it, the Interest goes upstream.
    let sent = run1(&mut e, 10_002, 3, wire_of(&interest("/t/old", 2)));
    assert_eq!((sent[0].face, sent[0].kind), (3, SendKind::Data));
    // (the tier is asked again, and finds its copy stale too)
    assert!(run1(&mut e, 10_003, 3, wire_of(&mbf("/t/old", 3))).is_empty());
    assert_eq!(faces_of(&complete(&mut e, 10_004, "/t/old", None)), [2]);
    // A copy stored 400 ms ago is fresh for what is left of its second: 600 ms.
    let young = data("/t/young", Some(1000));
    assert!(run1(&mut e, 20_000, 1, wire_of(&interest("/t/young", 4))).is_empty());
    let n = name("/t/young");
    e.complete_pending_aged(
        20_000,
        name_hash(KEY, &n),
        &n.to_wire()[2..],
        Some(&young),
        400,
    );
    let sent = run1(&mut e, 20_599, 3, wire_of(&mbf("/t/young", 5)));
    assert_eq!((sent[0].face, sent[0].kind), (3, SendKind::Data));
    assert!(run1(&mut e, 20_600, 3, wire_of(&mbf("/t/young", 6))).is_empty());
    assert_eq!(faces_of(&complete(&mut e, 20_601, "/t/young", None)), [2]);
    // The same for a prefetched chunk nobody waited for; an unknown age is stale at once.
    assert!(e.insert_cs_aged(30_000, &data("/p/a", Some(1000)), 999));
    assert!(e.insert_cs_aged(30_000, &data("/p/b", Some(1000)), u64::MAX));
    assert!(e.insert_cs_aged(30_000, &data("/p/c", Some(1000)), 0));
    let sent = run1(&mut e, 30_000, 3, wire_of(&mbf("/p/a", 7)));
    assert_eq!((sent[0].face, sent[0].kind), (3, SendKind::Data));
    assert_eq!(
        faces_of(&run1(&mut e, 30_001, 3, wire_of(&mbf("/p/a", 8)))),
        [2]
    );
    assert_eq!(
        faces_of(&run1(&mut e, 30_001, 3, wire_of(&mbf("/p/b", 9)))),
        [2]
    );
    let sent = run1(&mut e, 30_999, 3, wire_of(&mbf("/p/c", 10)));
    assert_eq!((sent[0].face, sent[0].kind), (3, SendKind::Data));
    e.table().check_invariants().unwrap();
}

#[test]
fn prefetched_data_inserted_without_a_pit_entry_answers_later_interests() {
    let (mut e, fib) = engine();
    route(&fib, "/p", 2, 0);
    let d = data("/p/chunk", Some(10_000));
    assert!(e.insert_cs(1000, &d));
    assert!(
        !e.insert_cs(1000, &[0x06, 0x01, 0x00]),
        "garbage is refused"
    );
    assert_eq!(e.table().cs_len(), 1);
    assert_eq!(e.table().pit_len(), 0);
    let sent = run1(&mut e, 1010, 1, wire_of(&interest("/p/chunk", 5)));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].face, sent[0].kind), (1, SendKind::Data));
    assert_eq!(sent[0].bytes, d);
    assert_eq!(e.counters().out_interests, 0, "nothing went upstream");
    e.table().check_invariants().unwrap();
}

/// A slower tier that misses every lookup and reads ahead like Mansilha et al.'s batches of 4: a CS
/// hit on segment 2 of a batch asks for the first segment of the next one. Records what the
/// engine asked it to prefetch.
struct AheadTier {
    prefetched: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl SlowTier for AheadTier {
    fn lookup(&mut self, _full_hash: u64, _name_value: &[u8]) -> bool {
        false
    }

    fn ahead_of(&mut self, name_value: &[u8], out: &mut Vec<u8>) -> bool {
        // The test's names end with a one-byte segment component (type 0x32, length 1).
        let n = name_value.len();
        if n < 3 || name_value[n - 3..n - 1] != [0x32, 1] || name_value[n - 1] % 4 != 2 {
            return false;
        }
        out.extend_from_slice(&name_value[..n - 1]);
        out.push(name_value[n - 1] + 2);
        true
    }

    fn prefetch(&mut self, name_value: &[u8]) {
        self.prefetched.lock().unwrap().push(name_value.to_vec());
    }
}

/// `/a` with a segment component of value `s`.
fn segment_name(s: u8) -> Name {
    let mut n = name("/a");
    n.components.push(wire::Component::segment(u64::from(s)));
    n
}

#[test]
fn a_cs_hit_on_the_penultimate_chunk_prefetches_the_next_batch_unless_it_is_cached() {
    let (mut e, fib) = engine();
    let prefetched = Arc::new(Mutex::new(Vec::new()));
    e.set_slow_tier(Box::new(AheadTier {
        prefetched: prefetched.clone(),
    }));
    route(&fib, "/a", 2, 1);
    let mut nonce = 0;
    let mut fetch = |e: &mut Engine, s: u8, upstream: bool| {
        nonce += 1;
        let n = segment_name(s);
        let i = Interest {
            name: n.clone(),
            ..interest("/", nonce)
        };
        let sent = run1(e, 1000, 1, wire_of(&i));
        if upstream {
            assert_eq!(faces_of(&sent), [2]);
            let d = Data {
                name: n,
                ..data_packet("/", b"chunk", None)
            };
            assert_eq!(faces_of(&run1(e, 1000, 2, d.to_wire())), [1]);
        } else {
            assert_eq!((sent[0].face, sent[0].kind), (1, SendKind::Data));
        }
    };
    // Segments 1 and 2 come from upstream (no CS hit: the tier is not asked).
    fetch(&mut e, 1, true);
    fetch(&mut e, 2, true);
    assert!(prefetched.lock().unwrap().is_empty());
    // A CS hit on segment 1 is not the penultimate chunk: nothing.
    fetch(&mut e, 1, false);
    assert!(prefetched.lock().unwrap().is_empty());
    // A CS hit on segment 2 asks for segment 4, which the CS lacks: prefetched.
    fetch(&mut e, 2, false);
    let want = segment_name(4).to_wire()[2..].to_vec();
    assert_eq!(*prefetched.lock().unwrap(), [want]);
    // Once segment 4 is cached, another hit on segment 2 does not read it again.
    fetch(&mut e, 4, true);
    fetch(&mut e, 2, false);
    assert_eq!(prefetched.lock().unwrap().len(), 1);
}

/// The full-name hash of an input's Interest, Data or Nack, as the router's dispatcher computes
/// it (`None` for what does not decode).
fn dispatcher_hash(bytes: &[u8]) -> Option<u64> {
    let limits = Limits::default();
    let network = match wire::PacketView::decode(bytes, &limits).ok()? {
        wire::PacketView::Lp(lp) => lp.network_packet(&limits)?.ok()?,
        p => p,
    };
    let name = match network {
        wire::PacketView::Interest(i) => i.name(),
        wire::PacketView::Data(d) => d.name(),
        wire::PacketView::Lp(_) => return None,
    };
    Some(engine::hash::full_name_hash(KEY, &name))
}

fn run_hashed(e: &mut Engine, now: u64, inputs: &[(FaceId, Vec<u8>)]) -> Vec<Sent> {
    let hashes: Vec<Option<u64>> = inputs.iter().map(|(_, b)| dispatcher_hash(b)).collect();
    run_with_hashes(e, now, inputs, &hashes)
}

#[test]
fn precomputed_full_name_hashes_change_no_decision() {
    // The same batches through an engine that hashes every name and one given the dispatcher's
    // hashes (which skips hashing a Data's prefixes unless CanBePrefix or digest Interests are
    // pending, and a Nack's altogether): every action and counter must agree.
    let (mut plain, fib_a) = engine();
    let (mut hinted, fib_b) = engine();
    for fib in [&fib_a, &fib_b] {
        route(fib, "/a", 2, 1);
        route(fib, "/g", 2, 1);
        route(fib, "/c", 2, 1);
    }
    let digest_data = data_packet("/g/d", b"digest me", Some(10_000));
    let by_digest = Interest::new(digest_data.full_name(), 9u32.to_be_bytes());
    let cbp = Interest {
        can_be_prefix: true,
        ..interest("/c/p", 7)
    };
    let batches: Vec<Vec<(FaceId, Vec<u8>)>> = vec![
        // Plain Interests, then their Data with no CanBePrefix Interest pending.
        vec![
            (1, wire_of(&interest("/a/1", 1))),
            (1, wire_of(&interest("/a/2", 2))),
        ],
        vec![(2, data("/a/1", Some(1000))), (2, data("/a/2", None))],
        // A CanBePrefix Interest and, later in the same batch, a longer Data that satisfies it.
        vec![
            (1, wire_of(&interest("/a/3", 3))),
            (1, wire_of(&cbp)),
            (2, data("/c/p/v1", Some(1000))),
            (2, data("/a/3", None)),
        ],
        // A digest Interest, then its Data among others; a CS hit for the CanBePrefix name.
        vec![(1, wire_of(&by_digest)), (3, wire_of(&interest("/a/4", 4)))],
        vec![
            (2, data("/a/4", None)),
            (2, digest_data.to_wire()),
            (
                4,
                wire_of(&Interest {
                    can_be_prefix: true,
                    ..interest("/c/p", 8)
                }),
            ),
        ],
        // A Nack from the upstream, unsolicited Data, garbage.
        vec![(1, wire_of(&interest("/a/5", 5)))],
        vec![
            (2, nack(&wire_of(&interest("/a/5", 5)), NackReason::NoRoute)),
            (2, data("/nobody/asked", None)),
            (2, vec![0x06, 0x03, 0x07, 0x01]),
        ],
    ];
    for (t, batch) in batches.iter().enumerate() {
        let now = 1000 + t as u64;
        let a = run(&mut plain, now, batch);
        let b = run_hashed(&mut hinted, now, batch);
        assert_eq!(a, b, "batch {t}");
        assert!(!a.is_empty() || t == 6, "batch {t} did something");
    }
    assert_eq!(plain.counters(), hinted.counters());
    assert_eq!(hinted.counters().satisfied, 6);
    assert_eq!(hinted.counters().out_nacks, 1);
}

#[test]
fn prefetching_changes_no_decision() {
    // The same batches through an engine that requests lines ahead (its planning passes, the
    // Data's third level DATA_AHEAD packets before forwarding) and one that does not: every
    // action and counter must agree, in batches longer than the lookahead, mixing kinds, with
    // a Data whose PIT entry an earlier Data of the same batch already consumed.
    let (mut on, fib_a) = engine();
    let (mut off, fib_b) = engine();
    off.set_prefetch(false);
    for fib in [&fib_a, &fib_b] {
        route(fib, "/a", 2, 1);
        route(fib, "/c", 2, 1);
    }
    let cbp = Interest {
        can_be_prefix: true,
        ..interest("/c/p", 7)
    };
    let interests: Vec<(FaceId, Vec<u8>)> = (0..40)
        .map(|i| (1, wire_of(&interest(&format!("/a/{i}"), 100 + i))))
        .chain([(3, wire_of(&cbp))])
        .collect();
    let mut datas: Vec<(FaceId, Vec<u8>)> = Vec::new();
    for i in 0..40 {
        datas.push((2, data(&format!("/a/{i}"), Some(1000))));
        if i % 7 == 3 {
            // Again, and an Interest the CS now answers, within the lookahead of each other.
            datas.push((2, data(&format!("/a/{i}"), Some(1000))));
            datas.push((4, wire_of(&interest(&format!("/a/{i}"), 900 + i))));
        }
    }
    datas.insert(11, (2, data("/c/p/v1", Some(1000))));
    datas.insert(20, (2, data("/nobody/asked", None)));
    assert!(datas.len() <= engine::fw::pipeline::MAX_BATCH);
    for (t, batch) in [interests, datas].iter().enumerate() {
        let now = 1000 + t as u64;
        let a = run(&mut on, now, batch);
        let b = run(&mut off, now, batch);
        assert_eq!(a, b, "batch {t}");
    }
    assert_eq!(on.counters(), off.counters());
    assert_eq!(on.counters().satisfied, 41);
}
