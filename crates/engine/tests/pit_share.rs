//! The PIT's per-face limits: the InterestLifetime cap and the fair share that applies once
//! the PIT is nearly full. Deterministic: time is passed in, every packet is a real encoding.

use std::sync::Arc;

use engine::fw::pipeline::{DropReason, Engine, EngineConfig, SendKind};
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::pit_cs::{FaceId, PitCsConfig, PitLimits};
use wire::lp::NackReason;
use wire::{Data, Interest, Name, PacketView};

const KEY: HashKey = HashKey::fixed(0x77, 0x99);

/// The producer face: it never answers unless a test sends its Data.
const UPSTREAM: FaceId = 9;
const FLOODER: FaceId = 1;
const LEGIT: FaceId = 2;

fn engine(pit_capacity: usize, watermark_percent: u8) -> Engine {
    let fib = Arc::new(Fib::new(KEY, 64, 2));
    fib.add_nexthop(&Name::from_uri("/a").unwrap(), UPSTREAM, 1)
        .unwrap();
    let config = EngineConfig {
        pit_cs: PitCsConfig {
            pit_capacity,
            cs_capacity: 64,
            ..PitCsConfig::default()
        },
        pit_limits: PitLimits {
            max_lifetime_ms: 120_000,
            share_watermark_percent: watermark_percent,
            face_slots: 64,
        },
        dead_nonce_capacity: 1024,
        ..EngineConfig::default()
    };
    Engine::new(KEY, fib, config)
}

fn interest(uri: &str, nonce: u32, lifetime_ms: u64) -> Vec<u8> {
    Interest {
        lifetime_ms: Some(lifetime_ms),
        ..Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes())
    }
    .to_wire()
}

fn data(uri: &str) -> Vec<u8> {
    let mut d = Data::new(Name::from_uri(uri).unwrap(), b"x".to_vec());
    d.sign_digest_sha256();
    d.to_wire()
}

/// One packet through the engine: (face, kind) of every action. Checks the table's
/// invariants (per-face counts equal the in-records present among them) after each batch.
fn run(e: &mut Engine, now: u64, face: FaceId, bytes: &[u8]) -> Vec<(FaceId, SendKind)> {
    let out = e.process(now, &[(face, bytes)]);
    let sent = out.actions.iter().map(|a| (a.face, a.kind)).collect();
    e.table().check_invariants().unwrap();
    sent
}

fn drops(e: &Engine, r: DropReason) -> u64 {
    e.counters().drops[r.index()]
}

#[test]
fn a_flooding_face_stops_at_the_watermark_and_another_face_is_still_forwarded() {
    // 64 entries, watermark 75 %: 48.
    let mut e = engine(64, 75);
    let mut forwarded = 0;
    let mut refused = 0;
    for n in 0..100u32 {
        let sent = run(
            &mut e,
            1000,
            FLOODER,
            &interest(&format!("/a/flood/{n}"), n, 4000),
        );
        match sent[..] {
            [(UPSTREAM, SendKind::Interest)] => forwarded += 1,
            [(FLOODER, SendKind::Nack(NackReason::Congestion))] => refused += 1,
            _ => panic!("unexpected {sent:?}"),
        }
    }
    // Alone, the flooder's share is half the PIT (one share kept for a newcomer); it is
    // enforced only from the watermark on.
    assert_eq!((forwarded, refused), (48, 52));
    assert_eq!(e.table().pit_len(), 48);
    assert_eq!(e.table().face_in_records(FLOODER), 48);
    assert_eq!(drops(&e, DropReason::PitShare), 52);
    assert_eq!(drops(&e, DropReason::PitFull), 0);
    // A retransmission of an Interest the flooder already has pending is a refresh, not a new
    // in-record: it is not refused (it is suppressed as a retransmission within 10 ms).
    let sent = run(
        &mut e,
        1001,
        FLOODER,
        &interest("/a/flood/0", 1_000_000, 4000),
    );
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(drops(&e, DropReason::PitShare), 52);
    // Another face is under its share: its Interests are forwarded, up to the PIT's capacity.
    for n in 0..16u32 {
        let sent = run(
            &mut e,
            1002,
            LEGIT,
            &interest(&format!("/a/legit/{n}"), 500 + n, 4000),
        );
        assert_eq!(sent, [(UPSTREAM, SendKind::Interest)], "legit Interest {n}");
    }
    assert_eq!(e.table().pit_len(), 64);
    assert_eq!(e.table().face_in_records(LEGIT), 16);
    assert_eq!(e.table().active_faces(), 2);
    // Its Data come back: its entries go, and the flooder still cannot take them.
    for n in 0..16u32 {
        let sent = run(&mut e, 1003, UPSTREAM, &data(&format!("/a/legit/{n}")));
        assert_eq!(sent, [(LEGIT, SendKind::Data)]);
    }
    assert_eq!(e.table().face_in_records(LEGIT), 0);
    let sent = run(&mut e, 1004, FLOODER, &interest("/a/flood/x", 7777, 4000));
    assert_eq!(sent, [(FLOODER, SendKind::Nack(NackReason::Congestion))]);
    // The flooder's Interests expire (the refreshed one a millisecond later): every count
    // returns to zero.
    e.advance(1000 + 4000);
    assert_eq!(e.table().face_in_records(FLOODER), 1);
    e.advance(1001 + 4000);
    e.table().check_invariants().unwrap();
    assert_eq!(e.table().pit_len(), 0);
    assert_eq!(e.table().face_in_records(FLOODER), 0);
    assert_eq!(e.table().active_faces(), 0);
    assert_eq!(e.counters().unsatisfied, 48);
    // And it is forwarded again.
    let sent = run(&mut e, 5002, FLOODER, &interest("/a/flood/y", 8888, 4000));
    assert_eq!(sent, [(UPSTREAM, SendKind::Interest)]);
}

#[test]
fn below_the_watermark_the_share_does_not_apply() {
    let mut e = engine(64, 75);
    // Two faces hold in-records: the share is 64 / 3 = 21; the second face takes 40 entries,
    // well above it, while the PIT stays under 48.
    run(&mut e, 0, FLOODER, &interest("/a/f/0", 1, 4000));
    for n in 0..40u32 {
        let sent = run(
            &mut e,
            0,
            LEGIT,
            &interest(&format!("/a/l/{n}"), 10 + n, 4000),
        );
        assert_eq!(sent, [(UPSTREAM, SendKind::Interest)], "Interest {n}");
    }
    assert_eq!(e.table().fair_share(), 21);
    assert_eq!(e.table().face_in_records(LEGIT), 40);
    assert_eq!(drops(&e, DropReason::PitShare), 0);
    // Aggregation counts an in-record per downstream: the flooder joins the same 7 names.
    for n in 0..7u32 {
        let sent = run(
            &mut e,
            1,
            FLOODER,
            &interest(&format!("/a/l/{n}"), 100 + n, 4000),
        );
        assert!(sent.is_empty(), "aggregated {sent:?}");
    }
    assert_eq!(e.table().face_in_records(FLOODER), 8);
    assert_eq!(e.table().pit_len(), 41);
    // One Data satisfies both downstreams of a name and both counts drop.
    let mut sent = run(&mut e, 2, UPSTREAM, &data("/a/l/0"));
    sent.sort_by_key(|s| s.0);
    assert_eq!(sent, [(FLOODER, SendKind::Data), (LEGIT, SendKind::Data)]);
    assert_eq!(e.table().face_in_records(FLOODER), 7);
    assert_eq!(e.table().face_in_records(LEGIT), 39);
    e.advance(10_000);
    assert_eq!(e.table().active_faces(), 0);
    e.table().check_invariants().unwrap();
}

#[test]
fn interest_lifetime_is_capped() {
    let mut e = engine(64, 90);
    // An hour-long Interest waits two minutes, no longer.
    let hour = 3_600_000;
    assert_eq!(
        run(&mut e, 0, LEGIT, &interest("/a/long", 1, hour)),
        [(UPSTREAM, SendKind::Interest)]
    );
    e.advance(119_999);
    assert_eq!(e.table().pit_len(), 1);
    e.advance(120_000);
    assert_eq!(e.table().pit_len(), 0);
    assert_eq!(e.counters().unsatisfied, 1);
    // The Interest was forwarded unchanged: its own lifetime is the application's business.
    let again = interest("/a/long", 2, hour);
    let inputs = [(LEGIT, &again[..])];
    let out = e.process(120_001, &inputs);
    assert_eq!(out.actions.len(), 1);
    let bytes = out.bytes(&out.actions[0], &inputs).to_vec();
    let PacketView::Interest(i) = PacketView::decode(&bytes, &Default::default()).unwrap() else {
        panic!("not an Interest");
    };
    assert_eq!(i.effective_lifetime_ms(), hour);
    // A 60 s lifetime (ndn-cxx's FaceMonitor, NLSR's sync default) is kept whole.
    run(&mut e, 200_000, LEGIT, &interest("/a/minute", 3, 60_000));
    e.advance(259_999);
    assert_eq!(e.table().pit_len(), 1);
    e.advance(260_000);
    assert_eq!(e.table().pit_len(), 0);
}

#[test]
fn a_face_of_a_new_generation_of_a_slot_is_not_the_closed_face_of_the_old_one() {
    use engine::fw::pipeline::FaceInfo;
    let mut e = engine(64, 90);
    // Face ids of one slot (64 slots): the closed face's, and the next generation's.
    const OLD: FaceId = 10;
    const NEW: FaceId = 10 + 64;
    assert_eq!(e.table().face_slot(OLD), e.table().face_slot(NEW));
    assert_eq!(e.table().face_slots(), 64);
    let sent = run(&mut e, 0, OLD, &interest("/a/1", 1, 4000));
    assert_eq!(sent, vec![(UPSTREAM, SendKind::Interest)]);
    // OLD closes; NEW, a local face, takes its slot while OLD's Interest is pending.
    let local = FaceInfo {
        local: true,
        ..FaceInfo::default()
    };
    e.set_face(NEW, local);
    // The Data goes to the in-record's full id (which names no open face: the I/O drops it),
    // not to the new face on the slot.
    let sent = run(&mut e, 1, UPSTREAM, &data("/a/1"));
    assert_eq!(sent, vec![(OLD, SendKind::Data)]);
    // The slot's properties are NEW's only: a /localhost Interest from NEW passes the scope
    // check, one from OLD's id (non-local, unknown) does not.
    let scope = drops(&e, DropReason::Scope);
    run(&mut e, 2, NEW, &interest("/localhost/x", 2, 4000));
    assert_eq!(drops(&e, DropReason::Scope), scope);
    run(&mut e, 3, OLD, &interest("/localhost/y", 3, 4000));
    assert_eq!(drops(&e, DropReason::Scope), scope + 1);
    // NEW's own Interest is answered to NEW.
    run(&mut e, 4, NEW, &interest("/a/2", 4, 4000));
    let sent = run(&mut e, 5, UPSTREAM, &data("/a/2"));
    assert_eq!(sent, vec![(NEW, SendKind::Data)]);
}

#[test]
fn a_new_face_on_a_closed_faces_slot_gets_its_whole_share_at_once() {
    // 64 entries, watermark 75 %: 48. Face slots 64: FLOODER + 64 is the same slot, a new
    // generation of it, as a face table names the face that takes a closed face's slot.
    let mut e = engine(64, 75);
    let successor: FaceId = FLOODER + 64;
    for n in 0..48u32 {
        run(
            &mut e,
            1000,
            FLOODER,
            &interest(&format!("/a/old/{n}"), n, 60_000),
        );
    }
    assert_eq!(e.table().face_in_records(FLOODER), 48);
    // The flooder closes holding its share (its in-records stay until they expire); the
    // successor on its slot is not charged with them: its Interests are forwarded up to the
    // PIT's capacity (its share: 64 over one face holding in-records plus one, 32).
    for n in 0..16u32 {
        let sent = run(
            &mut e,
            1001,
            successor,
            &interest(&format!("/a/new/{n}"), 100 + n, 4000),
        );
        assert_eq!(sent, [(UPSTREAM, SendKind::Interest)], "Interest {n}");
    }
    assert_eq!(e.table().face_in_records(successor), 16);
    assert_eq!(e.table().face_in_records(FLOODER), 0, "no longer counted");
    assert_eq!(e.table().active_faces(), 1);
    assert_eq!(drops(&e, DropReason::PitShare), 0);
    // The old in-records expire after the successor's: its count is untouched by them.
    e.advance(1001 + 4000);
    assert_eq!(e.table().face_in_records(successor), 0);
    assert_eq!(e.table().active_faces(), 0);
    e.table().check_invariants().unwrap();
    run(&mut e, 5002, successor, &interest("/a/new/x", 999, 4000));
    e.advance(61_000);
    e.table().check_invariants().unwrap();
    assert_eq!(e.table().pit_len(), 0);
    assert_eq!(e.table().face_in_records(successor), 0);
    assert_eq!(e.table().active_faces(), 0);
}
