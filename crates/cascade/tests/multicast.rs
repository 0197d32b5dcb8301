//! Multicast faces end to end: two real routers in two network namespaces joined by a veth
//! pair, each with its multicast faces on (`[face_system]`), the consumer's router with one
//! route, to its multicast face, the producer registered at the other. An Interest and its
//! Data (a three-segment file) cross the link over the UDP multicast face, and separately over
//! the Ethernet multicast face. Skipped, with a line, where network namespaces are not
//! permitted (not root, or no `ip`).

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

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
        let cfg = self.dir.join(format!("r{i}.toml"));
        let text = format!(
            "[listen]\ntcp = \"\"\nudp = \"\"\nwebsocket = \"\"\n[http]\nlisten = \"\"\n{config}"
        );
        std::fs::write(&cfg, text).unwrap();
        let sock = self.dir.join(format!("r{i}.sock"));
        let log = std::fs::File::create(self.dir.join(format!("r{i}.log"))).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns[i], BIN, "run", "-v", "-c"])
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

/// Fetches a file across the link over the multicast face `config` opens, whose remote
/// starts with `scheme`; true if it ran (namespaces permitted).
fn forward_over(tag: &str, config: &str, remote: &str) -> bool {
    let Some(mut link) = Link::new(tag) else {
        println!("skipped: network namespaces are not permitted here (not root, or no `ip`)");
        return false;
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
        ids.push(f["face_id"].as_u64().unwrap().to_string());
    }
    let content: Vec<u8> = (0..20_000u32).map(|i| (i * 13 % 251) as u8).collect();
    let file = link.dir.join("file.bin");
    std::fs::write(&file, &content).unwrap();
    // The producer registers /mc at router 1; router 0 routes /mc to its multicast face.
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
    let o = link.cascade(0, &["ctl", "route", "add", "/mc", &ids[0]]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = link.dir.join("out.bin");
    // The producer may not have registered yet: a Nack or a timeout is tried again, a few
    // times (bounded).
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
    // What crossed: Interests out and Data in on router 0's face, the reverse on router 1's.
    let f0 = &link.faces(0, remote)[0];
    let f1 = &link.faces(1, remote)[0];
    assert!(f0["n_out_interests"].as_u64().unwrap() >= 3, "{f0}");
    assert!(f0["n_in_data"].as_u64().unwrap() >= 3, "{f0}");
    assert!(f1["n_in_interests"].as_u64().unwrap() >= 3, "{f1}");
    assert!(f1["n_out_data"].as_u64().unwrap() >= 3, "{f1}");
    true
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
