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
        c.args(["--websocket", "", "--http", ""]);
        c.stdout(Stdio::null());
        c.stderr(std::fs::File::create(self.0.join("stderr.log")).unwrap());
        c
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.0.join("stderr.log")).unwrap_or_default()
    }

    /// Starts `cmd` and waits until management answers on the socket (the router has
    /// started: the socket's mode is set, the process runs as `[general] user`).
    fn start(&self, cmd: &mut Command) -> Running {
        let child = cmd.spawn().unwrap();
        let mut r = Running(child);
        let t0 = Instant::now();
        while !self.ctl(&["status"]).status.success() {
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
    fn stop(self) -> std::process::ExitStatus {
        self.signal(libc::SIGTERM);
        self.wait()
    }

    /// Its exit status, once it exits.
    fn wait(mut self) -> std::process::ExitStatus {
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
    let uid = nobody.uid.to_string();
    assert_eq!(
        proc_uids(d.0.id()),
        [&uid[..], &uid, &uid, &uid],
        "real, effective, saved, fs"
    );
    assert!(d.stop().success());
}

#[test]
fn an_unknown_user_or_group_is_one_line_and_exit_2() {
    let s = Scratch::new("nouser");
    let cfg = s.config("[general]\nuser = \"no-such-user-here\"\n");
    let (code, line) = fails(&s, &mut s.command(&cfg));
    assert_eq!(code, Some(2), "{line}");
    assert!(
        line.contains("general.user") && line.contains("no-such-user-here"),
        "{line}"
    );
    assert!(!s.sock().exists(), "refused before binding");
    let cfg = s.config("[listen]\nunix_group = \"no-such-group-here\"\n");
    let (code, line) = fails(&s, &mut s.command(&cfg));
    assert_eq!(code, Some(2), "{line}");
    assert!(line.contains("listen.unix_group"), "{line}");
    assert!(!s.sock().exists(), "refused before binding");
}

/// A configuration with one static UDP face per port and a route to each `(prefix, port)`.
fn statics(ports: &[u16], routes: &[(&str, u16)]) -> String {
    let mut t = String::new();
    for p in ports {
        t += &format!("[[face]]\nuri = \"udp4://127.0.0.1:{p}\"\n");
    }
    for (prefix, p) in routes {
        t += &format!("[[route]]\nprefix = \"{prefix}\"\nface = \"udp4://127.0.0.1:{p}\"\n");
    }
    t
}

/// The static routes (origin 255) of `ctl route list --json`, as (prefix, cost).
fn static_routes(s: &Scratch) -> Vec<(String, u64)> {
    let out = s.ctl(&["route", "list", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        for r in e["routes"].as_array().unwrap() {
            if r["origin"] == 255 {
                v.push((
                    e["prefix"].as_str().unwrap().to_string(),
                    r["cost"].as_u64().unwrap(),
                ));
            }
        }
    }
    v.sort();
    v
}

/// Waits until the static routes are `want`.
fn until_routes(s: &Scratch, want: &[(&str, u64)]) {
    let want: Vec<(String, u64)> = want.iter().map(|(p, c)| (p.to_string(), *c)).collect();
    let t0 = Instant::now();
    while static_routes(s) != want {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{:?}",
            static_routes(s)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sighup_applies_the_new_routes_while_a_consumer_fetches_and_a_bad_file_changes_nothing() {
    let s = Scratch::new("reload");
    // Upstreams that never answer: the static faces only need a remote.
    let up: Vec<std::net::UdpSocket> = (0..2)
        .map(|_| std::net::UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let port: Vec<u16> = up.iter().map(|u| u.local_addr().unwrap().port()).collect();
    let a = statics(&port[..1], &[("/a", port[0])]);
    let b = statics(&port, &[("/b", port[1])])
        + "[[route]]\nprefix = \"/c\"\n"
        + &format!("face = \"udp4://127.0.0.1:{}\"\ncost = 7\n", port[1]);
    let cfg = s.config(&a);
    let d = s.start(&mut s.command(&cfg));
    until_routes(&s, &[("/a", 0)]);
    // A producer and a consumer through the router, reloads all along the fetch.
    let src = s.0.join("in.bin");
    let content: Vec<u8> = (0..(2 << 20))
        .map(|i: u32| (i * 7 + i / 251) as u8)
        .collect();
    std::fs::write(&src, &content).unwrap();
    let transport = format!("unix://{}", s.sock().display());
    let mut put = Command::new(BIN)
        .args(["put", "/files/f"])
        .arg(&src)
        .args(["--transport", &transport])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !String::from_utf8_lossy(&s.ctl(&["fib", "list"]).stdout).contains("/files/f") {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "put never registered"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let dst = s.0.join("out.bin");
    let mut get = Command::new(BIN)
        .args([
            "get",
            "/files/f",
            "-o",
            dst.to_str().unwrap(),
            "--no-progress",
        ])
        .args(["--transport", &transport])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reloads = 0;
    let got = loop {
        if let Some(status) = get.try_wait().unwrap() {
            break status;
        }
        std::fs::write(&cfg, if reloads % 2 == 0 { &b } else { &a }).unwrap();
        d.signal(libc::SIGHUP);
        reloads += 1;
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    std::io::Read::read_to_string(get.stdout.as_mut().unwrap(), &mut out).unwrap();
    std::io::Read::read_to_string(get.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(got.success(), "{err}");
    assert!(reloads > 0, "the fetch ended before a reload");
    // Not one Interest of the fetch went unanswered across the reloads.
    assert!(out.contains("timeouts 0,"), "{out}{err}");
    assert_eq!(std::fs::read(&dst).unwrap(), content);
    let _ = put.kill();
    let _ = put.wait();
    // The last file written is applied: routes added, changed and removed as a difference.
    std::fs::write(&cfg, &b).unwrap();
    d.signal(libc::SIGHUP);
    until_routes(&s, &[("/b", 0), ("/c", 7)]);
    // A bad file keeps the running routes, and says why in one line.
    std::fs::write(
        &cfg,
        "[[route]]\nprefix = \"/d\"\nface = \"udp4://127.0.0.1:1\"\n",
    )
    .unwrap();
    d.signal(libc::SIGHUP);
    let t0 = Instant::now();
    while !s.stderr().contains("reload failed") {
        assert!(t0.elapsed() < Duration::from_secs(10), "{}", s.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    let line = s
        .stderr()
        .lines()
        .find(|l| l.contains("reload failed"))
        .unwrap()
        .to_string();
    assert!(line.contains("route /d"), "{line}");
    assert_eq!(
        static_routes(&s),
        [("/b".to_string(), 0), ("/c".to_string(), 7)]
    );
    assert!(d.stop().success());
    drop(up);
}

/// A service manager's notification socket, bound by the test.
fn notify_socket(s: &Scratch) -> (std::os::unix::net::UnixDatagram, PathBuf) {
    let path = s.0.join("notify.sock");
    let sock = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    (sock, path)
}

/// The next notification that is not a watchdog ping.
fn next_state(sock: &std::os::unix::net::UnixDatagram) -> String {
    let mut buf = [0u8; 512];
    loop {
        let n = sock.recv(&mut buf).expect("a notification within 10 s");
        let msg = String::from_utf8_lossy(&buf[..n]).to_string();
        if msg.trim() != "WATCHDOG=1" {
            return msg;
        }
    }
}

#[test]
fn a_service_manager_hears_ready_reloading_watchdog_and_stopping() {
    let s = Scratch::new("notify");
    let (sock, path) = notify_socket(&s);
    let cfg = s.config("");
    let mut cmd = s.command(&cfg);
    cmd.env("NOTIFY_SOCKET", &path)
        .env("WATCHDOG_USEC", "200000");
    let d = s.start(&mut cmd);
    assert_eq!(next_state(&sock), "READY=1\n");
    // Pings every half of WATCHDOG_USEC while healthy.
    let mut buf = [0u8; 64];
    let n = sock.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"WATCHDOG=1\n");
    d.signal(libc::SIGHUP);
    let reloading = next_state(&sock);
    assert!(reloading.starts_with("RELOADING=1\n"), "{reloading}");
    assert!(reloading.contains("MONOTONIC_USEC="), "{reloading}");
    assert_eq!(next_state(&sock), "READY=1\n");
    d.signal(libc::SIGTERM);
    assert_eq!(next_state(&sock), "STOPPING=1\n");
    assert!(d.wait().success());
}

fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn completions_and_man_pages_come_from_the_command_line() {
    let bash = stdout_of(&["completions", "bash"]);
    assert!(bash.contains("complete -F _cascade"), "{bash}");
    for sub in ["run", "ctl", "completions", "man"] {
        assert!(bash.contains(sub), "bash completes {sub}");
    }
    assert!(stdout_of(&["completions", "zsh"]).starts_with("#compdef cascade"));
    let fish = stdout_of(&["completions", "fish"]);
    assert!(fish.contains("complete -c cascade") && fish.contains("stop-timeout-ms"));
    let man = stdout_of(&["man"]);
    assert!(man.contains(".TH cascade 1"), "{man}");
    assert!(
        man.contains("cascade\\-run(1)"),
        "the subcommands' pages are named"
    );
    let run = stdout_of(&["man", "run"]);
    assert!(
        run.contains(".TH cascade-run 1") || run.contains(".TH cascade\\-run 1"),
        "{run}"
    );
    assert!(run.contains("\\-\\-stop\\-timeout\\-ms"), "{run}");
    let out = Command::new(BIN).args(["man", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Waits until the daemon has logged `n` lines containing `what`; the last of them.
fn until_logged(s: &Scratch, what: &str, n: usize) -> String {
    let t0 = Instant::now();
    loop {
        let err = s.stderr();
        let lines: Vec<&str> = err.lines().filter(|l| l.contains(what)).collect();
        if lines.len() >= n {
            return lines[n - 1].to_string();
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "{err}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `ctl status` succeeds (`admitted`) or fails.
fn until_status(s: &Scratch, admitted: bool) {
    let t0 = Instant::now();
    while s.ctl(&["status"]).status.success() != admitted {
        assert!(t0.elapsed() < Duration::from_secs(10), "{}", s.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_sighup_applies_local_and_connections_while_running() {
    let s = Scratch::new("reload-local");
    let cfg = s.config("");
    let d = s.start(&mut s.command(&cfg));
    // Only another user may connect: this one is refused; the log names the keys applied.
    // SAFETY: geteuid has no preconditions.
    let other = unsafe { libc::geteuid() }.wrapping_add(4242);
    let text = format!("[local]\nallow_uids = [{other}]\n[connections]\nidle_timeout_s = 30\n");
    std::fs::write(&cfg, text).unwrap();
    d.signal(libc::SIGHUP);
    let line = until_logged(&s, "reloaded", 1);
    for key in ["local.allow_uids", "connections.idle_timeout_s"] {
        assert!(line.contains(key), "{line}");
    }
    assert!(!s.stderr().contains("need a restart"), "{}", s.stderr());
    until_status(&s, false);
    // Everyone again.
    std::fs::write(&cfg, "").unwrap();
    d.signal(libc::SIGHUP);
    until_logged(&s, "reloaded", 2);
    until_status(&s, true);
    assert!(d.stop().success());
}
