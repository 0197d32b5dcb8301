//! The strategies' behaviour as NFD's strategy tests describe it (best-route and multicast
//! retransmission suppression with parameters, ASF's choice, probing, timeouts and Nacks), and
//! the content store's admit and serve switches: real packets through [`Engine::process`], with
//! a fake clock (the `now` each batch is given) and simulated upstreams.

use std::collections::BTreeMap;
use std::sync::Arc;

use engine::fw::asf::LastRtt;
use engine::fw::pipeline::{DropReason, Engine, EngineConfig, SendKind};
use engine::fw::strategy::{RetxSuppression, Strategy, StrategyKind};
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::pit_cs::FaceId;
use wire::lp::NackReason;
use wire::{Data, Interest, InterestView, Limits, LpPacket, Name};

const KEY: HashKey = HashKey::fixed(7, 9);
/// The consumer's face.
const DOWN: FaceId = 1;
/// The cheaper upstream.
const UP_A: FaceId = 10;
/// The dearer upstream.
const UP_B: FaceId = 11;

fn n(uri: &str) -> Name {
    Name::from_uri(uri).unwrap()
}

/// An engine with routes /a → UP_A (cost 1), UP_B (cost 2), and `strategy` at /a.
fn engine(strategy: Strategy) -> Engine {
    let fib = Arc::new(Fib::new(KEY, 64, 2));
    fib.add_nexthop(&n("/a"), UP_A, 1).unwrap();
    fib.add_nexthop(&n("/a"), UP_B, 2).unwrap();
    let mut e = Engine::new(KEY, fib, EngineConfig::default());
    e.set_strategy(&n("/a"), Some(strategy));
    e
}

fn interest(uri: &str, nonce: u32) -> Vec<u8> {
    Interest {
        lifetime_ms: Some(4000),
        ..Interest::new(n(uri), nonce.to_be_bytes())
    }
    .to_wire()
}

fn data(uri: &str) -> Vec<u8> {
    let mut d = Data::new(n(uri), b"x".to_vec());
    d.sign_digest_sha256();
    d.to_wire()
}

/// One batch: the (face, kind, bytes) of every action.
fn step(
    e: &mut Engine,
    now: u64,
    inputs: &[(FaceId, Vec<u8>)],
) -> Vec<(FaceId, SendKind, Vec<u8>)> {
    let refs: Vec<(FaceId, &[u8])> = inputs.iter().map(|(f, b)| (*f, &b[..])).collect();
    let out = e.process(now, &refs);
    out.actions
        .iter()
        .map(|a| (a.face, a.kind, out.bytes(a, &refs).to_vec()))
        .collect()
}

/// The upstream faces an Interest went to.
fn upstreams(sent: &[(FaceId, SendKind, Vec<u8>)]) -> Vec<FaceId> {
    sent.iter()
        .filter(|s| s.1 == SendKind::Interest)
        .map(|s| s.0)
        .collect()
}

fn with_retx(kind: StrategyKind, initial_ms: u32, max_ms: u32, multiplier: f32) -> Strategy {
    Strategy {
        retx: RetxSuppression {
            initial_ms,
            max_ms,
            multiplier,
        },
        ..Strategy::new(kind)
    }
}

/// Sends retransmissions of /a/x (new nonces) from DOWN at `times`; the upstreams they went to.
fn retransmit(e: &mut Engine, times: &[u64]) -> Vec<(u64, Vec<FaceId>)> {
    times
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            (
                t,
                upstreams(&step(e, t, &[(DOWN, interest("/a/x", i as u32 + 1))])),
            )
        })
        .collect()
}

#[test]
fn best_route_suppresses_retransmissions_with_its_parameters() {
    // initial 50 ms, doubling, at most 200 ms (NFD's defaults would forward at t = 30).
    let mut e = engine(with_retx(StrategyKind::BestRoute, 50, 200, 2.0));
    let got = retransmit(&mut e, &[0, 30, 50, 120, 150, 300, 350, 500, 550]);
    let expect: Vec<(u64, Vec<FaceId>)> = vec![
        (0, vec![UP_A]),
        (30, vec![]),
        // The unused upstream first, then the one tried longest ago.
        (50, vec![UP_B]),
        (120, vec![]),
        (150, vec![UP_A]),
        (300, vec![]),
        (350, vec![UP_B]),
        // The interval stays at its 200 ms cap.
        (500, vec![]),
        (550, vec![UP_A]),
    ];
    assert_eq!(got, expect);
    assert_eq!(e.counters().drops[DropReason::Suppressed.index()], 4);

    // The defaults: 10 ms, doubling up to 250 ms.
    let mut e = engine(Strategy::new(StrategyKind::BestRoute));
    let got = retransmit(&mut e, &[0, 9, 10, 29, 30]);
    let sent: Vec<usize> = got.iter().map(|(_, f)| f.len()).collect();
    assert_eq!(sent, [1, 0, 1, 0, 1]);
}

#[test]
fn multicast_suppresses_per_upstream_with_its_parameters() {
    // initial 20 ms, tripling, at most 100 ms.
    let mut e = engine(with_retx(StrategyKind::Multicast, 20, 100, 3.0));
    let got = retransmit(&mut e, &[0, 10, 20, 70, 80, 170, 180, 279, 280]);
    let both = vec![UP_A, UP_B];
    let expect: Vec<(u64, Vec<FaceId>)> = vec![
        (0, both.clone()),
        (10, vec![]),
        (20, both.clone()),
        // 60 ms now.
        (70, vec![]),
        (80, both.clone()),
        // 180 ms, capped at 100.
        (170, vec![]),
        (180, both.clone()),
        (279, vec![]),
        (280, both),
    ];
    assert_eq!(got, expect);
}

#[test]
fn cs_admit_and_serve_switches() {
    let mut e = engine(Strategy::new(StrategyKind::BestRoute));
    // Admission off: the pending Interest is satisfied, the Data is not cached.
    e.set_cs_flags(false, true);
    assert_eq!(
        upstreams(&step(&mut e, 0, &[(DOWN, interest("/a/1", 1))])),
        [UP_A]
    );
    let back = step(&mut e, 1, &[(UP_A, data("/a/1"))]);
    assert_eq!((back[0].0, back[0].1), (DOWN, SendKind::Data));
    assert_eq!(e.table().cs_len(), 0);
    assert_eq!(
        upstreams(&step(&mut e, 2, &[(DOWN, interest("/a/1", 2))])),
        [UP_A]
    );
    step(&mut e, 3, &[(UP_A, data("/a/1"))]);
    // Serving off, admission on: cached, but Interests go upstream all the same.
    e.set_cs_flags(true, false);
    assert_eq!(e.cs_flags(), (true, false));
    assert_eq!(
        upstreams(&step(&mut e, 4, &[(DOWN, interest("/a/2", 3))])),
        [UP_A]
    );
    step(&mut e, 5, &[(UP_A, data("/a/2"))]);
    assert_eq!(e.table().cs_len(), 1);
    assert_eq!(
        upstreams(&step(&mut e, 6, &[(DOWN, interest("/a/2", 4))])),
        [UP_A]
    );
    step(&mut e, 7, &[(UP_A, data("/a/2"))]);
    // Serving back on: the CS answers.
    e.set_cs_flags(true, true);
    let hit = step(&mut e, 8, &[(DOWN, interest("/a/2", 5))]);
    assert_eq!(hit.len(), 1);
    assert_eq!((hit[0].0, hit[0].1), (DOWN, SendKind::Data));
}

/// Two simulated producers behind UP_A and UP_B, each answering after its delay (`None`: it
/// does not answer; `Some(Err)`: it Nacks), and a consumer sending one new Interest every
/// `gap_ms`.
struct Sim {
    e: Engine,
    delay: BTreeMap<FaceId, Option<Result<u64, ()>>>,
    /// Replies due: (time, face, packet).
    due: Vec<(u64, FaceId, Vec<u8>)>,
    /// Interests that went upstream: (time, face, nonce).
    log: Vec<(u64, FaceId, [u8; 4])>,
    satisfied: u64,
    nacked: u64,
    next: u32,
}

impl Sim {
    fn new(strategy: Strategy, a_ms: u64, b_ms: u64) -> Self {
        Sim {
            e: engine(strategy),
            delay: [(UP_A, Some(Ok(a_ms))), (UP_B, Some(Ok(b_ms)))].into(),
            due: vec![],
            log: vec![],
            satisfied: 0,
            nacked: 0,
            next: 0,
        }
    }

    /// Runs from `from` to `to` (ms) in 1 ms steps, a new Interest every `gap_ms`.
    fn run(&mut self, from: u64, to: u64, gap_ms: u64) {
        for t in from..to {
            let mut inputs = vec![];
            let (now, later): (Vec<_>, Vec<_>) = self.due.drain(..).partition(|d| d.0 <= t);
            self.due = later;
            inputs.extend(now.into_iter().map(|(_, f, p)| (f, p)));
            if t % gap_ms == 0 {
                self.next += 1;
                let i = self.next;
                inputs.push((DOWN, interest(&format!("/a/{i}"), i)));
            }
            for (face, kind, bytes) in step(&mut self.e, t, &inputs) {
                match (face, kind) {
                    (DOWN, SendKind::Data) => self.satisfied += 1,
                    (DOWN, SendKind::Nack(_)) => self.nacked += 1,
                    (f, SendKind::Interest) => self.upstream(t, f, bytes),
                    _ => {}
                }
            }
        }
    }

    fn upstream(&mut self, t: u64, face: FaceId, bytes: Vec<u8>) {
        let i = InterestView::decode(&bytes, &Limits::default()).unwrap();
        self.log.push((t, face, i.nonce().unwrap()));
        let name = i.name().to_name().to_string();
        match self.delay[&face] {
            Some(Ok(d)) => self.due.push((t + d, face, data(&name))),
            Some(Err(())) => {
                let nack = LpPacket::nack(bytes.clone(), NackReason::NoRoute).to_wire();
                self.due.push((t + 1, face, nack))
            }
            None => {}
        }
    }

    /// Interests sent to `face` in [from, to).
    fn sent(&self, face: FaceId, from: u64, to: u64) -> usize {
        self.log
            .iter()
            .filter(|&&(t, f, _)| f == face && (from..to).contains(&t))
            .count()
    }
}

#[test]
fn asf_forwards_to_the_faster_upstream_once_probed() {
    // UP_A is cheaper but slow (100 ms); UP_B dearer but fast (20 ms).
    let mut s = Sim::new(Strategy::new(StrategyKind::Asf), 100, 20);
    s.run(0, 10_000, 50);
    // Before any measurement, the cheaper face; a probe (new nonce) finds UP_B within 5 s.
    assert_eq!(s.log[0].1, UP_A);
    let probe = s.log.iter().find(|l| l.1 == UP_B).expect("UP_B probed");
    assert!(probe.0 <= 5_000, "first probe at {}", probe.0);
    let same_time: Vec<_> = s.log.iter().filter(|l| l.0 == probe.0).collect();
    assert_eq!(same_time.len(), 2, "a probe goes with an Interest");
    assert_ne!(same_time[0].2, same_time[1].2, "a probe has its own nonce");
    // Then every Interest goes to the faster face, and every one is satisfied.
    assert_eq!(s.sent(UP_A, 6_000, 10_000), 0);
    assert_eq!(s.sent(UP_B, 6_000, 10_000), 80);
    assert_eq!((s.satisfied, s.nacked), (200, 0));
    assert!(s.e.asf().is_some_and(|t| t.len(10_000) == 1));
}

#[test]
fn asf_leaves_a_face_after_max_timeouts() {
    let strategy = Strategy {
        max_timeouts: 2,
        ..Strategy::new(StrategyKind::Asf)
    };
    let mut s = Sim::new(strategy, 100, 20);
    s.run(0, 8_000, 50);
    assert_eq!(s.sent(UP_A, 7_000, 8_000), 0);
    // UP_B stops answering: its RTO (200 ms, its minimum) runs out twice, then UP_A is used.
    s.delay.insert(UP_B, None);
    s.run(8_000, 9_000, 50);
    let first_a = s
        .log
        .iter()
        .find(|l| l.1 == UP_A && l.0 >= 8_000)
        .unwrap()
        .0;
    assert!(
        (8_400..8_500).contains(&first_a),
        "back to UP_A at {first_a}"
    );
    assert_eq!(s.sent(UP_B, first_a, 9_000), 0);
    assert_eq!(
        s.sent(UP_A, first_a, 9_000) as u64,
        (9_000 - first_a).div_ceil(50)
    );

    // With max-timeouts 4, the same takes twice as long.
    let strategy = Strategy {
        max_timeouts: 4,
        ..Strategy::new(StrategyKind::Asf)
    };
    let mut s = Sim::new(strategy, 100, 20);
    s.run(0, 8_000, 50);
    s.delay.insert(UP_B, None);
    s.run(8_000, 9_000, 50);
    let first_a = s
        .log
        .iter()
        .find(|l| l.1 == UP_A && l.0 >= 8_000)
        .unwrap()
        .0;
    assert!(
        (8_800..8_900).contains(&first_a),
        "back to UP_A at {first_a}"
    );
}

#[test]
fn asf_leaves_a_face_at_its_first_nack() {
    let mut s = Sim::new(Strategy::new(StrategyKind::Asf), 100, 20);
    s.run(0, 8_000, 50);
    s.delay.insert(UP_B, Some(Err(())));
    s.run(8_000, 8_200, 50);
    // The Interest of t = 8000 is Nacked back (its only upstream Nacked); the next goes to UP_A.
    assert_eq!(s.sent(UP_B, 8_000, 8_200), 1);
    assert_eq!(s.sent(UP_A, 8_001, 8_200), 3);
    assert_eq!(s.nacked, 1);
}

#[test]
fn asf_probes_every_probing_interval() {
    let count_probes = |probing_interval_ms| {
        let strategy = Strategy {
            probing_interval_ms,
            ..Strategy::new(StrategyKind::Asf)
        };
        let mut s = Sim::new(strategy, 100, 20);
        s.run(0, 30_000, 50);
        // Once UP_B is the best, Interests to UP_A are probes.
        s.sent(UP_A, 6_000, 30_000)
    };
    assert_eq!(count_probes(1_000), 24);
    assert!(count_probes(60_000) <= 1);
}

/// An engine whose FIB sends /t to faces 1, 2 and 3 (cost 0 each), `strategy` at /t.
fn three_faces(strategy: Strategy) -> Engine {
    let fib = Arc::new(Fib::new(KEY, 64, 2));
    for f in [1, 2, 3] {
        fib.add_nexthop(&n("/t"), f, 0).unwrap();
    }
    let mut e = Engine::new(KEY, fib, EngineConfig::default());
    e.set_strategy(&n("/t"), Some(strategy));
    e
}

#[test]
fn multicast_suppresses_each_upstream_on_its_own_out_record() {
    // NFD's MulticastStrategy RetxSuppression test: the same Interest (new nonces) from
    // faces 1, 2, 3 in turn; each upstream's out-record has its own interval (10 ms, doubling).
    let mut e = three_faces(Strategy::new(StrategyKind::Multicast));
    let mut at = |t: u64, from: FaceId, nonce: u32| {
        let mut up = upstreams(&step(&mut e, t, &[(from, interest("/t/x", nonce))]));
        up.sort();
        up
    };
    assert_eq!(at(0, 1, 1), [2, 3]);
    // Face 1 is new (no out-record); face 3 within its 10 ms.
    assert_eq!(at(5, 2, 2), [1]);
    // Face 1 sent 7 ms ago: suppressed; face 2 past its 10 ms: forwarded, its interval 20 ms.
    assert_eq!(at(12, 3, 3), [2]);
    // Face 1 past its 10 ms (interval now 20); face 2 within its 20 ms.
    assert_eq!(at(30, 3, 4), [1]);
    // Face 2 past its 20 ms; face 3, sent at 0 with its interval never grown, too.
    assert_eq!(at(33, 1, 5), [2, 3]);
}

#[test]
fn asf_suppresses_per_upstream_and_tries_an_unused_face_at_once() {
    let mut e = engine(Strategy::new(StrategyKind::Asf));
    let got = retransmit(&mut e, &[0, 5, 8, 10, 15, 20, 29, 30]);
    let expect: Vec<(u64, Vec<FaceId>)> = vec![
        (0, vec![UP_A]),
        // A retransmission goes to the unused upstream without waiting.
        (5, vec![UP_B]),
        // Both used: the one tried longest ago, once past its own interval (10, then 20 ms).
        (8, vec![]),
        (10, vec![UP_A]),
        (15, vec![UP_B]),
        (20, vec![]),
        (29, vec![]),
        (30, vec![UP_A]),
    ];
    assert_eq!(got, expect);
}

#[test]
fn best_route_takes_an_interest_as_new_once_no_out_record_is_pending() {
    let mut e = engine(Strategy::new(StrategyKind::BestRoute));
    let short = Interest {
        lifetime_ms: Some(100),
        ..Interest::new(n("/a/x"), [0, 0, 0, 1])
    }
    .to_wire();
    assert_eq!(upstreams(&step(&mut e, 0, &[(DOWN, short)])), [UP_A]);
    // Another downstream's Interest within the interval: suppressed (the entry lives on with
    // its 4 s in-record).
    assert!(upstreams(&step(&mut e, 5, &[(2, interest("/a/x", 2))])).is_empty());
    // UP_A's out-record expired at 100 ms: the next Interest is new, to the cheapest upstream
    // again (as a retransmission it would have gone to the unused UP_B).
    assert_eq!(
        upstreams(&step(&mut e, 200, &[(2, interest("/a/x", 3))])),
        [UP_A]
    );
    // Now a retransmission: to UP_B, unused.
    assert_eq!(
        upstreams(&step(&mut e, 230, &[(2, interest("/a/x", 4))])),
        [UP_B]
    );
}

#[test]
fn asf_keeps_a_satisfied_entry_50_ms_for_the_probe_data() {
    let hash = engine::hash::name_hash(KEY, &n("/a"));
    let last_rtt = |s: &Sim, face| {
        let asf = s.e.asf().unwrap();
        let slot = asf.find(hash, 1, 6_000).unwrap();
        asf.peek(slot, face, 6_000).map(|m| m.last_rtt)
    };
    // UP_A answers in 20 ms, UP_B (probed) in 60: the probe's Data, 40 ms after UP_A's
    // satisfied the Interest, still finds the PIT entry and is measured.
    let mut s = Sim::new(Strategy::new(StrategyKind::Asf), 20, 60);
    s.run(0, 6_000, 50);
    assert!(s.log.iter().any(|l| l.1 == UP_B), "UP_B probed");
    // The last entry, kept 50 ms past its Data, ends.
    step(&mut s.e, 6_100, &[]);
    let c = s.e.counters();
    assert_eq!(c.drops[DropReason::Unsolicited.index()], 0);
    // Each PIT entry satisfied once (the kept one when it ends).
    assert_eq!((s.satisfied, c.satisfied, c.unsatisfied), (120, 120, 0));
    assert_eq!(last_rtt(&s, UP_B), Some(LastRtt::Measured(60_000)));
    // UP_B answering in 100 ms, 80 ms after UP_A's Data: too late, unsolicited, not measured.
    // (NFD keeps the entry 50 ms after each Data whether or not another upstream is pending.)
    let mut s = Sim::new(Strategy::new(StrategyKind::Asf), 20, 100);
    s.run(0, 6_000, 50);
    assert_eq!(s.e.counters().drops[DropReason::Unsolicited.index()], 1);
    assert_eq!(last_rtt(&s, UP_B), Some(LastRtt::None));
}

#[test]
fn an_interest_for_a_kept_entry_is_new_and_the_cs_answers_it() {
    let mut s = Sim::new(Strategy::new(StrategyKind::Asf), 20, 60);
    s.run(0, 6_000, 50);
    let p = s.log.iter().find(|l| l.1 == UP_B).unwrap().0;
    let name = format!("/a/{}", p / 50 + 1);
    // The same run up to 30 ms after the probe: UP_A's Data came at +20, the entry is kept
    // until +70. An Interest for it now ends it (satisfied) and the CS answers.
    let mut s = Sim::new(Strategy::new(StrategyKind::Asf), 20, 60);
    s.run(0, p + 30, 50);
    let before = s.e.counters().satisfied;
    let back = step(&mut s.e, p + 30, &[(DOWN, interest(&name, 999))]);
    assert_eq!(back.len(), 1);
    assert_eq!((back[0].0, back[0].1), (DOWN, SendKind::Data));
    assert_eq!(s.e.counters().satisfied, before + 1);
    // The probe's Data then finds no entry.
    s.run(p + 31, p + 100, 1_000);
    assert_eq!(s.e.counters().drops[DropReason::Unsolicited.index()], 1);
}

/// Each upstream's Nack (`reason`) of the Interests in `sent`.
fn nacks_of(sent: &[(FaceId, SendKind, Vec<u8>)], reason: NackReason) -> Vec<(FaceId, Vec<u8>)> {
    sent.iter()
        .filter(|s| s.1 == SendKind::Interest)
        .map(|(f, _, b)| (*f, LpPacket::nack(b.clone(), reason).to_wire()))
        .collect()
}

#[test]
fn unsatisfied_counts_every_entry_that_ends_without_data_as_nfd() {
    let mut e = engine(Strategy::new(StrategyKind::BestRoute));
    let c = |e: &Engine| (e.counters().satisfied, e.counters().unsatisfied);
    // No route: rejected with a Nack, unsatisfied.
    let back = step(&mut e, 0, &[(DOWN, interest("/b/x", 1))]);
    assert_eq!(back[0].1, SendKind::Nack(NackReason::NoRoute));
    assert_eq!(c(&e), (0, 1));
    // Every upstream Nacks: the downstream gets a Nack and the entry is unsatisfied.
    let sent = step(&mut e, 1, &[(DOWN, interest("/a/n", 2))]);
    assert_eq!(upstreams(&sent), [UP_A]);
    let back = step(&mut e, 3, &nacks_of(&sent, NackReason::Congestion));
    assert_eq!(back[0].1, SendKind::Nack(NackReason::Congestion));
    assert_eq!(c(&e), (0, 2));
    // Data: satisfied; no answer: unsatisfied when the entry expires.
    let sent = step(&mut e, 4, &[(DOWN, interest("/a/d", 3))]);
    step(&mut e, 5, &[(sent[0].0, data("/a/d"))]);
    step(&mut e, 6, &[(DOWN, interest("/a/e", 4))]);
    assert_eq!(c(&e), (1, 2));
    step(&mut e, 6 + 4_000, &[]);
    assert_eq!(c(&e), (1, 3));
}

#[test]
fn random_spreads_interests_and_never_suppresses() {
    let mut e = engine(Strategy::new(StrategyKind::Random));
    let mut hits = BTreeMap::<FaceId, u32>::new();
    for i in 0..200u32 {
        for f in upstreams(&step(
            &mut e,
            u64::from(i),
            &[(DOWN, interest(&format!("/a/{i}"), i))],
        )) {
            *hits.entry(f).or_default() += 1;
        }
    }
    // One upstream each, both drawn often.
    assert_eq!(hits.values().sum::<u32>(), 200);
    assert!(hits[&UP_A] > 50 && hits[&UP_B] > 50, "{hits:?}");
    // A retransmission 1 ms later is forwarded (NFD's random strategy has no suppression).
    let got = retransmit(&mut e, &[1_000, 1_001, 1_002]);
    assert!(got.iter().all(|(_, f)| f.len() == 1), "{got:?}");
    // No eligible upstream (the only next hop is the downstream): Nack NoRoute.
    let back = step(&mut e, 1_010, &[(UP_A, interest("/a/only", 77))]);
    assert_eq!(upstreams(&back), [UP_B]);
    let fib = Arc::new(Fib::new(KEY, 64, 2));
    fib.add_nexthop(&n("/a"), UP_A, 1).unwrap();
    let mut e = Engine::new(KEY, fib, EngineConfig::default());
    e.set_strategy(&n("/a"), Some(Strategy::new(StrategyKind::Random)));
    let back = step(&mut e, 0, &[(UP_A, interest("/a/x", 1))]);
    assert_eq!(back[0].1, SendKind::Nack(NackReason::NoRoute));
    assert_eq!(e.counters().unsatisfied, 1);
}

#[test]
fn access_goes_to_the_last_working_next_hop_then_to_the_others_after_its_rto() {
    let mut e = engine(Strategy::new(StrategyKind::Access));
    let sorted = |sent: &[(FaceId, SendKind, Vec<u8>)]| {
        let mut up = upstreams(sent);
        up.sort();
        up
    };
    // Nothing measured: every next hop.
    assert_eq!(
        sorted(&step(&mut e, 0, &[(DOWN, interest("/a/1", 1))])),
        [UP_A, UP_B]
    );
    // UP_B answers first (30 ms): it becomes /a's last working next hop.
    let back = step(&mut e, 30, &[(UP_B, data("/a/1"))]);
    assert_eq!((back[0].0, back[0].1), (DOWN, SendKind::Data));
    assert_eq!(e.measurements_len(30), 1);
    assert_eq!(
        upstreams(&step(&mut e, 100, &[(DOWN, interest("/a/2", 2))])),
        [UP_B]
    );
    // UP_B is silent: after its RTO (one 30 ms sample: 200 ms, the minimum) the Interest goes
    // to the other next hops (not back to UP_B, nor to the downstream).
    assert!(step(&mut e, 299, &[]).is_empty());
    let rto = step(&mut e, 300, &[]);
    assert_eq!(upstreams(&rto), [UP_A]);
    let i = InterestView::decode(&rto[0].2, &Limits::default()).unwrap();
    assert_eq!(i.name().to_name(), n("/a/2"));
    // UP_A answers: now it is the last working next hop.
    let back = step(&mut e, 320, &[(UP_A, data("/a/2"))]);
    assert_eq!((back[0].0, back[0].1), (DOWN, SendKind::Data));
    assert_eq!(
        upstreams(&step(&mut e, 400, &[(DOWN, interest("/a/3", 3))])),
        [UP_A]
    );
    // A Data before the RTO: no timer fires.
    step(&mut e, 410, &[(UP_A, data("/a/3"))]);
    assert!(step(&mut e, 700, &[]).is_empty());
    // A retransmission: suppressed within 10 ms (per PIT entry), then to every next hop.
    assert_eq!(
        upstreams(&step(&mut e, 800, &[(DOWN, interest("/a/4", 4))])),
        [UP_A]
    );
    assert!(upstreams(&step(&mut e, 805, &[(DOWN, interest("/a/4", 5))])).is_empty());
    assert_eq!(
        sorted(&step(&mut e, 810, &[(DOWN, interest("/a/4", 6))])),
        [UP_A, UP_B]
    );
    // Nowhere to go: rejected without a Nack (NFD's access strategy), unsatisfied.
    let before = e.counters().unsatisfied;
    e.set_strategy(&n("/"), Some(Strategy::new(StrategyKind::Access)));
    assert!(step(&mut e, 900, &[(DOWN, interest("/b/x", 7))]).is_empty());
    assert_eq!(e.counters().unsatisfied, before + 1);
}

#[test]
fn multicast_lets_an_entry_expire_rather_than_nack_as_nfd_24_07() {
    let mut e = engine(Strategy::new(StrategyKind::Multicast));
    e.set_strategy(&n("/"), Some(Strategy::new(StrategyKind::Multicast)));
    let c = |e: &Engine| (e.counters().satisfied, e.counters().unsatisfied);
    // No route (NFD's multicast has no `rejectPendingInterest`): no Nack, the entry waits.
    assert!(step(&mut e, 0, &[(DOWN, interest("/b/x", 1))]).is_empty());
    assert_eq!(e.counters().drops[DropReason::NoRoute.index()], 1);
    assert_eq!((e.table().pit_len(), c(&e)), (1, (0, 0)));
    // Its only next hop is the downstream ("LoopingInterest"): nothing sent, nothing rejected.
    assert!(step(&mut e, 1, &[(UP_A, interest("/a/y", 9))])
        .iter()
        .all(|s| s.0 != UP_A));
    // Every upstream Nacks: the downstream hears nothing (multicast keeps the base
    // `afterReceiveNack`); the entry ends unsatisfied at its expiry.
    let sent = step(&mut e, 2, &[(DOWN, interest("/a/n", 2))]);
    assert_eq!(upstreams(&sent).len(), 2);
    let nacks = nacks_of(&sent, NackReason::Congestion);
    assert!(step(&mut e, 3, &nacks).is_empty());
    assert_eq!(e.counters().in_nacks, 2);
    let before = c(&e).1;
    step(&mut e, 2 + 4_000, &[]);
    assert_eq!(
        c(&e).1,
        before + 3,
        "/b/x, /a/y and /a/n expired, unsatisfied"
    );
    // The same Interest (nonce) from another downstream loops ("DuplicateInterest"): dropped
    // without a Nack Duplicate.
    assert_eq!(
        upstreams(&step(&mut e, 5_000, &[(DOWN, interest("/a/d", 3))])).len(),
        2
    );
    assert!(step(&mut e, 5_001, &[(2, interest("/a/d", 3))]).is_empty());
    assert_eq!(e.counters().drops[DropReason::Loop.index()], 1);
    // Best-route, for comparison, Nacks the loop.
    e.set_strategy(&n("/a"), Some(Strategy::new(StrategyKind::BestRoute)));
    let back = step(&mut e, 5_002, &[(3, interest("/a/d", 3))]);
    assert_eq!(back[0].1, SendKind::Nack(NackReason::Duplicate));
}

#[test]
fn access_lets_an_entry_expire_when_every_upstream_nacks() {
    // NFD's access strategy keeps the base `afterReceiveNack`: no Nack downstream.
    let mut e = engine(Strategy::new(StrategyKind::Access));
    let sent = step(&mut e, 0, &[(DOWN, interest("/a/1", 1))]);
    assert_eq!(upstreams(&sent).len(), 2);
    assert!(step(&mut e, 1, &nacks_of(&sent, NackReason::NoRoute)).is_empty());
    assert_eq!(e.table().pit_len(), 1);
    // A Data within the lifetime still satisfies it.
    let back = step(&mut e, 50, &[(UP_B, data("/a/1"))]);
    assert_eq!((back[0].0, back[0].1), (DOWN, SendKind::Data));
    assert_eq!(e.counters().satisfied, 1);
    // No Data: unsatisfied at expiry, without a Nack.
    let sent = step(&mut e, 100, &[(DOWN, interest("/a/2", 2))]);
    assert!(step(&mut e, 101, &nacks_of(&sent, NackReason::NoRoute)).is_empty());
    assert!(step(&mut e, 100 + 4_000, &[]).is_empty());
    assert_eq!(e.counters().unsatisfied, 1);
    // A looping Interest is Nacked Duplicate (the base `onInterestLoop`).
    step(&mut e, 5_000, &[(DOWN, interest("/a/3", 3))]);
    let back = step(&mut e, 5_001, &[(2, interest("/a/3", 3))]);
    assert_eq!(back[0].1, SendKind::Nack(NackReason::Duplicate));
}

#[test]
fn asf_keeps_an_entry_50_ms_after_each_data_even_with_nothing_else_pending() {
    // NFD's ASF sets the entry's expiry 50 ms past every Data it measures
    // (`beforeSatisfyInterest`), not only while a probe is out: a second copy of the Data
    // finds the entry (not unsolicited), goes nowhere and extends it again.
    let fib = Arc::new(Fib::new(KEY, 64, 2));
    fib.add_nexthop(&n("/a"), UP_A, 1).unwrap();
    let mut e = Engine::new(KEY, fib, EngineConfig::default());
    e.set_strategy(&n("/a"), Some(Strategy::new(StrategyKind::Asf)));
    assert_eq!(
        upstreams(&step(&mut e, 0, &[(DOWN, interest("/a/x", 1))])),
        [UP_A]
    );
    let back = step(&mut e, 20, &[(UP_A, data("/a/x"))]);
    assert_eq!((back[0].0, back[0].1), (DOWN, SendKind::Data));
    let unsolicited = |e: &Engine| e.counters().drops[DropReason::Unsolicited.index()];
    for t in [60, 100] {
        assert!(step(&mut e, t, &[(UP_A, data("/a/x"))]).is_empty());
        assert_eq!((unsolicited(&e), e.table().pit_len()), (0, 1), "at {t}");
    }
    assert_eq!(e.counters().satisfied, 0, "satisfied when it ends");
    step(&mut e, 151, &[]);
    assert_eq!((e.table().pit_len(), e.counters().satisfied), (0, 1));
    step(&mut e, 160, &[(UP_A, data("/a/x"))]);
    assert_eq!(unsolicited(&e), 1);
}

#[test]
fn measured_prefixes_are_name_hashes_every_worker_agrees_on() {
    // Two engines (workers) with the hash key the router gives them all: the same prefix
    // measured in both reports the same key, once per engine even when ASF and access both
    // measure it.
    let keys = |kind| {
        let mut e = engine(Strategy::new(kind));
        step(&mut e, 0, &[(DOWN, interest("/a/x", 1))]);
        step(&mut e, 10, &[(UP_A, data("/a/x"))]);
        let mut v = vec![99];
        e.measured_prefixes(10, &mut v);
        v
    };
    let a = engine::hash::name_hash(KEY, &n("/a"));
    assert_eq!(keys(StrategyKind::Asf), [a]);
    assert_eq!(keys(StrategyKind::Access), [a]);
    assert!(keys(StrategyKind::BestRoute).is_empty());
}
