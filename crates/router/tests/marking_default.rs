//! `face_system.general.enable_congestion_marking` through the router: off, the faces the
//! router makes (an on-demand UDP face, a `[[face]]`, a Unix face) and a `faces/create` that
//! leaves the flag unset have marking off, and a `faces/create` with the flag set has it on;
//! on (the default), they all mark.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use client::control::Controller;
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use wire::nfd::{ControlParameters, FACE_FLAG_CONGESTION_MARKING_ENABLED};
use wire::{Interest, Name};

fn start(dir: &std::path::Path, marking: bool, static_port: u16) -> Router {
    let text = format!(
        "[listen]\nunix = \"{}\"\ntcp = \"\"\nudp = \"127.0.0.1:0\"\nwebsocket = \"\"\n\
         [http]\nlisten = \"\"\n[face_system.general]\nenable_congestion_marking = {marking}\n\
         [[face]]\nuri = \"udp4://127.0.0.1:{static_port}\"\n",
        dir.join("nfd.sock").display()
    );
    Router::start(&Config::from_toml(&text).unwrap()).unwrap()
}

/// The marking flag of the face whose remote URI is `uri` (waits for it).
fn marking_of(r: &Router, uri: &str) -> bool {
    let t0 = Instant::now();
    loop {
        if let Some(f) = r.faces().into_iter().find(|f| f.uri == uri) {
            return f.options.congestion_marking;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no face {uri}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_switch_sets_the_marking_of_new_faces() {
    for marking in [false, true] {
        let dir =
            std::env::temp_dir().join(format!("cascade-marking-{marking}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let statik = UdpSocket::bind("127.0.0.1:0").unwrap();
        let r = start(&dir, marking, statik.local_addr().unwrap().port());
        let static_uri = format!("udp4://{}", statik.local_addr().unwrap());
        assert_eq!(marking_of(&r, &static_uri), marking, "[[face]]");
        // An on-demand UDP face.
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        let i = Interest::new(Name::from_uri("/m").unwrap(), [1; 4]);
        peer.send_to(&i.to_wire(), r.bound().udp.unwrap()).unwrap();
        let uri = format!("udp4://{}", peer.local_addr().unwrap());
        assert_eq!(marking_of(&r, &uri), marking, "on-demand");
        // faces/create without the flag, then with it set.
        let mut app = Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap();
        let mut c = Controller::new(&mut app);
        let faces = c.faces().unwrap();
        let unix = faces.iter().find(|f| f.uri.starts_with("fd://")).unwrap();
        assert_eq!(
            unix.flags & FACE_FLAG_CONGESTION_MARKING_ENABLED != 0,
            marking,
            "unix"
        );
        let (a, b) = (
            UdpSocket::bind("127.0.0.1:0").unwrap(),
            UdpSocket::bind("127.0.0.1:0").unwrap(),
        );
        let create = |s: &UdpSocket, flag: Option<bool>| ControlParameters {
            uri: Some(format!("udp4://{}", s.local_addr().unwrap())),
            mask: flag.map(|_| FACE_FLAG_CONGESTION_MARKING_ENABLED),
            flags: flag.map(|f| {
                if f {
                    FACE_FLAG_CONGESTION_MARKING_ENABLED
                } else {
                    0
                }
            }),
            ..ControlParameters::default()
        };
        c.command("faces", "create", &create(&a, None)).unwrap();
        c.command("faces", "create", &create(&b, Some(true)))
            .unwrap();
        assert_eq!(
            marking_of(&r, &format!("udp4://{}", a.local_addr().unwrap())),
            marking
        );
        assert!(marking_of(
            &r,
            &format!("udp4://{}", b.local_addr().unwrap())
        ));
        r.stop_handle().stop();
        r.join();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
