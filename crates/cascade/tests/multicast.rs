//! Multicast faces end to end: two real routers in two network namespaces joined by a veth
//! pair, each with its multicast faces on (`[face_system]`), the consumer's router with one
//! route, to its multicast face, the producer registered at the other. An Interest and its
//! Data (a three-segment file) cross the link over the UDP multicast face, and separately over
//! the Ethernet multicast face, and over a unicast Ethernet face `faces/create` makes (answered
//! on the on-demand face the other router makes for it). Skipped, with a line, where network namespaces are not
//! permitted (not root, or no `ip`).

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use client::{Controller, Face, TransportUri};
use wire::nfd::{ControlParameters, ControlResponse, FacePersistency};
use wire::Name;

const BIN: &str = env!("CARGO_BIN_EXE_cascade");

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Two namespaces joined by a veth pair, their routers and producer, and a scratch
/// directory: all removed on drop, whatever happened.
struct Link {
    tag: String,
    ns: [String; 2],
    dir: PathBuf,
    children: Vec<Child>,
}

impl Link {
    /// The namespaces and the link up (`10.<x>.0.1/24` and `.2`); `None` where namespaces are
    /// not permitted.
    fn new(tag: &str) -> Option<Link> {
        let id = std::process::id() % 100_000;
        let ns = [format!("cmc{tag}{id}a"), format!("cmc{tag}{id}b")];
        let dir = std::env::temp_dir().join(format!("cascade-mcast-{tag}-{id}"));
        if !ip(&["netns", "add", &ns[0]]) {
            return None;
        }
        let link = Link {
            tag: tag.into(),
            ns,
            dir,
            children: Vec::new(),
        };
        assert!(ip(&["netns", "add", &link.ns[1]]));
        std::fs::create_dir_all(&link.dir).unwrap();
        let (a, b) = (&link.ns[0], &link.ns[1]);
        // The veth ends are named in the namespaces' own name spaces: no clash with the host's.
        let (va, vb) = (format!("v{tag}{id}a"), format!("v{tag}{id}b"));
        assert!(ip(&[
            "link", "add", &va, "netns", a, "type", "veth", "peer", "name", &vb, "netns", b
        ]));
        for (ns, dev, addr) in [(a, &va, "10.91.0.1/24"), (b, &vb, "10.91.0.2/24")] {
            assert!(ip(&["-n", ns, "addr", "add", addr, "dev", dev]));
            assert!(ip(&["-n", ns, "link", "set", dev, "up"]));
            assert!(ip(&["-n", ns, "link", "set", "lo", "up"]));
        }
        Some(link)
    }

    fn sock(&self, i: usize) -> String {
        format!("unix://{}", self.dir.join(format!("r{i}.sock")).display())
    }

    /// Starts the router of namespace `i` with `config` (listeners off but its Unix socket).
    fn router(&mut self, i: usize, config: &str) {
        self.router_with(i, config, &[]);
    }

    /// [`Link::router`], the router run through `wrapper` (a command and its arguments).
    fn router_with(&mut self, i: usize, config: &str, wrapper: &[&str]) {
        let cfg = self.dir.join(format!("r{i}.toml"));
        let text = format!(
            "[listen]\ntcp = \"\"\nudp = \"\"\nwebsocket = \"\"\n[http]\nlisten = \"\"\n{config}"
        );
        std::fs::write(&cfg, text).unwrap();
        let sock = self.dir.join(format!("r{i}.sock"));
        let log = std::fs::File::create(self.dir.join(format!("r{i}.log"))).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns[i]])
            .args(wrapper)
            .args([BIN, "run", "-v", "-c"])
            .arg(&cfg)
            .arg("--unix")
            .arg(&sock)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.children.push(child);
        let t0 = Instant::now();
        while !sock.exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "router {i} did not start: {}",
                self.log(i)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The veth end in namespace `i`.
    fn dev(&self, i: usize) -> String {
        let id = std::process::id() % 100_000;
        format!("v{}{id}{}", self.tag, ["a", "b"][i])
    }

    /// The Ethernet address of the veth end in namespace `i`.
    fn mac(&self, i: usize) -> String {
        let path = format!("/sys/class/net/{}/address", self.dev(i));
        let o = Command::new("ip")
            .args(["netns", "exec", &self.ns[i], "cat", &path])
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    }

    fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("r{i}.log"))).unwrap_or_default()
    }

    /// `cascade` with `args` talking to router `i`.
    fn cascade(&self, i: usize, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .arg("--transport")
            .arg(self.sock(i))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Router `i`'s faces whose remote starts with `scheme`, as `faces/list` shows them.
    fn faces(&self, i: usize, scheme: &str) -> Vec<serde_json::Value> {
        let o = self.cascade(i, &["ctl", "--json", "face", "list"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // One JSON object a line.
        (String::from_utf8(o.stdout).unwrap().lines())
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|f| f["remote"].as_str().is_some_and(|u| u.starts_with(scheme)))
            .collect()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for ns in &self.ns {
            // Deleting a namespace deletes its end of the veth pair, and so the pair.
            ip(&["netns", "del", ns]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Fetches a three-segment file produced at router 1 from router 0, whose one route goes to
/// its face `face` (the producer may not have registered yet: a failed fetch is tried again, a
/// few times, bounded).
fn fetch(link: &mut Link, face: u64) {
    let content: Vec<u8> = (0..20_000u32).map(|i| (i * 13 % 251) as u8).collect();
    let file = link.dir.join("file.bin");
    std::fs::write(&file, &content).unwrap();
    let producer = Command::new(BIN)
        .args([
            "put",
            "/mc/file",
            file.to_str().unwrap(),
            "--segment-size",
            "8000",
        ])
        .arg("--transport")
        .arg(link.sock(1))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    link.children.push(producer);
    let o = link.cascade(0, &["ctl", "route", "add", "/mc", &face.to_string()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = link.dir.join("out.bin");
    let mut got = None;
    for _ in 0..10 {
        let o = link.cascade(0, &["get", "/mc/file", "-o", out.to_str().unwrap()]);
        if o.status.success() {
            got = Some(std::fs::read(&out).unwrap());
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let got = got.unwrap_or_else(|| panic!("no file\n{}\n{}", link.log(0), link.log(1)));
    assert_eq!(got, content);
}

/// What crossed: Interests out and Data in on face `f0` of router 0, the reverse on router 1's
/// `f1` (three segments, at least).
fn crossed(f0: &serde_json::Value, f1: &serde_json::Value) {
    assert!(f0["n_out_interests"].as_u64().unwrap() >= 3, "{f0}");
    assert!(f0["n_in_data"].as_u64().unwrap() >= 3, "{f0}");
    assert!(f1["n_in_interests"].as_u64().unwrap() >= 3, "{f1}");
    assert!(f1["n_out_data"].as_u64().unwrap() >= 3, "{f1}");
}

/// Fetches a file across the link over the multicast face `config` opens, whose remote is
/// `remote`.
fn forward_over(tag: &str, config: &str, remote: &str) {
    let Some(mut link) = Link::new(tag) else {
        println!("skipped: network namespaces are not permitted here (not root, or no `ip`)");
        return;
    };
    link.router(0, config);
    link.router(1, config);
    let mut ids = Vec::new();
    for i in 0..2 {
        let faces = link.faces(i, remote);
        assert_eq!(faces.len(), 1, "router {i}: {faces:?}\n{}", link.log(i));
        let f = &faces[0];
        assert_eq!(f["remote"], remote);
        assert_eq!(f["link_type"], "multi-access", "{f}");
        assert_eq!(f["persistency"], "permanent", "{f}");
        assert_eq!(f["scope"], "non-local", "{f}");
        ids.push(f["face_id"].as_u64().unwrap());
    }
    fetch(&mut link, ids[0]);
    crossed(&link.faces(0, remote)[0], &link.faces(1, remote)[0]);
}

#[test]
fn an_interest_and_its_data_cross_a_udp_multicast_face() {
    forward_over(
        "u",
        "[face_system.udp]\nmcast = true\n",
        "udp4://224.0.23.170:56363",
    );
}

#[test]
fn an_interest_and_its_data_cross_an_ethernet_multicast_face() {
    // Segments of 8000 bytes cross a 1500-byte link in NDNLPv2 fragments.
    forward_over(
        "e",
        "[face_system.ether]\nmcast = true\n",
        "ether://[01:00:5e:00:17:aa]",
    );
}

/// `faces/create` with these remote and local URIs and persistency, at router `i`.
fn create(
    link: &Link,
    i: usize,
    uri: &str,
    local: Option<&str>,
    p: FacePersistency,
) -> ControlResponse {
    let path = link.dir.join(format!("r{i}.sock"));
    let mut face = Face::connect(&TransportUri::Unix(path)).unwrap();
    let params = ControlParameters {
        uri: Some(uri.into()),
        local_uri: local.map(String::from),
        face_persistency: Some(p),
        ..ControlParameters::default()
    };
    Controller::new(&mut face)
        .command_response("faces", "create", &params)
        .unwrap()
}

#[test]
fn a_unicast_ethernet_face_made_by_faces_create_carries_a_fetch() {
    let Some(mut link) = Link::new("n") else {
        println!("skipped: network namespaces are not permitted here (not root, or no `ip`)");
        return;
    };
    let config = "[face_system.ether]\nlisten = true\n";
    link.router(0, config);
    link.router(1, config);
    let (dev0, mac0, mac1) = (link.dev(0), link.mac(0), link.mac(1));
    let local = format!("dev://{dev0}");
    let remote = format!("ether://[{mac1}]");
    // NFD's Ethernet factory's refusals, in its order.
    let p = FacePersistency::Persistent;
    for (uri, local, pers, code) in [
        (&remote[..], None, p, 406),
        (
            &remote[..],
            Some(&local[..]),
            FacePersistency::OnDemand,
            406,
        ),
        ("ether://[01:00:5e:00:17:aa]", Some(&local[..]), p, 406),
        (&remote[..], Some("dev://nosuchif0"), p, 504),
        ("ether://[02:00:00:00:00:0A]", Some(&local[..]), p, 400),
    ] {
        let r = create(&link, 0, uri, local, pers);
        assert_eq!(r.status_code, code, "{uri} {local:?}: {}", r.status_text);
    }
    let r = create(&link, 0, &remote, Some(&local), p);
    assert_eq!(r.status_code, 200, "{}", r.status_text);
    let made = r.parameters().cloned().unwrap();
    assert_eq!(made.local_uri.as_deref(), Some(&local[..]));
    // The same again: 409 with the face.
    let again = create(&link, 0, &remote, Some(&local), p);
    assert_eq!(again.status_code, 409);
    assert_eq!(again.parameters().unwrap().face_id, made.face_id);
    // The channel is listed.
    let mut face = Face::connect(&TransportUri::Unix(link.dir.join("r0.sock"))).unwrap();
    let channels = Controller::new(&mut face)
        .dataset(&Name::from_uri("/localhost/nfd/faces/channels").unwrap())
        .unwrap();
    let needle = local.as_bytes();
    assert!(channels.windows(needle.len()).any(|w| w == needle));
    fetch(&mut link, made.face_id.unwrap());
    // Router 1 made an on-demand face for router 0's first frame, and answered on it.
    let f0 = &link.faces(0, &remote)[0];
    let back = format!("ether://[{mac0}]");
    let f1 = &link.faces(1, &back)[0];
    assert_eq!(f0["link_type"], "point-to-point");
    assert_eq!(f1["persistency"], "on-demand", "{f1}");
    crossed(f0, f1);
}

#[test]
fn multicast_faces_work_in_every_thread_mode() {
    // The faces are the first loop's; a sharded router's other loops send to them through its
    // ring, and an I/O thread hands their packets to the workers as any face's.
    for (tag, threads) in [("s", "sharded"), ("w", "io+workers")] {
        forward_over(
            tag,
            &format!(
                "[workers]\nthreads = \"{threads}\"\ncount = 2\n\
                 [face_system.udp]\nmcast = true\n[face_system.ether]\nmcast = true\n"
            ),
            "udp4://224.0.23.170:56363",
        );
    }
}

#[test]
fn without_cap_net_raw_the_router_starts_and_warns_for_each_face_it_cannot_open() {
    let probe = Command::new("setpriv").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        println!("skipped: no setpriv");
        return;
    }
    let Some(mut link) = Link::new("p") else {
        println!("skipped: network namespaces are not permitted here (not root, or no `ip`)");
        return;
    };
    let config =
        "[face_system.udp]\nmcast = true\n[face_system.ether]\nmcast = true\nlisten = true\n";
    let drop_raw = ["setpriv", "--bounding-set=-net_raw", "--inh-caps=-net_raw"];
    link.router_with(0, config, &drop_raw);
    // No packet socket: no Ethernet face, no channel, one warning each; the UDP face opens.
    assert!(link.faces(0, "ether://").is_empty());
    assert_eq!(link.faces(0, "udp4://224.0.23.170").len(), 1);
    let log = link.log(0);
    let warned = |what: &str| log.lines().any(|l| l.contains("WARN") && l.contains(what));
    assert!(warned("cannot open an Ethernet multicast face on"), "{log}");
    assert!(warned("cannot open an Ethernet channel on"), "{log}");
    let o = link.cascade(0, &["ctl", "status"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
