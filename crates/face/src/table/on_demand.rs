//! On-demand UDP faces (one per remote that sends to a listening socket): their own quota in the
//! table, a limit per remote host, eviction of the least recently active when the quota is full,
//! creation only for a well-formed first packet, and an optional bound on what a face whose
//! address is unproven is sent.
//!
//! The quota keeps room in the table for every other face: however many remotes send, at most
//! [`FaceBounds::max_on_demand_faces`] faces are theirs, and when the table is full a new local
//! face (a Unix socket, a loopback connection) takes the place of an on-demand UDP face. A new
//! remote over the quota evicts the least recently active on-demand face, in second-chance
//! order: faces wait in a queue stamped with their last receive time; the one at the front is
//! evicted unless it has received since it was stamped, in which case it goes to the back with
//! a new stamp. Faces that proved their address ([`super::proof`]) wait in a second queue and
//! go only when no unproven face is left, so a consumer that answers keeps its face however
//! many forged remotes come and go. One host (an IPv4 address, an IPv6 /64) varying its source port holds at most
//! [`FaceBounds::max_on_demand_per_host`] of them.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};

use wire::nfd::FacePersistency;
use wire::{Limits, PacketView};

use super::creation::CreationBudget;
use super::{FaceCounters, FaceId, FaceIo, FaceParams, FaceSink, FaceTable};

/// Budgets of a face table for what remotes can make it hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaceBounds {
    /// Most on-demand UDP faces at once (below `max_faces`, so that other faces always have
    /// room; 0: datagrams from unknown remotes are dropped).
    pub max_on_demand_faces: usize,
    /// Most on-demand UDP faces per remote host (an IPv4 address or an IPv6 /64).
    pub max_on_demand_per_host: usize,
    /// Bytes the reassemblers of all UDP faces may hold together.
    pub reassembly_budget_bytes: usize,
    /// Until an on-demand UDP face has received a Data or a Nack (the remote answers what the
    /// router sends it, so its address is real), at most this many bytes are sent to it per
    /// byte received from it; 0: no bound.
    pub unproven_send_ratio: u64,
    /// Bytes per second that all faces whose address is unproven are sent together (a token
    /// bucket of this table's share, 100 ms of burst; see [`super::Face::proven`]); 0: no bound.
    pub unproven_send_bytes_per_s: u64,
    /// How long a face id stays unique: no full id names a new face within this time of its
    /// face closing (longer than any PIT entry lives). A closed face's slot waits this time
    /// over the generations of a slot before it is reused (see [`super::FaceIdSpace`]).
    pub face_id_quarantine_ms: u64,
    /// New on-demand faces (UDP and Ethernet) per second, a token bucket of this table's share
    /// (see the face table's creation budget); 0: no bound. A datagram from a new remote past it is dropped.
    pub on_demand_faces_per_s: u64,
    /// The bucket's size: new on-demand faces made at once after a quiet time (a quarter kept
    /// for hosts that made none within [`super::HOST_RECENT_MS`]).
    pub on_demand_faces_burst: u64,
}

/// [`FaceBounds::unproven_send_bytes_per_s`] unless configured: 32 MiB/s, far above what a
/// consumer fetches before it has answered once, far below what a router sends.
pub const DEFAULT_UNPROVEN_SEND_BYTES_PER_S: u64 = 32 << 20;

impl Default for FaceBounds {
    fn default() -> Self {
        FaceBounds {
            max_on_demand_faces: 2048,
            max_on_demand_per_host: 16,
            reassembly_budget_bytes: 16 << 20,
            unproven_send_ratio: 0,
            unproven_send_bytes_per_s: DEFAULT_UNPROVEN_SEND_BYTES_PER_S,
            face_id_quarantine_ms: 130_000,
            on_demand_faces_per_s: super::DEFAULT_ON_DEMAND_FACES_PER_S,
            on_demand_faces_burst: super::DEFAULT_ON_DEMAND_FACES_BURST,
        }
    }
}

/// What the table's bounds did, since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BoundCounters {
    /// On-demand UDP faces created.
    pub on_demand_created: u64,
    /// On-demand UDP faces evicted to make room (quota full, or a local face needing a place).
    pub on_demand_evicted: u64,
    /// Datagrams from unknown remotes dropped: their host was at its limit of on-demand faces.
    pub on_demand_refused_host: u64,
    /// Datagrams from unknown remotes dropped: not a well-formed NDN packet.
    pub on_demand_refused_malformed: u64,
    /// Datagrams from unknown remotes dropped: the quota is 0, or the table is full of faces
    /// that cannot be evicted.
    pub on_demand_refused_full: u64,
    /// Packets not sent to an on-demand UDP face whose address is unproven: past
    /// [`FaceBounds::unproven_send_ratio`].
    pub unproven_send_dropped: u64,
    /// Packets not sent to a face whose address is unproven: past
    /// [`FaceBounds::unproven_send_bytes_per_s`].
    pub unproven_budget_dropped: u64,
    /// Proof probes sent in place of packets dropped at the budget.
    pub unproven_probes: u64,
    /// On-demand UDP faces that proved their address by acknowledging a TxSequence.
    pub proven_by_ack: u64,
    /// Acks sent for the TxSequences neighbours numbered their packets with (on UDP faces
    /// without reliability).
    pub tx_sequence_acks_sent: u64,
    /// Datagrams from unknown remotes dropped: every free face slot was freed less than
    /// [`super::FaceTable::face_id_reuse_ms`] ago (more than `max_faces` faces closed within
    /// it).
    pub on_demand_refused_ids: u64,
    /// Datagrams from unknown remotes dropped: past the creation budget
    /// ([`FaceBounds::on_demand_faces_per_s`]).
    pub on_demand_refused_budget: u64,
    /// Fragments refused at the reassembly budget (with their packets).
    pub reassembly_refused: u64,
    /// Bytes the reassemblers hold now.
    pub reassembly_bytes: u64,
    /// Face slots given out again before their wait was over, to a face the router needs (a
    /// local connection, a face management creates), every free slot freed too recently.
    pub face_ids_reused_early: u64,
    /// Packets to send dropped: their face id names no open face of the table (a face closed
    /// since: a record of an old generation of a slot never reaches the slot's new face).
    pub sent_to_closed_faces: u64,
    /// What the WebSocket handshakes came to.
    pub ws: super::WsCounters,
    /// What the Ethernet ports dropped.
    pub ether: super::EtherCounters,
    /// NDNLPv2 reliability of the open reliable UDP faces, summed.
    pub reliability: crate::lp_reliability::ReliabilityCounters,
    /// Unix connections refused: their peer's credentials are not in the allow-lists.
    pub unix_peer_refused: u64,
    /// What the connection limits refused or closed.
    pub connections: super::StreamLimitCounters,
}

impl BoundCounters {
    /// The counts of what was refused or evicted (not of what was created or is held).
    pub fn refusals(&self) -> [u64; 11] {
        [
            self.on_demand_refused_budget,
            self.on_demand_evicted,
            self.on_demand_refused_ids,
            self.unproven_budget_dropped,
            self.on_demand_refused_host,
            self.on_demand_refused_malformed,
            self.on_demand_refused_full,
            self.unproven_send_dropped,
            self.reassembly_refused,
            self.face_ids_reused_early,
            self.unix_peer_refused,
        ]
    }
}

/// The quota's state.
#[derive(Debug)]
pub(super) struct OnDemand {
    /// On-demand UDP faces with the receive time they were stamped with, in eviction order:
    /// `queues[0]` the unproven, `queues[1]` those that proved their address (evicted only
    /// when the first is empty). May hold ids of faces that have closed or moved since; they
    /// are skipped, and compacted away.
    queues: [VecDeque<(FaceId, u64)>; 2],
    count: usize,
    per_host: HashMap<u128, u32>,
    /// New faces per second.
    budget: CreationBudget,
    pub(super) counters: BoundCounters,
}

/// The key of a remote's host: its IPv4 address (also when written as IPv4-mapped IPv6), or
/// its IPv6 /64.
pub(super) fn host_key(a: &SocketAddr) -> u128 {
    let v4 = |v4: std::net::Ipv4Addr| u128::from(v4.to_ipv6_mapped());
    match a.ip() {
        IpAddr::V4(ip) => v4(ip),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(ip) => v4(ip),
            None => u128::from(ip) & !u128::from(u64::MAX),
        },
    }
}

/// Whether `bytes` are a whole NDN packet: an Interest, a Data, or an LpPacket carrying one
/// (or a fragment of one).
pub(super) fn well_formed(bytes: &[u8], max_packet_bytes: usize) -> bool {
    let limits = Limits {
        max_packet_bytes,
        verify_parameters_digest: false,
        ..Limits::default()
    };
    match PacketView::decode(bytes, &limits) {
        Ok(PacketView::Interest(_) | PacketView::Data(_)) => true,
        Ok(PacketView::Lp(lp)) if lp.is_fragmented() => lp.fragment().is_some(),
        Ok(PacketView::Lp(lp)) => matches!(
            lp.network_packet(&limits),
            Some(Ok(PacketView::Interest(_) | PacketView::Data(_)))
        ),
        Err(_) => false,
    }
}

/// The eviction queue of on-demand face `f`: 1 for a UDP face that proved its address, 0 for
/// the others, unproven UDP faces and Ethernet faces (which have no proof of address: a
/// flood of forged source addresses on the link competes with the unproven only).
fn eviction_class(f: &super::Face) -> usize {
    match f.io {
        FaceIo::Udp(_) => usize::from(f.proven()),
        _ => 0,
    }
}

/// Whether `bytes` more may be sent to a face with counters `c` under `ratio`: always once the
/// face has received a Data or a Nack.
#[inline]
pub(super) fn unproven_may_send(c: &FaceCounters, bytes: usize, ratio: u64) -> bool {
    ratio == 0
        || c.in_data + c.in_nacks > 0
        || c.out_bytes + bytes as u64 <= c.in_bytes.saturating_mul(ratio)
}

impl OnDemand {
    /// An empty quota with a full creation budget of `bounds`.
    pub(super) fn new(bounds: &FaceBounds) -> OnDemand {
        OnDemand {
            queues: Default::default(),
            count: 0,
            per_host: HashMap::new(),
            budget: CreationBudget::new(bounds.on_demand_faces_per_s, bounds.on_demand_faces_burst),
            counters: BoundCounters::default(),
        }
    }

    /// The creation budget's new rate and burst (a reload).
    pub(super) fn set_creation_bounds(&mut self, per_s: u64, burst: u64) {
        self.budget.set_bounds(per_s, burst);
    }

    /// Face `id`, stamped `now`, proved its address: it moves to the queue of the proven.
    pub(super) fn proven_joined(&mut self, id: FaceId, now: u64) {
        self.queues[1].push_back((id, now));
    }
}

impl FaceTable {
    /// A datagram from `from`, a remote without a face, on listening socket `socket`, which
    /// is a well-formed packet or not ([`well_formed`]): creates its on-demand face within the
    /// bounds, or drops it (counted).
    pub(super) fn on_demand_face(
        &mut self,
        socket: usize,
        from: SocketAddr,
        well_formed: bool,
        sink: &mut impl FaceSink,
    ) -> Option<FaceId> {
        if !well_formed {
            self.on_demand.counters.on_demand_refused_malformed += 1;
            return None;
        }
        if !self.ids.available(sink.now_ms()) {
            self.on_demand.counters.on_demand_refused_ids += 1;
            return None;
        }
        let host = host_key(&from);
        if !self.on_demand_room(host, sink) {
            return None;
        }
        let mtu = self.cfg.udp_mtu;
        let params = FaceParams {
            mtu: Some(mtu),
            ..self.own_params(FacePersistency::OnDemand)
        };
        let id = self.add_udp_face(socket, from, &params, true, sink)?;
        self.joined_quota(id, host, sink.now_ms());
        Some(id)
    }

    /// Room for one more on-demand face of `host` (evicting one if the quota or the table is
    /// full); false, counted, if there is none.
    pub(super) fn on_demand_room(&mut self, host: u128, sink: &mut impl FaceSink) -> bool {
        let bounds = self.cfg.bounds;
        let on_host = self.on_demand.per_host.get(&host).copied().unwrap_or(0);
        if on_host as usize >= bounds.max_on_demand_per_host {
            self.on_demand.counters.on_demand_refused_host += 1;
            return false;
        }
        if !self.on_demand.budget.take(host, sink.now_ms()) {
            self.on_demand.counters.on_demand_refused_budget += 1;
            return false;
        }
        while self.on_demand.count >= bounds.max_on_demand_faces
            || self.faces.len() >= self.cfg.max_faces
        {
            if !self.evict_on_demand(sink) {
                self.on_demand.counters.on_demand_refused_full += 1;
                return false;
            }
        }
        true
    }

    /// On-demand face `id` of `host`, just made, joins the quota.
    pub(super) fn joined_quota(&mut self, id: FaceId, host: u128, now: u64) {
        let od = &mut self.on_demand;
        od.count += 1;
        *od.per_host.entry(host).or_insert(0) += 1;
        od.queues[0].push_back((id, now));
        od.counters.on_demand_created += 1;
    }

    /// Closes the least recently active on-demand UDP face (second-chance order), an unproven
    /// one if there is any; false if there is none.
    pub(super) fn evict_on_demand(&mut self, sink: &mut impl FaceSink) -> bool {
        for class in 0..2 {
            if let Some(id) = self.eviction_victim(class) {
                self.on_demand.counters.on_demand_evicted += 1;
                self.close(id, "evicted: on-demand face quota", sink);
                return true;
            }
        }
        false
    }

    /// The face of queue `class` (0: unproven, 1: proven) to evict, in second-chance order.
    fn eviction_victim(&mut self, class: usize) -> Option<FaceId> {
        let queue = &mut self.on_demand.queues[class];
        // Two passes at most: after one, every live face's stamp is its last receive time.
        for _ in 0..=2 * queue.len() {
            let (id, stamp) = queue.pop_front()?;
            let Some(f) = self.faces.get(&id).filter(|f| f.quota) else {
                continue; // closed or made persistent since
            };
            if eviction_class(f) != class {
                continue; // proved since: it waits in the other queue
            }
            if f.last_rx_ms > stamp {
                queue.push_back((id, f.last_rx_ms));
                continue;
            }
            return Some(id);
        }
        None
    }

    /// Face `id` leaves the quota if management made it other than on-demand.
    pub(super) fn requota(&mut self, id: FaceId) {
        let Some(f) = self.faces.get_mut(&id) else {
            return;
        };
        if !f.quota || f.persistency == FacePersistency::OnDemand {
            return;
        }
        let host = match &f.io {
            FaceIo::Udp(u) => host_key(&u.remote),
            FaceIo::Ether(e) => e.host_key(),
            FaceIo::Stream(_) | FaceIo::Ws(_) => return,
        };
        f.quota = false;
        self.left_quota(host);
    }

    /// A face of the quota, of `host` ([`host_key`], or an Ethernet remote's), leaves it
    /// (closed, or made persistent by management).
    pub(super) fn left_quota(&mut self, host: u128) {
        let od = &mut self.on_demand;
        od.count -= 1;
        if let Some(n) = od.per_host.get_mut(&host) {
            *n -= 1;
            if *n == 0 {
                od.per_host.remove(&host);
            }
        }
        // The queue keeps the id until it is popped; compacted when mostly stale.
        for (class, queue) in od.queues.iter_mut().enumerate() {
            if queue.len() > 2 * od.count + 64 {
                let faces = &self.faces;
                queue.retain(|(id, _)| {
                    faces
                        .get(id)
                        .is_some_and(|f| f.quota && eviction_class(f) == class)
                });
            }
        }
    }

    /// What the bounds did so far.
    pub fn bound_counters(&self) -> BoundCounters {
        BoundCounters {
            unproven_budget_dropped: self.unproven.budget_dropped,
            unproven_probes: self.unproven.probes,
            proven_by_ack: self.unproven.proven_by_ack,
            tx_sequence_acks_sent: self.unproven.acks_sent,
            reassembly_refused: self.reasm_budget.refused(),
            reassembly_bytes: self.reasm_budget.used() as u64,
            face_ids_reused_early: self.ids.reused_early,
            sent_to_closed_faces: self.ids.sent_to_closed,
            ws: self.handshakes.counters,
            ether: self.ether_counters(),
            reliability: self.reliability_totals(),
            connections: self.stream_counters,
            ..self.on_demand.counters
        }
    }

    /// On-demand UDP faces in the quota now.
    pub fn on_demand_faces(&self) -> usize {
        self.on_demand.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_addresses_and_ipv6_slash_64s() {
        let k = |s: &str| host_key(&s.parse().unwrap());
        assert_eq!(k("10.0.0.1:1"), k("10.0.0.1:2"));
        assert_ne!(k("10.0.0.1:1"), k("10.0.0.2:1"));
        assert_eq!(k("10.0.0.1:1"), k("[::ffff:10.0.0.1]:9"));
        assert_eq!(k("[2001:db8::1]:1"), k("[2001:db8::ffff:2]:3"));
        assert_ne!(k("[2001:db8::1]:1"), k("[2001:db8:0:1::1]:1"));
    }

    #[test]
    fn well_formed_packets_only() {
        let i = wire::Interest::new(wire::Name::from_uri("/a").unwrap(), [1; 4]).to_wire();
        assert!(well_formed(&i, 8800));
        assert!(!well_formed(&i[..i.len() - 1], 8800));
        assert!(!well_formed(&[0x06, 0x03, 1, 2, 3], 8800));
        let lp = wire::LpPacket {
            fragment: Some(i.clone()),
            ..wire::LpPacket::default()
        };
        assert!(well_formed(&lp.to_wire(), 8800));
        let idle = wire::LpPacket::default().to_wire();
        assert!(!well_formed(&idle, 8800));
        let garbage_inside = wire::LpPacket {
            fragment: Some(vec![0x05, 0x01, 0]),
            ..wire::LpPacket::default()
        };
        assert!(!well_formed(&garbage_inside.to_wire(), 8800));
    }

    #[test]
    fn unproven_faces_get_ratio_times_what_they_sent() {
        let mut c = FaceCounters {
            in_bytes: 40,
            in_interests: 1,
            ..FaceCounters::default()
        };
        assert!(unproven_may_send(&c, 8800, 0));
        assert!(unproven_may_send(&c, 120, 3));
        assert!(!unproven_may_send(&c, 121, 3));
        c.in_data = 1;
        assert!(unproven_may_send(&c, 8800, 3));
    }
}
