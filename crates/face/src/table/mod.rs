//! The face table: every face of a forwarder, with its socket, send queue and lifecycle.
//!
//! A [`FaceTable`] owns the listeners (Unix, TCP, UDP), the UDP sockets and the faces: stream
//! faces (Unix or TCP, framed by [`crate::StreamFramer`]) and UDP faces (one remote on a shared
//! socket, with a [`crate::Reassembler`] and a [`crate::Fragmenter`]). It gives out face ids,
//! creates on-demand faces (an accepted connection, a datagram from a new remote on a listening
//! UDP socket), closes idle on-demand UDP faces and faces that send too much garbage (keeping
//! their remotes out for a while), and answers management's requests (create, update, close,
//! list) with [`FaceDesc`]s.
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

mod listen;
mod rx;
mod tx;

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use wire::nfd::FacePersistency;

use crate::lp_frag::{
    Fragmenter, Reassembler, DEFAULT_REASSEMBLY_CAPACITY, DEFAULT_REASSEMBLY_TIMEOUT_MS,
};
use crate::stream::StreamFramer;
use crate::uri::FaceUri;

use listen::StreamSock;
pub use listen::{bind_unix, set_socket_buffers, Listener};
use tx::UdpSock;

/// A face's id.
pub type FaceId = u32;

/// First face id given out (NFD reserves the ids below 256).
pub const FIRST_FACE_ID: FaceId = 256;

/// The one token the table never gives a socket: the driver's own (its waker's).
pub const DRIVER_TOKEN: Token = Token(0);

const LISTENER_BASE: usize = 1;
const UDP_BASE: usize = 64;
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
    /// LocalFieldsEnabled.
    pub local_fields: bool,
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
    remote: SocketAddr,
    reasm: Reassembler,
    frag: Fragmenter,
}

enum FaceIo {
    Stream(Box<StreamIo>),
    Udp(Box<UdpIo>),
}

/// One face in the table.
pub struct Face {
    id: FaceId,
    uri: String,
    local_uri: String,
    local: bool,
    persistency: FacePersistency,
    local_fields: bool,
    counters: FaceCounters,
    last_rx_ms: u64,
    io: FaceIo,
}

impl Face {
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
        self.local_fields
    }

    /// Its persistency.
    pub fn persistency(&self) -> FacePersistency {
        self.persistency
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
                FaceIo::Stream(_) => None,
            },
            local_fields: self.local_fields,
            counters: self.counters,
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
    /// Receiving on a UDP socket failed (ICMP errors surface here; not fatal).
    RecvFailed(&'a io::Error),
    /// Remotes are kept out for sending garbage.
    Penalized {
        /// Remotes kept out now.
        remotes: usize,
        /// Datagrams dropped from them so far.
        dropped: u64,
    },
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
    /// One link-layer packet received on a face, to be counted in `rx.counters` (bytes, kind,
    /// drops) as the sink handles it; returns true if it was malformed (and counted), which may
    /// close the face.
    fn receive(&mut self, rx: FaceRx<'_>, bytes: &[u8], now_ms: u64) -> bool;
    /// Something worth logging.
    fn notice(&mut self, notice: Notice<'_>);
}

/// Every face, listener and UDP socket of a forwarder; see the [module docs](self).
pub struct FaceTable {
    registry: Registry,
    cfg: FaceConfig,
    listeners: Vec<Listener>,
    udp: Vec<UdpSock>,
    faces: HashMap<FaceId, Face>,
    udp_faces: HashMap<(usize, SocketAddr), FaceId>,
    next_id: FaceId,
    pending_read: Vec<Token>,
    pending_next: Vec<Token>,
    dirty: Vec<FaceId>,
    penalty: HashMap<SocketAddr, u64>,
    /// Datagrams dropped because their remote is in the penalty box.
    penalized_datagrams: u64,
}

impl FaceTable {
    /// An empty table whose sockets register with `registry` (a poll's registry or a clone of
    /// it), with tokens other than [`DRIVER_TOKEN`].
    pub fn new(registry: Registry, cfg: FaceConfig) -> Self {
        FaceTable {
            registry,
            cfg,
            listeners: Vec::new(),
            udp: Vec::new(),
            faces: HashMap::new(),
            udp_faces: HashMap::new(),
            next_id: FIRST_FACE_ID,
            pending_read: Vec::new(),
            pending_next: Vec::new(),
            dirty: Vec::new(),
            penalty: HashMap::new(),
            penalized_datagrams: 0,
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

    fn new_face_id(&mut self) -> Option<FaceId> {
        if self.faces.len() >= self.cfg.max_faces {
            return None;
        }
        let id = self.next_id;
        self.next_id = self.next_id.checked_add(1)?;
        Some(id)
    }

    /// Adds a stream face; `uri` `None` names it `fd://<id>` (NFD shows the fd number in a Unix
    /// face's URI; the face id is as unique).
    fn add_stream_face(
        &mut self,
        mut sock: StreamSock,
        uri: Option<String>,
        local_uri: String,
        local: bool,
        persistency: FacePersistency,
        sink: &mut impl FaceSink,
    ) -> Option<FaceId> {
        let id = self.new_face_id()?;
        let token = Token(FACE_BASE + id as usize);
        if self
            .registry
            .register(sock.source(), token, Interest::READABLE)
            .is_err()
        {
            return None;
        }
        let face = Face {
            id,
            uri: uri.unwrap_or_else(|| format!("fd://{id}")),
            local_uri,
            local,
            persistency,
            local_fields: false,
            counters: FaceCounters::default(),
            last_rx_ms: sink.now_ms(),
            io: FaceIo::Stream(Box::new(StreamIo {
                sock,
                framer: StreamFramer::new(self.cfg.max_packet_bytes, 16 * 1024),
                out: Vec::new(),
                out_pos: 0,
                want_write: false,
            })),
        };
        sink.face_up(&face);
        self.faces.insert(id, face);
        // Data may already be waiting.
        self.pending_next.push(token);
        Some(id)
    }

    fn add_udp_face(
        &mut self,
        socket: usize,
        remote: SocketAddr,
        persistency: FacePersistency,
        mtu: usize,
        sink: &mut impl FaceSink,
    ) -> Option<FaceId> {
        let id = self.new_face_id()?;
        let frag = Fragmenter::new(mtu, u64::from(id) << 40).ok()?;
        let face = Face {
            id,
            uri: FaceUri::udp(remote).to_string(),
            local_uri: FaceUri::udp(self.udp[socket].local).to_string(),
            local: false,
            persistency,
            local_fields: false,
            counters: FaceCounters::default(),
            last_rx_ms: sink.now_ms(),
            io: FaceIo::Udp(Box::new(UdpIo {
                socket,
                remote,
                reasm: Reassembler::new(
                    DEFAULT_REASSEMBLY_CAPACITY,
                    DEFAULT_REASSEMBLY_TIMEOUT_MS,
                    self.cfg.max_packet_bytes,
                ),
                frag,
            })),
        };
        sink.face_up(&face);
        self.faces.insert(id, face);
        self.udp_faces.insert((socket, remote), id);
        Some(id)
    }

    /// Closes face `id` for `why`; the face as it was, or `None` if there was none.
    pub fn close(&mut self, id: FaceId, why: &str, sink: &mut impl FaceSink) -> Option<FaceDesc> {
        let mut f = self.faces.remove(&id)?;
        let desc = f.desc();
        match &mut f.io {
            FaceIo::Stream(s) => {
                let _ = self.registry.deregister(s.sock.source());
            }
            FaceIo::Udp(u) => {
                self.udp_faces.remove(&(u.socket, u.remote));
            }
        }
        sink.face_down(&f, why);
        Some(desc)
    }

    /// Once a second: close idle on-demand UDP faces, let penalized remotes back in.
    pub fn sweep(&mut self, now: u64, sink: &mut impl FaceSink) {
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
                matches!(f.io, FaceIo::Udp(_))
                    && f.persistency == FacePersistency::OnDemand
                    && now.saturating_sub(f.last_rx_ms) > self.cfg.udp_idle_timeout_ms
            })
            .map(|f| f.id)
            .collect();
        for id in idle {
            self.close(id, "idle", sink);
        }
    }

    /// Changes a face's persistency or LocalFieldsEnabled: the face after the change, or an
    /// error text (`None`: no such face).
    pub fn update(
        &mut self,
        id: FaceId,
        persistency: Option<FacePersistency>,
        local_fields: Option<bool>,
        sink: &mut impl FaceSink,
    ) -> Result<FaceDesc, Option<String>> {
        match self.faces.get_mut(&id) {
            None => Err(None),
            Some(f) if local_fields == Some(true) && !f.local => Err(Some(
                "LocalFieldsEnabled cannot be set on a non-local face".to_string(),
            )),
            Some(f) => {
                if let Some(p) = persistency {
                    f.persistency = p;
                }
                if let Some(l) = local_fields {
                    f.local_fields = l;
                }
                sink.face_changed(f);
                Ok(f.desc())
            }
        }
    }

    /// Takes over a connected TCP stream as a face.
    pub fn adopt_tcp(
        &mut self,
        stream: std::net::TcpStream,
        persistency: FacePersistency,
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
        let s = StreamSock::Tcp(TcpStream::from_std(stream));
        let local_uri = FaceUri::tcp(local).to_string();
        let loopback = peer.ip().is_loopback();
        let id = self
            .add_stream_face(s, Some(uri), local_uri, loopback, persistency, sink)
            .ok_or_else(|| CreateError::Failed("face limit reached".into()))?;
        Ok(self.faces[&id].desc())
    }

    /// Creates a UDP face to `remote` (MTU default: the configured UDP MTU), on the listening
    /// socket of the same family, else on a socket of its own.
    pub fn create_udp(
        &mut self,
        remote: SocketAddr,
        persistency: FacePersistency,
        mtu: Option<usize>,
        sink: &mut impl FaceSink,
    ) -> Result<FaceDesc, CreateError> {
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
        if let Some(&id) = self.udp_faces.get(&(socket, remote)) {
            let f = self
                .faces
                .get_mut(&id)
                .ok_or_else(|| CreateError::Failed("lost".into()))?;
            // NFD upgrades an on-demand face to the requested persistency.
            if f.persistency == FacePersistency::OnDemand {
                f.persistency = persistency;
                return Ok(f.desc());
            }
            return Err(CreateError::Exists(Box::new(f.desc())));
        }
        let mtu = mtu.unwrap_or(self.cfg.udp_mtu).clamp(128, 65_507);
        let id = self
            .add_udp_face(socket, remote, persistency, mtu, sink)
            .ok_or_else(|| CreateError::Failed("face limit reached".into()))?;
        Ok(self.faces[&id].desc())
    }
}
