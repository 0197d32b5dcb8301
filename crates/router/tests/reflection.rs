//! The reflection bound over real sockets: a raw UDP socket that sends Interests and never
//! reads (a forged source, to the router) is sent no more than the budget of unproven faces,
//! while a client face that acknowledges TxSequences proves its address and is not bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use client::face::{Outcome, Received};
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use wire::{Data, Interest, Name};

/// The budget of all unproven faces: the smallest the key takes (one largest packet a second).
const BUDGET_BYTES_PER_S: u64 = 8800;
/// Content bytes of the producer's Data.
const PAYLOAD: usize = 4000;

fn start(dir: &std::path::Path) -> Router {
    let text = format!(
        "[listen]\nunix = \"{}\"\ntcp = \"\"\nudp = \"127.0.0.1:0\"\nwebsocket = \"\"\n\
         [http]\nlisten = \"127.0.0.1:0\"\n\
         [faces]\nunproven_send_bytes_per_s = {BUDGET_BYTES_PER_S}\n",
        dir.join("nfd.sock").display()
    );
    Router::start(&Config::from_toml(&text).unwrap()).unwrap()
}

/// `cascade_face_table_bounds_total{event=...}` of `/metrics`.
fn bounds(http: SocketAddr, event: &str) -> u64 {
    let mut s = TcpStream::connect(http).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let series = format!("cascade_face_table_bounds_total{{event=\"{event}\"}} ");
    (text.lines())
        .find_map(|l| l.strip_prefix(&series)?.parse().ok())
        .unwrap_or_else(|| panic!("no {series} in {text}"))
}

/// A producer of `/p` on the router's Unix socket, answering every Interest with
/// [`PAYLOAD`] bytes, until `stop`.
fn produce(unix: std::path::PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let mut f = Face::connect(&TransportUri::Unix(unix)).unwrap();
    f.register(&Name::from_uri("/p").unwrap()).unwrap();
    std::thread::spawn(move || {
        while !stop.load(Relaxed) {
            if let Ok(Some(Received::Interest(i))) = f.recv(Duration::from_millis(50)) {
                let mut d = Data::new(i.interest.name.clone(), vec![1; PAYLOAD]);
                d.sign_digest_sha256();
                let _ = f.put_data(&d.to_wire(), i.pit_token);
            }
        }
    })
}

#[test]
fn a_source_that_never_reads_is_bounded_and_a_client_that_acks_is_not() {
    let dir = std::env::temp_dir().join(format!("cascade-reflect-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let r = start(&dir);
    let udp = r.bound().udp.unwrap();
    let http = r.http_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let producer = produce(r.bound().unix.clone().unwrap(), Arc::clone(&stop));

    // The forged source: 200 Interests (unproven: a share of the budget), nothing read.
    let victim = UdpSocket::bind("127.0.0.1:0").unwrap();
    let n = 200;
    for k in 0..n {
        let name = Name::from_uri(&format!("/p/forged/{k}")).unwrap();
        victim
            .send_to(&Interest::new(name, [3; 4]).to_wire(), udp)
            .unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    // Every Interest is answered, or dropped at the budget.
    let dropped = |_: ()| bounds(http, "unproven_budget");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while dropped(()) == 0 {
        assert!(std::time::Instant::now() < deadline, "nothing dropped");
        std::thread::sleep(Duration::from_millis(50));
    }
    victim.set_nonblocking(true).unwrap();
    let mut got = 0usize;
    let mut buf = [0u8; 9000];
    while let Ok(k) = victim.recv(&mut buf) {
        got += k;
    }
    // Unbounded, the victim would hold 200 Data of 4 KB; bounded, a burst and a few seconds'
    // worth of the budget.
    assert!(got < n * PAYLOAD / 4, "{got} bytes reflected");

    // A client face: its first answers may meet the spent budget, but it acknowledges what is
    // numbered (a probe at least), proves its address and then fetches unbounded.
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.connect(udp).unwrap();
    let mut c = Face::from_udp_socket(s, 1452, format!("udp4://{udp}")).unwrap();
    let mut fetched = 0;
    for k in 0..100 {
        let mut i = Interest::new(Name::from_uri(&format!("/p/legit/{k}")).unwrap(), [4; 4]);
        i.lifetime_ms = Some(500);
        if matches!(c.express(&i), Ok(Outcome::Data(_))) {
            fetched += 1;
        }
        if fetched == 40 {
            break;
        }
    }
    assert_eq!(fetched, 40, "the client fetched through the router");
    assert!(c.counters().acks_sent > 0);
    assert!(bounds(http, "proven_by_ack") > 0);
    stop.store(true, Relaxed);
    producer.join().unwrap();
    r.stop_handle().stop();
    r.join();
    let _ = std::fs::remove_dir_all(&dir);
}
