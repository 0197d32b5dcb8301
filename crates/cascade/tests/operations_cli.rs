//! Running Cascade as an operator's service, with the real `cascade run`: the Unix socket's
//! mode and group and what start-up does with what it finds at the socket's path, the drop
//! to `[general] user`, readiness and stop notifications to a service manager
//! (`NOTIFY_SOCKET`), and SIGHUP reloads.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cascade");

/// A scratch directory for one test, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("cascade-ops-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // The daemon may run as `nobody`: it must reach the socket's directory.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        Scratch(dir)
    }

    fn sock(&self) -> PathBuf {
        self.0.join("nfd.sock")
    }

    /// Writes `text` as the configuration file and returns its path.
    fn config(&self, text: &str) -> PathBuf {
        let p = self.0.join("cascade.toml");
        std::fs::write(&p, text).unwrap();
        p
    }

    /// `cascade run` on this directory's socket, with `cfg`, its stderr in `stderr.log`.
    fn command(&self, cfg: &Path) -> Command {
        self.command_on(cfg, &self.sock())
    }

    /// `cascade run` on socket `sock`.
    fn command_on(&self, cfg: &Path, sock: &Path) -> Command {
        let mut c = Command::new(BIN);
        c.arg("run")
            .arg("--config")
            .arg(cfg)
            .arg("--unix")
            .arg(sock);
        c.args(["--tcp", "", "--udp", "127.0.0.1:0", "--workers", "1"]);
        c.stdout(Stdio::null());
        c.stderr(std::fs::File::create(self.0.join("stderr.log")).unwrap());
        c
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.0.join("stderr.log")).unwrap_or_default()
    }

    /// Starts `cmd` and waits until the socket answers.
    fn start(&self, cmd: &mut Command) -> Running {
        let child = cmd.spawn().unwrap();
        let mut r = Running(child);
        let t0 = Instant::now();
        while std::os::unix::net::UnixStream::connect(self.sock()).is_err() {
            assert!(
                r.0.try_wait().unwrap().is_none(),
                "exited: {}",
                self.stderr()
            );
            assert!(t0.elapsed() < Duration::from_secs(10), "did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        r
    }

    fn ctl(&self, args: &[&str]) -> Output {
        let transport = format!("unix://{}", self.sock().display());
        Command::new(BIN)
            .arg("ctl")
            .args(args)
            .args(["--transport", &transport])
            .output()
            .unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running daemon, killed if the test fails.
struct Running(Child);

impl Running {
    fn signal(&self, sig: i32) {
        // SAFETY: signalling our own child process.
        unsafe {
            libc::kill(self.0.id() as i32, sig);
        }
    }

    /// SIGTERM, then its exit status.
    fn stop(mut self) -> std::process::ExitStatus {
        self.signal(libc::SIGTERM);
        let t0 = Instant::now();
        loop {
            if let Some(s) = self.0.try_wait().unwrap() {
                return s;
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "no clean stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cmd` to its end: its exit code and the line `cascade run:` wrote.
fn fails(s: &Scratch, cmd: &mut Command) -> (Option<i32>, String) {
    let status = cmd.status().unwrap();
    let err = s.stderr();
    let line = err.lines().find(|l| l.starts_with("cascade run:"));
    (
        status.code(),
        line.unwrap_or_else(|| panic!("{err}")).to_string(),
    )
}

#[test]
fn the_unix_socket_has_the_configured_mode_and_group() {
    let s = Scratch::new("mode");
    let d = s.start(&mut s.command(&s.config("")));
    let meta = std::fs::metadata(s.sock()).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o666, "NFD's default");
    assert!(d.stop().success());
    let cfg = s.config("[listen]\nunix_mode = \"0640\"\nunix_group = \"daemon\"\n");
    let d = s.start(&mut s.command(&cfg));
    let meta = std::fs::metadata(s.sock()).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    let daemon = router::privileges::group("test", "daemon").unwrap();
    assert_eq!(meta.gid(), daemon);
    assert!(d.stop().success());
}

#[test]
fn a_file_that_is_not_a_socket_is_refused_and_left_alone() {
    let s = Scratch::new("notsock");
    std::fs::write(s.sock(), "not a socket").unwrap();
    let (code, line) = fails(&s, &mut s.command(&s.config("")));
    assert_eq!(code, Some(2), "{line}");
    assert!(line.contains("is not a socket"), "{line}");
    assert_eq!(std::fs::read_to_string(s.sock()).unwrap(), "not a socket");
}

#[test]
fn a_stale_socket_is_replaced_a_live_one_is_refused() {
    let s = Scratch::new("stale");
    drop(std::os::unix::net::UnixListener::bind(s.sock()).unwrap());
    let cfg = s.config("");
    let d = s.start(&mut s.command(&cfg));
    let second = Scratch(s.0.join("second"));
    std::fs::create_dir_all(&second.0).unwrap();
    let mut again = second.command_on(&cfg, &s.sock());
    let (code, line) = fails(&second, &mut again);
    assert_eq!(code, Some(2), "{line}");
    let expected = format!("another forwarder is running on {}", s.sock().display());
    assert!(line.contains(&expected), "{line}");
    assert!(d.stop().success());
}

/// The process's user ids: real, effective, saved, file system.
fn proc_uids(pid: u32) -> Vec<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().skip(1).map(String::from).collect()
}

#[test]
fn general_user_drops_the_process_to_that_user() {
    let s = Scratch::new("user");
    let cfg = s.config("[general]\nuser = \"nobody\"\n");
    let nobody = router::privileges::user("test", "nobody").unwrap();
    // SAFETY: a plain query.
    if unsafe { libc::geteuid() } != 0 {
        let (code, line) = fails(&s, &mut s.command(&cfg));
        assert_eq!(code, Some(1), "only root can drop to another user: {line}");
        assert!(line.contains("general."), "{line}");
        return;
    }
    let d = s.start(&mut s.command(&cfg));
    // Management answers once the router has started, after the drop.
    let out = s.ctl(&["status"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let uid = nobody.uid.to_string();
    assert_eq!(
        proc_uids(d.0.id()),
        [&uid[..], &uid, &uid, &uid],
        "real, effective, saved, fs"
    );
    assert!(d.stop().success());
}

#[test]
fn an_unknown_user_is_one_line_and_exit_2() {
    let s = Scratch::new("nouser");
    let cfg = s.config("[general]\nuser = \"no-such-user-here\"\n");
    let (code, line) = fails(&s, &mut s.command(&cfg));
    assert_eq!(code, Some(2), "{line}");
    assert!(
        line.contains("general.user") && line.contains("no-such-user-here"),
        "{line}"
    );
    assert!(!s.sock().exists(), "refused before binding");
}
