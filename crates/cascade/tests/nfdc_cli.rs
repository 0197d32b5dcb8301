//! nfdc's verbs (`nfdc_verbs.sh`, a shell script of every verb with the outputs and exit
//! statuses nfdc's manual pages give) against a real `cascade run`: once with `cascade ctl`
//! playing nfdc, once through a symlink named `nfdc` to the binary.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cascade");

/// A router on a unix socket in its own directory; killed and removed on drop.
struct Router {
    child: Child,
    dir: PathBuf,
}

impl Router {
    fn start(tag: &str) -> Router {
        let dir = std::env::temp_dir().join(format!("cascade-nfdc-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("nfd.sock");
        let child = Command::new(BIN)
            .args(["run", "--unix"])
            .arg(&sock)
            .args([
                "--tcp",
                "",
                "--udp",
                "127.0.0.1:0",
                "--websocket",
                "",
                "--http",
                "",
            ])
            .args(["--workers", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while !sock.exists() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "router did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Router { child, dir }
    }

    /// Runs the script with `nfdc` as NFDC against this router.
    fn verbs(&self, nfdc: &str) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nfdc_verbs.sh");
        // Two UDP ports bound and released: nothing listens there while the script runs.
        let port = || {
            let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            s.local_addr().unwrap().port().to_string()
        };
        let out = Command::new("sh")
            .arg(script)
            .env("NFDC", nfdc)
            .env("P1", port())
            .env("P2", port())
            .env(
                "NDN_CLIENT_TRANSPORT",
                format!("unix://{}", self.dir.join("nfd.sock").display()),
            )
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{nfdc}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn every_nfdc_verb_through_cascade_ctl() {
    let r = Router::start("ctl");
    r.verbs(&format!("{BIN} ctl"));
}

#[test]
fn every_nfdc_verb_through_an_nfdc_symlink() {
    let r = Router::start("link");
    let link = r.dir.join("nfdc");
    std::os::unix::fs::symlink(BIN, &link).unwrap();
    r.verbs(link.to_str().unwrap());
}
