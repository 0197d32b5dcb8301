//! WebSocket faces over loopback: a real `tungstenite` client against the table's listener,
//! driven as a forwarder's I/O loop drives it.
#![cfg(target_os = "linux")]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use face::table::{
    Listener, MAX_WS_HANDSHAKES, WS_HANDSHAKE_TIMEOUT_MS, WS_PING_INTERVAL_MS, WS_PONG_TIMEOUT_MS,
};
use face::{FaceId, FaceUpdate, PacketKind, Refusal, UpdateError};
use support::{config, Driver};
use tungstenite::protocol::frame::coding::{CloseCode, Data as OpData, OpCode};
use tungstenite::protocol::frame::Frame;
use tungstenite::{Error, Message, WebSocket};
use wire::nfd::FacePersistency;

type Client = WebSocket<TcpStream>;

/// A table with a WebSocket listener on a loopback port; the driver and the listener's
/// address.
fn listening() -> (Driver, SocketAddr) {
    listening_with(config())
}

/// [`listening`] with `cfg`.
fn listening_with(cfg: face::FaceConfig) -> (Driver, SocketAddr) {
    let mut d = Driver::new(cfg);
    let l = mio::net::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = l.local_addr().unwrap();
    d.table.add_listener(Listener::Ws(l, addr)).unwrap();
    (d, addr)
}

/// Connects a client (its handshake in a thread of its own, while the table turns) and waits
/// for its face; the client, non-blocking, and the face's id.
fn connect(d: &mut Driver, addr: SocketAddr) -> (Client, FaceId) {
    let up = d.sink.up.len();
    let h = std::thread::spawn(move || {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        tungstenite::client(format!("ws://{addr}/"), s).unwrap().0
    });
    d.until(|d| h.is_finished() && d.sink.up.len() > up);
    let ws = h.join().unwrap();
    ws.get_ref().set_nonblocking(true).unwrap();
    (ws, *d.sink.up.last().unwrap())
}

/// The next message the client receives, turning the table meanwhile.
fn recv(d: &mut Driver, ws: &mut Client) -> Message {
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        match ws.read() {
            Ok(m) => return m,
            Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("client read: {e}"),
        }
        assert!(Instant::now() < end, "timed out");
        d.turn();
    }
}

/// A binary message from the client.
fn send(ws: &mut Client, m: Message) {
    ws.send(m).unwrap();
}

fn packet(n: u8) -> Vec<u8> {
    wire::Interest::new(wire::Name::from_uri("/ws").unwrap(), [n; 4]).to_wire()
}

#[test]
fn a_websocket_face_carries_one_packet_per_message() {
    let (mut d, addr) = listening();
    assert!(d.table.channels().contains(&format!("ws://{addr}")));
    let (mut ws, id) = connect(&mut d, addr);
    let me = ws.get_ref().local_addr().unwrap();
    let desc = d.table.get(id).unwrap().desc();
    assert_eq!(desc.uri, format!("wsclient://{me}"));
    assert_eq!(desc.local_uri, format!("ws://{addr}"));
    assert!(
        desc.local,
        "loopback at both ends: local scope, as NFD has it"
    );
    assert_eq!(desc.persistency, FacePersistency::OnDemand);
    assert!(desc.mtu.is_none());
    // Its persistency and MTU stay as they are.
    let refused = FaceUpdate {
        persistency: Some(FacePersistency::Persistent),
        mtu: Some(1400),
        ..FaceUpdate::default()
    };
    let want = Refusal {
        persistency: Some(FacePersistency::Persistent),
        mtu: Some(1400),
        ..Refusal::default()
    };
    let e = d.table.update(id, &refused, &mut d.sink).unwrap_err();
    assert_eq!(e, UpdateError::Refused(want));

    // Two messages, two packets, byte for byte.
    let (p1, p2) = (packet(1), packet(2));
    send(&mut ws, Message::binary(p1.clone()));
    send(&mut ws, Message::binary(p2.clone()));
    d.until(|d| d.sink.packets.len() == 2);
    assert_eq!(d.sink.packets[0].1, p1);
    assert_eq!(d.sink.packets[1].1, p2);
    // A message in fragments (a first frame and a continuation frame) is one packet.
    let p3 = packet(3);
    let first = Frame::message(p3[..3].to_vec(), OpCode::Data(OpData::Binary), false);
    let cont = Frame::message(p3[3..].to_vec(), OpCode::Data(OpData::Continue), true);
    send(&mut ws, Message::Frame(first));
    send(&mut ws, Message::Frame(cont));
    d.until(|d| d.sink.packets.len() == 3);
    assert_eq!(d.sink.packets[2].1, p3);
    // A text message's payload is handed over as it is (NFD parses any payload).
    send(&mut ws, Message::text("hello"));
    d.until(|d| d.sink.packets.len() == 4);
    assert_eq!(d.sink.packets[3].1, b"hello");
    let c = d.table.get(id).unwrap().counters();
    assert_eq!(c.in_interests, 3);

    // What the table sends arrives as one binary message per packet.
    d.table.send(id, PacketKind::Interest, &p2);
    d.table.send(id, PacketKind::Interest, &p1);
    d.table.flush(&mut d.sink);
    assert_eq!(recv(&mut d, &mut ws), Message::binary(p2));
    assert_eq!(recv(&mut d, &mut ws), Message::binary(p1));
    assert_eq!(d.table.get(id).unwrap().counters().out_interests, 2);

    // A ping is answered.
    send(&mut ws, Message::Ping(b"hi".to_vec().into()));
    assert_eq!(recv(&mut d, &mut ws), Message::Pong(b"hi".to_vec().into()));

    // The client's close is answered and closes the face.
    ws.close(None).unwrap();
    let closed = (id, "closed by peer".to_string());
    d.until(|d| d.sink.down.contains(&closed));
    assert!(d.table.get(id).is_none());
}

#[test]
fn an_oversized_message_closes_with_1009_and_a_protocol_error_with_1002() {
    let (mut d, addr) = listening();
    let (mut ws, id) = connect(&mut d, addr);
    send(&mut ws, Message::binary(vec![0x06; 8801]));
    match recv(&mut d, &mut ws) {
        Message::Close(Some(f)) => assert_eq!(f.code, CloseCode::Size),
        m => panic!("not a close: {m:?}"),
    }
    assert!(d.sink.down.contains(&(id, "message too big".to_string())));
    assert!(d.sink.packets.is_empty());

    // A frame with a reserved opcode (3), masked as a client's must be.
    let (mut ws, id) = connect(&mut d, addr);
    ws.get_mut().write_all(&[0x83, 0x80, 1, 2, 3, 4]).unwrap();
    match recv(&mut d, &mut ws) {
        Message::Close(Some(f)) => assert_eq!(f.code, CloseCode::Protocol),
        m => panic!("not a close: {m:?}"),
    }
    assert!(d
        .sink
        .down
        .contains(&(id, "websocket protocol error".to_string())));
}

#[test]
fn handshakes_are_bounded_in_number_and_time() {
    let (mut d, addr) = listening();
    // Silent connections fill the handshake slots; one more is refused.
    let silent: Vec<TcpStream> = (0..=MAX_WS_HANDSHAKES)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    d.until(|d| d.table.ws_counters().handshakes_refused == 1);
    // Past the handshake timeout, the table lets them all go.
    d.sink.now += WS_HANDSHAKE_TIMEOUT_MS + 1;
    d.table.sweep(d.sink.now, &mut d.sink);
    let c = d.table.ws_counters();
    assert_eq!(c.handshakes_timed_out, MAX_WS_HANDSHAKES as u64);
    assert_eq!(c.handshakes_done, 0);
    for mut s in silent {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = [0u8; 1];
        assert_eq!(s.read(&mut b).unwrap_or(0), 0);
    }
    // A request that is no WebSocket upgrade fails.
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    d.until(|d| d.table.ws_counters().handshakes_failed == 1);
    assert!(d.sink.up.is_empty(), "no face for any of them");
    // Slots are free again: a real client gets its face.
    let (_ws, id) = connect(&mut d, addr);
    assert!(d.table.get(id).is_some());
    assert_eq!(d.table.ws_counters().handshakes_done, 1);
}

#[test]
fn a_face_whose_pong_is_late_is_closed() {
    let (mut d, addr) = listening();
    let (mut ws, id) = connect(&mut d, addr);
    // A ping is due; the client answers it (its next read sends the pong).
    d.sink.now += WS_PING_INTERVAL_MS;
    d.table.sweep(d.sink.now, &mut d.sink);
    d.table.flush(&mut d.sink);
    assert!(matches!(recv(&mut d, &mut ws), Message::Ping(_)));
    let _ = ws.read();
    for _ in 0..10 {
        d.turn();
    }
    d.sink.now += WS_PONG_TIMEOUT_MS + 1;
    d.table.sweep(d.sink.now, &mut d.sink);
    assert!(d.table.get(id).is_some(), "answered in time");
    // The next ping goes unanswered: the face is closed.
    d.table.flush(&mut d.sink);
    d.sink.now += WS_PONG_TIMEOUT_MS + 1;
    d.table.sweep(d.sink.now, &mut d.sink);
    assert!(d.sink.down.contains(&(id, "pong timeout".to_string())));
}

/// Queued and not flushed, packets of 4,000 bytes fill a face's queue past the threshold
/// (65,536 bytes): the first packet that finds it so is marked, and only that one; with the
/// table's default off (`face_system.general.enable_congestion_marking = false`) the face
/// marks none.
#[test]
fn a_congested_websocket_face_marks_unless_the_default_is_off() {
    let mut pkt = wire::Data::new(wire::Name::from_uri("/ws/big").unwrap(), vec![7; 4000]);
    pkt.sign_digest_sha256();
    let pkt = pkt.to_wire();
    for marking in [true, false] {
        let (mut d, addr) = listening_with(face::FaceConfig {
            congestion_marking: marking,
            ..config()
        });
        let (mut ws, id) = connect(&mut d, addr);
        let desc = d.table.get(id).unwrap().desc();
        assert_eq!(desc.options.congestion_marking, marking);
        for _ in 0..40 {
            assert!(d.table.send(id, PacketKind::Data, &pkt));
        }
        let marks = d.table.get(id).unwrap().counters().congestion_marks;
        assert_eq!(marks, u64::from(marking));
        let mut marked = 0;
        for _ in 0..40 {
            let Message::Binary(b) = recv(&mut d, &mut ws) else {
                panic!("not binary");
            };
            if b[0] == 0x64 {
                let lp = wire::LpPacketView::decode(&b, &wire::Limits::default()).unwrap();
                assert_eq!(
                    (lp.congestion_mark, lp.fragment()),
                    (Some(1), Some(&pkt[..]))
                );
                marked += 1;
            } else {
                assert_eq!(&b[..], &pkt[..]);
            }
        }
        assert_eq!(marked, marks);
    }
}
