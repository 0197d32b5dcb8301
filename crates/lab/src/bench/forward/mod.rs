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
//!
//! CPU time is counted over the measured window only, in user and system time: the router's
//! threads (`cascade-*`) from `/proc/self/task`, the generator's thread from
//! `getrusage(RUSAGE_THREAD)`. The generator's CPU per direct exchange in the ceiling run (its
//! consumer straight to its producer: the same socket operations with no router) is the unit
//! the router's CPU per satisfied Interest is compared with, and the ceiling's exchanges/s the
//! unit of its rate, so that both ratios come from one run on a machine whose speed drifts.
//! `--scale` repeats the measurement through the router for 1 to all cores' worth of workers.

use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub(crate) mod cpu;
mod generator;
mod link;
mod report;
mod setup;
mod ws_link;

use generator::{drive, parse_workload, producer, Gen, RunResult, Workload};
use link::Link;
use report::Report;
use setup::{links_to, router_endpoints, stop_router};

/// Face kinds the generator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FaceKind {
    /// UDP unicast over loopback.
    Udp,
    /// Unix stream sockets.
    Unix,
    /// WebSocket (`ws://`) over loopback TCP: one packet per binary message.
    Ws,
}

/// `[workers] threads` of the router the bench starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ThreadsArg {
    /// The router's choice from the worker count and the cores.
    Auto,
    /// One thread receives, forwards and sends.
    One,
    /// An I/O thread and worker threads.
    #[value(name = "io+workers")]
    IoWorkers,
    /// One I/O loop per worker, each with its worker inside and its shard of the faces.
    Sharded,
}

impl From<ThreadsArg> for router::config::Threads {
    fn from(t: ThreadsArg) -> Self {
        match t {
            ThreadsArg::Auto => router::config::Threads::Auto,
            ThreadsArg::One => router::config::Threads::One,
            ThreadsArg::IoWorkers => router::config::Threads::IoWorkers,
            ThreadsArg::Sharded => router::config::Threads::Sharded,
        }
    }
}

/// `[workers] udp_io` of the router the bench starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum UdpIoArg {
    /// The router's default.
    Auto,
    /// A multishot `recvmsg` on io_uring over provided buffers.
    Uring,
    /// `recvmmsg` batches.
    Recvmmsg,
}

impl From<UdpIoArg> for router::config::UdpIo {
    fn from(t: UdpIoArg) -> Self {
        match t {
            UdpIoArg::Auto => router::config::UdpIo::Auto,
            UdpIoArg::Uring => router::config::UdpIo::Uring,
            UdpIoArg::Recvmmsg => router::config::UdpIo::Recvmmsg,
        }
    }
}

/// Arguments of `cascade bench forward`.
#[derive(clap::Args, Debug)]
pub struct ForwardBenchArgs {
    /// Face kind between the generator and the router.
    #[arg(long, value_enum, default_value_t = FaceKind::Udp)]
    face: FaceKind,
    /// Drive a running router instead of starting one: `unix:///path`, `udp://host:port` or
    /// `ws://host:port`.
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
    /// Run the window as AIMD (at most `--window`), halving on congestion marks, as
    /// `cascade get` does.
    #[arg(long)]
    aimd: bool,
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
    /// `[workers] spin_us` of the router started here: microseconds its idle threads spin
    /// before they park or sleep (default: the router's default).
    #[arg(long, conflicts_with = "attach", value_parser = clap::value_parser!(u64).range(0..=router::config::MAX_SPIN_US))]
    spin_us: Option<u64>,
    /// `[workers] threads` of the router started here: `one` (one thread receives, forwards
    /// and sends), `io+workers` (an I/O thread and worker threads), `sharded` (one I/O loop
    /// per worker, each with its worker inside) or `auto` (the router's choice). With
    /// `--scale`, `one` is only possible for one worker: the rows from two workers on use
    /// `io+workers`.
    #[arg(long, value_enum, default_value_t = ThreadsArg::Auto, conflicts_with = "attach")]
    threads: ThreadsArg,
    /// `[workers] udp_io` of the router started here: how its UDP sockets receive (`uring`,
    /// `recvmmsg`, or `auto`: the router's default).
    #[arg(long, value_enum, default_value_t = UdpIoArg::Auto, conflicts_with = "attach")]
    udp_io: UdpIoArg,
    /// `[workers] udp_gro` of the router started here: `UDP_GRO` on its sockets (io_uring
    /// receives only).
    #[arg(long, conflicts_with = "attach")]
    udp_gro: bool,
    /// Give the router started here an L2 store (`[store] l2_path` in its temporary directory,
    /// the other `[store]` keys at their defaults).
    #[arg(long, conflicts_with = "attach")]
    l2: bool,
    /// With `--l2`: NB-Cache on (`[store] bloom = true`, `aqm = true`).
    #[arg(long, requires = "l2")]
    nbcache: bool,
    /// `[http] listen` of the router started here (default: off, so that the figures are
    /// the forwarding path's alone): to measure what the metrics endpoint costs while
    /// something scrapes it.
    #[arg(long, value_name = "ADDR", conflicts_with = "attach")]
    http: Option<String>,
    /// A configuration file (TOML, as `cascade run` reads) the router started here starts
    /// from: its listeners and `[http]` are replaced, and so are the keys the options above
    /// set. To measure a setting, e.g. `[face_system.general] enable_congestion_marking =
    /// false`.
    #[arg(long, value_name = "FILE", conflicts_with = "attach")]
    config: Option<PathBuf>,
    /// Interest lifetime; an Interest unanswered this long counts as a timeout.
    #[arg(long, default_value_t = 1000)]
    lifetime_ms: u64,
    /// Skip the ceiling measurement.
    #[arg(long)]
    no_ceiling: bool,
    /// Run the measurement through the router once per worker count, from 1 to the cores
    /// available, starting one router for each (the ceiling is measured once), and print a
    /// table.
    #[arg(long, conflicts_with_all = ["workers", "attach"])]
    scale: bool,
    /// Print one JSON object (with `--scale`, an array of them, one per worker count).
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
        aimd: args.aimd,
        workload,
        lifetime_ms: args.lifetime_ms.max(10),
        run: run_id & 0xFFFF_FFFF,
        router_cpu: args.attach.is_none(),
    };
    // Ceiling: consumer straight to producer, same code, no router.
    let ceiling = if args.no_ceiling {
        None
    } else {
        Some(measure_ceiling(args, &g, measure)?)
    };
    if !args.scale {
        let routed = measure_routed(args, &g, args.workers, measure)?;
        let report = Report::new(args, routed, ceiling.as_ref());
        if args.json {
            println!("{}", report.json());
        } else {
            report.print_text();
        }
        return Ok(());
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut rows = Vec::with_capacity(cores);
    for n in 1..=cores {
        let routed = measure_routed(args, &g, Some(n), measure)?;
        rows.push(Report::new(args, routed, ceiling.as_ref()));
    }
    if args.json {
        let rows: Vec<serde_json::Value> = rows.iter().map(Report::json).collect();
        println!("{}", serde_json::Value::Array(rows));
    } else {
        report::print_scale(args, ceiling.as_ref(), &rows);
    }
    Ok(())
}

/// One measurement through the router: what the generator measured, and the router's drops,
/// worker count, how its threads forwarded and, sharded, the share of packets that crossed
/// between its loops (none with `--attach`).
struct Routed {
    res: RunResult,
    drops: Vec<(String, u64)>,
    workers: usize,
    threads: Option<&'static str>,
    crossed: Option<f64>,
    /// A sharded router's counters, per loop.
    loops: Vec<router::shard::ShardStats>,
}

/// Starts a router with `workers` workers (or attaches to one), drives it for `measure` after
/// the warm-up, and stops it.
fn measure_routed(
    args: &ForwardBenchArgs,
    g: &Gen,
    workers: Option<usize>,
    measure: Duration,
) -> Result<Routed, String> {
    let at = router_endpoints(args, workers)?;
    let (mut cons, mut prod) = links_to(args, &at)?;
    let result = drive(g, &mut cons, &mut prod, &mut producer(args), measure);
    let (drops, workers, threads, crossed, loops) = match at.started {
        Some((r, dir)) => {
            let threads = r.threads();
            let shards = r.shard_stats();
            let crossed = (threads == router::Threads::Sharded)
                .then(|| router::shard::ShardStats::crossed_share(&shards));
            let (drops, workers) = stop_router(r, dir);
            (drops, workers, Some(threads.name()), crossed, shards)
        }
        None => (Vec::new(), 0, None, None, Vec::new()),
    };
    Ok(Routed {
        res: result.map_err(|e| e.to_string())?,
        drops,
        workers,
        threads,
        crossed,
        loops,
    })
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
        FaceKind::Ws => {
            let (a, b) = ws_link::WsLink::pair().map_err(|e| e.to_string())?;
            (Link::Ws(Box::new(a)), Link::Ws(Box::new(b)))
        }
    };
    let g2 = Gen {
        workload: Workload::Unique,
        router_cpu: false,
        ..*g
    };
    drive(&g2, &mut c, &mut p, &mut producer(args), measure).map_err(|e| e.to_string())
}
