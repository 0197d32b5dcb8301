//! `cascade`: the Cascade NDN router's command-line front end.
//!
//! Subcommands arrive with the issues that build them; today: `decode`, `bench engine`,
//! `model che`.

mod bench;
mod bench_forward;
mod bench_hcs;
mod ctl;
mod decode;
mod run;
mod tools;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Cascade: a high-speed NDN router with a hierarchical RAM + SSD content store.
#[derive(Parser, Debug)]
#[command(name = "cascade", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the router daemon (NFD-compatible: apps find it at /run/nfd/nfd.sock).
    Run(run::RunArgs),
    /// Decode NDN packets (Interest, Data, NDNLPv2) and print them as trees or JSON.
    Decode(DecodeArgs),
    /// Benchmarks that reproduce the seeds' published figures.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Analytic models (seed 000): predicted hit ratios.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Manage a running forwarder (Cascade or NFD) like nfdc, through the management protocol.
    Ctl(ctl::CtlArgs),
    /// Send one Interest and print the Data's content (like ndnpeek).
    Peek(tools::PeekArgs),
    /// Serve one Data whose content is read from stdin (like ndnpoke).
    Poke(tools::PokeArgs),
    /// Serve a file as versioned, segmented, signed Data (like ndnputchunks).
    Put(tools::PutArgs),
    /// Fetch versioned, segmented Data into a file (like ndncatchunks).
    Get(tools::GetArgs),
}

#[derive(Subcommand, Debug)]
enum ModelCommand {
    /// L1 hit ratio of the hierarchical content store for the Unif, Seq and Real workloads
    /// (seed 000, eq. 2–6; Che's approximation for the Real workload's first chunks), and the
    /// stream model of Real with a FIFO L1 (steady state and over the seed's measurement
    /// window).
    Che(CheArgs),
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum PolicyArg {
    /// FIFO (also Random replacement), the seed's default.
    Fifo,
    /// Least recently used.
    Lru,
}

#[derive(clap::Args, Debug)]
struct CheArgs {
    /// L1 size in chunks.
    #[arg(long)]
    l1: u64,
    /// Catalogue size in contents.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    catalogue: u64,
    /// Chunks per content.
    #[arg(long, default_value_t = 1280, value_parser = clap::value_parser!(u64).range(1..))]
    chunks_per_content: u64,
    /// Prefetch batch size B in chunks.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    batch: u64,
    /// Zipf exponent of content popularity (>= 0).
    #[arg(long, default_value_t = 1.0, value_parser = parse_alpha)]
    alpha: f64,
    /// L1 replacement policy.
    #[arg(long, value_enum, default_value_t = PolicyArg::Fifo)]
    policy: PolicyArg,
    /// Real: stream arrivals per second (Poisson).
    #[arg(long, default_value_t = 1.0, value_parser = parse_rate)]
    lambda: f64,
    /// Real: chunks per second of one stream.
    #[arg(long, default_value_t = 8.0, value_parser = parse_rate)]
    chunk_rate: f64,
    /// Real: the next batch is read at the current batch's penultimate chunk.
    #[arg(long)]
    prefetch_ahead: bool,
    /// Real: warm-up requests before the measured window (default: 10 x |L1|, the seed's).
    #[arg(long)]
    warmup: Option<u64>,
    /// Real: measured requests (default: the catalogue's chunks, the seed's |W| - 10 |L1|).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    window: Option<u64>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

fn parse_alpha(s: &str) -> Result<f64, String> {
    let a: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if a.is_finite() && a >= 0.0 {
        Ok(a)
    } else {
        Err("must be a finite number >= 0".into())
    }
}

fn parse_rate(s: &str) -> Result<f64, String> {
    let a: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if a.is_finite() && a > 0.0 {
        Ok(a)
    } else {
        Err("must be a finite number > 0".into())
    }
}

fn run_model_che(args: &CheArgs) -> ExitCode {
    let params = model::HcsParams {
        l1_chunks: args.l1,
        catalogue: args.catalogue,
        chunks_per_content: args.chunks_per_content,
        batch: args.batch,
        alpha: args.alpha,
        policy: match args.policy {
            PolicyArg::Fifo => model::Policy::Fifo,
            PolicyArg::Lru => model::Policy::Lru,
        },
    };
    let pred = match model::predict_l1(&params) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cascade model che: {e}");
            return ExitCode::from(2);
        }
    };
    let policy = match args.policy {
        PolicyArg::Fifo => "fifo",
        PolicyArg::Lru => "lru",
    };
    let streams = model::Streams {
        lambda_per_s: args.lambda,
        chunk_rate_per_s: args.chunk_rate,
        prefetch_ahead: args.prefetch_ahead,
    };
    let warmup = args.warmup.unwrap_or(args.l1.saturating_mul(10));
    let window = args
        .window
        .unwrap_or(args.catalogue.saturating_mul(args.chunks_per_content));
    // The stream model is derived for FIFO only.
    let stream = match args.policy {
        PolicyArg::Fifo => match model::predict_real_window(&params, &streams, warmup, window) {
            Ok(w) => Some(w),
            Err(e) => {
                eprintln!("cascade model che: {e}");
                return ExitCode::from(2);
            }
        },
        PolicyArg::Lru => None,
    };
    let finite = |x: f64| if x.is_finite() { Some(x) } else { None };
    let text = if args.json {
        let v = serde_json::json!({
            "l1_chunks": args.l1,
            "catalogue": args.catalogue,
            "chunks_per_content": args.chunks_per_content,
            "batch": args.batch,
            "alpha": args.alpha,
            "policy": policy,
            "cache_contents": pred.cache_contents,
            "t_c": if pred.t_c.is_finite() { Some(pred.t_c) } else { None },
            "p1st": pred.p1st,
            "unif": pred.unif,
            "seq": pred.seq,
            "seq_prefetch_ahead": pred.seq_ahead,
            "real": pred.real,
            "real_streams": stream.map(|w| serde_json::json!({
                "lambda_per_s": args.lambda,
                "chunk_rate_per_s": args.chunk_rate,
                "prefetch_ahead": args.prefetch_ahead,
                "steady": {
                    "active_streams": w.steady.active_streams,
                    "t_mean_s": finite(w.steady.t_mean_s),
                    "hit_ratio": w.steady.hit_ratio,
                    "reads_per_request": w.steady.reads_per_request,
                },
                "window": {
                    "warmup_requests": warmup,
                    "window_requests": window,
                    "start_s": w.start_s,
                    "end_s": w.end_s,
                    "min_active_streams": w.min_active_streams,
                    "hit_ratio": w.hit_ratio,
                    "reads_per_request": w.reads_per_request,
                },
            })),
        });
        format!("{v}\n")
    } else {
        format!(
            "L1 {} chunks ({:.3} contents), catalogue {} contents x {} chunks, B {}, alpha {}, {}\n\
             T_C {:.6e}, P1st {:.6}\n\
             workload  l1_hit_ratio\n\
             unif      {:.6}\n\
             seq       {:.6}\n\
             seq+ahead {:.6}  (prefetch-ahead: one miss per content; not in the seed)\n\
             real      {:.6}\n",
            args.l1,
            pred.cache_contents,
            args.catalogue,
            args.chunks_per_content,
            args.batch,
            args.alpha,
            policy,
            pred.t_c,
            pred.p1st,
            pred.unif,
            pred.seq,
            pred.seq_ahead,
            pred.real,
        ) + &match stream {
            Some(w) => format!(
                "real, stream model (lambda {} /s, {} chunks/s, prefetch-ahead {}):\n\
                 steady    {:.6}  ({:.0} streams, mean sojourn {:.4} s, {:.4} batch reads per \
                 request)\n\
                 window    {:.6}  (requests {}..{}, t = {:.1}..{:.1} s, from {:.0} streams)\n",
                args.lambda,
                args.chunk_rate,
                if args.prefetch_ahead { "on" } else { "off" },
                w.steady.hit_ratio,
                w.steady.active_streams,
                w.steady.t_mean_s,
                w.steady.reads_per_request,
                w.hit_ratio,
                warmup,
                warmup.saturating_add(window),
                w.start_s,
                w.end_s,
                w.min_active_streams,
            ),
            None => "real, stream model: derived for FIFO only\n".to_string(),
        }
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// The forwarding engine in-process on one thread (seed 002): cycles per packet, LPM
    /// probes by algorithm and M, prefetching, the garbage-name attack.
    Engine(bench::EngineBenchArgs),
    /// The router over real sockets (seed 001): satisfied Interests/s, drops, RTT, with the
    /// load generator's own ceiling measured in the same run.
    Forward(bench_forward::ForwardBenchArgs),
    /// The hierarchical content store (seed 000): L1 hit ratio against the model, L2 on a
    /// real file or emulated, throughput, L2 and device read bandwidth, L1-hit cost.
    Hcs(bench_hcs::HcsBenchArgs),
}

#[derive(clap::Args, Debug)]
struct DecodeArgs {
    /// File of TLV elements back to back; `-` or absent reads stdin.
    file: Option<PathBuf>,
    /// The input is hex text (whitespace ignored, `#` starts a comment).
    #[arg(long)]
    hex: bool,
    /// Print one JSON object per packet instead of a tree.
    #[arg(long)]
    json: bool,
    /// Decode the embedded sample packets (an Interest, a signed Data, a Nack).
    #[arg(long, conflicts_with = "file")]
    sample: bool,
    /// Largest element accepted, in bytes.
    #[arg(long, default_value_t = wire::MAX_NDN_PACKET_BYTES)]
    max_packet_bytes: usize,
}

fn read_input(path: Option<&PathBuf>) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    match path {
        Some(p) if p.as_os_str() != "-" => {
            buf = std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        }
        _ => {
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
        }
    }
    Ok(buf)
}

fn run_decode(args: &DecodeArgs) -> ExitCode {
    let raw = if args.sample {
        decode::sample_packets()
    } else {
        match read_input(args.file.as_ref()) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("cascade decode: {e}");
                return ExitCode::from(1);
            }
        }
    };
    let bytes = if args.hex {
        let text = String::from_utf8_lossy(&raw);
        match decode::parse_hex(&text) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("cascade decode: {}", e.0);
                return ExitCode::from(2);
            }
        }
    } else {
        raw
    };
    let limits = wire::Limits {
        max_packet_bytes: args.max_packet_bytes,
        ..wire::Limits::default()
    };
    match decode::render(&bytes, args.json, &limits) {
        Ok(text) => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not an error worth reporting.
            let _ = out.write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cascade decode: {}", e.0);
            ExitCode::from(2)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Run(args) => run::run(args),
        Command::Decode(args) => run_decode(args),
        Command::Bench(BenchCommand::Engine(args)) => match bench::run_engine(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("cascade bench engine: {e}");
                ExitCode::from(1)
            }
        },
        Command::Bench(BenchCommand::Forward(args)) => match bench_forward::run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("cascade bench forward: {e}");
                ExitCode::from(1)
            }
        },
        Command::Bench(BenchCommand::Hcs(args)) => match bench_hcs::run_hcs(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("cascade bench hcs: {e}");
                ExitCode::from(1)
            }
        },
        Command::Model(ModelCommand::Che(args)) => run_model_che(args),
        Command::Ctl(args) => ctl::run(args),
        Command::Peek(args) => tools::peek(args),
        Command::Poke(args) => tools::poke(args),
        Command::Put(args) => tools::put(args),
        Command::Get(args) => tools::get(args),
    }
}
