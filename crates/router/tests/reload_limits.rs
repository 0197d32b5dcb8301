//! A reload changes `[faces]` limits of a running router: the per-host bound of on-demand UDP
//! faces, lowered, refuses a new remote of the host (counted in `/metrics`), raised again,
//! lets it in; a key only a restart applies is reported as such and changes nothing. The
//! creation budget of on-demand faces, lowered to one a second, refuses new remotes (counted)
//! and, turned off, lets them in again. The
//! congestion marking default (`[face_system.general]`) changes the faces made after the
//! reload, and leaves the open ones as they are.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use router::{Config, Router};
use wire::{Interest, Name};

fn config(per_host: usize, max_faces: usize) -> Config {
    budget_config(per_host, max_faces, "")
}

/// [`config`] with more `[faces]` keys.
fn budget_config(per_host: usize, max_faces: usize, faces: &str) -> Config {
    let text = format!(
        "[listen]\nunix = \"\"\ntcp = \"\"\nudp = \"127.0.0.1:0\"\nwebsocket = \"\"\n\
         [http]\nlisten = \"127.0.0.1:0\"\n\
         [faces]\nmax_on_demand_per_host = {per_host}\nmax_faces = {max_faces}\n{faces}"
    );
    Config::from_toml(&text).unwrap()
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

/// A new remote on 127.0.0.1 sends an Interest; whether it got an on-demand face (waits
/// until it has one, or until its datagram is counted refused for its host).
fn new_remote(r: &Router, http: SocketAddr, n: u8) -> (UdpSocket, bool) {
    new_remote_or(r, http, n, "on_demand_refused_host")
}

/// [`new_remote`], refused as the bounds' counter `event` counts.
fn new_remote_or(r: &Router, http: SocketAddr, n: u8, event: &str) -> (UdpSocket, bool) {
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("udp4://{}", peer.local_addr().unwrap());
    let refused = bounds(http, event);
    let name = Name::from_uri(&format!("/reload/{n}")).unwrap();
    peer.send_to(
        &Interest::new(name, [n; 4]).to_wire(),
        r.bound().udp.unwrap(),
    )
    .unwrap();
    let t0 = Instant::now();
    loop {
        if r.faces().iter().any(|f| f.uri == uri) {
            return (peer, true);
        }
        if bounds(http, event) > refused {
            return (peer, false);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "neither face nor refusal"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_reload_changes_the_on_demand_bound_of_a_running_router() {
    let mut r = Router::start(&config(16, 4096)).unwrap();
    let http = r.http_addr().unwrap();
    let (_p1, ok1) = new_remote(&r, http, 1);
    let (_p2, ok2) = new_remote(&r, http, 2);
    assert!(ok1 && ok2);

    // Two faces on the host already: a bound of 2 refuses the third remote.
    let done = r.reload(&config(2, 4096)).unwrap();
    assert_eq!(done.limits_applied, ["faces.max_on_demand_per_host"]);
    assert!(done.need_restart.is_empty(), "{:?}", done.need_restart);
    let t0 = Instant::now();
    let mut refused = 0;
    while refused == 0 {
        // The loop takes the new limit with its next command: retry with new remotes.
        let (_p, ok) = new_remote(&r, http, 3);
        assert!(ok || bounds(http, "on_demand_refused_host") > 0);
        refused = bounds(http, "on_demand_refused_host");
        assert!(t0.elapsed() < Duration::from_secs(10), "never refused");
    }
    let faces = r.faces().len();
    let (_p4, ok4) = new_remote(&r, http, 4);
    assert!(!ok4, "the lowered bound holds");
    assert_eq!(r.faces().len(), faces);

    // A key only a restart applies is reported, and the running bound stays.
    let done = r.reload(&config(2, 8192)).unwrap();
    assert_eq!(done.need_restart, ["faces"]);
    assert!(done.limits_applied.is_empty());
    // Raised again: a new remote gets its face.
    let done = r.reload(&config(64, 8192)).unwrap();
    assert_eq!(done.limits_applied, ["faces.max_on_demand_per_host"]);
    let t0 = Instant::now();
    while !new_remote(&r, http, 5).1 {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the raised bound never held"
        );
    }
    r.stop_handle().stop();
    r.join();
}

#[test]
fn a_reload_changes_the_creation_budget_of_on_demand_faces() {
    let mut r = Router::start(&config(4096, 4096)).unwrap();
    let http = r.http_addr().unwrap();
    let event = "on_demand_refused_budget";
    assert!(new_remote_or(&r, http, 1, event).1);

    // One new face a second, a burst of one: within a few remotes, one is refused.
    let slow = "on_demand_faces_per_s = 1\non_demand_faces_burst = 1\n";
    let done = r.reload(&budget_config(4096, 4096, slow)).unwrap();
    let mut keys = done.limits_applied.clone();
    keys.sort();
    assert_eq!(
        keys,
        ["faces.on_demand_faces_burst", "faces.on_demand_faces_per_s"]
    );
    assert!(done.need_restart.is_empty(), "{:?}", done.need_restart);
    let t0 = Instant::now();
    let mut n = 2;
    while new_remote_or(&r, http, n, event).1 {
        n += 1;
        assert!(t0.elapsed() < Duration::from_secs(10), "never refused");
    }
    assert!(bounds(http, event) > 0);

    // No bound: every new remote gets its face at once.
    let off = "on_demand_faces_per_s = 0\non_demand_faces_burst = 1\n";
    let done = r.reload(&budget_config(4096, 4096, off)).unwrap();
    assert_eq!(done.limits_applied, ["faces.on_demand_faces_per_s"]);
    let t0 = Instant::now();
    while !new_remote_or(&r, http, 100, event).1 {
        assert!(t0.elapsed() < Duration::from_secs(10), "still refused");
    }
    let refused = bounds(http, event);
    for k in 101..111 {
        assert!(new_remote_or(&r, http, k, event).1, "remote {k}");
    }
    assert_eq!(bounds(http, event), refused);
    r.stop_handle().stop();
    r.join();
}

fn tcp_config(max_per_address: usize) -> Config {
    let text = format!(
        "[listen]\nunix = \"\"\ntcp = \"127.0.0.1:0\"\nudp = \"\"\nwebsocket = \"\"\n\
         [http]\nlisten = \"127.0.0.1:0\"\n[connections]\nmax_per_address = {max_per_address}\n"
    );
    Config::from_toml(&text).unwrap()
}

/// A new TCP connection to `r`: whether it became a face (waits until it is one, or until the
/// router closed it).
fn connect(r: &Router) -> (TcpStream, bool) {
    let s = TcpStream::connect(r.bound().tcp.unwrap()).unwrap();
    let uri = format!("tcp4://{}", s.local_addr().unwrap());
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let t0 = Instant::now();
    loop {
        if r.faces().iter().any(|f| f.uri == uri) {
            return (s, true);
        }
        let mut buf = [0u8; 16];
        if matches!((&s).read(&mut buf), Ok(0)) {
            return (s, false);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "neither face nor close"
        );
    }
}

#[test]
fn a_reload_changes_the_connections_per_address_of_a_running_router() {
    let mut r = Router::start(&tcp_config(0)).unwrap();
    let (_a, ok_a) = connect(&r);
    let (_b, ok_b) = connect(&r);
    assert!(ok_a && ok_b);
    // Two connections from 127.0.0.1 already: a limit of 2 refuses the third.
    let done = r.reload(&tcp_config(2)).unwrap();
    assert_eq!(done.limits_applied, ["connections.max_per_address"]);
    assert!(done.need_restart.is_empty(), "{:?}", done.need_restart);
    let t0 = Instant::now();
    // The loop takes the new limit with its next command: retry until it holds.
    let mut kept = Vec::new();
    loop {
        let (c, ok) = connect(&r);
        if !ok {
            break;
        }
        kept.push(c);
        assert!(t0.elapsed() < Duration::from_secs(10), "never refused");
    }
    drop(kept);
    // Counted apart from the face limit.
    assert!(bounds(r.http_addr().unwrap(), "connection_refused_address") >= 1);
    // Lifted again: a new connection is a face.
    let done = r.reload(&tcp_config(0)).unwrap();
    assert_eq!(done.limits_applied, ["connections.max_per_address"]);
    let t0 = Instant::now();
    while !connect(&r).1 {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the lifted limit never held"
        );
    }
    r.stop_handle().stop();
    r.join();
}

fn marking_config(marking: bool, static_port: Option<u16>) -> Config {
    let mut text = format!(
        "[listen]\nunix = \"\"\ntcp = \"\"\nudp = \"127.0.0.1:0\"\nwebsocket = \"\"\n\
         [http]\nlisten = \"127.0.0.1:0\"\n\
         [face_system.general]\nenable_congestion_marking = {marking}\n"
    );
    if let Some(p) = static_port {
        text += &format!("[[face]]\nuri = \"udp4://127.0.0.1:{p}\"\n");
    }
    Config::from_toml(&text).unwrap()
}

/// The marking flag of the face whose remote URI is `uri`, if there is one.
fn marking_of(r: &Router, uri: &str) -> Option<bool> {
    let faces = r.faces();
    faces
        .iter()
        .find(|f| f.uri == uri)
        .map(|f| f.options.congestion_marking)
}

/// A new on-demand UDP face's marking flag (waits for the face).
fn on_demand_marking(r: &Router, http: SocketAddr, n: u8) -> (UdpSocket, bool) {
    let (peer, ok) = new_remote(r, http, n);
    assert!(ok);
    let uri = format!("udp4://{}", peer.local_addr().unwrap());
    let m = marking_of(r, &uri).unwrap();
    (peer, m)
}

#[test]
fn a_reload_changes_the_congestion_marking_of_the_faces_made_after_it() {
    let mut r = Router::start(&marking_config(true, None)).unwrap();
    let http = r.http_addr().unwrap();
    let (old, on) = on_demand_marking(&r, http, 1);
    assert!(on, "NFD's default");
    // Off: a [[face]] the reload makes (management) and new on-demand faces (the I/O loop)
    // have marking off; the face made before keeps it on.
    let statik = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = statik.local_addr().unwrap().port();
    let done = r.reload(&marking_config(false, Some(port))).unwrap();
    assert_eq!(
        done.limits_applied,
        ["face_system.general.enable_congestion_marking"]
    );
    assert!(done.need_restart.is_empty(), "{:?}", done.need_restart);
    assert_eq!(done.faces_added, 1);
    assert_eq!(
        marking_of(&r, &format!("udp4://127.0.0.1:{port}")),
        Some(false)
    );
    let t0 = Instant::now();
    let mut n = 2;
    // The loop takes the new default with its next command: retry with new remotes.
    while on_demand_marking(&r, http, n).1 {
        n += 1;
        assert!(t0.elapsed() < Duration::from_secs(10), "marking stayed on");
    }
    let old_uri = format!("udp4://{}", old.local_addr().unwrap());
    assert_eq!(
        marking_of(&r, &old_uri),
        Some(true),
        "an open face keeps it"
    );
    // On again.
    let done = r.reload(&marking_config(true, Some(port))).unwrap();
    assert_eq!(
        done.limits_applied,
        ["face_system.general.enable_congestion_marking"]
    );
    let t0 = Instant::now();
    while !on_demand_marking(&r, http, n).1 {
        n += 1;
        assert!(t0.elapsed() < Duration::from_secs(10), "marking stayed off");
    }
    r.stop_handle().stop();
    r.join();
}
