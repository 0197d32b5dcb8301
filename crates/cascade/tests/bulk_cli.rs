//! Benign bulk load loses nothing: `cascade put` and `cascade get` of a multi-megabyte file
//! through one router and through a chain of two, over Unix sockets and over UDP, with no
//! timeout and no retransmission reported by `get`, and the file byte-exact. The consumer's
//! window grows until the router's send queue toward it holds more than the congestion
//! threshold: the router marks Data (NDNLPv2 CongestionMark) and `get` halves its window,
//! long before the queue could drop anything. (`scripts/bench-bulk.sh` runs the same with
//! 100 MiB on a release build.)

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cascade");
/// The file's size: large enough for the window to outgrow the congestion threshold.
const FILE_BYTES: usize = 12 << 20;

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A router: its Unix socket, its UDP and TCP listeners' ports.
struct Router {
    child: Child,
    sock: PathBuf,
    udp: String,
    tcp: String,
}

impl Drop for Router {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `host:port` after `key ` in the start-up line.
fn field(line: &str, key: &str) -> String {
    let at = line.find(&format!(" {key} ")).expect(key) + key.len() + 2;
    line[at..].split([',', ' ']).next().unwrap().to_string()
}

impl Router {
    fn start(dir: &Path, name: &str, config: &str) -> Router {
        let sock = dir.join(format!("{name}.sock"));
        let conf = dir.join(format!("{name}.toml"));
        std::fs::write(&conf, config).unwrap();
        let mut child = Command::new(BIN)
            .arg("run")
            .arg("--config")
            .arg(&conf)
            .arg("--unix")
            .arg(&sock)
            .args(["--tcp", "127.0.0.1:0", "--udp", "127.0.0.1:0"])
            .args(["--websocket", "", "--http", "", "--workers", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while !line.contains("cascade: forwarding with") {
            line.clear();
            assert!(
                err.read_line(&mut line).unwrap() > 0,
                "router did not start"
            );
        }
        // Keep draining its log so that it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        Router {
            udp: field(&line, "udp"),
            tcp: field(&line, "tcp"),
            child,
            sock,
        }
    }

    fn unix(&self) -> String {
        format!("unix://{}", self.sock.display())
    }

    /// Waits until `prefix` has a route.
    fn wait_route(&self, prefix: &str) {
        let t0 = Instant::now();
        loop {
            let o = Command::new(BIN)
                .args(["ctl", "fib", "list", "--transport", &self.unix()])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&o.stdout).contains(prefix) {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "{prefix} never routed"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Serves `file` under `prefix` from `router` (killed when dropped).
struct Put(Child);

impl Drop for Put {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn put(router: &Router, prefix: &str, file: &Path) -> Put {
    let child = Command::new(BIN)
        .args(["put", prefix])
        .arg(file)
        .args(["--transport", &router.unix()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let p = Put(child);
    router.wait_route(prefix);
    p
}

/// `cascade get` of `prefix` over `transport` into `out`: its JSON statistics.
fn get(prefix: &str, transport: &str, out: &Path) -> serde_json::Value {
    let o = Command::new(BIN)
        .args(["get", prefix, "--json", "--transport", transport, "-o"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn setup(tag: &str) -> (Dir, PathBuf, Vec<u8>) {
    let dir = Dir(std::env::temp_dir().join(format!("cascade-bulk-{tag}-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let content: Vec<u8> = (0..FILE_BYTES as u64)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let src = dir.0.join("src.bin");
    std::fs::write(&src, &content).unwrap();
    (dir, src, content)
}

/// The fetch lost nothing and the file is the one served.
fn check(stats: &serde_json::Value, out: &Path, content: &[u8]) {
    assert_eq!(stats["timeouts"], 0, "{stats}");
    assert_eq!(stats["retransmissions"], 0, "{stats}");
    assert_eq!(stats["nacks"], 0, "{stats}");
    assert_eq!(stats["bytes"], content.len(), "{stats}");
    assert!(std::fs::read(out).unwrap() == content, "the file differs");
}

/// Consumer → router → producer, the consumer reaching the router over `consumer` (`unix`
/// or `udp4`).
fn one_router(tag: &str, consumer: &str) {
    let (dir, src, content) = setup(tag);
    let r = Router::start(&dir.0, "r", "");
    let _p = put(&r, "/bulk", &src);
    let out = dir.0.join("out.bin");
    let transport = match consumer {
        "unix" => r.unix(),
        _ => format!("udp4://{}", r.udp),
    };
    check(&get("/bulk", &transport, &out), &out, &content);
}

#[test]
fn one_router_over_unix() {
    one_router("one-unix", "unix");
}

#[test]
fn one_router_over_udp() {
    one_router("one-udp", "udp4");
}

/// Consumer → R1 → R2 → producer, R1 reaching R2 over `link` (`tcp4` or `udp4`), the consumer
/// reaching R1 over `consumer` (`unix` or `udp4`).
fn chain(tag: &str, link: &str, consumer: &str) {
    let (dir, src, content) = setup(tag);
    let r2 = Router::start(&dir.0, "r2", "");
    let to_r2 = match link {
        "tcp4" => format!("tcp4://{}", r2.tcp),
        _ => format!("udp4://{}", r2.udp),
    };
    let conf = format!(
        "[[face]]\nuri = \"{to_r2}\"\n\n[[route]]\nprefix = \"/bulk\"\nface = \"{to_r2}\"\n"
    );
    let r1 = Router::start(&dir.0, "r1", &conf);
    let _p = put(&r2, "/bulk", &src);
    let out = dir.0.join("out.bin");
    let transport = match consumer {
        "unix" => r1.unix(),
        _ => format!("udp4://{}", r1.udp),
    };
    check(&get("/bulk", &transport, &out), &out, &content);
}

#[test]
fn two_routers_over_unix_and_tcp() {
    chain("unix", "tcp4", "unix");
}

#[test]
fn two_routers_over_udp() {
    chain("udp", "udp4", "udp4");
}
