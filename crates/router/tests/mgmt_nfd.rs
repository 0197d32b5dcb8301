//! NFD's management protocol end to end, as NFD 24.07 answers it, through the real daemon and a
//! client over its Unix socket: the `faces/events` stream as ndn-cxx's FaceMonitor reads it,
//! `faces/query` and `faces/channels`. Each test runs on a router of one worker and on a
//! sharded router of two (faces held by two I/O loops, commands routed to the one that holds
//! the face).

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use client::control::Controller;
use client::face::Received;
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use wire::nfd::{
    decode_dataset, ChannelStatus, ControlParameters, FaceEventKind, FaceEventNotification,
    FacePersistency, FaceQueryFilter, FaceScope, FaceStatus,
};
use wire::{tt, Component, Interest, Name};

/// A test's scratch directory, removed when the test ends.
struct TmpDir(PathBuf);

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp_dir(tag: &str) -> TmpDir {
    let d = std::env::temp_dir().join(format!("cascade-mgmt-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TmpDir(d)
}

/// The routers every test runs on: one worker (one thread on this machine), and two sharded
/// loops.
const MODES: [(router::Threads, usize); 2] =
    [(router::Threads::Auto, 1), (router::Threads::Sharded, 2)];

fn start(dir: &Path, (threads, workers): (router::Threads, usize)) -> Router {
    let mut c = Config::default();
    c.listen.unix = dir.join("nfd.sock").display().to_string();
    c.listen.tcp = "127.0.0.1:0".into();
    c.listen.websocket = String::new();
    c.listen.udp = "127.0.0.1:0".into();
    c.workers.count = workers;
    c.workers.threads = threads;
    Router::start(&c).unwrap()
}

fn unix_face(r: &Router) -> Face {
    Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap()
}

fn events() -> Name {
    Name::from_uri("/localhost/nfd/faces/events").unwrap()
}

/// A FaceMonitor: NotificationSubscriber's Interests, counted.
struct Monitor {
    face: Face,
    last: Option<u64>,
    interests: usize,
}

impl Monitor {
    fn new(face: Face) -> Self {
        Monitor {
            face,
            last: None,
            interests: 0,
        }
    }

    /// Sends the next Interest: the stream with CanBePrefix and MustBeFresh at first, then
    /// `seq=<last+1>`.
    fn ask(&mut self) {
        let mut i = match self.last {
            None => {
                let mut i = Interest::new(events(), nonce(self.interests));
                i.can_be_prefix = true;
                i.must_be_fresh = true;
                i
            }
            Some(n) => {
                let seq = Component::number(tt::SEQUENCE_NUM as u16, n + 1);
                Interest::new(events().with(seq), nonce(self.interests))
            }
        };
        i.lifetime_ms = Some(10_000);
        self.face.send_interest(&i).unwrap();
        self.interests += 1;
    }

    /// Asks for notification `seq` (which ndn-cxx's dispatcher keeps, fresh or not, among its
    /// last 256).
    fn ask_for(&mut self, seq: u64) {
        let seq = Component::number(tt::SEQUENCE_NUM as u16, seq);
        let mut i = Interest::new(events().with(seq), nonce(self.interests));
        i.lifetime_ms = Some(10_000);
        self.face.send_interest(&i).unwrap();
        self.interests += 1;
    }

    /// The next notification within `timeout` (`None`: none came); asks for the one after it.
    /// Anything but a notification fails the test.
    fn next(&mut self, timeout: Duration) -> Option<FaceEventNotification> {
        let r = self.face.recv(timeout).unwrap()?;
        let Received::Data(d) = r else {
            panic!("the stream answers with notifications only, got {r:?}");
        };
        let last = d.name.components.last().unwrap();
        assert_eq!(u32::from(last.typ), tt::SEQUENCE_NUM, "{}", d.name);
        assert_eq!(d.name.prefix(4), events());
        assert_eq!(d.freshness_ms, Some(1000));
        let n = FaceEventNotification::decode(d.content()).expect("a FaceEventNotification");
        self.last = last.as_number();
        self.ask();
        Some(n)
    }
}

fn nonce(i: usize) -> [u8; 4] {
    (0x5eed_0000_u32 + i as u32).to_be_bytes()
}

#[test]
fn face_events_reach_a_monitor_one_interest_per_notification() {
    for mode in MODES {
        face_events(mode);
    }
}

fn face_events(mode: (router::Threads, usize)) {
    let dir = tmp_dir(&format!("events-{}", mode.1));
    let r = start(&dir.0, mode);
    let mut m = Monitor::new(unix_face(&r));
    m.ask();
    let mut cface = unix_face(&r);
    let mut c = Controller::new(&mut cface);
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("udp4://{}", peer.local_addr().unwrap());
    let made = c
        .command(
            "faces",
            "create",
            &ControlParameters {
                uri: Some(uri.clone()),
                ..ControlParameters::default()
            },
        )
        .unwrap();
    let id = made.face_id.unwrap();
    let gone = ControlParameters {
        face_id: Some(id),
        ..ControlParameters::default()
    };
    c.command("faces", "destroy", &gone).unwrap();
    // The monitor sees the controller's face come, then the UDP face come and go, in order.
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !seen.contains(&(FaceEventKind::Destroyed, id)) {
        assert!(Instant::now() < deadline, "events seen: {seen:?}");
        if let Some(n) = m.next(Duration::from_secs(5)) {
            if n.face_id == id {
                assert_eq!(n.uri, uri);
                assert_eq!(n.face_persistency, FacePersistency::Persistent);
            }
            seen.push((n.kind, n.face_id));
        }
    }
    let at = |e| seen.iter().position(|x| *x == e).unwrap();
    assert!(at((FaceEventKind::Created, id)) < at((FaceEventKind::Destroyed, id)));
    // Caught up: the Interest for the next sequence number waits (no error Data to make the
    // monitor spin), and the monitor sent one Interest per notification, plus that one.
    assert!(m.next(Duration::from_millis(300)).is_none());
    assert_eq!(m.interests, seen.len() + 1);
    // The next face event answers the waiting Interest.
    drop(cface);
    let n = m
        .next(Duration::from_secs(5))
        .expect("the controller's face is destroyed");
    assert_eq!(n.kind, FaceEventKind::Destroyed);
    r.stop_handle().stop();
    r.join();
}

fn dataset_name(suffix: &str) -> Name {
    Name::from_uri(&format!("/localhost/nfd/{suffix}")).unwrap()
}

#[test]
fn faces_query_and_channels_as_nfd_lists_them() {
    for mode in MODES {
        faces_query_and_channels(mode);
    }
}

fn faces_query_and_channels(mode: (router::Threads, usize)) {
    let dir = tmp_dir(&format!("query-{}", mode.1));
    let r = start(&dir.0, mode);
    let mut face = unix_face(&r);
    let mut c = Controller::new(&mut face);
    let b = r.bound();
    let channels = c.dataset(&dataset_name("faces/channels")).unwrap();
    let channels = decode_dataset(&channels, ChannelStatus::from_element).unwrap();
    let uris: Vec<String> = channels.into_iter().map(|c| c.local_uri).collect();
    assert_eq!(
        uris,
        [
            format!("tcp4://{}", b.tcp.unwrap()),
            format!("udp4://{}", b.udp.unwrap()),
            format!("unix://{}", b.unix.as_ref().unwrap().display()),
        ]
    );
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("udp4://{}", peer.local_addr().unwrap());
    let create = ControlParameters {
        uri: Some(uri.clone()),
        ..ControlParameters::default()
    };
    let udp_id = c
        .command("faces", "create", &create)
        .unwrap()
        .face_id
        .unwrap();
    let mut query = |f: FaceQueryFilter| {
        let mut v = Vec::new();
        f.encode(&mut v);
        let name = dataset_name("faces/query").with(Component::generic(v));
        let listed = decode_dataset(&c.dataset(&name).unwrap(), FaceStatus::from_element);
        listed
            .unwrap()
            .into_iter()
            .map(|s| s.face_id)
            .collect::<Vec<u64>>()
    };
    let by_uri = query(FaceQueryFilter {
        uri: Some(uri),
        ..FaceQueryFilter::default()
    });
    assert_eq!(by_uri, [udp_id]);
    let udp = query(FaceQueryFilter {
        uri_scheme: Some("udp4".into()),
        ..FaceQueryFilter::default()
    });
    assert_eq!(udp, [udp_id]);
    let local = query(FaceQueryFilter {
        face_scope: Some(FaceScope::Local),
        ..FaceQueryFilter::default()
    });
    // NFD's reserved faces (internal 1, content store 254, null 255) and the controller's
    // Unix face.
    assert_eq!(
        local.len(),
        3 + 1,
        "the reserved faces and the controller's Unix face"
    );
    assert_eq!(local[..3], [1, 254, 255]);
    assert!(!local.contains(&udp_id));
    r.stop_handle().stop();
    r.join();
}

fn status(c: &mut Controller<'_>, verb: &str, p: &ControlParameters) -> (u64, String) {
    let r = c.command_response("faces", verb, p).unwrap();
    (r.status_code, r.status_text)
}

#[test]
fn faces_create_and_update_as_nfd_answers_them() {
    for mode in MODES {
        faces_create_and_update(mode);
    }
}

fn faces_create_and_update(mode: (router::Threads, usize)) {
    let dir = tmp_dir(&format!("create-{}", mode.1));
    let r = start(&dir.0, mode);
    let mut face = unix_face(&r);
    let mut c = Controller::new(&mut face);
    // A peer that sent the router a datagram has an on-demand face: creating a face to it is a
    // 409 carrying that face, which stays on-demand.
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.send_to(
        &Interest::new(Name::from_uri("/x").unwrap(), [1; 4]).to_wire(),
        r.bound().udp.unwrap(),
    )
    .unwrap();
    let uri = format!("udp4://{}", peer.local_addr().unwrap());
    let on_demand = |c: &mut Controller<'_>| {
        c.faces()
            .unwrap()
            .into_iter()
            .find(|f| f.uri == uri)
            .map(|f| f.face_persistency)
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while on_demand(&mut c).is_none() {
        assert!(Instant::now() < deadline, "no on-demand face");
        std::thread::sleep(Duration::from_millis(10));
    }
    let create = ControlParameters {
        uri: Some(uri.clone()),
        ..ControlParameters::default()
    };
    let resp = c.command_response("faces", "create", &create).unwrap();
    assert_eq!(
        (resp.status_code, resp.status_text.as_str()),
        (409, "Face with remote URI already exists")
    );
    let existing = resp.parameters().unwrap();
    assert_eq!(existing.uri.as_deref(), Some(uri.as_str()));
    assert_eq!(existing.face_persistency, Some(FacePersistency::OnDemand));
    assert_eq!(on_demand(&mut c), Some(FacePersistency::OnDemand));
    let udp_id = existing.face_id.unwrap();
    // Refused updates: local fields on a UDP face, another persistency for a Unix face, an MTU
    // for a stream face.
    let local_fields = ControlParameters {
        face_id: Some(udp_id),
        flags: Some(1),
        mask: Some(1),
        ..ControlParameters::default()
    };
    assert_eq!(status(&mut c, "update", &local_fields).0, 409);
    let me = ControlParameters {
        face_persistency: Some(FacePersistency::Permanent),
        mtu: Some(1400),
        ..ControlParameters::default()
    };
    let resp = c.command_response("faces", "update", &me).unwrap();
    assert_eq!(resp.status_code, 409);
    assert_eq!(resp.parameters(), Some(&me));
    // An accepted change: the UDP face becomes persistent with a smaller MTU, and faces/list
    // shows it with the recorded flags and congestion settings.
    let change = ControlParameters {
        face_id: Some(udp_id),
        face_persistency: Some(FacePersistency::Persistent),
        mtu: Some(1000),
        flags: Some(2),
        mask: Some(6),
        default_congestion_threshold: Some(4096),
        ..ControlParameters::default()
    };
    let done = c.command("faces", "update", &change).unwrap();
    assert_eq!((done.mtu, done.flags), (Some(1000), Some(2)));
    let listed = c
        .faces()
        .unwrap()
        .into_iter()
        .find(|f| f.face_id == udp_id)
        .unwrap();
    assert_eq!(listed.face_persistency, FacePersistency::Persistent);
    assert_eq!((listed.mtu, listed.flags), (Some(1000), 2));
    assert_eq!(listed.default_congestion_threshold, Some(4096));
    assert_eq!(listed.base_congestion_marking_interval, Some(100_000_000));
    // TCP: a face to the router's own listener, then the same again (409 before connecting);
    // an MTU on TCP and a non-canonical URI are refused.
    let tcp = format!("tcp4://{}", r.bound().tcp.unwrap());
    let create = ControlParameters {
        uri: Some(tcp.clone()),
        ..ControlParameters::default()
    };
    let made = c.command("faces", "create", &create).unwrap();
    assert_eq!(
        (made.uri.as_deref(), made.mtu),
        (Some(tcp.as_str()), Some(8800))
    );
    assert_eq!(status(&mut c, "create", &create).0, 409);
    let mtu = ControlParameters {
        mtu: Some(1400),
        ..create.clone()
    };
    assert_eq!(
        status(&mut c, "create", &mtu),
        (406, "TCP faces do not support MTU overrides".into())
    );
    let loose = ControlParameters {
        uri: Some("tcp://localhost:6363".into()),
        ..ControlParameters::default()
    };
    assert_eq!(
        status(&mut c, "create", &loose),
        (400, "Non-canonical remote URI".into())
    );
    r.stop_handle().stop();
    r.join();
}

#[test]
fn status_general_counts_packets_once_as_nfd_forwarder_does() {
    for threads in [router::Threads::IoWorkers, router::Threads::Sharded] {
        status_general(threads);
    }
}

fn status_general(threads: router::Threads) {
    let dir = tmp_dir(&format!("status-{}", threads.name()));
    let mut c = Config::default();
    c.listen.unix = dir.0.join("nfd.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.websocket = String::new();
    c.listen.udp = String::new();
    c.workers.count = 2;
    c.workers.threads = threads;
    let r = Router::start(&c).unwrap();
    let mut producer = unix_face(&r);
    producer.register(&Name::from_uri("/p").unwrap()).unwrap();
    // Data without the router's PIT token go to every worker: still counted once.
    let serve = std::thread::spawn(move || {
        for _ in 0..5 {
            let Ok(Some(Received::Interest(ip))) = producer.recv(Duration::from_secs(10)) else {
                panic!("no Interest");
            };
            let mut d = wire::Data::new(ip.interest.name.clone(), vec![1; 10]);
            d.sign_digest_sha256();
            producer.put_data(&d.to_wire(), None).unwrap();
        }
        producer
    });
    let mut consumer = unix_face(&r);
    let before = Controller::new(&mut consumer).forwarder_status().unwrap();
    for i in 0..5 {
        let mut interest = Interest::new(Name::from_uri(&format!("/p/{i}")).unwrap(), nonce(i));
        interest.lifetime_ms = Some(4000);
        consumer.fetch(&interest).unwrap();
    }
    let _producer = serve.join().unwrap();
    let after = Controller::new(&mut consumer).forwarder_status().unwrap();
    let delta = |f: fn(&wire::nfd::ForwarderStatus) -> u64| f(&after) - f(&before);
    // Five exchanges, plus this request in and the first request's answer out (counted once
    // it was sent), as NFD counts its internal face's traffic.
    assert_eq!(delta(|s| s.n_in_interests), 6);
    assert_eq!(delta(|s| s.n_out_interests), 6);
    assert_eq!(delta(|s| s.n_in_data), 6);
    assert_eq!(delta(|s| s.n_out_data), 6);
    assert_eq!(delta(|s| s.n_satisfied_interests), 6);
    assert_eq!(delta(|s| s.n_unsatisfied_interests), 0);
    // The route, and NFD's /localhost/nfd and /localhost/nfd/rib (management's own).
    assert_eq!(after.n_fib_entries, 1 + 2);
    r.stop_handle().stop();
    r.join();
}

#[test]
fn status_general_counts_an_interest_every_upstream_nacked_unsatisfied() {
    for threads in [router::Threads::IoWorkers, router::Threads::Sharded] {
        let dir = tmp_dir(&format!("status-nack-{}", threads.name()));
        let mut c = Config::default();
        c.listen.unix = dir.0.join("nfd.sock").display().to_string();
        c.listen.tcp = String::new();
        c.listen.websocket = String::new();
        c.listen.udp = String::new();
        c.workers.count = 2;
        c.workers.threads = threads;
        let r = Router::start(&c).unwrap();
        let mut producer = unix_face(&r);
        producer.register(&Name::from_uri("/n").unwrap()).unwrap();
        let serve = std::thread::spawn(move || {
            let Ok(Some(Received::Interest(ip))) = producer.recv(Duration::from_secs(10)) else {
                panic!("no Interest");
            };
            producer
                .put_nack(&ip, wire::lp::NackReason::NoRoute)
                .unwrap();
            producer
        });
        let mut consumer = unix_face(&r);
        let before = Controller::new(&mut consumer).forwarder_status().unwrap();
        let mut interest = Interest::new(Name::from_uri("/n/1").unwrap(), nonce(1));
        interest.lifetime_ms = Some(4000);
        assert!(consumer.fetch(&interest).is_err(), "Nacked");
        let _producer = serve.join().unwrap();
        let after = Controller::new(&mut consumer).forwarder_status().unwrap();
        // Its only upstream Nacked: the PIT entry ends unsatisfied, as in NFD's forwarder.
        assert_eq!(
            after.n_unsatisfied_interests - before.n_unsatisfied_interests,
            1
        );
        assert_eq!(
            after.n_satisfied_interests - before.n_satisfied_interests,
            1,
            "only the first status request"
        );
        r.stop_handle().stop();
        r.join();
    }
}

/// A router listening on TCP `tcp` only (besides its Unix socket in `dir`).
fn peer_on(dir: &Path, tcp: std::net::SocketAddr) -> Router {
    let mut c = Config::default();
    c.listen.unix = dir.join("peer.sock").display().to_string();
    c.listen.tcp = tcp.to_string();
    c.listen.websocket = String::new();
    c.listen.udp = String::new();
    Router::start(&c).unwrap()
}

/// A configured permanent TCP face whose remote does not listen yet: the router starts, the
/// face is created DOWN, comes UP when the remote listens, goes DOWN when it goes away and UP
/// when it comes back, and a FaceMonitor sees CREATED, DOWN, UP, DOWN, UP in that order.
#[test]
fn a_configured_tcp_face_goes_down_and_up_with_its_remote_and_a_monitor_sees_it() {
    let dir = tmp_dir("redial");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let uri = format!("tcp4://{port}");
    let mut c = Config::default();
    c.listen.unix = dir.0.join("nfd.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.websocket = String::new();
    c.listen.udp = String::new();
    c.static_faces
        .push(router::config::StaticFace { uri: uri.clone() });
    let r = Router::start(&c).expect("an unreachable [[face]] does not stop the start");
    let mut m = Monitor::new(unix_face(&r));
    m.ask_for(0);
    let mut seen = Vec::new();
    let mut id = None;
    let mut wait_for = |m: &mut Monitor, kind: FaceEventKind, seen: &mut Vec<FaceEventKind>| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while seen.last() != Some(&kind) {
            assert!(Instant::now() < deadline, "events seen: {seen:?}");
            let Some(n) = m.next(Duration::from_secs(5)) else {
                continue;
            };
            if n.uri == uri {
                assert_eq!(*id.get_or_insert(n.face_id), n.face_id);
                assert_eq!(n.face_persistency, FacePersistency::Permanent);
                seen.push(n.kind);
            }
        }
    };
    wait_for(&mut m, FaceEventKind::Down, &mut seen);
    assert_eq!(seen, [FaceEventKind::Created, FaceEventKind::Down]);
    let peer = peer_on(&dir.0, port);
    wait_for(&mut m, FaceEventKind::Up, &mut seen);
    peer.stop_handle().stop();
    peer.join();
    wait_for(&mut m, FaceEventKind::Down, &mut seen);
    let peer = peer_on(&dir.0, port);
    wait_for(&mut m, FaceEventKind::Up, &mut seen);
    // Created first, then DOWN and UP by turns (a peer stopping may be dialed once more before
    // its listener closes).
    assert_eq!(seen[0], FaceEventKind::Created);
    for (i, k) in seen[1..].iter().enumerate() {
        let want = [FaceEventKind::Down, FaceEventKind::Up][i % 2];
        assert_eq!(*k, want, "events seen: {seen:?}");
    }
    assert!(seen.len() >= 5, "events seen: {seen:?}");
    // The face is listed, once, and the peer has the connection.
    let mut cface = unix_face(&r);
    let faces = Controller::new(&mut cface).faces().unwrap();
    assert_eq!(faces.iter().filter(|f| f.uri == uri).count(), 1);
    let mut pface = unix_face(&peer);
    let peer_faces = Controller::new(&mut pface).faces().unwrap();
    assert!(peer_faces
        .iter()
        .any(|f| f.uri.starts_with("tcp4://127.0.0.1:")));
    peer.stop_handle().stop();
    peer.join();
    r.stop_handle().stop();
    r.join();
}

/// With the IPv4 wildcards, the IPv6 twins listen on the same ports (NFD's `enable_v6`), are
/// listed by `faces/channels`, and take connections and datagrams over IPv6.
#[test]
fn ipv4_and_ipv6_listeners_by_default_on_one_port() {
    if UdpSocket::bind("[::1]:0").is_err() {
        return; // no IPv6 on this host
    }
    for mode in MODES {
        let dir = tmp_dir(&format!("v6-{}", mode.1));
        let mut c = Config::default();
        c.listen.unix = dir.0.join("nfd.sock").display().to_string();
        c.listen.tcp = "0.0.0.0:0".into();
        c.listen.udp = "0.0.0.0:0".into();
        c.listen.websocket = String::new();
        c.workers.count = mode.1;
        c.workers.threads = mode.0;
        let r = Router::start(&c).unwrap();
        let b = r.bound().clone();
        let (tcp, udp) = (b.tcp.unwrap().port(), b.udp.unwrap().port());
        assert_eq!(b.tcp6.map(|a| a.to_string()), Some(format!("[::]:{tcp}")));
        assert_eq!(b.udp6.map(|a| a.to_string()), Some(format!("[::]:{udp}")));
        let mut face = unix_face(&r);
        let mut ctl = Controller::new(&mut face);
        let channels = ctl.dataset(&dataset_name("faces/channels")).unwrap();
        let channels = decode_dataset(&channels, ChannelStatus::from_element).unwrap();
        let uris: Vec<String> = channels.into_iter().map(|c| c.local_uri).collect();
        for want in [
            format!("tcp4://0.0.0.0:{tcp}"),
            format!("tcp6://[::]:{tcp}"),
            format!("udp4://0.0.0.0:{udp}"),
            format!("udp6://[::]:{udp}"),
        ] {
            assert!(uris.contains(&want), "{want} not in {uris:?}");
        }
        // An IPv6 connection and an IPv6 datagram each make a face.
        let conn = std::net::TcpStream::connect(format!("[::1]:{tcp}")).unwrap();
        let dgram = UdpSocket::bind("[::1]:0").unwrap();
        let i = Interest::new(Name::from_uri("/v6/x").unwrap(), nonce(1));
        dgram.send_to(&i.to_wire(), format!("[::1]:{udp}")).unwrap();
        let want = [
            format!("tcp6://[::1]:{}", conn.local_addr().unwrap().port()),
            format!("udp6://[::1]:{}", dgram.local_addr().unwrap().port()),
        ];
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let faces: Vec<String> = ctl.faces().unwrap().into_iter().map(|f| f.uri).collect();
            if want.iter().all(|w| faces.contains(w)) {
                break;
            }
            assert!(Instant::now() < deadline, "{want:?} not in {faces:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        r.stop_handle().stop();
        r.join();
    }
}
