//! Proof of address for on-demand UDP faces, and the budget of what faces with an unproven
//! address are sent.
//!
//! A datagram's source address can be forged: a remote that sends Interests from someone
//! else's address makes the router send Data there (a reflection, amplified by the ratio of a
//! Data's size to an Interest's). A remote proves its address by answering what the router sends
//! it: a Data or a Nack, or an NDNLPv2 Ack naming a TxSequence the router sent. Until then,
//! every packet to an on-demand UDP face goes in an LpPacket with a TxSequence from a sequence
//! of the face's own, which starts at a random 64-bit value, so that only a remote that reads
//! what goes to the address can name one: an Ack naming one of the last [`PROOF_WINDOW`]
//! sequences sent proves the face. TxSequence and Ack are ignorable header fields: a peer that
//! does not acknowledge loses nothing (NFD with reliability on acknowledges, as Cascade's client
//! does).
//!
//! Like SYN cookies, the bound costs a consumer nothing in normal operation: what faces with an
//! unproven address are sent comes out of one token bucket per table
//! ([`super::FaceBounds::unproven_send_bytes_per_s`], 100 ms of burst); past it, a packet is
//! dropped (counted) and the face gets, in its place, an IDLE LpPacket with a TxSequence alone
//! (a proof probe, smaller than what the face received: at most one byte out per byte in), so
//! that a consumer that acknowledges proves its address even while the budget is spent.
//! Proven faces, local faces and faces management made are never bounded.

use std::net::SocketAddr;

use wire::tlv::write_var_number;
use wire::{tt, Limits, LpPacketView};

use super::tx::{stage, UdpSock};
use super::{Face, FaceCounters, FaceId, FaceIo, FaceSink, FaceTable};
use crate::link::{split_link, tlv_len, Split};
use crate::lp_reliability::{split_fields, write_seq, SEQ_FIELD_BYTES};

/// How many of the last TxSequences sent to a face an Ack may name to prove it.
pub const PROOF_WINDOW: u64 = 1024;
/// Bytes of a proof probe: an LpPacket holding one TxSequence.
pub const PROBE_BYTES: usize = 2 + SEQ_FIELD_BYTES;
/// Acks of one datagram looked at, at most.
const MAX_ACKS_CHECKED: usize = 64;

/// A face's proof of address.
#[derive(Debug, Clone, Copy)]
pub(super) struct Proof {
    /// Proven (or never in question: not an on-demand face).
    pub(super) proven: bool,
    start: u64,
    next: u64,
}

impl Proof {
    /// The proof of a face that is on demand (`quota`: unproven, its sequence at a random
    /// start) or not (proven from the start).
    pub(super) fn new(quota: bool) -> Proof {
        let mut start = 0;
        if quota {
            let mut b = [0u8; 8];
            wire::fill_random(&mut b);
            start = u64::from_be_bytes(b);
        }
        Proof {
            proven: !quota,
            start,
            next: start,
        }
    }

    /// The TxSequence of the next packet sent.
    pub(super) fn next_tx(&mut self) -> u64 {
        let t = self.next;
        self.next = t.wrapping_add(1);
        t
    }

    /// Whether `ack` names one of the last [`PROOF_WINDOW`] TxSequences sent.
    pub(super) fn acked(&self, ack: u64) -> bool {
        let sent = self.next.wrapping_sub(self.start);
        let back = self.next.wrapping_sub(ack);
        back >= 1 && back <= sent.min(PROOF_WINDOW)
    }

    /// Whether datagram `bytes` from the face acknowledges one of the last TxSequences sent.
    pub(super) fn acked_by(&self, bytes: &[u8]) -> bool {
        if bytes.first() != Some(&(tt::LP_PACKET as u8)) || self.next == self.start {
            return false;
        }
        let limits = Limits {
            max_packet_bytes: bytes.len(),
            ..Limits::default()
        };
        LpPacketView::decode(bytes, &limits)
            .is_ok_and(|lp| lp.acks().take(MAX_ACKS_CHECKED).any(|a| self.acked(a)))
    }
}

/// A token bucket of bytes per second (0: no bound), with 100 ms of burst.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SendBudget {
    rate_bytes_per_s: u64,
    tokens: u64,
    last_ns: u64,
}

impl SendBudget {
    /// A full bucket of `rate_bytes_per_s`.
    pub(super) fn new(rate_bytes_per_s: u64) -> SendBudget {
        let mut b = SendBudget::default();
        b.set_rate(rate_bytes_per_s);
        b
    }

    /// The rate.
    pub(super) fn rate(&self) -> u64 {
        self.rate_bytes_per_s
    }

    /// A new rate (the bucket is filled up to its new burst).
    pub(super) fn set_rate(&mut self, rate_bytes_per_s: u64) {
        self.rate_bytes_per_s = rate_bytes_per_s;
        self.tokens = self.burst();
    }

    fn burst(&self) -> u64 {
        (self.rate_bytes_per_s / 10).max(wire::MAX_NDN_PACKET_BYTES as u64)
    }

    /// Takes `bytes` at `now_ns` if the bucket holds them.
    pub(super) fn take(&mut self, bytes: usize, now_ns: u64) -> bool {
        if self.rate_bytes_per_s == 0 {
            return true;
        }
        let elapsed = now_ns.saturating_sub(self.last_ns).min(1_000_000_000);
        if elapsed > 0 {
            let add = u128::from(elapsed) * u128::from(self.rate_bytes_per_s) / 1_000_000_000;
            self.tokens = (self.tokens.saturating_add(add as u64)).min(self.burst());
            self.last_ns = now_ns;
        }
        let n = bytes as u64;
        if self.tokens < n {
            return false;
        }
        self.tokens -= n;
        true
    }
}

/// The table's bound on what faces with an unproven address are sent.
#[derive(Debug, Default)]
pub(super) struct Unproven {
    pub(super) budget: SendBudget,
    /// Where a packet is tagged (allocated once).
    buf: Vec<u8>,
    /// Packets dropped at the budget.
    pub(super) budget_dropped: u64,
    /// Proof probes sent in place of dropped packets.
    pub(super) probes: u64,
    /// Faces that proved their address by an Ack.
    pub(super) proven_by_ack: u64,
    /// Acks this table sent for TxSequences a neighbour numbered its packets with.
    pub(super) acks_sent: u64,
}

impl Unproven {
    /// The bound of `rate_bytes_per_s` (0: only the tagging), tagging packets of up to
    /// `max_packet_bytes`.
    pub(super) fn new(rate_bytes_per_s: u64, max_packet_bytes: usize) -> Unproven {
        Unproven {
            budget: SendBudget::new(rate_bytes_per_s),
            buf: Vec::with_capacity(max_packet_bytes + SEQ_FIELD_BYTES + 16),
            ..Unproven::default()
        }
    }

    /// Packet `bytes` for a face with an unproven address (`proof`, `counters`) at `now_ns`:
    /// what to send (tagged with a TxSequence when `tag`), or `None` if the budget is spent, in
    /// which case a proof probe went to `remote` on `sock` if what the face received covers it.
    pub(super) fn admit<'b>(
        &'b mut self,
        (proof, counters): (&mut Proof, &mut FaceCounters),
        (sock, remote): (&mut UdpSock, SocketAddr),
        bytes: &'b [u8],
        tag: bool,
        now_ns: u64,
    ) -> Option<&'b [u8]> {
        let tagged = tag && tag_packet(&mut self.buf, bytes, proof.next);
        let len = if tagged { self.buf.len() } else { bytes.len() };
        if self.budget.take(len, now_ns) {
            if !tagged {
                return Some(bytes);
            }
            proof.next_tx();
            return Some(&self.buf);
        }
        self.budget_dropped += 1;
        if tag && counters.out_bytes + PROBE_BYTES as u64 <= counters.in_bytes {
            probe(&mut self.buf, proof.next_tx());
            stage(sock, &self.buf, remote);
            counters.out_bytes += PROBE_BYTES as u64;
            self.probes += 1;
        }
        None
    }
}

/// Writes to `buf` `frame` (a network packet, or an LpPacket carrying one) in an LpPacket with
/// TxSequence `tx` among its header fields, in NDNLPv2's order; false if `frame` is neither.
pub(super) fn tag_packet(buf: &mut Vec<u8>, frame: &[u8], tx: u64) -> bool {
    let Split::Parts(p) = split_link(frame) else {
        return false;
    };
    let fields = p.header_fields;
    let inner = fields.len() + SEQ_FIELD_BYTES + tlv_len(tt::LP_FRAGMENT, p.packet.len());
    buf.clear();
    write_var_number(buf, u64::from(tt::LP_PACKET));
    write_var_number(buf, inner as u64);
    let split = split_fields(fields, tt::LP_TX_SEQUENCE);
    buf.extend_from_slice(&fields[..split]);
    write_seq(buf, tt::LP_TX_SEQUENCE, tx);
    buf.extend_from_slice(&fields[split..]);
    write_var_number(buf, u64::from(tt::LP_FRAGMENT));
    write_var_number(buf, p.packet.len() as u64);
    buf.extend_from_slice(p.packet);
    true
}

/// Writes to `buf` a proof probe: an IDLE LpPacket with TxSequence `tx` alone.
pub(super) fn probe(buf: &mut Vec<u8>, tx: u64) {
    buf.clear();
    write_var_number(buf, u64::from(tt::LP_PACKET));
    write_var_number(buf, SEQ_FIELD_BYTES as u64);
    write_seq(buf, tt::LP_TX_SEQUENCE, tx);
    debug_assert_eq!(buf.len(), PROBE_BYTES);
}

impl Face {
    /// Whether its address is proven: always, but for an on-demand UDP face that has not yet
    /// answered what it was sent (a Data, a Nack, an Ack of a TxSequence).
    pub fn proven(&self) -> bool {
        match &self.io {
            FaceIo::Udp(u) => !self.quota || u.proof.proven,
            FaceIo::Stream(_) | FaceIo::Ws(_) | FaceIo::Ether(_) => true,
        }
    }

    /// Whether datagram `bytes`, just received (and counted), proves this face's address now
    /// (false if it was proven already).
    pub(super) fn proves(&self, bytes: &[u8]) -> Option<ProvenBy> {
        let FaceIo::Udp(u) = &self.io else {
            return None;
        };
        if !self.quota || u.proof.proven {
            return None;
        }
        if self.counters.in_data + self.counters.in_nacks > 0 {
            return Some(ProvenBy::Answer);
        }
        u.proof.acked_by(bytes).then_some(ProvenBy::Ack)
    }
}

/// How a face proved its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ProvenBy {
    /// A Data or a Nack.
    Answer,
    /// An Ack of a TxSequence sent to it.
    Ack,
}

impl FaceTable {
    /// Face `id` proved its address: it is no longer bounded, is evicted only after every
    /// unproven face, and the sink hears of it as changed.
    pub(super) fn proved(&mut self, id: FaceId, by: ProvenBy, sink: &mut impl FaceSink) {
        let Some(f) = self.faces.get_mut(&id) else {
            return;
        };
        let FaceIo::Udp(u) = &mut f.io else {
            return;
        };
        u.proof.proven = true;
        if by == ProvenBy::Ack {
            self.unproven.proven_by_ack += 1;
        }
        self.on_demand.proven_joined(id, f.last_rx_ms);
        sink.face_changed(f);
    }

    /// The budget of what faces with an unproven address are sent, in bytes per second (this
    /// table's).
    pub fn unproven_send_bytes_per_s(&self) -> u64 {
        self.unproven.budget.rate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_acks_of_recent_sequences_prove() {
        let mut p = Proof::new(true);
        assert!(!p.proven);
        assert!(!p.acked(p.start), "nothing sent yet");
        let first = p.next_tx();
        assert!(p.acked(first));
        assert!(!p.acked(first.wrapping_add(1)), "not sent yet");
        assert!(!p.acked(first.wrapping_sub(1)));
        for _ in 0..PROOF_WINDOW {
            p.next_tx();
        }
        assert!(!p.acked(first), "out of the window");
        assert!(p.acked(p.next.wrapping_sub(1)));
        assert!(p.acked(p.next.wrapping_sub(PROOF_WINDOW)));
        assert!(!p.acked(p.next.wrapping_sub(PROOF_WINDOW + 1)));
        assert!(Proof::new(false).proven);
        assert_ne!(Proof::new(true).start, Proof::new(true).start);
    }

    #[test]
    fn an_ack_in_a_datagram_proves_and_a_wrong_one_does_not() {
        let mut p = Proof::new(true);
        let tx = p.next_tx();
        let ack = |n: u64| {
            wire::LpPacket {
                acks: vec![n],
                ..wire::LpPacket::default()
            }
            .to_wire()
        };
        assert!(p.acked_by(&ack(tx)));
        assert!(!p.acked_by(&ack(tx ^ 0x5555)));
        assert!(!p.acked_by(&ack(tx)[..5]), "truncated");
        let i = wire::Interest::new(wire::Name::from_uri("/a").unwrap(), [1; 4]).to_wire();
        assert!(!p.acked_by(&i));
    }

    #[test]
    fn tagged_packets_keep_their_fields_in_order() {
        let i = wire::Interest::new(wire::Name::from_uri("/a").unwrap(), [1; 4]).to_wire();
        let mut buf = Vec::new();
        assert!(tag_packet(&mut buf, &i, 77));
        let lim = Limits::default();
        let lp = LpPacketView::decode(&buf, &lim).unwrap();
        assert_eq!((lp.tx_sequence, lp.fragment()), (Some(77), Some(&i[..])));
        // A Nack (below TxSequence) and NonDiscovery (above) stay around it.
        let nack = wire::LpPacket {
            non_discovery: true,
            ..wire::LpPacket::nack(i.clone(), wire::lp::NackReason::NoRoute)
        }
        .to_wire();
        let mut tagged = Vec::new();
        assert!(tag_packet(&mut tagged, &nack, 9));
        let lp = LpPacketView::decode(&tagged, &lim).unwrap();
        assert_eq!(lp.tx_sequence, Some(9));
        assert!(lp.nack.is_some() && lp.non_discovery);
        assert_eq!(lp.fragment(), Some(&i[..]));
        assert!(!tag_packet(
            &mut buf,
            &wire::LpPacket::default().to_wire(),
            1
        ));
        probe(&mut buf, 5);
        let lp = LpPacketView::decode(&buf, &lim).unwrap();
        assert_eq!((lp.tx_sequence, lp.fragment()), (Some(5), None));
    }

    #[test]
    fn the_budget_refills_at_its_rate_up_to_its_burst() {
        let mut b = SendBudget::new(1_000_000);
        assert!(b.take(100_000, 0), "a full burst of 100 ms");
        assert!(!b.take(1, 0));
        // 10 ms: 10,000 bytes.
        assert!(b.take(10_000, 10_000_000));
        assert!(!b.take(1, 10_000_000));
        // A long pause refills the burst, no more.
        assert!(b.take(100_000, 60_000_000_000));
        assert!(!b.take(1, 60_000_000_000));
        let mut off = SendBudget::new(0);
        assert!(off.take(usize::MAX, 0));
    }
}

/// The IDLE LpPacket that acknowledges the TxSequence of `datagram`, if `datagram` is an
/// LpPacket carrying one: a neighbour that numbers what it sends until its peer's address is
/// proven (a Cascade router to an on-demand face, or an NFD with reliability on) hears from a
/// forwarder that does not run reliability on the face too.
pub(super) fn ack_for(datagram: &[u8]) -> Option<[u8; ACK_PACKET_BYTES]> {
    if datagram.first() != Some(&(wire::tt::LP_PACKET as u8)) {
        return None;
    }
    let limits = wire::Limits {
        max_packet_bytes: datagram.len(),
        ..wire::Limits::default()
    };
    let seq = wire::LpPacketView::decode(datagram, &limits)
        .ok()?
        .tx_sequence?;
    let mut ack = [0u8; ACK_PACKET_BYTES];
    // LpPacket (0x64), length 12: Ack (0x0344, as 0xFD 0x03 0x44), length 8, the sequence.
    ack[..6].copy_from_slice(&[0x64, 12, 0xfd, 0x03, 0x44, 8]);
    ack[6..].copy_from_slice(&seq.to_be_bytes());
    Some(ack)
}

/// Bytes of an IDLE LpPacket holding one Ack.
pub(super) const ACK_PACKET_BYTES: usize = 14;

#[cfg(test)]
mod ack_tests {
    use super::*;

    #[test]
    fn a_tx_sequence_is_acknowledged_and_anything_else_is_not() {
        let tagged = wire::LpPacket {
            tx_sequence: Some(0x0102_0304_0506_0708),
            ..wire::LpPacket::default()
        }
        .to_wire();
        let ack = ack_for(&tagged).expect("an LpPacket with a TxSequence is acked");
        let limits = wire::Limits::default();
        let view = wire::LpPacketView::decode(&ack, &limits).expect("the Ack decodes");
        assert_eq!(view.tx_sequence, None);
        let expected = wire::LpPacket {
            acks: vec![0x0102_0304_0506_0708],
            ..wire::LpPacket::default()
        }
        .to_wire();
        assert_eq!(ack.as_slice(), expected.as_slice());
        let plain = wire::LpPacket::default().to_wire();
        assert_eq!(ack_for(&plain), None);
        assert_eq!(ack_for(&[0x05, 0x00]), None);
        assert_eq!(ack_for(&[]), None);
    }
}
