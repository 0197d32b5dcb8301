//! NDNLPv2 reliability on UDP faces through the daemon: a neighbour with reliability on (as an
//! NFD face with LpReliabilityEnabled) sees its frames acked, its duplicates dropped, and the
//! router's own frames numbered and retransmitted until acked; and two routers with
//! reliability on both sides forward over UDP.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use client::control::Controller;
use client::face::Received;
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use wire::nfd::{ControlParameters, FACE_FLAG_LP_RELIABILITY_ENABLED};
use wire::{Data, Interest, Limits, LpPacket, LpPacketView, Name};

fn start(tag: &str) -> (Router, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("cascade-rel-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = Config::default();
    c.listen.unix = dir.join("nfd.sock").display().to_string();
    c.listen.tcp = String::new();
    c.listen.udp = "127.0.0.1:0".into();
    c.listen.websocket = String::new();
    c.http.listen = "127.0.0.1:0".into();
    (Router::start(&c).unwrap(), dir)
}

/// `cascade_lp_reliability_total{event=...}` of the router's `/metrics`.
fn reliability_metric(r: &Router, event: &str) -> u64 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(r.http_addr().unwrap()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let series = format!("cascade_lp_reliability_total{{event=\"{event}\"}} ");
    (text.lines())
        .find_map(|l| l.strip_prefix(&series)?.parse().ok())
        .unwrap_or_else(|| panic!("no {series} in {text}"))
}

fn unix_face(r: &Router) -> Face {
    Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap()
}

/// Creates a UDP face to `remote` with LpReliabilityEnabled; its id.
fn reliable_face(r: &Router, remote: SocketAddr) -> u64 {
    let mut f = unix_face(r);
    let p = ControlParameters {
        uri: Some(format!("udp4://{remote}")),
        flags: Some(FACE_FLAG_LP_RELIABILITY_ENABLED),
        mask: Some(FACE_FLAG_LP_RELIABILITY_ENABLED),
        ..ControlParameters::default()
    };
    let ok = Controller::new(&mut f)
        .command("faces", "create", &p)
        .unwrap();
    assert_eq!(ok.flags.map(|f| f & 2), Some(2));
    ok.face_id.unwrap()
}

fn interest(uri: &str, nonce: u32) -> Vec<u8> {
    let mut i = Interest::new(Name::from_uri(uri).unwrap(), nonce.to_be_bytes());
    i.lifetime_ms = Some(4000);
    i.to_wire()
}

/// A frame as a reliable neighbour sends it.
fn frame(tx: u64, seq: u64, acks: &[u64], packet: Vec<u8>) -> Vec<u8> {
    LpPacket {
        sequence: Some(seq),
        tx_sequence: Some(tx),
        acks: acks.to_vec(),
        fragment: Some(packet),
        ..LpPacket::default()
    }
    .to_wire()
}

/// What the neighbour receives within 10 s: each datagram's TxSequence, Acks and whether it
/// carries a network packet, until `done` says so.
fn receive_until(
    s: &UdpSocket,
    mut done: impl FnMut(&[(Option<u64>, Vec<u64>, bool)]) -> bool,
) -> Vec<(Option<u64>, Vec<u64>, bool)> {
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 9000];
    while !done(&seen) {
        assert!(Instant::now() < deadline, "seen: {seen:?}");
        let Ok(n) = s.recv(&mut buf) else { continue };
        let lp = LpPacketView::decode(&buf[..n], &Limits::default()).expect("an LpPacket");
        // Every frame is numbered, so that the neighbour can drop duplicates.
        assert!(lp.fragment().is_none() || lp.sequence.is_some());
        seen.push((lp.tx_sequence, lp.acks().collect(), lp.fragment().is_some()));
    }
    seen
}

#[test]
fn a_reliable_neighbour_is_acked_deduplicated_and_retransmitted_to() {
    let (r, dir) = start("nbr");
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let router = r.bound().udp.unwrap();
    s.connect(router).unwrap();
    reliable_face(&r, s.local_addr().unwrap());
    let mut producer = unix_face(&r);
    producer.register(&Name::from_uri("/rel").unwrap()).unwrap();

    // The neighbour's Interest (TxSequence 7) is acked; the Data comes back numbered.
    s.send(&frame(7, 1, &[], interest("/rel/1", 1))).unwrap();
    let Some(Received::Interest(ip)) = producer.recv(Duration::from_secs(10)).unwrap() else {
        panic!("the producer gets the Interest")
    };
    let mut d = Data::new(ip.interest.name.clone(), b"x".to_vec());
    d.sign_digest_sha256();
    producer.put_data(&d.to_wire(), ip.pit_token).unwrap();
    let acked = |seen: &[(Option<u64>, Vec<u64>, bool)]| seen.iter().any(|x| x.1.contains(&7));
    let data_tx =
        |seen: &[(Option<u64>, Vec<u64>, bool)]| seen.iter().find(|x| x.2).and_then(|x| x.0);
    let seen = receive_until(&s, |seen| acked(seen) && data_tx(seen).is_some());
    let first = data_tx(&seen).unwrap();

    // Not acked, the Data frame goes again under a new TxSequence; once acked, no more.
    let seen = receive_until(&s, |seen| seen.iter().any(|x| x.2 && x.0 != Some(first)));
    let again = seen.iter().find(|x| x.2).unwrap().0.unwrap();
    assert!(again > first);
    s.send(&frame(8, 2, &[first, again], interest("/rel/2", 2)))
        .unwrap();
    // A frame with a Sequence seen within the RTO is a duplicate: acked, not forwarded; the
    // next new one is.
    s.send(&frame(9, 2, &[], interest("/rel/dup", 3))).unwrap();
    s.send(&frame(10, 3, &[], interest("/rel/3", 4))).unwrap();
    let mut names = Vec::new();
    while names.len() < 2 {
        if let Some(Received::Interest(ip)) = producer.recv(Duration::from_secs(10)).unwrap() {
            names.push(ip.interest.name.to_string());
        } else {
            panic!("the producer gets /rel/2 and /rel/3: {names:?}");
        }
    }
    assert_eq!(names, ["/rel/2", "/rel/3"]);
    receive_until(&s, |seen| {
        [8, 9, 10]
            .iter()
            .all(|t| seen.iter().any(|x| x.1.contains(t)))
    });
    // `/metrics` shows what the face's reliability counted: the Data frame sent again, the
    // duplicate dropped.
    assert!(reliability_metric(&r, "retransmissions") >= 1);
    assert!(reliability_metric(&r, "duplicates") >= 1);
    r.stop_handle().stop();
    r.join();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_routers_with_reliability_on_both_sides_forward_over_udp() {
    let (a, dir_a) = start("a");
    let (b, dir_b) = start("b");
    let (a_udp, b_udp) = (a.bound().udp.unwrap(), b.bound().udp.unwrap());
    reliable_face(&b, a_udp);
    let to_b = reliable_face(&a, b_udp);
    let mut ctl = unix_face(&a);
    let route = ControlParameters {
        name: Some(Name::from_uri("/far").unwrap()),
        face_id: Some(to_b),
        ..ControlParameters::default()
    };
    Controller::new(&mut ctl)
        .command("rib", "register", &route)
        .unwrap();
    let mut producer = unix_face(&b);
    producer.register(&Name::from_uri("/far").unwrap()).unwrap();
    let serve = std::thread::spawn(move || {
        for _ in 0..20 {
            let Ok(Some(Received::Interest(ip))) = producer.recv(Duration::from_secs(10)) else {
                return;
            };
            // Larger than the MTU: several frames, each numbered and acked.
            let mut d = Data::new(ip.interest.name.clone(), vec![7; 4000]);
            d.sign_digest_sha256();
            producer.put_data(&d.to_wire(), ip.pit_token).unwrap();
        }
    });
    let mut consumer = unix_face(&a);
    for k in 0..20u32 {
        let i = Interest::new(
            Name::from_uri(&format!("/far/{k}")).unwrap(),
            (0xab00 + k).to_be_bytes(),
        );
        let got = consumer.fetch(&i).unwrap();
        assert_eq!(got.content(), &[7u8; 4000][..]);
    }
    serve.join().unwrap();
    for r in [a, b] {
        r.stop_handle().stop();
        r.join();
    }
    let _ = std::fs::remove_dir_all(&dir_a);
    let _ = std::fs::remove_dir_all(&dir_b);
}
