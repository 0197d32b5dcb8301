//! The bounds of connection faces over real sockets: send-queue congestion marks as NFD's
//! GenericLinkService puts them, the send-queue budget, the first-packet and idle timeouts,
//! the per-address connection limit.
#![cfg(target_os = "linux")]

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use face::table::{bind_unix, Listener};
use face::{FaceConfig, FaceId, FaceUpdate, PacketKind, StreamFramer, StreamLimits};
use support::Driver;
use wire::{Limits, LpPacketView};

struct TmpDir(PathBuf);

impl TmpDir {
    fn new(tag: &str) -> TmpDir {
        let p = std::env::temp_dir().join(format!("face-limits-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        TmpDir(p)
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn limited(stream: StreamLimits) -> Driver {
    Driver::new(FaceConfig {
        stream,
        ..support::config()
    })
}

/// A Unix face of `d`, its application's end and its id.
fn unix_face(d: &mut Driver, dir: &TmpDir) -> (UnixStream, FaceId) {
    let path = dir.0.join("f.sock");
    if !path.exists() {
        let l = bind_unix(&path).unwrap();
        d.table
            .add_listener(Listener::Unix(l, path.clone()))
            .unwrap();
    }
    let mut app = UnixStream::connect(&path).unwrap();
    app.write_all(&[0x05, 0x01, 0]).unwrap();
    let n = d.sink.up.len();
    d.until(|d| d.sink.up.len() > n);
    (app, *d.sink.up.last().unwrap())
}

fn data(len: usize) -> Vec<u8> {
    let mut d = wire::Data::new(wire::Name::from_uri("/m").unwrap(), vec![3; len]);
    d.sign_digest_sha256();
    d.to_wire()
}

/// Reads what the application has been sent, as long as the face keeps sending, and tells
/// how many packets came, how many were marked, and that every one is the Data sent.
fn read_all(d: &mut Driver, app: &mut UnixStream, id: FaceId, pkt: &[u8]) -> (u64, u64) {
    app.set_nonblocking(true).unwrap();
    let mut framer = StreamFramer::default();
    let (mut n, mut marked) = (0, 0);
    let mut quiet = 0;
    let end = std::time::Instant::now() + Duration::from_secs(5);
    while quiet < 20 && std::time::Instant::now() < end {
        d.turn();
        let got = framer.fill_from(app).unwrap_or(0);
        quiet = if got == 0 { quiet + 1 } else { 0 };
        while let Some(p) = framer.next_packet().unwrap() {
            n += 1;
            if p[0] == 0x64 {
                let lp = LpPacketView::decode(p, &Limits::default()).unwrap();
                assert_eq!(lp.congestion_mark, Some(1));
                assert_eq!(lp.fragment(), Some(pkt));
                marked += 1;
            } else {
                assert_eq!(p, pkt);
            }
        }
    }
    app.set_nonblocking(false).unwrap();
    d.table.sweep(d.sink.now, &mut d.sink);
    assert_eq!(d.table.send_queue_bytes(id), Some(0));
    (n, marked)
}

#[test]
fn a_congested_stream_face_marks_as_nfd() {
    let dir = TmpDir::new("mark");
    let mut d = limited(StreamLimits::default());
    let (mut app, id) = unix_face(&mut d, &dir);
    assert!(d.table.get(id).unwrap().desc().options.congestion_marking);
    let pkt = data(4000);
    let marks = |d: &Driver| d.table.get(id).unwrap().counters().congestion_marks;
    // Above the threshold (65,536 bytes): the first packet over it is marked, and only that.
    for _ in 0..40 {
        d.table.send(id, PacketKind::Data, &pkt);
    }
    assert!(d.table.send_queue_bytes(id).unwrap() > 65_536);
    assert_eq!(marks(&d), 1);
    d.table.flush(&mut d.sink);
    // 99 ms later, no other; at 100 ms the next packet is marked, and only that one.
    d.sink.now += 99;
    d.table.flush(&mut d.sink);
    d.table.send(id, PacketKind::Data, &pkt);
    assert_eq!(marks(&d), 1);
    d.sink.now += 1;
    d.table.flush(&mut d.sink);
    d.table.send(id, PacketKind::Data, &pkt);
    d.table.send(id, PacketKind::Data, &pkt);
    assert_eq!(marks(&d), 2);
    // The next is due 100 / sqrt(3) = 57.7 ms later.
    d.sink.now += 57;
    d.table.flush(&mut d.sink);
    d.table.send(id, PacketKind::Data, &pkt);
    assert_eq!(marks(&d), 2);
    d.sink.now += 1;
    d.table.flush(&mut d.sink);
    d.table.send(id, PacketKind::Data, &pkt);
    assert_eq!(marks(&d), 3);
    // The application gets every packet, the marked ones as LpPackets with the mark.
    let (n, marked) = read_all(&mut d, &mut app, id, &pkt);
    assert_eq!((n, marked), (45, 3));
    // The queue drained: the incident is over; a new one starts with a mark again.
    for _ in 0..40 {
        d.table.send(id, PacketKind::Data, &pkt);
    }
    assert_eq!(marks(&d), 4);
    // Marking off (faces/update): no marks however long the queue stays long.
    let off = FaceUpdate {
        congestion_marking: Some(false),
        ..FaceUpdate::default()
    };
    d.table.update(id, &off, &mut d.sink).unwrap();
    d.sink.now += 1000;
    d.table.flush(&mut d.sink);
    d.table.send(id, PacketKind::Data, &pkt);
    assert_eq!(marks(&d), 4);
    let (n, marked) = read_all(&mut d, &mut app, id, &pkt);
    assert_eq!((n, marked), (41, 1));
}

#[test]
fn the_send_queue_budget_is_shared_by_every_stream_face() {
    let dir = TmpDir::new("budget");
    let mut d = limited(StreamLimits {
        send_queue_budget_bytes: 50_000,
        ..StreamLimits::default()
    });
    let (_a, a) = unix_face(&mut d, &dir);
    let (_b, b) = unix_face(&mut d, &dir);
    let pkt = data(900);
    let len = pkt.len();
    // Queued without a flush: all of it stays in the table's queues.
    for _ in 0..30 {
        d.table.send(a, PacketKind::Data, &pkt);
        d.table.send(b, PacketKind::Data, &pkt);
    }
    let fit = 50_000 / len;
    assert_eq!(d.table.queued_bytes(), fit * len);
    assert_eq!(
        d.table.stream_limit_counters().budget_refused,
        60 - fit as u64
    );
    let drops = |id| d.table.get(id).unwrap().counters().drop_queue_full;
    assert_eq!(drops(a) + drops(b), 60 - fit as u64);
    // Sent: the budget is free again.
    d.table.flush(&mut d.sink);
    assert!(d.table.queued_bytes() < fit * len);
    // Closing a face gives back what its queue held.
    d.table.send(a, PacketKind::Data, &pkt);
    let before = d.table.queued_bytes();
    let held = d.table.send_queue_bytes(a).unwrap();
    d.table.close(a, "test", &mut d.sink);
    assert!(d.table.queued_bytes() <= before.saturating_sub(held.min(before)) + len);
}

fn tcp_listener(d: &mut Driver) -> std::net::SocketAddr {
    let l = mio::net::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = l.local_addr().unwrap();
    d.table.add_listener(Listener::Tcp(l, addr)).unwrap();
    addr
}

/// Whether the router closed `s` (end of stream or reset).
fn closed(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut b = [0u8; 64];
    matches!(s.read(&mut b), Ok(0) | Err(_))
}

#[test]
fn silent_and_idle_connections_are_closed() {
    let dir = TmpDir::new("idle");
    let mut d = limited(StreamLimits {
        first_packet_timeout_ms: 1000,
        idle_timeout_ms: 5000,
        ..StreamLimits::default()
    });
    let addr = tcp_listener(&mut d);
    let mut silent = TcpStream::connect(addr).unwrap();
    d.until(|d| d.sink.up.len() == 1);
    let mut talker = TcpStream::connect(addr).unwrap();
    talker.write_all(&[0x05, 0x01, 0]).unwrap();
    d.until(|d| d.sink.up.len() == 2 && !d.sink.packets.is_empty());
    // A Unix face is not timed out by default.
    let (_app, unix) = {
        let mut app = UnixStream::connect({
            let p = dir.0.join("f.sock");
            let l = bind_unix(&p).unwrap();
            d.table.add_listener(Listener::Unix(l, p.clone())).unwrap();
            p
        })
        .unwrap();
        app.write_all(&[0x05, 0x01, 0]).unwrap();
        d.until(|d| d.sink.up.len() == 3);
        (app, d.sink.up[2])
    };
    let (s, t) = (d.sink.up[0], d.sink.up[1]);
    d.sink.now += 1000;
    d.table.sweep(d.sink.now, &mut d.sink);
    assert!(d.table.get(s).is_some(), "not past the timeout yet");
    d.sink.now += 1;
    d.table.sweep(d.sink.now, &mut d.sink);
    assert!(d.table.get(s).is_none());
    assert!(d.table.get(t).is_some() && d.table.get(unix).is_some());
    assert!(closed(&mut silent));
    // Sending keeps a face alive as receiving does.
    d.sink.now += 4000;
    d.table.flush(&mut d.sink);
    d.table.send(t, PacketKind::Interest, &[0x05, 0x01, 0]);
    d.sink.now += 4000;
    d.table.sweep(d.sink.now, &mut d.sink);
    assert!(d.table.get(t).is_some());
    d.sink.now += 1001;
    d.table.sweep(d.sink.now, &mut d.sink);
    assert!(d.table.get(t).is_none());
    assert!(d.table.get(unix).is_some());
    let c = d.table.stream_limit_counters();
    assert_eq!((c.first_packet_timeouts, c.idle_timeouts), (1, 1));
    let why: Vec<&str> = d.sink.down.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(why, ["no packet within the first-packet timeout", "idle"]);
}

#[test]
fn one_address_holds_at_most_its_connections() {
    let mut d = limited(StreamLimits {
        max_connections_per_address: 2,
        ..StreamLimits::default()
    });
    let addr = tcp_listener(&mut d);
    let _a = TcpStream::connect(addr).unwrap();
    let b = TcpStream::connect(addr).unwrap();
    d.until(|d| d.sink.up.len() == 2);
    let mut c = TcpStream::connect(addr).unwrap();
    d.until(|d| d.table.stream_limit_counters().per_address_refused == 1);
    assert!(closed(&mut c));
    // Noticed as the per-address limit's refusal, not the face limit's.
    assert_eq!(d.sink.refused, [Some(addr.ip())]);
    assert_eq!(d.table.list().len(), 2);
    // One goes: room for another.
    drop(b);
    d.until(|d| d.table.list().len() == 1);
    let _e = TcpStream::connect(addr).unwrap();
    d.until(|d| d.sink.up.len() == 3);
    assert_eq!(d.table.stream_limit_counters().per_address_refused, 1);
}
