//! NDNLPv2 reliability on the UDP faces whose LpReliabilityEnabled flag is set
//! ([`crate::lp_reliability`]).
//!
//! Such a face sends every packet through a fragmenter of its own, whose MTU leaves room for
//! the TxSequence (and whose frames are always LpPackets, as NFD sends them when reliability is
//! on), and through the face's [`LpReliability`], which numbers the frames, piggybacks Acks and
//! keeps the frames for retransmission. What it receives goes through the same state first: the
//! Acks are taken, the TxSequence is queued to acknowledge, and a duplicate Sequence is dropped
//! before the sink sees it. Retransmissions and IDLE packets carrying Acks go out from
//! [`FaceTable::flush`], on the face's socket. Turning the flag off drops the state (frames not
//! yet acknowledged are not sent again).

use std::net::SocketAddr;

use wire::{Limits, LpPacketView};

use super::tx::{stage, UdpSock};
use super::{FaceCounters, FaceId, FaceIo, FaceTable, PacketKind, UdpIo};
use crate::link::{split_link, Split};
use crate::lp_frag::Fragmenter;
use crate::lp_reliability::{
    with_sequence, LpReliability, ReliabilityCounters, ReliabilityOptions, SEQUENCE_FIELD_BYTES,
    SEQ_FIELD_BYTES,
};

/// MTU room kept for the TxSequence, the Sequence of an unfragmented frame, and a TLV-LENGTH
/// two octets longer.
const RESERVED_BYTES: usize = SEQ_FIELD_BYTES + SEQUENCE_FIELD_BYTES + 2;

/// Where the Sequences of unfragmented frames start: far from the fragmenter's.
const WHOLE_SEQUENCES: u64 = 1 << 63;

/// A UDP face's reliability: its state, its fragmenter, the frames waiting for the socket.
pub(super) struct Reliable {
    rel: LpReliability,
    frag: Fragmenter,
    mtu: usize,
    /// The next Sequence of an unfragmented frame.
    next_whole: u64,
    outbox: Vec<Vec<u8>>,
    frames: Vec<Vec<u8>>,
    /// Datagrams that did not decode as the LpPacket they start like (the sink counts them).
    limits: Limits,
}

impl Reliable {
    fn new(mtu: usize, first_sequence: u64) -> Option<Self> {
        let frag = Fragmenter::new(mtu.checked_sub(RESERVED_BYTES)?, first_sequence).ok()?;
        Some(Reliable {
            rel: LpReliability::new(ReliabilityOptions::default()),
            frag: frag.with_bare(false),
            mtu,
            next_whole: first_sequence | WHOLE_SEQUENCES,
            outbox: Vec::new(),
            frames: Vec::new(),
            limits: Limits::default(),
        })
    }

    /// Sends one link-layer packet (network packet and link headers, as encoded) on `sock`.
    pub(super) fn send(
        &mut self,
        sock: &mut UdpSock,
        remote: SocketAddr,
        counters: &mut FaceCounters,
        (kind, bytes, now_ms): (PacketKind, &[u8], u64),
    ) {
        let (packet, fields) = match split_link(bytes) {
            Split::Parts(p) => (p.packet, p.header_fields),
            Split::Idle => return,
            Split::Malformed => (bytes, &[][..]),
        };
        let frames = &mut self.frames;
        frames.clear();
        let cut = self
            .frag
            .fragment_encoded(packet, fields, |d| frames.push(d.to_vec()));
        if cut.is_err() {
            counters.drop_queue_full += 1;
            return;
        }
        if let [whole] = &mut frames[..] {
            // One frame: numbered here (a fragmented packet's frames are numbered already).
            if let Some(f) = with_sequence(whole, self.next_whole) {
                *whole = f;
                self.next_whole = self.next_whole.wrapping_add(1) | WHOLE_SEQUENCES;
            }
        }
        let refs: Vec<&[u8]> = frames.iter().map(|f| &f[..]).collect();
        let mut total = 0;
        let interest = kind == PacketKind::Interest;
        self.rel.send(&refs, interest, now_ms, self.mtu, &mut |f| {
            total += f.len();
            stage(sock, f, remote);
        });
        counters.count_out(kind, total);
    }

    /// A datagram received: false if it is a duplicate to drop.
    pub(super) fn receive(&mut self, bytes: &[u8], now_ms: u64) -> bool {
        if bytes.first() != Some(&(wire::tt::LP_PACKET as u8)) {
            return true;
        }
        let Ok(lp) = LpPacketView::decode(bytes, &self.limits) else {
            return true;
        };
        let outbox = &mut self.outbox;
        self.rel
            .receive(&lp, now_ms, self.mtu, &mut |f| outbox.push(f.to_vec()))
    }
}

impl FaceTable {
    /// Gives UDP face `id` reliability, or takes it away, as its LpReliabilityEnabled flag
    /// says, its fragmenter following the face's MTU.
    pub(super) fn sync_reliability(&mut self, id: FaceId) {
        let Some(f) = self.faces.get_mut(&id) else {
            return;
        };
        let want = f.options.lp_reliability;
        let FaceIo::Udp(u) = &mut f.io else {
            return;
        };
        let mtu = u.frag.mtu();
        match (&mut u.rel, want) {
            (Some(r), true) if r.mtu != mtu => {
                let _ = r.frag.set_mtu(mtu.saturating_sub(RESERVED_BYTES));
                r.mtu = mtu;
            }
            (Some(_), true) | (None, false) => {}
            (None, true) => {
                u.rel = Reliable::new(mtu, u.frag.next_sequence()).map(Box::new);
                self.reliable.push(id);
            }
            (Some(r), false) => {
                // The face's own fragmenter goes on from the Sequences the other gave out.
                if let Ok(frag) = Fragmenter::new(mtu, r.frag.next_sequence()) {
                    u.frag = frag;
                }
                u.rel = None;
                self.reliable.retain(|&r| r != id);
            }
        }
    }

    /// Runs the reliable faces' timers and stages what they have to send (retransmissions,
    /// IDLE packets with Acks, retransmissions the Acks received called for).
    pub(super) fn poll_reliability(&mut self, now_ms: u64) {
        let mut gone = false;
        for id in &self.reliable {
            let Some(FaceIo::Udp(u)) = self.faces.get_mut(id).map(|f| &mut f.io) else {
                gone = true;
                continue;
            };
            let UdpIo {
                socket,
                remote,
                rel,
                ..
            } = &mut **u;
            let Some(r) = rel.as_mut() else {
                continue;
            };
            let outbox = &mut r.outbox;
            r.rel.poll(now_ms, r.mtu, &mut |f| outbox.push(f.to_vec()));
            for f in r.outbox.drain(..) {
                stage(&mut self.udp[*socket], &f, *remote);
            }
        }
        if gone {
            let faces = &self.faces;
            self.reliable.retain(|id| faces.contains_key(id));
        }
    }

    /// When the reliable faces' next timer is due (`None`: no timer runs).
    pub fn next_reliability_ms(&self) -> Option<u64> {
        (self.reliable.iter())
            .filter_map(|id| match self.faces.get(id).map(|f| &f.io) {
                Some(FaceIo::Udp(u)) => u.rel.as_ref().and_then(|r| r.rel.next_deadline()),
                _ => None,
            })
            .min()
    }

    /// The reliability counters of the open reliable UDP faces, summed.
    pub fn reliability_totals(&self) -> ReliabilityCounters {
        let mut all = ReliabilityCounters::default();
        for id in &self.reliable {
            all += self.reliability_counters(*id).unwrap_or_default();
        }
        all
    }

    /// The reliability counters of UDP face `id` (`None`: no such face, or reliability off).
    pub fn reliability_counters(&self, id: FaceId) -> Option<ReliabilityCounters> {
        match self.faces.get(&id).map(|f| &f.io) {
            Some(FaceIo::Udp(u)) => u.rel.as_ref().map(|r| r.rel.counters()),
            _ => None,
        }
    }
}

impl super::Face {
    /// LpReliabilityEnabled? (A reliable UDP face sends only from its own table: no mirror.)
    pub fn lp_reliability(&self) -> bool {
        self.options.lp_reliability
    }
}
