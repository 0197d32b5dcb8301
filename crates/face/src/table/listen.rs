//! Listeners and sockets: the Unix, TCP and WebSocket listeners, the UDP sockets, accepting
//! connections.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use mio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use mio::unix::SourceFd;
use mio::{Interest, Token};
use wire::nfd::FacePersistency;

use super::tx::UdpSock;
use super::ws::{ws_uri, WsConn};
use super::ws_tls::WsTls;
use super::{FaceId, FaceSink, FaceTable, Notice, UdpRx, ETHER_BASE, LISTENER_BASE, UDP_BASE};
use crate::udp::UdpBatch;
use crate::udp_ring::{UdpRing, UdpRingCounters, DEFAULT_RING_BUFFERS};
use crate::uri::FaceUri;

/// Connections accepted per listener event.
const ACCEPTS_PER_TURN: usize = 64;
/// Socket buffer size asked of the kernel for UDP sockets.
const UDP_SOCKET_BUFFER_BYTES: libc::c_int = 8 << 20;
/// Datagrams read or sent in one system call.
const UDP_BATCH: usize = 64;
/// Largest datagram received.
const UDP_MAX_DATAGRAM: usize = 9000;
/// Provided buffers of a UDP socket's io_uring receive (of `UDP_MAX_DATAGRAM` bytes each).
const UDP_RING_BUFFERS: u16 = DEFAULT_RING_BUFFERS;

/// A listening socket: connections to it become on-demand stream faces.
#[derive(Debug)]
pub enum Listener {
    /// A Unix socket (its faces are local), and its path.
    Unix(UnixListener, PathBuf),
    /// A TCP socket, and its address.
    Tcp(TcpListener, SocketAddr),
    /// A TCP socket accepting WebSocket connections (`ws://`), and its address.
    Ws(TcpListener, SocketAddr),
    /// A TCP socket accepting secure WebSocket connections (`wss://`), its address and its
    /// certificate.
    Wss(TcpListener, SocketAddr, WsTls),
}

/// The socket of a stream face.
pub(super) enum StreamSock {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl StreamSock {
    pub(super) fn raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            StreamSock::Unix(s) => s.as_raw_fd(),
            StreamSock::Tcp(s) => s.as_raw_fd(),
        }
    }

    pub(super) fn source(&mut self) -> &mut dyn mio::event::Source {
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

/// Asks the kernel for large receive and send buffers on a UDP socket (8 MiB; the kernel caps
/// them at `net.core.rmem_max` and `wmem_max`), so that a burst of datagrams, such as a window
/// of Data answered at once, fits while the reader is busy. Best effort: failures are ignored.
pub fn set_socket_buffers(s: &UdpSocket) {
    set_socket_buffer_bytes(s, UDP_SOCKET_BUFFER_BYTES, false);
}

/// Sets a UDP socket's receive and send buffers to `bytes`. With `force`, past the system's
/// caps (`SO_RCVBUFFORCE`/`SO_SNDBUFFORCE`, which need CAP_NET_ADMIN), falling back to the
/// capped options where refused. Best effort: failures are ignored.
pub fn set_socket_buffer_bytes(s: &UdpSocket, bytes: libc::c_int, force: bool) {
    let set = |opt: libc::c_int| {
        // SAFETY: a valid fd, a c_int option value of the right size.
        unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&bytes as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            ) == 0
        }
    };
    for (forced, capped) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
    ] {
        if !(force && set(forced)) {
            set(capped);
        }
    }
}

/// What the error of [`bind_unix`] says when a forwarder answers on the path.
pub const UNIX_IN_USE: &str = "another forwarder is running on";

/// What the error of [`bind_unix`] says when the path holds a file that is not a socket.
pub const UNIX_NOT_A_SOCKET: &str = "is not a socket";

/// Binds the Unix listener at `path` ([`bind_unix_with`], the socket left as the umask makes
/// it).
pub fn bind_unix(path: &Path) -> io::Result<UnixListener> {
    bind_unix_with(path, |_| Ok(()))
}

/// Binds the Unix listener at `path`: creates the directory, replaces a stale socket (one
/// whose connect is refused: nobody listens on it), refuses to steal a live one ("another
/// forwarder is running on PATH", [`io::ErrorKind::AddrInUse`]) and never removes a file that
/// is not a socket ([`io::ErrorKind::AlreadyExists`]). The socket is bound under a temporary
/// name beside `path`, given its access by `access` (its mode and group), then renamed to
/// `path`: no client can connect to it before it has its access.
pub fn bind_unix_with(
    path: &Path,
    access: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<UnixListener> {
    use std::os::unix::fs::FileTypeExt as _;
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)?;
        }
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
        Ok(m) if !m.file_type().is_socket() => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} {UNIX_NOT_A_SOCKET}: refusing to replace it",
                    path.display()
                ),
            ));
        }
        Ok(_) => match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!("{UNIX_IN_USE} {}", path.display()),
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => std::fs::remove_file(path)?,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "cannot tell whether a forwarder runs on {}: {e}",
                        path.display()
                    ),
                ))
            }
        },
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.new", std::process::id()));
    let tmp = PathBuf::from(tmp);
    // Left by a process of this id that died half-way: a socket nobody listens on.
    let _ = std::fs::remove_file(&tmp);
    let l = UnixListener::bind(&tmp)?;
    let placed = access(&tmp).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(l)
}

impl FaceTable {
    /// Starts accepting on a listener.
    pub fn add_listener(&mut self, mut l: Listener) -> io::Result<()> {
        if self.listeners.len() >= UDP_BASE - LISTENER_BASE {
            return Err(io::Error::other("too many listeners"));
        }
        let token = Token(LISTENER_BASE + self.listeners.len());
        match &mut l {
            Listener::Unix(u, _) => self.registry.register(u, token, Interest::READABLE),
            Listener::Tcp(t, _) | Listener::Ws(t, _) | Listener::Wss(t, _, _) => {
                self.registry.register(t, token, Interest::READABLE)
            }
        }?;
        self.listeners.push(l);
        Ok(())
    }

    /// Adds a UDP socket; a `listener` socket creates on-demand faces for datagrams from
    /// unknown remotes. Returns its index.
    pub fn add_udp_socket(&mut self, s: UdpSocket, listener: bool) -> io::Result<usize> {
        if self.udp.len() >= ETHER_BASE - UDP_BASE {
            return Err(io::Error::other("too many UDP sockets"));
        }
        s.set_nonblocking(true)?;
        set_socket_buffers(&s);
        let local = s.local_addr()?;
        let idx = self.udp.len();
        let ring = self.udp_ring(&s);
        // With a ring, the poll waits for its completions, and the batch only sends.
        let (fd, slot) = match &ring {
            Some(r) => (r.ring_fd(), 1),
            None => (s.as_raw_fd(), UDP_MAX_DATAGRAM),
        };
        self.registry.register(
            &mut SourceFd(&fd),
            Token(UDP_BASE + idx),
            Interest::READABLE,
        )?;
        let batch = UdpBatch::with_capacity(s, UDP_BATCH, slot)?;
        if ring.is_some() {
            // The ring's receive is armed at its first read, in the thread that drives the
            // table (the kernel completes it there).
            self.pending_next.push(Token(UDP_BASE + idx));
        }
        let sock = UdpSock::new(ring, batch, local, listener, self.cfg.udp_mtu);
        self.udp.push(sock);
        Ok(idx)
    }

    /// The io_uring receive of a new socket, if the table's sockets receive so and the kernel
    /// lets them: the first refusal is kept ([`FaceTable::udp_ring_failure`]) and the table
    /// falls back to `recvmmsg`.
    fn udp_ring(&mut self, s: &UdpSocket) -> Option<UdpRing> {
        let UdpRx::Uring { gro } = self.cfg.udp_rx else {
            return None;
        };
        // GRO buffers are 64 KiB: fewer of them.
        let buffers = if gro {
            UDP_RING_BUFFERS / 4
        } else {
            UDP_RING_BUFFERS
        };
        match UdpRing::new(s, buffers, UDP_MAX_DATAGRAM, UDP_BATCH, gro) {
            Ok(r) => Some(r),
            Err(e) => {
                self.ring_failure = Some(e);
                self.cfg.udp_rx = UdpRx::Recvmmsg;
                None
            }
        }
    }

    /// Why the table's UDP sockets receive with `recvmmsg` although it was set up for io_uring
    /// (the kernel refused it), if they do.
    pub fn udp_ring_failure(&self) -> Option<&io::Error> {
        self.ring_failure.as_ref()
    }

    /// The sum of the counters of the UDP sockets' io_uring receives; `None` if no socket
    /// receives so.
    pub fn udp_ring_counters(&self) -> Option<UdpRingCounters> {
        let mut rings = self.udp.iter().filter_map(|u| u.ring.as_ref()).peekable();
        rings.peek()?;
        Some(rings.fold(UdpRingCounters::default(), |mut t, r| {
            t.add(&r.counters());
            t
        }))
    }

    /// The local URIs of the listening channels, in NFD's order (by factory: TCP, then UDP,
    /// then Unix): TCP listeners, listening UDP sockets, Unix listeners.
    /// The local URIs of the listening channels, in NFD's order (by factory: Ethernet, TCP,
    /// UDP, Unix, WebSocket): Ethernet channels (`dev://ifname`), TCP listeners, listening UDP
    /// sockets, Unix listeners, WebSocket listeners (`ws://addr:port`).
    pub fn channels(&self) -> Vec<String> {
        let mut tcp = self.ether_channels();
        let mut unix = Vec::new();
        let mut ws = Vec::new();
        for l in &self.listeners {
            match l {
                Listener::Tcp(_, addr) => tcp.push(FaceUri::tcp(*addr).to_string()),
                Listener::Unix(_, path) => unix.push(FaceUri::Unix(path.clone()).to_string()),
                Listener::Ws(_, addr) => ws.push(ws_uri("ws", *addr)),
                Listener::Wss(_, addr, _) => ws.push(ws_uri("wss", *addr)),
            }
        }
        let udp = self.udp.iter().filter(|s| s.listener);
        tcp.extend(udp.map(|s| FaceUri::udp(s.local).to_string()));
        tcp.extend(unix);
        tcp.extend(ws);
        tcp
    }

    /// Removes the Unix listeners' socket files (at a clean stop).
    pub fn remove_socket_files(&self) {
        for l in &self.listeners {
            if let Listener::Unix(_, p) = l {
                let _ = std::fs::remove_file(p);
            }
        }
    }

    /// Accepts the connections waiting on listener `idx` (a bounded number per turn); each
    /// becomes a face here, unless the sink keeps it ([`FaceSink::accepted`]).
    pub(super) fn accept(&mut self, idx: usize, sink: &mut impl FaceSink) {
        for _ in 0..ACCEPTS_PER_TURN {
            let conn = match &self.listeners[idx] {
                Listener::Unix(l, path) => match l.accept() {
                    Ok((s, _)) => {
                        let local_uri = FaceUri::Unix(path.clone()).to_string();
                        let Some(peer) = self.check_unix_peer(&s, sink) else {
                            continue;
                        };
                        Accepted {
                            sock: StreamSock::Unix(s),
                            uri: None,
                            local_uri,
                            local: true,
                            ws: false,
                            tls: None,
                            peer,
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) => {
                        self.accept_failed(&e);
                        sink.notice(Notice::AcceptFailed(&e));
                        return;
                    }
                },
                Listener::Tcp(l, addr) => match l.accept() {
                    Ok((s, peer)) => {
                        let _ = s.set_nodelay(true);
                        // NFD names the face by the connection's own local address (the
                        // interface's, where the listener is the wildcard).
                        let local_uri = FaceUri::tcp(s.local_addr().unwrap_or(*addr)).to_string();
                        Accepted {
                            sock: StreamSock::Tcp(s),
                            uri: Some(FaceUri::tcp(peer).to_string()),
                            local_uri,
                            local: self.cfg.local.tcp_local(peer.ip().is_loopback()),
                            ws: false,
                            tls: None,
                            peer: None,
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) => {
                        self.accept_failed(&e);
                        sink.notice(Notice::AcceptFailed(&e));
                        return;
                    }
                },
                Listener::Ws(l, addr) | Listener::Wss(l, addr, _) => match l.accept() {
                    Ok((s, peer)) => {
                        let _ = s.set_nodelay(true);
                        let tls = match &self.listeners[idx] {
                            Listener::Wss(_, _, t) => Some(t.clone()),
                            _ => None,
                        };
                        // NFD names the face by the connection's own local address.
                        let conn = WsConn::new(peer, s.local_addr().unwrap_or(*addr), tls);
                        Accepted {
                            sock: StreamSock::Tcp(s),
                            uri: Some(conn.uri),
                            local_uri: conn.local_uri,
                            local: self.cfg.local.tcp_local(conn.local),
                            ws: true,
                            tls: conn.tls,
                            peer: None,
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) => {
                        self.accept_failed(&e);
                        sink.notice(Notice::AcceptFailed(&e));
                        return;
                    }
                },
            };
            if let Some(conn) = sink.accepted(conn) {
                self.adopt(conn, sink);
            }
        }
        // More may be waiting: come back next turn.
        self.pending_next.push(Token(LISTENER_BASE + idx));
    }

    /// Makes an accepted connection (this table's listener's, or another table's) an
    /// on-demand face of this table; its id, or `None` if the table is full (noticed) or the
    /// connection is a WebSocket one, which becomes a face once its handshake is done.
    pub fn adopt(&mut self, conn: Accepted, sink: &mut impl FaceSink) -> Option<FaceId> {
        let params = self.own_params(FacePersistency::OnDemand);
        let Accepted {
            sock,
            uri,
            local_uri,
            local,
            ws,
            tls,
            peer,
        } = conn;
        if ws {
            if let (StreamSock::Tcp(tcp), Some(uri)) = (sock, uri) {
                let conn = WsConn {
                    uri,
                    local_uri,
                    local,
                    tls,
                };
                self.start_handshake(tcp, conn, sink);
            }
            return None;
        }
        let io = self.stream_io(sock);
        let id = self.add_stream_face(io, uri, local_uri, local, &params, sink);
        match (id, peer) {
            (None, _) => self.notice_refused(sink),
            (Some(id), Some(p)) => sink.notice(Notice::UnixPeer(id, p)),
            (Some(_), None) => {}
        }
        id
    }
}

/// A connection a listener accepted, not yet a face (see [`FaceSink::accepted`]).
pub struct Accepted {
    sock: StreamSock,
    uri: Option<String>,
    local_uri: String,
    local: bool,
    /// A WebSocket connection, its handshake still to do.
    ws: bool,
    /// A secure WebSocket connection's TLS settings.
    tls: Option<WsTls>,
    /// A Unix connection's peer credentials.
    peer: Option<super::PeerCred>,
}

impl Accepted {
    /// The face's local URI (the listener's).
    pub fn local_uri(&self) -> &str {
        &self.local_uri
    }
}

impl std::fmt::Debug for Accepted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accepted")
            .field("uri", &self.uri)
            .field("local_uri", &self.local_uri)
            .field("local", &self.local)
            .field("ws", &self.ws)
            .finish_non_exhaustive()
    }
}
