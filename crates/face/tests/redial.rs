//! Permanent TCP faces redial their remote when the connection fails, with NFD's back-off
//! (the table's clock is the test's: the sweep decides when an attempt starts).
#![cfg(target_os = "linux")]

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

use face::table::INITIAL_REDIAL_MS;
use face::{FaceId, FaceParams, PacketKind};
use support::{config, Driver};
use wire::nfd::FacePersistency;

const PACKET: [u8; 4] = [0x05, 0x02, 0x07, 0x00];

fn listen(addr: SocketAddr) -> TcpListener {
    let l = TcpListener::bind(addr).unwrap();
    l.set_nonblocking(true).unwrap();
    l
}

/// Turns the table until `l` accepts a connection.
fn accept(d: &mut Driver, l: &TcpListener) -> TcpStream {
    let mut got = None;
    d.until(|_| {
        if got.is_none() {
            got = l.accept().ok().map(|(s, _)| s);
        }
        got.is_some()
    });
    got.unwrap()
}

/// Turns the table a few times: `l` must accept nothing meanwhile (no attempt was made).
fn no_attempt(d: &mut Driver, l: &TcpListener) {
    for _ in 0..5 {
        d.turn();
        let r = l.accept();
        assert!(
            matches!(&r, Err(e) if e.kind() == ErrorKind::WouldBlock),
            "{r:?}"
        );
    }
}

fn permanent() -> FaceParams {
    FaceParams {
        persistency: FacePersistency::Permanent,
        ..FaceParams::default()
    }
}

/// The face's remote end sends a packet through `peer`; the face receives it.
fn carries(d: &mut Driver, id: FaceId, peer: &mut TcpStream) {
    let before = d.sink.packets.len();
    peer.write_all(&PACKET).unwrap();
    d.until(|d| d.sink.packets.len() > before);
    assert_eq!(d.sink.packets[before].0, id);
    assert!(d.table.send(id, PacketKind::Interest, &PACKET));
    d.turn();
    let mut buf = [0u8; 4];
    peer.set_nonblocking(false).unwrap();
    peer.read_exact(&mut buf).unwrap();
    assert_eq!(buf, PACKET);
}

#[test]
fn a_permanent_tcp_face_goes_down_redials_with_back_off_and_comes_back_up() {
    let mut d = Driver::new(config());
    let l = listen("127.0.0.1:0".parse().unwrap());
    let addr = l.local_addr().unwrap();
    let conn = TcpStream::connect(addr).unwrap();
    let desc = d.table.adopt_tcp(conn, &permanent(), &mut d.sink).unwrap();
    let id = desc.id;
    let mut peer = accept(&mut d, &l);
    carries(&mut d, id, &mut peer);
    assert!(d.table.is_up(id));

    // The remote goes away: DOWN at once, still listed, dialing right away (refused).
    drop(l);
    drop(peer);
    d.until(|d| !d.sink.states.is_empty());
    assert_eq!(d.sink.states, [(id, false)]);
    assert!(!d.table.is_up(id) && d.table.get(id).is_some());
    assert_eq!(d.table.faces_down(), 1);
    assert!(d.sink.down.is_empty());
    // What is sent meanwhile is dropped and counted.
    let dropped = d.table.get(id).unwrap().counters().drop_queue_full;
    assert!(d.table.send(id, PacketKind::Interest, &PACKET));
    assert_eq!(
        d.table.get(id).unwrap().counters().drop_queue_full,
        dropped + 1
    );

    // Back before the wait is over: no new attempt until it is.
    let l = listen(addr);
    no_attempt(&mut d, &l);
    d.table.sweep(INITIAL_REDIAL_MS - 1, &mut d.sink);
    no_attempt(&mut d, &l);
    d.sink.now = INITIAL_REDIAL_MS;
    d.table.sweep(INITIAL_REDIAL_MS, &mut d.sink);
    let mut peer = accept(&mut d, &l);
    d.until(|d| d.sink.states.len() == 2);
    assert_eq!(d.sink.states, [(id, false), (id, true)]);
    assert!(d.table.is_up(id));
    carries(&mut d, id, &mut peer);

    // Down again; the first attempt (at once) and the second (after 1 s) are refused, so the
    // third waits 2 s.
    drop(l);
    drop(peer);
    d.until(|d| d.sink.states.len() == 3);
    let t = d.sink.now;
    d.table.sweep(t + INITIAL_REDIAL_MS, &mut d.sink);
    for _ in 0..5 {
        d.turn();
    }
    let l = listen(addr);
    d.table.sweep(t + 3 * INITIAL_REDIAL_MS - 1, &mut d.sink);
    no_attempt(&mut d, &l);
    d.table.sweep(t + 3 * INITIAL_REDIAL_MS, &mut d.sink);
    let _peer = accept(&mut d, &l);
    d.until(|d| d.sink.states.len() == 4);
    assert_eq!(d.sink.states[3], (id, true));

    // Closed by management: gone, with no more attempts.
    assert!(d.table.close(id, "destroyed", &mut d.sink).is_some());
    assert_eq!(d.table.faces_down(), 0);
}

#[test]
fn an_unreachable_permanent_face_is_created_down_and_comes_up_when_its_remote_listens() {
    let mut d = Driver::new(config());
    let addr = listen("127.0.0.1:0".parse().unwrap()).local_addr().unwrap();
    let desc = d.table.dial_tcp(addr, &permanent(), &mut d.sink).unwrap();
    let id = desc.id;
    assert_eq!(desc.persistency, FacePersistency::Permanent);
    assert_eq!(desc.uri, format!("tcp4://{addr}"));
    assert_eq!(d.sink.up, [id]);
    assert_eq!(d.sink.states, [(id, false)]);
    // A second one to the same remote is refused.
    assert!(d.table.dial_tcp(addr, &permanent(), &mut d.sink).is_err());
    for _ in 0..5 {
        d.turn();
    }
    let l = listen(addr);
    d.table.sweep(INITIAL_REDIAL_MS, &mut d.sink);
    let mut peer = accept(&mut d, &l);
    d.until(|d| d.sink.states.len() == 2);
    assert_eq!(d.sink.states[1], (id, true));
    carries(&mut d, id, &mut peer);
    let up = d.table.get(id).unwrap().desc();
    assert_ne!(up.local_uri, desc.local_uri);

    // A face that is not permanent closes when its connection fails, as before.
    let change = face::FaceUpdate {
        persistency: Some(FacePersistency::Persistent),
        ..face::FaceUpdate::default()
    };
    d.table.update(id, &change, &mut d.sink).unwrap();
    drop(peer);
    d.until(|d| !d.sink.down.is_empty());
    assert_eq!(d.sink.down[0].0, id);
    assert_eq!(d.sink.states.len(), 2);
}
