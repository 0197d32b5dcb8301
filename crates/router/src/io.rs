//! The I/O thread: every socket, every face, the per-face send queues.
//!
//! One `mio` poll loop owns the listeners (Unix, TCP, UDP) and the faces. Received bytes are
//! framed (streams) or taken a datagram at a time (UDP, read with `recvmmsg`), reassembled when
//! fragmented, classified by [`Dispatcher`] (parsed only as far as the name and its hash) and
//! copied into a pool buffer on the ring of the worker that owns the name. Worker outputs come
//! back on one ring per worker and go into per-face queues: a byte queue per stream face (one
//! `write` for many packets) and a datagram batch per UDP socket (one `sendmmsg`), fragmenting
//! packets larger than the MTU. A slow face fills only its own queue.
//!
//! Reads are bounded per event (a busy face is revisited on the next turn instead of starving
//! the others), queues are bounded, and a face that sends malformed packets is counted and,
//! past a limit, closed.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::fw::pipeline::FaceInfo;
use engine::table::pit_cs::FaceId;
use face::link::{encode_link, link_len, split_link, Split};
use face::lp_frag::{Fragmenter, LpHeaders, PitToken, Reassembled, Reassembler};
use face::stream::StreamFramer;
use face::udp::UdpBatch;
use mio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use wire::mgmt::FacePersistency;
use wire::{Limits, LpPacketView};

use crate::dispatch::{Dispatcher, Route};
use crate::pool::{Pkt, PktKind, Pool};
use crate::worker::{Control, Wake, WorkerLink};

/// First face id given out (NFD reserves the ids below 256).
pub const FIRST_FACE_ID: FaceId = 256;

const WAKER: Token = Token(0);
const LISTENER_BASE: usize = 1;
const UDP_BASE: usize = 64;
const FACE_BASE: usize = 1 << 20;
/// Reads from one socket per turn before it goes to the back of the line.
const READS_PER_TURN: usize = 8;
/// Pending-read entries served per turn (each bounded by [`READS_PER_TURN`]).
const MAX_PENDING_PER_TURN: usize = 1024;
/// Mgmt commands handled per turn.
const COMMANDS_PER_TURN: usize = 64;
/// Connections accepted per listener event.
const ACCEPTS_PER_TURN: usize = 64;
/// Remotes whose on-demand UDP face was closed for sending garbage, kept out this long.
const PENALTY_MS: u64 = 60_000;
/// Most remotes kept out at once.
const PENALTY_CAPACITY: usize = 4096;
/// Socket buffer size asked of the kernel for UDP sockets.
const UDP_SOCKET_BUFFER_BYTES: libc::c_int = 8 << 20;

/// The I/O thread's wake-up handle.
#[derive(Debug)]
pub struct IoWaker {
    waker: Waker,
    sleeping: AtomicBool,
}

impl Wake for IoWaker {
    #[inline]
    fn wake(&self) {
        if self.sleeping.swap(false, Ordering::SeqCst) {
            let _ = self.waker.wake();
        }
    }
}

impl IoWaker {
    /// Wakes the thread even if it is not polling yet (control plane).
    pub fn wake_now(&self) {
        self.sleeping.store(false, Ordering::SeqCst);
        let _ = self.waker.wake();
    }
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

/// Requests to the I/O thread from management and start-up.
#[derive(Debug)]
pub enum IoCommand {
    /// Send these bytes (a whole link-layer packet) on a face.
    Send {
        /// Face.
        face: FaceId,
        /// Bytes.
        bytes: Vec<u8>,
    },
    /// Create a UDP face to `remote`.
    CreateUdp {
        /// Remote endpoint.
        remote: SocketAddr,
        /// Persistency.
        persistency: FacePersistency,
        /// MTU (default: the configured UDP MTU).
        mtu: Option<usize>,
        /// Reply.
        reply: Sender<Result<FaceDesc, CreateError>>,
    },
    /// Take over a connected TCP stream as a face.
    AdoptTcp {
        /// The stream.
        stream: std::net::TcpStream,
        /// Persistency.
        persistency: FacePersistency,
        /// Reply.
        reply: Sender<Result<FaceDesc, CreateError>>,
    },
    /// Close a face.
    Destroy {
        /// Face.
        id: FaceId,
        /// Reply: the face as it was, or `None` if there was none.
        reply: Sender<Option<FaceDesc>>,
    },
    /// Change a face's persistency or LocalFieldsEnabled.
    Update {
        /// Face.
        id: FaceId,
        /// New persistency.
        persistency: Option<FacePersistency>,
        /// New LocalFieldsEnabled.
        local_fields: Option<bool>,
        /// Reply: the face after the change, or an error text (`None`: no such face).
        reply: Sender<Result<FaceDesc, Option<String>>>,
    },
    /// List every face.
    List {
        /// Reply.
        reply: Sender<Vec<FaceDesc>>,
    },
}

/// What the I/O thread tells management.
#[derive(Debug)]
pub enum MgmtInput {
    /// A management Interest (the received bytes, possibly an LpPacket).
    Interest {
        /// Incoming face.
        face: FaceId,
        /// The face is local.
        local: bool,
        /// Bytes.
        bytes: Vec<u8>,
    },
    /// A face closed: its routes go.
    FaceDown(FaceId),
}

/// Settings of the I/O thread.
#[derive(Debug, Clone)]
pub struct IoConfig {
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
    /// Packet limits.
    pub limits: Limits,
}

/// The listeners actually bound (with ephemeral ports resolved).
#[derive(Debug, Clone, Default)]
pub struct Bound {
    /// Unix socket path.
    pub unix: Option<PathBuf>,
    /// TCP address.
    pub tcp: Option<SocketAddr>,
    /// UDP address.
    pub udp: Option<SocketAddr>,
}

enum StreamSock {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl StreamSock {
    fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            StreamSock::Unix(s) => s,
            StreamSock::Tcp(s) => s,
        }
    }
}

impl Read for StreamSock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            StreamSock::Unix(s) => s.read(buf),
            StreamSock::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for StreamSock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            StreamSock::Unix(s) => s.write(buf),
            StreamSock::Tcp(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
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

struct Face {
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
    fn desc(&self) -> FaceDesc {
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

    fn count_out(&mut self, kind: PktKind, bytes: usize) {
        let c = &mut self.counters;
        c.out_bytes += bytes as u64;
        match kind {
            PktKind::Interest => c.out_interests += 1,
            PktKind::Data => c.out_data += 1,
            PktKind::Nack => c.out_nacks += 1,
            PktKind::Other | PktKind::Admit => {}
        }
    }
}

enum Listener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener, SocketAddr),
}

struct UdpSock {
    batch: UdpBatch,
    local: SocketAddr,
    /// Accepts datagrams from unknown remotes (creates on-demand faces).
    listener: bool,
    stage: Vec<u8>,
    staged: Vec<(u32, u32, SocketAddr)>,
    max_stage: usize,
    drops: u64,
}

fn udp_uri(a: &SocketAddr) -> String {
    match a {
        SocketAddr::V4(_) => format!("udp4://{a}"),
        SocketAddr::V6(_) => format!("udp6://{a}"),
    }
}

fn tcp_uri(a: &SocketAddr) -> String {
    match a {
        SocketAddr::V4(_) => format!("tcp4://{a}"),
        SocketAddr::V6(_) => format!("tcp6://{a}"),
    }
}

fn set_socket_buffers(s: &UdpSocket) {
    for opt in [libc::SO_RCVBUF, libc::SO_SNDBUF] {
        let v: libc::c_int = UDP_SOCKET_BUFFER_BYTES;
        // SAFETY: a valid fd, a c_int option value of the right size.
        unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

/// Binds the Unix listener at `path`: creates the directory, replaces a stale socket file (one
/// nobody answers on), refuses to steal a live one.
fn bind_unix(path: &PathBuf) -> io::Result<UnixListener> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)?;
        }
    }
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                "another forwarder is listening there",
            ));
        }
        std::fs::remove_file(path)?;
    }
    UnixListener::bind(path)
}

/// The I/O thread.
pub struct Io {
    poll: Poll,
    waker: Arc<IoWaker>,
    cfg: IoConfig,
    rx: Rx,
    worker_ctl: Vec<Sender<Control>>,
    commands: Receiver<IoCommand>,
    stop: Arc<AtomicBool>,
    start: Instant,
    listeners: Vec<Listener>,
    udp: Vec<UdpSock>,
    faces: HashMap<FaceId, Face>,
    udp_faces: HashMap<(usize, SocketAddr), FaceId>,
    next_id: FaceId,
    pending_read: Vec<Token>,
    pending_next: Vec<Token>,
    dirty: Vec<FaceId>,
    last_sweep_ms: u64,
    bound: Bound,
    penalty: HashMap<SocketAddr, u64>,
    /// Datagrams dropped because their remote is in the penalty box.
    penalized_datagrams: u64,
}

/// What the I/O thread needs from the router.
pub struct IoParts {
    /// Settings.
    pub cfg: IoConfig,
    /// Classifier.
    pub dispatcher: Dispatcher,
    /// Buffers.
    pub pool: Arc<Pool>,
    /// Worker rings.
    pub workers: Vec<Arc<WorkerLink>>,
    /// Worker control channels.
    pub worker_ctl: Vec<Sender<Control>>,
    /// Management input.
    pub mgmt: Sender<MgmtInput>,
    /// Commands from management.
    pub commands: Receiver<IoCommand>,
    /// Stop flag.
    pub stop: Arc<AtomicBool>,
    /// The router's time origin.
    pub start: Instant,
}

impl Io {
    /// Creates the poll and binds the listeners (empty string = off). Errors name what failed.
    pub fn new(parts: IoParts, unix: &str, tcp: &str, udp: &str) -> Result<Io, String> {
        let poll = Poll::new().map_err(|e| format!("cannot create poll: {e}"))?;
        let waker = Waker::new(poll.registry(), WAKER).map_err(|e| format!("waker: {e}"))?;
        let n_workers = parts.workers.len();
        let mut io = Io {
            poll,
            waker: Arc::new(IoWaker {
                waker,
                sleeping: AtomicBool::new(false),
            }),
            cfg: parts.cfg,
            rx: Rx {
                dispatcher: parts.dispatcher,
                pool: parts.pool,
                workers: parts.workers,
                mgmt: parts.mgmt,
                wake: vec![false; n_workers],
            },
            worker_ctl: parts.worker_ctl,
            commands: parts.commands,
            stop: parts.stop,
            start: parts.start,
            listeners: Vec::new(),
            udp: Vec::new(),
            faces: HashMap::new(),
            udp_faces: HashMap::new(),
            next_id: FIRST_FACE_ID,
            pending_read: Vec::new(),
            pending_next: Vec::new(),
            dirty: Vec::new(),
            last_sweep_ms: 0,
            bound: Bound::default(),
            penalty: HashMap::new(),
            penalized_datagrams: 0,
        };
        if !unix.is_empty() {
            let path = PathBuf::from(unix);
            let l = bind_unix(&path).map_err(|e| {
                format!(
                    "cannot listen on Unix socket {}: {e} (choose another path with --unix PATH, or --unix '' to disable)",
                    path.display()
                )
            })?;
            io.bound.unix = Some(path.clone());
            io.add_listener(Listener::Unix(l, path))?;
        }
        if !tcp.is_empty() {
            let addr: SocketAddr = tcp
                .parse()
                .map_err(|_| format!("bad TCP address {tcp:?} (--tcp ADDR)"))?;
            let l = TcpListener::bind(addr)
                .map_err(|e| format!("cannot listen on TCP {addr}: {e} (change it with --tcp ADDR, or --tcp '' to disable)"))?;
            let local = l.local_addr().map_err(|e| e.to_string())?;
            io.bound.tcp = Some(local);
            io.add_listener(Listener::Tcp(l, local))?;
        }
        if !udp.is_empty() {
            let addr: SocketAddr = udp
                .parse()
                .map_err(|_| format!("bad UDP address {udp:?} (--udp ADDR)"))?;
            let s = UdpSocket::bind(addr).map_err(|e| {
                format!("cannot bind UDP {addr}: {e} (change it with --udp ADDR, or --udp '' to disable)")
            })?;
            let local = s.local_addr().map_err(|e| e.to_string())?;
            io.bound.udp = Some(local);
            io.add_udp_socket(s, true)
                .map_err(|e| format!("UDP {addr}: {e}"))?;
        }
        Ok(io)
    }

    /// The wake handle workers and management use.
    pub fn waker(&self) -> Arc<IoWaker> {
        self.waker.clone()
    }

    /// What was bound.
    pub fn bound(&self) -> Bound {
        self.bound.clone()
    }

    fn add_listener(&mut self, mut l: Listener) -> Result<(), String> {
        let token = Token(LISTENER_BASE + self.listeners.len());
        let r = match &mut l {
            Listener::Unix(u, _) => self.poll.registry().register(u, token, Interest::READABLE),
            Listener::Tcp(t, _) => self.poll.registry().register(t, token, Interest::READABLE),
        };
        r.map_err(|e| format!("register listener: {e}"))?;
        self.listeners.push(l);
        Ok(())
    }

    fn add_udp_socket(&mut self, s: UdpSocket, listener: bool) -> io::Result<usize> {
        if self.udp.len() >= FACE_BASE - UDP_BASE {
            return Err(io::Error::other("too many UDP sockets"));
        }
        s.set_nonblocking(true)?;
        set_socket_buffers(&s);
        let local = s.local_addr()?;
        let idx = self.udp.len();
        let fd = s.as_raw_fd();
        self.poll.registry().register(
            &mut SourceFd(&fd),
            Token(UDP_BASE + idx),
            Interest::READABLE,
        )?;
        let mtu = self.cfg.udp_mtu;
        let batch = UdpBatch::with_capacity(s, 64, 9000)?;
        self.udp.push(UdpSock {
            batch,
            local,
            listener,
            stage: Vec::with_capacity(64 * mtu),
            staged: Vec::with_capacity(64),
            max_stage: 64,
            drops: 0,
        });
        Ok(idx)
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn new_face_id(&mut self) -> Option<FaceId> {
        if self.faces.len() >= self.cfg.max_faces {
            return None;
        }
        let id = self.next_id;
        self.next_id = self.next_id.checked_add(1)?;
        Some(id)
    }

    fn announce(&self, f: &Face) {
        for c in &self.worker_ctl {
            let _ = c.send(Control::Face {
                id: f.id,
                info: FaceInfo {
                    local: f.local,
                    multi_access: false,
                },
                local_fields: f.local_fields,
            });
        }
        for w in &self.rx.workers {
            w.wake();
        }
    }

    fn add_stream_face(
        &mut self,
        mut sock: StreamSock,
        uri: String,
        local_uri: String,
        local: bool,
        persistency: FacePersistency,
    ) -> Option<FaceId> {
        let id = self.new_face_id()?;
        let token = Token(FACE_BASE + id as usize);
        if self
            .poll
            .registry()
            .register(sock.source(), token, Interest::READABLE)
            .is_err()
        {
            return None;
        }
        let face = Face {
            id,
            uri,
            local_uri,
            local,
            persistency,
            local_fields: false,
            counters: FaceCounters::default(),
            last_rx_ms: self.now_ms(),
            io: FaceIo::Stream(Box::new(StreamIo {
                sock,
                framer: StreamFramer::new(self.cfg.limits.max_packet_bytes, 16 * 1024),
                out: Vec::new(),
                out_pos: 0,
                want_write: false,
            })),
        };
        self.announce(&face);
        tracing::debug!(face = id, uri = %face.uri, "face up");
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
    ) -> Option<FaceId> {
        let id = self.new_face_id()?;
        let frag = Fragmenter::new(mtu, u64::from(id) << 40).ok()?;
        let face = Face {
            id,
            uri: udp_uri(&remote),
            local_uri: udp_uri(&self.udp[socket].local),
            local: false,
            persistency,
            local_fields: false,
            counters: FaceCounters::default(),
            last_rx_ms: self.now_ms(),
            io: FaceIo::Udp(Box::new(UdpIo {
                socket,
                remote,
                reasm: Reassembler::new(
                    face::lp_frag::DEFAULT_REASSEMBLY_CAPACITY,
                    face::lp_frag::DEFAULT_REASSEMBLY_TIMEOUT_MS,
                    self.cfg.limits.max_packet_bytes,
                ),
                frag,
            })),
        };
        self.announce(&face);
        tracing::debug!(face = id, uri = %face.uri, "face up");
        self.faces.insert(id, face);
        self.udp_faces.insert((socket, remote), id);
        Some(id)
    }

    fn close_face(&mut self, id: FaceId, why: &str) -> Option<FaceDesc> {
        let mut f = self.faces.remove(&id)?;
        let desc = f.desc();
        match &mut f.io {
            FaceIo::Stream(s) => {
                let _ = self.poll.registry().deregister(s.sock.source());
            }
            FaceIo::Udp(u) => {
                self.udp_faces.remove(&(u.socket, u.remote));
            }
        }
        tracing::debug!(face = id, uri = %f.uri, why, "face down");
        let _ = self.rx.mgmt.send(MgmtInput::FaceDown(id));
        Some(desc)
    }

    /// Runs the loop until the stop flag is set.
    pub fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        while !self.stop.load(Ordering::Relaxed) {
            let mut busy = self.drain_outputs();
            busy |= self.handle_commands();
            self.flush();
            let now = self.now_ms();
            if now >= self.last_sweep_ms + 1000 {
                self.last_sweep_ms = now;
                self.sweep(now);
            }
            std::mem::swap(&mut self.pending_read, &mut self.pending_next);
            self.pending_next.clear();
            let timeout = if busy || !self.pending_read.is_empty() {
                Some(Duration::ZERO)
            } else {
                self.waker.sleeping.store(true, Ordering::SeqCst);
                let outputs = self.rx.workers.iter().any(|w| !w.output.is_empty());
                if outputs {
                    self.waker.sleeping.store(false, Ordering::SeqCst);
                    Some(Duration::ZERO)
                } else {
                    Some(Duration::from_millis(100))
                }
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    tracing::error!("poll: {e}");
                    break;
                }
            }
            self.waker.sleeping.store(false, Ordering::SeqCst);
            for ev in events.iter() {
                self.on_event(
                    ev.token(),
                    ev.is_readable() || ev.is_read_closed(),
                    ev.is_writable(),
                );
            }
            let pending = std::mem::take(&mut self.pending_read);
            for &t in pending.iter().take(MAX_PENDING_PER_TURN) {
                self.on_event(t, true, false);
            }
            // Whatever was not served this turn stays in line.
            self.pending_next
                .extend(pending.iter().skip(MAX_PENDING_PER_TURN).copied());
            self.pending_read = pending;
            self.wake_workers();
        }
        // Clean shutdown: close the faces and remove the Unix socket file.
        for l in &self.listeners {
            if let Listener::Unix(_, p) = l {
                let _ = std::fs::remove_file(p);
            }
        }
    }

    fn wake_workers(&mut self) {
        let rx = &mut self.rx;
        for (flag, link) in rx.wake.iter_mut().zip(&rx.workers) {
            if std::mem::take(flag) {
                link.wake();
            }
        }
    }

    fn on_event(&mut self, token: Token, readable: bool, writable: bool) {
        match token.0 {
            0 => {}
            t if (LISTENER_BASE..UDP_BASE).contains(&t) => self.accept(t - LISTENER_BASE),
            t if (UDP_BASE..FACE_BASE).contains(&t) => {
                if readable {
                    self.read_udp(t - UDP_BASE);
                }
            }
            t => {
                let id = (t - FACE_BASE) as FaceId;
                if writable {
                    self.flush_stream(id);
                }
                if readable {
                    self.read_stream(id);
                }
            }
        }
    }

    fn accept(&mut self, idx: usize) {
        for _ in 0..ACCEPTS_PER_TURN {
            let (sock, uri, local_uri, local) = match &self.listeners[idx] {
                Listener::Unix(l, path) => match l.accept() {
                    Ok((s, _)) => (
                        StreamSock::Unix(s),
                        "fd://".to_string(),
                        format!("unix://{}", path.display()),
                        true,
                    ),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) => {
                        tracing::warn!("accept: {e}");
                        return;
                    }
                },
                Listener::Tcp(l, addr) => match l.accept() {
                    Ok((s, peer)) => {
                        let _ = s.set_nodelay(true);
                        (
                            StreamSock::Tcp(s),
                            tcp_uri(&peer),
                            tcp_uri(addr),
                            peer.ip().is_loopback(),
                        )
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) => {
                        tracing::warn!("accept: {e}");
                        return;
                    }
                },
            };
            let id = self.add_stream_face(sock, uri, local_uri, local, FacePersistency::OnDemand);
            match id {
                // NFD shows the fd number in a Unix face's URI; the face id is as unique.
                Some(id) => {
                    if let Some(f) = self.faces.get_mut(&id) {
                        if f.uri == "fd://" {
                            f.uri = format!("fd://{id}");
                        }
                    }
                }
                None => tracing::warn!("face limit reached: connection refused"),
            }
        }
        // More may be waiting: come back next turn.
        self.pending_next.push(Token(LISTENER_BASE + idx));
    }

    fn read_stream(&mut self, id: FaceId) {
        let now = self.now_ms();
        let mut close: Option<&'static str> = None;
        let mut more = false;
        {
            let Some(mut f) = self.faces.remove(&id) else {
                return;
            };
            if let FaceIo::Stream(s) = &mut f.io {
                for i in 0..=READS_PER_TURN {
                    if i == READS_PER_TURN {
                        more = true;
                        break;
                    }
                    match s.framer.fill_from(&mut s.sock) {
                        Ok(0) => {
                            close = Some("closed by peer");
                            break;
                        }
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(_) => {
                            close = Some("read error");
                            break;
                        }
                    }
                    f.last_rx_ms = now;
                    loop {
                        match s.framer.next_packet() {
                            Ok(Some(p)) => {
                                let malformed = handle_packet(
                                    &mut self.rx,
                                    &mut f.counters,
                                    id,
                                    f.local,
                                    p,
                                    None,
                                    now,
                                );
                                if malformed && f.counters.malformed >= self.cfg.malformed_limit {
                                    close = Some("too many malformed packets");
                                }
                            }
                            Ok(None) => break,
                            Err(_) => {
                                f.counters.malformed += 1;
                                close = Some("framing error");
                                break;
                            }
                        }
                    }
                    if close.is_some() {
                        break;
                    }
                }
            }
            self.faces.insert(id, f);
        }
        if let Some(why) = close {
            self.close_face(id, why);
        } else if more {
            self.pending_next.push(Token(FACE_BASE + id as usize));
        }
    }

    fn read_udp(&mut self, idx: usize) {
        let now = self.now_ms();
        let mut more = true;
        for _ in 0..READS_PER_TURN {
            let n = match self.udp[idx].batch.recv_batch() {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    more = false;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // ICMP errors surface here on unconnected sockets: not fatal.
                    tracing::trace!("udp recv: {e}");
                    continue;
                }
            };
            for i in 0..n {
                let (_, from) = self.udp[idx].batch.datagram(i);
                let id = match self.udp_faces.get(&(idx, from)) {
                    Some(&id) => id,
                    None if self.penalty.get(&from).is_some_and(|&t| t > now) => {
                        self.penalized_datagrams += 1;
                        continue;
                    }
                    None if self.udp[idx].listener => {
                        let mtu = self.cfg.udp_mtu;
                        match self.add_udp_face(idx, from, FacePersistency::OnDemand, mtu) {
                            Some(id) => id,
                            None => continue,
                        }
                    }
                    None => continue,
                };
                let Some(mut f) = self.faces.remove(&id) else {
                    continue;
                };
                f.last_rx_ms = now;
                let (bytes, _) = self.udp[idx].batch.datagram(i);
                let reasm = match &mut f.io {
                    FaceIo::Udp(u) => Some(&mut u.reasm),
                    FaceIo::Stream(_) => None,
                };
                let malformed = handle_packet(
                    &mut self.rx,
                    &mut f.counters,
                    id,
                    f.local,
                    bytes,
                    reasm,
                    now,
                );
                let c = f.counters;
                let good = c.in_interests + c.in_data + c.in_nacks;
                let close = malformed
                    && c.malformed >= self.cfg.malformed_limit
                    && c.malformed > good
                    && f.persistency == FacePersistency::OnDemand;
                self.faces.insert(id, f);
                if close {
                    self.close_face(id, "too many malformed packets");
                    if self.penalty.len() < PENALTY_CAPACITY {
                        self.penalty.insert(from, now + PENALTY_MS);
                    }
                }
            }
        }
        if more {
            self.pending_next.push(Token(UDP_BASE + idx));
        }
    }

    /// Moves worker outputs into face queues; true if a ring had to be left non-empty.
    fn drain_outputs(&mut self) -> bool {
        let mut busy = false;
        for w in 0..self.rx.workers.len() {
            let cap = self.rx.workers[w].output.capacity();
            for _ in 0..cap {
                let Some(p) = self.rx.workers[w].output.pop() else {
                    break;
                };
                self.deliver(p.face, p.kind, p.bytes());
                self.rx.pool.put(p.buf);
            }
            busy |= !self.rx.workers[w].output.is_empty();
        }
        busy
    }

    /// Queues one link-layer packet on a face.
    fn deliver(&mut self, id: FaceId, kind: PktKind, bytes: &[u8]) {
        let Some(f) = self.faces.get_mut(&id) else {
            return;
        };
        match &mut f.io {
            FaceIo::Stream(s) => {
                let queued = s.out.len() - s.out_pos;
                if queued + bytes.len() > self.cfg.send_queue_bytes {
                    f.counters.drop_queue_full += 1;
                    return;
                }
                if s.out_pos > 0 && s.out.len() + bytes.len() > s.out.capacity() {
                    // Compact before growing.
                    s.out.drain(..s.out_pos);
                    s.out_pos = 0;
                }
                if queued == 0 {
                    self.dirty.push(id);
                }
                s.out.extend_from_slice(bytes);
                f.count_out(kind, bytes.len());
            }
            FaceIo::Udp(u) => {
                // A packet too large for one datagram goes to the fragmenter as the network
                // packet and the header fields the worker encoded with it.
                let sock = &mut self.udp[u.socket];
                let remote = u.remote;
                if bytes.len() <= u.frag.mtu() {
                    stage(sock, bytes, remote);
                    f.count_out(kind, bytes.len());
                    return;
                }
                let (packet, header_fields) = match split_link(bytes) {
                    Split::Parts(p) => (p.packet, p.header_fields),
                    Split::Idle => return,
                    // Not an LpPacket after all: sent as it is, in fragments.
                    Split::Malformed => (bytes, &[][..]),
                };
                let mut total = 0;
                let r = u.frag.fragment_encoded(packet, header_fields, |d| {
                    total += d.len();
                    stage(sock, d, remote);
                });
                match r {
                    Ok(_) => f.count_out(kind, total),
                    Err(_) => f.counters.drop_queue_full += 1,
                }
            }
        }
    }

    /// Sends everything queued.
    fn flush(&mut self) {
        for i in 0..self.udp.len() {
            flush_udp(&mut self.udp[i]);
        }
        // flush_stream never queues, so the list is empty again afterwards; reuse it.
        let mut dirty = std::mem::take(&mut self.dirty);
        for &id in &dirty {
            self.flush_stream(id);
        }
        dirty.clear();
        self.dirty = dirty;
    }

    fn flush_stream(&mut self, id: FaceId) {
        let mut failed = false;
        {
            let Some(f) = self.faces.get_mut(&id) else {
                return;
            };
            let FaceIo::Stream(s) = &mut f.io else {
                return;
            };
            // Bounded: each successful write makes progress; a full socket stops the loop.
            while s.out_pos < s.out.len() {
                match s.sock.write(&s.out[s.out_pos..]) {
                    Ok(0) => {
                        failed = true;
                        break;
                    }
                    Ok(n) => s.out_pos += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        failed = true;
                        break;
                    }
                }
            }
            if s.out_pos == s.out.len() {
                s.out.clear();
                s.out_pos = 0;
            }
            let want = s.out_pos < s.out.len();
            if !failed && want != s.want_write {
                s.want_write = want;
                let interest = if want {
                    Interest::READABLE | Interest::WRITABLE
                } else {
                    Interest::READABLE
                };
                let token = Token(FACE_BASE + id as usize);
                let _ = self
                    .poll
                    .registry()
                    .reregister(s.sock.source(), token, interest);
            }
        }
        if failed {
            self.close_face(id, "write error");
        }
    }

    /// Once a second: close idle on-demand UDP faces, let penalized remotes back in.
    fn sweep(&mut self, now: u64) {
        self.penalty.retain(|_, &mut until| until > now);
        if !self.penalty.is_empty() {
            tracing::debug!(
                remotes = self.penalty.len(),
                dropped = self.penalized_datagrams,
                "UDP remotes kept out for sending garbage"
            );
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
            self.close_face(id, "idle");
        }
    }

    /// Handles management's commands; true if more are waiting.
    fn handle_commands(&mut self) -> bool {
        for _ in 0..COMMANDS_PER_TURN {
            let c = match self.commands.try_recv() {
                Ok(c) => c,
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Disconnected) => {
                    self.stop.store(true, Ordering::SeqCst);
                    return false;
                }
            };
            self.command(c);
        }
        true
    }

    fn command(&mut self, c: IoCommand) {
        match c {
            IoCommand::Send { face, bytes } => {
                let kind = PktKind::of_link(&bytes);
                self.deliver(face, kind, &bytes);
            }
            IoCommand::CreateUdp {
                remote,
                persistency,
                mtu,
                reply,
            } => {
                let _ = reply.send(self.create_udp(remote, persistency, mtu));
            }
            IoCommand::AdoptTcp {
                stream,
                persistency,
                reply,
            } => {
                let r = (|| {
                    let peer = stream
                        .peer_addr()
                        .map_err(|e| CreateError::Failed(e.to_string()))?;
                    let uri = tcp_uri(&peer);
                    if let Some(f) = self.faces.values().find(|f| f.uri == uri) {
                        return Err(CreateError::Exists(Box::new(f.desc())));
                    }
                    let local = stream
                        .local_addr()
                        .map_err(|e| CreateError::Failed(e.to_string()))?;
                    stream
                        .set_nonblocking(true)
                        .map_err(|e| CreateError::Failed(e.to_string()))?;
                    let _ = stream.set_nodelay(true);
                    let s = StreamSock::Tcp(TcpStream::from_std(stream));
                    let id = self
                        .add_stream_face(
                            s,
                            uri,
                            tcp_uri(&local),
                            peer.ip().is_loopback(),
                            persistency,
                        )
                        .ok_or_else(|| CreateError::Failed("face limit reached".into()))?;
                    Ok(self.faces[&id].desc())
                })();
                let _ = reply.send(r);
            }
            IoCommand::Destroy { id, reply } => {
                let _ = reply.send(self.close_face(id, "destroyed by management"));
            }
            IoCommand::Update {
                id,
                persistency,
                local_fields,
                reply,
            } => {
                let r = match self.faces.get_mut(&id) {
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
                        Ok(f.desc())
                    }
                };
                if let Ok(d) = &r {
                    if let Some(f) = self.faces.get(&d.id) {
                        self.announce(f);
                    }
                }
                let _ = reply.send(r);
            }
            IoCommand::List { reply } => {
                let mut v: Vec<FaceDesc> = self.faces.values().map(Face::desc).collect();
                v.sort_by_key(|d| d.id);
                let _ = reply.send(v);
            }
        }
    }

    fn create_udp(
        &mut self,
        remote: SocketAddr,
        persistency: FacePersistency,
        mtu: Option<usize>,
    ) -> Result<FaceDesc, CreateError> {
        // Use the listener of the same family, else a socket of our own.
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
            .add_udp_face(socket, remote, persistency, mtu)
            .ok_or_else(|| CreateError::Failed("face limit reached".into()))?;
        Ok(self.faces[&id].desc())
    }
}

fn stage(sock: &mut UdpSock, d: &[u8], to: SocketAddr) {
    if sock.staged.len() >= sock.max_stage || sock.stage.len() + d.len() > sock.stage.capacity() {
        flush_udp(sock);
    }
    if sock.stage.len() + d.len() > sock.stage.capacity() {
        sock.drops += 1; // larger than the whole staging area
        return;
    }
    let off = sock.stage.len() as u32;
    sock.stage.extend_from_slice(d);
    sock.staged.push((off, d.len() as u32, to));
}

fn flush_udp(sock: &mut UdpSock) {
    let mut start = 0;
    // Bounded: each round sends at least one datagram or drops the rest.
    while start < sock.staged.len() {
        let items: Vec<(&[u8], SocketAddr)> = sock.staged[start..]
            .iter()
            .map(|&(o, l, a)| (&sock.stage[o as usize..(o + l) as usize], a))
            .collect();
        match sock.batch.send_batch(&items) {
            Ok(n) if n > 0 => start += n,
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => {
                // Full socket buffer or an unreachable destination: UDP drops.
                sock.drops += 1;
                start += 1;
            }
        }
    }
    sock.stage.clear();
    sock.staged.clear();
}

/// What receiving needs: the classifier, the buffers, the rings (and which workers to wake) and
/// management's channel.
struct Rx {
    dispatcher: Dispatcher,
    pool: Arc<Pool>,
    workers: Vec<Arc<WorkerLink>>,
    wake: Vec<bool>,
    mgmt: Sender<MgmtInput>,
}

fn push_to(
    ctx: &mut Rx,
    c: &mut FaceCounters,
    w: usize,
    face: FaceId,
    kind: PktKind,
    full_hash: Option<u64>,
    link: Link<'_>,
) {
    let Some(mut p) = link.pkt(&ctx.pool, face) else {
        c.drop_no_buffer += 1;
        return;
    };
    p.kind = kind;
    p.full_hash = full_hash;
    match ctx.workers[w].input.push(p) {
        Ok(()) => ctx.wake[w] = true,
        Err(p) => {
            c.drop_ring_full += 1;
            ctx.workers[w].input_full.fetch_add(1, Ordering::Relaxed);
            ctx.pool.put(p.buf);
        }
    }
}

/// Routes one received link-layer packet; returns true if it was malformed (and counted).
fn handle_packet(
    ctx: &mut Rx,
    c: &mut FaceCounters,
    face: FaceId,
    local: bool,
    bytes: &[u8],
    reasm: Option<&mut Reassembler>,
    now: u64,
) -> bool {
    let (route, kind, full_hash) = ctx.dispatcher.classify_hashed(bytes);
    c.in_bytes += bytes.len() as u64;
    if route == Route::Reassemble {
        let Some(reasm) = reasm else {
            c.malformed += 1;
            return true;
        };
        let Ok(lp) = LpPacketView::decode(bytes, ctx.dispatcher.limits()) else {
            c.malformed += 1;
            return true;
        };
        return match reasm.receive(u64::from(face), &lp, now) {
            Ok(Some(whole)) => route_whole(ctx, c, face, local, &whole),
            Ok(None) => false,
            Err(e) if e.is_malformed() => {
                c.malformed += 1;
                true
            }
            Err(_) => false,
        };
    }
    route_packet(
        ctx,
        c,
        face,
        local,
        Link::Bytes(bytes),
        (route, kind, full_hash),
    )
}

/// Routes a reassembled packet as if it had come in one piece (its bytes were counted as they
/// came), from the network packet and the first fragment's headers; returns true if it was
/// malformed (and counted).
fn route_whole(
    ctx: &mut Rx,
    c: &mut FaceCounters,
    face: FaceId,
    local: bool,
    whole: &Reassembled<'_>,
) -> bool {
    let (headers, packet) = (&whole.headers, &whole.packet[..]);
    if headers.is_empty() {
        let class = ctx.dispatcher.classify_hashed(packet);
        return route_packet(ctx, c, face, local, Link::Bytes(packet), class);
    }
    // The link-layer packet the face would have received whole must fit the packet limits.
    if link_len(headers, packet.len()) > ctx.dispatcher.limits().max_packet_bytes {
        c.malformed += 1;
        return true;
    }
    let token = headers.pit_token.as_ref().map(PitToken::as_bytes);
    let class = ctx
        .dispatcher
        .classify_network(packet, token, headers.nack.is_some());
    route_packet(ctx, c, face, local, Link::Parts(headers, packet), class)
}

/// A received packet as the worker rings take it: link-layer bytes as received, or a network
/// packet and its link headers (encoded once, into the pool buffer).
#[derive(Clone, Copy)]
enum Link<'a> {
    Bytes(&'a [u8]),
    Parts(&'a LpHeaders, &'a [u8]),
}

impl Link<'_> {
    #[inline]
    fn pkt(self, pool: &Pool, face: FaceId) -> Option<Pkt> {
        match self {
            Link::Bytes(b) => pool.pkt_from(face, b),
            Link::Parts(h, p) => pool.pkt_link(face, h, p),
        }
    }

    fn to_vec(self) -> Vec<u8> {
        match self {
            Link::Bytes(b) => b.to_vec(),
            Link::Parts(h, p) => {
                let mut v = Vec::with_capacity(link_len(h, p.len()));
                encode_link(&mut v, h, p, usize::MAX);
                v
            }
        }
    }
}

/// Hands a classified packet to its worker(s) or to management; returns true if it was
/// malformed (and counted).
#[inline]
fn route_packet(
    ctx: &mut Rx,
    c: &mut FaceCounters,
    face: FaceId,
    local: bool,
    link: Link<'_>,
    (route, kind, full_hash): (Route, PktKind, Option<u64>),
) -> bool {
    match route {
        // A fragment inside a reassembled packet is as malformed as garbage.
        Route::Malformed | Route::Reassemble => {
            c.malformed += 1;
            return true;
        }
        Route::Idle => {}
        Route::Mgmt => {
            c.in_interests += 1;
            let _ = ctx.mgmt.send(MgmtInput::Interest {
                face,
                local,
                bytes: link.to_vec(),
            });
        }
        Route::Worker(w) => {
            count_kind(c, kind);
            push_to(ctx, c, w, face, kind, full_hash, link);
        }
        Route::AllWorkers { owner } => {
            count_kind(c, kind);
            push_to(ctx, c, owner, face, kind, full_hash, link);
            for w in (0..ctx.workers.len()).filter(|&w| w != owner) {
                push_to(ctx, c, w, face, kind, full_hash, link);
            }
        }
    }
    false
}

fn count_kind(c: &mut FaceCounters, kind: PktKind) {
    match kind {
        PktKind::Interest => c.in_interests += 1,
        PktKind::Data => c.in_data += 1,
        PktKind::Nack => c.in_nacks += 1,
        PktKind::Other | PktKind::Admit => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::hash::HashKey;
    use wire::lp::{Nack, NackReason};
    use wire::{Data, Interest, Name};

    /// A reassembled packet is classified from its parts as its whole link-layer packet would be.
    #[test]
    fn reassembled_parts_classify_like_the_whole_link_packet() {
        let d = Dispatcher::new(
            HashKey::fixed(1, 2),
            4,
            crate::dispatch::WorkerMapping::Content,
            Limits::default(),
        );
        let interest = Interest::new(Name::from_uri("/a/b").unwrap(), [1; 4]).to_wire();
        let mgmt = Interest::new(Name::from_uri("/localhost/nfd/faces/list").unwrap(), [1; 4]);
        let data = Data::new(Name::from_uri("/a/b").unwrap(), vec![7; 3000]).to_wire();
        let ours = crate::dispatch::worker_token(2);
        for packet in [&interest, &mgmt.to_wire(), &data] {
            for h in [
                LpHeaders {
                    pit_token: PitToken::new(&ours),
                    ..LpHeaders::default()
                },
                LpHeaders {
                    pit_token: PitToken::new(&[9, 9]),
                    congestion_mark: Some(1),
                    ..LpHeaders::default()
                },
                LpHeaders {
                    nack: Some(Nack {
                        reason: Some(NackReason::NoRoute),
                    }),
                    ..LpHeaders::default()
                },
            ] {
                let mut whole = Vec::new();
                assert!(encode_link(&mut whole, &h, packet, usize::MAX));
                let token = h.pit_token.as_ref().map(PitToken::as_bytes);
                assert_eq!(
                    d.classify_network(packet, token, h.nack.is_some()),
                    d.classify_hashed(&whole),
                    "{h:?}"
                );
            }
        }
    }
}
