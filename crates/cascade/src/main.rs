//! `cascade`: the Cascade NDN router's command-line front end.
//!
//! Subcommands arrive with the issues that build them; today: `decode`, `bench engine`.

mod bench;
mod decode;

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
    /// Decode NDN packets (Interest, Data, NDNLPv2) and print them as trees or JSON.
    Decode(DecodeArgs),
    /// Benchmarks that reproduce the seeds' published figures.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// The forwarding engine in-process on one thread (seed 002): cycles per packet, LPM
    /// probes by algorithm and M, prefetching, the garbage-name attack.
    Engine(bench::EngineBenchArgs),
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
        Command::Decode(args) => run_decode(args),
        Command::Bench(BenchCommand::Engine(args)) => match bench::run_engine(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("cascade bench engine: {e}");
                ExitCode::from(1)
            }
        },
    }
}
