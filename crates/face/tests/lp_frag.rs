//! NDNLPv2 fragmentation and reassembly: round trips, bounds, hostile pieces.

use face::lp_frag::{DEFAULT_REASSEMBLY_TIMEOUT_MS, PARTIAL_BYTES};
use face::{
    FragmentError, Fragmenter, LpHeaders, PitToken, Reassembled, Reassembler, ReassemblyBudget,
    ReassemblyError, MAX_FRAGMENTS,
};
use proptest::prelude::*;
use wire::lp::{Nack, NbccSignal, CACHE_POLICY_NO_CACHE};
use wire::{Data, Limits, LpPacket, LpPacketView, NackReason, Name, PacketView};

const MTUS: [usize; 3] = [1200, 1500, 9000];

fn limits(mtu: usize) -> Limits {
    Limits {
        max_packet_bytes: mtu.max(wire::MAX_NDN_PACKET_BYTES),
        ..Limits::default()
    }
}

fn headers() -> LpHeaders {
    LpHeaders {
        pit_token: PitToken::new(&[1, 2, 3, 4, 5, 6, 7, 8]),
        nack: Some(Nack {
            reason: Some(NackReason::NoRoute),
        }),
        incoming_face_id: Some(260),
        next_hop_face_id: None,
        cache_policy: Some(CACHE_POLICY_NO_CACHE),
        congestion_mark: Some(1),
        nbcc: Some(NbccSignal::Alpha),
    }
}

/// Deterministic, position-dependent bytes (so a misplaced piece is caught). The first byte is
/// 0x06 (Data), so a bare packet is never mistaken for an LpPacket (0x64).
fn payload(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    if let Some(b) = v.first_mut() {
        *b = 0x06;
    }
    v
}

fn is_lp(d: &[u8]) -> bool {
    d.first() == Some(&0x64)
}

/// A small xorshift for shuffles.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// `pieces` shuffled with up to `dups` extra copies, all before the piece that completes the
/// packet (a copy arriving after completion would legitimately start a new partial packet).
fn with_duplicates<'a>(pieces: &[&'a Vec<u8>], dups: usize, rng: &mut Rng) -> Vec<&'a Vec<u8>> {
    let mut v = pieces.to_vec();
    if v.len() < 2 {
        return v;
    }
    rng.shuffle(&mut v);
    let last = v.pop().unwrap();
    for _ in 0..dups {
        let d = v[rng.below(v.len())];
        v.push(d);
    }
    rng.shuffle(&mut v);
    v.push(last);
    v
}

/// Fragments `packet`, checks every datagram against the MTU and the NDNLPv2 decoder, and
/// returns them.
fn cut(f: &mut Fragmenter, packet: &[u8], h: &LpHeaders) -> Vec<Vec<u8>> {
    let before = f.next_sequence();
    let mut out = vec![];
    let n = f.fragment(packet, h, &mut out).unwrap();
    assert_eq!(n as usize, out.len());
    assert_eq!(f.fragment_count(packet.len(), h).unwrap(), n);
    assert!(n <= MAX_FRAGMENTS);
    for (i, d) in out.iter().enumerate() {
        assert!(d.len() <= f.mtu(), "{} > mtu {}", d.len(), f.mtu());
        if n == 1 {
            if d[..] == packet[..] {
                assert!(h.is_empty() && f.bare());
                continue;
            }
            let v = LpPacketView::decode(d, &limits(f.mtu())).unwrap();
            assert_eq!(v.fragment(), Some(packet));
            assert_eq!((v.sequence, v.frag_index, v.frag_count), (None, None, None));
            assert_eq!(LpHeaders::from_view(&v), *h);
            continue;
        }
        let v = LpPacketView::decode(d, &limits(f.mtu())).unwrap();
        assert_eq!(v.sequence, Some(before.wrapping_add(i as u64)));
        assert_eq!(v.frag_index, Some(i as u64));
        assert_eq!(v.frag_count, Some(n));
        assert!(!v.fragment().unwrap().is_empty());
        let expect = if i == 0 { *h } else { LpHeaders::default() };
        assert_eq!(LpHeaders::from_view(&v), expect);
    }
    if n > 1 {
        assert_eq!(f.next_sequence(), before.wrapping_add(n));
    }
    out
}

/// Feeds datagrams to `r` in the given order; returns what came out (owned).
fn feed(
    r: &mut Reassembler,
    remote: u64,
    datagrams: &[&Vec<u8>],
    mtu: usize,
    now: u64,
) -> Vec<Reassembled<'static>> {
    let mut got = vec![];
    for d in datagrams {
        if is_lp(d) {
            let v = LpPacketView::decode(d, &limits(mtu)).unwrap();
            if let Some(p) = r.receive(remote, &v, now).unwrap() {
                got.push(p.into_owned());
            }
        } else {
            got.push(Reassembled {
                packet: d.to_vec().into(),
                headers: LpHeaders::default(),
            });
        }
    }
    got
}

fn sizes() -> Vec<usize> {
    let mut s: Vec<usize> = (1..=40).collect();
    s.extend([
        100, 252, 253, 254, 1000, 1150, 1170, 1180, 1190, 1200, 1201, 1450, 1470, 1480, 1490, 1500,
        1501, 2399, 2400, 2401, 3000, 4096, 5000, 7000, 8000, 8799, 8800,
    ]);
    s.extend((1..88).map(|k| k * 100 + 37));
    s
}

#[test]
fn round_trip_many_sizes_and_mtus_in_every_order() {
    let mut rng = Rng(0x1234_5678);
    for mtu in MTUS {
        for h in [LpHeaders::default(), headers()] {
            for bare in [false, true] {
                let mut f = Fragmenter::new(mtu, u64::MAX - 3).unwrap().with_bare(bare);
                let mut r = Reassembler::default();
                for (k, len) in sizes().into_iter().enumerate() {
                    let p = payload(len, k as u64);
                    let frags = cut(&mut f, &p, &h);
                    let in_order: Vec<&Vec<u8>> = frags.iter().collect();
                    let mut reverse = in_order.clone();
                    reverse.reverse();
                    let mut shuffled = in_order.clone();
                    rng.shuffle(&mut shuffled);
                    let with_dups = with_duplicates(&in_order, 3, &mut rng);
                    for order in [&in_order, &reverse, &shuffled, &with_dups] {
                        let got = feed(&mut r, 7, order, mtu, 0);
                        assert_eq!(got.len(), 1, "mtu {mtu} len {len}");
                        assert_eq!(&got[0].packet[..], &p[..], "mtu {mtu} len {len}");
                        assert_eq!(got[0].headers, h);
                        // Duplicates arriving after completion start a partial; clear them.
                        r.clear();
                    }
                }
                let c = r.counters();
                assert_eq!(
                    c.malformed + c.dropped_full + c.dropped_oversize + c.timeouts,
                    0
                );
                // At MTU 9000 every packet up to 8800 bytes goes whole.
                assert_eq!(c.duplicates > 0, mtu < 9000);
                assert_eq!(c.reassembled > 0, mtu < 9000);
            }
        }
    }
}

#[test]
fn real_data_packet_round_trip() {
    let mut d = Data::new(
        Name::from_uri("/cascade/big/v=1/seg=0").unwrap(),
        payload(8000, 9),
    );
    d.sign_digest_sha256();
    let w = d.to_wire();
    assert!(w.len() <= 8800);
    let mut f = Fragmenter::new(1400, 42).unwrap();
    let frags = cut(&mut f, &w, &LpHeaders::default());
    assert_eq!(frags.len(), 6);
    let mut r = Reassembler::default();
    let order: Vec<&Vec<u8>> = frags.iter().rev().collect();
    let got = feed(&mut r, 1, &order, 1400, 10);
    assert_eq!(got.len(), 1);
    match PacketView::decode(&got[0].packet, &Limits::default()).unwrap() {
        PacketView::Data(v) => assert_eq!(v.to_data(), d),
        other => panic!("{other:?}"),
    }
    // A small Interest-sized packet goes out bare, and is read as the packet itself.
    let small = payload(60, 1);
    let mut out = vec![];
    assert_eq!(f.fragment(&small, &LpHeaders::default(), &mut out), Ok(1));
    assert_eq!(out[0], small);
    assert_eq!(f.next_sequence(), 48);
}

#[test]
fn unfragmented_is_returned_at_once_without_copy() {
    let mut r = Reassembler::default();
    let lp = LpPacket {
        pit_token: Some(vec![9; 4]),
        fragment: Some(vec![5, 1, 0]),
        ..LpPacket::default()
    }
    .to_wire();
    let v = LpPacketView::decode(&lp, &Limits::default()).unwrap();
    let got = r.receive(3, &v, 0).unwrap().unwrap();
    assert!(matches!(got.packet, std::borrow::Cow::Borrowed(_)));
    assert_eq!(&got.packet[..], &[5, 1, 0]);
    assert_eq!(got.headers.pit_token.unwrap().as_bytes(), &[9; 4]);
    // An IDLE packet (no fragment) yields nothing and is not an error.
    let idle = LpPacket {
        acks: vec![1],
        ..LpPacket::default()
    }
    .to_wire();
    let v = LpPacketView::decode(&idle, &Limits::default()).unwrap();
    assert_eq!(r.receive(3, &v, 0), Ok(None));
    // FragCount 1 with a Sequence is unfragmented too.
    let lp = LpPacket {
        sequence: Some(5),
        frag_index: Some(0),
        frag_count: Some(1),
        fragment: Some(vec![1]),
        ..LpPacket::default()
    }
    .to_wire();
    let v = LpPacketView::decode(&lp, &Limits::default()).unwrap();
    assert_eq!(&r.receive(3, &v, 0).unwrap().unwrap().packet[..], &[1]);
    assert_eq!(r.counters().reassembled, 0);
}

#[test]
fn interleaved_remotes_and_packets() {
    let mtu = 1200;
    // Two senders whose Sequence numbers collide: the remote key keeps them apart.
    let mut fa = Fragmenter::new(mtu, 1000).unwrap();
    let mut fb = Fragmenter::new(mtu, 1000).unwrap();
    let pa = payload(5000, 1);
    let pb = payload(4000, 2);
    let pa2 = payload(3000, 3);
    let a = cut(&mut fa, &pa, &headers());
    let a2 = cut(&mut fa, &pa2, &LpHeaders::default());
    let b = cut(&mut fb, &pb, &LpHeaders::default());
    // Round robin over the three packets, each in reverse order.
    let mut all: Vec<(u64, &Vec<u8>)> = vec![];
    let longest = a.len().max(b.len()).max(a2.len());
    for i in 0..longest {
        for (remote, frags) in [(1u64, &a), (2, &b), (1, &a2)] {
            if i < frags.len() {
                all.push((remote, &frags[frags.len() - 1 - i]));
            }
        }
    }
    let mut r = Reassembler::new(8, 1000, 8800);
    let mut got = vec![];
    for (remote, d) in all {
        let v = LpPacketView::decode(d, &limits(mtu)).unwrap();
        if let Some(p) = r.receive(remote, &v, 0).unwrap() {
            got.push((remote, p.into_owned()));
        }
    }
    assert_eq!(got.len(), 3);
    let find = |remote: u64, p: &[u8]| {
        got.iter()
            .find(|(rm, x)| *rm == remote && &x.packet[..] == p)
    };
    assert_eq!(find(1, &pa).unwrap().1.headers, headers());
    assert!(find(2, &pb).unwrap().1.headers.is_empty());
    assert!(find(1, &pa2).is_some());
    assert_eq!(r.in_flight(), 0);
    assert_eq!(r.counters().reassembled, 3);
}

#[test]
fn timeout_expiry() {
    let mut f = Fragmenter::new(1500, 0).unwrap();
    let p = payload(4000, 4);
    let frags = cut(&mut f, &p, &LpHeaders::default());
    fn dec(d: &[u8]) -> LpPacketView<'_> {
        LpPacketView::decode(d, &Limits::default()).unwrap()
    }
    let mut r = Reassembler::new(16, 500, 8800);
    assert_eq!(r.receive(1, &dec(&frags[0]), 1000), Ok(None));
    assert_eq!(r.receive(1, &dec(&frags[1]), 1400), Ok(None));
    // The timer restarts with each new piece (as NFD's does).
    assert_eq!(r.expire(1899), 0);
    assert_eq!(r.expire(1900), 1);
    assert_eq!(r.counters().timeouts, 1);
    assert_eq!(r.in_flight(), 0);
    // The last piece now starts a new partial that never completes.
    assert_eq!(r.receive(1, &dec(&frags[2]), 1901), Ok(None));
    assert_eq!(r.in_flight(), 1);
    // `receive` expires on its own too.
    let other = cut(&mut f, &payload(10, 0), &headers());
    let v = LpPacketView::decode(&other[0], &Limits::default()).unwrap();
    assert!(r.receive(2, &v, 1901 + 500).unwrap().is_some());
    assert_eq!(r.in_flight(), 0);
    assert_eq!(r.counters().timeouts, 2);
    assert_eq!(r.timeout_ms(), 500);
    assert_eq!(
        Reassembler::default().timeout_ms(),
        DEFAULT_REASSEMBLY_TIMEOUT_MS
    );
}

#[test]
fn capacity_eviction_drops_the_oldest() {
    let mtu = 1200;
    let mut f = Fragmenter::new(mtu, 0).unwrap();
    let packets: Vec<Vec<u8>> = (0..5).map(|k| payload(3000, k)).collect();
    let frags: Vec<Vec<Vec<u8>>> = packets
        .iter()
        .map(|p| cut(&mut f, p, &LpHeaders::default()))
        .collect();
    let mut r = Reassembler::new(3, 1000, 8800);
    fn dec(d: &[u8]) -> LpPacketView<'_> {
        LpPacketView::decode(d, &limits(1200)).unwrap()
    }
    for (t, fs) in frags.iter().enumerate() {
        assert_eq!(r.receive(9, &dec(&fs[0]), t as u64), Ok(None));
        assert!(r.in_flight() <= 3);
    }
    assert_eq!(r.counters().dropped_full, 2);
    // Packets 0 and 1 were evicted: their remaining pieces do not complete them.
    for fs in &frags[..2] {
        for d in &fs[1..] {
            assert_eq!(r.receive(9, &dec(d), 10), Ok(None));
        }
    }
    // ... and their new partials pushed out 2 and 3 in turn.
    assert_eq!(r.counters().dropped_full, 4);
    assert_eq!(r.counters().reassembled, 0);
    assert_eq!(r.in_flight(), 3);
    assert_eq!(r.capacity(), 3);
    assert_eq!(Reassembler::new(0, 1, 1).capacity(), 1);
}

#[test]
fn oversize_rejection() {
    let mtu = 1500;
    let mut f = Fragmenter::new(mtu, 0).unwrap();
    let p = payload(8801, 5);
    let frags = cut(&mut f, &p, &LpHeaders::default());
    let mut r = Reassembler::new(4, 1000, 8800);
    let mut errs = vec![];
    for d in &frags {
        let v = LpPacketView::decode(d, &limits(mtu)).unwrap();
        match r.receive(1, &v, 0) {
            Ok(x) => assert!(x.is_none()),
            Err(e) => errs.push(e),
        }
    }
    assert_eq!(errs.len(), 1);
    assert_eq!(
        errs[0],
        ReassemblyError::Oversize {
            bytes: 8801,
            max: 8800
        }
    );
    assert!(!errs[0].is_malformed());
    assert_eq!(r.counters().dropped_oversize, 1);
    assert_eq!(r.in_flight(), 0);
    // Out of order, the partial is dropped and later pieces start over (and time out).
    let mut r = Reassembler::new(4, 1000, 4000);
    let mut errs = 0;
    for d in frags.iter().rev() {
        let v = LpPacketView::decode(d, &limits(mtu)).unwrap();
        errs += u64::from(r.receive(1, &v, 0).is_err());
    }
    assert!(errs >= 1);
    assert_eq!(r.counters().dropped_oversize, errs);
    assert!(r.in_flight() <= 1);
    assert_eq!(r.counters().reassembled, 0);
    // A single piece or an unfragmented packet above the limit.
    let mut r = Reassembler::new(4, 1000, 100);
    let lp = LpPacket {
        fragment: Some(vec![0; 101]),
        ..LpPacket::default()
    }
    .to_wire();
    let v = LpPacketView::decode(&lp, &Limits::default()).unwrap();
    assert!(matches!(
        r.receive(1, &v, 0),
        Err(ReassemblyError::Oversize { .. })
    ));
    let v = LpPacketView::decode(&frags[0], &limits(mtu)).unwrap();
    assert!(matches!(
        r.receive(1, &v, 0),
        Err(ReassemblyError::Oversize { .. })
    ));
    assert_eq!(r.counters().dropped_oversize, 2);
    assert_eq!(r.in_flight(), 0);
}

/// A piece of a fragmented packet: `count` pieces announced, this one `index`, `len` bytes.
fn piece(sequence: u64, index: u64, count: u64, len: usize) -> Vec<u8> {
    LpPacket {
        sequence: Some(sequence),
        frag_index: Some(index),
        frag_count: Some(count),
        fragment: Some(vec![0x06; len]),
        ..LpPacket::default()
    }
    .to_wire()
}

fn receive(r: &mut Reassembler, remote: u64, d: &[u8], now: u64) -> Result<bool, ReassemblyError> {
    let v = LpPacketView::decode(d, &Limits::default()).unwrap();
    r.receive(remote, &v, now).map(|p| p.is_some())
}

#[test]
fn a_piece_announcing_many_reserves_only_its_own_bytes_until_it_expires() {
    let budget = ReassemblyBudget::new(1 << 20);
    let mut r = Reassembler::with_budget(256, 500, 8800, budget.clone());
    // One 40-byte piece announcing 64: only its bytes and the bookkeeping are held.
    assert_eq!(
        receive(&mut r, 1, &piece(1000, 0, MAX_FRAGMENTS, 40), 0),
        Ok(false)
    );
    assert_eq!(r.held_bytes(), PARTIAL_BYTES + 40);
    assert_eq!(budget.used(), PARTIAL_BYTES + 40);
    // A second piece at most doubles the buffer.
    assert_eq!(
        receive(&mut r, 1, &piece(1001, 1, MAX_FRAGMENTS, 40), 1),
        Ok(false)
    );
    assert_eq!(budget.used(), PARTIAL_BYTES + 80);
    assert_eq!(
        receive(&mut r, 1, &piece(1002, 2, MAX_FRAGMENTS, 10), 2),
        Ok(false)
    );
    assert_eq!(budget.used(), PARTIAL_BYTES + 160);
    // 256 such partials from one remote hold 256 pieces' worth, not 256 packets'.
    for k in 1..256u64 {
        assert_eq!(
            receive(&mut r, 1, &piece(k * 100_000, 0, MAX_FRAGMENTS, 40), 3),
            Ok(false)
        );
    }
    assert_eq!(r.in_flight(), 256);
    assert_eq!(budget.used(), 256 * PARTIAL_BYTES + 255 * 40 + 160);
    assert_eq!(budget.used(), r.held_bytes());
    // At the timeout everything goes back to the allocator and the budget.
    assert_eq!(r.expire(503), 256);
    assert_eq!((r.in_flight(), r.held_bytes(), budget.used()), (0, 0, 0));
    assert_eq!(budget.refused(), 0);
}

#[test]
fn the_shared_budget_refuses_and_counts_at_the_bound() {
    let mtu = 1500;
    let mut f = Fragmenter::new(mtu, 0).unwrap();
    let packets: Vec<Vec<u8>> = (0..3).map(|k| payload(4000, 10 + k)).collect();
    let frags: Vec<Vec<Vec<u8>>> = packets
        .iter()
        .map(|p| cut(&mut f, p, &LpHeaders::default()))
        .collect();
    let first = LpPacketView::decode(&frags[0][0], &limits(mtu))
        .unwrap()
        .fragment()
        .unwrap()
        .len();
    // Room for two first pieces, on two faces' reassemblers.
    let budget = ReassemblyBudget::new(2 * (PARTIAL_BYTES + first));
    let mut a = Reassembler::with_budget(16, 500, 8800, budget.clone());
    let mut b = Reassembler::with_budget(16, 500, 8800, budget.clone());
    fn dec(d: &[u8]) -> LpPacketView<'_> {
        LpPacketView::decode(d, &limits(1500)).unwrap()
    }
    assert_eq!(a.receive(1, &dec(&frags[0][0]), 0), Ok(None));
    assert_eq!(b.receive(2, &dec(&frags[1][0]), 0), Ok(None));
    assert_eq!(budget.used(), budget.limit());
    // A third packet's first piece does not fit: refused, counted, nothing held for it.
    let e = b.receive(2, &dec(&frags[2][0]), 1).unwrap_err();
    assert_eq!(
        e,
        ReassemblyError::OverBudget {
            bytes: PARTIAL_BYTES,
            budget: budget.limit()
        }
    );
    assert!(!e.is_malformed());
    assert_eq!((b.in_flight(), b.counters().dropped_budget), (1, 1));
    // The second piece of a packet cannot grow its buffer either: that packet is dropped
    // whole and its memory given back.
    assert!(matches!(
        a.receive(1, &dec(&frags[0][1]), 2),
        Err(ReassemblyError::OverBudget { .. })
    ));
    assert_eq!((a.in_flight(), a.held_bytes()), (0, 0));
    assert_eq!(budget.refused(), 2);
    assert_eq!(budget.used(), b.held_bytes());
    // With that room back, another packet reassembles whole on `a`, in the budget.
    // (A buffer at most doubles as pieces arrive: 470 + 230 bytes hold at most 940.)
    let mut f500 = Fragmenter::new(500, 0).unwrap();
    let small: Vec<Vec<u8>> = cut(&mut f500, &payload(700, 20), &LpHeaders::default());
    assert_eq!(small.len(), 2);
    let got = feed(&mut a, 1, &small.iter().collect::<Vec<_>>(), mtu, 3);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].packet, payload(700, 20));
    assert_eq!(a.held_bytes(), 0);
    // Closing a face (dropping its reassembler) gives back what it held.
    drop(b);
    assert_eq!(budget.used(), 0);
}

#[test]
fn malformed_pieces() {
    let mut r = Reassembler::new(4, 1000, 8800);
    fn check(r: &mut Reassembler, lp: LpPacket, want: ReassemblyError) {
        let w = lp.to_wire();
        let v = LpPacketView::decode(&w, &Limits::default()).unwrap();
        assert_eq!(r.receive(1, &v, 0), Err(want));
        assert!(want.is_malformed());
        assert!(!want.to_string().is_empty());
    }
    let piece = |seq: Option<u64>, index: Option<u64>, count: Option<u64>| LpPacket {
        sequence: seq,
        frag_index: index,
        frag_count: count,
        fragment: Some(vec![1, 2, 3]),
        ..LpPacket::default()
    };
    // FragIndex without FragCount: FragCount is 1.
    check(
        &mut r,
        piece(Some(1), Some(1), None),
        ReassemblyError::FragIndexOutOfRange { index: 1, count: 1 },
    );
    check(
        &mut r,
        piece(None, Some(0), Some(2)),
        ReassemblyError::MissingSequence,
    );
    check(
        &mut r,
        piece(Some(0), Some(0), Some(MAX_FRAGMENTS + 1)),
        ReassemblyError::TooManyFragments {
            count: MAX_FRAGMENTS + 1,
            max: MAX_FRAGMENTS,
        },
    );
    check(
        &mut r,
        LpPacket {
            fragment: None,
            ..piece(Some(0), Some(0), Some(2))
        },
        ReassemblyError::MissingFragment,
    );
    // Inconsistent FragCount: Sequence 11 with index 1 has the same base (10) as 10 with index 0.
    let w = piece(Some(10), Some(0), Some(3)).to_wire();
    let v = LpPacketView::decode(&w, &Limits::default()).unwrap();
    assert_eq!(r.receive(1, &v, 0), Ok(None));
    check(
        &mut r,
        piece(Some(11), Some(1), Some(4)),
        ReassemblyError::InconsistentFragCount {
            expected: 3,
            got: 4,
        },
    );
    assert_eq!(r.counters().malformed, 5);
    // The partial survives the bad piece and completes.
    for (s, i) in [(12, 2), (11, 1)] {
        let w = piece(Some(s), Some(i), Some(3)).to_wire();
        let v = LpPacketView::decode(&w, &Limits::default()).unwrap();
        let got = r.receive(1, &v, 0).unwrap();
        if i == 1 {
            assert_eq!(&got.unwrap().packet[..], &[1, 2, 3, 1, 2, 3, 1, 2, 3]);
        }
    }
    // The decoder itself refuses FragIndex >= FragCount when both are present.
    let w = piece(Some(0), Some(2), Some(2)).to_wire();
    assert!(LpPacketView::decode(&w, &Limits::default()).is_err());
}

#[test]
fn sequence_wraps_around() {
    let mut f = Fragmenter::new(1200, u64::MAX - 1).unwrap();
    let p = payload(6000, 6);
    let frags = cut(&mut f, &p, &headers());
    assert_eq!(f.next_sequence(), frags.len() as u64 - 2);
    let mut r = Reassembler::default();
    let order: Vec<&Vec<u8>> = frags.iter().rev().collect();
    let got = feed(&mut r, 1, &order, 1200, 0);
    assert_eq!(&got[0].packet[..], &p[..]);
}

#[test]
fn fragmenter_errors() {
    assert_eq!(
        Fragmenter::new(10, 0).unwrap_err(),
        FragmentError::MtuTooSmall {
            mtu: 10,
            min: Fragmenter::MIN_MTU
        }
    );
    let mut f = Fragmenter::new(1200, 0).unwrap();
    let mut out = vec![];
    assert_eq!(
        f.fragment(&[], &LpHeaders::default(), &mut out),
        Err(FragmentError::EmptyPacket)
    );
    // 64 pieces of at most ~1180 bytes: a 100 kB packet does not go.
    let e = f
        .fragment(&payload(100_000, 0), &LpHeaders::default(), &mut out)
        .unwrap_err();
    assert!(
        matches!(e, FragmentError::TooManyFragments { max: 64, .. }),
        "{e}"
    );
    assert!(out.is_empty());
    assert_eq!(f.next_sequence(), 0);
}

fn arb_headers() -> impl Strategy<Value = LpHeaders> {
    (
        proptest::option::of(proptest::collection::vec(any::<u8>(), 1..=32)),
        proptest::option::of(proptest::option::of(any::<u64>())),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<bool>()),
    )
        .prop_map(|(t, n, i, nh, cp, cm, sig)| LpHeaders {
            pit_token: t.and_then(|t| PitToken::new(&t)),
            nack: n.map(|r| Nack {
                reason: r.map(NackReason::from_code),
            }),
            incoming_face_id: i,
            next_hop_face_id: nh,
            cache_policy: cp,
            congestion_mark: cm,
            nbcc: sig.map(|a| {
                if a {
                    NbccSignal::Alpha
                } else {
                    NbccSignal::Beta
                }
            }),
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_sizes_mtus_and_orders_reassemble(
        len in 1usize..=8800,
        mtu in 150usize..=9000,
        h in arb_headers(),
        bare in any::<bool>(),
        seq in any::<u64>(),
        seed in any::<u64>(),
        dups in 0usize..4,
    ) {
        let p = payload(len, seed);
        let mut f = Fragmenter::new(mtu, seq).unwrap().with_bare(bare);
        let mut out = vec![];
        let n = match f.fragment(&p, &h, &mut out) {
            Ok(n) => n,
            Err(FragmentError::TooManyFragments { needed, .. }) => {
                prop_assert!(needed > MAX_FRAGMENTS);
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        };
        prop_assert_eq!(n as usize, out.len());
        let pieces: Vec<&Vec<u8>> = out.iter().collect();
        let mut rng = Rng(seed | 1);
        let order = with_duplicates(&pieces, dups, &mut rng);
        let mut r = Reassembler::new(4, 1000, 8800);
        let mut got = None;
        for d in order {
            prop_assert!(d.len() <= mtu);
            if !is_lp(d) {
                prop_assert!(n == 1 && bare && h.is_empty());
                prop_assert_eq!(&d[..], &p[..]);
                got = Some((p.clone(), LpHeaders::default()));
                continue;
            }
            let v = LpPacketView::decode(d, &limits(mtu)).unwrap();
            if let Some(x) = r.receive(5, &v, 0).unwrap() {
                prop_assert!(got.is_none());
                got = Some((x.packet.into_owned(), x.headers));
            }
        }
        let (bytes, headers) = got.unwrap();
        prop_assert_eq!(bytes, p);
        prop_assert_eq!(headers, h);
        prop_assert_eq!(r.counters().malformed, 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// A link-layer packet split back into header fields and network packet fragments into the
    /// same datagrams as the packet with its decoded headers.
    #[test]
    fn split_link_packets_fragment_like_their_headers(
        len in 1usize..=8800,
        mtu in 200usize..=9000,
        h in arb_headers(),
        seq in any::<u64>(),
        seed in any::<u64>(),
    ) {
        let p = payload(len, seed);
        let mut link = Vec::new();
        prop_assert!(face::encode_link(&mut link, &h, &p, usize::MAX));
        let face::Split::Parts(parts) = face::split_link(&link) else {
            return Err(TestCaseError::fail("not split"));
        };
        prop_assert_eq!(parts.packet, &p[..]);
        let mut a = Fragmenter::new(mtu, seq).unwrap();
        let mut b = a.clone();
        let mut want = vec![];
        let mut got = vec![];
        let r1 = a.fragment(&p, &h, &mut want);
        let r2 = b.fragment_encoded(parts.packet, parts.header_fields, |d| got.push(d.to_vec()));
        prop_assert_eq!(r1, r2);
        prop_assert_eq!(want, got);
        prop_assert_eq!(a.next_sequence(), b.next_sequence());
    }
}
