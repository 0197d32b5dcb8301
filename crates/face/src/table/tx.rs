//! Sending: the per-face send queues, fragmentation, batched writes.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use mio::{Interest, Token};

use super::congestion::{kernel_send_queue, marked, send_buffer_bytes, threshold_bytes, Marker};
use super::on_demand::unproven_may_send;
use super::{
    FaceCounters, FaceId, FaceIo, FaceSink, FaceTable, LinkOptions, PacketKind, FACE_BASE,
};
use crate::link::{append_marked, split_link, Split, MARK_OVERHEAD};
use crate::lp_frag::Fragmenter;
use crate::udp::{Segments, UdpBatch, MAX_SEGMENTED_BYTES, MAX_SEGMENTS};
use crate::udp_ring::UdpRing;

/// A UDP socket and the datagrams staged for its next `sendmmsg`.
pub(super) struct UdpSock {
    /// Receives in place of `batch` if set (declared first: it goes before the socket).
    pub(super) ring: Option<UdpRing>,
    pub(super) batch: UdpBatch,
    pub(super) local: SocketAddr,
    /// Accepts datagrams from unknown remotes (creates on-demand faces).
    pub(super) listener: bool,
    /// The multicast face every datagram this socket receives belongs to, whatever its source.
    pub(super) multicast: Option<FaceId>,
    stage: Vec<u8>,
    staged: Vec<(u32, u32, SocketAddr)>,
    max_stage: usize,
    drops: u64,
    /// Runs of datagrams to one remote go out segmented (`UDP_SEGMENT`) until the kernel
    /// refuses one.
    gso: bool,
    /// The staged datagrams in sending order (grouped by remote), and the messages cut from
    /// them: reused by every flush.
    order: Vec<u32>,
    runs: Vec<Segments>,
    /// The socket's send buffer (`SO_SNDBUF`): the capacity its faces' congestion marking
    /// takes; what the kernel held in it at the last reading (`SIOCOUTQ`), the bytes sent
    /// since, and the flushes made and the one of the last reading (see [`mark_udp`]).
    sndbuf_bytes: usize,
    kernel_queue_bytes: usize,
    sent_unread_bytes: usize,
    flushes: u64,
    read_at_flush: u64,
}

impl UdpSock {
    /// Bytes staged for the next `sendmmsg`.
    pub(super) fn staged_bytes(&self) -> usize {
        self.stage.len()
    }

    /// A socket staging up to one batch of `mtu`-byte datagrams.
    pub(super) fn new(
        ring: Option<UdpRing>,
        batch: UdpBatch,
        local: SocketAddr,
        listener: bool,
        mtu: usize,
    ) -> Self {
        let n = batch.batch();
        let sndbuf_bytes = send_buffer_bytes(batch.socket().as_raw_fd()).unwrap_or(usize::MAX);
        UdpSock {
            ring,
            batch,
            local,
            listener,
            multicast: None,
            stage: Vec::with_capacity(n * mtu),
            staged: Vec::with_capacity(n),
            max_stage: n,
            drops: 0,
            gso: true,
            order: Vec::with_capacity(n),
            runs: Vec::with_capacity(n),
            sndbuf_bytes,
            kernel_queue_bytes: 0,
            sent_unread_bytes: 0,
            flushes: 0,
            read_at_flush: 0,
        }
    }

    /// Receives the next batch (the ring's, else one `recvmmsg`): how many datagrams
    /// [`UdpSock::datagram`] hands out.
    #[inline]
    pub(super) fn recv(&mut self) -> io::Result<usize> {
        match &mut self.ring {
            Some(r) => r.recv_batch(),
            None => self.batch.recv_batch(),
        }
    }

    /// Datagram `i` of the last batch, and its source.
    #[inline]
    pub(super) fn datagram(&self, i: usize) -> (&[u8], SocketAddr) {
        match &self.ring {
            Some(r) => r.datagram(i),
            None => self.batch.datagram(i),
        }
    }
}

impl FaceTable {
    /// Queues one link-layer packet on face `id`, one of this table's or a mirror of another
    /// table's ([`FaceTable::mirror_udp`]); false if there is no such face here. A packet its
    /// queue has no room for, or that cannot be cut into datagrams, is counted in
    /// `drop_queue_full`.
    #[inline]
    pub fn send(&mut self, id: FaceId, kind: PacketKind, bytes: &[u8]) -> bool {
        let Some(f) = self.faces.get_mut(&id) else {
            let Some(m) = self.mirrors.get_mut(&id) else {
                // An id of this table's slots with no face: an old generation, or a face gone.
                self.ids.sent_to_closed += u64::from(self.ids.owns(id));
                return false;
            };
            let sock = &mut self.udp[m.socket];
            let (o, c, buf) = (&m.options, &mut m.counters, &mut self.mark_buf);
            let bytes = mark_udp(sock, (o, &mut m.marker), c, buf, bytes, self.now_ns);
            send_udp(sock, &mut m.frag, m.remote, &mut m.counters, kind, bytes);
            return true;
        };
        let now_ns = self.now_ns;
        f.last_tx_ms = now_ns / 1_000_000;
        match &mut f.io {
            FaceIo::Stream(s) => {
                let queued = s.out.len() - s.out_pos;
                let down = !self.down.is_empty() && self.down.contains_key(&id);
                if queued == 0 && f.kernel_queue_bytes > 0 {
                    // What the kernel held at the last flush may have gone since.
                    f.kernel_queue_bytes = s.kernel_queue();
                }
                let mark = marks(
                    &f.options,
                    &mut f.marker,
                    queued + f.kernel_queue_bytes,
                    self.cfg.send_queue_bytes,
                    now_ns,
                );
                let room = bytes.len() + if mark { MARK_OVERHEAD } else { 0 };
                if down || queued + room > self.cfg.send_queue_bytes {
                    f.counters.drop_queue_full += 1;
                    return true;
                }
                if self.queued_bytes + room > self.cfg.stream.send_queue_budget_bytes {
                    self.stream_counters.budget_refused += 1;
                    f.counters.drop_queue_full += 1;
                    return true;
                }
                if s.out_pos > 0 && s.out.len() + room > s.out.capacity() {
                    // Compact before growing.
                    s.out.drain(..s.out_pos);
                    s.out_pos = 0;
                }
                if queued == 0 {
                    self.dirty.push(id);
                }
                let n = match mark.then(|| append_marked(&mut s.out, bytes)).flatten() {
                    Some(n) => {
                        f.counters.congestion_marks += 1;
                        n
                    }
                    None => {
                        s.out.extend_from_slice(bytes);
                        bytes.len()
                    }
                };
                self.queued_bytes += n;
                f.counters.count_out(kind, n);
            }
            FaceIo::Ws(_) => {
                let cap = self.cfg.send_queue_bytes;
                if super::ws::send_ws(f, (kind, bytes), &mut self.mark_buf, cap, now_ns) {
                    self.dirty.push(id);
                }
            }
            FaceIo::Udp(u) => {
                let ratio = self.cfg.bounds.unproven_send_ratio;
                let unproven = f.quota && !u.proof.proven;
                if unproven && !unproven_may_send(&f.counters, bytes.len(), ratio) {
                    self.on_demand.counters.unproven_send_dropped += 1;
                    return true;
                }
                let sock = &mut self.udp[u.socket];
                let (o, c, buf) = (&f.options, &mut f.counters, &mut self.mark_buf);
                let mut bytes = mark_udp(sock, (o, &mut f.marker), c, buf, bytes, now_ns);
                let FaceIo::Udp(u) = &mut f.io else {
                    return true;
                };
                if unproven {
                    let face = (&mut u.proof, &mut f.counters);
                    let tag = u.rel.is_none();
                    let to = (&mut *sock, u.remote);
                    match self.unproven.admit(face, to, bytes, tag, now_ns) {
                        Some(b) => bytes = b,
                        None => return true,
                    }
                }
                match u.rel.as_mut() {
                    Some(r) => r.send(
                        sock,
                        u.remote,
                        &mut f.counters,
                        (kind, bytes, self.clock_ms),
                    ),
                    None => send_udp(sock, &mut u.frag, u.remote, &mut f.counters, kind, bytes),
                }
            }
            FaceIo::Ether(e) => {
                super::ether::send_ether(&mut self.ether, e, &mut f.counters, kind, bytes);
            }
        }
        true
    }

    /// Sends everything queued (as much as the sockets take; a stream face that would block is
    /// finished when its socket is writable again).
    pub fn flush(&mut self, sink: &mut impl FaceSink) {
        self.clock_ms = sink.now_ms();
        self.now_ns = self.clock_ms.saturating_mul(1_000_000);
        if !self.reliable.is_empty() {
            self.poll_reliability(self.clock_ms);
        }
        for i in 0..self.udp.len() {
            flush_udp(&mut self.udp[i]);
        }
        // flush_stream never queues, so the list is empty again afterwards; reuse it.
        let mut dirty = std::mem::take(&mut self.dirty);
        for &id in &dirty {
            self.flush_stream(id, sink);
        }
        dirty.clear();
        self.dirty = dirty;
    }

    pub(super) fn flush_stream(&mut self, id: FaceId, sink: &mut impl FaceSink) {
        let mut failed = false;
        {
            let Some(f) = self.faces.get_mut(&id) else {
                return;
            };
            let s = match &mut f.io {
                FaceIo::Stream(s) => s,
                FaceIo::Ws(_) => return self.flush_ws(id, sink),
                FaceIo::Udp(_) | FaceIo::Ether(_) => return,
            };
            // Bounded: each successful write makes progress; a full socket stops the loop.
            while s.out_pos < s.out.len() {
                match s.sock.write(&s.out[s.out_pos..]) {
                    Ok(0) => {
                        failed = true;
                        break;
                    }
                    Ok(n) => {
                        s.out_pos += n;
                        self.queued_bytes -= n;
                    }
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
            if f.options.congestion_marking {
                f.kernel_queue_bytes = s.kernel_queue();
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
                let _ = self.registry.reregister(s.sock.source(), token, interest);
            }
        }
        if failed {
            self.lose_stream(id, "write error", sink);
        }
    }
}

impl super::StreamIo {
    /// What the kernel holds in this face's socket's send queue.
    pub(super) fn kernel_queue(&self) -> usize {
        let tcp = matches!(self.sock, super::listen::StreamSock::Tcp(_));
        kernel_send_queue(self.sock.raw_fd(), tcp)
    }
}

/// Stages one link-layer packet for `remote` on `sock`: as it is, or cut by `frag` into
/// fragments when it exceeds the MTU; counted in `counters`.
#[inline]
fn send_udp(
    sock: &mut UdpSock,
    frag: &mut Fragmenter,
    remote: SocketAddr,
    counters: &mut FaceCounters,
    kind: PacketKind,
    bytes: &[u8],
) {
    if bytes.len() <= frag.mtu() {
        stage(sock, bytes, remote);
        counters.count_out(kind, bytes.len());
        return;
    }
    // Too large for one datagram: the fragmenter takes the network packet and the header fields
    // it came with.
    let (packet, header_fields) = match split_link(bytes) {
        Split::Parts(p) => (p.packet, p.header_fields),
        Split::Idle => return,
        // Not an LpPacket after all: sent as it is, in fragments.
        Split::Malformed => (bytes, &[][..]),
    };
    let mut total = 0;
    let r = frag.fragment_encoded(packet, header_fields, |d| {
        total += d.len();
        stage(sock, d, remote);
    });
    match r {
        Ok(_) => counters.count_out(kind, total),
        Err(_) => counters.drop_queue_full += 1,
    }
}

/// Stages datagram `d` for `to` on `sock` (flushing it first if it is full).
pub(super) fn stage(sock: &mut UdpSock, d: &[u8], to: SocketAddr) {
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

/// Sends what `sock` has staged: grouped by remote (each remote's datagrams keep their
/// order), each run of equal-sized datagrams to one remote in one segmented message while the
/// kernel takes them, the rest one datagram per message, all in as few `sendmmsg` calls as the
/// socket takes.
fn flush_udp(sock: &mut UdpSock) {
    if sock.staged.is_empty() {
        return;
    }
    sock.order.clear();
    sock.order.extend(0..sock.staged.len() as u32);
    if sock.gso {
        let staged = &sock.staged;
        sock.order
            .sort_unstable_by_key(|&i| (staged[i as usize].2, i));
    }
    cut_runs(&sock.staged, &sock.order, sock.gso, &mut sock.runs);
    let stage = &sock.stage;
    let datagrams: Vec<&[u8]> = (sock.order.iter())
        .map(|&i| {
            let (o, l, _) = sock.staged[i as usize];
            &stage[o as usize..(o + l) as usize]
        })
        .collect();
    let mut start = 0;
    // Bounded: each round sends at least one message, drops one, or turns segmentation off
    // (once).
    while start < sock.runs.len() {
        let first = sock.runs[start];
        match sock.batch.send_segments(&datagrams, &sock.runs[start..]) {
            Ok(n) if n > 0 => start += n,
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if first.count > 1 && refuses_segments(&e) => {
                // This kernel or path does not segment: single datagrams from now on.
                sock.gso = false;
                let rest: Vec<Segments> = (sock.runs[start..].iter())
                    .flat_map(|m| {
                        (m.first..m.first + m.count).map(|i| Segments {
                            first: i,
                            count: 1,
                            segment: 0,
                            to: m.to,
                        })
                    })
                    .collect();
                sock.runs.truncate(start);
                sock.runs.extend(rest);
            }
            Err(_) => {
                // Full socket buffer or an unreachable destination: UDP drops.
                sock.drops += first.count as u64;
                start += 1;
            }
        }
    }
    sock.sent_unread_bytes = sock.sent_unread_bytes.saturating_add(sock.stage.len());
    sock.flushes += 1;
    sock.stage.clear();
    sock.staged.clear();
}

/// What a UDP face (or a mirror of one) with options and marker `(o, m)` stages on `sock`
/// now: `bytes`, or `bytes` with a CongestionMark (in `mark_buf`, counted in `counters`) when
/// the socket's queue is congested (see `congestion`).
///
/// The kernel's queue is read (`SIOCOUTQ`) only when it could put the queue above the face's
/// threshold: it holds at most what it held at the last reading plus what was sent since, so
/// while that bound leaves the queue at or below the threshold the decision is the one a
/// reading would give. At most one reading per flush; none with marking off.
#[inline]
fn mark_udp<'a>(
    sock: &mut UdpSock,
    (o, m): (&LinkOptions, &mut Marker),
    counters: &mut FaceCounters,
    mark_buf: &'a mut Vec<u8>,
    bytes: &'a [u8],
    now_ns: u64,
) -> &'a [u8] {
    if !o.congestion_marking {
        return bytes;
    }
    let bound = sock
        .kernel_queue_bytes
        .saturating_add(sock.sent_unread_bytes);
    let over = sock.stage.len().saturating_add(bound) > threshold_bytes(o, sock.sndbuf_bytes);
    if over && sock.read_at_flush != sock.flushes {
        sock.kernel_queue_bytes = kernel_send_queue(sock.batch.socket().as_raw_fd(), false);
        (sock.sent_unread_bytes, sock.read_at_flush) = (0, sock.flushes);
    }
    let queue = sock.stage.len() + sock.kernel_queue_bytes;
    marked(
        (o, m),
        (queue, sock.sndbuf_bytes),
        now_ns,
        counters,
        mark_buf,
        bytes,
    )
}

/// Whether the packet a face with options `o` and marker `m` queues now is to carry a CongestionMark, its queue holding
/// `queue_bytes` of at most `capacity_bytes` (see `congestion`).
#[inline]
fn marks(
    o: &LinkOptions,
    m: &mut Marker,
    queue_bytes: usize,
    capacity_bytes: usize,
    now_ns: u64,
) -> bool {
    o.congestion_marking
        && m.check(
            queue_bytes,
            threshold_bytes(o, capacity_bytes),
            o.base_congestion_marking_interval_ns,
            now_ns,
        )
}

/// Whether a segmented send failed because segmentation itself was refused.
fn refuses_segments(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL | libc::EMSGSIZE | libc::EIO | libc::ENOPROTOOPT | libc::EOPNOTSUPP)
    )
}

/// Cuts the datagrams of `staged`, taken in `order`, into messages: with `gso`, each run of
/// consecutive datagrams to one remote, all of one size but the last (which may be shorter),
/// within the kernel's bounds, is one message; otherwise every datagram is one.
fn cut_runs(staged: &[(u32, u32, SocketAddr)], order: &[u32], gso: bool, runs: &mut Vec<Segments>) {
    runs.clear();
    let mut k = 0;
    while k < order.len() {
        let (_, len, to) = staged[order[k] as usize];
        let mut count = 1;
        let mut bytes = len as usize;
        let segment = u16::try_from(len).ok().filter(|&s| gso && s > 0);
        if let Some(seg) = segment {
            while k + count < order.len() && count < MAX_SEGMENTS {
                let (_, l, t) = staged[order[k + count] as usize];
                if t != to
                    || l == 0
                    || l > u32::from(seg)
                    || bytes + l as usize > MAX_SEGMENTED_BYTES
                {
                    break;
                }
                count += 1;
                bytes += l as usize;
                if l < u32::from(seg) {
                    break; // a shorter datagram ends the run
                }
            }
        }
        runs.push(Segments {
            first: k,
            count,
            segment: if count > 1 { segment.unwrap_or(0) } else { 0 },
            to,
        });
        k += count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// Runs: equal sizes to one remote join, a shorter datagram ends a run, a longer one or
    /// another remote starts a new one; the kernel's bounds hold; without segmentation every
    /// datagram is a message of its own.
    #[test]
    fn runs_are_cut_by_remote_size_and_bounds() {
        let (a, b) = (addr(1), addr(2));
        let lens = [100, 100, 100, 60, 100, 100, 120, 120, 0, 120];
        let mut staged: Vec<(u32, u32, SocketAddr)> = Vec::new();
        let mut off = 0;
        for (i, &l) in lens.iter().enumerate() {
            staged.push((off, l, if i < 8 { a } else { b }));
            off += l;
        }
        let order: Vec<u32> = (0..staged.len() as u32).collect();
        let mut runs = Vec::new();
        cut_runs(&staged, &order, true, &mut runs);
        let got: Vec<(usize, usize, u16)> =
            runs.iter().map(|r| (r.first, r.count, r.segment)).collect();
        assert_eq!(
            got,
            vec![(0, 4, 100), (4, 2, 100), (6, 2, 120), (8, 1, 0), (9, 1, 0)]
        );
        assert!(runs[..3].iter().all(|r| r.to == a) && runs[3..].iter().all(|r| r.to == b));
        cut_runs(&staged, &order, false, &mut runs);
        assert_eq!(runs.len(), lens.len());
        assert!(runs.iter().all(|r| r.count == 1 && r.segment == 0));
        // Bounds: segments per message, bytes per message.
        for (len, n) in [(10u32, 200usize), (9000, 20)] {
            let staged: Vec<_> = (0..n as u32).map(|i| (i * len, len, a)).collect();
            let order: Vec<u32> = (0..n as u32).collect();
            cut_runs(&staged, &order, true, &mut runs);
            assert_eq!(runs.iter().map(|r| r.count).sum::<usize>(), n);
            for r in &runs {
                assert!(r.count <= MAX_SEGMENTS);
                assert!(r.count * len as usize <= MAX_SEGMENTED_BYTES);
            }
            assert!(runs.len() > 1);
        }
    }
}
