//! Bounds on what connection (stream and WebSocket) faces can make the table hold: a byte
//! budget shared by every stream face's send queue, idle and first-packet timeouts of accepted
//! connections, a per-address limit on TCP connections, and what each refused.

/// Limits of connection faces ([`super::FaceConfig::stream`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Bytes all stream faces' send queues may hold together; a packet past it is dropped and
    /// counted ([`StreamLimitCounters::budget_refused`]).
    pub send_queue_budget_bytes: usize,
    /// An accepted TCP or WebSocket connection that neither sends nor receives a packet this
    /// long is closed (0: never).
    pub idle_timeout_ms: u64,
    /// An accepted TCP or WebSocket connection whose first packet has not arrived this long
    /// after it was accepted is closed (0: never).
    pub first_packet_timeout_ms: u64,
    /// Apply both timeouts to accepted Unix connections too (local applications; off by
    /// default: NFD never times them out).
    pub unix_timeouts: bool,
    /// Most TCP and WebSocket connections accepted from one address at once (0: no limit).
    pub max_connections_per_address: usize,
}

impl Default for StreamLimits {
    /// 256 MiB of send queues; idle 600 s (NFD's UDP idle timeout); first packet within 10 s;
    /// Unix connections never timed out; 64 connections per address.
    fn default() -> Self {
        StreamLimits {
            send_queue_budget_bytes: 256 << 20,
            idle_timeout_ms: 600_000,
            first_packet_timeout_ms: 10_000,
            unix_timeouts: false,
            max_connections_per_address: 64,
        }
    }
}

/// What the connection limits refused or closed, since the table was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamLimitCounters {
    /// Packets dropped because the send-queue budget was spent.
    pub budget_refused: u64,
    /// Connections closed for sending nothing within the first-packet timeout.
    pub first_packet_timeouts: u64,
    /// Connections closed for being idle.
    pub idle_timeouts: u64,
    /// Connections refused: their address had its most connections.
    pub per_address_refused: u64,
    /// `accept` failures for want of file descriptors (EMFILE, ENFILE); accepting goes on at
    /// the next turn.
    pub accept_fd_exhausted: u64,
}

impl std::ops::AddAssign for StreamLimitCounters {
    fn add_assign(&mut self, o: StreamLimitCounters) {
        self.budget_refused += o.budget_refused;
        self.first_packet_timeouts += o.first_packet_timeouts;
        self.idle_timeouts += o.idle_timeouts;
        self.per_address_refused += o.per_address_refused;
        self.accept_fd_exhausted += o.accept_fd_exhausted;
    }
}

use std::collections::hash_map::Entry;
use std::io;
use std::net::IpAddr;

use wire::nfd::FacePersistency;

use super::listen::StreamSock;
use super::{Face, FaceId, FaceIo, FaceSink, FaceTable, Notice, LISTENER_BASE};

impl FaceIo {
    /// The remote address of an accepted TCP or WebSocket connection (`None`: Unix, UDP).
    pub(super) fn peer_ip(&self) -> Option<IpAddr> {
        match self {
            FaceIo::Stream(s) => match &s.sock {
                StreamSock::Tcp(t) => t.peer_addr().ok().map(|a| a.ip()),
                StreamSock::Unix(_) => None,
            },
            FaceIo::Ws(w) => w.ws.get_ref().tcp_ref().peer_addr().ok().map(|a| a.ip()),
            FaceIo::Udp(_) | FaceIo::Ether(_) => None,
        }
    }
}

impl Face {
    /// Whether the connection timeouts apply to this face: an accepted (on-demand) connection,
    /// a Unix one only if `unix` is set.
    fn timed(&self, unix: bool) -> bool {
        self.persistency == FacePersistency::OnDemand
            && match &self.io {
                FaceIo::Stream(s) => unix || matches!(s.sock, StreamSock::Tcp(_)),
                FaceIo::Ws(_) => true,
                FaceIo::Udp(_) | FaceIo::Ether(_) => false,
            }
    }

    /// Why an accepted connection is due to be closed at `now`, if it is.
    fn timed_out(&self, l: &StreamLimits, now: u64) -> Option<&'static str> {
        if !self.timed(l.unix_timeouts) {
            return None;
        }
        let c = &self.counters;
        let got_first = c.in_bytes > 0 || c.malformed > 0;
        let first = l.first_packet_timeout_ms;
        if !got_first && first > 0 && now.saturating_sub(self.created_ms) > first {
            return Some("no packet within the first-packet timeout");
        }
        let last = self.last_rx_ms.max(self.last_tx_ms);
        let idle = l.idle_timeout_ms;
        (idle > 0 && now.saturating_sub(last) > idle).then_some("idle")
    }
}

impl FaceTable {
    /// What the connection limits refused or closed so far.
    pub fn stream_limit_counters(&self) -> StreamLimitCounters {
        self.stream_counters
    }

    /// Bytes all stream faces' send queues hold now.
    pub fn queued_bytes(&self) -> usize {
        self.queued_bytes
    }

    /// Bytes face `id`'s send queue holds now (Cascade's queue, plus the kernel's at the last
    /// flush when the face marks congestion); `None` if there is no such face.
    pub fn send_queue_bytes(&self, id: FaceId) -> Option<usize> {
        let f = self.faces.get(&id)?;
        let user = match &f.io {
            FaceIo::Stream(s) => s.out.len() - s.out_pos,
            FaceIo::Udp(u) => self.udp[u.socket].staged_bytes(),
            FaceIo::Ws(_) | FaceIo::Ether(_) => 0,
        };
        Some(user + f.kernel_queue_bytes)
    }

    /// Counts a connection from `ip` in its address's connections, unless the address has its
    /// most ([`StreamLimits::max_connections_per_address`]): then false, counted.
    pub(super) fn admit_address(&mut self, ip: IpAddr) -> bool {
        let max = self.cfg.stream.max_connections_per_address;
        let n = self.conns_per_ip.entry(ip).or_insert(0);
        if max > 0 && *n >= max {
            self.stream_counters.per_address_refused += 1;
            self.address_refused = Some(ip);
            return false;
        }
        *n += 1;
        true
    }

    /// An accepted connection could not become a face: noticed as the per-address limit's
    /// refusal if that was why, else as the face limit's.
    pub(super) fn notice_refused(&mut self, sink: &mut impl FaceSink) {
        match self.address_refused.take() {
            Some(ip) => sink.notice(Notice::AddressLimit(ip)),
            None => sink.notice(Notice::FaceLimit),
        }
    }

    /// Uncounts a connection from `ip`.
    pub(super) fn release_address(&mut self, ip: IpAddr) {
        if let Entry::Occupied(mut e) = self.conns_per_ip.entry(ip) {
            *e.get_mut() -= 1;
            if *e.get() == 0 {
                e.remove();
            }
        }
    }

    /// An `accept` failed with `e`: if for want of file descriptors, counted, and every
    /// listener is tried again at the next sweep (the connection waits in the backlog; no
    /// readiness event would come for it). True if so.
    pub(super) fn accept_failed(&mut self, e: &io::Error) -> bool {
        let exhausted = matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE));
        if exhausted {
            self.stream_counters.accept_fd_exhausted += 1;
            self.accept_stalled = true;
        }
        exhausted
    }

    /// Once a second: closes the accepted connections past their timeouts, shrinks the
    /// emptied send queues that grew past the usual size, reads again what the kernel holds
    /// for the faces it held something for, retries stalled listeners.
    pub(super) fn sweep_streams(&mut self, now: u64, sink: &mut impl FaceSink) {
        if std::mem::take(&mut self.accept_stalled) {
            for i in 0..self.listeners.len() {
                self.pending_next.push(mio::Token(LISTENER_BASE + i));
            }
        }
        let l = self.cfg.stream;
        let mut due: Vec<(FaceId, &'static str)> = Vec::new();
        for f in self.faces.values_mut() {
            if let Some(why) = f.timed_out(&l, now) {
                due.push((f.id, why));
            }
            if let FaceIo::Stream(s) = &mut f.io {
                if s.out.is_empty() && s.out.capacity() > SHRINK_ABOVE_BYTES {
                    s.out.shrink_to(SHRINK_ABOVE_BYTES);
                }
                if f.kernel_queue_bytes > 0 {
                    f.kernel_queue_bytes = s.kernel_queue();
                }
            }
        }
        for (id, why) in due {
            if why == "idle" {
                self.stream_counters.idle_timeouts += 1;
            } else {
                self.stream_counters.first_packet_timeouts += 1;
            }
            self.close(id, why, sink);
        }
    }
}

/// An empty send queue whose buffer grew past this is shrunk back to it at the next sweep.
const SHRINK_ABOVE_BYTES: usize = 1 << 20;
