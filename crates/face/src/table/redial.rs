//! Permanent TCP faces that lose their connection: the face stays, DOWN, and dials its remote
//! again, as NFD's `TcpTransport` reconnects a permanent face.
//!
//! When a permanent TCP face's connection fails (the peer closed it, a read or a write
//! failed), the face goes DOWN ([`FaceSink::face_state`]), what it had queued to send is
//! dropped, and it dials at once. An attempt that has not connected when its wait is over is
//! abandoned, the wait is doubled (from [`INITIAL_REDIAL_MS`] up to [`MAX_REDIAL_MS`]) and the
//! next attempt starts: NFD's initial delay (1 s), multiplier (2) and maximum (5 min). A
//! refused attempt waits out its wait before the next. Once connected, the face is UP again
//! with an empty receive buffer and send queue, and the wait goes back to its initial value.
//! Packets sent to a DOWN face are dropped and counted (`drop_queue_full`).
//!
//! A permanent TCP face can also be made DOWN from the start ([`FaceTable::dial_tcp`]): a
//! configured face whose remote does not answer yet.

use std::io;
use std::net::SocketAddr;

use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Token};
use wire::nfd::FacePersistency;

use super::listen::StreamSock;
use super::{CreateError, FaceDesc, FaceId, FaceIo, FaceParams, FaceSink, FaceTable, FACE_BASE};
use crate::stream::StreamFramer;
use crate::uri::FaceUri;

/// First wait of a reconnection attempt, in milliseconds (NFD's `INITIAL_RECONNECT_DELAY`).
pub const INITIAL_REDIAL_MS: u64 = 1000;
/// Longest wait of a reconnection attempt, in milliseconds (NFD's `MAX_RECONNECT_DELAY`).
pub const MAX_REDIAL_MS: u64 = 300_000;
/// What an abandoned attempt multiplies the wait by (NFD's `RECONNECT_DELAY_MULTIPLIER`).
pub const REDIAL_MULTIPLIER: u64 = 2;

/// The wait after an attempt that waited `wait_ms` and did not connect.
pub fn next_redial_ms(wait_ms: u64) -> u64 {
    wait_ms.saturating_mul(REDIAL_MULTIPLIER).min(MAX_REDIAL_MS)
}

/// A DOWN face's reconnection.
pub(super) struct Redial {
    remote: SocketAddr,
    /// The current attempt's wait.
    wait_ms: u64,
    /// When the current attempt is abandoned and the next one starts.
    deadline_ms: u64,
    /// The current attempt's socket, registered under the face's token (none once it failed).
    conn: Option<TcpStream>,
}

impl FaceTable {
    /// Whether face `id` is up (open and not redialing).
    pub fn is_up(&self, id: FaceId) -> bool {
        self.faces.contains_key(&id) && !self.down.contains_key(&id)
    }

    /// Faces DOWN now, redialing.
    pub fn faces_down(&self) -> usize {
        self.down.len()
    }

    /// A stream face's connection failed for `why`: a permanent TCP face goes DOWN and dials
    /// again; any other face closes.
    pub(super) fn lose_stream(&mut self, id: FaceId, why: &str, sink: &mut impl FaceSink) {
        if self.down.contains_key(&id) {
            // An attempt's socket failed: the attempt waits out its wait.
            return self.abandon_attempt(id);
        }
        let remote = self.faces.get_mut(&id).and_then(|f| {
            let FaceIo::Stream(s) = &mut f.io else {
                return None;
            };
            let tcp = matches!(s.sock, StreamSock::Tcp(_));
            if f.persistency != FacePersistency::Permanent || !tcp {
                return None;
            }
            let uri = FaceUri::parse(&f.uri).ok()?;
            uri.socket_addrs().ok()?.first().copied()
        });
        let Some(remote) = remote else {
            self.close(id, why, sink);
            return;
        };
        if let Some(f) = self.faces.get_mut(&id) {
            if let FaceIo::Stream(s) = &mut f.io {
                let _ = self.registry.deregister(s.sock.source());
                s.out.clear();
                s.out_pos = 0;
                s.want_write = false;
            }
        }
        self.go_down(id, remote, sink);
    }

    fn go_down(&mut self, id: FaceId, remote: SocketAddr, sink: &mut impl FaceSink) {
        let r = Redial {
            remote,
            wait_ms: INITIAL_REDIAL_MS,
            deadline_ms: 0,
            conn: None,
        };
        self.down.insert(id, r);
        if let Some(f) = self.faces.get(&id) {
            sink.face_state(f, false);
        }
        self.dial(id, sink.now_ms());
    }

    /// Creates a permanent TCP face to `remote` that is DOWN and dials it (a configured face
    /// whose remote does not answer yet). A face to that remote that exists already is
    /// [`CreateError::Exists`].
    pub fn dial_tcp(
        &mut self,
        remote: SocketAddr,
        params: &FaceParams,
        sink: &mut impl FaceSink,
    ) -> Result<FaceDesc, CreateError> {
        let uri = FaceUri::tcp(remote).to_string();
        if let Some(f) = self.faces.values().find(|f| f.uri == uri) {
            return Err(CreateError::Exists(Box::new(f.desc())));
        }
        let failed = |e: io::Error| CreateError::Failed(e.to_string());
        // Until it connects, the face's socket is a placeholder that is never registered.
        let (placeholder, _) = UnixStream::pair().map_err(failed)?;
        let io = self.stream_io(StreamSock::Unix(placeholder));
        let unspecified = SocketAddr::new(
            match remote {
                SocketAddr::V4(_) => std::net::Ipv4Addr::UNSPECIFIED.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::UNSPECIFIED.into(),
            },
            0,
        );
        let local_uri = FaceUri::tcp(unspecified).to_string();
        let params = FaceParams {
            persistency: FacePersistency::Permanent,
            ..*params
        };
        let local = self.cfg.local.tcp_local(remote.ip().is_loopback());
        let id = self
            .add_stream_face(io, Some(uri), local_uri, local, &params, sink)
            .ok_or_else(|| CreateError::Failed("face limit reached".into()))?;
        if let Some(FaceIo::Stream(s)) = self.faces.get_mut(&id).map(|f| &mut f.io) {
            let _ = self.registry.deregister(s.sock.source());
        }
        self.go_down(id, remote, sink);
        Ok(self.faces[&id].desc())
    }

    /// Starts an attempt of DOWN face `id`: a non-blocking connect whose socket reports under
    /// the face's token, abandoned at `now` + the wait.
    fn dial(&mut self, id: FaceId, now: u64) {
        let Some(r) = self.down.get_mut(&id) else {
            return;
        };
        r.deadline_ms = now + r.wait_ms;
        let token = Token(FACE_BASE + id as usize);
        r.conn = TcpStream::connect(r.remote).ok().and_then(|mut c| {
            let both = Interest::READABLE | Interest::WRITABLE;
            self.registry.register(&mut c, token, both).ok()?;
            Some(c)
        });
    }

    fn abandon_attempt(&mut self, id: FaceId) {
        if let Some(mut c) = self.down.get_mut(&id).and_then(|r| r.conn.take()) {
            let _ = self.registry.deregister(&mut c);
        }
    }

    /// A poll event for DOWN face `id`: its attempt connected (the face is UP again), failed
    /// (it waits out its wait), or is still on its way.
    pub(super) fn redial_event(&mut self, id: FaceId, sink: &mut impl FaceSink) {
        let Some(r) = self.down.get_mut(&id) else {
            return;
        };
        let Some(c) = r.conn.as_mut() else {
            return;
        };
        match (c.take_error(), c.peer_addr()) {
            (Ok(None), Ok(_)) => {}
            (Ok(None), Err(e)) if e.kind() == io::ErrorKind::NotConnected => return,
            _ => return self.abandon_attempt(id),
        }
        let Some(mut conn) = self.down.remove(&id).and_then(|r| r.conn) else {
            return;
        };
        let token = Token(FACE_BASE + id as usize);
        let _ = self
            .registry
            .reregister(&mut conn, token, Interest::READABLE);
        let _ = conn.set_nodelay(true);
        let local = conn.local_addr().ok();
        let max_packet = self.cfg.max_packet_bytes;
        let Some(f) = self.faces.get_mut(&id) else {
            return;
        };
        if let Some(a) = local {
            f.local_uri = FaceUri::tcp(a).to_string();
        }
        if let FaceIo::Stream(s) = &mut f.io {
            s.sock = StreamSock::Tcp(conn);
            s.framer = StreamFramer::new(max_packet, crate::stream::DEFAULT_READ_CHUNK);
            s.out.clear();
            s.out_pos = 0;
            s.want_write = false;
        }
        f.last_rx_ms = sink.now_ms();
        sink.face_state(f, true);
        // Data may already be waiting.
        self.pending_next.push(token);
    }

    /// From the sweep: the attempts whose wait is over are abandoned, and the next ones start
    /// with a doubled wait.
    pub(super) fn redial_due(&mut self, now: u64) {
        let due: Vec<FaceId> = (self.down.iter())
            .filter(|(_, r)| r.deadline_ms <= now)
            .map(|(&id, _)| id)
            .collect();
        for id in due {
            self.abandon_attempt(id);
            if let Some(r) = self.down.get_mut(&id) {
                r.wait_ms = next_redial_ms(r.wait_ms);
            }
            self.dial(id, now);
        }
    }

    /// Face `id` closes: its reconnection, if it was DOWN, stops.
    pub(super) fn forget_redial(&mut self, id: FaceId) {
        self.abandon_attempt(id);
        self.down.remove(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_one_second_to_five_minutes() {
        let mut w = INITIAL_REDIAL_MS;
        let mut seen = vec![w];
        while w < MAX_REDIAL_MS {
            w = next_redial_ms(w);
            seen.push(w);
        }
        assert_eq!(&seen[..4], &[1000, 2000, 4000, 8000]);
        assert_eq!(seen.last(), Some(&300_000));
        assert_eq!(next_redial_ms(MAX_REDIAL_MS), MAX_REDIAL_MS);
        assert_eq!(next_redial_ms(256_000), MAX_REDIAL_MS);
    }
}
