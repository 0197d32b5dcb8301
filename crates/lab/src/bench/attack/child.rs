//! The router under attack: a real `cascade run` child process, its listeners, its log, its
//! resident memory and CPU time from `/proc/<pid>`, and its management datasets.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use client::control::Controller;
use client::{Face, TransportUri};
use wire::nfd::{FaceStatus, ForwarderStatus};

/// Lines of the router's log kept for an error message.
const LOG_TAIL_LINES: usize = 30;
/// How long the router may take to start and print its listeners.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the router may take to stop after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// What the log reader keeps of the router's stderr.
#[derive(Default)]
struct Log {
    /// The last lines, for error messages.
    tail: VecDeque<String>,
    /// The fields of the last `BoundCounters { .. }` the router logged (face-table refusals).
    bounds: BTreeMap<String, u64>,
    /// Lines at WARN or ERROR level.
    warnings: u64,
}

/// A `cascade run` started for one attack, in a directory of its own.
pub(super) struct RouterChild {
    child: Child,
    dir: PathBuf,
    /// The Unix socket (local faces and management).
    pub(super) unix: PathBuf,
    /// The UDP listener on 127.0.0.1.
    pub(super) udp: SocketAddr,
    log: Arc<Mutex<Log>>,
}

impl RouterChild {
    /// Starts `exe run` with `config` (if any), a Unix socket in a new directory named after
    /// `tag`, no TCP listener, UDP on 127.0.0.1 (port chosen by the kernel) and `workers`
    /// workers (if set); waits until it prints its listeners.
    pub(super) fn start(
        exe: &Path,
        config: Option<&Path>,
        workers: Option<usize>,
        tag: &str,
    ) -> Result<RouterChild, String> {
        let dir = std::env::temp_dir().join(format!("cascade-attack-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let unix = dir.join("nfd.sock");
        let mut cmd = Command::new(exe);
        cmd.arg("run");
        if let Some(c) = config {
            cmd.arg("--config").arg(c);
        }
        cmd.arg("--unix")
            .arg(&unix)
            .args(["--tcp", "", "--udp", "127.0.0.1:0", "--websocket", ""]);
        if let Some(w) = workers {
            cmd.arg("--workers").arg(w.to_string());
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {} run: {e}", exe.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr pipe")?;
        let log = Arc::new(Mutex::new(Log::default()));
        let (tx, rx) = mpsc::channel();
        let log2 = Arc::clone(&log);
        std::thread::Builder::new()
            .name("attack-log".into())
            .spawn(move || read_log(stderr, &log2, &tx))
            .map_err(|e| e.to_string())?;
        let deadline = Instant::now() + START_TIMEOUT;
        let udp = loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(a) => break a,
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {
                    if let Ok(Some(st)) = child.try_wait() {
                        return Err(format!("the router exited ({st}): {}", tail(&log)));
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("the router did not start: {}", tail(&log)));
                }
            }
        };
        Ok(RouterChild {
            child,
            dir,
            unix,
            udp,
            log,
        })
    }

    /// The router's process id.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident set size now, in KiB (`VmRSS` of `/proc/<pid>/status`); 0 if unreadable.
    pub(super) fn rss_kib(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        vm_rss_kib(&status).unwrap_or(0)
    }

    /// CPU seconds (user + system) the router's process has used so far.
    pub(super) fn cpu_s(&self) -> f64 {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap_or_default();
        let (u, s) = crate::bench::forward::cpu::stat_user_sys(&stat);
        (u + s) as f64 / hz
    }

    /// Whether the process is still running.
    pub(super) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The face table's bound counters the router logged last (empty before the first).
    pub(super) fn bounds(&self) -> BTreeMap<String, u64> {
        self.log
            .lock()
            .map(|l| l.bounds.clone())
            .unwrap_or_default()
    }

    /// WARN and ERROR lines the router logged so far.
    pub(super) fn warnings(&self) -> u64 {
        self.log.lock().map_or(0, |l| l.warnings)
    }

    /// The last lines of the router's log.
    pub(super) fn log_tail(&self) -> String {
        tail(&self.log)
    }

    /// The `status/general` dataset, and how long management took to answer it, asked over a
    /// new Unix face (as `nfdc status` does).
    pub(super) fn status(&self, timeout: Duration) -> Result<(ForwarderStatus, Duration), String> {
        let t0 = Instant::now();
        let mut face = self.mgmt_face()?;
        let s = Controller::new(&mut face)
            .with_timeout(timeout)
            .forwarder_status()
            .map_err(|e| e.to_string())?;
        Ok((s, t0.elapsed()))
    }

    /// The `faces/list` dataset.
    pub(super) fn faces(&self, timeout: Duration) -> Result<Vec<FaceStatus>, String> {
        let mut face = self.mgmt_face()?;
        Controller::new(&mut face)
            .with_timeout(timeout)
            .faces()
            .map_err(|e| e.to_string())
    }

    fn mgmt_face(&self) -> Result<Face, String> {
        Face::connect(&TransportUri::Unix(self.unix.clone())).map_err(|e| e.to_string())
    }

    /// Stops the router (SIGTERM, then SIGKILL after a while) and removes its directory.
    /// Returns whether it stopped cleanly with status 0.
    pub(super) fn stop(mut self) -> bool {
        self.terminate()
    }

    fn terminate(&mut self) -> bool {
        if let Ok(Some(st)) = self.child.try_wait() {
            let _ = std::fs::remove_dir_all(&self.dir);
            return st.success();
        }
        // SAFETY: kill with a pid of a child this process started and has not reaped.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        let clean = loop {
            match self.child.try_wait() {
                Ok(Some(st)) => break st.success(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break false;
                }
            }
        };
        let _ = std::fs::remove_dir_all(&self.dir);
        clean
    }
}

impl Drop for RouterChild {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.terminate();
        }
    }
}

fn tail(log: &Mutex<Log>) -> String {
    log.lock()
        .map(|l| l.tail.iter().cloned().collect::<Vec<_>>().join(" | "))
        .unwrap_or_default()
}

/// Reads the router's stderr to its end: sends the UDP listener's address once it is printed,
/// keeps the last bound counters and the last lines.
fn read_log(stderr: std::process::ChildStderr, log: &Mutex<Log>, tx: &mpsc::Sender<SocketAddr>) {
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if let Some(a) = udp_listener(&line) {
            let _ = tx.send(a);
        }
        let Ok(mut l) = log.lock() else { break };
        if let Some(b) = bound_counters(&line) {
            l.bounds = b;
        }
        if line.contains(" WARN ") || line.contains(" ERROR ") {
            l.warnings += 1;
        }
        if l.tail.len() == LOG_TAIL_LINES {
            l.tail.pop_front();
        }
        l.tail.push_back(line);
    }
}

/// The UDP address in the router's start-up line
/// (`cascade: forwarding with N worker(s); unix …, tcp …, udp 127.0.0.1:PORT, websocket …`).
pub(crate) fn udp_listener(line: &str) -> Option<SocketAddr> {
    let rest = line.strip_prefix("cascade: forwarding with ")?;
    let udp = rest.rsplit_once(", udp ")?.1;
    // The WebSocket listener, if the line names it, comes after.
    let udp = udp.split_once(", websocket ").map_or(udp, |(u, _)| u);
    udp.trim().parse().ok()
}

/// The `name: number` fields of a logged `BoundCounters { .. }`.
fn bound_counters(line: &str) -> Option<BTreeMap<String, u64>> {
    let body = line.split_once("BoundCounters {")?.1;
    let body = body.split_once('}')?.0;
    let mut out = BTreeMap::new();
    for field in body.split(',') {
        if let Some((k, v)) = field.split_once(':') {
            if let Ok(n) = v.trim().parse() {
                out.insert(k.trim().to_string(), n);
            }
        }
    }
    Some(out)
}

/// `VmRSS` of a `/proc/<pid>/status` text, in KiB.
fn vm_rss_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_line_gives_the_udp_listener() {
        let l = "cascade: forwarding with 1 worker(s); unix /tmp/x/nfd.sock, tcp off, udp 127.0.0.1:40123";
        assert_eq!(udp_listener(l), Some("127.0.0.1:40123".parse().unwrap()));
        let ws = format!("{l}, websocket off");
        assert_eq!(udp_listener(&ws), Some("127.0.0.1:40123".parse().unwrap()));
        assert_eq!(
            udp_listener("cascade: forwarding with 1 worker(s); udp off"),
            None
        );
        assert_eq!(udp_listener("something else"), None);
    }

    #[test]
    fn logged_bound_counters_are_parsed_by_field() {
        let l = "2025-01-01T00:00:00Z  INFO cascade_router::io: face bounds refused or evicted \
                 b=BoundCounters { on_demand_created: 12, on_demand_evicted: 3, reassembly_bytes: 0 }";
        let b = bound_counters(l).unwrap();
        assert_eq!(b["on_demand_created"], 12);
        assert_eq!(b["on_demand_evicted"], 3);
        assert_eq!(b.len(), 3);
        assert!(bound_counters("no counters here").is_none());
    }

    #[test]
    fn rss_comes_from_proc_status() {
        assert_eq!(
            vm_rss_kib("Name:\tx\nVmRSS:\t  1234 kB\nVmSwap: 0 kB\n"),
            Some(1234)
        );
        assert_eq!(vm_rss_kib("Name: x\n"), None);
        // This process has a resident size.
        let own = std::fs::read_to_string("/proc/self/status").unwrap();
        assert!(vm_rss_kib(&own).unwrap() > 0);
    }
}
