//! Ethernet faces: one `AF_PACKET` port per interface ([`crate::ether::PacketSocket`]), shared
//! by the interface's multicast face (`ether://[01:00:5e:00:17:aa]`, local `dev://ifname`) and
//! its unicast faces (`ether://[MAC]`), as NFD's Ethernet transports.
//!
//! A received frame goes to the multicast face when it is sent to the group, to the unicast
//! face of its source when it is sent to the interface's own address, and nowhere else
//! (counted). Frames this host sent, frames too short or of another EtherType, and payloads that
//! are no whole TLV element are counted and dropped. A port reads at most
//! [`FRAMES_PER_TURN`] frames per event; what is left waits for the next turn. Packets larger
//! than the interface's MTU go out in NDNLPv2 fragments, and fragments are reassembled within
//! the budget the UDP faces share.

use std::collections::HashMap;
use std::io;
use std::os::fd::AsRawFd;

use mio::unix::SourceFd;
use mio::{Interest, Token};
use wire::nfd::FacePersistency;

use super::{
    CreateError, Face, FaceCounters, FaceDesc, FaceId, FaceIo, FaceParams, FaceRx, FaceSink,
    FaceTable, PacketKind, MIN_MTU,
};
use crate::ether::{decode_frame, encode_frame, PacketSocket, HDR_LEN};
use crate::link::{split_link, Split};
use crate::lp_frag::{Fragmenter, Reassembler};
use crate::netif::{MacAddr, Netif};

/// Frames a port reads per event before it goes to the back of the line.
pub const FRAMES_PER_TURN: usize = 64;
/// Most Ethernet ports (interfaces) of a table.
pub const MAX_ETHER_PORTS: usize = 1024;

/// An interface's Ethernet port.
pub(super) struct EtherPort {
    sock: PacketSocket,
    name: String,
    mac: MacAddr,
    /// The group and the multicast face, if any.
    group: Option<(MacAddr, FaceId)>,
    /// Unicast faces by remote.
    unicast: HashMap<MacAddr, FaceId>,
    /// A channel (NFD's `EthernetChannel`): `faces/create` makes unicast faces on it.
    channel: bool,
    /// The channel listens: a well-formed frame to this interface from a source with no face
    /// makes an on-demand face (within the on-demand quota).
    listen: bool,
    /// The frame being received, and the frames being sent.
    rx_buf: Vec<u8>,
    tx_buf: Vec<u8>,
    /// What the port dropped.
    pub(super) counters: EtherCounters,
}

/// What an Ethernet port dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EtherCounters {
    /// Frames refused: too short, another EtherType, no whole TLV element.
    pub malformed: u64,
    /// Frames sent to neither the group nor this interface, or from a source with no face.
    pub unknown: u64,
    /// Frames the socket did not take.
    pub send_failed: u64,
}

impl std::ops::AddAssign for EtherCounters {
    fn add_assign(&mut self, o: EtherCounters) {
        self.malformed += o.malformed;
        self.unknown += o.unknown;
        self.send_failed += o.send_failed;
    }
}

/// An Ethernet face's link.
pub(super) struct EtherIo {
    pub(super) port: usize,
    pub(super) remote: MacAddr,
    pub(super) reasm: Reassembler,
    pub(super) frag: Fragmenter,
}

impl EtherIo {
    /// The key of its remote in the on-demand quota.
    pub(super) fn host_key(&self) -> u128 {
        ether_host_key(self.port, self.remote)
    }
}

/// The on-demand quota's key of Ethernet remote `mac` on port `port`: apart from every IP
/// host's (an IPv6 /64's low bits are zero, an IPv4 address's top bits too).
fn ether_host_key(port: usize, mac: MacAddr) -> u128 {
    let mut m = [0u8; 8];
    m[2..].copy_from_slice(&mac.0);
    (1 << 127) | ((port as u128) << 64) | u128::from(u64::from_be_bytes(m))
}

impl FaceTable {
    /// The Ethernet port of `netif` (opened, a member of `group`, if there is none yet).
    fn ether_port(&mut self, netif: &Netif, group: Option<MacAddr>) -> io::Result<usize> {
        if let Some(i) = self.ether.iter().position(|p| p.name == netif.name) {
            if let Some(g) = group {
                self.ether[i].sock.join(netif, g)?;
            }
            return Ok(i);
        }
        let mac = netif
            .mac
            .ok_or_else(|| io::Error::other("no Ethernet address"))?;
        if self.ether.len() >= MAX_ETHER_PORTS {
            return Err(io::Error::other("too many Ethernet ports"));
        }
        let sock = PacketSocket::open(netif, group)?;
        let idx = self.ether.len();
        self.registry.register(
            &mut SourceFd(&sock.as_raw_fd()),
            Token(super::ETHER_BASE + idx),
            Interest::READABLE,
        )?;
        let frame = sock.mtu + HDR_LEN;
        self.ether.push(EtherPort {
            name: netif.name.clone(),
            mac,
            group: None,
            unicast: HashMap::new(),
            channel: false,
            listen: false,
            rx_buf: vec![0; frame],
            tx_buf: Vec::with_capacity(frame.max(crate::ether::MIN_FRAME_LEN)),
            sock,
            counters: EtherCounters::default(),
        });
        Ok(idx)
    }

    /// Opens the Ethernet multicast face of `group` on `netif` (permanent, multi-access, MTU
    /// the interface's). Needs `CAP_NET_RAW`; the error says what failed.
    pub fn add_ether_multicast(
        &mut self,
        netif: &Netif,
        group: MacAddr,
        sink: &mut impl FaceSink,
    ) -> Result<FaceDesc, CreateError> {
        let port = self
            .ether_port(netif, Some(group))
            .map_err(|e| CreateError::Failed(format!("packet socket on {}: {e}", netif.name)))?;
        if let Some((_, id)) = self.ether[port].group {
            if let Some(f) = self.faces.get(&id) {
                return Err(CreateError::Exists(Box::new(f.desc())));
            }
        }
        let params = self.own_params(FacePersistency::Permanent);
        let id = self.add_ether_face(port, group, &params, sink)?;
        self.ether[port].group = Some((group, id));
        Ok(self.faces[&id].desc())
    }

    /// Opens the Ethernet channel of `netif` (`dev://ifname`), listening or not; its port.
    pub fn add_ether_channel(&mut self, netif: &Netif, listen: bool) -> io::Result<usize> {
        let port = self.ether_port(netif, None)?;
        let p = &mut self.ether[port];
        p.channel = true;
        p.listen |= listen;
        Ok(port)
    }

    /// Creates a unicast Ethernet face to `remote` on the channel of interface `ifname` (MTU
    /// default and most: the interface's). A face to that remote there is
    /// [`CreateError::Exists`]; no channel on `ifname` fails as NFD words it.
    pub fn create_ether(
        &mut self,
        ifname: &str,
        remote: MacAddr,
        params: &FaceParams,
        sink: &mut impl FaceSink,
    ) -> Result<FaceDesc, CreateError> {
        let Some(port) = (self.ether.iter()).position(|p| p.channel && p.name == ifname) else {
            return Err(CreateError::Failed(
                "No channels available to connect".into(),
            ));
        };
        if let Some(f) = (self.ether[port].unicast.get(&remote)).and_then(|id| self.faces.get(id)) {
            return Err(CreateError::Exists(Box::new(f.desc())));
        }
        let id = self.add_ether_face(port, remote, params, sink)?;
        self.ether[port].unicast.insert(remote, id);
        Ok(self.faces[&id].desc())
    }

    /// An on-demand face for a well-formed frame from `remote` to port `port`'s interface,
    /// within the quota; `None` (counted) if there is no room.
    fn ether_on_demand(
        &mut self,
        port: usize,
        remote: MacAddr,
        sink: &mut impl FaceSink,
    ) -> Option<FaceId> {
        if !self.ids.available(sink.now_ms()) {
            self.on_demand.counters.on_demand_refused_ids += 1;
            return None;
        }
        let host = ether_host_key(port, remote);
        if !self.on_demand_room(host, sink) {
            return None;
        }
        let params = self.own_params(FacePersistency::OnDemand);
        let id = self.add_ether_face(port, remote, &params, sink).ok()?;
        if let Some(f) = self.faces.get_mut(&id) {
            f.quota = true;
        }
        self.ether[port].unicast.insert(remote, id);
        self.joined_quota(id, host, sink.now_ms());
        Some(id)
    }

    /// Adds a face to `remote` on Ethernet port `port`.
    fn add_ether_face(
        &mut self,
        port: usize,
        remote: MacAddr,
        params: &FaceParams,
        sink: &mut impl FaceSink,
    ) -> Result<FaceId, CreateError> {
        let p = &self.ether[port];
        let mtu = params.mtu.unwrap_or(p.sock.mtu).clamp(MIN_MTU, p.sock.mtu);
        let local_uri = format!("dev://{}", p.name);
        let id = self
            .new_face_id(sink.now_ms())
            .ok_or_else(|| CreateError::Failed("face limit reached".into()))?;
        let frag = Fragmenter::new(mtu, u64::from(id) << 40)
            .map_err(|e| CreateError::Failed(format!("{e:?}")))?;
        let io = FaceIo::Ether(Box::new(EtherIo {
            port,
            remote,
            reasm: self.new_reassembler(),
            frag,
        }));
        let uris = (format!("ether://[{remote}]"), local_uri, false);
        let face = Face::new(id, uris, params, sink.now_ms(), io);
        sink.face_up(&face);
        self.faces.insert(id, face);
        Ok(id)
    }

    /// What the Ethernet ports dropped, summed.
    pub fn ether_counters(&self) -> EtherCounters {
        self.ether
            .iter()
            .fold(EtherCounters::default(), |mut t, p| {
                t += p.counters;
                t
            })
    }

    /// The local URIs of the Ethernet ports (NFD's Ethernet channels: `dev://ifname`).
    pub fn ether_channels(&self) -> Vec<String> {
        let channels = self.ether.iter().filter(|p| p.channel);
        channels.map(|p| format!("dev://{}", p.name)).collect()
    }

    /// Forgets a closed Ethernet face's place on its port.
    pub(super) fn forget_ether(&mut self, e: &EtherIo, id: FaceId) {
        let p = &mut self.ether[e.port];
        if p.group.is_some_and(|(_, g)| g == id) {
            p.group = None;
        }
        if p.unicast.get(&e.remote) == Some(&id) {
            p.unicast.remove(&e.remote);
        }
    }

    /// Reads up to [`FRAMES_PER_TURN`] frames from port `idx`.
    pub(super) fn read_ether(&mut self, idx: usize, sink: &mut impl FaceSink) {
        let now = sink.now_ms();
        let mut more = true;
        for _ in 0..FRAMES_PER_TURN {
            let p = &mut self.ether[idx];
            let n = match p.sock.recv(&mut p.rx_buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    more = false;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    sink.notice(super::Notice::RecvFailed(&e));
                    continue;
                }
            };
            let Ok(frame) = decode_frame(&p.rx_buf[..n]) else {
                p.counters.malformed += 1;
                continue;
            };
            let (src, listen) = (frame.src, p.listen);
            let mut to = if frame.src == p.mac {
                None // this host's own frame
            } else if p.group.is_some_and(|(g, _)| g == frame.dst) {
                p.group.map(|(_, id)| id)
            } else if frame.dst == p.mac {
                p.unicast.get(&frame.src).copied()
            } else {
                None
            };
            let unknown_sender = to.is_none() && frame.dst == p.mac && frame.src != p.mac;
            if unknown_sender && listen {
                let ok = super::on_demand::well_formed(frame.payload, self.cfg.max_packet_bytes);
                if ok {
                    to = self.ether_on_demand(idx, src, sink);
                } else {
                    self.on_demand.counters.on_demand_refused_malformed += 1;
                }
            }
            let p = &mut self.ether[idx];
            // The frame again (the on-demand face's creation needed the table).
            let Ok(frame) = decode_frame(&p.rx_buf[..n]) else {
                continue;
            };
            let Some(f) = to.and_then(|id| self.faces.get_mut(&id)) else {
                p.counters.unknown += 1;
                continue;
            };
            f.last_rx_ms = now;
            let reassembler = match &mut f.io {
                FaceIo::Ether(e) => Some(&mut e.reasm),
                _ => None,
            };
            let rx = FaceRx {
                id: f.id,
                local: false,
                counters: &mut f.counters,
                reassembler,
            };
            sink.receive(rx, frame.payload, now);
        }
        if more {
            self.pending_next.push(Token(super::ETHER_BASE + idx));
        }
    }
}

#[cfg(test)]
mod tests;

/// Sends one link-layer packet on Ethernet face `e`: as one frame, or cut by its fragmenter into
/// frames when it exceeds the MTU; counted in `counters`.
pub(super) fn send_ether(
    ports: &mut [EtherPort],
    e: &mut EtherIo,
    counters: &mut FaceCounters,
    kind: PacketKind,
    bytes: &[u8],
) {
    let p = &mut ports[e.port];
    let mut frame = |d: &[u8]| {
        p.tx_buf.clear();
        encode_frame(&mut p.tx_buf, e.remote, p.mac, d);
        if !p.sock.send(&p.tx_buf) {
            p.counters.send_failed += 1;
        }
    };
    if bytes.len() <= e.frag.mtu() {
        frame(bytes);
        counters.count_out(kind, bytes.len());
        return;
    }
    let (packet, header_fields) = match split_link(bytes) {
        Split::Parts(parts) => (parts.packet, parts.header_fields),
        Split::Idle => return,
        Split::Malformed => (bytes, &[][..]),
    };
    let mut total = 0;
    match e.frag.fragment_encoded(packet, header_fields, |d| {
        total += d.len();
        frame(d);
    }) {
        Ok(_) => counters.count_out(kind, total),
        Err(_) => counters.drop_queue_full += 1,
    }
}
