//! The WebSocket face end to end: a real `tungstenite` client socket against the daemon's
//! `ws://` listener, a producer on its Unix socket, and NFD's management answers about the
//! face (`faces/list`, `faces/query` by scheme, `faces/channels`). Runs on a router of one
//! worker and on a sharded router of two (where the connection may be handed to the other
//! loop, which does the handshake).

use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

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
fn fetch(ws: &mut tungstenite::WebSocket<TcpStream>, word: &str, nonce: u8) -> Data {
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
    assert_eq!(f.face_scope, FaceScope::Local, "loopback at both ends");
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
