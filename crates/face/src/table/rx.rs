//! Receiving: socket events, bounded reads, the turn's list of sockets with more to read.

use std::io;

use mio::Token;
use wire::nfd::FacePersistency;

use super::on_demand::well_formed;
use super::{
    FaceId, FaceIo, FaceRx, FaceSink, FaceTable, Notice, ETHER_BASE, FACE_BASE, HANDSHAKE_BASE,
    LISTENER_BASE, PENALTY_CAPACITY, PENALTY_MS, UDP_BASE,
};
use crate::udp_ring::UdpRing;

/// Reads from one socket per turn before it goes to the back of the line.
const READS_PER_TURN: usize = 8;
/// Pending-read entries served per turn (each bounded by [`READS_PER_TURN`]).
const MAX_PENDING_PER_TURN: usize = 1024;

impl FaceTable {
    /// Starts a turn of the driver's loop: the sockets left with more to read last turn are
    /// served this turn ([`Self::serve_pending`]). True if there are any (the driver should not
    /// sleep in its poll).
    pub fn start_turn(&mut self) -> bool {
        std::mem::swap(&mut self.pending_read, &mut self.pending_next);
        self.pending_next.clear();
        !self.pending_read.is_empty()
    }

    /// Handles a poll event for one of the table's tokens (others are ignored): accepts
    /// connections, reads (a bounded amount) or writes what a stream face has queued.
    pub fn on_event(
        &mut self,
        token: Token,
        readable: bool,
        writable: bool,
        sink: &mut impl FaceSink,
    ) {
        match token.0 {
            0 => {}
            t if (LISTENER_BASE..UDP_BASE).contains(&t) => self.accept(t - LISTENER_BASE, sink),
            t if (ETHER_BASE..HANDSHAKE_BASE).contains(&t) => {
                if readable {
                    self.read_ether(t - ETHER_BASE, sink);
                }
            }
            t if (UDP_BASE..HANDSHAKE_BASE).contains(&t) => {
                if readable {
                    self.read_udp(t - UDP_BASE, sink);
                }
            }
            t if (HANDSHAKE_BASE..FACE_BASE).contains(&t) => {
                self.continue_handshake(t - HANDSHAKE_BASE, sink)
            }
            t => {
                let id = (t - FACE_BASE) as FaceId;
                if self.down.contains_key(&id) {
                    return self.redial_event(id, sink);
                }
                let ws = matches!(self.faces.get(&id), Some(f) if matches!(f.io, FaceIo::Ws(_)));
                if writable {
                    self.flush_stream(id, sink);
                }
                if readable && ws {
                    self.read_ws(id, sink);
                } else if readable {
                    self.read_stream(id, sink);
                }
            }
        }
    }

    /// Reads from the sockets left with more to read last turn (at most
    /// `MAX_PENDING_PER_TURN`; the rest stay in line).
    pub fn serve_pending(&mut self, sink: &mut impl FaceSink) {
        let pending = std::mem::take(&mut self.pending_read);
        for &t in pending.iter().take(MAX_PENDING_PER_TURN) {
            self.on_event(t, true, false, sink);
        }
        // Whatever was not served this turn stays in line.
        self.pending_next
            .extend(pending.iter().skip(MAX_PENDING_PER_TURN).copied());
        self.pending_read = pending;
    }

    fn read_stream(&mut self, id: FaceId, sink: &mut impl FaceSink) {
        let now = sink.now_ms();
        let mut close: Option<&'static str> = None;
        let mut more = false;
        {
            let Some(f) = self.faces.get_mut(&id) else {
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
                                let rx = FaceRx {
                                    id,
                                    local: f.local,
                                    counters: &mut f.counters,
                                    reassembler: None,
                                };
                                let malformed = sink.receive(rx, p, now);
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
        }
        if let Some(why) = close {
            self.lose_stream(id, why, sink);
        } else if more {
            self.pending_next.push(Token(FACE_BASE + id as usize));
        }
    }

    fn read_udp(&mut self, idx: usize, sink: &mut impl FaceSink) {
        let now = sink.now_ms();
        let mut more = true;
        for _ in 0..READS_PER_TURN {
            let n = match self.udp[idx].recv() {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    more = false;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    sink.notice(Notice::RecvFailed(&e));
                    continue;
                }
            };
            if let Some(e) = self.udp[idx].ring.as_mut().and_then(UdpRing::take_error) {
                sink.notice(Notice::RecvFailed(&e));
            }
            for i in 0..n {
                let (_, from) = self.udp[idx].datagram(i);
                let known = self.udp[idx].multicast;
                let id = match known.or_else(|| self.udp_faces.get(&(idx, from)).copied()) {
                    Some(id) => id,
                    None if self.penalty.get(&from).is_some_and(|&t| t > now) => {
                        self.penalized_datagrams += 1;
                        continue;
                    }
                    None if self.udp[idx].listener => {
                        let (bytes, _) = self.udp[idx].datagram(i);
                        let ok = well_formed(bytes, self.cfg.max_packet_bytes);
                        match self.on_demand_face(idx, from, ok, sink) {
                            Some(id) => id,
                            None => continue,
                        }
                    }
                    None => continue,
                };
                let Some(f) = self.faces.get_mut(&id) else {
                    continue;
                };
                f.last_rx_ms = now;
                let (bytes, _) = self.udp[idx].datagram(i);
                if let FaceIo::Udp(u) = &mut f.io {
                    // A duplicate of a frame received reliably is dropped here.
                    if u.rel.as_mut().is_some_and(|r| !r.receive(bytes, now)) {
                        continue;
                    }
                    let unicast = known.is_none() && u.rel.is_none();
                    if let Some(ack) = unicast.then(|| super::proof::ack_for(bytes)).flatten() {
                        let _ = self.udp[idx].batch.socket().send_to(&ack, from);
                        self.unproven.acks_sent += 1;
                    }
                }
                let reassembler = match &mut f.io {
                    FaceIo::Udp(u) => Some(&mut u.reasm),
                    FaceIo::Stream(_) | FaceIo::Ws(_) | FaceIo::Ether(_) => None,
                };
                let rx = FaceRx {
                    id,
                    local: f.local,
                    counters: &mut f.counters,
                    reassembler,
                };
                let malformed = sink.receive(rx, bytes, now);
                let c = f.counters;
                let good = c.in_interests + c.in_data + c.in_nacks;
                let close = malformed
                    && c.malformed >= self.cfg.malformed_limit
                    && c.malformed > good
                    && f.persistency == FacePersistency::OnDemand;
                if close {
                    self.close(id, "too many malformed packets", sink);
                    if self.penalty.len() < PENALTY_CAPACITY {
                        self.penalty.insert(from, now + PENALTY_MS);
                    }
                } else if let Some(by) = f.proves(bytes) {
                    self.proved(id, by, sink);
                }
            }
        }
        if more {
            self.pending_next.push(Token(UDP_BASE + idx));
        }
    }
}
