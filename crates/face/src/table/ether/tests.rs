//! Ethernet on-demand faces under the on-demand bounds, over a Unix datagram socket pair
//! standing for an interface's packet socket (no raw socket needed).

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixDatagram;

use super::*;
use crate::table::{FaceBounds, FaceConfig, Notice};

const PORT_MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xaa]);

#[derive(Default)]
struct Sink {
    now: u64,
    up: usize,
    received: usize,
}

impl FaceSink for Sink {
    fn now_ms(&self) -> u64 {
        self.now
    }
    fn face_up(&mut self, _: &Face) {
        self.up += 1;
    }
    fn face_changed(&mut self, _: &Face) {}
    fn face_down(&mut self, _: &Face, _: &str) {}
    fn receive(&mut self, _: FaceRx<'_>, _: &[u8], _: u64) -> bool {
        self.received += 1;
        false
    }
    fn notice(&mut self, _: Notice<'_>) {}
}

/// A table of 16 faces with `bounds`, and a listening Ethernet channel whose frames are sent
/// on the socket returned.
fn table(bounds: FaceBounds) -> (FaceTable, UnixDatagram, mio::Poll) {
    let poll = mio::Poll::new().unwrap();
    let cfg = FaceConfig {
        max_faces: 16,
        send_queue_bytes: 1 << 20,
        udp_mtu: 1400,
        udp_idle_timeout_ms: 10_000,
        malformed_limit: 3,
        max_packet_bytes: 8800,
        bounds,
        udp_rx: Default::default(),
        stream: Default::default(),
        local: Default::default(),
        congestion_marking: true,
    };
    let mut t = FaceTable::new(poll.registry().try_clone().unwrap(), cfg);
    let (ours, theirs) = UnixDatagram::pair().unwrap();
    ours.set_nonblocking(true).unwrap();
    let frame = 1500 + HDR_LEN;
    t.ether.push(EtherPort {
        sock: PacketSocket::from_fd(OwnedFd::from(ours), 1500),
        name: "test0".into(),
        mac: PORT_MAC,
        group: None,
        unicast: HashMap::new(),
        channel: true,
        listen: true,
        rx_buf: vec![0; frame],
        tx_buf: Vec::with_capacity(frame),
        counters: EtherCounters::default(),
    });
    (t, theirs, poll)
}

/// Sends an Interest to the port from `src`.
fn send_from(sock: &UnixDatagram, src: u8) {
    let i = wire::Interest::new(wire::Name::from_uri("/e").unwrap(), [src; 4]).to_wire();
    let mut f = Vec::new();
    encode_frame(&mut f, PORT_MAC, MacAddr([2, 0, 0, 0, 1, src]), &i);
    sock.send(&f).unwrap();
}

#[test]
fn ethernet_on_demand_faces_are_in_the_quota_and_the_creation_budget() {
    let (mut t, sock, _poll) = table(FaceBounds {
        max_on_demand_faces: 3,
        on_demand_faces_per_s: 1,
        on_demand_faces_burst: 4,
        ..FaceBounds::default()
    });
    let mut sink = Sink {
        now: 1000,
        ..Sink::default()
    };
    // Five new sources: the burst makes four faces (the fourth evicting the least recently
    // active, the quota being 3), the fifth is refused at the budget.
    for src in 1..=5 {
        send_from(&sock, src);
    }
    t.read_ether(0, &mut sink);
    let b = t.bound_counters();
    assert_eq!(sink.up, 4);
    assert_eq!(sink.received, 4);
    assert_eq!(
        (
            b.on_demand_created,
            b.on_demand_evicted,
            b.on_demand_refused_budget
        ),
        (4, 1, 1)
    );
    assert_eq!(
        b.ether.unknown, 1,
        "the refused frame is counted at its port"
    );
    assert_eq!(t.faces.values().filter(|f| f.quota).count(), 3);
    // A source with a face is not refused.
    send_from(&sock, 4);
    t.read_ether(0, &mut sink);
    assert_eq!((sink.up, sink.received), (4, 5));
    // A second later the bucket holds one more face.
    sink.now += 1000;
    send_from(&sock, 5);
    send_from(&sock, 6);
    t.read_ether(0, &mut sink);
    let b = t.bound_counters();
    assert_eq!((sink.up, b.on_demand_refused_budget), (5, 2));
}
