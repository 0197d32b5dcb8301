//! The behaviours NFD's `lp-reliability.t.cpp` checks, on this implementation.

use super::*;
use wire::{Limits, LpPacket};

const MTU: usize = 1400;

/// A frame as the fragmenter writes it: Sequence `seq`, a Fragment of `len` bytes.
fn frame(seq: u64, len: usize) -> Vec<u8> {
    LpPacket {
        sequence: Some(seq),
        fragment: Some(vec![seq as u8; len]),
        ..LpPacket::default()
    }
    .to_wire()
}

/// What a neighbour sends: `acks`, and a frame `tx`/`seq` if given.
fn incoming(acks: &[u64], frame: Option<(u64, u64)>) -> Vec<u8> {
    LpPacket {
        acks: acks.to_vec(),
        tx_sequence: frame.map(|f| f.0),
        sequence: frame.map(|f| f.1),
        fragment: frame.map(|_| vec![5, 0]),
        ..LpPacket::default()
    }
    .to_wire()
}

struct Link {
    r: LpReliability,
    sent: Vec<Vec<u8>>,
}

impl Link {
    fn new() -> Self {
        Link {
            r: LpReliability::new(ReliabilityOptions::default()),
            sent: Vec::new(),
        }
    }

    fn send(&mut self, frames: &[Vec<u8>], interest: bool, now: u64) {
        let refs: Vec<&[u8]> = frames.iter().map(|f| &f[..]).collect();
        let sent = &mut self.sent;
        self.r
            .send(&refs, interest, now, MTU, &mut |b| sent.push(b.to_vec()));
    }

    fn receive(&mut self, bytes: &[u8], now: u64) -> bool {
        let lp = LpPacketView::decode(bytes, &Limits::default()).unwrap();
        let sent = &mut self.sent;
        self.r
            .receive(&lp, now, MTU, &mut |b| sent.push(b.to_vec()))
    }

    fn poll(&mut self, now: u64) {
        let sent = &mut self.sent;
        self.r.poll(now, MTU, &mut |b| sent.push(b.to_vec()));
    }

    /// The TxSequence, Sequence and Acks of sent frame `i`.
    fn fields(&self, i: usize) -> (Option<u64>, Option<u64>, Vec<u64>) {
        let lp = LpPacketView::decode(&self.sent[i], &Limits::default()).unwrap();
        (lp.tx_sequence, lp.sequence, lp.acks().collect())
    }
}

#[test]
fn every_frame_gets_its_own_tx_sequence_and_is_kept_until_acked() {
    let mut l = Link::new();
    l.send(&[frame(100, 50)], true, 0);
    l.send(&[frame(101, 50), frame(102, 50), frame(103, 50)], false, 0);
    assert_eq!(l.sent.len(), 4);
    let txs: Vec<_> = (0..4).map(|i| l.fields(i).0.unwrap()).collect();
    assert_eq!(txs, [0, 1, 2, 3]);
    // The frame is otherwise as given: Sequence and Fragment kept.
    let lp = LpPacketView::decode(&l.sent[1], &Limits::default()).unwrap();
    assert_eq!(
        (lp.sequence, lp.fragment()),
        (Some(101), Some(&[101u8; 50][..]))
    );
    assert_eq!(l.r.unacked(), 4);
    assert_eq!(l.r.next_deadline(), Some(INITIAL_RTO_MS));
    // Acks remove them; a packet counts once all its frames are acked.
    assert!(l.receive(&incoming(&[0, 1, 2], None), 10));
    assert_eq!(l.r.unacked(), 1);
    assert_eq!(l.r.counters().acknowledged, 1);
    assert!(l.receive(&incoming(&[3, 77], None), 10));
    assert_eq!(l.r.counters().acknowledged, 2);
    assert_eq!(l.r.counters().unknown_acks, 1);
    assert_eq!(l.r.unacked(), 0);
    // The RTT was measured on them (10 ms: the minimum RTO).
    assert_eq!(l.r.rtt().rto_ms(), MIN_RTO_MS);
}

#[test]
fn a_frame_past_its_rto_goes_again_and_past_max_retx_its_packet_is_given_up() {
    let mut l = Link::new();
    l.send(&[frame(1, 20), frame(2, 20)], true, 0);
    assert!(l.receive(&incoming(&[1], None), 5));
    // Frame 0 not acked: at the RTO it goes again, with a new TxSequence, 3 times.
    let mut now = 5;
    for retx in 1..=3u64 {
        let due = l.r.next_deadline().unwrap();
        l.poll(due - 1);
        assert_eq!(l.sent.len(), 1 + retx as usize, "not before its RTO");
        now = due;
        l.poll(now);
        assert_eq!(l.sent.len(), 2 + retx as usize);
        let (tx, seq, _) = l.fields(l.sent.len() - 1);
        assert_eq!((tx, seq), (Some(1 + retx), Some(1)));
        assert_eq!(l.r.counters().retransmissions, retx);
    }
    // A fourth loss gives the packet up, and reports the Interest.
    l.poll(now + MAX_RTO_MS);
    assert_eq!(l.sent.len(), 5);
    assert_eq!(l.r.unacked(), 0);
    assert_eq!(l.r.counters().retx_exhausted, 1);
    assert_eq!(l.r.take_lost_interests(), 1);
    assert_eq!(l.r.take_lost_interests(), 0);
    assert_eq!(l.r.next_deadline(), None);
}

#[test]
fn a_frame_three_acks_behind_is_lost_and_an_acked_retransmission_counts_once() {
    let mut l = Link::new();
    for s in 0..5 {
        l.send(&[frame(s, 10)], false, 0);
    }
    // Acks for 1, 2: frame 0 is two behind; for 3: three behind, so it goes again at once.
    assert!(l.receive(&incoming(&[1, 2], None), 1));
    assert_eq!(l.sent.len(), 5);
    assert!(l.receive(&incoming(&[3], None), 1));
    assert_eq!(l.sent.len(), 6);
    assert_eq!(l.fields(5).0, Some(5));
    assert_eq!(l.fields(5).1, Some(0));
    // Its Ack counts the packet as retransmitted; no RTT sample is taken from it.
    let rto = l.r.rtt().rto_ms();
    assert!(l.receive(&incoming(&[5, 4], None), 900));
    assert_eq!(l.r.counters().retransmitted, 1);
    assert_eq!(l.r.counters().acknowledged, 4);
    assert_eq!(l.r.unacked(), 0);
    // Frame 4 was acked at 900 ms without retransmission: one sample, a larger RTO.
    assert!(l.r.rtt().rto_ms() > rto);
}

#[test]
fn acks_ride_on_frames_that_fit_them_and_the_rest_go_in_idle_packets() {
    let mut l = Link::new();
    for tx in 0..3 {
        assert!(l.receive(&incoming(&[], Some((tx, 50 + tx))), 0));
    }
    assert_eq!(l.r.pending_acks(), 3);
    assert_eq!(l.r.next_deadline(), Some(5));
    // A frame with room for all of them takes them, in order, before its TxSequence.
    l.send(&[frame(9, 100)], false, 1);
    assert_eq!(l.fields(0).2, [0, 1, 2]);
    assert_eq!(l.r.pending_acks(), 0);
    let lp = &l.sent[0];
    let ack_at = lp.windows(3).position(|w| w == [0xFD, 0x03, 0x44]).unwrap();
    let tx_at = lp.windows(3).position(|w| w == [0xFD, 0x03, 0x48]).unwrap();
    assert!(ack_at < tx_at);
    // A frame with room for none leaves them; after the idle-ack period, IDLE packets.
    assert!(l.receive(&incoming(&[], Some((3, 53))), 2));
    assert!(l.receive(&incoming(&[], Some((4, 54))), 2));
    let full = frame(10, MTU - 40);
    l.send(&[full], false, 3);
    assert_eq!(l.fields(1).2, Vec::<u64>::new());
    l.poll(6);
    assert_eq!(l.sent.len(), 2, "not yet: 5 ms after the first queued Ack");
    l.poll(7);
    assert_eq!(l.sent.len(), 3);
    let idle = LpPacketView::decode(&l.sent[2], &Limits::default()).unwrap();
    assert_eq!(idle.fragment(), None);
    assert_eq!(idle.tx_sequence, None);
    assert_eq!(idle.acks().collect::<Vec<_>>(), [3, 4]);
    assert_eq!(l.r.counters().idle_packets, 1);
    // A frame without a Fragment (IDLE) or without TxSequence is not acked.
    assert!(l.receive(&incoming(&[], None), 8));
    assert_eq!(l.r.pending_acks(), 0);
}

#[test]
fn a_sequence_seen_within_the_rto_is_a_duplicate() {
    let mut l = Link::new();
    assert!(l.receive(&incoming(&[], Some((0, 7))), 0));
    // The same frame again (its Ack was lost): acked again, but dropped.
    assert!(!l.receive(&incoming(&[], Some((1, 7))), 10));
    assert_eq!(l.r.counters().duplicates, 1);
    assert_eq!(l.r.pending_acks(), 2);
    // Past the RTO, the Sequence is forgotten.
    assert!(l.receive(&incoming(&[], Some((2, 8))), 10 + INITIAL_RTO_MS + 1));
    assert!(l.receive(&incoming(&[], Some((3, 7))), 10 + INITIAL_RTO_MS + 2));
}

#[test]
fn every_queue_is_bounded_and_counts_what_it_refused() {
    let opts = ReliabilityOptions {
        max_unacked: 2,
        max_acks: 2,
        max_recent: 2,
        ..ReliabilityOptions::default()
    };
    let mut l = Link::new();
    l.r = LpReliability::new(opts);
    l.send(&[frame(0, 10), frame(1, 10)], false, 0);
    l.send(&[frame(2, 10)], false, 0);
    // Sent as given, once, and not kept.
    assert_eq!(l.sent.len(), 3);
    assert_eq!(l.sent[2], frame(2, 10));
    assert_eq!(l.r.counters().refused, 1);
    assert_eq!(l.r.unacked(), 2);
    for tx in 0..3 {
        assert!(l.receive(&incoming(&[], Some((tx, 10 + tx))), 0));
    }
    assert_eq!(l.r.pending_acks(), 2);
    assert_eq!(l.r.counters().acks_dropped, 1);
    // Only the last two Sequences are remembered.
    assert!(l.receive(&incoming(&[], Some((3, 10))), 1));
    assert!(!l.receive(&incoming(&[], Some((4, 12))), 1));
}

#[test]
fn fields_above_tx_sequence_stay_after_it() {
    // A frame carrying NB-CC's field (TLV-TYPE 952, above TxSequence's).
    let mut f = Vec::new();
    write_seq(&mut f, tt::LP_SEQUENCE, 4);
    write_var_number(&mut f, u64::from(tt::LP_NBCC));
    write_var_number(&mut f, 1);
    f.push(1);
    let mut bytes = Vec::new();
    write_var_number(&mut bytes, u64::from(tt::LP_PACKET));
    write_var_number(&mut bytes, (f.len() + 4) as u64);
    bytes.extend_from_slice(&f);
    bytes.extend_from_slice(&[0x50, 0x02, 5, 0]);
    let mut l = Link::new();
    l.send(&[bytes], false, 0);
    let lp = LpPacketView::decode(&l.sent[0], &Limits::default()).unwrap();
    assert_eq!((lp.tx_sequence, lp.sequence), (Some(0), Some(4)));
    assert!(lp.nbcc.is_some());
    let s = &l.sent[0];
    let tx_at = s.windows(3).position(|w| w == [0xFD, 0x03, 0x48]).unwrap();
    let nbcc_at = s.windows(3).position(|w| w == [0xFD, 0x03, 0xB8]).unwrap();
    assert!(tx_at < nbcc_at);
}

/// Two ends over a link that loses a quarter of the datagrams each way (a fixed pseudo-random
/// pattern): every packet of one end reaches the other exactly once (retransmitted until
/// acked, duplicates dropped), and all are acknowledged in the end.
#[test]
fn over_a_lossy_link_every_packet_arrives_once_and_is_acked() {
    let mut a = Link::new();
    let mut b = Link::new();
    let mut delivered: Vec<u64> = Vec::new();
    let mut lost = 0;
    let mut x = 0x2545_F491_4F6C_DD1D_u64;
    let mut carry = |from: &mut Link, to: &mut Link, now: u64, got: &mut Vec<u64>| {
        for d in std::mem::take(&mut from.sent) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 4 == 0 {
                lost += 1;
                continue;
            }
            if to.receive(&d, now) {
                let lp = LpPacketView::decode(&d, &Limits::default()).unwrap();
                if lp.fragment().is_some() {
                    got.push(lp.sequence.unwrap());
                }
            }
        }
    };
    for s in 0..30 {
        a.send(&[frame(s, 30)], false, s);
    }
    let mut now = 30;
    let mut ignore = Vec::new();
    // Bounded: RTOs pass by whole seconds; within a simulated minute all is acked.
    while now < 60_000 && (a.r.unacked() > 0 || b.r.pending_acks() > 0) {
        carry(&mut a, &mut b, now, &mut delivered);
        b.poll(now);
        carry(&mut b, &mut a, now, &mut ignore);
        now += 5;
        a.poll(now);
    }
    delivered.sort_unstable();
    assert_eq!(delivered, (0..30).collect::<Vec<u64>>());
    assert_eq!(a.r.unacked(), 0);
    let c = a.r.counters();
    assert!(lost > 0 && c.retransmissions > 0, "{c:?}");
    assert_eq!(c.acknowledged + c.retransmitted, 30);
    assert_eq!(c.retx_exhausted, 0);
}

#[test]
fn with_sequence_numbers_a_frame_first() {
    let bare = vec![5, 2, 7, 0];
    let lp = LpPacket {
        pit_token: Some(vec![1, 2]),
        fragment: Some(bare.clone()),
        ..LpPacket::default()
    }
    .to_wire();
    for (f, pit) in [(bare, None), (lp, Some(&[1u8, 2][..]))] {
        let numbered = with_sequence(&f, 99).unwrap();
        let v = LpPacketView::decode(&numbered, &Limits::default()).unwrap();
        assert_eq!(v.sequence, Some(99));
        assert_eq!(v.pit_token, pit);
        assert_eq!(v.fragment(), Some(&[5u8, 2, 7, 0][..]));
    }
    assert_eq!(with_sequence(&incoming(&[1], None), 1), None);
}
