//! The WebSocket face end to end: a real `tungstenite` client socket against the daemon's
//! `ws://` listener, a producer on its Unix socket, and NFD's management answers about the
//! face (`faces/list`, `faces/query` by scheme, `faces/channels`). Runs on a router of one
//! worker and on a sharded router of two (where the connection may be handed to the other
//! loop, which does the handshake). The same over `wss://` with the committed test
//! certificate (`tests/fixtures/wss`), a `rustls` client trusting it, and the handshake
//! counters of `/metrics` for the clients that fail.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use client::control::Controller;
use client::face::Received;
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use tungstenite::Message;
use wire::nfd::{decode_dataset, ChannelStatus, FaceQueryFilter, FaceScope, FaceStatus};
use wire::{Component, Data, Interest, Name, PacketView};

/// A test's scratch directory, removed when the test ends.
struct TmpDir(PathBuf);

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start(dir: &TmpDir, threads: router::Threads, workers: usize) -> Router {
    let mut c = Config::default();
    c.listen.unix = dir.0.join("nfd.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.udp = String::new();
    c.listen.websocket = "127.0.0.1:0".into();
    c.workers.count = workers;
    c.workers.threads = threads;
    Router::start(&c).unwrap()
}

fn unix_face(r: &Router) -> Face {
    Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap()
}

/// Answers `count` Interests with Data whose content is the Interest's name's last component.
fn serve(mut face: Face, count: usize) -> std::thread::JoinHandle<()> {
    face.register(&Name::from_uri("/ws").unwrap()).unwrap();
    std::thread::spawn(move || {
        let mut answered = 0;
        while answered < count {
            if let Some(Received::Interest(ip)) = face.recv(Duration::from_secs(10)).unwrap() {
                let last = ip.interest.name.components.last().unwrap().value.clone();
                let mut d = Data::new(ip.interest.name.clone(), last);
                d.sign_digest_sha256();
                face.put_data(&d.to_wire(), ip.pit_token).unwrap();
                answered += 1;
            }
        }
    })
}

/// The Data the client receives for `/ws/<word>`.
fn fetch<S: Read + Write>(ws: &mut tungstenite::WebSocket<S>, word: &str, nonce: u8) -> Data {
    let mut i = Interest::new(Name::from_uri(&format!("/ws/{word}")).unwrap(), [nonce; 4]);
    i.lifetime_ms = Some(4000);
    ws.send(Message::binary(i.to_wire())).unwrap();
    loop {
        match ws.read().unwrap() {
            Message::Binary(b) => {
                let limits = wire::Limits::default();
                match PacketView::decode(&b, &limits).unwrap() {
                    PacketView::Data(d) => return d.to_data(),
                    p => panic!("not a Data: {p:?}"),
                }
            }
            Message::Ping(_) | Message::Pong(_) => {}
            m => panic!("unexpected message {m:?}"),
        }
    }
}

fn dataset(c: &mut Controller<'_>, suffix: &str, param: Option<Vec<u8>>) -> Vec<u8> {
    let mut name = Name::from_uri(&format!("/localhost/nfd/{suffix}")).unwrap();
    if let Some(p) = param {
        name = name.with(Component::generic(p));
    }
    c.dataset(&name).unwrap()
}

fn websocket_face(threads: router::Threads, workers: usize) {
    let dir =
        TmpDir(std::env::temp_dir().join(format!("cascade-ws-{workers}-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let r = start(&dir, threads, workers);
    let addr = r.bound().ws.unwrap();
    let producer = serve(unix_face(&r), 2);

    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let me = s.local_addr().unwrap();
    let (mut ws, _) = tungstenite::client(format!("ws://{addr}/"), s).unwrap();
    for (n, word) in ["alpha", "beta"].into_iter().enumerate() {
        let d = fetch(&mut ws, word, n as u8 + 1);
        assert_eq!(d.name, Name::from_uri(&format!("/ws/{word}")).unwrap());
        assert_eq!(d.content.as_deref(), Some(word.as_bytes()));
    }
    producer.join().unwrap();

    // Management lists the face as NFD does.
    let mut mgmt = unix_face(&r);
    let mut c = Controller::new(&mut mgmt);
    let faces = c.faces().unwrap();
    let f = faces
        .iter()
        .find(|f| f.uri == format!("wsclient://{me}"))
        .unwrap_or_else(|| panic!("no face for the client in {faces:?}"));
    assert_eq!(f.local_uri, format!("ws://{addr}"));
    // Loopback at both ends, but `[local] loopback_tcp_is_local` is false by default.
    assert_eq!(f.face_scope, FaceScope::NonLocal);
    assert_eq!(f.face_persistency, wire::nfd::FacePersistency::OnDemand);
    assert_eq!((f.n_in_interests, f.n_out_data), (2, 2));
    let mut filter = Vec::new();
    FaceQueryFilter {
        uri_scheme: Some("ws".into()),
        ..FaceQueryFilter::default()
    }
    .encode(&mut filter);
    let by_scheme = decode_dataset(
        &dataset(&mut c, "faces/query", Some(filter)),
        FaceStatus::from_element,
    )
    .unwrap();
    let ids: Vec<u64> = by_scheme.iter().map(|s| s.face_id).collect();
    assert_eq!(ids, [f.face_id]);
    let channels = decode_dataset(
        &dataset(&mut c, "faces/channels", None),
        ChannelStatus::from_element,
    )
    .unwrap();
    let uris: Vec<String> = channels.into_iter().map(|c| c.local_uri).collect();
    assert_eq!(uris.last(), Some(&format!("ws://{addr}")));

    // Closing the WebSocket closes the face.
    let id = f.face_id;
    ws.close(None).unwrap();
    while ws.read().is_ok() {}
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        !c.faces().unwrap().iter().any(|f| f.face_id == id)
    });
    assert!(gone, "the face outlived its connection");
    r.stop_handle().stop();
    r.join();
}

#[test]
fn a_websocket_client_fetches_through_the_router_one_worker() {
    websocket_face(router::Threads::Auto, 1);
}

#[test]
fn a_websocket_client_fetches_through_the_router_sharded() {
    websocket_face(router::Threads::Sharded, 2);
}

/// The committed test certificate and key.
fn fixture(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/wss")
        .join(file)
}

/// A TLS client of `addr` as `localhost`, trusting the test certificate (or nothing).
fn tls_client(
    addr: SocketAddr,
    trust: bool,
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    if trust {
        let cert = rustls::pki_types::CertificateDer::from_pem_file(fixture("cert.pem")).unwrap();
        roots.add(cert).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = "localhost".try_into().unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(cfg), name).unwrap();
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    rustls::StreamOwned::new(conn, s)
}

/// The `/metrics` sample `cascade_websocket_handshakes_total{outcome=...}`.
fn handshakes(http: SocketAddr, outcome: &str) -> u64 {
    let mut s = TcpStream::connect(http).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let series = format!("cascade_websocket_handshakes_total{{outcome=\"{outcome}\"}} ");
    (text.lines())
        .find_map(|l| l.strip_prefix(&series)?.parse().ok())
        .unwrap_or_else(|| panic!("no {series} in {text}"))
}

fn secure_websocket_face(threads: router::Threads, workers: usize) {
    let dir =
        TmpDir(std::env::temp_dir().join(format!("cascade-wss-{workers}-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let mut c = Config::default();
    c.listen.unix = dir.0.join("nfd.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.udp = String::new();
    c.listen.websocket = "127.0.0.1:0".into();
    c.listen.websocket_tls_cert = fixture("cert.pem").display().to_string();
    c.listen.websocket_tls_key = fixture("key.pem").display().to_string();
    c.http.listen = "127.0.0.1:0".into();
    c.workers.count = workers;
    c.workers.threads = threads;
    c.validate().unwrap();
    let r = Router::start(&c).unwrap();
    let addr = r.bound().ws.unwrap();
    let http = r.http_addr().unwrap();
    let producer = serve(unix_face(&r), 2);

    let tls = tls_client(addr, true);
    let me = tls.sock.local_addr().unwrap();
    let url = format!("wss://localhost:{}/", addr.port());
    let (mut ws, _) = tungstenite::client(url.as_str(), tls).unwrap();
    for (n, word) in ["gamma", "delta"].into_iter().enumerate() {
        let d = fetch(&mut ws, word, n as u8 + 1);
        assert_eq!(d.content.as_deref(), Some(word.as_bytes()));
    }
    producer.join().unwrap();
    let mut mgmt = unix_face(&r);
    let mut ctl = Controller::new(&mut mgmt);
    let faces = ctl.faces().unwrap();
    let f = (faces.iter())
        .find(|f| f.uri == format!("wsclient://{me}"))
        .unwrap_or_else(|| panic!("no face for the client in {faces:?}"));
    assert_eq!(f.local_uri, format!("wss://{addr}"));
    assert_eq!((f.n_in_interests, f.n_out_data), (2, 2));

    // A client that does not trust the certificate, and a plain ws:// one: both fail in TLS.
    assert!(tungstenite::client(url.as_str(), tls_client(addr, false)).is_err());
    let plain = TcpStream::connect(addr).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert!(tungstenite::client(format!("ws://{addr}/"), plain).is_err());
    let t0 = Instant::now();
    while handshakes(http, "tls_error") < 2 && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(handshakes(http, "tls_error"), 2);
    assert_eq!(handshakes(http, "accepted"), 3);
    assert_eq!(handshakes(http, "completed"), 1);
    assert_eq!(handshakes(http, "bad_request"), 0);
    drop(ws);
    r.stop_handle().stop();
    r.join();
}

#[test]
fn a_secure_websocket_client_fetches_through_the_router_one_worker() {
    secure_websocket_face(router::Threads::Auto, 1);
}

#[test]
fn a_secure_websocket_client_fetches_through_the_router_sharded() {
    secure_websocket_face(router::Threads::Sharded, 2);
}

#[test]
fn websocket_listeners_on_ipv4_and_ipv6_serve_apart() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        return; // no IPv6 loopback on this host
    }
    let dir = TmpDir(std::env::temp_dir().join(format!("cascade-ws46-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let mut c = Config::default();
    c.listen.unix = dir.0.join("nfd.sock").display().to_string();
    (c.listen.tcp, c.listen.udp) = (String::new(), String::new());
    c.listen.websocket = "127.0.0.1:0, [::1]:0".into();
    c.validate().unwrap();
    let r = Router::start(&c).unwrap();
    let mut mgmt = unix_face(&r);
    let mut ctl = Controller::new(&mut mgmt);
    let channels = decode_dataset(
        &dataset(&mut ctl, "faces/channels", None),
        ChannelStatus::from_element,
    )
    .unwrap();
    let ws: Vec<String> = (channels.into_iter())
        .map(|c| c.local_uri)
        .filter(|u| u.starts_with("ws://"))
        .collect();
    assert_eq!(ws.len(), 2, "{ws:?}");
    assert!(ws[0].starts_with("ws://127.0.0.1:") && ws[1].starts_with("ws://[::1]:"));
    // A client of each gets its face, named by the address it came to.
    for uri in &ws {
        let addr: SocketAddr = uri["ws://".len()..].parse().unwrap();
        let s = TcpStream::connect(addr).unwrap();
        let me = s.local_addr().unwrap();
        let (_ws, _) = tungstenite::client(format!("{uri}/"), s).unwrap();
        let t0 = Instant::now();
        while !ctl.faces().unwrap().iter().any(|f| f.local_uri == *uri) {
            assert!(t0.elapsed() < Duration::from_secs(10), "no face for {me}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    r.stop_handle().stop();
    r.join();
}
