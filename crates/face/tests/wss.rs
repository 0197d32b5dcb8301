//! Secure WebSocket faces (`wss://`) over loopback: a `rustls` client trusting the committed
//! test certificate (`tests/fixtures/wss`) and a `tungstenite` client over it, against the
//! table's listener, driven as a forwarder's I/O loop drives it.
#![cfg(target_os = "linux")]

mod support;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use face::table::{Listener, WsTls, WS_HANDSHAKE_TIMEOUT_MS};
use face::{FaceId, PacketKind};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use support::{config, Driver};
use tungstenite::{Error, Message, WebSocket};

type Tls = StreamOwned<ClientConnection, TcpStream>;

fn fixture(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/wss")
        .join(file)
}

/// A table with a secure WebSocket listener on a loopback port.
fn listening() -> (Driver, SocketAddr) {
    let mut d = Driver::new(config());
    let l = mio::net::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = l.local_addr().unwrap();
    let tls = WsTls::from_pem_files(&fixture("cert.pem"), &fixture("key.pem")).unwrap();
    d.table.add_listener(Listener::Wss(l, addr, tls)).unwrap();
    (d, addr)
}

/// A TLS client of `addr` as `localhost`, trusting the test certificate (or nothing).
fn tls_client(addr: SocketAddr, trust: bool) -> Tls {
    let mut roots = RootCertStore::empty();
    if trust {
        roots
            .add(CertificateDer::from_pem_file(fixture("cert.pem")).unwrap())
            .unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let conn = ClientConnection::new(Arc::new(cfg), "localhost".try_into().unwrap()).unwrap();
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    StreamOwned::new(conn, s)
}

/// Connects a trusting client (its handshakes in a thread of its own, while the table turns)
/// and waits for its face; the client, non-blocking, and the face's id.
fn connect(d: &mut Driver, addr: SocketAddr) -> (WebSocket<Tls>, FaceId) {
    let up = d.sink.up.len();
    let h = std::thread::spawn(move || {
        let url = format!("wss://localhost:{}/", addr.port());
        tungstenite::client(url, tls_client(addr, true)).unwrap().0
    });
    d.until(|d| h.is_finished() && d.sink.up.len() > up);
    let ws = h.join().unwrap();
    ws.get_ref().sock.set_nonblocking(true).unwrap();
    (ws, *d.sink.up.last().unwrap())
}

/// The next message the client receives, turning the table meanwhile.
fn recv(d: &mut Driver, ws: &mut WebSocket<Tls>) -> Message {
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

#[test]
fn a_secure_websocket_face_carries_packets_both_ways_through_a_full_socket() {
    let (mut d, addr) = listening();
    assert!(d.table.channels().contains(&format!("wss://{addr}")));
    let (mut ws, id) = connect(&mut d, addr);
    let desc = d.table.get(id).unwrap().desc();
    assert_eq!(desc.local_uri, format!("wss://{addr}"));
    let p = wire::Interest::new(wire::Name::from_uri("/wss").unwrap(), [1; 4]).to_wire();
    ws.send(Message::binary(p.clone())).unwrap();
    d.until(|d| d.sink.packets.len() == 1);
    assert_eq!(d.sink.packets[0].1, p);

    // More than the socket, the TLS buffer and the send queue hold while the client does not
    // read: what is not dropped at the queue arrives whole and in order (unmarked: marks
    // would wrap these payloads, which are not NDN packets, in LpPackets).
    let off = face::FaceUpdate {
        congestion_marking: Some(false),
        ..face::FaceUpdate::default()
    };
    d.table.update(id, &off, &mut d.sink).unwrap();
    let sent = 400usize;
    for i in 0..sent {
        let mut big = vec![(i % 251) as u8; 8000];
        big[..4].copy_from_slice(&(i as u32).to_be_bytes());
        d.table.send(id, PacketKind::Data, &big);
        if i % 16 == 0 {
            d.table.flush(&mut d.sink);
        }
    }
    d.table.flush(&mut d.sink);
    let dropped = d.table.get(id).unwrap().counters().drop_queue_full as usize;
    assert!(dropped < sent);
    let mut last = None;
    for _ in 0..sent - dropped {
        let Message::Binary(b) = recv(&mut d, &mut ws) else {
            panic!("not a binary message");
        };
        let i = u32::from_be_bytes(b[..4].try_into().unwrap());
        assert!(last.is_none_or(|l| i > l), "out of order");
        assert_eq!(b.len(), 8000);
        assert!(b[4..].iter().all(|&x| x == (i % 251) as u8));
        last = Some(i);
    }
    assert_eq!(
        d.table.get(id).unwrap().counters().out_data as usize,
        sent - dropped
    );

    // Closing the face sends the WebSocket close, then TLS's.
    ws.close(None).unwrap();
    let closed = (id, "closed by peer".to_string());
    d.until(|d| d.sink.down.contains(&closed));
}

#[test]
fn tls_handshakes_fail_apart_and_keep_the_deadline() {
    let (mut d, addr) = listening();
    // A silent connection and one stopped within its ClientHello stay pending...
    let _silent = TcpStream::connect(addr).unwrap();
    let mut partial = TcpStream::connect(addr).unwrap();
    partial
        .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .unwrap();
    d.until(|d| d.table.ws_counters().handshakes_accepted == 2);
    // ... until the handshake deadline.
    for _ in 0..10 {
        d.turn();
    }
    assert_eq!(d.table.ws_counters().handshakes_timed_out, 0);
    d.sink.now += WS_HANDSHAKE_TIMEOUT_MS + 1;
    d.table.sweep(d.sink.now, &mut d.sink);
    assert_eq!(d.table.ws_counters().handshakes_timed_out, 2);
    // Plain HTTP on the TLS port, and a client that does not trust the certificate.
    let mut plain = TcpStream::connect(addr).unwrap();
    plain
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    d.until(|d| d.table.ws_counters().handshakes_tls_failed == 1);
    let h = std::thread::spawn(move || {
        let url = format!("wss://localhost:{}/", addr.port());
        tungstenite::client(url, tls_client(addr, false)).is_err()
    });
    d.until(|d| d.table.ws_counters().handshakes_tls_failed == 2);
    assert!(h.join().unwrap(), "the client refused the certificate");
    let c = d.table.ws_counters();
    assert_eq!((c.handshakes_failed, c.handshakes_done), (0, 0));
    assert!(d.sink.up.is_empty());
    // A trusting client gets its face.
    let (_ws, id) = connect(&mut d, addr);
    assert!(d.table.get(id).is_some());
    assert_eq!(d.table.ws_counters().handshakes_accepted, 5);
}
