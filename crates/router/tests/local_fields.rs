//! NDNLPv2 local fields through the daemon, as NFD's GenericLinkService gates them: an
//! Interest's NextHopFaceId is honoured only from a face with LocalFieldsEnabled (from any
//! other it is dropped), and IncomingFaceId goes only to faces with LocalFieldsEnabled.

use std::time::Duration;

use client::control::Controller;
use client::face::Received;
use client::transport::TransportUri;
use client::Face;
use face::LpHeaders;
use router::{Config, Router};
use wire::nfd::ControlParameters;
use wire::{Interest, Name};

fn unix_face(r: &Router) -> Face {
    Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap()
}

/// `face` registers `prefix`; its face id, as management sees it.
fn register(face: &mut Face, prefix: &str) -> u64 {
    let name = Name::from_uri(prefix).unwrap();
    let ok = face.register(&name).unwrap();
    ok.face_id.unwrap()
}

/// `face` turns LocalFieldsEnabled on for itself (`faces/update` without a FaceId).
fn enable_local_fields(face: &mut Face) {
    let p = ControlParameters {
        flags: Some(1),
        mask: Some(1),
        ..ControlParameters::default()
    };
    let r = Controller::new(face)
        .command("faces", "update", &p)
        .unwrap();
    // LocalFieldsEnabled on; congestion marking (on by default, as NFD) untouched.
    assert_eq!(r.flags.map(|f| f & 1), Some(1));
}

fn send(face: &mut Face, uri: &str, nonce: u32, next_hop: Option<u64>) {
    let mut i = Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes());
    i.lifetime_ms = Some(4000);
    let h = LpHeaders {
        next_hop_face_id: next_hop,
        ..LpHeaders::default()
    };
    face.send_packet(&i.to_wire(), &h).unwrap();
}

/// The next Interest `face` receives: its name and IncomingFaceId.
fn next_interest(face: &mut Face) -> (Name, Option<u64>) {
    loop {
        match face.recv(Duration::from_secs(10)).unwrap() {
            Some(Received::Interest(ip)) => return (ip.interest.name, ip.incoming_face_id),
            Some(_) => continue,
            None => panic!("no Interest came"),
        }
    }
}

#[test]
fn next_hop_face_id_and_incoming_face_id_need_local_fields() {
    let dir = std::env::temp_dir().join(format!("cascade-lf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = Config::default();
    c.listen.unix = dir.join("nfd.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.udp = String::new();
    c.listen.websocket = String::new();
    // One thread: packets from one face are forwarded in the order they came.
    c.workers.threads = router::config::Threads::One;
    let r = Router::start(&c).unwrap();
    let mut producer = unix_face(&r);
    let mut app = unix_face(&r);
    let p_id = register(&mut producer, "/p");
    let a_id = register(&mut app, "/a");

    // Without LocalFieldsEnabled: the Interest with a NextHopFaceId is dropped (the one after
    // it, without, arrives first), and the producer gets no IncomingFaceId.
    send(&mut app, "/q/dropped", 1, Some(p_id));
    send(&mut app, "/p/routed", 2, None);
    let (name, incoming) = next_interest(&mut producer);
    assert_eq!(name, Name::from_uri("/p/routed").unwrap());
    assert_eq!(incoming, None);

    // With it on both faces: the NextHopFaceId takes the Interest to the producer (no route
    // for /q), which learns where it came from.
    enable_local_fields(&mut producer);
    enable_local_fields(&mut app);
    send(&mut app, "/q/next-hop", 3, Some(p_id));
    let (name, incoming) = next_interest(&mut producer);
    assert_eq!(name, Name::from_uri("/q/next-hop").unwrap());
    assert_eq!(incoming, Some(a_id));
    r.stop_handle().stop();
    r.join();
    let _ = std::fs::remove_dir_all(&dir);
}
