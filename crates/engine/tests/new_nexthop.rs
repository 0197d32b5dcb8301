//! Multicast's afterNewNextHop, as NFD 24.07's multicast strategy tests describe it
//! (`NewNextHop` and the `/localhop` `ForwardAsync` cases): a pending Interest goes to a next
//! hop added while it waits — not to its own downstream, not past its scope — through
//! [`Engine::process`] and [`Engine::tick`] with a fake clock.

use std::sync::Arc;

use engine::fw::pipeline::{Engine, EngineConfig, FaceInfo, SendKind, NEW_NEXTHOP_WATCH};
use engine::fw::strategy::{Strategy, StrategyKind};
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::pit_cs::FaceId;
use wire::{Interest, InterestView, Limits, Name};

const KEY: HashKey = HashKey::fixed(7, 9);

fn n(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

fn interest(uri: &str, nonce: u32, hop_limit: Option<u8>) -> Vec<u8> {
    Interest {
        lifetime_ms: Some(4000),
        hop_limit,
        ..Interest::new(n(uri), nonce.to_be_bytes())
    }
    .to_wire()
}

/// An engine under multicast everywhere, faces 1..=3 non-local, 4..=5 local, its FIB shared.
fn engine() -> (Engine, Arc<Fib>) {
    let fib = Arc::new(Fib::new(KEY, 64, 2));
    let mut e = Engine::new(KEY, fib.clone(), EngineConfig::default());
    e.set_strategy(&n("/"), Some(Strategy::new(StrategyKind::Multicast)));
    for f in 1..=5 {
        let local = f >= 4;
        e.set_face(
            f,
            FaceInfo {
                local,
                ..FaceInfo::default()
            },
        );
    }
    (e, fib)
}

/// The faces each Interest of one batch went to, with the HopLimit each carries.
fn step(e: &mut Engine, now: u64, inputs: &[(FaceId, Vec<u8>)]) -> Vec<(FaceId, Option<u8>)> {
    let refs: Vec<(FaceId, &[u8])> = inputs.iter().map(|(f, b)| (*f, &b[..])).collect();
    let out = e.process(now, &refs);
    out.actions
        .iter()
        .filter(|a| a.kind == SendKind::Interest)
        .map(|a| {
            let i = InterestView::decode(out.bytes(a, &refs), &Limits::default()).unwrap();
            (a.face, i.hop_limit())
        })
        .collect()
}

fn tick(e: &mut Engine, now: u64) -> Vec<FaceId> {
    let out = e.tick(now);
    out.actions
        .iter()
        .filter(|a| a.kind == SendKind::Interest)
        .map(|a| a.face)
        .collect()
}

#[test]
fn a_pending_interest_goes_to_a_next_hop_added_while_it_waits() {
    // NFD's NewNextHop: routes to faces 1 and 2, an Interest from 1 goes to 2; face 3 added.
    let (mut e, fib) = engine();
    fib.add_nexthop(&n("/"), 1, 0).unwrap();
    fib.add_nexthop(&n("/"), 2, 0).unwrap();
    let sent = step(&mut e, 0, &[(1, interest("/H0D6i5fc", 1, Some(9)))]);
    assert_eq!(sent, [(2, Some(8))]);
    fib.add_nexthop(&n("/"), 3, 0).unwrap();
    // The stored Interest leaves with its HopLimit decremented, once.
    assert_eq!(tick(&mut e, 10), [3]);
    assert_eq!(tick(&mut e, 20), Vec::<FaceId>::new());
    // A cost update is no new next hop.
    fib.add_nexthop(&n("/"), 3, 5).unwrap();
    assert!(tick(&mut e, 30).is_empty());
    assert_eq!(e.counters().new_nexthop.sent, 1);
}

#[test]
fn an_interest_before_the_producer_registers_reaches_it_when_the_route_appears() {
    let (mut e, fib) = engine();
    // No route: multicast keeps the entry without a Nack.
    assert!(step(&mut e, 0, &[(1, interest("/app/x", 1, None))]).is_empty());
    // A route elsewhere, and a longer prefix than the Interest's name, change nothing.
    fib.add_nexthop(&n("/other"), 2, 0).unwrap();
    fib.add_nexthop(&n("/app/x/y"), 2, 0).unwrap();
    assert!(step(&mut e, 5, &[]).is_empty());
    // The producer registers /app on face 4: the Interest goes there, in the next batch.
    fib.add_nexthop(&n("/app"), 4, 0).unwrap();
    assert_eq!(step(&mut e, 10, &[]), [(4, None)]);
    // An entry gone (expired) is sent nowhere.
    fib.add_nexthop(&n("/app"), 5, 0).unwrap();
    assert!(tick(&mut e, 9_000).is_empty());
    assert_eq!(e.counters().new_nexthop.sent, 1);
}

#[test]
fn the_downstream_itself_is_no_new_next_hop() {
    // NFD's InFaceSelection1 (without /localhop): the new next hop is the Interest's face.
    let (mut e, fib) = engine();
    fib.add_nexthop(&n("/"), 2, 0).unwrap();
    assert_eq!(
        step(&mut e, 0, &[(1, interest("/z", 1, None))]),
        [(2, None)]
    );
    fib.add_nexthop(&n("/"), 1, 0).unwrap();
    assert!(tick(&mut e, 1).is_empty());
    // A second downstream on another face: face 1 may serve it now (multicast sends it
    // there at once); a next hop added later gets it once.
    assert_eq!(
        step(&mut e, 2, &[(3, interest("/z", 2, None))]),
        [(1, None)]
    );
    fib.add_nexthop(&n("/"), 5, 0).unwrap();
    assert_eq!(tick(&mut e, 3), [5]);
}

/// NFD's ForwardAsync cases under `/localhop`: routes to `fib1`, `fib2`; the Interest from
/// `in1` (and `in2`); next hop `new` added; whether it gets the Interest.
fn localhop_case(
    in1: FaceId,
    in2: Option<FaceId>,
    fib1: FaceId,
    fib2: FaceId,
    new: FaceId,
) -> bool {
    let (mut e, fib) = engine();
    fib.add_nexthop(&n("/localhop"), fib1, 0).unwrap();
    fib.add_nexthop(&n("/localhop"), fib2, 0).unwrap();
    step(&mut e, 0, &[(in1, interest("/localhop/H0D6i5fc", 1, None))]);
    if let Some(f) = in2 {
        step(&mut e, 1, &[(f, interest("/localhop/H0D6i5fc", 2, None))]);
    }
    fib.add_nexthop(&n("/localhop"), new, 0).unwrap();
    tick(&mut e, 2).contains(&new)
}

#[test]
fn localhop_scope_holds_for_new_next_hops_as_nfd_forward_async() {
    // Non-local faces 1..=3, local 4..=5.
    assert!(!localhop_case(1, None, 1, 2, 3), "BasicNonLocal");
    assert!(localhop_case(1, None, 1, 2, 4), "NewFibLocal");
    assert!(localhop_case(4, None, 1, 2, 3), "InFaceLocal");
    assert!(!localhop_case(4, None, 1, 2, 4), "InFaceLocalSameNewFace");
    assert!(
        localhop_case(4, Some(1), 1, 2, 3),
        "InFaceLocalAndNonLocal1"
    );
    assert!(
        localhop_case(1, Some(4), 1, 2, 3),
        "InFaceLocalAndNonLocal2"
    );
    assert!(!localhop_case(1, None, 3, 2, 1), "InFaceSelection1");
    assert!(!localhop_case(2, Some(1), 2, 3, 1), "InFaceSelection2");
}

#[test]
fn localhost_and_a_spent_hop_limit_stay_on_local_faces() {
    let (mut e, fib) = engine();
    step(&mut e, 0, &[(4, interest("/localhost/q", 1, None))]);
    step(&mut e, 0, &[(1, interest("/h/q", 2, Some(1)))]);
    fib.add_nexthop(&n("/"), 2, 0).unwrap();
    assert!(tick(&mut e, 1).is_empty());
    fib.add_nexthop(&n("/"), 5, 0).unwrap();
    let mut got = tick(&mut e, 2);
    got.sort();
    assert_eq!(got, [5, 5]);
}

#[test]
fn the_watch_is_bounded_and_counts_what_did_not_fit() {
    let (mut e, fib) = engine();
    let extra = 10;
    for k in 0..(NEW_NEXTHOP_WATCH + extra) as u32 {
        step(&mut e, 0, &[(1, interest(&format!("/w/{k}"), k, None))]);
    }
    assert_eq!(e.counters().new_nexthop.unwatched, extra as u64);
    fib.add_nexthop(&n("/w"), 2, 0).unwrap();
    assert_eq!(tick(&mut e, 1).len(), NEW_NEXTHOP_WATCH);
    // Once they are gone (expired), the queue takes new entries again.
    assert_eq!(
        step(&mut e, 10_000, &[(1, interest("/w/new", 1, None))]),
        [(2, None)]
    );
    assert_eq!(e.counters().new_nexthop.unwatched, extra as u64);
    fib.add_nexthop(&n("/w"), 3, 0).unwrap();
    assert_eq!(tick(&mut e, 10_001), [3]);
}

#[test]
fn a_next_hop_removed_and_added_again_gets_the_interest_again() {
    // NFD's afterNewNextHop sends to the added next hop whatever its out-record says.
    let (mut e, fib) = engine();
    fib.add_nexthop(&n("/"), 2, 0).unwrap();
    fib.add_nexthop(&n("/"), 3, 0).unwrap();
    let mut first = step(&mut e, 0, &[(1, interest("/r", 1, None))]);
    first.sort();
    assert_eq!(first, [(2, None), (3, None)]);
    // Face 2 leaves and comes back before the engine looks: it gets the Interest again, face
    // 3 (never gone) does not.
    assert!(fib.remove_nexthop(&n("/"), 2));
    fib.add_nexthop(&n("/"), 2, 0).unwrap();
    assert_eq!(tick(&mut e, 10), [2]);
    // Once per addition: another prefix's addition sends nothing more.
    fib.add_nexthop(&n("/other"), 2, 0).unwrap();
    assert!(tick(&mut e, 20).is_empty());
    // The same face added to a longer prefix than the entry's longest match is not new to it.
    fib.add_nexthop(&n("/r/s"), 3, 0).unwrap();
    assert!(tick(&mut e, 30).is_empty());
    // A next hop removed and added again on the entry's own longest match again.
    assert!(fib.remove_nexthop(&n("/"), 3));
    fib.add_nexthop(&n("/"), 3, 0).unwrap();
    assert_eq!(tick(&mut e, 40), [3]);
    assert_eq!(e.counters().new_nexthop.sent, 2);
}

#[test]
fn a_readdition_older_than_the_fibs_log_is_not_sent_again() {
    // The FIB remembers its last ADDITION_LOG additions: a re-addition followed by more
    // before the engine looks is no longer known, and the out-record stands.
    let (mut e, fib) = engine();
    fib.add_nexthop(&n("/"), 2, 0).unwrap();
    assert_eq!(
        step(&mut e, 0, &[(1, interest("/r", 1, None))]),
        [(2, None)]
    );
    assert!(fib.remove_nexthop(&n("/"), 2));
    fib.add_nexthop(&n("/"), 2, 0).unwrap();
    for _ in 0..engine::table::fib::ADDITION_LOG {
        fib.add_nexthop(&n("/elsewhere"), 3, 0).unwrap();
        assert!(fib.remove_nexthop(&n("/elsewhere"), 3));
    }
    assert!(tick(&mut e, 10).is_empty());
    // The log's length decides: one addition fewer and the re-addition is still known.
    let (mut e, fib) = engine();
    fib.add_nexthop(&n("/"), 2, 0).unwrap();
    step(&mut e, 0, &[(1, interest("/r", 1, None))]);
    assert!(fib.remove_nexthop(&n("/"), 2));
    fib.add_nexthop(&n("/"), 2, 0).unwrap();
    for _ in 0..engine::table::fib::ADDITION_LOG - 1 {
        fib.add_nexthop(&n("/elsewhere"), 3, 0).unwrap();
        assert!(fib.remove_nexthop(&n("/elsewhere"), 3));
    }
    assert_eq!(tick(&mut e, 10), [2]);
}
