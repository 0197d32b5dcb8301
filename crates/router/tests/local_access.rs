//! `[local]` through the daemon: the Unix socket's peer credentials against `allow_uids` and
//! `allow_gids`, supplementary groups included (refused connections closed at once and
//! counted in `/metrics`, the router running on), and
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

/// Connects to `path` from a forked child whose effective group is `gid` and whose
/// supplementary groups are `groups` (it stays root: only its groups differ from this
/// process's); whether the router kept the connection open (admitted) rather than closing it
/// at once (refused).
fn admitted_with_groups(path: &std::path::Path, gid: u32, groups: &[u32]) -> bool {
    use std::os::unix::ffi::OsStrExt;
    // What the child needs is made before the fork: it makes system calls only, then exits.
    // SAFETY: sockaddr_un is plain data; all zeroes is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    assert!(bytes.len() < addr.sun_path.len());
    for (d, s) in addr.sun_path.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    let timeout = libc::timeval {
        tv_sec: 3,
        tv_usec: 0,
    };
    let gids: Vec<libc::gid_t> = groups.to_vec();
    // SAFETY: the child makes async-signal-safe system calls only, then `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        // SAFETY: system calls on values made before the fork.
        unsafe {
            let code = (|| {
                if libc::setgroups(gids.len(), gids.as_ptr()) != 0 || libc::setgid(gid) != 0 {
                    return 2;
                }
                let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
                let to = (&addr as *const libc::sockaddr_un).cast();
                if fd < 0 || libc::connect(fd, to, len) != 0 {
                    return 2;
                }
                let tv_len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
                let tv = (&timeout as *const libc::timeval).cast();
                libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVTIMEO, tv, tv_len);
                // A refused connection is closed at once (end of stream); an admitted one
                // stays open until the read times out.
                let mut b = [0u8; 16];
                let n = libc::read(fd, b.as_mut_ptr().cast(), b.len());
                let timed_out = n < 0 && *libc::__errno_location() == libc::EAGAIN;
                if timed_out {
                    0
                } else {
                    1
                }
            })();
            libc::_exit(code);
        }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status));
    match libc::WEXITSTATUS(status) {
        0 => true,
        1 => false,
        c => panic!("the child could not take its groups or connect ({c})"),
    }
}

#[test]
fn unix_peers_in_an_allowed_supplementary_group_are_admitted() {
    if euid() != 0 {
        eprintln!("skipped: taking other groups needs root (as CI runs)");
        return;
    }
    let (_dir, r) = start("groups", "allow_gids = [4242]");
    let path = r.bound().unix.clone().unwrap();
    let http = r.http_addr().unwrap();
    assert!(admitted_with_groups(&path, 4243, &[4244, 4242]));
    assert_eq!(metric(http, REFUSED), Some(0));
    assert!(!admitted_with_groups(&path, 4243, &[4244]));
    assert_eq!(metric(http, REFUSED), Some(1));
    assert!(
        admitted_with_groups(&path, 4242, &[]),
        "the effective group"
    );
    assert_eq!(metric(http, REFUSED), Some(1));
    r.stop_handle().stop();
    r.join();
}
