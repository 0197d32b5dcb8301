//! `[local]` through the daemon: the Unix socket's peer credentials against `allow_uids`
//! (refused connections closed at once and counted in `/metrics`, the router running on), and
//! the scope of loopback TCP faces (`loopback_tcp_is_local`): non-local by default, so their
//! `/localhost/nfd` Interests are dropped and counted; local when configured, so answered.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use client::control::Controller;
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use wire::{Interest, Name};

struct TmpDir(PathBuf);

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start(tag: &str, local: &str) -> (TmpDir, Router) {
    let dir =
        TmpDir(std::env::temp_dir().join(format!("cascade-local-{tag}-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let toml = format!(
        "[listen]\nunix = \"{}\"\ntcp = \"127.0.0.1:0\"\nudp = \"\"\nwebsocket = \"\"\n\
         [http]\nlisten = \"127.0.0.1:0\"\n[local]\n{local}\n",
        dir.0.join("nfd.sock").display()
    );
    let r = Router::start(&Config::from_toml(&toml).unwrap()).unwrap();
    (dir, r)
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

fn metric(http: SocketAddr, series: &str) -> Option<u64> {
    let mut s = TcpStream::connect(http).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    write!(s, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

const REFUSED: &str = r#"cascade_face_table_bounds_total{event="unix_peer_refused"}"#;

#[test]
fn unix_peers_outside_the_allow_list_are_refused() {
    let other = euid().wrapping_add(4242);
    let (_dir, r) = start("refuse", &format!("allow_uids = [{other}]"));
    let path = r.bound().unix.clone().unwrap();
    let http = r.http_addr().unwrap();
    for n in 1..=2u64 {
        let mut s = UnixStream::connect(&path).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let i = Interest::new(Name::from_uri("/localhost/nfd/faces/list").unwrap(), [1; 4]);
        // The router closes the connection: the write may fail, the read sees the end.
        let _ = s.write_all(&i.to_wire());
        let mut buf = [0u8; 64];
        match s.read(&mut buf) {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("connection {n} not closed: {other:?}"),
        }
        assert_eq!(
            metric(http, REFUSED),
            Some(n),
            "the router runs on and counts"
        );
    }
    assert!(Face::connect(&TransportUri::Unix(path.clone()))
        .and_then(|mut f| Controller::new(&mut f)
            .with_timeout(Duration::from_millis(500))
            .faces())
        .is_err());
    r.stop_handle().stop();
    r.join();
}

#[test]
fn unix_peers_in_the_allow_list_are_faces() {
    let (_dir, r) = start("admit", &format!("allow_uids = [{}]", euid()));
    let mut f = Face::connect(&TransportUri::Unix(r.bound().unix.clone().unwrap())).unwrap();
    let faces = Controller::new(&mut f).faces().unwrap();
    assert!(!faces.is_empty());
    assert_eq!(metric(r.http_addr().unwrap(), REFUSED), Some(0));
    r.stop_handle().stop();
    r.join();
}

/// Asks `/localhost/nfd/faces/list` over a loopback TCP face.
fn tcp_faces_list(r: &Router) -> Result<usize, String> {
    let mut f = Face::connect(&TransportUri::tcp(r.bound().tcp.unwrap())).unwrap();
    Controller::new(&mut f)
        .with_timeout(Duration::from_millis(1500))
        .faces()
        .map(|l| l.len())
        .map_err(|e| e.to_string())
}

#[test]
fn loopback_tcp_is_not_local_by_default() {
    let (_dir, r) = start("tcp-default", "");
    assert!(tcp_faces_list(&r).is_err());
    let deadline = Instant::now() + Duration::from_secs(10);
    while r.mgmt_queue().dropped_scope.load(Ordering::Relaxed) == 0 {
        assert!(Instant::now() < deadline, "the scope drop was not counted");
        std::thread::sleep(Duration::from_millis(20));
    }
    r.stop_handle().stop();
    r.join();
}

#[test]
fn loopback_tcp_is_local_when_configured() {
    let (_dir, r) = start("tcp-local", "loopback_tcp_is_local = true");
    assert!(tcp_faces_list(&r).unwrap() >= 1);
    assert_eq!(r.mgmt_queue().dropped_scope.load(Ordering::Relaxed), 0);
    r.stop_handle().stop();
    r.join();
}
