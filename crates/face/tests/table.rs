//! The face table over loopback sockets, driven as a forwarder's I/O thread drives it.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use face::table::{bind_unix, FaceTable, Listener, Notice};
use face::{
    encode_link, CreateError, Face, FaceConfig, FaceId, FaceRx, FaceSink, LpHeaders, PacketKind,
    PitToken, Reassembler, FIRST_FACE_ID,
};
use mio::{Events, Poll};
use wire::lp::{Nack, NackReason};
use wire::nfd::FacePersistency;
use wire::{Limits, LpPacketView};

/// First byte of a packet the test sink calls malformed.
const GARBAGE: u8 = 0xEE;

/// A sink that records everything, reassembles fragments and calls [`GARBAGE`] malformed.
#[derive(Default)]
struct Sink {
    now: u64,
    up: Vec<FaceId>,
    changed: Vec<FaceId>,
    down: Vec<(FaceId, String)>,
    packets: Vec<(FaceId, Vec<u8>, LpHeaders)>,
}

impl FaceSink for Sink {
    fn now_ms(&self) -> u64 {
        self.now
    }
    fn face_up(&mut self, face: &Face) {
        self.up.push(face.id());
    }
    fn face_changed(&mut self, face: &Face) {
        self.changed.push(face.id());
    }
    fn face_down(&mut self, face: &Face, why: &str) {
        self.down.push((face.id(), why.to_string()));
    }
    fn receive(&mut self, rx: FaceRx<'_>, bytes: &[u8], now_ms: u64) -> bool {
        rx.counters.in_bytes += bytes.len() as u64;
        if bytes.first() == Some(&GARBAGE) {
            rx.counters.malformed += 1;
            return true;
        }
        if bytes.first() != Some(&0x64) {
            rx.counters.count_in(PacketKind::Data);
            self.packets
                .push((rx.id, bytes.to_vec(), LpHeaders::default()));
            return false;
        }
        let lp = LpPacketView::decode(bytes, &Limits::default()).unwrap();
        let r: &mut Reassembler = rx.reassembler.expect("a datagram face");
        if let Some(whole) = r.receive(u64::from(rx.id), &lp, now_ms).unwrap() {
            rx.counters.count_in(PacketKind::Data);
            self.packets
                .push((rx.id, whole.packet.into_owned(), whole.headers));
        }
        false
    }
    fn notice(&mut self, _: Notice<'_>) {}
}

fn config() -> FaceConfig {
    FaceConfig {
        max_faces: 8,
        send_queue_bytes: 1 << 20,
        udp_mtu: 1400,
        udp_idle_timeout_ms: 10_000,
        malformed_limit: 3,
        max_packet_bytes: 8800,
    }
}

struct Driver {
    poll: Poll,
    events: Events,
    table: FaceTable,
    sink: Sink,
}

impl Driver {
    fn new(cfg: FaceConfig) -> Driver {
        let poll = Poll::new().unwrap();
        let table = FaceTable::new(poll.registry().try_clone().unwrap(), cfg);
        Driver {
            poll,
            events: Events::with_capacity(64),
            table,
            sink: Sink::default(),
        }
    }

    /// One turn of an I/O loop.
    fn turn(&mut self) {
        self.table.flush(&mut self.sink);
        self.table.start_turn();
        self.poll
            .poll(&mut self.events, Some(Duration::from_millis(20)))
            .unwrap();
        for ev in self.events.iter() {
            let readable = ev.is_readable() || ev.is_read_closed();
            self.table
                .on_event(ev.token(), readable, ev.is_writable(), &mut self.sink);
        }
        self.table.serve_pending(&mut self.sink);
    }

    /// Turns until `done` or five seconds have passed.
    fn until(&mut self, mut done: impl FnMut(&Driver) -> bool) {
        let end = Instant::now() + Duration::from_secs(5);
        while !done(self) {
            assert!(Instant::now() < end, "timed out");
            self.turn();
        }
    }
}

/// A Data-like packet of `len` bytes (first byte 0x06).
fn packet(len: usize) -> Vec<u8> {
    let mut v: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
    v[0] = 0x06;
    v
}

fn remote() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

fn listening_udp(d: &mut Driver) -> SocketAddr {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = s.local_addr().unwrap();
    d.table.add_udp_socket(s, true).unwrap();
    addr
}

#[test]
fn udp_on_demand_faces_send_and_fragment() {
    let mut d = Driver::new(config());
    let addr = listening_udp(&mut d);
    let peer = remote();
    let small = packet(100);
    peer.send_to(&small, addr).unwrap();
    d.until(|d| !d.sink.packets.is_empty());
    let id = d.sink.packets[0].0;
    assert_eq!(id, FIRST_FACE_ID);
    assert_eq!(d.sink.up, vec![id]);
    assert_eq!(d.sink.packets[0].1, small);
    let desc = d.table.get(id).unwrap().desc();
    assert_eq!(desc.uri, format!("udp4://{}", peer.local_addr().unwrap()));
    assert_eq!(desc.local_uri, format!("udp4://{addr}"));
    assert_eq!(desc.persistency, FacePersistency::OnDemand);
    assert_eq!(desc.mtu, Some(1400));
    assert_eq!(desc.counters.in_bytes, 100);

    // An oversized packet with link headers goes out in fragments that reassemble to the
    // packet and its headers; a small one goes out as it is.
    let h = LpHeaders {
        pit_token: PitToken::new(&[0xCA, 0x5C, 1]),
        nack: Some(Nack {
            reason: Some(NackReason::Congestion),
        }),
        ..LpHeaders::default()
    };
    let big = packet(5000);
    let mut link = Vec::new();
    assert!(encode_link(&mut link, &h, &big, usize::MAX));
    d.table.send(id, PacketKind::Nack, &link);
    d.table.send(id, PacketKind::Data, &small);
    d.table.flush(&mut d.sink);
    let mut r = Reassembler::default();
    let mut buf = vec![0u8; 9000];
    let mut whole = None;
    let mut datagrams = 0;
    while whole.is_none() {
        let n = peer.recv(&mut buf).unwrap();
        assert!(n <= 1400);
        datagrams += 1;
        let lp = LpPacketView::decode(&buf[..n], &Limits::default()).unwrap();
        whole = r.receive(1, &lp, 0).unwrap().map(|w| w.into_owned());
    }
    let whole = whole.unwrap();
    assert_eq!(whole.packet.as_ref(), &big[..]);
    assert_eq!(whole.headers, h);
    assert_eq!(datagrams, 4);
    let n = peer.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], &small[..]);
    let c = d.table.get(id).unwrap().counters();
    assert_eq!((c.out_nacks, c.out_data), (1, 1));
    assert!(c.out_bytes > (link.len() + small.len()) as u64);

    // Fragments from the remote are reassembled through the face's reassembler.
    let mut f = face::Fragmenter::new(1000, 7).unwrap();
    let mut pieces = vec![];
    f.fragment(&big, &h, &mut pieces).unwrap();
    for p in pieces.iter().rev() {
        peer.send_to(p, addr).unwrap();
    }
    d.until(|d| d.sink.packets.len() == 2);
    assert_eq!(d.sink.packets[1], (id, big.clone(), h));
}

/// Datagrams queued for several remotes, interleaved, of equal sizes (sent as segmented runs
/// where the kernel allows) and of mixed sizes, reach each remote whole, one packet per
/// datagram, in the order they were queued for it.
#[test]
fn udp_sends_keep_each_remotes_order_and_datagram_boundaries() {
    let mut d = Driver::new(config());
    let addr = listening_udp(&mut d);
    let peers = [remote(), remote()];
    for p in &peers {
        p.send_to(&packet(10), addr).unwrap();
    }
    d.until(|d| d.sink.up.len() == 2);
    let ids = [d.sink.packets[0].0, d.sink.packets[1].0];
    // Peer 0 gets 150 packets of 300 bytes, peer 1 packets of 100 to 139 bytes; each carries
    // its number in its second and third bytes.
    let numbered = |k: usize, len: usize| {
        let mut p = packet(len);
        p[1..3].copy_from_slice(&(k as u16).to_be_bytes());
        p
    };
    let lens = |who: usize, k: usize| if who == 0 { 300 } else { 100 + k % 40 };
    for k in 0..150 {
        for (who, &id) in ids.iter().enumerate() {
            d.table
                .send(id, PacketKind::Data, &numbered(k, lens(who, k)));
        }
    }
    d.table.flush(&mut d.sink);
    let mut buf = vec![0u8; 9000];
    for (who, p) in peers.iter().enumerate() {
        for k in 0..150 {
            let n = p.recv(&mut buf).unwrap();
            assert_eq!(
                &buf[..n],
                &numbered(k, lens(who, k))[..],
                "peer {who}, packet {k}"
            );
        }
    }
}

#[test]
fn udp_faces_by_management_idle_expiry_and_garbage() {
    let mut d = Driver::new(config());
    let addr = listening_udp(&mut d);
    let peer = remote();
    let to = peer.local_addr().unwrap();
    let desc = d
        .table
        .create_udp(to, FacePersistency::Persistent, Some(100), &mut d.sink)
        .unwrap();
    assert_eq!(desc.mtu, Some(128), "MTU clamped");
    assert_eq!(desc.local_uri, format!("udp4://{addr}"));
    match d
        .table
        .create_udp(to, FacePersistency::Permanent, None, &mut d.sink)
    {
        Err(CreateError::Exists(e)) => assert_eq!(e.id, desc.id),
        other => panic!("{other:?}"),
    }
    let e = d
        .table
        .update(desc.id, None, Some(true), &mut d.sink)
        .unwrap_err();
    assert_eq!(
        e.as_deref(),
        Some("LocalFieldsEnabled cannot be set on a non-local face")
    );
    assert_eq!(
        d.table.update(999, None, None, &mut d.sink).unwrap_err(),
        None
    );
    let u = d
        .table
        .update(desc.id, Some(FacePersistency::OnDemand), None, &mut d.sink)
        .unwrap();
    assert_eq!(u.persistency, FacePersistency::OnDemand);
    assert_eq!(d.sink.changed, vec![desc.id]);
    // An on-demand face is upgraded, not refused.
    let again = d
        .table
        .create_udp(to, FacePersistency::Persistent, None, &mut d.sink)
        .unwrap();
    assert_eq!(
        (again.id, again.persistency),
        (desc.id, FacePersistency::Persistent)
    );

    // Idle on-demand faces close; persistent ones stay.
    let other = remote();
    other.send_to(&packet(10), addr).unwrap();
    d.until(|d| d.sink.up.len() == 2);
    let on_demand = d.sink.up[1];
    d.table.sweep(10_001, &mut d.sink);
    assert_eq!(d.sink.down, vec![(on_demand, "idle".to_string())]);
    assert!(d.table.get(desc.id).is_some());

    // Garbage past the limit closes an on-demand face and keeps its remote out.
    let bad = remote();
    for _ in 0..3 {
        bad.send_to(&[GARBAGE, 0], addr).unwrap();
    }
    d.until(|d| d.sink.down.len() == 2);
    assert_eq!(d.sink.down[1].1, "too many malformed packets");
    let ups = d.sink.up.len();
    bad.send_to(&packet(10), addr).unwrap();
    for _ in 0..5 {
        d.turn();
    }
    assert_eq!(d.sink.up.len(), ups, "kept out");
    let list = d.table.list();
    assert_eq!(list.len(), 1);
    assert_eq!(
        d.table.close(desc.id, "bye", &mut d.sink).unwrap().id,
        desc.id
    );
    assert!(d.table.list().is_empty());
}

struct TmpPath(PathBuf);

impl Drop for TmpPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn unix_listener_accepts_local_stream_faces() {
    let dir = TmpPath(std::env::temp_dir().join(format!("face-table-{}", std::process::id())));
    let path = dir.0.join("sub/face.sock");
    let mut d = Driver::new(config());
    let l = bind_unix(&path).unwrap();
    d.table
        .add_listener(Listener::Unix(l, path.clone()))
        .unwrap();
    // A live socket is not stolen (the probe connects: one face that closes at once).
    assert!(bind_unix(&path).is_err());
    let mut app = UnixStream::connect(&path).unwrap();
    app.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let p = vec![0x06, 0x03, 1, 2, 3];
    app.write_all(&p).unwrap();
    app.write_all(&p).unwrap();
    d.until(|d| d.sink.packets.len() == 2);
    let id = d.sink.packets[0].0;
    let desc = d.table.get(id).unwrap().desc();
    assert_eq!(desc.uri, format!("fd://{id}"));
    assert_eq!(desc.local_uri, format!("unix://{}", path.display()));
    assert!(desc.local && desc.mtu.is_none());
    let u = d.table.update(id, None, Some(true), &mut d.sink).unwrap();
    assert!(u.local_fields);
    d.table.send(id, PacketKind::Interest, &p);
    d.table.flush(&mut d.sink);
    let mut back = [0u8; 5];
    app.read_exact(&mut back).unwrap();
    assert_eq!(back.to_vec(), p);
    assert_eq!(d.table.get(id).unwrap().counters().out_interests, 1);
    drop(app);
    let closed = (id, "closed by peer".to_string());
    d.until(|d| d.sink.down.contains(&closed));
    d.table.remove_socket_files();
    assert!(!path.exists());
}

#[test]
fn the_face_limit_holds() {
    let mut d = Driver::new(FaceConfig {
        max_faces: 1,
        ..config()
    });
    listening_udp(&mut d);
    let a = remote().local_addr().unwrap();
    let b = remote().local_addr().unwrap();
    let p = FacePersistency::Persistent;
    d.table.create_udp(a, p, None, &mut d.sink).unwrap();
    match d.table.create_udp(b, p, None, &mut d.sink) {
        Err(CreateError::Failed(e)) => assert_eq!(e, "face limit reached"),
        other => panic!("{other:?}"),
    }
}
