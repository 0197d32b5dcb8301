//! One router of the chain: its configuration file and its `cascade run` process.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::scenario::RouterSettings;
use super::{Case, Cc};

/// How long a router may take to start (a bloom filter rebuilt by a scan of its L2 files
/// included).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a router may take to stop cleanly (its L2 index written) before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// A router's L2 store.
#[derive(Debug, Clone)]
pub struct StoreConf {
    /// The directory of its files.
    pub dir: PathBuf,
    /// `store.l2_capacity`.
    pub capacity: u64,
    /// `store.direct`: reads reach the device (and its throttle).
    pub direct: bool,
    /// Placement: admit every chunk, bloom hashes kept; otherwise admit none, so that the
    /// placement stays as it is for every run.
    pub placing: bool,
}

/// What a router's configuration file says.
#[derive(Debug, Clone)]
pub struct RouterConf<'a> {
    /// `listen.unix`.
    pub sock: &'a Path,
    /// `listen.udp` (`""`: off).
    pub udp: String,
    /// `faces.udp_mtu`.
    pub udp_mtu: u32,
    /// The upstream neighbour's face URI, routed `prefix`.
    pub upstream: Option<String>,
    /// The content prefix.
    pub prefix: &'a str,
    /// The chain's settings.
    pub settings: &'a RouterSettings,
    /// The store, if the router holds contents.
    pub store: Option<StoreConf>,
    /// The case: which NB-Cache switches are on.
    pub case: Case,
    /// `store.bypass_threshold`.
    pub threshold: usize,
    /// The congestion control: `store.ecn` and `store.nbcc`.
    pub cc: Cc,
}

/// A TOML basic string.
fn q(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

impl RouterConf<'_> {
    /// The configuration file's text.
    pub fn to_toml(&self) -> String {
        let s = self.settings;
        let mut t = String::new();
        let _ = writeln!(
            t,
            "[listen]\nunix = {}\ntcp = \"\"\nwebsocket = \"\"\nudp = {}\n",
            q(&self.sock.display().to_string()),
            q(&self.udp)
        );
        let _ = writeln!(
            t,
            "[workers]\ncount = {}\nring_capacity = {}\nbuffers = {}\n",
            s.workers, s.ring_capacity, s.buffers
        );
        // The store is the content store: no RAM tier in front of it, as in Pan et al.
        let _ = writeln!(
            t,
            "[cs]\ncapacity = 0\n\n[pit]\ncapacity = {}\n",
            s.pit_capacity
        );
        let _ = writeln!(t, "[faces]\nudp_mtu = {}\n", self.udp_mtu);
        if let Some(up) = &self.upstream {
            let _ = writeln!(
                t,
                "[[face]]\nuri = {}\n\n[[route]]\nprefix = {}\nface = {}\n",
                q(up),
                q(self.prefix),
                q(up)
            );
        }
        if let Some(st) = &self.store {
            let (decision, bloom) = if st.placing {
                ("decision = \"always\"", true)
            } else {
                ("decision = \"lcp\"\nlcp_p = 0.0", self.case.bloom())
            };
            let _ = writeln!(
                t,
                "[store]\nl2_path = {}\nl2_capacity = {}\nbatch = 1\nqueue_depth = {}\n\
                 direct = {}\nprefetch_ahead = false\n{decision}\nbloom = {bloom}\naqm = {}\n\
                 bypass_threshold = {}\nio = {}\necn = {}\nnbcc = {}",
                q(&st.dir.display().to_string()),
                st.capacity,
                s.queue_depth,
                st.direct,
                self.case.aqm() && !st.placing,
                self.threshold,
                q(if self.case.blocking() && !st.placing {
                    "blocking"
                } else {
                    "non-blocking"
                }),
                self.cc.ecn() && !st.placing,
                self.cc.nbcc() && !st.placing,
            );
        }
        t
    }
}

/// A running `cascade run`.
#[derive(Debug)]
pub struct RouterProc {
    /// The node's name.
    pub name: String,
    child: Option<Child>,
    log: PathBuf,
    /// Its Unix socket (management, local apps).
    pub sock: PathBuf,
    /// Its UDP listener as it reported it.
    pub udp: Option<SocketAddr>,
}

impl RouterProc {
    /// Writes `conf` to `<dir>/<file>.toml` and starts `bin run` on it (inside namespace `ns`
    /// if given), its output in `<dir>/<file>.log`; returns once it forwards.
    pub fn start(
        bin: &Path,
        ns: Option<&str>,
        name: &str,
        conf: &RouterConf<'_>,
        (dir, file): (&Path, &str),
        stop: &AtomicBool,
    ) -> Result<RouterProc, String> {
        let config = dir.join(format!("{file}.toml"));
        std::fs::write(&config, conf.to_toml())
            .map_err(|e| format!("{}: {e}", config.display()))?;
        let log = dir.join(format!("{file}.log"));
        let out = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.arg("run")
            .arg("--config")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            // Its own process group: a Ctrl-C at the terminal reaches the emulator, which stops
            // the routers in order.
            .process_group(0);
        // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal, so
        // that a router never outlives an emulator that was killed outright.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let mut r = RouterProc {
            name: name.into(),
            child: Some(child),
            log,
            sock: conf.sock.to_path_buf(),
            udp: None,
        };
        r.wait_ready(stop)?;
        Ok(r)
    }

    fn wait_ready(&mut self, stop: &AtomicBool) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            if let Some(line) = text
                .lines()
                .find(|l| l.contains("cascade: forwarding with"))
            {
                self.udp = crate::bench::attack::child::udp_listener(line);
                return Ok(());
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                self.child = None;
                return Err(format!(
                    "router {} exited ({status}) at start-up: {}",
                    self.name,
                    last_lines(&text, 3)
                ));
            }
            if stop.load(Ordering::Relaxed) {
                return Err("interrupted".into());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "router {} did not start within {} s (log {})",
                    self.name,
                    START_TIMEOUT.as_secs(),
                    self.log.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Stops it with SIGTERM (a clean stop: its L2 index is written), killing it if it takes
    /// too long; an error if it did not exit cleanly.
    pub fn stop(&mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let pid = child.id() as libc::pid_t;
        // SAFETY: signalling our own child, which has not been reaped yet.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(s)) if s.success() => return Ok(()),
                Ok(Some(s)) => {
                    let text = std::fs::read_to_string(&self.log).unwrap_or_default();
                    return Err(format!(
                        "router {} exited with {s}: {}",
                        self.name,
                        last_lines(&text, 3)
                    ));
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "router {} did not stop within {} s: killed",
                        self.name,
                        STOP_TIMEOUT.as_secs()
                    ));
                }
            }
        }
    }
}

impl Drop for RouterProc {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("cascade emulate: {e}");
        }
    }
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(store: Option<StoreConf>, case: Case) -> String {
        conf_cc(store, case, Cc::None)
    }

    fn conf_cc(store: Option<StoreConf>, case: Case, cc: Cc) -> String {
        let s = RouterSettings::default();
        RouterConf {
            sock: Path::new("/tmp/x \"y\".sock"),
            udp: "127.0.0.1:0".into(),
            udp_mtu: 8972,
            upstream: Some("udp4://127.0.0.1:7000".into()),
            prefix: "/emu",
            settings: &s,
            store,
            case,
            threshold: 99,
            cc,
        }
        .to_toml()
    }

    #[test]
    fn the_case_sets_the_store_switches_and_the_file_is_a_valid_config() {
        let st = StoreConf {
            dir: "/tmp/l2".into(),
            capacity: 1000,
            direct: true,
            placing: false,
        };
        for (case, bloom, aqm, io) in [
            (Case::A, false, false, router::config::StoreIo::Blocking),
            (Case::B, true, true, router::config::StoreIo::NonBlocking),
            (Case::C, true, false, router::config::StoreIo::Blocking),
            (Case::D, true, false, router::config::StoreIo::NonBlocking),
        ] {
            let text = conf(Some(st.clone()), case);
            let c = router::Config::from_toml(&text).unwrap();
            c.validate().unwrap();
            assert_eq!((c.store.bloom, c.store.aqm, c.store.io), (bloom, aqm, io));
            assert_eq!((c.store.bypass_threshold, c.store.lcp_p), (99, 0.0));
            assert_eq!(c.cs.capacity, 0);
            assert_eq!(c.listen.unix, "/tmp/x \"y\".sock");
            assert_eq!(c.routes.len(), 1);
        }
        // Placement admits everything and never blocks; no store: no [store] section.
        let placing = StoreConf {
            placing: true,
            ..st
        };
        let c = router::Config::from_toml(&conf(Some(placing), Case::A)).unwrap();
        assert!(c.store.bloom && !c.store.aqm);
        assert_eq!(c.store.io, router::config::StoreIo::NonBlocking);
        let c = router::Config::from_toml(&conf(None, Case::B)).unwrap();
        assert!(c.store.l2_path.is_empty());
    }

    /// `--cc` sets `store.ecn` and `store.nbcc` on every case, never while placing.
    #[test]
    fn the_congestion_control_sets_ecn_and_nbcc() {
        let st = StoreConf {
            dir: "/tmp/l2".into(),
            capacity: 1000,
            direct: false,
            placing: false,
        };
        for case in Case::ALL {
            for (cc, ecn, nbcc) in [
                (Cc::None, false, false),
                (Cc::Ecn, true, false),
                (Cc::Nbcc, true, true),
            ] {
                let c = router::Config::from_toml(&conf_cc(Some(st.clone()), case, cc)).unwrap();
                c.validate().unwrap();
                assert_eq!((c.store.ecn, c.store.nbcc), (ecn, nbcc), "{case} {cc}");
                assert_eq!((c.store.bloom, c.store.aqm), (case.bloom(), case.aqm()));
                // The congestion threshold is the bypass threshold.
                assert_eq!(c.store.bypass_threshold, 99);
            }
        }
        let placing = StoreConf {
            placing: true,
            ..st
        };
        let c = router::Config::from_toml(&conf_cc(Some(placing), Case::B, Cc::Nbcc)).unwrap();
        assert!(!c.store.ecn && !c.store.nbcc);
    }

    #[test]
    fn last_lines_of_a_log() {
        assert_eq!(last_lines("a\nb\nc\nd", 2), "c | d");
        assert_eq!(last_lines("", 2), "");
    }
}
