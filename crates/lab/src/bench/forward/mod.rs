//! `cascade bench forward`: drives a router over real sockets with its own consumer and
//! producer, and measures the generator's own ceiling (consumer straight to producer) in the
//! same run.
//!
//! The generator is one thread that plays both ends, so that on a small machine it takes one
//! core and leaves the rest to the router: the consumer keeps `window` Interests outstanding
//! (unique names, or a fixed set of names that the CS answers after the first round); the
//! producer registers its prefix with `rib/register` and answers each Interest with a Data of
//! `payload` bytes signed DigestSha256, echoing the PIT token. Every socket is non-blocking and
//! read and written in batches (`recvmmsg`/`sendmmsg` for UDP, large reads and coalesced writes
//! for Unix streams); the thread sleeps in `poll` only when it has nothing to do.

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

mod cpu;
mod generator;
mod link;
mod report;
mod setup;

use cpu::thread_cpu_seconds;
use generator::{drive, parse_workload, producer, Gen, RunResult, Workload};
use link::Link;
use report::Report;
use setup::{connect, register, route_to_udp_producer, router_endpoints, stop_router, Endpoints};

/// Face kinds the generator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FaceKind {
    /// UDP unicast over loopback.
    Udp,
    /// Unix stream sockets.
    Unix,
}

/// Arguments of `cascade bench forward`.
#[derive(clap::Args, Debug)]
pub struct ForwardBenchArgs {
    /// Face kind between the generator and the router.
    #[arg(long, value_enum, default_value_t = FaceKind::Udp)]
    face: FaceKind,
    /// Drive a running router instead of starting one: `unix:///path` or `udp://host:port`.
    #[arg(long)]
    attach: Option<String>,
    /// With `--attach udp://...`: the router's Unix socket, for the management commands that
    /// create the producer's face and route (UDP faces are not local, so they may not register).
    #[arg(long, default_value = "/run/nfd/nfd.sock")]
    mgmt: PathBuf,
    /// Seconds of measurement (after a one-second warm-up).
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Interests outstanding.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    window: u64,
    /// Name workload: `unique` (every Interest goes to the producer) or `cached:N` (N names
    /// requested round-robin, answered by the router's CS after the first round).
    #[arg(long, default_value = "unique")]
    workload: String,
    /// Content bytes per Data.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(0..=8000))]
    payload: u64,
    /// Forwarding workers of the router started here (default: the router's default).
    #[arg(long)]
    workers: Option<usize>,
    /// Interest lifetime; an Interest unanswered this long counts as a timeout.
    #[arg(long, default_value_t = 1000)]
    lifetime_ms: u64,
    /// Skip the ceiling measurement.
    #[arg(long)]
    no_ceiling: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs `cascade bench forward`.
pub fn run(args: &ForwardBenchArgs) -> Result<(), String> {
    let workload = parse_workload(&args.workload)?;
    if !(args.duration > 0.0 && args.duration <= 3600.0) {
        return Err(format!(
            "--duration {}: must be in (0, 3600] seconds",
            args.duration
        ));
    }
    let measure = Duration::from_secs_f64(args.duration);
    let run_id = std::process::id() as u64 ^ (Instant::now().elapsed().as_nanos() as u64);
    let g = Gen {
        window: args.window,
        workload,
        lifetime_ms: args.lifetime_ms.max(10),
        run: run_id & 0xFFFF_FFFF,
    };
    // Ceiling: consumer straight to producer, same code, no router.
    let ceiling = if args.no_ceiling {
        None
    } else {
        Some(measure_ceiling(args, &g, measure)?)
    };
    // The router: started here, or attached to.
    let Endpoints { unix, udp, started } = router_endpoints(args)?;
    let mut cons = connect(args.face, unix.as_ref(), udp)?;
    let mut prod = connect(args.face, unix.as_ref(), udp)?;
    match args.face {
        FaceKind::Unix => register(&mut prod)?,
        FaceKind::Udp => {
            let mgmt = unix.clone().unwrap_or_else(|| args.mgmt.clone());
            route_to_udp_producer(&mgmt, &prod)?;
        }
    }
    let cpu0 = thread_cpu_seconds("cascade-");
    let mut result =
        drive(&g, &mut cons, &mut prod, &mut producer(args), measure).map_err(|e| e.to_string());
    let cpu1 = thread_cpu_seconds("cascade-");
    let (drops, workers) = match started {
        Some((r, dir)) => stop_router(r, dir),
        None => (Vec::new(), 0),
    };
    let res = result.as_mut().map_err(|e| e.clone())?.clone();
    let router_cpu_s = cpu1 - cpu0;
    let cpu_us = if res.satisfied > 0 && args.attach.is_none() {
        Some(router_cpu_s * 1e6 / res.satisfied as f64)
    } else {
        None
    };
    let report = Report {
        args,
        res,
        ceiling,
        drops,
        workers,
        cpu_us,
    };
    if args.json {
        report.print_json();
    } else {
        report.print_text();
    }
    Ok(())
}

/// The generator's own ceiling: its consumer straight to its producer (unique names), no
/// router.
fn measure_ceiling(
    args: &ForwardBenchArgs,
    g: &Gen,
    measure: Duration,
) -> Result<RunResult, String> {
    let (mut c, mut p) = match args.face {
        FaceKind::Udp => Link::udp_pair().map_err(|e| e.to_string())?,
        FaceKind::Unix => {
            let (a, b) = UnixStream::pair().map_err(|e| e.to_string())?;
            (
                Link::stream(a).map_err(|e| e.to_string())?,
                Link::stream(b).map_err(|e| e.to_string())?,
            )
        }
    };
    let g2 = Gen {
        workload: Workload::Unique,
        ..*g
    };
    drive(&g2, &mut c, &mut p, &mut producer(args), measure).map_err(|e| e.to_string())
}
