//! `cascade run`: the daemon. It tells a service manager (systemd's `NOTIFY_SOCKET`) when it is
//! ready, reloading and stopping, pings its watchdog while the router is healthy, and applies
//! its configuration file again at SIGHUP.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use router::{Config, Overrides, Router};
use sd_notify::NotifyState;

use crate::logging::Log;
use crate::signals::StopSignals;

/// Arguments of `cascade run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// TOML configuration file (absent: embedded defaults); SIGHUP reads it again.
    #[arg(long, short = 'c')]
    config: Option<PathBuf>,
    /// Unix socket path for local applications ('' disables it).
    #[arg(long)]
    unix: Option<String>,
    /// TCP listen address ('' disables it).
    #[arg(long)]
    tcp: Option<String>,
    /// UDP listen address ('' disables it).
    #[arg(long)]
    udp: Option<String>,
    /// WebSocket (`ws://`, or `wss://` with `[listen] websocket_tls_cert`) listen addresses,
    /// comma-separated ('' disables them).
    #[arg(long)]
    websocket: Option<String>,
    /// HTTP endpoint address for /metrics and the status page ('' disables it; default
    /// 127.0.0.1:6380, or `[http] listen`).
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Forwarding workers (0 = one per core, less one for I/O).
    #[arg(long)]
    workers: Option<usize>,
    /// More logging (-v: debug, -vv: trace); RUST_LOG, if set, decides instead.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Print the effective configuration's listeners and exit (checks the file).
    #[arg(long)]
    check: bool,
    /// Milliseconds a stop may take (threads finishing, the L2 flushed) before the process
    /// exits anyway with status 1; a second SIGINT or SIGTERM exits at once.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    stop_timeout_ms: u64,
}

impl RunArgs {
    /// The configuration file (or the defaults) with the command line's overrides.
    fn load(&self) -> Result<Config, String> {
        let mut cfg = match &self.config {
            None => Config::default(),
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| format!("cannot read config {}: {e}", p.display()))?;
                Config::from_toml_in(&text, p.parent())
                    .map_err(|e| format!("config {}: {e}", p.display()))?
            }
        };
        cfg.apply(&Overrides {
            unix: self.unix.clone(),
            tcp: self.tcp.clone(),
            udp: self.udp.clone(),
            websocket: self.websocket.clone(),
            workers: self.workers,
        });
        if let Some(h) = &self.http {
            cfg.http.listen = h.clone();
        }
        cfg.validate()?;
        Ok(cfg)
    }
}

/// Tells the service manager, if there is one (`NOTIFY_SOCKET`); a failure is logged once per
/// call, never fatal.
fn notify(state: &[NotifyState]) {
    if let Err(e) = sd_notify::notify(state) {
        tracing::warn!("cannot notify the service manager: {e}");
    }
}

/// Runs the daemon until SIGINT or SIGTERM.
pub fn run(args: &RunArgs) -> ExitCode {
    let cfg = match args.load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cascade run: {e}");
            return ExitCode::from(2);
        }
    };
    let log = match Log::init(args.verbose, &cfg.general.log) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cascade run: {e}");
            return ExitCode::from(2);
        }
    };
    if args.check {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        println!(
            "config ok: unix {:?}, tcp {:?}, udp {:?}, websocket {:?}, workers {}, threads {}",
            cfg.listen.unix,
            cfg.listen.tcp,
            cfg.listen.udp,
            cfg.listen.websocket,
            cfg.worker_count(cores),
            cfg.thread_mode(cores).name()
        );
        return ExitCode::SUCCESS;
    }
    let signals = StopSignals::block_with_reload();
    let mut router = match Router::start(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cascade run: {e}");
            return ExitCode::from(router::start_exit_code(&e));
        }
    };
    announce(&router);
    notify(&[NotifyState::Ready]);
    let failed = serve(args, &signals, &mut router, &log);
    notify(&[NotifyState::Stopping]);
    stop(args, signals, router, failed)
}

/// The start-up line on stderr.
fn announce(router: &Router) {
    let b = router.bound();
    eprintln!(
        "cascade: forwarding with {} worker(s){}; unix {}, tcp {}, udp {}, websocket {}",
        router.workers(),
        match router.threads() {
            router::Threads::One => " in one thread",
            router::Threads::Sharded => ", each in its own I/O loop (sharded)",
            _ => "",
        },
        b.unix
            .as_ref()
            .map_or("off".into(), |p| p.display().to_string()),
        b.tcp.map_or("off".into(), |a| a.to_string()),
        b.udp.map_or("off".into(), |a| a.to_string()),
        b.ws.map_or("off".into(), |a| a.to_string()),
    );
    if b.tcp6.is_some() || b.udp6.is_some() {
        let off = |a: Option<std::net::SocketAddr>| a.map_or("off".into(), |a| a.to_string());
        eprintln!("cascade: IPv6 tcp {}, udp {}", off(b.tcp6), off(b.udp6));
    }
    if let Some(a) = router.http_addr() {
        eprintln!("cascade: status page http://{a}/, Prometheus metrics http://{a}/metrics");
    }
}

/// The main loop: reloads at SIGHUP, pings the watchdog (every half of `WATCHDOG_USEC`, and
/// only while no thread has failed), until SIGINT or SIGTERM (`None`) or a failure.
fn serve(args: &RunArgs, signals: &StopSignals, router: &mut Router, log: &Log) -> Option<String> {
    let watchdog = sd_notify::watchdog_enabled().map(|d| d / 2);
    let poll = watchdog.map_or(Duration::from_millis(200), |w| {
        w.min(Duration::from_millis(200))
    });
    let mut pinged = Instant::now();
    loop {
        match signals.wait_timeout(poll) {
            Some(libc::SIGHUP) => reload(args, router, log),
            Some(sig) => {
                tracing::info!(signal = sig, "stopping");
                return None;
            }
            None => {}
        }
        if let Some(f) = router.failure() {
            return Some(f);
        }
        if watchdog.is_some_and(|w| pinged.elapsed() >= w) {
            notify(&[NotifyState::Watchdog]);
            pinged = Instant::now();
        }
    }
}

/// SIGHUP: reads the configuration file again and applies what can change while forwarding
/// (one line either way); a bad file leaves the running configuration as it is.
fn reload(args: &RunArgs, router: &mut Router, log: &Log) {
    let Some(path) = &args.config else {
        tracing::warn!("reload: no configuration file (--config) to read again");
        return;
    };
    let monotonic = NotifyState::monotonic_usec_now();
    let mut reloading = vec![NotifyState::Reloading];
    reloading.extend(monotonic.ok());
    notify(&reloading);
    let outcome = args.load().and_then(|cfg| {
        let done = router.reload(&cfg)?;
        log.reload(&cfg.general.log)?;
        Ok(done)
    });
    match outcome {
        Ok(d) => {
            tracing::info!(
                faces_added = d.faces_added,
                faces_removed = d.faces_removed,
                routes_added = d.routes_added,
                routes_removed = d.routes_removed,
                strategies_set = d.strategies_set,
                strategies_unset = d.strategies_unset,
                limits = ?d.limits_applied,
                authorizations = d.authorizations_applied,
                localhop_anchors = d.anchors_applied,
                "reloaded {}",
                path.display()
            );
            if !d.need_restart.is_empty() {
                tracing::warn!(
                    "reload: [{}] changed in {}: they need a restart (running as before)",
                    d.need_restart.join("], ["),
                    path.display()
                );
            }
        }
        Err(e) => tracing::error!("reload failed, running configuration kept: {e}"),
    }
    notify(&[NotifyState::Ready]);
}

/// Stops the router (a second signal exits at once), within `--stop-timeout-ms`.
fn stop(args: &RunArgs, signals: StopSignals, router: Router, failed: Option<String>) -> ExitCode {
    let deadline = Duration::from_millis(args.stop_timeout_ms);
    router.stop_handle().stop_within(deadline);
    // A second SIGINT or SIGTERM while stopping stops at once, without waiting for the threads.
    let second = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            let sig = signals.wait();
            if sig != libc::SIGHUP {
                eprintln!("cascade run: signal {sig} while stopping: exiting at once");
                std::process::exit(128 + sig);
            }
        });
    if let Err(e) = second {
        tracing::warn!("cannot watch for a second signal: {e}");
    }
    if let Err(running) = router.join_within(deadline) {
        eprintln!(
            "cascade run: stop took longer than {} ms (still running: {}); exiting",
            args.stop_timeout_ms,
            running.join(", ")
        );
        return ExitCode::from(1);
    }
    match failed {
        Some(f) => {
            eprintln!("cascade run: {f}; the router stopped");
            ExitCode::from(1)
        }
        None => ExitCode::SUCCESS,
    }
}
