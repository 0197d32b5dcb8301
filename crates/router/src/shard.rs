//! The I/O loops of a router and how the rest reaches them; with `[workers] threads =
//! "sharded"`, one loop per worker, each holding a shard of the faces.
//!
//! A sharded router runs N threads, each an I/O loop with its worker inside ([`crate::io`]):
//! its own face table, its own socket of the UDP listener's `SO_REUSEPORT` group (the kernel
//! steers each remote to the socket [`face::table::UdpSteering`] names, so the loop that holds
//! a remote's face is the one that receives from it), and its share of the stream faces (the
//! first loop accepts on the Unix and TCP listeners and hands the connections out in turn).
//! Face ids are global: each loop's table gives out ids from a range of its own
//! ([`FaceOwners`]), so an id tells which loop holds the face, with no table to look it up in.
//!
//! Between the loops there are two kinds of bounded lock-free ring: a worker's input ring (a
//! packet received by one loop whose name, or PIT token, belongs to another loop's worker), and
//! a loop's send ring ([`ShardLink::sends`]: a packet a worker emitted for a stream face
//! another loop holds). A full ring drops the packet and counts it. A packet for a UDP face
//! another loop holds needs no ring: every loop has a socket of the group, with the same local
//! address, so the loop whose worker emitted it sends it itself, through a mirror of the face
//! (`face::table::FaceTable::mirror_udp`) that the owner announces to every loop when it
//! creates the face; the mirrors' counts go back to the owner every
//! [`MIRROR_COUNTS_MS`]. Management reaches the loops through [`IoHandles`]: a command about a
//! face goes to the loop that holds it, a list is gathered from every loop.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_queue::ArrayQueue;
use face::table::{
    Accepted, Face, FaceIdSpace, FaceTable, UdpSteering, FACE_SLOTS_PER_FACE, FIRST_FACE_ID,
};
use face::{CreateError, FaceCounters, FaceDesc, FaceId, FaceParams, FaceUpdate, UpdateError};

use crate::io::{IoCommand, IoWaker};
use crate::pool::Pkt;

/// How long a request to an I/O loop may take.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// How often a loop sends what its mirrors sent to the loops that hold the faces (which then
/// count it in the faces' counters).
pub const MIRROR_COUNTS_MS: u64 = 10;

/// Which loop's table holds a face: each of `shards` tables gives out the slots of a range of
/// its own, `span` slots wide, from [`FIRST_FACE_ID`] up, in one id space (a face id's slot
/// tells its table, whatever its generation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaceOwners {
    span: FaceId,
    shards: usize,
    space: FaceIdSpace,
}

impl FaceOwners {
    /// Ranges for `shards` tables of at most `max_faces` faces each (the slots a table gives
    /// out: [`FACE_SLOTS_PER_FACE`] per face) in `space` (which holds them all).
    pub fn new(shards: usize, max_faces: usize, space: FaceIdSpace) -> Self {
        let span = max_faces.saturating_mul(FACE_SLOTS_PER_FACE).max(1);
        debug_assert!(FIRST_FACE_ID as usize + span * shards.max(1) <= space.slots());
        FaceOwners {
            span: FaceId::try_from(span).unwrap_or(FaceId::MAX),
            shards: shards.max(1),
            space,
        }
    }

    /// Number of tables.
    pub fn shards(&self) -> usize {
        self.shards
    }

    /// The first id table `shard` gives out.
    pub fn first_id(&self, shard: usize) -> FaceId {
        FIRST_FACE_ID.saturating_add(self.span.saturating_mul(shard as FaceId))
    }

    /// The table that holds face `id` (slots below [`FIRST_FACE_ID`], which no table gives
    /// out, and slots past the last range go to the first and last).
    #[inline]
    pub fn owner(&self, id: FaceId) -> usize {
        if self.shards == 1 {
            return 0;
        }
        let slot = self.space.slot(id) as FaceId;
        ((slot.saturating_sub(FIRST_FACE_ID) / self.span) as usize).min(self.shards - 1)
    }
}

/// What one loop of a sharded router counted (published by the loop every turn).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShardStats {
    /// Packets it received for its own worker.
    pub kept_in: u64,
    /// Packets it received and pushed onto another loop's worker's ring.
    pub crossed_in: u64,
    /// Packets its worker emitted for faces it holds.
    pub kept_out: u64,
    /// Packets its worker emitted for faces another loop holds (onto that loop's send ring).
    pub crossed_out: u64,
    /// Of those, dropped because the send ring was full.
    pub send_ring_full: u64,
    /// Packets its worker emitted for UDP faces another loop holds, sent on this loop's own
    /// socket of the group (through a mirror of the face).
    pub direct_out: u64,
}

impl ShardStats {
    /// The share of the packets that crossed a ring between loops, in and out together (0 when
    /// nothing was counted).
    pub fn crossed_share(stats: &[ShardStats]) -> f64 {
        let (mut crossed, mut all) = (0u64, 0u64);
        for s in stats {
            crossed += s.crossed_in + s.crossed_out;
            all += s.kept_in + s.crossed_in + s.kept_out + s.crossed_out + s.direct_out;
        }
        if all == 0 {
            0.0
        } else {
            crossed as f64 / all as f64
        }
    }
}

/// What the loops of a sharded router share about one of them: its send ring and counters.
#[derive(Debug)]
pub struct ShardLink {
    /// Link-layer packets other loops' workers emitted for faces this loop holds.
    pub sends: ArrayQueue<Pkt>,
    waker: Arc<IoWaker>,
    stats: [AtomicU64; 6],
}

impl ShardLink {
    /// The link of the loop woken by `waker`, with a send ring of `capacity` packets.
    pub fn new(capacity: usize, waker: Arc<IoWaker>) -> Self {
        ShardLink {
            sends: ArrayQueue::new(capacity),
            waker,
            stats: Default::default(),
        }
    }

    /// Wakes the loop if it sleeps (after pushing onto its send ring).
    #[inline]
    pub fn wake(&self) {
        use crate::worker::Wake;
        self.waker.wake();
    }

    /// The loop's counters as last published.
    pub fn stats(&self) -> ShardStats {
        let [a, b, c, d, e, f] = self.stats.each_ref().map(|x| x.load(Ordering::Relaxed));
        ShardStats {
            kept_in: a,
            crossed_in: b,
            kept_out: c,
            crossed_out: d,
            send_ring_full: e,
            direct_out: f,
        }
    }

    /// Publishes the loop's counters.
    pub(crate) fn publish(&self, s: &ShardStats) {
        let v = [
            s.kept_in,
            s.crossed_in,
            s.kept_out,
            s.crossed_out,
            s.send_ring_full,
            s.direct_out,
        ];
        for (a, v) in self.stats.iter().zip(v) {
            a.store(v, Ordering::Relaxed);
        }
    }
}

/// One I/O loop as the other threads reach it: its command channel and its waker.
#[derive(Debug, Clone)]
pub struct IoHandle {
    /// Commands.
    pub commands: Sender<IoCommand>,
    /// Wakes it.
    pub waker: Arc<IoWaker>,
}

impl IoHandle {
    /// Sends `c` and wakes the loop; false if the loop is gone.
    fn send(&self, c: IoCommand) -> bool {
        let sent = self.commands.send(c).is_ok();
        self.waker.wake_now();
        sent
    }
}

/// A loop of a sharded router as it reaches the others: the connections its listeners accept
/// go to every loop in turn, itself included; the UDP faces it creates on the group's socket
/// are mirrored by every other loop; what its mirrors sent goes back to the faces' loops.
#[derive(Debug)]
pub(crate) struct Peers {
    me: usize,
    /// Every loop; `None` for this one.
    loops: Vec<Option<IoHandle>>,
    owners: FaceOwners,
    next: usize,
    /// The UDP group's address, when every loop holds a socket of it.
    group: Option<SocketAddr>,
    /// What the mirrors sent, per owner, gathered for the next message.
    counts: Vec<Vec<(FaceId, FaceCounters)>>,
}

impl Peers {
    /// Loop `me` of `loops`, whose tables hold the faces `owners` says; `group` is the UDP
    /// group's address if every loop holds a socket of it.
    pub(crate) fn new(
        me: usize,
        loops: &[IoHandle],
        owners: FaceOwners,
        group: Option<SocketAddr>,
    ) -> Self {
        Peers {
            me,
            loops: (loops.iter().enumerate())
                .map(|(i, h)| (i != me).then(|| h.clone()))
                .collect(),
            owners,
            next: 0,
            group,
            counts: vec![Vec::new(); loops.len()],
        }
    }

    /// Sends `conn` to the next loop in turn; gives it back if that loop is this one (or is
    /// gone).
    pub(crate) fn hand(&mut self, conn: Accepted) -> Option<Accepted> {
        let k = self.next % self.loops.len().max(1);
        self.next = k + 1;
        let Some(h) = self.loops.get(k).and_then(Option::as_ref) else {
            return Some(conn);
        };
        match h.commands.send(IoCommand::Adopt(conn)) {
            Ok(()) => {
                h.waker.wake_now();
                None
            }
            Err(e) => match e.0 {
                IoCommand::Adopt(conn) => Some(conn),
                _ => None,
            },
        }
    }

    /// A face of this loop came or changed: a UDP face on the group's socket is mirrored by
    /// every other loop once its address is proven (until then its owner alone numbers and
    /// bounds what it is sent).
    pub(crate) fn announce(&self, face: &Face) {
        let Some(link) = face.udp_link() else {
            return;
        };
        let bounded = face.in_quota() && !face.proven();
        if self.group != Some(link.local) || bounded {
            return;
        }
        let id = face.id();
        if face.lp_reliability() {
            // Its frames are numbered and kept by its own loop: no other loop sends to it.
            return self.to_others(|| IoCommand::Unmirror(id));
        }
        self.to_others(|| IoCommand::Mirror { id, link });
    }

    /// A face of this loop closed: its mirrors go.
    pub(crate) fn retire(&self, face: &Face) {
        if face.udp_link().is_some_and(|l| self.group == Some(l.local)) {
            let id = face.id();
            self.to_others(|| IoCommand::Unmirror(id));
        }
    }

    fn to_others(&self, make: impl Fn() -> IoCommand) {
        for h in self.loops.iter().flatten() {
            let _ = h.commands.send(make());
            h.waker.wake_now();
        }
    }

    /// The first fragment sequence number of this loop's mirror of face `id`: apart from the
    /// owner's (`id` << 40) and from every other loop's.
    pub(crate) fn mirror_sequence(&self, id: FaceId) -> u64 {
        (u64::from(id) << 40) | ((self.me as u64 + 1) << 32)
    }

    /// Sends what this loop's mirrors sent since the last call to the loops that hold the faces.
    pub(crate) fn send_counts(&mut self, faces: &mut FaceTable) {
        let owners = self.owners;
        let counts = &mut self.counts;
        faces.take_mirror_counts(|id, c| counts[owners.owner(id)].push((id, c)));
        for (h, c) in self.loops.iter().zip(&mut self.counts) {
            if let (Some(h), false) = (h, c.is_empty()) {
                let _ = h.commands.send(IoCommand::Counts(std::mem::take(c)));
            }
        }
    }
}

/// The router's I/O loops as management and the [`crate::Router`] reach them: each command
/// about a face goes to the loop that holds it, lists are gathered from every loop.
#[derive(Debug)]
pub struct IoHandles {
    loops: Vec<IoHandle>,
    owners: FaceOwners,
    udp: UdpSteering,
    next_stream: AtomicUsize,
}

impl IoHandles {
    /// The handles of `loops`, whose tables hold the faces `owners` says, with UDP remotes
    /// steered as `udp` says.
    pub fn new(loops: Vec<IoHandle>, owners: FaceOwners, udp: UdpSteering) -> Self {
        assert!(!loops.is_empty() && loops.len() == owners.shards());
        IoHandles {
            loops,
            owners,
            udp,
            next_stream: AtomicUsize::new(0),
        }
    }

    /// The loops.
    pub fn loops(&self) -> &[IoHandle] {
        &self.loops
    }

    /// Which loop holds face `id`.
    pub fn owner(&self, id: FaceId) -> usize {
        self.owners.owner(id)
    }

    /// Which loop receives the datagrams of UDP remote `remote` (and holds its face).
    pub fn udp_owner(&self, remote: SocketAddr) -> usize {
        self.udp.owner(remote)
    }

    /// Wakes every loop even if it is not asleep yet (stopping).
    pub fn wake_all_now(&self) {
        for l in &self.loops {
            l.waker.wake_now();
        }
    }

    /// Asks loop `i`; the answer, or `None` if it does not come within [`REPLY_TIMEOUT`].
    fn call<T>(&self, i: usize, make: impl FnOnce(Sender<T>) -> IoCommand) -> Option<T> {
        let (tx, rx) = channel();
        if !self.loops[i].send(make(tx)) {
            return None;
        }
        rx.recv_timeout(REPLY_TIMEOUT).ok()
    }

    /// Every face of every loop, by id.
    pub fn faces(&self) -> Vec<FaceDesc> {
        let asked: Vec<Receiver<Vec<FaceDesc>>> = (self.loops.iter())
            .map(|l| {
                let (tx, rx) = channel();
                l.send(IoCommand::List { reply: tx });
                rx
            })
            .collect();
        let mut all: Vec<FaceDesc> = (asked.iter())
            .flat_map(|rx| rx.recv_timeout(REPLY_TIMEOUT).unwrap_or_default())
            .collect();
        all.sort_by_key(|d| d.id);
        all
    }

    /// What the face tables' bounds refused or evicted, summed over the loops that answered
    /// (`reassembly_bytes`: held now, summed too).
    pub fn bounds(&self) -> face::table::BoundCounters {
        let mut all = face::table::BoundCounters::default();
        for i in 0..self.loops.len() {
            if let Some(b) = self.call(i, |reply| IoCommand::Bounds { reply }) {
                all.on_demand_created += b.on_demand_created;
                all.on_demand_evicted += b.on_demand_evicted;
                all.on_demand_refused_host += b.on_demand_refused_host;
                all.on_demand_refused_malformed += b.on_demand_refused_malformed;
                all.on_demand_refused_full += b.on_demand_refused_full;
                all.unproven_send_dropped += b.unproven_send_dropped;
                all.unproven_budget_dropped += b.unproven_budget_dropped;
                all.unproven_probes += b.unproven_probes;
                all.proven_by_ack += b.proven_by_ack;
                all.tx_sequence_acks_sent += b.tx_sequence_acks_sent;
                all.on_demand_refused_ids += b.on_demand_refused_ids;
                all.on_demand_refused_budget += b.on_demand_refused_budget;
                all.reassembly_refused += b.reassembly_refused;
                all.reassembly_bytes += b.reassembly_bytes;
                all.face_ids_reused_early += b.face_ids_reused_early;
                all.sent_to_closed_faces += b.sent_to_closed_faces;
                all.ws += b.ws;
                all.ether += b.ether;
                all.reliability += b.reliability;
                all.unix_peer_refused += b.unix_peer_refused;
                all.connections += b.connections;
            }
        }
        all
    }

    /// Gives every loop its share of `limits` ([`face::table::RuntimeLimits::share`]).
    pub fn set_runtime_limits(&self, limits: face::table::RuntimeLimits) {
        let share = limits.share(self.loops.len());
        for l in &self.loops {
            l.send(IoCommand::Limits(share.clone()));
        }
    }

    /// The listening channels' local URIs (the first loop holds every listener).
    pub fn channels(&self) -> Vec<String> {
        self.call(0, |reply| IoCommand::Channels { reply })
            .unwrap_or_default()
    }

    /// Creates a UDP face to `remote` on the loop its datagrams are steered to; `None` if the
    /// loop did not answer.
    pub fn create_udp(
        &self,
        remote: SocketAddr,
        params: FaceParams,
    ) -> Option<Result<FaceDesc, CreateError>> {
        self.call(self.udp.owner(remote), |reply| IoCommand::CreateUdp {
            remote,
            params,
            reply,
        })
    }

    /// Creates a unicast Ethernet face on the first loop (which holds the Ethernet ports);
    /// `None` if the loop did not answer.
    pub fn create_ether(
        &self,
        ifname: &str,
        remote: face::netif::MacAddr,
        params: FaceParams,
    ) -> Option<Result<FaceDesc, CreateError>> {
        let ifname = ifname.to_string();
        self.call(0, |reply| IoCommand::CreateEther {
            ifname,
            remote,
            params,
            reply,
        })
    }

    /// Makes a connected TCP stream a face, on the loops in turn; `None` if the loop did not
    /// answer.
    pub fn adopt_tcp(
        &self,
        stream: TcpStream,
        params: FaceParams,
    ) -> Option<Result<FaceDesc, CreateError>> {
        let i = self.next_stream.fetch_add(1, Ordering::Relaxed) % self.loops.len();
        self.call(i, |reply| IoCommand::AdoptTcp {
            stream,
            params,
            reply,
        })
    }

    /// Creates a permanent TCP face to `remote` that is DOWN and redials it, on the loops in
    /// turn; `None` if the loop did not answer.
    pub fn dial_tcp(
        &self,
        remote: SocketAddr,
        params: FaceParams,
    ) -> Option<Result<FaceDesc, CreateError>> {
        let i = self.next_stream.fetch_add(1, Ordering::Relaxed) % self.loops.len();
        self.call(i, |reply| IoCommand::DialTcp {
            remote,
            params,
            reply,
        })
    }

    /// Changes face `id` (`None`: its loop did not answer).
    pub fn update(&self, id: FaceId, update: FaceUpdate) -> Option<Result<FaceDesc, UpdateError>> {
        self.call(self.owner(id), |reply| IoCommand::Update {
            id,
            update,
            reply,
        })
    }

    /// Closes face `id`: the face as it was, or `None` if there was none.
    pub fn destroy(&self, id: FaceId) -> Option<FaceDesc> {
        self.call(self.owner(id), |reply| IoCommand::Destroy { id, reply })
            .flatten()
    }

    /// Sends a whole link-layer packet on face `face`.
    pub fn send(&self, face: FaceId, bytes: Vec<u8>) {
        self.loops[self.owner(face)].send(IoCommand::Send { face, bytes });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_owns_its_range_of_slots_in_every_generation() {
        let space = FaceIdSpace::for_tables(3, 100);
        assert_eq!(space.slot_bits(), 10, "256 + 3 x 200 slots");
        let o = FaceOwners::new(3, 100, space);
        assert_eq!(o.first_id(0), FIRST_FACE_ID);
        assert_eq!(o.first_id(1), FIRST_FACE_ID + 200);
        for shard in 0..3 {
            let first = o.first_id(shard) as usize;
            for generation in [0, 1, 77, u32::MAX] {
                assert_eq!(o.owner(space.id(first, generation)), shard);
                assert_eq!(o.owner(space.id(first + 199, generation)), shard);
            }
        }
        assert_eq!(o.owner(3), 0, "reserved ids");
        assert_eq!(o.owner(space.id(1023, 5)), 2, "past the ranges");
        let one = FaceOwners::new(1, 100, FaceIdSpace::for_tables(1, 100));
        assert_eq!(one.owner(FIRST_FACE_ID + 5000), 0);
    }

    #[test]
    fn the_crossed_share_counts_both_directions() {
        let s = [
            ShardStats {
                kept_in: 3,
                crossed_in: 1,
                kept_out: 1,
                crossed_out: 2,
                send_ring_full: 0,
                direct_out: 1,
            },
            ShardStats::default(),
        ];
        assert_eq!(ShardStats::crossed_share(&s), 3.0 / 8.0);
        assert_eq!(ShardStats::crossed_share(&[]), 0.0);
    }
}
