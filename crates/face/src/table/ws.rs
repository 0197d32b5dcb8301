//! WebSocket faces, as NFD's WebSocket channel makes them: one NDN packet (an LpPacket, or a
//! bare Interest or Data) per binary message over `ws://`.
//!
//! A connection accepted on a WebSocket listener ([`super::Listener::Ws`]) is first a pending
//! handshake, not a face: at most [`MAX_WS_HANDSHAKES`] at once per table (more are refused and
//! counted), each given [`WS_HANDSHAKE_TIMEOUT_MS`] to finish (websocketpp's open-handshake
//! timeout, which NFD keeps), its HTTP request bounded by the `tungstenite` crate (64 KiB).
//! Once the handshake is done it becomes an on-demand face, as NFD's `handleOpen` makes it:
//! local URI `ws://` and the socket's local address, remote URI `wsclient://` and the peer's
//! address, local scope when both are loopback addresses (IPv4-mapped ones too), non-local
//! otherwise; its persistency cannot be changed and it has no MTU.
//!
//! The WebSocket protocol itself (framing, masking, fragments and continuation frames, control
//! frames, the close handshake, UTF-8 checks of text) is `tungstenite`'s, driven
//! non-blocking from the table's `mio` loop like the other stream faces:
//!
//! - **Receiving.** Each whole message is handed to the sink as one link-layer packet, text
//!   messages too (NFD parses whatever payload a message carries; a text payload is rarely a
//!   TLV, and is then counted malformed and dropped, as any garbage). A message or frame larger
//!   than the packet limit (`max_packet_bytes`) closes the face with status 1009, a protocol
//!   error (unmasked frame, bad opcode, bad UTF-8 in a text message, ...) with status 1002; both
//!   count as malformed. A bounded number of messages is read per event.
//! - **Sending.** A packet becomes one binary message in the connection's write buffer, bounded
//!   by `send_queue_bytes` as a TCP face's queue is (a packet that does not fit is counted in
//!   `drop_queue_full`); the table's flush writes it out, waiting for the socket to be writable
//!   when it is full. The message's payload is cut from a staging buffer that is reclaimed once
//!   the frame is written into the write buffer, so sending allocates nothing per packet.
//! - **Liveness.** Pings are answered by `tungstenite`; the table pings every face each
//!   [`WS_PING_INTERVAL_MS`] and closes one whose pong does not come within
//!   [`WS_PONG_TIMEOUT_MS`] (NFD's defaults). A close from the peer is answered and closes the
//!   face; closing a face sends a close frame (status 1000).
//!
//! A listener with a certificate ([`super::Listener::Wss`]) serves `wss://`: TLS under the same
//! protocol, its handshake part of the pending handshake (see [`super::ws_tls`]).

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;

use bytes::{Bytes, BytesMut};
use mio::net::TcpStream;
use mio::{Interest, Token};
use tungstenite::handshake::server::{NoCallback, ServerHandshake};
use tungstenite::handshake::{HandshakeError, MidHandshake};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tungstenite::{Error, Message, WebSocket};
use wire::nfd::FacePersistency;

use super::congestion::{kernel_send_queue, marked};
use super::ws_tls::{close_tls, is_tls_error, WsStream, WsTls};
use super::{FaceIo, FaceRx, FaceSink, FaceTable, Notice, FACE_BASE, HANDSHAKE_BASE};
use crate::stream::DEFAULT_READ_CHUNK;

/// The port NFD's WebSocket channel listens on.
pub const DEFAULT_WS_PORT: u16 = 9696;
/// Most WebSocket handshakes a table holds at once; connections beyond are closed and counted
/// ([`WsCounters::handshakes_refused`]).
pub const MAX_WS_HANDSHAKES: usize = 64;
/// Time a connection has to finish its WebSocket handshake (websocketpp's default, NFD's).
pub const WS_HANDSHAKE_TIMEOUT_MS: u64 = 5_000;
/// A WebSocket face is pinged this often (NFD's default ping interval).
pub const WS_PING_INTERVAL_MS: u64 = 10_000;
/// A WebSocket face whose pong takes longer than this is closed (NFD's default).
pub const WS_PONG_TIMEOUT_MS: u64 = 10_000;
/// Messages read from one face per event before it goes to the back of the line.
const MESSAGES_PER_TURN: usize = 256;
/// The payload of the table's pings.
const PING_PAYLOAD: &[u8] = b"cascade";

/// The server end of a handshake in progress.
type Mid = MidHandshake<ServerHandshake<WsStream, NoCallback>>;

/// What a table's WebSocket handshakes came to, since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WsCounters {
    /// Connections accepted on a WebSocket listener (each a handshake begun, or refused).
    pub handshakes_accepted: u64,
    /// Handshakes completed (each made a face, unless the table was full).
    pub handshakes_done: u64,
    /// Connections closed at once: [`MAX_WS_HANDSHAKES`] were pending.
    pub handshakes_refused: u64,
    /// Connections closed: no handshake within [`WS_HANDSHAKE_TIMEOUT_MS`].
    pub handshakes_timed_out: u64,
    /// Connections closed: the request was not a WebSocket upgrade, or was too large.
    pub handshakes_failed: u64,
    /// Connections closed: their TLS handshake or a TLS record failed (`wss://` only).
    pub handshakes_tls_failed: u64,
}

impl std::ops::AddAssign for WsCounters {
    fn add_assign(&mut self, o: WsCounters) {
        self.handshakes_accepted += o.handshakes_accepted;
        self.handshakes_done += o.handshakes_done;
        self.handshakes_refused += o.handshakes_refused;
        self.handshakes_timed_out += o.handshakes_timed_out;
        self.handshakes_failed += o.handshakes_failed;
        self.handshakes_tls_failed += o.handshakes_tls_failed;
    }
}

/// A connection on its way to being a face.
struct Pending {
    mid: Mid,
    started_ms: u64,
    conn: WsConn,
}

/// What a WebSocket face is made with: its URIs and scope, and its TLS settings (`wss://`).
pub(super) struct WsConn {
    pub(super) uri: String,
    pub(super) local_uri: String,
    pub(super) local: bool,
    pub(super) tls: Option<WsTls>,
}

impl WsConn {
    /// The URIs and scope of a connection from `peer` to `local` (see the module docs).
    pub(super) fn new(peer: SocketAddr, local: SocketAddr, tls: Option<WsTls>) -> WsConn {
        let scheme = if tls.is_some() { "wss" } else { "ws" };
        WsConn {
            uri: ws_uri("wsclient", peer),
            local_uri: ws_uri(scheme, local),
            local: loopback(peer.ip()) && loopback(local.ip()),
            tls,
        }
    }
}

/// The pending handshakes of a table, in a fixed number of slots (a slot's token is
/// `HANDSHAKE_BASE` + its index).
pub(super) struct Handshakes {
    slots: Vec<Option<Pending>>,
    pub(super) counters: WsCounters,
}

impl Default for Handshakes {
    fn default() -> Self {
        Handshakes {
            slots: (0..MAX_WS_HANDSHAKES).map(|_| None).collect(),
            counters: WsCounters::default(),
        }
    }
}

/// A WebSocket face's connection.
pub(super) struct WsIo {
    pub(super) ws: WebSocket<WsStream>,
    /// Where the payloads of outgoing messages are cut from (reclaimed after each write).
    stage: BytesMut,
    /// In the table's list of faces to flush.
    pub(super) dirty: bool,
    /// Waiting for the socket to be writable.
    pub(super) want_write: bool,
    last_ping_ms: u64,
    /// When the unanswered ping was sent.
    ping_sent_ms: Option<u64>,
    /// Bytes of messages queued since the write buffer was last seen empty (its length, or
    /// more: congestion marking).
    queued_bytes: usize,
}

/// `scheme://a.b.c.d:port` or `scheme://[v6]:port`.
pub(super) fn ws_uri(scheme: &str, a: SocketAddr) -> String {
    match a {
        SocketAddr::V4(a) => format!("{scheme}://{a}"),
        SocketAddr::V6(a) => format!("{scheme}://[{}]:{}", a.ip(), a.port()),
    }
}

/// A loopback address, IPv4-mapped IPv6 ones included (as NFD checks).
fn loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// What a table's WebSocket connections may hold: frames and messages up to the packet limit,
/// a write buffer of `send_queue_bytes`.
pub(super) fn ws_config(max_packet_bytes: usize, send_queue_bytes: usize) -> WebSocketConfig {
    let max_queue = send_queue_bytes.max(2);
    WebSocketConfig::default()
        .read_buffer_size(DEFAULT_READ_CHUNK + max_packet_bytes)
        .write_buffer_size(max_queue / 2)
        .max_write_buffer_size(max_queue)
        .max_message_size(Some(max_packet_bytes))
        .max_frame_size(Some(max_packet_bytes))
}

/// How reading a message ended a face, if it did: the reason, and whether it counts as
/// malformed (with the close status to send).
fn read_failure(e: &Error) -> (&'static str, Option<CloseCode>) {
    match e {
        Error::ConnectionClosed | Error::AlreadyClosed => ("closed by peer", None),
        Error::Io(e) if is_tls_error(e) => ("tls error", None),
        Error::Capacity(_) => ("message too big", Some(CloseCode::Size)),
        Error::Protocol(_) | Error::Utf8(_) => {
            ("websocket protocol error", Some(CloseCode::Protocol))
        }
        _ => ("read error", None),
    }
}

impl FaceTable {
    /// Starts the handshake of a connection accepted on a WebSocket listener (or handed over
    /// by another table): it becomes a face when the handshake is done.
    pub(super) fn start_handshake(
        &mut self,
        mut tcp: TcpStream,
        conn: WsConn,
        sink: &mut impl FaceSink,
    ) {
        let hs = &mut self.handshakes;
        hs.counters.handshakes_accepted += 1;
        let Some(slot) = hs.slots.iter().position(Option::is_none) else {
            hs.counters.handshakes_refused += 1;
            return;
        };
        let token = Token(HANDSHAKE_BASE + slot);
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self.registry.register(&mut tcp, token, interest).is_err() {
            return;
        }
        let stream = match WsStream::new(tcp, conn.tls.as_ref()) {
            Ok(s) => s,
            Err((e, mut tcp)) => {
                let _ = self.registry.deregister(&mut tcp);
                self.handshakes.counters.handshakes_tls_failed += 1;
                sink.notice(Notice::AcceptFailed(&e));
                return;
            }
        };
        let cfg = ws_config(self.cfg.max_packet_bytes, self.cfg.send_queue_bytes);
        let started_ms = sink.now_ms();
        let r = tungstenite::accept_with_config(stream, Some(cfg));
        self.handshake_step(slot, r, started_ms, conn, sink);
    }

    /// Goes on with the handshake in `slot` (its socket is ready).
    pub(super) fn continue_handshake(&mut self, slot: usize, sink: &mut impl FaceSink) {
        let Some(p) = self.handshakes.slots.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let r = p.mid.handshake();
        self.handshake_step(slot, r, p.started_ms, p.conn, sink);
    }

    fn handshake_step(
        &mut self,
        slot: usize,
        r: Result<WebSocket<WsStream>, HandshakeError<ServerHandshake<WsStream, NoCallback>>>,
        started_ms: u64,
        conn: WsConn,
        sink: &mut impl FaceSink,
    ) {
        match r {
            Ok(mut ws) => {
                self.handshakes.counters.handshakes_done += 1;
                let _ = self.registry.deregister(ws.get_mut().tcp());
                self.add_ws_face(ws, conn, sink);
            }
            Err(HandshakeError::Interrupted(mid)) => {
                self.handshakes.slots[slot] = Some(Pending {
                    mid,
                    started_ms,
                    conn,
                });
            }
            // The stream is gone with the error (its registration with it).
            Err(HandshakeError::Failure(e)) => {
                let c = &mut self.handshakes.counters;
                match e {
                    Error::Io(e) if is_tls_error(&e) => c.handshakes_tls_failed += 1,
                    _ => c.handshakes_failed += 1,
                }
            }
        }
    }

    fn add_ws_face(&mut self, ws: WebSocket<WsStream>, conn: WsConn, sink: &mut impl FaceSink) {
        let params = self.own_params(FacePersistency::OnDemand);
        let now = sink.now_ms();
        let io = FaceIo::Ws(Box::new(WsIo {
            ws,
            stage: BytesMut::with_capacity(DEFAULT_READ_CHUNK),
            dirty: false,
            want_write: false,
            last_ping_ms: now,
            ping_sent_ms: None,
            queued_bytes: 0,
        }));
        let id = self.add_stream_face(
            io,
            Some(conn.uri),
            conn.local_uri,
            conn.local,
            &params,
            sink,
        );
        if id.is_none() {
            self.notice_refused(sink);
        }
    }

    /// What this table's WebSocket handshakes came to.
    pub fn ws_counters(&self) -> WsCounters {
        self.handshakes.counters
    }

    /// Reads the messages waiting on WebSocket face `id` (a bounded number).
    pub(super) fn read_ws(&mut self, id: super::FaceId, sink: &mut impl FaceSink) {
        let now = sink.now_ms();
        let limit = self.cfg.malformed_limit;
        let mut close: Option<&'static str> = None;
        let mut more = false;
        let mut flush = false;
        {
            let Some(f) = self.faces.get_mut(&id) else {
                return;
            };
            let FaceIo::Ws(w) = &mut f.io else {
                return;
            };
            for i in 0..=MESSAGES_PER_TURN {
                if i == MESSAGES_PER_TURN {
                    more = true;
                    break;
                }
                let payload: Bytes = match w.ws.read() {
                    Ok(Message::Binary(b)) => b,
                    Ok(Message::Text(t)) => t.into(),
                    Ok(Message::Pong(_)) => {
                        w.ping_sent_ms = None;
                        continue;
                    }
                    // Answered by the next read, or by the flush if that one would block.
                    Ok(Message::Ping(_) | Message::Close(_) | Message::Frame(_)) => {
                        flush = true;
                        continue;
                    }
                    Err(Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(Error::Io(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let (why, status) = read_failure(&e);
                        if let Some(code) = status {
                            f.counters.malformed += 1;
                            let reason = why.into();
                            let _ = w.ws.close(Some(CloseFrame { code, reason }));
                        }
                        close = Some(why);
                        break;
                    }
                };
                f.last_rx_ms = now;
                let rx = FaceRx {
                    id,
                    local: f.local,
                    counters: &mut f.counters,
                    reassembler: None,
                };
                if sink.receive(rx, &payload, now) && f.counters.malformed >= limit {
                    close = Some("too many malformed packets");
                    break;
                }
            }
            if flush && close.is_none() && !w.dirty {
                w.dirty = true;
                self.dirty.push(id);
            }
        }
        if let Some(why) = close {
            self.close(id, why, sink);
        } else if more {
            self.pending_next.push(Token(FACE_BASE + id as usize));
        }
    }

    /// Queues one packet as a binary message on WebSocket face `w` of face `id`; false if its
    /// write buffer has no room (or the connection is closing).
    #[inline]
    pub(super) fn queue_ws(w: &mut WsIo, bytes: &[u8]) -> bool {
        w.stage.extend_from_slice(bytes);
        let payload = w.stage.split().freeze();
        match w.ws.write(Message::Binary(payload)) {
            Ok(()) => true,
            // Buffered; the rest goes out when the socket takes it.
            Err(Error::Io(e)) => e.kind() == io::ErrorKind::WouldBlock,
            Err(_) => false,
        }
    }

    /// Writes what WebSocket face `id` has buffered; closes it if the connection is gone.
    pub(super) fn flush_ws(&mut self, id: super::FaceId, sink: &mut impl FaceSink) {
        let mut failed = None;
        {
            let Some(f) = self.faces.get_mut(&id) else {
                return;
            };
            let FaceIo::Ws(w) = &mut f.io else {
                return;
            };
            w.dirty = false;
            let want = match w.ws.flush() {
                Ok(()) => {
                    w.queued_bytes = 0;
                    false
                }
                Err(Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => true,
                Err(Error::ConnectionClosed | Error::AlreadyClosed) => {
                    failed = Some("closed by peer");
                    false
                }
                Err(_) => {
                    failed = Some("write error");
                    false
                }
            };
            if f.options.congestion_marking {
                let fd = w.ws.get_ref().tcp_ref().as_raw_fd();
                f.kernel_queue_bytes = kernel_send_queue(fd, true);
            }
            if failed.is_none() && want != w.want_write {
                w.want_write = want;
                let interest = if want {
                    Interest::READABLE | Interest::WRITABLE
                } else {
                    Interest::READABLE
                };
                let token = Token(FACE_BASE + id as usize);
                let _ = self
                    .registry
                    .reregister(w.ws.get_mut().tcp(), token, interest);
            }
        }
        if let Some(why) = failed {
            self.close(id, why, sink);
        }
    }

    /// Once a second: drops the handshakes past their time, pings the WebSocket faces due a
    /// ping and closes those whose pong is late.
    pub(super) fn sweep_ws(&mut self, now: u64, sink: &mut impl FaceSink) {
        let hs = &mut self.handshakes;
        for slot in hs.slots.iter_mut() {
            if slot
                .as_ref()
                .is_some_and(|p| now.saturating_sub(p.started_ms) > WS_HANDSHAKE_TIMEOUT_MS)
            {
                if let Some(mut p) = slot.take() {
                    let _ = self.registry.deregister(p.mid.get_mut().get_mut().tcp());
                    hs.counters.handshakes_timed_out += 1;
                }
            }
        }
        let mut late = Vec::new();
        for f in self.faces.values_mut() {
            let FaceIo::Ws(w) = &mut f.io else {
                continue;
            };
            match w.ping_sent_ms {
                Some(t) if now.saturating_sub(t) > WS_PONG_TIMEOUT_MS => late.push(f.id),
                None if now.saturating_sub(w.last_ping_ms) >= WS_PING_INTERVAL_MS => {
                    w.last_ping_ms = now;
                    w.ping_sent_ms = Some(now);
                    let _ = w.ws.write(Message::Ping(Bytes::from_static(PING_PAYLOAD)));
                    if !w.dirty {
                        w.dirty = true;
                        self.dirty.push(f.id);
                    }
                }
                _ => {}
            }
        }
        for id in late {
            self.close(id, "pong timeout", sink);
        }
    }
}

/// Queues one packet on WebSocket face `f` (marked if its queue is congested, see
/// `congestion`), counted; true if the face is to be put in the table's list of faces to
/// flush (it was not in it).
#[inline]
pub(super) fn send_ws(
    f: &mut super::Face,
    (kind, bytes): (super::PacketKind, &[u8]),
    mark_buf: &mut Vec<u8>,
    capacity_bytes: usize,
    now_ns: u64,
) -> bool {
    let FaceIo::Ws(w) = &mut f.io else {
        return false;
    };
    let queue = (w.queued_bytes + f.kernel_queue_bytes, capacity_bytes);
    let marker = (&f.options, &mut f.marker);
    let bytes = marked(marker, queue, now_ns, &mut f.counters, mark_buf, bytes);
    if !FaceTable::queue_ws(w, bytes) {
        f.counters.drop_queue_full += 1;
        return false;
    }
    w.queued_bytes += bytes.len();
    f.counters.count_out(kind, bytes.len());
    !std::mem::replace(&mut w.dirty, true)
}

/// Sends a close frame (status 1000, as NFD's "closed by NFD") on a face being closed, as far
/// as the socket takes it without blocking.
pub(super) fn close_ws(w: &mut WsIo) {
    let _ = w.ws.close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: "closed".into(),
    }));
    close_tls(w.ws.get_mut());
}
