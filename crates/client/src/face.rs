//! [`Face`]: one blocking connection to a forwarder, and the consumer side on top of it
//! ([`Face::express`], [`Consumer`]).
//!
//! **Sending.** A packet without NDNLPv2 headers goes out bare; with headers (a PitToken on a
//! Data, a Nack) it is wrapped in an LpPacket. On UDP, [`::face::Fragmenter`] cuts packets larger
//! than the face's MTU into NDNLPv2 fragments.
//!
//! **Receiving.** [`Face::recv`] waits up to a timeout for the next whole network packet. Stream
//! bytes are framed by a [`::face::StreamFramer`] (fixed buffer, 8800-byte packets); LpPackets go
//! through a [`::face::Reassembler`] (datagrams may be fragments), and their header fields come
//! with the packet: an Interest in an LpPacket with a Nack header is a [`NackPacket`]. A packet
//! that does not decode is counted ([`FaceCounters::malformed`]) and skipped, as NFD does; a
//! stream that cannot be framed is an error (the connection is unusable).

use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::ops::Range;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use face::{Fragmenter, LpHeaders, PitToken, Reassembler, StreamFramer};
use wire::data::content_type;
use wire::lp::Nack;
use wire::{
    sha256, tt, Component, DataView, Interest, InterestView, Limits, NackReason, Name, PacketView,
};

use crate::error::{Error, Result};
use crate::transport::TransportUri;

/// Default MTU of a UDP face: an Ethernet frame less IPv6 and UDP headers. Larger packets are
/// sent as NDNLPv2 fragments.
pub const DEFAULT_UDP_MTU: usize = 1452;

/// Receive buffer asked for on UDP faces, in bytes (the kernel caps it at `net.core.rmem_max`):
/// a full window of fragmented Data arrives in a burst, and the default buffer (about 200 KiB)
/// drops most of it.
pub const UDP_RECV_BUFFER_BYTES: usize = 4 << 20;

/// Largest datagram a UDP face receives.
const UDP_RECV_BUFFER: usize = 65_536;

/// Default limit on Interests a [`Consumer`] keeps outstanding.
pub const DEFAULT_MAX_OUTSTANDING: usize = 4096;

/// What a face has done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceCounters {
    /// Network packets sent (before fragmentation).
    pub sent_packets: u64,
    /// Bytes sent on the socket.
    pub sent_bytes: u64,
    /// Whole network packets received.
    pub received_packets: u64,
    /// Bytes received on the socket.
    pub received_bytes: u64,
    /// Received packets (or fragments) that did not decode and were skipped.
    pub malformed: u64,
    /// Data a UDP face marked itself (NDNLPv2 CongestionMark) because its socket's receive
    /// queue was congested.
    pub self_marked: u64,
    /// NDNLPv2 Acks a UDP face sent for the TxSequences it received (a forwarder numbers what
    /// it sends to a remote whose address it has not yet seen proven; the Ack proves it).
    pub acks_sent: u64,
}

enum Link {
    Unix(UnixStream),
    Tcp(TcpStream),
    Udp(UdpSocket),
}

/// The stream side of a link, for the framer.
enum StreamRef<'a> {
    Unix(&'a mut UnixStream),
    Tcp(&'a mut TcpStream),
}

impl Read for StreamRef<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            StreamRef::Unix(s) => s.read(buf),
            StreamRef::Tcp(s) => s.read(buf),
        }
    }
}

/// A received Interest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterestPacket {
    /// The Interest, decoded.
    pub interest: Interest,
    /// Its wire encoding, as received.
    pub wire: Vec<u8>,
    /// The NDNLPv2 PitToken that came with it; echo it on the answer ([`Face::put_data`]).
    pub pit_token: Option<PitToken>,
    /// NDNLPv2 IncomingFaceId, if the forwarder sent one.
    pub incoming_face_id: Option<u64>,
}

/// A received Data packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataPacket {
    /// Its wire encoding, as received.
    pub wire: Vec<u8>,
    /// Its name.
    pub name: Name,
    /// Where the Content value lies in `wire` (empty when there is none).
    pub content_range: Range<usize>,
    /// MetaInfo FinalBlockId.
    pub final_block_id: Option<Component>,
    /// MetaInfo FreshnessPeriod, in milliseconds.
    pub freshness_ms: Option<u64>,
    /// MetaInfo ContentType, as carried (absent means BLOB).
    pub content_type: Option<u64>,
    /// NDNLPv2 CongestionMark, if the forwarder marked it.
    pub congestion_mark: Option<u64>,
    /// NDNLPv2 PitToken that came with it.
    pub pit_token: Option<PitToken>,
    /// True when the Data is signed DigestSha256 and the digest is right.
    pub digest_valid: bool,
}

impl DataPacket {
    /// The Content value.
    pub fn content(&self) -> &[u8] {
        &self.wire[self.content_range.clone()]
    }

    /// The Segment number of the last name component, if it is a Segment component.
    pub fn segment(&self) -> Option<u64> {
        segment_number(self.name.components.last()?)
    }

    /// The FinalBlockId as a Segment number, if it is a Segment component.
    pub fn final_segment(&self) -> Option<u64> {
        segment_number(self.final_block_id.as_ref()?)
    }

    /// Is it an application-level Nack (ContentType NACK, NDN packet format 0.3): the
    /// producer's answer that it has no such Data?
    pub fn is_application_nack(&self) -> bool {
        self.content_type == Some(content_type::NACK)
    }

    fn from_view(d: &DataView<'_>, headers: &LpHeaders) -> Self {
        let wire = d.wire().to_vec();
        let content_range = match d.content() {
            Some(c) => {
                // Both slices borrow the same buffer: the content starts this far into it.
                let start = c.as_ptr() as usize - d.wire().as_ptr() as usize;
                start..start + c.len()
            }
            None => 0..0,
        };
        DataPacket {
            name: d.name().to_name(),
            content_range,
            final_block_id: d.final_block_id().map(|c| c.to_component()),
            freshness_ms: d.freshness_ms(),
            content_type: d.content_type(),
            congestion_mark: headers.congestion_mark,
            pit_token: headers.pit_token,
            digest_valid: d.verify_digest_sha256(),
            wire,
        }
    }
}

/// The Segment number of a Segment component.
pub fn segment_number(c: &Component) -> Option<u64> {
    (u32::from(c.typ) == tt::SEGMENT).then(|| c.as_number())?
}

/// A received Nack: the Nacked Interest and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NackPacket {
    /// The Interest that was Nacked (as the forwarder returned it).
    pub interest: Interest,
    /// The NackReason; `None` when the Nack header carried none.
    pub reason: Option<NackReason>,
    /// NDNLPv2 PitToken that came with it.
    pub pit_token: Option<PitToken>,
}

/// A network packet received on a face.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// An Interest (for a producer).
    Interest(InterestPacket),
    /// A Data packet.
    Data(DataPacket),
    /// A Nack.
    Nack(NackPacket),
}

/// How an expressed Interest ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A Data packet satisfied it.
    Data(DataPacket),
    /// It was Nacked.
    Nack(NackPacket),
    /// Its lifetime ran out without an answer.
    Timeout,
}

/// Does a Data named `data_name` (whose encoding is `data_wire`) satisfy an Interest for
/// `interest_name`? Exact match, prefix match with CanBePrefix, or full-name match through an
/// ImplicitSha256Digest last component.
pub fn satisfies(
    interest_name: &Name,
    can_be_prefix: bool,
    data_name: &Name,
    data_wire: &[u8],
) -> bool {
    if interest_name == data_name || (can_be_prefix && interest_name.is_prefix_of(data_name)) {
        return true;
    }
    match interest_name.components.last() {
        Some(last)
            if u32::from(last.typ) == tt::IMPLICIT_SHA256_DIGEST
                && interest_name.len() == data_name.len() + 1
                && interest_name.components[..data_name.len()] == data_name.components[..] =>
        {
            last.value == sha256(&[data_wire])
        }
        _ => false,
    }
}

/// A blocking face to a forwarder. See the [module docs](self).
pub struct Face {
    link: Link,
    remote: String,
    framer: Option<StreamFramer>,
    udp_buf: Vec<u8>,
    fragmenter: Option<Fragmenter>,
    reassembler: Reassembler,
    epoch: Instant,
    limits: Limits,
    counters: FaceCounters,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Face {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Face")
            .field("remote", &self.remote)
            .field("counters", &self.counters)
            .finish()
    }
}

impl Face {
    /// Connects to the forwarder at `uri` (for TCP, each resolved address in turn).
    pub fn connect(uri: &TransportUri) -> Result<Face> {
        let what = format!("cannot connect to {uri}");
        match uri {
            TransportUri::Unix(path) => {
                let s = UnixStream::connect(path).map_err(|e| Error::io(what, e))?;
                Ok(Face::from_unix_stream(s, uri.to_string()))
            }
            TransportUri::Tcp { .. } => {
                let mut last = None;
                for a in uri.socket_addrs()? {
                    match TcpStream::connect(a) {
                        Ok(s) => {
                            let _ = s.set_nodelay(true);
                            return Ok(Face::from_tcp_stream(s, uri.to_string()));
                        }
                        Err(e) => last = Some(e),
                    }
                }
                Err(Error::io(
                    what,
                    last.unwrap_or_else(|| io::Error::other("no address")),
                ))
            }
            TransportUri::Udp { .. } => {
                let addr = uri.socket_addrs()?[0];
                let local = if addr.is_ipv4() {
                    "0.0.0.0:0"
                } else {
                    "[::]:0"
                };
                let s = UdpSocket::bind(local).map_err(|e| Error::io(what.clone(), e))?;
                s.connect(addr).map_err(|e| Error::io(what, e))?;
                Face::from_udp_socket(s, DEFAULT_UDP_MTU, uri.to_string())
            }
        }
    }

    fn with_link(link: Link, remote: String, framer: Option<StreamFramer>) -> Face {
        Face {
            link,
            remote,
            framer,
            udp_buf: Vec::new(),
            fragmenter: None,
            reassembler: Reassembler::default(),
            epoch: Instant::now(),
            limits: Limits::default(),
            counters: FaceCounters::default(),
            scratch: Vec::new(),
        }
    }

    /// A face on an already connected Unix stream (`remote` names it in messages). Tests use
    /// one end of [`UnixStream::pair`].
    pub fn from_unix_stream(s: UnixStream, remote: impl Into<String>) -> Face {
        Face::with_link(Link::Unix(s), remote.into(), Some(StreamFramer::default()))
    }

    /// A face on an already connected TCP stream.
    pub fn from_tcp_stream(s: TcpStream, remote: impl Into<String>) -> Face {
        Face::with_link(Link::Tcp(s), remote.into(), Some(StreamFramer::default()))
    }

    /// A face on a connected UDP socket sending datagrams of at most `mtu` bytes.
    pub fn from_udp_socket(s: UdpSocket, mtu: usize, remote: impl Into<String>) -> Result<Face> {
        let mut seq = [0u8; 8];
        crate::fill_random(&mut seq);
        let frag = Fragmenter::new(mtu, u64::from_be_bytes(seq))
            .map_err(|e| Error::Config(format!("UDP MTU {mtu}: {e}")))?;
        // Best effort: a smaller buffer only costs losses, which the consumer recovers from.
        let _ = set_recv_buffer(&s, UDP_RECV_BUFFER_BYTES);
        let mut f = Face::with_link(Link::Udp(s), remote.into(), None);
        f.fragmenter = Some(frag);
        f.udp_buf = vec![0u8; UDP_RECV_BUFFER];
        Ok(f)
    }

    /// The transport this face was made for, as text.
    pub fn remote(&self) -> &str {
        &self.remote
    }

    /// The counters so far.
    pub fn counters(&self) -> FaceCounters {
        self.counters
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Sends one network packet (an encoded Interest or Data) with NDNLPv2 `headers` (none: the
    /// packet goes out bare).
    pub fn send_packet(&mut self, packet: &[u8], headers: &LpHeaders) -> Result<()> {
        let sent = match &mut self.link {
            Link::Udp(s) => {
                let Some(frag) = self.fragmenter.as_mut() else {
                    return Err(Error::Protocol("UDP face without fragmenter".into()));
                };
                let mut err = None;
                let mut bytes = 0u64;
                frag.fragment_with(packet, headers, |d| {
                    if err.is_none() {
                        match s.send(d) {
                            Ok(n) => bytes += n as u64,
                            Err(e) => err = Some(e),
                        }
                    }
                })
                .map_err(|e| {
                    Error::Config(format!("cannot send a {}-byte packet: {e}", packet.len()))
                })?;
                if let Some(e) = err {
                    return Err(Error::io(format!("send to {}", self.remote), e));
                }
                bytes
            }
            link => {
                let out: &[u8] = if headers.is_empty() {
                    packet
                } else {
                    face::link::encode_link(&mut self.scratch, headers, packet, usize::MAX);
                    &self.scratch
                };
                if out.len() > wire::MAX_NDN_PACKET_BYTES {
                    return Err(Error::Config(format!(
                        "packet of {} bytes exceeds the {}-byte limit of stream faces",
                        out.len(),
                        wire::MAX_NDN_PACKET_BYTES
                    )));
                }
                let r = match link {
                    Link::Unix(s) => s.write_all(out),
                    Link::Tcp(s) => s.write_all(out),
                    Link::Udp(_) => Ok(()),
                };
                r.map_err(|e| match e.kind() {
                    io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => Error::Closed,
                    _ => Error::io(format!("send to {}", self.remote), e),
                })?;
                out.len() as u64
            }
        };
        self.counters.sent_packets += 1;
        self.counters.sent_bytes += sent;
        Ok(())
    }

    /// Sends an Interest (bare). Returns its encoding.
    pub fn send_interest(&mut self, interest: &Interest) -> Result<Vec<u8>> {
        let w = interest.to_wire();
        self.send_packet(&w, &LpHeaders::default())?;
        Ok(w)
    }

    /// Sends an encoded Data packet answering an Interest that carried `pit_token` (echoed in an
    /// LpPacket, as NDNLPv2 requires; `None` sends the Data bare).
    pub fn put_data(&mut self, data: &[u8], pit_token: Option<PitToken>) -> Result<()> {
        let headers = LpHeaders {
            pit_token,
            ..LpHeaders::default()
        };
        self.send_packet(data, &headers)
    }

    /// Nacks a received Interest with `reason` (`None`: a Nack without a reason, as ndn-cxx's
    /// `lp::Nack(interest)`), echoing its PitToken.
    pub fn put_nack(
        &mut self,
        interest: &InterestPacket,
        reason: impl Into<Option<NackReason>>,
    ) -> Result<()> {
        let headers = LpHeaders {
            pit_token: interest.pit_token,
            nack: Some(Nack {
                reason: reason.into(),
            }),
            ..LpHeaders::default()
        };
        self.send_packet(&interest.wire, &headers)
    }

    /// Waits up to `timeout` for the next network packet; `Ok(None)` when none came in time.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<Received>> {
        self.recv_until(Instant::now() + timeout)
    }

    /// Waits until `deadline` for the next network packet; `Ok(None)` when none came in time.
    ///
    /// Each turn of the loop either returns a packet, skips one undecodable packet, or makes one
    /// read bounded by the time left, so the loop ends by the deadline.
    pub fn recv_until(&mut self, deadline: Instant) -> Result<Option<Received>> {
        loop {
            if let Some(r) = self.next_buffered()? {
                return Ok(Some(r));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            // A zero read timeout means "block forever": wait at least a millisecond.
            let wait = (deadline - now).max(Duration::from_millis(1));
            let remote = &self.remote;
            let io_err = |e: io::Error| Error::io(format!("receive from {remote}"), e);
            let n = match &mut self.link {
                Link::Udp(s) => {
                    s.set_read_timeout(Some(wait)).map_err(io_err)?;
                    match s.recv(&mut self.udp_buf) {
                        Ok(n) => {
                            self.counters.received_bytes += n as u64;
                            if ack_tx_sequence(s, &self.udp_buf[..n], &mut self.scratch) {
                                self.counters.acks_sent += 1;
                            }
                            let now_ms = self.epoch.elapsed().as_millis() as u64;
                            match decode_incoming(
                                &self.udp_buf[..n],
                                &mut self.reassembler,
                                now_ms,
                                &self.limits,
                            ) {
                                Ok(Some(mut r)) => {
                                    self.counters.received_packets += 1;
                                    if let Received::Data(d) = &mut r {
                                        if d.congestion_mark.is_none() && rx_congested(s) {
                                            d.congestion_mark = Some(1);
                                            self.counters.self_marked += 1;
                                        }
                                    }
                                    return Ok(Some(r));
                                }
                                Ok(None) => {}
                                Err(_) => self.counters.malformed += 1,
                            }
                            continue;
                        }
                        Err(e) => Err(e),
                    }
                }
                Link::Unix(s) => {
                    s.set_read_timeout(Some(wait)).map_err(io_err)?;
                    fill(&mut self.framer, StreamRef::Unix(s))
                }
                Link::Tcp(s) => {
                    s.set_read_timeout(Some(wait)).map_err(io_err)?;
                    fill(&mut self.framer, StreamRef::Tcp(s))
                }
            };
            match n {
                Ok(0) => return Err(Error::Closed),
                Ok(n) => self.counters.received_bytes += n as u64,
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock
                    | io::ErrorKind::TimedOut
                    | io::ErrorKind::Interrupted => {}
                    io::ErrorKind::ConnectionReset => return Err(Error::Closed),
                    _ => return Err(Error::io(format!("receive from {}", self.remote), e)),
                },
            }
        }
    }

    /// The next packet already in the stream buffer, skipping undecodable ones.
    fn next_buffered(&mut self) -> Result<Option<Received>> {
        let now_ms = self.now_ms();
        let Some(framer) = self.framer.as_mut() else {
            return Ok(None);
        };
        loop {
            match framer.next_packet() {
                Ok(Some(pkt)) => {
                    match decode_incoming(pkt, &mut self.reassembler, now_ms, &self.limits) {
                        Ok(Some(r)) => {
                            self.counters.received_packets += 1;
                            return Ok(Some(r));
                        }
                        Ok(None) => {}
                        Err(_) => self.counters.malformed += 1,
                    }
                }
                Ok(None) => return Ok(None),
                Err(e) => {
                    return Err(Error::Protocol(format!(
                        "stream from {} cannot be framed: {e}",
                        self.remote
                    )))
                }
            }
        }
    }

    /// Expresses one Interest (a Nonce is added if it has none) and waits for its outcome:
    /// Data, Nack, or timeout after the Interest's lifetime. Packets that do not answer it are
    /// dropped.
    pub fn express(&mut self, interest: &Interest) -> Result<Outcome> {
        let mut c = Consumer::new(self, 1);
        c.express(interest.clone())?;
        match c.next_outcome()? {
            Some((_, o)) => Ok(o),
            None => Ok(Outcome::Timeout),
        }
    }

    /// As [`Face::express`], but a Nack or a timeout is an error.
    pub fn fetch(&mut self, interest: &Interest) -> Result<DataPacket> {
        match self.express(interest)? {
            Outcome::Data(d) => Ok(d),
            Outcome::Nack(n) => Err(Error::Nack {
                name: interest.name.clone(),
                reason: n.reason,
            }),
            Outcome::Timeout => Err(Error::Timeout(format!("no Data for {}", interest.name))),
        }
    }
}

/// Asks for a receive buffer of `bytes` on `s` (SO_RCVBUF).
fn set_recv_buffer(s: &UdpSocket, bytes: usize) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: `s` owns a valid socket descriptor; the option value is a c_int that lives across
    // the call, passed with its exact size.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether the receive queue of UDP socket `s` holds more than a quarter of its buffer
/// (`SO_MEMINFO`). A UDP forwarder sees no queue of its own toward this face (the datagrams
/// wait in this socket, not in the forwarder's), so the face marks a Data it takes out of a
/// congested queue with a CongestionMark itself, as the link would: the consumer slows down
/// before the buffer overflows and datagrams are lost.
fn rx_congested(s: &UdpSocket) -> bool {
    use std::os::fd::AsRawFd;
    // SK_MEMINFO_RMEM_ALLOC and SK_MEMINFO_RCVBUF are the first two of the kernel's counters.
    let mut m = [0u32; 9];
    let mut len = std::mem::size_of_val(&m) as libc::socklen_t;
    // SAFETY: a valid descriptor, a buffer of `len` bytes the kernel fills at most.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MEMINFO,
            m.as_mut_ptr().cast(),
            &mut len,
        )
    };
    r == 0 && len >= 8 && m[0] > m[1] / 4
}

/// One read from a stream into the framer.
fn fill(framer: &mut Option<StreamFramer>, mut s: StreamRef<'_>) -> io::Result<usize> {
    match framer.as_mut() {
        Some(f) => f.fill_from(&mut s),
        None => Err(io::Error::other("stream face without framer")),
    }
}

/// If `datagram` is an LpPacket with a TxSequence, acknowledges it on `s` at once, in an IDLE
/// LpPacket (encoded in `scratch`): true if the Ack went out. A forwarder numbers what it sends
/// only until an Ack proves the address, so these are few.
fn ack_tx_sequence(s: &UdpSocket, datagram: &[u8], scratch: &mut Vec<u8>) -> bool {
    if datagram.first() != Some(&(wire::tt::LP_PACKET as u8)) {
        return false;
    }
    let limits = Limits {
        max_packet_bytes: datagram.len(),
        ..Limits::default()
    };
    let Some(tx) = wire::LpPacketView::decode(datagram, &limits)
        .ok()
        .and_then(|lp| lp.tx_sequence)
    else {
        return false;
    };
    let ack = wire::LpPacket {
        acks: vec![tx],
        ..wire::LpPacket::default()
    };
    scratch.clear();
    scratch.extend_from_slice(&ack.to_wire());
    s.send(scratch).is_ok()
}

/// Decodes one received element (or datagram) into a network packet, through the reassembler
/// for LpPackets. `Ok(None)`: a fragment was stored, or an IDLE LpPacket.
fn decode_incoming(
    buf: &[u8],
    reassembler: &mut Reassembler,
    now_ms: u64,
    limits: &Limits,
) -> core::result::Result<Option<Received>, String> {
    let lp = match PacketView::decode(buf, limits).map_err(|e| e.to_string())? {
        PacketView::Interest(i) => {
            return Ok(Some(Received::Interest(interest_packet(
                &i,
                &LpHeaders::default(),
            ))))
        }
        PacketView::Data(d) => {
            return Ok(Some(Received::Data(DataPacket::from_view(
                &d,
                &LpHeaders::default(),
            ))))
        }
        PacketView::Lp(lp) => lp,
    };
    let Some(r) = reassembler
        .receive(0, &lp, now_ms)
        .map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    let h = r.headers;
    match PacketView::decode_network(&r.packet, 0, limits).map_err(|e| e.to_string())? {
        PacketView::Interest(i) => Ok(Some(match h.nack {
            Some(n) => Received::Nack(NackPacket {
                interest: i.to_interest(),
                reason: n.reason,
                pit_token: h.pit_token,
            }),
            None => Received::Interest(interest_packet(&i, &h)),
        })),
        PacketView::Data(d) => Ok(Some(Received::Data(DataPacket::from_view(&d, &h)))),
        PacketView::Lp(_) => Err("LpPacket inside an LpPacket".into()),
    }
}

fn interest_packet(i: &InterestView<'_>, h: &LpHeaders) -> InterestPacket {
    InterestPacket {
        interest: i.to_interest(),
        wire: i.wire().to_vec(),
        pit_token: h.pit_token,
        incoming_face_id: h.incoming_face_id,
    }
}

// ---------------------------------------------------------------------------------------------
// Consumer
// ---------------------------------------------------------------------------------------------

fn is_digest_name(n: &Name) -> bool {
    n.components
        .last()
        .is_some_and(|c| u32::from(c.typ) == tt::IMPLICIT_SHA256_DIGEST)
}

#[derive(Debug)]
struct Pending {
    name: Name,
    can_be_prefix: bool,
    nonce: [u8; 4],
}

/// Many Interests outstanding on one face; answers come back in arrival order.
///
/// Interests are matched to Data by name (exact, CanBePrefix, or implicit digest) and to Nacks
/// by name and Nonce; an Interest whose lifetime runs out ends as [`Outcome::Timeout`]. At most
/// `max_outstanding` Interests are pending at once. Packets that answer nothing pending
/// (including Interests) are dropped.
pub struct Consumer<'f> {
    face: &'f mut Face,
    max_outstanding: usize,
    next_id: u64,
    pending: HashMap<u64, Pending>,
    by_name: HashMap<Name, Vec<u64>>,
    prefix_interests: usize,
    digest_interests: usize,
    deadlines: BinaryHeap<std::cmp::Reverse<(Instant, u64)>>,
    ready: VecDeque<(u64, Outcome)>,
}

impl<'f> Consumer<'f> {
    /// A consumer on `face` with at most `max_outstanding` (at least 1) pending Interests.
    pub fn new(face: &'f mut Face, max_outstanding: usize) -> Self {
        Consumer {
            face,
            max_outstanding: max_outstanding.max(1),
            next_id: 0,
            pending: HashMap::new(),
            by_name: HashMap::new(),
            prefix_interests: 0,
            digest_interests: 0,
            deadlines: BinaryHeap::new(),
            ready: VecDeque::new(),
        }
    }

    /// Interests pending (sent, not yet answered or timed out).
    pub fn outstanding(&self) -> usize {
        self.pending.len()
    }

    /// The face underneath.
    pub fn face(&mut self) -> &mut Face {
        self.face
    }

    /// Sends `interest` (adding a random Nonce if it has none) and returns its id, which
    /// [`Consumer::next_outcome`] reports with its outcome. Errors if `max_outstanding` are pending.
    pub fn express(&mut self, mut interest: Interest) -> Result<u64> {
        if self.pending.len() >= self.max_outstanding {
            return Err(Error::Config(format!(
                "{} Interests already outstanding (the limit)",
                self.max_outstanding
            )));
        }
        let nonce = *interest.nonce.get_or_insert_with(crate::random_nonce);
        let w = self.face.send_interest(&interest)?;
        // The name as encoded (with a ParametersSha256DigestComponent where there are parameters).
        let name = InterestView::decode(&w, &Limits::default())
            .map_err(|e| Error::Protocol(format!("Interest does not decode: {e}")))?
            .name()
            .to_name();
        let lifetime = interest
            .lifetime_ms
            .unwrap_or(wire::interest::DEFAULT_LIFETIME_MS);
        let deadline = Instant::now() + Duration::from_millis(lifetime);
        let id = self.next_id;
        self.next_id += 1;
        if interest.can_be_prefix {
            self.prefix_interests += 1;
        }
        if is_digest_name(&name) {
            self.digest_interests += 1;
        }
        self.by_name.entry(name.clone()).or_default().push(id);
        self.pending.insert(
            id,
            Pending {
                name,
                can_be_prefix: interest.can_be_prefix,
                nonce,
            },
        );
        self.deadlines.push(std::cmp::Reverse((deadline, id)));
        Ok(id)
    }

    fn remove(&mut self, id: u64) -> Option<Pending> {
        let p = self.pending.remove(&id)?;
        if p.can_be_prefix {
            self.prefix_interests -= 1;
        }
        if is_digest_name(&p.name) {
            self.digest_interests -= 1;
        }
        if let Some(v) = self.by_name.get_mut(&p.name) {
            v.retain(|&x| x != id);
            if v.is_empty() {
                self.by_name.remove(&p.name);
            }
        }
        Some(p)
    }

    /// Ids of pending Interests that `d` satisfies.
    fn matches(&self, d: &DataPacket) -> Vec<u64> {
        let mut out = Vec::new();
        let mut check = |key: &Name| {
            for id in self.by_name.get(key).into_iter().flatten() {
                let p = &self.pending[id];
                if satisfies(&p.name, p.can_be_prefix, &d.name, &d.wire) {
                    out.push(*id);
                }
            }
        };
        check(&d.name);
        if self.prefix_interests > 0 {
            for n in 0..d.name.len() {
                check(&d.name.prefix(n));
            }
        }
        // Full-name Interests (name + implicit digest).
        if self.digest_interests > 0 {
            let full = d
                .name
                .clone()
                .with(Component::implicit_digest(sha256(&[&d.wire])));
            check(&full);
        }
        out
    }

    /// Waits for the next outcome: `Ok(Some((id, outcome)))`, or `Ok(None)` when nothing is
    /// pending. Returns by the earliest pending deadline at the latest.
    pub fn next_outcome(&mut self) -> Result<Option<(u64, Outcome)>> {
        loop {
            if let Some(r) = self.ready.pop_front() {
                return Ok(Some(r));
            }
            // Expire, skipping heap entries of Interests already answered.
            let now = Instant::now();
            while let Some(std::cmp::Reverse((deadline, id))) = self.deadlines.peek().copied() {
                if !self.pending.contains_key(&id) {
                    self.deadlines.pop();
                    continue;
                }
                if deadline > now {
                    break;
                }
                self.deadlines.pop();
                self.remove(id);
                return Ok(Some((id, Outcome::Timeout)));
            }
            let Some(std::cmp::Reverse((deadline, _))) = self.deadlines.peek().copied() else {
                return Ok(None);
            };
            match self.face.recv_until(deadline)? {
                None => {}
                Some(Received::Data(d)) => {
                    let ids = self.matches(&d);
                    for id in ids {
                        self.remove(id);
                        self.ready.push_back((id, Outcome::Data(d.clone())));
                    }
                }
                Some(Received::Nack(n)) => {
                    let name = n.interest.name.clone();
                    let ids: Vec<u64> = self
                        .by_name
                        .get(&name)
                        .into_iter()
                        .flatten()
                        .copied()
                        .filter(|id| Some(self.pending[id].nonce) == n.interest.nonce)
                        .collect();
                    for id in ids {
                        self.remove(id);
                        self.ready.push_back((id, Outcome::Nack(n.clone())));
                    }
                }
                Some(Received::Interest(_)) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{Data, LpPacket};

    fn pair() -> (Face, Face) {
        let (a, b) = UnixStream::pair().unwrap();
        (
            Face::from_unix_stream(a, "a"),
            Face::from_unix_stream(b, "b"),
        )
    }

    fn name(s: &str) -> Name {
        Name::from_uri(s).unwrap()
    }

    fn data(n: &str, content: &[u8]) -> Vec<u8> {
        let mut d = Data::new(name(n), content.to_vec());
        d.sign_digest_sha256();
        d.to_wire()
    }

    const WAIT: Duration = Duration::from_secs(10);

    #[test]
    fn data_with_pit_token_and_congestion_mark_decodes() {
        let (mut a, mut b) = pair();
        let token = PitToken::new(&[1, 2, 3]).unwrap();
        let headers = LpHeaders {
            pit_token: Some(token),
            congestion_mark: Some(1),
            ..LpHeaders::default()
        };
        a.send_packet(&data("/x/y", b"hello"), &headers).unwrap();
        let Some(Received::Data(d)) = b.recv(WAIT).unwrap() else {
            panic!("expected Data")
        };
        assert_eq!(d.name, name("/x/y"));
        assert_eq!(d.content(), b"hello");
        assert_eq!(d.pit_token, Some(token));
        assert_eq!(d.congestion_mark, Some(1));
        assert!(d.digest_valid);
    }

    #[test]
    fn nack_decodes_with_reason() {
        let (mut a, mut b) = pair();
        let i = Interest::new(name("/n"), [5; 4]);
        // As a forwarder encodes it: an LpPacket with a Nack header around the Interest.
        let lp = LpPacket::nack(i.to_wire(), NackReason::NoRoute).to_wire();
        match &mut a.link {
            Link::Unix(s) => s.write_all(&lp).unwrap(),
            _ => unreachable!(),
        }
        let Some(Received::Nack(n)) = b.recv(WAIT).unwrap() else {
            panic!("expected Nack")
        };
        assert_eq!(n.reason, Some(NackReason::NoRoute));
        assert_eq!(n.interest.nonce, Some([5; 4]));
    }

    #[test]
    fn malformed_packets_are_skipped_and_counted() {
        let (a, mut b) = pair();
        let mut raw = match a.link {
            Link::Unix(s) => s,
            _ => unreachable!(),
        };
        // An element of type 0x05 whose value is junk, then a good Data.
        raw.write_all(&[0x05, 0x02, 0xFF, 0xFF]).unwrap();
        raw.write_all(&data("/ok", b"")).unwrap();
        let Some(Received::Data(d)) = b.recv(WAIT).unwrap() else {
            panic!("expected Data")
        };
        assert_eq!(d.name, name("/ok"));
        assert_eq!(b.counters().malformed, 1);
        // A closed peer is reported as such.
        drop(raw);
        assert!(matches!(b.recv(WAIT), Err(Error::Closed)));
    }

    #[test]
    fn recv_returns_none_when_nothing_comes() {
        let (_a, mut b) = pair();
        assert!(b.recv(Duration::ZERO).unwrap().is_none());
    }

    #[test]
    fn satisfies_rules() {
        let d = data("/a/b", b"x");
        assert!(satisfies(&name("/a/b"), false, &name("/a/b"), &d));
        assert!(!satisfies(&name("/a"), false, &name("/a/b"), &d));
        assert!(satisfies(&name("/a"), true, &name("/a/b"), &d));
        assert!(!satisfies(&name("/a/b/c"), true, &name("/a/b"), &d));
        let full = name("/a/b").with(Component::implicit_digest(sha256(&[&d])));
        assert!(satisfies(&full, false, &name("/a/b"), &d));
        let wrong = name("/a/b").with(Component::implicit_digest([0; 32]));
        assert!(!satisfies(&wrong, false, &name("/a/b"), &d));
    }

    #[test]
    fn consumer_matches_out_of_order_answers() {
        let (mut app, mut fwd) = pair();
        let mut c = Consumer::new(&mut app, 8);
        let mut ids = Vec::new();
        for n in ["/p/0", "/p/1", "/p/2"] {
            ids.push(c.express(Interest::new(name(n), [0; 4])).unwrap());
        }
        let mut prefix = Interest::new(name("/q"), [0; 4]);
        prefix.can_be_prefix = true;
        ids.push(c.express(prefix).unwrap());
        assert_eq!(c.outstanding(), 4);
        // The "forwarder" reads the four Interests, then answers out of order, with a Nack for
        // /p/1 and a Data nobody asked for.
        let mut got = Vec::new();
        for _ in 0..4 {
            let Some(Received::Interest(i)) = fwd.recv(WAIT).unwrap() else {
                panic!()
            };
            got.push(i);
        }
        fwd.put_data(&data("/unrelated", b""), None).unwrap();
        fwd.put_data(&data("/p/2", b"two"), None).unwrap();
        fwd.put_data(&data("/q/long/name", b"q"), None).unwrap();
        fwd.put_nack(&got[1], NackReason::Congestion).unwrap();
        fwd.put_data(&data("/p/0", b"zero"), None).unwrap();
        let mut outcomes = Vec::new();
        while let Some((id, o)) = c.next_outcome().unwrap() {
            outcomes.push((id, o));
            if outcomes.len() == 4 {
                break;
            }
        }
        assert_eq!(c.outstanding(), 0);
        let kind = |o: &Outcome| match o {
            Outcome::Data(d) => d.name.to_string(),
            Outcome::Nack(n) => format!("nack {:?}", n.reason),
            Outcome::Timeout => "timeout".into(),
        };
        let seen: Vec<(u64, String)> = outcomes.iter().map(|(i, o)| (*i, kind(o))).collect();
        assert_eq!(
            seen,
            vec![
                (ids[2], "/p/2".into()),
                (ids[3], "/q/long/name".into()),
                (ids[1], "nack Some(Congestion)".into()),
                (ids[0], "/p/0".into()),
            ]
        );
        assert!(c.next_outcome().unwrap().is_none());
    }

    #[test]
    fn consumer_limit_and_lifetime() {
        let (mut app, _fwd) = pair();
        let mut c = Consumer::new(&mut app, 1);
        let mut i = Interest::new(name("/t"), [0; 4]);
        i.lifetime_ms = Some(0);
        let id = c.express(i.clone()).unwrap();
        assert!(c
            .express(i)
            .unwrap_err()
            .to_string()
            .contains("outstanding"));
        // A zero lifetime has already expired: the outcome is a timeout, without waiting.
        assert_eq!(c.next_outcome().unwrap(), Some((id, Outcome::Timeout)));
    }

    #[test]
    fn udp_faces_acknowledge_tx_sequences() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        b.connect(a.local_addr().unwrap()).unwrap();
        let mut fa = Face::from_udp_socket(a, 1452, "a").unwrap();
        let d = data("/p", b"x");
        let numbered = LpPacket {
            tx_sequence: Some(0xfeed),
            fragment: Some(d.clone()),
            ..LpPacket::default()
        };
        b.send(&numbered.to_wire()).unwrap();
        b.send(&d).unwrap(); // bare: nothing to acknowledge
        for _ in 0..2 {
            assert!(matches!(fa.recv(WAIT).unwrap(), Some(Received::Data(r)) if r.wire == d));
        }
        assert_eq!(fa.counters().acks_sent, 1);
        let mut buf = [0u8; 64];
        b.set_read_timeout(Some(WAIT)).unwrap();
        let n = b.recv(&mut buf).unwrap();
        let lp = wire::LpPacketView::decode(&buf[..n], &Limits::default()).unwrap();
        assert_eq!(lp.acks().collect::<Vec<_>>(), vec![0xfeed]);
        assert!(lp.fragment().is_none(), "an IDLE packet");
    }

    #[test]
    fn big_packets_are_fragmented_on_udp() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        b.connect(a.local_addr().unwrap()).unwrap();
        let mut fa = Face::from_udp_socket(a, 600, "a").unwrap();
        let mut fb = Face::from_udp_socket(b, 600, "b").unwrap();
        let big = data("/big", &[7u8; 5000]);
        let token = PitToken::new(&[9; 8]).unwrap();
        fa.put_data(&big, Some(token)).unwrap();
        let Some(Received::Data(d)) = fb.recv(WAIT).unwrap() else {
            panic!("expected Data")
        };
        assert_eq!(d.wire, big);
        assert_eq!(d.pit_token, Some(token));
        assert!(fa.counters().sent_bytes > 5000);
        assert_eq!(fb.counters().received_packets, 1);
    }

    /// SO_RCVBUF as the kernel reports it.
    fn recv_buffer(s: &UdpSocket) -> usize {
        use std::os::fd::AsRawFd;
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: valid descriptor; `v` and `len` outlive the call and describe a c_int.
        let r = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!(r, 0);
        v as usize
    }

    #[test]
    fn udp_faces_ask_for_a_large_receive_buffer() {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        set_recv_buffer(&s, UDP_RECV_BUFFER_BYTES).unwrap();
        // Linux doubles the value asked for, capped at net.core.rmem_max.
        let rmem_max: usize = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(recv_buffer(&s), 2 * UDP_RECV_BUFFER_BYTES.min(rmem_max));
    }

    /// A UDP socket whose queue holds more than a quarter of its buffer is congested.
    #[test]
    fn a_full_udp_receive_queue_is_congested() {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        set_recv_buffer(&s, 65_536).unwrap();
        let to = s.local_addr().unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(!rx_congested(&s));
        tx.send_to(&[1u8; 100], to).unwrap();
        assert!(!rx_congested(&s));
        for _ in 0..40 {
            let _ = tx.send_to(&[1u8; 1400], to);
        }
        assert!(rx_congested(&s));
    }

    #[test]
    fn oversize_stream_packets_are_refused() {
        let (mut a, _b) = pair();
        let e = a.send_packet(&data("/big", &[0u8; 9000]), &LpHeaders::default());
        assert!(e.unwrap_err().to_string().contains("8800"));
    }
}
