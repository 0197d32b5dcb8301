//! The face table: every face of a forwarder, with its socket, send queue and lifecycle.
//!
//! A [`FaceTable`] owns the listeners (Unix, TCP, UDP), the UDP sockets and the faces: stream
//! faces (Unix or TCP, framed by [`crate::StreamFramer`]) and UDP faces (one remote on a shared
//! socket, with a [`crate::Reassembler`] charged to a byte budget all of them share, and a
//! [`crate::Fragmenter`]). It gives out face ids, creates on-demand faces (an accepted
//! connection, a well-formed datagram from a new remote on a listening UDP socket, within a quota
//! of their own: [`FaceBounds`]), closes idle on-demand UDP faces and faces that send too much
//! garbage (keeping their remotes out for a while), and answers management's requests (create,
//! update, close, list) with [`FaceDesc`]s.
//!
//! The table registers its sockets with the driver's `mio` poll and handles the events of the
//! tokens it gave them ([`FaceTable::on_event`]): it reads a bounded amount per event and
//! hands every received link-layer packet to the driver's [`FaceSink`]. Packets to send go
//! into per-face queues ([`FaceTable::send`]): a byte queue per stream face (one `write` for
//! many packets) and a datagram batch per UDP socket (one `sendmmsg`), fragmenting packets
//! larger than the MTU; [`FaceTable::flush`] sends them. A slow face fills only its own queue.
//!
//! The driver keeps the clock ([`FaceSink::now_ms`]) and decides where packets go; the table
//! never looks inside a packet beyond its link header.

mod congestion;
mod creation;
mod ether;
mod ids;
mod listen;
mod local;
mod mirror;
mod multicast;
mod on_demand;
mod proof;
mod redial;
mod reliable;
mod reuseport;
mod runtime;
mod rx;
mod stream_limits;
mod tx;
mod ws;
mod ws_listen;
mod ws_tls;

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use wire::nfd::FacePersistency;

use crate::lp_frag::{
    Fragmenter, Reassembler, ReassemblyBudget, DEFAULT_REASSEMBLY_CAPACITY,
    DEFAULT_REASSEMBLY_TIMEOUT_MS,
};
use crate::stream::StreamFramer;
use crate::uri::FaceUri;

pub use creation::{
    DEFAULT_ON_DEMAND_FACES_BURST, DEFAULT_ON_DEMAND_FACES_PER_S, HOST_MEMORY, HOST_RECENT_MS,
    RESERVE_DIVISOR,
};
pub use ether::{EtherCounters, FRAMES_PER_TURN, MAX_ETHER_PORTS};
use ids::FaceIds;
pub use ids::{FaceIdSpace, FACE_SLOTS_PER_FACE};
use listen::StreamSock;
pub use listen::{
    bind_unix, bind_unix_with, set_socket_buffer_bytes, set_socket_buffers, Accepted, Listener,
    UNIX_IN_USE, UNIX_NOT_A_SOCKET,
};
pub use local::{peer_cred, peer_groups, LocalPolicy, PeerCred};
use mirror::Mirror;
pub use mirror::UdpLink;
pub use multicast::{NFD_UDP4_GROUP, NFD_UDP6_GROUP, NFD_UDP_MCAST_PORT};
use on_demand::OnDemand;
pub use on_demand::{BoundCounters, FaceBounds};
pub use proof::{PROBE_BYTES, PROOF_WINDOW};
pub use redial::{next_redial_ms, INITIAL_REDIAL_MS, MAX_REDIAL_MS, REDIAL_MULTIPLIER};
pub use reuseport::{bind_tcp6_listener, bind_udp6_group, bind_udp_group, UdpSteering, MAX_GROUP};
pub use runtime::RuntimeLimits;
pub use stream_limits::{StreamLimitCounters, StreamLimits};
use tx::UdpSock;
use ws::{Handshakes, WsIo};
pub use ws::{
    WsCounters, DEFAULT_WS_PORT, MAX_WS_HANDSHAKES, WS_HANDSHAKE_TIMEOUT_MS, WS_PING_INTERVAL_MS,
    WS_PONG_TIMEOUT_MS,
};
pub use ws_listen::bind_ws_listener;
pub use ws_tls::{WsTls, WsTlsError, TLS_BUFFER_BYTES};

/// A face's id.
pub type FaceId = u32;

/// First face id given out (NFD reserves the ids below 256).
pub const FIRST_FACE_ID: FaceId = 256;

/// The one token the table never gives a socket: the driver's own (its waker's).
pub const DRIVER_TOKEN: Token = Token(0);

const LISTENER_BASE: usize = 1;
const UDP_BASE: usize = 64;
/// Pending WebSocket handshakes' tokens (below the faces').
const HANDSHAKE_BASE: usize = 1 << 19;
/// Ethernet ports' tokens (the last of the UDP sockets' range).
const ETHER_BASE: usize = HANDSHAKE_BASE - MAX_ETHER_PORTS;
const FACE_BASE: usize = 1 << 20;
/// Remotes whose on-demand UDP face was closed for sending garbage, kept out this long.
const PENALTY_MS: u64 = 60_000;
/// Most remotes kept out at once.
const PENALTY_CAPACITY: usize = 4096;

/// Settings of a face table.
#[derive(Debug, Clone)]
pub struct FaceConfig {
    /// Most faces.
    pub max_faces: usize,
    /// Stream send queue bound.
    pub send_queue_bytes: usize,
    /// UDP MTU.
    pub udp_mtu: usize,
    /// Idle timeout of on-demand UDP faces.
    pub udp_idle_timeout_ms: u64,
    /// Malformed packets before a face is closed.
    pub malformed_limit: u64,
    /// Largest packet a stream face frames, and a UDP face reassembles.
    pub max_packet_bytes: usize,
    /// What remotes can make the table hold: on-demand faces, reassembly bytes.
    pub bounds: FaceBounds,
    /// How the UDP sockets receive.
    pub udp_rx: UdpRx,
    /// Limits of connection faces: send-queue budget, timeouts, connections per address.
    pub stream: StreamLimits,
    /// Who may connect to the Unix socket; whether loopback TCP is local.
    pub local: LocalPolicy,
    /// CongestionMarkingEnabled of the faces the table makes itself (on-demand and multicast
    /// faces) and the default of those management makes (NFD's
    /// `face_system.general.enable_congestion_marking`).
    pub congestion_marking: bool,
}

/// How a face table's UDP sockets receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UdpRx {
    /// `recvmmsg` batches when the socket is readable ([`crate::UdpBatch`]).
    #[default]
    Recvmmsg,
    /// A multishot `recvmsg` on io_uring into provided buffers ([`crate::udp_ring::UdpRing`]),
    /// with `UDP_GRO` if `gro`; where the kernel refuses io_uring, `recvmmsg`
    /// ([`FaceTable::udp_ring_failure`] tells why).
    Uring {
        /// Turn `UDP_GRO` on: take what a sender segmented as one buffer, and cut it.
        gro: bool,
    },
}

/// The network-layer kind of a packet, for a face's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// An Interest.
    Interest,
    /// A Data.
    Data,
    /// A Nack.
    Nack,
    /// Anything else (not counted by kind).
    Other,
}

/// A face's counters, as NFD reports them, plus drops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceCounters {
    /// Interests received.
    pub in_interests: u64,
    /// Data received.
    pub in_data: u64,
    /// Nacks received.
    pub in_nacks: u64,
    /// Interests sent.
    pub out_interests: u64,
    /// Data sent.
    pub out_data: u64,
    /// Nacks sent.
    pub out_nacks: u64,
    /// Bytes received (link layer).
    pub in_bytes: u64,
    /// Bytes sent (link layer).
    pub out_bytes: u64,
    /// Malformed packets received.
    pub malformed: u64,
    /// Received packets dropped: no free buffer.
    pub drop_no_buffer: u64,
    /// Received packets dropped: the worker's ring was full.
    pub drop_ring_full: u64,
    /// Packets to send dropped: the face's queue was full (or the packet could not be sent).
    pub drop_queue_full: u64,
    /// Packets sent with an NDNLPv2 CongestionMark because the send queue was congested.
    pub congestion_marks: u64,
    /// Not a counter: bytes in the face's send queue when it was described ([`Face::desc`]):
    /// a stream face's queue, plus what the kernel held in its socket at the last flush when
    /// it marks congestion (a datagram face's datagrams go out every turn: 0).
    pub send_queue_bytes: u64,
}

impl FaceCounters {
    /// Counts one received packet of `kind`.
    #[inline]
    pub fn count_in(&mut self, kind: PacketKind) {
        match kind {
            PacketKind::Interest => self.in_interests += 1,
            PacketKind::Data => self.in_data += 1,
            PacketKind::Nack => self.in_nacks += 1,
            PacketKind::Other => {}
        }
    }

    /// Counts one sent packet of `kind` that took `bytes` on the link.
    #[inline]
    pub fn count_out(&mut self, kind: PacketKind, bytes: usize) {
        self.out_bytes += bytes as u64;
        match kind {
            PacketKind::Interest => self.out_interests += 1,
            PacketKind::Data => self.out_data += 1,
            PacketKind::Nack => self.out_nacks += 1,
            PacketKind::Other => {}
        }
    }
}

/// Smallest MTU a datagram face takes (NFD's `MIN_MTU`).
pub const MIN_MTU: usize = 64;

/// Largest MTU a UDP face takes: the largest UDP payload over IPv4.
pub const MAX_UDP_MTU: usize = 65_507;

/// A face's link-service options, as NFD's GenericLinkService keeps them and `faces/create` and
/// `faces/update` set them. LocalFieldsEnabled takes effect (the workers read it), and so do the
/// congestion-marking options (the send queues mark packets; see `congestion`) and
/// LpReliabilityEnabled on UDP faces (NDNLPv2 reliability, [`crate::lp_reliability`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkOptions {
    /// LocalFieldsEnabled (local faces only).
    pub local_fields: bool,
    /// LpReliabilityEnabled (UDP faces; recorded on the others).
    pub lp_reliability: bool,
    /// CongestionMarkingEnabled: mark packets while the send queue is congested.
    pub congestion_marking: bool,
    /// BaseCongestionMarkingInterval, in nanoseconds.
    pub base_congestion_marking_interval_ns: u64,
    /// DefaultCongestionThreshold, in bytes (or half the queue's capacity, if smaller).
    pub default_congestion_threshold_bytes: u64,
}

impl Default for LinkOptions {
    /// NFD's defaults: 100 ms and 65,536 bytes; congestion marking on (the default of NFD's
    /// `face_system.general.enable_congestion_marking`, which its channels apply to faces
    /// whose creation leaves the flag unset); the other flags off.
    fn default() -> Self {
        LinkOptions {
            local_fields: false,
            lp_reliability: false,
            congestion_marking: true,
            base_congestion_marking_interval_ns: 100_000_000,
            default_congestion_threshold_bytes: 65_536,
        }
    }
}

/// How management asks for a face (NFD's FaceParams).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceParams {
    /// Persistency.
    pub persistency: FacePersistency,
    /// MTU of a datagram face (`None`: the configured one).
    pub mtu: Option<usize>,
    /// Link-service options.
    pub options: LinkOptions,
}

/// A change to a face (`faces/update`); `None` leaves a property as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceUpdate {
    /// Persistency.
    pub persistency: Option<FacePersistency>,
    /// MTU (datagram faces only).
    pub mtu: Option<usize>,
    /// LocalFieldsEnabled (can be enabled on local faces only; on others, disabling is a no-op).
    pub local_fields: Option<bool>,
    /// LpReliabilityEnabled.
    pub lp_reliability: Option<bool>,
    /// CongestionMarkingEnabled.
    pub congestion_marking: Option<bool>,
    /// BaseCongestionMarkingInterval, in nanoseconds.
    pub base_congestion_marking_interval_ns: Option<u64>,
    /// DefaultCongestionThreshold, in bytes.
    pub default_congestion_threshold_bytes: Option<u64>,
}

/// Why [`FaceTable::update`] changed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateError {
    /// No such face.
    NotFound,
    /// The face cannot take some of the changes asked (the others are not made either): the
    /// ones it refused, as NFD lists them in its 409 answer.
    Refused(Refusal),
}

/// The changes a face refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refusal {
    /// LocalFieldsEnabled on a face that is not local.
    pub local_fields: bool,
    /// A persistency the face cannot change to (a Unix face keeps its own; an unknown value).
    pub persistency: Option<FacePersistency>,
    /// An MTU the face cannot take (a stream face has none; below [`MIN_MTU`]).
    pub mtu: Option<usize>,
}

/// A face as management sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaceDesc {
    /// Face id.
    pub id: FaceId,
    /// Remote URI.
    pub uri: String,
    /// Local URI.
    pub local_uri: String,
    /// Local scope (may carry `/localhost`).
    pub local: bool,
    /// Persistency.
    pub persistency: FacePersistency,
    /// MTU for datagram faces.
    pub mtu: Option<u64>,
    /// Link-service options (LocalFieldsEnabled and what is recorded beside it).
    pub options: LinkOptions,
    /// Counters.
    pub counters: FaceCounters,
}

/// Why a face could not be created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateError {
    /// A face to that remote exists (NFD answers 409 with it).
    Exists(Box<FaceDesc>),
    /// Anything else, with a reason.
    Failed(String),
}

struct StreamIo {
    sock: StreamSock,
    framer: StreamFramer,
    out: Vec<u8>,
    out_pos: usize,
    want_write: bool,
}

struct UdpIo {
    socket: usize,
    /// The socket's local address.
    local: SocketAddr,
    remote: SocketAddr,
    reasm: Reassembler,
    frag: Fragmenter,
    /// NDNLPv2 reliability, when LpReliabilityEnabled.
    rel: Option<Box<reliable::Reliable>>,
    /// Its proof of address (an on-demand face's is in question until it answers).
    proof: proof::Proof,
}

enum FaceIo {
    Stream(Box<StreamIo>),
    Ws(Box<WsIo>),
    Udp(Box<UdpIo>),
    Ether(Box<ether::EtherIo>),
}

impl FaceIo {
    /// The socket of a connection (stream or WebSocket) face.
    fn source(&mut self) -> Option<&mut dyn mio::event::Source> {
        match self {
            FaceIo::Stream(s) => Some(s.sock.source()),
            FaceIo::Ws(w) => Some(w.ws.get_mut().tcp()),
            FaceIo::Udp(_) | FaceIo::Ether(_) => None,
        }
    }
}

/// One face in the table.
pub struct Face {
    id: FaceId,
    uri: String,
    local_uri: String,
    local: bool,
    persistency: FacePersistency,
    options: LinkOptions,
    counters: FaceCounters,
    last_rx_ms: u64,
    /// When it was made and when it last sent a packet (connection timeouts).
    created_ms: u64,
    last_tx_ms: u64,
    /// The remote address of an accepted TCP or WebSocket connection, counted in its
    /// address's connections.
    peer_ip: Option<std::net::IpAddr>,
    /// Its send-queue congestion marking, and what the kernel held in its socket's send queue
    /// at the last flush.
    marker: congestion::Marker,
    kernel_queue_bytes: usize,
    /// An on-demand UDP face counted in the quota ([`FaceBounds::max_on_demand_faces`]).
    quota: bool,
    io: FaceIo,
}

impl Face {
    /// A face made at `now_ms` with `params`' persistency and options, no traffic yet, not in
    /// the on-demand quota, and no connection's peer address.
    fn new(
        id: FaceId,
        (uri, local_uri, local): (String, String, bool),
        params: &FaceParams,
        now_ms: u64,
        io: FaceIo,
    ) -> Face {
        Face {
            id,
            uri,
            local_uri,
            local,
            persistency: params.persistency,
            options: params.options,
            counters: FaceCounters::default(),
            last_rx_ms: now_ms,
            created_ms: now_ms,
            last_tx_ms: now_ms,
            peer_ip: None,
            marker: congestion::Marker::default(),
            kernel_queue_bytes: 0,
            quota: false,
            io,
        }
    }

    /// Its id.
    #[inline]
    pub fn id(&self) -> FaceId {
        self.id
    }

    /// Its remote URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Local scope?
    #[inline]
    pub fn local(&self) -> bool {
        self.local
    }

    /// LocalFieldsEnabled?
    #[inline]
    pub fn local_fields(&self) -> bool {
        self.options.local_fields
    }

    /// Its persistency.
    pub fn persistency(&self) -> FacePersistency {
        self.persistency
    }

    /// An on-demand UDP face counted in the quota (whose sends [`FaceBounds::unproven_send_ratio`]
    /// bounds until it has received a Data or a Nack).
    pub fn in_quota(&self) -> bool {
        self.quota
    }

    /// A UDP face's remote, its socket's local address and its MTU (`None` for a stream face).
    pub fn udp_link(&self) -> Option<UdpLink> {
        match &self.io {
            FaceIo::Udp(u) => Some(UdpLink {
                remote: u.remote,
                local: u.local,
                mtu: u.frag.mtu(),
                options: self.options,
            }),
            FaceIo::Stream(_) | FaceIo::Ws(_) | FaceIo::Ether(_) => None,
        }
    }

    /// Its counters.
    pub fn counters(&self) -> FaceCounters {
        self.counters
    }

    /// The face as management sees it.
    pub fn desc(&self) -> FaceDesc {
        FaceDesc {
            id: self.id,
            uri: self.uri.clone(),
            local_uri: self.local_uri.clone(),
            local: self.local,
            persistency: self.persistency,
            mtu: match &self.io {
                FaceIo::Udp(u) => Some(u.frag.mtu() as u64),
                FaceIo::Ether(e) => Some(e.frag.mtu() as u64),
                FaceIo::Stream(_) | FaceIo::Ws(_) => None,
            },
            options: self.options,
            counters: FaceCounters {
                send_queue_bytes: match &self.io {
                    FaceIo::Stream(s) => (s.out.len() - s.out_pos + self.kernel_queue_bytes) as u64,
                    FaceIo::Ws(_) | FaceIo::Udp(_) | FaceIo::Ether(_) => 0,
                },
                ..self.counters
            },
        }
    }

    /// The changes of `u` this face refuses (see [`Refusal`]).
    fn refusal(&self, u: &FaceUpdate) -> Option<Refusal> {
        // A Unix or WebSocket face keeps its persistency (as NFD's transports do).
        let fixed = match &self.io {
            FaceIo::Stream(s) => matches!(s.sock, StreamSock::Unix(_)),
            FaceIo::Ws(_) => true,
            FaceIo::Udp(_) | FaceIo::Ether(_) => false,
        };
        let persistency = u.persistency.filter(|&p| {
            p != self.persistency && (fixed || matches!(p, FacePersistency::Other(_)))
        });
        let stream = !matches!(self.io, FaceIo::Udp(_) | FaceIo::Ether(_));
        let r = Refusal {
            local_fields: u.local_fields == Some(true) && !self.local,
            persistency,
            mtu: u.mtu.filter(|&m| stream || m < MIN_MTU),
        };
        (r != Refusal::default()).then_some(r)
    }

    /// Makes the changes of `u` (none of which it refuses).
    fn apply(&mut self, u: &FaceUpdate) {
        let o = &mut self.options;
        if let Some(p) = u.persistency {
            self.persistency = p;
        }
        if self.local {
            o.local_fields = u.local_fields.unwrap_or(o.local_fields);
        }
        o.lp_reliability = u.lp_reliability.unwrap_or(o.lp_reliability);
        o.congestion_marking = u.congestion_marking.unwrap_or(o.congestion_marking);
        o.base_congestion_marking_interval_ns = u
            .base_congestion_marking_interval_ns
            .unwrap_or(o.base_congestion_marking_interval_ns);
        o.default_congestion_threshold_bytes = u
            .default_congestion_threshold_bytes
            .unwrap_or(o.default_congestion_threshold_bytes);
        if let (Some(m), FaceIo::Udp(udp)) = (u.mtu, &mut self.io) {
            let _ = udp.frag.set_mtu(m.clamp(MIN_MTU, MAX_UDP_MTU));
        }
        if let (Some(m), FaceIo::Ether(e)) = (u.mtu, &mut self.io) {
            let _ = e
                .frag
                .set_mtu(m.clamp(MIN_MTU, crate::ether::MAX_ETHER_MTU));
        }
    }
}

/// What a face hands its [`FaceSink`] with each received packet.
pub struct FaceRx<'a> {
    /// The face.
    pub id: FaceId,
    /// The face has local scope.
    pub local: bool,
    /// Its counters (the sink counts what it does with the packet).
    pub counters: &'a mut FaceCounters,
    /// Its reassembler (datagram faces only).
    pub reassembler: Option<&'a mut Reassembler>,
}

/// Something the table noticed that its driver may want to log.
#[derive(Debug)]
pub enum Notice<'a> {
    /// A listener failed to accept a connection.
    AcceptFailed(&'a io::Error),
    /// A connection was refused: the table is full.
    FaceLimit,
    /// A TCP or WebSocket connection was refused: its address holds
    /// [`StreamLimits::max_connections_per_address`] connections already.
    AddressLimit(std::net::IpAddr),
    /// Receiving on a UDP socket failed (ICMP errors surface here; not fatal).
    RecvFailed(&'a io::Error),
    /// Remotes are kept out for sending garbage.
    Penalized {
        /// Remotes kept out now.
        remotes: usize,
        /// Datagrams dropped from them so far.
        dropped: u64,
    },
    /// The bounds refused or evicted something since the last such notice (at most one a
    /// sweep): every counter so far.
    Bounds(Box<BoundCounters>),
    /// A Unix connection was refused (closed at once): its peer's credentials (`None`:
    /// unknown) are not in the allow-lists.
    UnixPeerRefused(Option<PeerCred>),
    /// A Unix connection became a face: its peer's credentials.
    UnixPeer(FaceId, PeerCred),
}

/// The driver of a face table: where received packets and face events go.
///
/// Calls come in order, from inside the table's methods: a face's [`FaceSink::face_up`] comes
/// before any packet it receives.
pub trait FaceSink {
    /// The driver's monotonic clock, in milliseconds.
    fn now_ms(&self) -> u64;
    /// A face was created.
    fn face_up(&mut self, face: &Face);
    /// A face's scope or LocalFieldsEnabled changed.
    fn face_changed(&mut self, face: &Face);
    /// A face was closed, for `why`.
    fn face_down(&mut self, face: &Face, why: &str);
    /// A permanent TCP face lost its connection (`up` false: it is DOWN, redialing) or got it
    /// back (`up` true); see [`FaceTable::dial_tcp`]. By default nothing is done.
    fn face_state(&mut self, face: &Face, up: bool) {
        let _ = (face, up);
    }
    /// One link-layer packet received on a face, to be counted in `rx.counters` (bytes, kind,
    /// drops) as the sink handles it; returns true if it was malformed (and counted), which may
    /// close the face.
    fn receive(&mut self, rx: FaceRx<'_>, bytes: &[u8], now_ms: u64) -> bool;
    /// Something worth logging.
    fn notice(&mut self, notice: Notice<'_>);
    /// A connection a listener accepted, before it becomes a face: given back, it becomes one
    /// of this table's faces; kept, it is the sink's (to hand to another table, which makes it
    /// a face with [`FaceTable::adopt`]). By default every connection stays here.
    fn accepted(&mut self, conn: Accepted) -> Option<Accepted> {
        Some(conn)
    }
}

/// Every face, listener and UDP socket of a forwarder; see the [module docs](self).
pub struct FaceTable {
    registry: Registry,
    cfg: FaceConfig,
    listeners: Vec<Listener>,
    udp: Vec<UdpSock>,
    /// Ethernet ports, one per interface.
    ether: Vec<ether::EtherPort>,
    faces: HashMap<FaceId, Face>,
    udp_faces: HashMap<(usize, SocketAddr), FaceId>,
    ids: FaceIds,
    pending_read: Vec<Token>,
    pending_next: Vec<Token>,
    dirty: Vec<FaceId>,
    penalty: HashMap<SocketAddr, u64>,
    /// Datagrams dropped because their remote is in the penalty box.
    penalized_datagrams: u64,
    /// The on-demand UDP faces' quota.
    on_demand: OnDemand,
    /// Other tables' UDP faces this table sends to on its own socket ([`FaceTable::mirror_udp`]).
    mirrors: HashMap<FaceId, Mirror>,
    /// Shared by every UDP face's reassembler.
    reasm_budget: ReassemblyBudget,
    /// The bound counters at the last [`Notice::Bounds`].
    bounds_noticed: BoundCounters,
    /// Why io_uring could not be set up for a UDP socket (which then receives with
    /// `recvmmsg`, as every later one does).
    ring_failure: Option<io::Error>,
    /// Pending WebSocket handshakes.
    handshakes: Handshakes,
    /// Permanent TCP faces DOWN, redialing.
    down: HashMap<FaceId, redial::Redial>,
    /// UDP faces with NDNLPv2 reliability.
    reliable: Vec<FaceId>,
    /// The driver's clock at the last flush, in milliseconds.
    clock_ms: u64,
    /// The driver's clock at the last flush, in nanoseconds (congestion marking).
    now_ns: u64,
    /// Where a UDP or WebSocket packet is marked before it is queued (allocated once).
    mark_buf: Vec<u8>,
    /// Bytes all stream faces' send queues hold.
    queued_bytes: usize,
    /// What the connection limits refused.
    stream_counters: StreamLimitCounters,
    /// The bound on what faces with an unproven address are sent.
    unproven: proof::Unproven,
    /// Accepted TCP and WebSocket connections per remote address.
    conns_per_ip: HashMap<std::net::IpAddr, usize>,
    /// The address the per-address limit refused last, not noticed yet.
    address_refused: Option<std::net::IpAddr>,
    /// An `accept` failed for want of file descriptors: the listeners are tried again at the
    /// next sweep.
    accept_stalled: bool,
}

impl FaceTable {
    /// An empty table whose sockets register with `registry` (a poll's registry or a clone of
    /// it), with tokens other than [`DRIVER_TOKEN`].
    pub fn new(registry: Registry, cfg: FaceConfig) -> Self {
        Self::with_first_id(registry, cfg, FIRST_FACE_ID)
    }

    /// [`FaceTable::new`] giving out the slots from `first` (at least [`FIRST_FACE_ID`]) to
    /// `first` + [`FACE_SLOTS_PER_FACE`] × `max_faces`, in an id space of its own.
    pub fn with_first_id(registry: Registry, cfg: FaceConfig, first: FaceId) -> Self {
        let span = cfg.max_faces.saturating_mul(FACE_SLOTS_PER_FACE);
        let space = FaceIdSpace::new((first as usize).saturating_add(span));
        Self::with_id_space(registry, cfg, first, space)
    }

    /// [`FaceTable::with_first_id`] in `space`, shared with other tables (one per thread of a
    /// sharded router) that each take a range of slots of their own: a face's slot tells which
    /// table holds it.
    pub fn with_id_space(
        registry: Registry,
        cfg: FaceConfig,
        first: FaceId,
        space: FaceIdSpace,
    ) -> Self {
        let quarantine_ms = cfg.bounds.face_id_quarantine_ms;
        FaceTable {
            registry,
            listeners: Vec::new(),
            udp: Vec::new(),
            ether: Vec::new(),
            faces: HashMap::new(),
            udp_faces: HashMap::new(),
            ids: FaceIds::new(first, cfg.max_faces, space, quarantine_ms),
            pending_read: Vec::new(),
            pending_next: Vec::new(),
            dirty: Vec::new(),
            penalty: HashMap::new(),
            penalized_datagrams: 0,
            on_demand: OnDemand::new(&cfg.bounds),
            mirrors: HashMap::new(),
            reasm_budget: ReassemblyBudget::new(cfg.bounds.reassembly_budget_bytes),
            bounds_noticed: BoundCounters::default(),
            ring_failure: None,
            handshakes: Handshakes::default(),
            down: HashMap::new(),
            reliable: Vec::new(),
            clock_ms: 0,
            now_ns: 0,
            mark_buf: Vec::with_capacity(cfg.max_packet_bytes + crate::link::MARK_OVERHEAD),
            queued_bytes: 0,
            stream_counters: StreamLimitCounters::default(),
            unproven: proof::Unproven::new(
                cfg.bounds.unproven_send_bytes_per_s,
                cfg.max_packet_bytes,
            ),
            conns_per_ip: HashMap::new(),
            address_refused: None,
            accept_stalled: false,
            cfg,
        }
    }

    /// The settings.
    pub fn config(&self) -> &FaceConfig {
        &self.cfg
    }

    /// The face `id`, if it is open.
    pub fn get(&self, id: FaceId) -> Option<&Face> {
        self.faces.get(&id)
    }

    /// Every face, by id.
    pub fn list(&self) -> Vec<FaceDesc> {
        let mut v: Vec<FaceDesc> = self.faces.values().map(Face::desc).collect();
        v.sort_by_key(|d| d.id);
        v
    }

    fn new_face_id(&mut self, now_ms: u64) -> Option<FaceId> {
        if self.faces.len() >= self.cfg.max_faces {
            return None;
        }
        self.ids.take(now_ms)
    }

    /// How its face ids split into slot and generation: per-face state indexed by slot has at
    /// most [`FaceIdSpace::slots`] entries.
    pub fn face_id_space(&self) -> FaceIdSpace {
        self.ids.space()
    }

    /// How long a closed face's slot waits before it names a new face (the quarantine over the
    /// generations: [`FaceIdSpace::reuse_ms`]).
    pub fn face_id_reuse_ms(&self) -> u64 {
        self.ids.reuse_ms()
    }

    /// Adds a connection face (stream or WebSocket, `io`); `uri` `None` names it `fd://<id>`
    /// (NFD shows the fd number in a Unix face's URI; the face id is as unique).
    fn add_stream_face(
        &mut self,
        mut io: FaceIo,
        uri: Option<String>,
        local_uri: String,
        local: bool,
        params: &FaceParams,
        sink: &mut impl FaceSink,
    ) -> Option<FaceId> {
        // A local face takes the place of an on-demand UDP face when the table is full.
        if local && self.faces.len() >= self.cfg.max_faces {
            self.evict_on_demand(sink);
        }
        // An accepted TCP or WebSocket connection counts in its address's connections.
        let peer_ip = (params.persistency == FacePersistency::OnDemand)
            .then(|| io.peer_ip())
            .flatten();
        if peer_ip.is_some_and(|ip| !self.admit_address(ip)) {
            return None;
        }
        let Some(id) = self.new_face_id(sink.now_ms()) else {
            peer_ip.inspect(|&ip| self.release_address(ip));
            return None;
        };
        let token = Token(FACE_BASE + id as usize);
        let registered = (io.source())
            .is_some_and(|s| self.registry.register(s, token, Interest::READABLE).is_ok());
        if !registered {
            peer_ip.inspect(|&ip| self.release_address(ip));
            self.ids.give_back(id, sink.now_ms());
            return None;
        }
        let uri = uri.unwrap_or_else(|| format!("fd://{id}"));
        let mut face = Face::new(id, (uri, local_uri, local), params, sink.now_ms(), io);
        face.peer_ip = peer_ip;
        sink.face_up(&face);
        self.faces.insert(id, face);
        // Data may already be waiting.
        self.pending_next.push(token);
        Some(id)
    }

    /// A datagram face's reassembler, within the table's reassembly budget.
    fn new_reassembler(&self) -> Reassembler {
        Reassembler::with_budget(
            DEFAULT_REASSEMBLY_CAPACITY,
            DEFAULT_REASSEMBLY_TIMEOUT_MS,
            self.cfg.max_packet_bytes,
            self.reasm_budget.clone(),
        )
    }

    /// The I/O of a stream face on `sock`: its framer and send queue.
    fn stream_io(&self, sock: StreamSock) -> FaceIo {
        FaceIo::Stream(Box::new(StreamIo {
            sock,
            framer: StreamFramer::new(self.cfg.max_packet_bytes, crate::stream::DEFAULT_READ_CHUNK),
            out: Vec::new(),
            out_pos: 0,
            want_write: false,
        }))
    }

    /// Adds a UDP face to `remote` on socket `socket`, counted in the on-demand quota or not
    /// (known to the sink when it hears of the face).
    fn add_udp_face(
        &mut self,
        socket: usize,
        remote: SocketAddr,
        params: &FaceParams,
        quota: bool,
        sink: &mut impl FaceSink,
    ) -> Option<FaceId> {
        // The MTU is made valid first: no id is taken for a face that cannot be made.
        let mtu = params
            .mtu
            .unwrap_or(self.cfg.udp_mtu)
            .clamp(MIN_MTU, MAX_UDP_MTU);
        let id = self.new_face_id(sink.now_ms())?;
        let frag = Fragmenter::new(mtu, u64::from(id) << 40).ok()?;
        let io = FaceIo::Udp(Box::new(UdpIo {
            socket,
            local: self.udp[socket].local,
            remote,
            reasm: self.new_reassembler(),
            frag,
            rel: None,
            proof: proof::Proof::new(quota),
        }));
        let uris = (
            FaceUri::udp(remote).to_string(),
            FaceUri::udp(source_toward(self.udp[socket].local, remote)).to_string(),
            false,
        );
        let mut face = Face::new(id, uris, params, sink.now_ms(), io);
        face.quota = quota;
        sink.face_up(&face);
        self.faces.insert(id, face);
        self.udp_faces.insert((socket, remote), id);
        self.sync_reliability(id);
        Some(id)
    }

    /// Closes face `id` for `why`; the face as it was, or `None` if there was none.
    pub fn close(&mut self, id: FaceId, why: &str, sink: &mut impl FaceSink) -> Option<FaceDesc> {
        let mut f = self.faces.remove(&id)?;
        self.forget_redial(id);
        let desc = f.desc();
        match &mut f.io {
            FaceIo::Stream(s) => {
                self.queued_bytes -= s.out.len() - s.out_pos;
                let _ = self.registry.deregister(s.sock.source());
            }
            FaceIo::Ws(w) => {
                ws::close_ws(w);
                let _ = self.registry.deregister(w.ws.get_mut().tcp());
            }
            FaceIo::Udp(u) => {
                self.udp_faces.remove(&(u.socket, u.remote));
                if f.quota {
                    self.left_quota(on_demand::host_key(&u.remote));
                }
            }
            FaceIo::Ether(e) => {
                self.forget_ether(e, id);
                if f.quota {
                    self.left_quota(e.host_key());
                }
            }
        }
        if let Some(ip) = f.peer_ip {
            self.release_address(ip);
        }
        sink.face_down(&f, why);
        self.ids.give_back(id, sink.now_ms());
        Some(desc)
    }

    /// Once a second: close idle on-demand UDP faces, let penalized remotes back in, notice
    /// what the bounds refused.
    pub fn sweep(&mut self, now: u64, sink: &mut impl FaceSink) {
        self.sweep_ws(now, sink);
        self.redial_due(now);
        self.sweep_streams(now, sink);
        let b = self.bound_counters();
        if b.refusals() != self.bounds_noticed.refusals() {
            self.bounds_noticed = b;
            sink.notice(Notice::Bounds(Box::new(b)));
        }
        self.penalty.retain(|_, &mut until| until > now);
        if !self.penalty.is_empty() {
            sink.notice(Notice::Penalized {
                remotes: self.penalty.len(),
                dropped: self.penalized_datagrams,
            });
        }
        let idle: Vec<FaceId> = self
            .faces
            .values()
            .filter(|f| {
                matches!(f.io, FaceIo::Udp(_) | FaceIo::Ether(_))
                    && f.persistency == FacePersistency::OnDemand
                    && now.saturating_sub(f.last_rx_ms) > self.cfg.udp_idle_timeout_ms
            })
            .map(|f| f.id)
            .collect();
        for id in idle {
            self.close(id, "idle", sink);
        }
    }

    /// Changes a face as `faces/update` asks (as NFD does: all the changes or, if the face
    /// refuses any, none); the face after the change.
    pub fn update(
        &mut self,
        id: FaceId,
        u: &FaceUpdate,
        sink: &mut impl FaceSink,
    ) -> Result<FaceDesc, UpdateError> {
        let f = self.faces.get_mut(&id).ok_or(UpdateError::NotFound)?;
        if let Some(r) = f.refusal(u) {
            return Err(UpdateError::Refused(r));
        }
        f.apply(u);
        if self.down.contains_key(&id) && f.persistency != FacePersistency::Permanent {
            // Only a permanent face can be DOWN: NFD fails and closes such a face.
            let changed = f.desc();
            self.close(id, "no longer permanent while down", sink);
            return Ok(changed);
        }
        self.sync_reliability(id);
        // The sink hears of the face as it is now, in or out of the quota.
        self.requota(id);
        let f = &self.faces[&id];
        sink.face_changed(f);
        Ok(f.desc())
    }

    /// Takes over a connected TCP stream as a face (its MTU is ignored: a stream has none). A
    /// face to that remote that exists already is [`CreateError::Exists`], and the stream is
    /// dropped.
    pub fn adopt_tcp(
        &mut self,
        stream: std::net::TcpStream,
        params: &FaceParams,
        sink: &mut impl FaceSink,
    ) -> Result<FaceDesc, CreateError> {
        let failed = |e: io::Error| CreateError::Failed(e.to_string());
        let peer = stream.peer_addr().map_err(failed)?;
        let uri = FaceUri::tcp(peer).to_string();
        if let Some(f) = self.faces.values().find(|f| f.uri == uri) {
            return Err(CreateError::Exists(Box::new(f.desc())));
        }
        let local = stream.local_addr().map_err(failed)?;
        stream.set_nonblocking(true).map_err(failed)?;
        let _ = stream.set_nodelay(true);
        let io = self.stream_io(StreamSock::Tcp(TcpStream::from_std(stream)));
        let local_uri = FaceUri::tcp(local).to_string();
        let loopback = self.cfg.local.tcp_local(peer.ip().is_loopback());
        let id = self
            .add_stream_face(io, Some(uri), local_uri, loopback, params, sink)
            .ok_or_else(|| CreateError::Failed("face limit reached".into()))?;
        Ok(self.faces[&id].desc())
    }

    /// Creates a UDP face to `remote` (MTU default: the configured UDP MTU; kept within
    /// [`MIN_MTU`] and [`MAX_UDP_MTU`]), on the listening socket of the same family, else on a
    /// socket of its own. A face to that remote that exists already, whatever its persistency,
    /// is [`CreateError::Exists`] and is left as it is (NFD 24.07 does the same).
    pub fn create_udp(
        &mut self,
        remote: SocketAddr,
        params: &FaceParams,
        sink: &mut impl FaceSink,
    ) -> Result<FaceDesc, CreateError> {
        let existing = self.udp_faces.iter().find(|((_, r), _)| *r == remote);
        if let Some(f) = existing.and_then(|(_, id)| self.faces.get(id)) {
            return Err(CreateError::Exists(Box::new(f.desc())));
        }
        let socket = match self
            .udp
            .iter()
            .position(|s| s.listener && s.local.is_ipv4() == remote.is_ipv4())
        {
            Some(i) => i,
            None => {
                let any: SocketAddr = if remote.is_ipv4() {
                    "0.0.0.0:0".parse().unwrap_or(remote)
                } else {
                    "[::]:0".parse().unwrap_or(remote)
                };
                let s = UdpSocket::bind(any).map_err(|e| CreateError::Failed(e.to_string()))?;
                self.add_udp_socket(s, false)
                    .map_err(|e| CreateError::Failed(e.to_string()))?
            }
        };
        let id = self
            .add_udp_face(socket, remote, params, false, sink)
            .ok_or_else(|| CreateError::Failed("face limit reached".into()))?;
        Ok(self.faces[&id].desc())
    }
}

/// The local endpoint a unicast UDP face to `remote` shows on a socket bound to `local`: NFD
/// gives each unicast face its own socket, bound to the channel's endpoint and connected to the
/// remote, so its LocalUri is the address the kernel picks as the source toward the remote
/// (`udp4://192.0.2.7:6363`, not the wildcard). Cascade's faces share the channel's socket;
/// when that one is bound to the wildcard, a probe socket connected to the remote (no packet
/// is sent) finds the same source address, once, when the face is made. `local` unchanged
/// when it is a specific address, for a multicast remote (named by its interface), or when
/// the probe fails (no route).
fn source_toward(local: SocketAddr, remote: SocketAddr) -> SocketAddr {
    if !local.ip().is_unspecified() || remote.ip().is_multicast() {
        return local;
    }
    let any = SocketAddr::new(local.ip(), 0);
    let source = UdpSocket::bind(any)
        .and_then(|probe| {
            probe.connect(remote)?;
            probe.local_addr()
        })
        .map(|a| a.ip());
    match source {
        Ok(ip) if !ip.is_unspecified() && ip.is_ipv4() == local.is_ipv4() => {
            SocketAddr::new(ip, local.port())
        }
        _ => local,
    }
}
