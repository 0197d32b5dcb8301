//! `cascade run`: the daemon.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use router::{Config, Overrides, Router};

use crate::signals::StopSignals;

/// Arguments of `cascade run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// TOML configuration file (absent: embedded defaults).
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
    /// WebSocket (`ws://`) listen address ('' disables it).
    #[arg(long)]
    websocket: Option<String>,
    /// HTTP endpoint address for /metrics and the status page ('' disables it; default
    /// 127.0.0.1:6380, or `[http] listen`).
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Forwarding workers (0 = one per core, less one for I/O).
    #[arg(long)]
    workers: Option<usize>,
    /// More logging (-v: debug, -vv: trace).
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

/// Runs the daemon until SIGINT or SIGTERM.
pub fn run(args: &RunArgs) -> ExitCode {
    let level = match args.verbose {
        0 => tracing::Level::INFO,
        1 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    };
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let mut cfg = match &args.config {
        None => Config::default(),
        Some(p) => match std::fs::read_to_string(p) {
            Ok(text) => match Config::from_toml(&text) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("cascade run: config {}: {e}", p.display());
                    return ExitCode::from(2);
                }
            },
            Err(e) => {
                eprintln!("cascade run: cannot read config {}: {e}", p.display());
                return ExitCode::from(2);
            }
        },
    };
    cfg.apply(&Overrides {
        unix: args.unix.clone(),
        tcp: args.tcp.clone(),
        udp: args.udp.clone(),
        websocket: args.websocket.clone(),
        workers: args.workers,
    });
    if let Some(h) = &args.http {
        cfg.http.listen = h.clone();
    }
    if let Err(e) = cfg.validate() {
        eprintln!("cascade run: {e}");
        return ExitCode::from(2);
    }
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
    let signals = StopSignals::block();
    let router = match Router::start(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cascade run: {e}");
            return ExitCode::from(router::start_exit_code(&e));
        }
    };
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
    if let Some(a) = router.http_addr() {
        eprintln!("cascade: status page http://{a}/, Prometheus metrics http://{a}/metrics");
    }
    let failed = loop {
        if let Some(sig) = signals.wait_timeout(Duration::from_millis(200)) {
            tracing::info!(signal = sig, "stopping");
            break None;
        }
        if let Some(f) = router.failure() {
            break Some(f);
        }
    };
    router.stop_handle().stop();
    // A second signal while stopping stops at once, without waiting for the threads.
    let second = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let sig = signals.wait();
            eprintln!("cascade run: signal {sig} while stopping: exiting at once");
            std::process::exit(128 + sig);
        });
    if let Err(e) = second {
        tracing::warn!("cannot watch for a second signal: {e}");
    }
    let deadline = Duration::from_millis(args.stop_timeout_ms);
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
