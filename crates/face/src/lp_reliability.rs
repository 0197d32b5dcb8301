//! NDNLPv2 link reliability, as NFD's `LpReliability` provides it on a face whose
//! LpReliabilityEnabled flag is set.
//!
//! Sending: every frame (an LpPacket carrying a Fragment) gets a TxSequence of its own
//! ([`LpReliability::send`]) and is kept, by TxSequence, until the neighbour acknowledges it. A
//! frame not acknowledged within the retransmission timeout (RTO, from the RTT estimated on the
//! frames acknowledged without retransmission, as ndn-cxx's `RttEstimator`: 1 s at first, within
//! 200 ms and 1 min), or one [`ReliabilityOptions::seq_loss_threshold`] Acks behind frames sent
//! after it, is lost: it goes again under a new TxSequence, at most
//! [`ReliabilityOptions::max_retx`] times; then every frame of its network packet is given up
//! and counted ([`ReliabilityCounters::retx_exhausted`]; [`LpReliability::take_lost_interests`]
//! counts the Interests among them, which NFD reports to the strategy). Frames kept are bounded
//! ([`ReliabilityOptions::max_unacked`]): beyond, a packet goes out once, unreliably, counted in
//! [`ReliabilityCounters::refused`].
//!
//! Receiving ([`LpReliability::receive`]): the Acks a frame carries remove the frames they name;
//! the TxSequence of a frame with a Fragment is queued to be acknowledged, piggybacked on the
//! next frames sent (as many as fit in the MTU) or, when nothing is sent for
//! [`ReliabilityOptions::idle_ack_ms`], in IDLE packets ([`LpReliability::poll`]); a frame whose
//! Sequence came within the last RTO is a duplicate (a retransmission whose Ack was lost): the
//! caller drops it. Every queue is bounded and counts what it refused.
//!
//! The fields go where NDNLPv2 orders them: the Acks, then the TxSequence, after the fields of
//! lower TLV-TYPE and before those of higher (NB-CC's field) and the Fragment. Nothing here reads
//! a clock or does I/O: times come in milliseconds, frames go out through a callback.

use std::collections::{BTreeMap, HashMap, VecDeque};

use wire::tlv::{write_var_number, Reader};
use wire::{tt, LpPacketView};

use crate::link::{split_link, tlv_len, Split};

/// An Ack or TxSequence field: TLV-TYPE (3 octets), TLV-LENGTH (1), an 8-octet number.
pub const SEQ_FIELD_BYTES: usize = 12;

/// NFD's `LpReliability::Options` and the bounds of its queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReliabilityOptions {
    /// Retransmissions of a frame before its network packet is given up (NFD: 3).
    pub max_retx: u32,
    /// How long a received frame's Ack may wait for a frame to ride on before it goes in an IDLE
    /// packet, in milliseconds (NFD: 5 ms).
    pub idle_ack_ms: u64,
    /// Acks for later frames after which an unacknowledged frame is lost (NFD: 3).
    pub seq_loss_threshold: u32,
    /// Frames kept for retransmission at once.
    pub max_unacked: usize,
    /// Acks waiting to be sent at once (beyond, the oldest is dropped: the neighbour
    /// retransmits).
    pub max_acks: usize,
    /// Received Sequences remembered for duplicate detection at once.
    pub max_recent: usize,
}

impl Default for ReliabilityOptions {
    fn default() -> Self {
        ReliabilityOptions {
            max_retx: 3,
            idle_ack_ms: 5,
            seq_loss_threshold: 3,
            max_unacked: 4096,
            max_acks: 4096,
            max_recent: 4096,
        }
    }
}

/// What the reliability layer counted (NFD's link-service counters, and the bounds').
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReliabilityCounters {
    /// Network packets whose frames were all acknowledged without retransmission
    /// (NFD's `nAcknowledged`).
    pub acknowledged: u64,
    /// Network packets acknowledged after a retransmission (NFD's `nRetransmitted`).
    pub retransmitted: u64,
    /// Network packets given up after the most retransmissions (NFD's `nRetxExhausted`).
    pub retx_exhausted: u64,
    /// Frames sent again.
    pub retransmissions: u64,
    /// Received frames dropped as duplicates (NFD's `nDuplicateSequence`).
    pub duplicates: u64,
    /// Acks for no frame kept.
    pub unknown_acks: u64,
    /// Network packets sent unreliably: the frames kept were at their bound.
    pub refused: u64,
    /// Acks dropped: the queue was at its bound.
    pub acks_dropped: u64,
    /// IDLE packets sent to carry Acks.
    pub idle_packets: u64,
}

impl ReliabilityCounters {
    /// Each counter with its name (`/metrics`' `event` label).
    pub fn named(&self) -> [(&'static str, u64); 9] {
        [
            ("acknowledged", self.acknowledged),
            ("retransmitted", self.retransmitted),
            ("retx_exhausted", self.retx_exhausted),
            ("retransmissions", self.retransmissions),
            ("duplicates", self.duplicates),
            ("unknown_acks", self.unknown_acks),
            ("refused", self.refused),
            ("acks_dropped", self.acks_dropped),
            ("idle_packets", self.idle_packets),
        ]
    }
}

impl std::ops::AddAssign for ReliabilityCounters {
    fn add_assign(&mut self, o: ReliabilityCounters) {
        self.acknowledged += o.acknowledged;
        self.retransmitted += o.retransmitted;
        self.retx_exhausted += o.retx_exhausted;
        self.retransmissions += o.retransmissions;
        self.duplicates += o.duplicates;
        self.unknown_acks += o.unknown_acks;
        self.refused += o.refused;
        self.acks_dropped += o.acks_dropped;
        self.idle_packets += o.idle_packets;
    }
}

/// RTO from RTT measurements, as ndn-cxx's `RttEstimator` (RFC 6298: α 1/8, β 1/4, k 4).
#[derive(Debug, Clone, Copy)]
pub struct RttEstimator {
    srtt_ms: f64,
    rttvar_ms: f64,
    rto_ms: f64,
    measured: bool,
}

/// RTO before any measurement, in milliseconds.
pub const INITIAL_RTO_MS: u64 = 1000;
/// Smallest RTO, in milliseconds.
pub const MIN_RTO_MS: u64 = 200;
/// Largest RTO, in milliseconds.
pub const MAX_RTO_MS: u64 = 60_000;

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator {
            srtt_ms: 0.0,
            rttvar_ms: 0.0,
            rto_ms: INITIAL_RTO_MS as f64,
            measured: false,
        }
    }
}

impl RttEstimator {
    /// Takes one RTT sample.
    pub fn add(&mut self, rtt_ms: u64) {
        let rtt = rtt_ms as f64;
        if self.measured {
            self.rttvar_ms = 0.75 * self.rttvar_ms + 0.25 * (self.srtt_ms - rtt).abs();
            self.srtt_ms = 0.875 * self.srtt_ms + 0.125 * rtt;
        } else {
            self.srtt_ms = rtt;
            self.rttvar_ms = rtt / 2.0;
            self.measured = true;
        }
        let rto = self.srtt_ms + 4.0 * self.rttvar_ms;
        self.rto_ms = rto.clamp(MIN_RTO_MS as f64, MAX_RTO_MS as f64);
    }

    /// The current RTO, in milliseconds.
    pub fn rto_ms(&self) -> u64 {
        self.rto_ms as u64
    }
}

/// A frame kept until acknowledged.
struct Unacked {
    /// Its header fields (no TxSequence, no Ack), as encoded.
    fields: Vec<u8>,
    /// Its Fragment's value.
    payload: Vec<u8>,
    net: u64,
    sent_ms: u64,
    deadline_ms: u64,
    retx: u32,
    greater_acks: u32,
}

/// A network packet whose frames are kept.
struct NetPkt {
    frames: Vec<u64>,
    interest: bool,
    did_retx: bool,
}

/// One face's NDNLPv2 reliability; see the [module docs](self).
pub struct LpReliability {
    opts: ReliabilityOptions,
    next_tx: u64,
    unacked: BTreeMap<u64, Unacked>,
    nets: HashMap<u64, NetPkt>,
    next_net: u64,
    acks: VecDeque<u64>,
    idle_ack_at: Option<u64>,
    recent: HashMap<u64, u64>,
    recent_order: VecDeque<u64>,
    rtt: RttEstimator,
    lost_interests: u64,
    counters: ReliabilityCounters,
    scratch: Vec<u8>,
}

impl LpReliability {
    /// A face's reliability with `opts`, its first TxSequence 0.
    pub fn new(opts: ReliabilityOptions) -> Self {
        LpReliability {
            opts,
            next_tx: 0,
            unacked: BTreeMap::new(),
            nets: HashMap::new(),
            next_net: 0,
            acks: VecDeque::new(),
            idle_ack_at: None,
            recent: HashMap::new(),
            recent_order: VecDeque::new(),
            rtt: RttEstimator::default(),
            lost_interests: 0,
            counters: ReliabilityCounters::default(),
            scratch: Vec::new(),
        }
    }

    /// The counters.
    pub fn counters(&self) -> ReliabilityCounters {
        self.counters
    }

    /// Frames kept for retransmission now.
    pub fn unacked(&self) -> usize {
        self.unacked.len()
    }

    /// Acks waiting to be sent now.
    pub fn pending_acks(&self) -> usize {
        self.acks.len()
    }

    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Interests given up since the last call (NFD tells the strategy of each).
    pub fn take_lost_interests(&mut self) -> u64 {
        std::mem::take(&mut self.lost_interests)
    }

    /// When [`LpReliability::poll`] has something to do next (an RTO, the idle-ack timer).
    pub fn next_deadline(&self) -> Option<u64> {
        let rto = self.unacked.values().map(|u| u.deadline_ms).min();
        match (rto, self.idle_ack_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Sends the frames of one network packet (each an LpPacket with a Fragment and a
    /// Sequence, as the fragmenter writes them, or a bare packet): each gets a TxSequence and
    /// as many waiting Acks as fit in `mtu`, goes to `send`, and is kept until acknowledged.
    /// At the bound of frames kept, they go out as given, once ([`ReliabilityCounters::refused`]).
    pub fn send(
        &mut self,
        frames: &[&[u8]],
        interest: bool,
        now_ms: u64,
        mtu: usize,
        send: &mut impl FnMut(&[u8]),
    ) {
        if self.unacked.len() + frames.len() > self.opts.max_unacked {
            self.counters.refused += 1;
            frames.iter().for_each(|f| send(f));
            return;
        }
        let net = self.next_net;
        self.next_net += 1;
        let mut kept = Vec::with_capacity(frames.len());
        for f in frames {
            let Split::Parts(p) = split_link(f) else {
                send(f);
                continue;
            };
            let u = Unacked {
                fields: p.header_fields.to_vec(),
                payload: p.packet.to_vec(),
                net,
                sent_ms: now_ms,
                deadline_ms: 0,
                retx: 0,
                greater_acks: 0,
            };
            kept.push(self.transmit(u, now_ms, mtu, send));
        }
        self.nets.insert(
            net,
            NetPkt {
                frames: kept,
                interest,
                did_retx: false,
            },
        );
    }

    /// Gives `u` a new TxSequence, sends it with Acks and keeps it; its TxSequence.
    fn transmit(
        &mut self,
        mut u: Unacked,
        now_ms: u64,
        mtu: usize,
        send: &mut impl FnMut(&[u8]),
    ) -> u64 {
        let tx = self.next_tx;
        self.next_tx = self.next_tx.wrapping_add(1);
        u.deadline_ms = now_ms + self.rtt.rto_ms();
        let mut buf = std::mem::take(&mut self.scratch);
        self.encode(&mut buf, &u.fields, Some(tx), Some(&u.payload), mtu);
        send(&buf);
        self.scratch = buf;
        self.unacked.insert(tx, u);
        tx
    }

    /// Encodes an LpPacket of `fields`, the Acks that fit in `mtu`, `tx` and `payload` (none:
    /// an IDLE packet).
    fn encode(
        &mut self,
        buf: &mut Vec<u8>,
        fields: &[u8],
        tx: Option<u64>,
        payload: Option<&[u8]>,
        mtu: usize,
    ) {
        let base = fields.len()
            + tx.map_or(0, |_| SEQ_FIELD_BYTES)
            + payload.map_or(0, |p| tlv_len(tt::LP_FRAGMENT, p.len()));
        // The LpPacket's own TLV-TYPE and a TLV-LENGTH of up to 5 octets.
        let room = mtu.saturating_sub(base + 6);
        let n_acks = self.acks.len().min(room / SEQ_FIELD_BYTES);
        let inner = base + n_acks * SEQ_FIELD_BYTES;
        buf.clear();
        write_var_number(buf, u64::from(tt::LP_PACKET));
        write_var_number(buf, inner as u64);
        // Fields below Ack's TLV-TYPE, then Acks and TxSequence, then the others.
        let split = split_fields(fields, tt::LP_ACK);
        buf.extend_from_slice(&fields[..split]);
        for ack in self.acks.drain(..n_acks) {
            write_seq(buf, tt::LP_ACK, ack);
        }
        if let Some(tx) = tx {
            write_seq(buf, tt::LP_TX_SEQUENCE, tx);
        }
        buf.extend_from_slice(&fields[split..]);
        if let Some(p) = payload {
            write_var_number(buf, u64::from(tt::LP_FRAGMENT));
            write_var_number(buf, p.len() as u64);
            buf.extend_from_slice(p);
        }
        if self.acks.is_empty() {
            self.idle_ack_at = None;
        }
    }

    /// A received LpPacket: its Acks, and its TxSequence to acknowledge. False if it is a
    /// duplicate of a frame received within the last RTO (the caller drops it). Frames found
    /// lost go again through `send`.
    pub fn receive(
        &mut self,
        lp: &LpPacketView<'_>,
        now_ms: u64,
        mtu: usize,
        send: &mut impl FnMut(&[u8]),
    ) -> bool {
        for ack in lp.acks() {
            self.on_ack(ack, now_ms, mtu, send);
        }
        let (Some(tx), Some(_)) = (lp.tx_sequence, lp.fragment()) else {
            return true;
        };
        if self.acks.len() >= self.opts.max_acks {
            self.acks.pop_front();
            self.counters.acks_dropped += 1;
        }
        self.acks.push_back(tx);
        self.idle_ack_at
            .get_or_insert(now_ms + self.opts.idle_ack_ms);
        let Some(seq) = lp.sequence else {
            return true;
        };
        let rto = self.rtt.rto_ms();
        while let Some(&old) = self.recent_order.front() {
            if self.recent.get(&old).is_some_and(|&at| now_ms <= at + rto) {
                break;
            }
            self.recent_order.pop_front();
            self.recent.remove(&old);
        }
        let duplicate = self.recent.insert(seq, now_ms).is_some();
        if !duplicate {
            self.recent_order.push_back(seq);
            if self.recent_order.len() > self.opts.max_recent {
                if let Some(old) = self.recent_order.pop_front() {
                    self.recent.remove(&old);
                }
            }
        }
        if duplicate {
            self.counters.duplicates += 1;
        }
        !duplicate
    }

    fn on_ack(&mut self, ack: u64, now_ms: u64, mtu: usize, send: &mut impl FnMut(&[u8])) {
        let Some(u) = self.unacked.remove(&ack) else {
            self.counters.unknown_acks += 1;
            return;
        };
        if u.retx == 0 {
            self.rtt.add(now_ms.saturating_sub(u.sent_ms));
        }
        self.acknowledged(u.net, ack);
        // Frames sent before this one that this many Acks passed are lost.
        let threshold = self.opts.seq_loss_threshold;
        let mut lost = Vec::new();
        for (&tx, f) in self.unacked.range_mut(..ack) {
            f.greater_acks += 1;
            if f.greater_acks >= threshold {
                lost.push(tx);
            }
        }
        for tx in lost {
            self.lose(tx, now_ms, mtu, send);
        }
    }

    /// Frame `tx` of `net` was acknowledged.
    fn acknowledged(&mut self, net: u64, tx: u64) {
        let Some(n) = self.nets.get_mut(&net) else {
            return;
        };
        n.frames.retain(|&f| f != tx);
        if n.frames.is_empty() {
            if n.did_retx {
                self.counters.retransmitted += 1;
            } else {
                self.counters.acknowledged += 1;
            }
            self.nets.remove(&net);
        }
    }

    /// Frame `tx` is lost: sent again under a new TxSequence, or, past the most
    /// retransmissions, its network packet is given up.
    fn lose(&mut self, tx: u64, now_ms: u64, mtu: usize, send: &mut impl FnMut(&[u8])) {
        let Some(mut u) = self.unacked.remove(&tx) else {
            return;
        };
        if u.retx >= self.opts.max_retx {
            self.counters.retx_exhausted += 1;
            if let Some(n) = self.nets.remove(&u.net) {
                for f in &n.frames {
                    self.unacked.remove(f);
                }
                self.lost_interests += u64::from(n.interest);
            }
            return;
        }
        u.retx += 1;
        u.greater_acks = 0;
        let net = u.net;
        self.counters.retransmissions += 1;
        let new_tx = self.transmit(u, now_ms, mtu, send);
        if let Some(n) = self.nets.get_mut(&net) {
            n.did_retx = true;
            for f in n.frames.iter_mut().filter(|f| **f == tx) {
                *f = new_tx;
            }
        }
    }

    /// Runs the timers due at `now_ms`: frames past their RTO are lost (sent again or given
    /// up), and Acks that waited the idle-ack period go out in IDLE packets.
    pub fn poll(&mut self, now_ms: u64, mtu: usize, send: &mut impl FnMut(&[u8])) {
        let due: Vec<u64> = (self.unacked.iter())
            .filter(|(_, u)| u.deadline_ms <= now_ms)
            .map(|(&tx, _)| tx)
            .collect();
        for tx in due {
            self.lose(tx, now_ms, mtu, send);
        }
        if self.idle_ack_at.is_some_and(|t| t <= now_ms) {
            let mut buf = std::mem::take(&mut self.scratch);
            // Bounded: each IDLE packet takes at least one Ack (an MTU below one Ack's room
            // sends them one a packet anyway).
            while !self.acks.is_empty() {
                let before = self.acks.len();
                self.encode(&mut buf, &[], None, None, mtu.max(SEQ_FIELD_BYTES + 6));
                debug_assert!(self.acks.len() < before);
                self.counters.idle_packets += 1;
                send(&buf);
            }
            self.scratch = buf;
            self.idle_ack_at = None;
        }
    }
}

/// A Sequence field: TLV-TYPE, TLV-LENGTH, an 8-octet number.
pub const SEQUENCE_FIELD_BYTES: usize = 10;

/// `frame` (an LpPacket without a Sequence, or a bare packet) with Sequence `seq` first, as
/// NFD numbers every frame when reliability is on (so that the neighbour can drop
/// duplicates); `None` if it is not one.
pub fn with_sequence(frame: &[u8], seq: u64) -> Option<Vec<u8>> {
    let Split::Parts(p) = split_link(frame) else {
        return None;
    };
    let inner =
        SEQUENCE_FIELD_BYTES + p.header_fields.len() + tlv_len(tt::LP_FRAGMENT, p.packet.len());
    let mut out = Vec::with_capacity(tlv_len(tt::LP_PACKET, inner));
    write_var_number(&mut out, u64::from(tt::LP_PACKET));
    write_var_number(&mut out, inner as u64);
    write_var_number(&mut out, u64::from(tt::LP_SEQUENCE));
    write_var_number(&mut out, 8);
    out.extend_from_slice(&seq.to_be_bytes());
    out.extend_from_slice(p.header_fields);
    write_var_number(&mut out, u64::from(tt::LP_FRAGMENT));
    write_var_number(&mut out, p.packet.len() as u64);
    out.extend_from_slice(p.packet);
    Some(out)
}

/// Where in `fields` (encoded header fields, in TLV-TYPE order) the first field of TLV-TYPE
/// `typ` or above starts.
pub(crate) fn split_fields(fields: &[u8], typ: u32) -> usize {
    let mut r = Reader::new(fields);
    let start = r.offset();
    loop {
        let at = r.offset() - start;
        match r.read() {
            Ok(e) if e.typ < typ => {}
            _ => return at,
        }
    }
}

/// Writes a field of TLV-TYPE `typ` holding `n` in 8 octets.
pub(crate) fn write_seq(buf: &mut Vec<u8>, typ: u32, n: u64) {
    write_var_number(buf, u64::from(typ));
    write_var_number(buf, 8);
    buf.extend_from_slice(&n.to_be_bytes());
}

#[cfg(test)]
#[path = "lp_reliability/tests.rs"]
mod tests;
