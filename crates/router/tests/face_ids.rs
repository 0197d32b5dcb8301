//! Face ids over real sockets: an on-demand UDP face's slot, freed by eviction, names a new
//! remote's face in a new generation, and the Data for an Interest the closed face left in the
//! PIT goes to the closed face's full id (dropped, counted), never to the new face.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use client::control::Controller;
use client::face::Received;
use client::transport::TransportUri;
use client::Face;
use face::table::FaceIdSpace;
use router::{Config, Router};
use wire::{Data, Interest, Limits, Name, PacketView};

/// Room for the producer's and management's Unix faces and one on-demand face: 8 slots.
const MAX_FACES: usize = 4;

/// A router with one worker, its Unix socket in `dir`, UDP and HTTP on ephemeral ports, and
/// [`MAX_FACES`] faces of which one on demand.
fn start(dir: &std::path::Path) -> Router {
    let sock = dir.join("nfd.sock");
    let text = [
        format!("[listen]\nunix = {:?}", sock.display().to_string()),
        "tcp = \"\"\nudp = \"127.0.0.1:0\"\nwebsocket = \"\"".into(),
        "[http]\nlisten = \"127.0.0.1:0\"\n[workers]\nthreads = \"one\"".into(),
        format!("[faces]\nmax_faces = {MAX_FACES}\nmax_on_demand_faces = 1"),
    ]
    .join("\n");
    Router::start(&Config::from_toml(&text).unwrap()).unwrap()
}

/// The face tables' count of `event` in `/metrics`.
fn bounds(http: SocketAddr, event: &str) -> u64 {
    let mut text = String::new();
    let mut conn = TcpStream::connect(http).unwrap();
    conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    conn.read_to_string(&mut text).unwrap();
    let key = format!("cascade_face_table_bounds_total{{event=\"{event}\"}} ");
    let line = text.lines().find(|l| l.starts_with(&key));
    line.and_then(|l| l[key.len()..].parse().ok())
        .expect("the series")
}

/// A producer of `/p` that tells `heard` the name of every Interest it receives and answers
/// one only when `answer` names it; stops when `answer` is dropped.
fn produce(unix: std::path::PathBuf, heard: Sender<String>, answer: Receiver<String>) {
    let mut f = Face::connect(&TransportUri::Unix(unix)).unwrap();
    f.register(&Name::from_uri("/p").unwrap()).unwrap();
    std::thread::spawn(move || {
        let mut pending = Vec::new();
        loop {
            if let Ok(Some(Received::Interest(i))) = f.recv(Duration::from_millis(20)) {
                let _ = heard.send(i.interest.name.to_string());
                pending.push(i);
            }
            match answer.try_recv() {
                Ok(name) => {
                    let at = pending
                        .iter()
                        .position(|i| i.interest.name.to_string() == name);
                    let i = pending.remove(at.expect("answer an Interest heard"));
                    let mut d = Data::new(i.interest.name.clone(), b"x".to_vec());
                    d.sign_digest_sha256();
                    f.put_data(&d.to_wire(), i.pit_token).unwrap();
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
            }
        }
    });
}

/// Sends an Interest for `name` (4 s lifetime) from `s` to `router`.
fn ask(s: &UdpSocket, router: SocketAddr, name: &str) {
    let mut i = Interest::new(Name::from_uri(name).unwrap(), [7; 4]);
    i.lifetime_ms = Some(4000);
    s.send_to(&i.to_wire(), router).unwrap();
}

/// The name of the Data in datagram `bytes` (in an LpPacket or not), if it holds one.
fn data_name(bytes: &[u8]) -> Option<String> {
    let limits = Limits::default();
    match PacketView::decode(bytes, &limits).ok()? {
        PacketView::Data(d) => Some(d.name().to_string()),
        PacketView::Lp(lp) => match lp.network_packet(&limits)?.ok()? {
            PacketView::Data(d) => Some(d.name().to_string()),
            _ => None,
        },
        PacketView::Interest(_) => None,
    }
}

/// The id of the face whose remote is `s`.
fn face_of(c: &mut Controller<'_>, s: &UdpSocket) -> Option<u32> {
    let uri = format!("udp4://{}", s.local_addr().unwrap());
    let faces = c.faces().unwrap();
    faces
        .iter()
        .find(|f| f.uri == uri)
        .map(|f| f.face_id as u32)
}

#[test]
fn data_for_a_closed_faces_interest_never_reaches_the_new_face_on_its_slot() {
    let dir = std::env::temp_dir().join(format!("cascade-faceids-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let r = start(&dir);
    let udp = r.bound().udp.unwrap();
    let http = r.http_addr().unwrap();
    let unix = r.bound().unix.clone().unwrap();
    let (heard_tx, heard) = channel();
    let (answer, answer_rx) = channel();
    produce(unix.clone(), heard_tx, answer_rx);
    let mut mgmt = Face::connect(&TransportUri::Unix(unix)).unwrap();
    let mut c = Controller::new(&mut mgmt);
    let wait_heard = |name: &str| {
        let got = heard.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(got, name);
    };
    // A asks and its Interest waits at the producer.
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    ask(&a, udp, "/p/a");
    wait_heard("/p/a");
    let a_id = face_of(&mut c, &a).expect("A's face");
    // New remotes take the one on-demand place in turn, each evicting the last (A first),
    // until one's face gets A's slot, a generation on (once every slot has been given out):
    // that remote is B.
    let space = FaceIdSpace::for_tables(1, MAX_FACES);
    let mut b = None;
    for k in 0..4 * MAX_FACES {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let name = format!("/p/{k}");
        ask(&s, udp, &name);
        wait_heard(&name);
        assert_eq!(face_of(&mut c, &a), None, "A evicted");
        let id = face_of(&mut c, &s).expect("the new remote's face");
        if space.slot(id) == space.slot(a_id) {
            assert_ne!(id, a_id);
            b = Some((s, name));
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let (b, b_name) = b.expect("a new face on A's slot");
    let stale_before = bounds(http, "sent_to_closed_faces");
    // The Data for A's Interest comes first, then B's own.
    answer.send("/p/a".to_string()).unwrap();
    answer.send(b_name.clone()).unwrap();
    b.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 9000];
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && !got.contains(&b_name) {
        if let Ok(n) = b.recv(&mut buf) {
            got.extend(data_name(&buf[..n]));
        }
    }
    // Anything after B's Data (A's would have come before it, on the same path).
    while let Ok(n) = b.recv(&mut buf) {
        got.extend(data_name(&buf[..n]));
    }
    assert_eq!(got, vec![b_name], "B got only its own Data");
    assert!(bounds(http, "sent_to_closed_faces") > stale_before);
    drop(answer);
    r.stop_handle().stop();
    let _ = std::fs::remove_dir_all(&dir);
}
