//! The strategies' behaviour as NFD's strategy tests describe it (best-route and multicast
//! retransmission suppression with parameters, ASF's choice, probing, timeouts and Nacks), and
//! the content store's admit and serve switches: real packets through [`Engine::process`], with
//! a fake clock (the `now` each batch is given) and simulated upstreams.

use std::collections::BTreeMap;
use std::sync::Arc;

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
