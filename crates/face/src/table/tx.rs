//! Sending: the per-face send queues, fragmentation, batched writes.

use std::io::{self, Write};
use std::net::SocketAddr;

use mio::{Interest, Token};

use super::on_demand::unproven_may_send;
use super::{FaceId, FaceIo, FaceSink, FaceTable, PacketKind, FACE_BASE};
use crate::link::{split_link, Split};
use crate::udp::UdpBatch;

/// A UDP socket and the datagrams staged for its next `sendmmsg`.
pub(super) struct UdpSock {
    pub(super) batch: UdpBatch,
    pub(super) local: SocketAddr,
    /// Accepts datagrams from unknown remotes (creates on-demand faces).
    pub(super) listener: bool,
    stage: Vec<u8>,
    staged: Vec<(u32, u32, SocketAddr)>,
    max_stage: usize,
    drops: u64,
}

impl UdpSock {
    /// A socket staging up to one batch of `mtu`-byte datagrams.
    pub(super) fn new(batch: UdpBatch, local: SocketAddr, listener: bool, mtu: usize) -> Self {
        let n = batch.batch();
        UdpSock {
            batch,
            local,
            listener,
            stage: Vec::with_capacity(n * mtu),
            staged: Vec::with_capacity(n),
            max_stage: n,
            drops: 0,
        }
    }
}

impl FaceTable {
    /// Queues one link-layer packet on face `id` (nothing if there is no such face; counted in
    /// `drop_queue_full` if its queue is full or the packet cannot be cut into datagrams).
    #[inline]
    pub fn send(&mut self, id: FaceId, kind: PacketKind, bytes: &[u8]) {
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
                f.counters.count_out(kind, bytes.len());
            }
            FaceIo::Udp(u) => {
                let ratio = self.cfg.bounds.unproven_send_ratio;
                if f.quota && !unproven_may_send(&f.counters, bytes.len(), ratio) {
                    self.on_demand.counters.unproven_send_dropped += 1;
                    return;
                }
                let sock = &mut self.udp[u.socket];
                let remote = u.remote;
                if bytes.len() <= u.frag.mtu() {
                    stage(sock, bytes, remote);
                    f.counters.count_out(kind, bytes.len());
                    return;
                }
                // Too large for one datagram: the fragmenter takes the network packet and the
                // header fields it came with.
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
                    Ok(_) => f.counters.count_out(kind, total),
                    Err(_) => f.counters.drop_queue_full += 1,
                }
            }
        }
    }

    /// Sends everything queued (as much as the sockets take; a stream face that would block is
    /// finished when its socket is writable again).
    pub fn flush(&mut self, sink: &mut impl FaceSink) {
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
                let _ = self.registry.reregister(s.sock.source(), token, interest);
            }
        }
        if failed {
            self.close(id, "write error", sink);
        }
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
