// The face table over loopback sockets, driven as a forwarder's I/O thread drives it; included
// by `table.rs` (UDP receiving with `recvmmsg`) and `table_uring.rs` (through io_uring), each of
// which sets `UDP_RX`.

use std::io::{Read, Write};
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use face::table::{bind_unix, FaceBounds, FaceTable, Listener, MIN_MTU};
use face::{
    encode_link, CreateError, FaceConfig, FaceId, FaceParams, FaceUpdate,
    LinkOptions, LpHeaders, PacketKind, PitToken, Reassembler, Refusal, UpdateError, FIRST_FACE_ID,
};
use mio::Poll;
use wire::lp::{Nack, NackReason};
use wire::nfd::FacePersistency;
use wire::{Limits, LpPacketView};
use support::{Driver, Sink, GARBAGE};

/// The shared configuration, with this suite's UDP receive.
fn config() -> FaceConfig {
    FaceConfig {
        udp_rx: UDP_RX,
        local: Default::default(),
        ..support::config()
    }
}

/// A well-formed Data packet of about `len` bytes (what a new remote's first datagram must
/// be for the table to give it a face).
fn data(len: usize) -> Vec<u8> {
    let mut d = wire::Data::new(wire::Name::from_uri("/t").unwrap(), vec![7; len]);
    d.sign_digest_sha256();
    d.to_wire()
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
    let small = data(100);
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
    assert_eq!(desc.counters.in_bytes, small.len() as u64);

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
        p.send_to(&data(10), addr).unwrap();
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
    let params = |persistency, mtu| FaceParams {
        persistency,
        mtu,
        ..FaceParams::default()
    };
    let desc = d
        .table
        .create_udp(
            to,
            &params(FacePersistency::Persistent, Some(10)),
            &mut d.sink,
        )
        .unwrap();
    assert_eq!(desc.mtu, Some(MIN_MTU as u64), "MTU clamped");
    assert_eq!(desc.local_uri, format!("udp4://{addr}"));
    assert_eq!(desc.options, LinkOptions::default());
    match d
        .table
        .create_udp(to, &params(FacePersistency::Permanent, None), &mut d.sink)
    {
        Err(CreateError::Exists(e)) => assert_eq!(e.id, desc.id),
        other => panic!("{other:?}"),
    }
    // Refused changes: none of the changes asked is made.
    let refused = FaceUpdate {
        local_fields: Some(true),
        persistency: Some(FacePersistency::Other(9)),
        mtu: Some(63),
        lp_reliability: Some(true),
        ..FaceUpdate::default()
    };
    let e = d.table.update(desc.id, &refused, &mut d.sink).unwrap_err();
    let want = Refusal {
        local_fields: true,
        persistency: Some(FacePersistency::Other(9)),
        mtu: Some(63),
    };
    assert_eq!(e, UpdateError::Refused(want));
    assert!(!d.table.get(desc.id).unwrap().desc().options.lp_reliability);
    let none = FaceUpdate::default();
    assert_eq!(
        d.table.update(999, &none, &mut d.sink).unwrap_err(),
        UpdateError::NotFound
    );
    let change = FaceUpdate {
        persistency: Some(FacePersistency::OnDemand),
        mtu: Some(1000),
        local_fields: Some(false),
        lp_reliability: Some(true),
        congestion_marking: Some(true),
        base_congestion_marking_interval_ns: Some(5),
        default_congestion_threshold_bytes: Some(6),
    };
    let u = d.table.update(desc.id, &change, &mut d.sink).unwrap();
    assert_eq!(
        (u.persistency, u.mtu),
        (FacePersistency::OnDemand, Some(1000))
    );
    let o = u.options;
    assert!(!o.local_fields && o.lp_reliability && o.congestion_marking);
    assert_eq!(
        (
            o.base_congestion_marking_interval_ns,
            o.default_congestion_threshold_bytes
        ),
        (5, 6)
    );
    assert_eq!(d.sink.changed, vec![desc.id]);
    // An on-demand face is refused too, and stays on-demand.
    match d
        .table
        .create_udp(to, &params(FacePersistency::Persistent, None), &mut d.sink)
    {
        Err(CreateError::Exists(e)) => {
            assert_eq!((e.id, e.persistency), (desc.id, FacePersistency::OnDemand))
        }
        other => panic!("{other:?}"),
    }
    let keep = FaceUpdate {
        persistency: Some(FacePersistency::Persistent),
        ..FaceUpdate::default()
    };
    d.table.update(desc.id, &keep, &mut d.sink).unwrap();

    // Idle on-demand faces close; persistent ones stay.
    let other = remote();
    other.send_to(&data(10), addr).unwrap();
    d.until(|d| d.sink.up.len() == 2);
    let on_demand = d.sink.up[1];
    d.table.sweep(10_001, &mut d.sink);
    assert_eq!(d.sink.down, vec![(on_demand, "idle".to_string())]);
    assert!(d.table.get(desc.id).is_some());

    // Garbage past the limit closes an on-demand face and keeps its remote out.
    let bad = remote();
    bad.send_to(&data(1), addr).unwrap();
    for _ in 0..3 {
        bad.send_to(&[GARBAGE, 0], addr).unwrap();
    }
    d.until(|d| d.sink.down.len() == 2);
    assert_eq!(d.sink.down[1].1, "too many malformed packets");
    let ups = d.sink.up.len();
    bad.send_to(&data(10), addr).unwrap();
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
    let on = FaceUpdate {
        local_fields: Some(true),
        ..FaceUpdate::default()
    };
    let u = d.table.update(id, &on, &mut d.sink).unwrap();
    assert!(u.options.local_fields);
    // A Unix face keeps its persistency, and a stream face has no MTU to change.
    let refused = FaceUpdate {
        persistency: Some(FacePersistency::Permanent),
        mtu: Some(1400),
        ..FaceUpdate::default()
    };
    let want = Refusal {
        persistency: Some(FacePersistency::Permanent),
        mtu: Some(1400),
        ..Refusal::default()
    };
    let e = d.table.update(id, &refused, &mut d.sink).unwrap_err();
    assert_eq!(e, UpdateError::Refused(want));
    let same = FaceUpdate {
        persistency: Some(FacePersistency::OnDemand),
        ..FaceUpdate::default()
    };
    assert!(d.table.update(id, &same, &mut d.sink).is_ok());
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
    let p = FaceParams::default();
    d.table.create_udp(a, &p, &mut d.sink).unwrap();
    match d.table.create_udp(b, &p, &mut d.sink) {
        Err(CreateError::Failed(e)) => assert_eq!(e, "face limit reached"),
        other => panic!("{other:?}"),
    }
}

fn interest(n: u32) -> Vec<u8> {
    wire::Interest::new(wire::Name::from_uri("/t").unwrap(), n.to_be_bytes()).to_wire()
}

/// A socket on loopback address `ip` (any of 127.0.0.0/8: another host to the table).
fn remote_on(ip: &str) -> UdpSocket {
    let s = UdpSocket::bind(format!("{ip}:0")).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

fn bounded(max_faces: usize, bounds: FaceBounds) -> Driver {
    Driver::new(FaceConfig {
        max_faces,
        bounds,
        ..config()
    })
}

#[test]
fn on_demand_faces_have_a_quota_and_the_least_recently_active_goes() {
    let mut d = bounded(
        8,
        FaceBounds {
            max_on_demand_faces: 3,
            ..FaceBounds::default()
        },
    );
    let addr = listening_udp(&mut d);
    let peers: Vec<UdpSocket> = (0..4).map(|_| remote()).collect();
    for (t, p) in peers[..3].iter().enumerate() {
        d.sink.now = 1000 + t as u64;
        p.send_to(&interest(t as u32), addr).unwrap();
        d.until(|d| d.sink.up.len() == t + 1);
    }
    let ids = d.sink.up.clone();
    // The first remote is active again; the second is now the least recently active.
    d.sink.now = 2000;
    peers[0].send_to(&interest(9), addr).unwrap();
    d.until(|d| d.sink.packets.len() == 4);
    d.sink.now = 2001;
    peers[3].send_to(&interest(10), addr).unwrap();
    d.until(|d| d.sink.up.len() == 4);
    assert_eq!(
        d.sink.down,
        [(ids[1], "evicted: on-demand face quota".to_string())]
    );
    assert_eq!(d.table.on_demand_faces(), 3);
    let c = d.table.bound_counters();
    assert_eq!((c.on_demand_created, c.on_demand_evicted), (4, 1));
    // Made persistent, a face leaves the quota: the next remote evicts nothing.
    let u = d
        .table
        .update(
            ids[0],
            &FaceUpdate {
                persistency: Some(FacePersistency::Persistent),
                ..FaceUpdate::default()
            },
            &mut d.sink,
        )
        .unwrap();
    assert_eq!(u.persistency, FacePersistency::Persistent);
    assert_eq!(d.table.on_demand_faces(), 2);
    let fifth = remote();
    fifth.send_to(&interest(11), addr).unwrap();
    d.until(|d| d.sink.up.len() == 5);
    assert_eq!(d.table.bound_counters().on_demand_evicted, 1);
    // The sweep tells the driver once what the bounds did.
    d.table.sweep(3000, &mut d.sink);
    d.table.sweep(4000, &mut d.sink);
    assert_eq!(d.sink.bounds.len(), 1);
    assert_eq!(d.sink.bounds[0].on_demand_evicted, 1);
}

#[test]
fn one_host_cannot_take_the_quota_and_garbage_creates_no_face() {
    let mut d = bounded(
        16,
        FaceBounds {
            max_on_demand_faces: 8,
            max_on_demand_per_host: 2,
            ..FaceBounds::default()
        },
    );
    let addr = listening_udp(&mut d);
    // One host varying its source port: two faces, the third port is refused.
    let same: Vec<UdpSocket> = (0..3).map(|_| remote_on("127.0.0.1")).collect();
    for (n, p) in same.iter().enumerate() {
        p.send_to(&interest(n as u32), addr).unwrap();
    }
    d.until(|d| d.table.bound_counters().on_demand_refused_host == 1);
    assert_eq!(d.sink.up.len(), 2);
    // Another host still gets a face.
    let other = remote_on("127.0.0.2");
    other.send_to(&interest(7), addr).unwrap();
    d.until(|d| d.sink.up.len() == 3);
    // A datagram that is no NDN packet creates no face, from any host.
    let bad = remote_on("127.0.0.3");
    bad.send_to(&[GARBAGE, 0, 1], addr).unwrap();
    bad.send_to(&packet(40), addr).unwrap();
    d.until(|d| d.table.bound_counters().on_demand_refused_malformed == 2);
    assert_eq!(d.sink.up.len(), 3);
    // Once one of the host's faces closes, it may have another.
    d.table.close(d.sink.up[0], "bye", &mut d.sink);
    same[2].send_to(&interest(8), addr).unwrap();
    d.until(|d| d.sink.up.len() == 4);
    assert_eq!(d.table.on_demand_faces(), 3);
}

#[test]
fn a_local_face_takes_the_place_of_an_on_demand_face_in_a_full_table() {
    let dir = TmpPath(std::env::temp_dir().join(format!("face-bounds-{}", std::process::id())));
    let path = dir.0.join("face.sock");
    let mut d = bounded(
        3,
        FaceBounds {
            max_on_demand_faces: 2,
            ..FaceBounds::default()
        },
    );
    let addr = listening_udp(&mut d);
    let l = bind_unix(&path).unwrap();
    d.table
        .add_listener(Listener::Unix(l, path.clone()))
        .unwrap();
    let persistent = remote().local_addr().unwrap();
    d.table
        .create_udp(
            persistent,
            &FaceParams {
                persistency: FacePersistency::Persistent,
                ..FaceParams::default()
            },
            &mut d.sink,
        )
        .unwrap();
    let peers: Vec<UdpSocket> = (0..2).map(|_| remote()).collect();
    for (n, p) in peers.iter().enumerate() {
        d.sink.now = 10 + n as u64;
        p.send_to(&interest(n as u32), addr).unwrap();
        d.until(|d| d.sink.up.len() == n + 2);
    }
    assert_eq!(d.table.list().len(), 3);
    let _app = UnixStream::connect(&path).unwrap();
    d.until(|d| d.sink.up.len() == 4);
    assert_eq!(d.sink.down.len(), 1);
    assert_eq!(
        d.sink.down[0].0, d.sink.up[1],
        "the least recently active went"
    );
    assert!(d.table.get(d.sink.up[3]).unwrap().local());
}

#[test]
fn an_unproven_face_gets_at_most_ratio_times_what_it_sent() {
    let mut d = bounded(
        8,
        FaceBounds {
            unproven_send_ratio: 3,
            ..FaceBounds::default()
        },
    );
    let addr = listening_udp(&mut d);
    let victim = remote();
    let i = interest(1);
    victim.send_to(&i, addr).unwrap();
    d.until(|d| d.sink.up.len() == 1);
    let id = d.sink.up[0];
    // A large Data for a small Interest is not sent; a Nack-sized answer is.
    d.table.send(id, PacketKind::Data, &data(1000));
    let small = vec![0x06; 3 * i.len()];
    d.table.send(id, PacketKind::Nack, &small);
    d.table.flush(&mut d.sink);
    let mut buf = [0u8; 9000];
    let n = victim.recv(&mut buf).unwrap();
    // Unproven: in an LpPacket with a TxSequence.
    let lp = wire::LpPacketView::decode(&buf[..n], &wire::Limits::default()).unwrap();
    assert!(lp.tx_sequence.is_some());
    assert_eq!(lp.fragment(), Some(&small[..]));
    assert_eq!(d.table.bound_counters().unproven_send_dropped, 1);
    assert_eq!(d.table.get(id).unwrap().counters().out_data, 0);
    // Once the remote answers with a Data, its address is proven: no bound.
    victim.send_to(&data(1), addr).unwrap();
    d.until(|d| d.sink.packets.len() == 2);
    let big = data(1000);
    d.table.send(id, PacketKind::Data, &big);
    d.table.flush(&mut d.sink);
    let n = victim.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], &big[..]);
}

#[test]
fn the_reassembly_budget_is_shared_by_every_face() {
    let mut f = face::Fragmenter::new(1000, 1).unwrap();
    let mut pieces = vec![];
    f.fragment(&packet(3000), &LpHeaders::default(), &mut pieces)
        .unwrap();
    let first = pieces[0].len();
    let mut d = bounded(
        8,
        FaceBounds {
            reassembly_budget_bytes: 2 * (face::lp_frag::PARTIAL_BYTES + first),
            ..FaceBounds::default()
        },
    );
    let addr = listening_udp(&mut d);
    let peers: Vec<UdpSocket> = (0..3).map(|_| remote()).collect();
    for p in &peers {
        p.send_to(&pieces[0], addr).unwrap();
    }
    d.until(|d| d.table.bound_counters().reassembly_refused == 1);
    assert!(d.table.bound_counters().reassembly_bytes > 0);
    for id in d.sink.up.clone() {
        d.table.close(id, "bye", &mut d.sink);
    }
    assert_eq!(d.table.bound_counters().reassembly_bytes, 0);
}

#[test]
fn face_slots_are_reused_with_a_new_generation_and_a_stale_id_reaches_no_face() {
    let mut d = bounded(
        2,
        FaceBounds {
            max_on_demand_faces: 1,
            face_id_quarantine_ms: 1000,
            ..FaceBounds::default()
        },
    );
    let addr = listening_udp(&mut d);
    let space = d.table.face_id_space();
    // 4 slots of 9 bits: 2^23 generations, so a slot waits 1 ms to be reused.
    assert_eq!(space.slot_bits(), 9);
    assert_eq!(d.table.face_id_reuse_ms(), 1);
    // Remotes churning through the one on-demand place: each evicts the last.
    let mut seen = vec![];
    for t in 0..40u64 {
        d.sink.now = t * 100;
        let p = remote();
        p.send_to(&interest(t as u32), addr).unwrap();
        d.until(|d| d.sink.up.len() == t as usize + 1);
        seen.push(*d.sink.up.last().unwrap());
    }
    let slot = |id: FaceId| space.slot(id);
    let first = FIRST_FACE_ID as usize;
    assert!(seen.iter().all(|&id| (first..first + 4).contains(&slot(id))));
    // Every slot once, then the one freed first, a generation on, and so on in turn.
    let slots: Vec<usize> = seen.iter().map(|&id| slot(id)).collect();
    assert_eq!(slots[..4], [first, first + 1, first + 2, first + 3]);
    assert_eq!(slots[4..8], slots[..4]);
    assert_eq!(space.generation(seen[4]), 1);
    assert_eq!(space.generation(seen[39]), 9);
    let mut unique = seen.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "no full id named two faces");
    let b = d.table.bound_counters();
    assert_eq!((b.on_demand_refused_ids, b.face_ids_reused_early), (0, 0));
    // The live face shares its slot with closed faces of older generations: a packet for one
    // of them is dropped and counted, and the live face is sent nothing.
    let live = *seen.last().unwrap();
    let stale = seen[..39].iter().copied().find(|&id| slot(id) == slot(live));
    let stale = stale.expect("an older generation of the live face's slot");
    let before = d.table.get(live).unwrap().counters();
    assert!(!d.table.send(stale, PacketKind::Data, &data(100)));
    d.table.flush(&mut d.sink);
    assert_eq!(d.table.bound_counters().sent_to_closed_faces, 1);
    assert_eq!(d.table.get(live).unwrap().counters(), before);
    assert!(d.table.send(live, PacketKind::Data, &data(100)));
    assert_eq!(d.table.get(live).unwrap().counters().out_data, 1);
    // An id of no slot of the table (another table's, a reserved one) is not counted.
    assert!(!d.table.send(3, PacketKind::Data, &data(100)));
    assert_eq!(d.table.bound_counters().sent_to_closed_faces, 1);
}

#[test]
fn a_second_udp_face_to_a_remote_exists_without_a_listener_too() {
    let mut d = Driver::new(config());
    let to = remote().local_addr().unwrap();
    let p = FaceParams::default();
    let first = d.table.create_udp(to, &p, &mut d.sink).unwrap();
    // The socket made for it is the wildcard's; the face shows the source toward the remote.
    assert!(first.local_uri.starts_with("udp4://127.0.0.1:"), "{}", first.local_uri);
    match d.table.create_udp(to, &p, &mut d.sink) {
        Err(CreateError::Exists(e)) => assert_eq!(e.id, first.id),
        other => panic!("{other:?}"),
    }
    assert_eq!(d.table.list().len(), 1);
}

/// Two tables holding one UDP group's sockets: the second mirrors the first's face and sends
/// to its remote on its own socket, from the group's address, fragments numbered apart from
/// the owner's; what it sent goes into the face's counters at the owner; a mirror is not
/// listed, and once unmirrored the table no longer sends to the face.
#[test]
fn a_mirror_sends_another_tables_udp_face_from_the_group_address() {
    let (group, steering) = face::table::bind_udp_group("127.0.0.1:0".parse().unwrap(), 2).unwrap();
    assert_eq!(steering.sockets(), 2);
    let local = group[0].local_addr().unwrap();
    let polls = [Poll::new().unwrap(), Poll::new().unwrap()];
    let mut tables = polls
        .each_ref()
        .map(|p| FaceTable::new(p.registry().try_clone().unwrap(), config()));
    let mut sink = Sink::default();
    for (t, s) in tables.iter_mut().zip(group) {
        t.add_udp_socket(s, true).unwrap();
    }
    let [a, b] = &mut tables;
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let desc = a
        .create_udp(
            peer.local_addr().unwrap(),
            &FaceParams::default(),
            &mut sink,
        )
        .unwrap();
    let link = a.get(desc.id).unwrap().udp_link().unwrap();
    assert_eq!((link.mtu, link.local), (1400, local));
    let (small, big) = (data(100), data(3000));
    assert!(
        !b.send(desc.id, PacketKind::Data, &small),
        "not mirrored yet"
    );
    assert!(b.mirror_udp(desc.id, link, 1 << 32));
    assert!(b.send(desc.id, PacketKind::Data, &small));
    assert!(b.send(desc.id, PacketKind::Data, &big));
    b.flush(&mut sink);
    let mut buf = [0u8; 2000];
    let (n, from) = peer.recv_from(&mut buf).unwrap();
    assert_eq!((&buf[..n], from), (&small[..], local));
    for i in 0..3 {
        let (n, from) = peer.recv_from(&mut buf).unwrap();
        assert_eq!(from, local);
        let lp = LpPacketView::decode(&buf[..n], &Limits::default()).unwrap();
        assert_eq!(
            lp.sequence,
            Some((1 << 32) + i),
            "numbered apart from the owner's"
        );
    }
    let mut sent = Vec::new();
    b.take_mirror_counts(|id, c| sent.push((id, c)));
    assert_eq!(sent.len(), 1);
    let (id, c) = sent[0];
    assert_eq!((id, c.out_data), (desc.id, 2));
    assert!(c.out_bytes > (small.len() + big.len()) as u64);
    a.add_counts(id, &c);
    let counters = a.get(desc.id).unwrap().counters();
    assert_eq!((counters.out_data, counters.out_bytes), (2, c.out_bytes));
    b.take_mirror_counts(|_, _| panic!("counted once"));
    assert!(b.list().is_empty() && b.mirrors() == 1);
    assert!(b.send(desc.id, PacketKind::Interest, &interest(1)));
    let mut left = None;
    b.unmirror(desc.id, |c| left = Some(c));
    assert_eq!(left.map(|c| c.out_interests), Some(1));
    assert!(!b.send(desc.id, PacketKind::Data, &small));
    // The id naming a face to another remote replaces a mirror its owner never retired.
    assert!(b.mirror_udp(desc.id, link, 1 << 32));
    let other = UdpSocket::bind("127.0.0.1:0").unwrap();
    other
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let moved = face::table::UdpLink {
        remote: other.local_addr().unwrap(),
        ..link
    };
    assert!(b.mirror_udp(desc.id, moved, 1 << 32));
    assert_eq!(b.mirrors(), 1);
    assert!(b.send(desc.id, PacketKind::Data, &small));
    b.flush(&mut sink);
    let (n, from) = other.recv_from(&mut buf).unwrap();
    assert_eq!((&buf[..n], from), (&small[..], local));
    // A table without a socket of the group cannot mirror.
    let poll = Poll::new().unwrap();
    let mut c = FaceTable::new(poll.registry().try_clone().unwrap(), config());
    assert!(!c.mirror_udp(desc.id, link, 2 << 32));
}
