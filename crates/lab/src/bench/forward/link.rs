//! One end of a generator's link: a UDP socket, a Unix stream or a WebSocket connection,
//! non-blocking and batched (`recvmmsg`/`sendmmsg` for UDP, large reads and coalesced writes
//! for streams).

use std::io::{self, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

use face::stream::StreamFramer;
use face::udp::UdpBatch;

use super::ws_link::WsLink;

/// One end of a link: UDP socket, Unix stream or WebSocket, non-blocking, batched.
pub(super) enum Link {
    Udp {
        batch: UdpBatch,
        peer: SocketAddr,
        stage: Vec<u8>,
        staged: Vec<(usize, usize)>,
    },
    Stream {
        sock: UnixStream,
        framer: StreamFramer,
        out: Vec<u8>,
        out_pos: usize,
    },
    Ws(Box<WsLink>),
}

impl Link {
    fn udp_on(s: UdpSocket, peer: SocketAddr) -> io::Result<Link> {
        s.set_nonblocking(true)?;
        // The router's buffers: a window of datagrams that arrive at once fits.
        face::table::set_socket_buffers(&s);
        Ok(Link::Udp {
            batch: UdpBatch::with_capacity(s, 64, 9000)?,
            peer,
            stage: Vec::with_capacity(64 * 9000),
            staged: Vec::with_capacity(64),
        })
    }

    pub(super) fn udp(peer: SocketAddr) -> io::Result<Link> {
        Link::udp_on(UdpSocket::bind("127.0.0.1:0")?, peer)
    }

    pub(super) fn udp_pair() -> io::Result<(Link, Link)> {
        let a = UdpSocket::bind("127.0.0.1:0")?;
        let b = UdpSocket::bind("127.0.0.1:0")?;
        let (aa, ba) = (a.local_addr()?, b.local_addr()?);
        Ok((Link::udp_on(a, ba)?, Link::udp_on(b, aa)?))
    }

    pub(super) fn stream(sock: UnixStream) -> io::Result<Link> {
        sock.set_nonblocking(true)?;
        Ok(Link::Stream {
            sock,
            framer: StreamFramer::new(wire::MAX_NDN_PACKET_BYTES, 256 * 1024),
            out: Vec::with_capacity(1 << 20),
            out_pos: 0,
        })
    }

    pub(super) fn fd(&self) -> RawFd {
        match self {
            Link::Udp { batch, .. } => batch.socket().as_raw_fd(),
            Link::Stream { sock, .. } => sock.as_raw_fd(),
            Link::Ws(w) => w.fd(),
        }
    }

    /// Queues one packet (sent by [`Link::flush`]).
    pub(super) fn queue(&mut self, pkt: &[u8]) -> io::Result<()> {
        match self {
            Link::Udp { staged, .. } if staged.len() >= 64 => {
                self.flush()?;
                self.queue(pkt)?;
            }
            Link::Udp { stage, staged, .. } => {
                staged.push((stage.len(), pkt.len()));
                stage.extend_from_slice(pkt);
            }
            Link::Stream { out, .. } => out.extend_from_slice(pkt),
            Link::Ws(w) => w.queue(pkt)?,
        }
        Ok(())
    }

    pub(super) fn flush(&mut self) -> io::Result<()> {
        match self {
            Link::Udp {
                batch,
                peer,
                stage,
                staged,
            } => {
                let mut start = 0;
                while start < staged.len() {
                    let items: Vec<(&[u8], SocketAddr)> = staged[start..]
                        .iter()
                        .map(|&(o, l)| (&stage[o..o + l], *peer))
                        .collect();
                    match batch.send_batch(&items) {
                        Ok(n) => start += n.max(1),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            wait_fd(batch.socket().as_raw_fd(), libc::POLLOUT, 10);
                        }
                        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => start += 1,
                        Err(e) => return Err(e),
                    }
                }
                stage.clear();
                staged.clear();
            }
            Link::Stream {
                sock, out, out_pos, ..
            } => {
                while *out_pos < out.len() {
                    match sock.write(&out[*out_pos..]) {
                        Ok(n) => *out_pos += n,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                if *out_pos == out.len() {
                    out.clear();
                    *out_pos = 0;
                }
            }
            Link::Ws(w) => w.flush()?,
        }
        Ok(())
    }

    pub(super) fn pending_out(&self) -> bool {
        match self {
            Link::Udp { staged, .. } => !staged.is_empty(),
            Link::Stream { out, out_pos, .. } => *out_pos < out.len(),
            Link::Ws(w) => w.pending_out(),
        }
    }

    /// Reads what is there (bounded) and calls `f` with each packet; returns how many.
    pub(super) fn recv(&mut self, mut f: impl FnMut(&[u8])) -> io::Result<usize> {
        let mut n = 0;
        match self {
            Link::Udp { batch, .. } => {
                for _ in 0..4 {
                    match batch.recv_batch() {
                        Ok(k) => {
                            for i in 0..k {
                                f(batch.datagram(i).0);
                            }
                            n += k;
                            if k < batch.batch() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => break,
                        Err(e) => return Err(e),
                    }
                }
            }
            Link::Stream { sock, framer, .. } => {
                for _ in 0..4 {
                    match framer.fill_from(sock) {
                        Ok(0) => {
                            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed"))
                        }
                        Ok(_) => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e),
                    }
                    while let Some(p) = framer
                        .next_packet()
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
                    {
                        f(p);
                        n += 1;
                    }
                }
            }
            Link::Ws(w) => n += w.recv(&mut f)?,
        }
        Ok(n)
    }
}

pub(super) fn wait_fd(fd: RawFd, events: libc::c_short, timeout_ms: i32) {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe {
        libc::poll(&mut p, 1, timeout_ms);
    }
}

pub(super) fn wait_any(fds: &[RawFd], timeout_ms: i32) {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: a valid array of pollfds.
    unsafe {
        libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms);
    }
}
