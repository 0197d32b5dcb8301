//! Mirrors: another table's UDP faces, sent to on this table's own socket.
//!
//! When several tables (one per thread) each hold a socket of one `SO_REUSEPORT` group, any of
//! those sockets can send to any remote with the group's local address. A table that holds a
//! mirror of another table's UDP face sends that face's packets itself, on its own socket of
//! the group, instead of handing them to the owner's thread: the mirror has the face's remote
//! and MTU, a fragmenter of its own (with sequence numbers apart from the owner's) and counters
//! of what it sent (congestion marks too: it marks packets as the face does, by its own
//! socket's queue), which the owner takes in ([`FaceTable::take_mirror_counts`],
//! [`FaceTable::add_counts`]). It receives nothing (the owner's socket receives the remote's
//! datagrams), is not listed, and lives until the owner says the face is gone.

use std::net::SocketAddr;

use super::congestion::Marker;
use super::{FaceCounters, FaceId, FaceTable, LinkOptions, MAX_UDP_MTU, MIN_MTU};
use crate::lp_frag::Fragmenter;

/// A UDP face's link: its remote, its socket's local address, its MTU and its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpLink {
    /// The remote endpoint.
    pub remote: SocketAddr,
    /// The local address of the face's socket.
    pub local: SocketAddr,
    /// The MTU.
    pub mtu: usize,
    /// The face's link-service options (its congestion marking).
    pub options: LinkOptions,
}

/// Another table's UDP face as this table sends to it.
pub(super) struct Mirror {
    pub(super) socket: usize,
    pub(super) remote: SocketAddr,
    pub(super) frag: Fragmenter,
    pub(super) counters: FaceCounters,
    /// The face's options and this mirror's own congestion marking state (of this table's
    /// socket's queue).
    pub(super) options: LinkOptions,
    pub(super) marker: Marker,
}

impl FaceTable {
    /// Mirrors face `id` of another table, a UDP face on `link`, on this table's listening
    /// socket bound to the same local address (one group). Fragments are numbered from
    /// `first_sequence`, apart from the owner's and other mirrors'. A mirror of the same
    /// remote that exists already takes the new MTU (and keeps its numbering); one of another
    /// remote (the id named a face since closed) is replaced. False if this table has no such
    /// socket (the face's packets then go to its owner).
    pub fn mirror_udp(&mut self, id: FaceId, link: UdpLink, first_sequence: u64) -> bool {
        let local = link.local;
        let mtu = link.mtu.clamp(MIN_MTU, MAX_UDP_MTU);
        let Some(socket) = (self.udp.iter()).position(|s| s.listener && s.local == local) else {
            self.mirrors.remove(&id);
            return false;
        };
        if let Some(m) = self.mirrors.get_mut(&id) {
            if (m.socket, m.remote) == (socket, link.remote) {
                let _ = m.frag.set_mtu(mtu);
                m.options = link.options;
                return true;
            }
        }
        let Ok(frag) = Fragmenter::new(mtu, first_sequence) else {
            return false;
        };
        self.mirrors.insert(
            id,
            Mirror {
                socket,
                remote: link.remote,
                frag,
                counters: FaceCounters::default(),
                options: link.options,
                marker: Marker::default(),
            },
        );
        true
    }

    /// Forgets the mirror of face `id` (its owner closed it); what it sent since the last
    /// [`FaceTable::take_mirror_counts`] is handed to `left`.
    pub fn unmirror(&mut self, id: FaceId, left: impl FnOnce(FaceCounters)) {
        if let Some(m) = self.mirrors.remove(&id) {
            if m.counters != FaceCounters::default() {
                left(m.counters);
            }
        }
    }

    /// Mirrors held.
    pub fn mirrors(&self) -> usize {
        self.mirrors.len()
    }

    /// Hands what each mirror sent since the last call (sent packets and bytes, drops) to
    /// `each`, and starts counting again from zero; mirrors that sent nothing are left out.
    pub fn take_mirror_counts(&mut self, mut each: impl FnMut(FaceId, FaceCounters)) {
        for (&id, m) in &mut self.mirrors {
            if m.counters != FaceCounters::default() {
                each(id, std::mem::take(&mut m.counters));
            }
        }
    }

    /// Adds what a mirror of face `id` sent (its outgoing counters) to the face's counters;
    /// nothing if the face has closed since.
    pub fn add_counts(&mut self, id: FaceId, c: &FaceCounters) {
        if let Some(f) = self.faces.get_mut(&id) {
            let o = &mut f.counters;
            o.out_interests += c.out_interests;
            o.out_data += c.out_data;
            o.out_nacks += c.out_nacks;
            o.out_bytes += c.out_bytes;
            o.drop_queue_full += c.drop_queue_full;
            o.congestion_marks += c.congestion_marks;
        }
    }
}
