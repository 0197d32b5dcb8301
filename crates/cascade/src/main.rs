//! `cascade`: the Cascade NDN router's command-line front end. It parses the command line and
//! dispatches; the work is done by the library crates.
//!
//! - `run`: the router daemon (`router`);
//! - `decode`: NDN packets as trees or JSON;
//! - `ctl`: manage a running forwarder with nfdc's command line (also: the binary run under the
//!   name `nfdc`, e.g. through a symlink, is `cascade ctl`);
//! - `peek`, `poke`, `put`, `get`: the consumer and producer tools (`client`);
//! - `bench engine|forward|hcs`: the benchmarks (`lab::bench`);
//! - `model che|bypass`: the analytic models of the hierarchical content store and of NB-Cache's
//!   bypass (`lab::model_cli`);
//! - `emulate`: a chain of `cascade run` processes driven by a consumer (`lab::emulate`);
//! - `completions`, `man`: shell completions and man pages, generated from this command line.

mod ctl;
mod decode;
mod logging;
mod run;
mod signals;
mod sim;
mod tools;
mod tools_log;
mod tools_ping;

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
    #[command(version)]
    Decode(DecodeArgs),
    /// Benchmarks that reproduce the published figures of the papers Cascade builds on.
    #[command(subcommand)]
    Bench(lab::bench::BenchCommand),
    /// Analytic models: hit ratios (Mansilha et al. 2017), the bypass queues (Pan et al., NB-Cache).
    #[command(subcommand)]
    Model(lab::model_cli::ModelCommand),
    /// Emulate a chain of routers (real `cascade run` processes) with content in their stores
    /// and a consumer, after Pan et al.'s NB-Cache evaluation: RTT and throughput by case.
    Emulate(lab::emulate::EmulateArgs),
    /// Run the whole-router deterministic simulation: one seed drives the real dispatcher,
    /// rings, workers and management against simulated faces and faults, with invariants
    /// checked after every step.
    Sim(sim::SimArgs),
    /// Manage a running forwarder (Cascade or NFD) with nfdc's command line, output and exit
    /// statuses, through the management protocol (`cascade ctl route add /a 300 cost 10`).
    /// `-h`/`--help` are nfdc's (the list of its commands); `cascade help ctl` prints this.
    #[command(disable_help_flag = true)]
    Ctl(ctl::CtlArgs),
    /// Send one Interest and print the Data's content (like ndnpeek).
    #[command(version)]
    Peek(tools::PeekArgs),
    /// Serve one Data whose content is read from stdin (like ndnpoke).
    #[command(version)]
    Poke(tools::PokeArgs),
    /// Serve a file as versioned, segmented, signed Data (like ndnputchunks).
    Put(tools::PutArgs),
    /// Fetch versioned, segmented Data into a file (like ndncatchunks).
    #[command(version)]
    Get(tools::GetArgs),
    /// Test reachability: send ndnping probes `PREFIX/ping/SEQ` and print each RTT (like ndnping).
    #[command(version)]
    Ping(tools_ping::PingArgs),
    /// Answer ndnping probes under `PREFIX/ping` (like ndnpingserver).
    #[command(version)]
    Pingserver(tools_ping::PingServerArgs),
    /// Print shell completions to stdout (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout: cascade(1), or a subcommand's (`cascade man run`).
    Man {
        /// A subcommand, for its own page (cascade-run(1)).
        subcommand: Option<String>,
    },
}

/// `cascade completions SHELL`.
fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "cascade", &mut out);
    print_all(&out)
}

/// `cascade man [SUBCOMMAND]`.
fn man(subcommand: Option<&str>) -> ExitCode {
    let cmd = <Cli as clap::CommandFactory>::command();
    let page = match subcommand {
        None => cmd,
        Some(name) => match cmd.find_subcommand(name) {
            // The page's name is cascade-NAME; its usage line says `cascade NAME`. clap takes
            // a name as `&'static str` (without its `string` feature): this short-lived
            // process leaks the few bytes.
            Some(sub) => sub
                .clone()
                .name(&*Box::leak(format!("cascade-{name}").into_boxed_str()))
                .bin_name(format!("cascade {name}")),
            None => {
                eprintln!("cascade man: no subcommand {name:?}");
                return ExitCode::from(2);
            }
        },
    };
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(page).render(&mut out) {
        eprintln!("cascade man: {e}");
        return ExitCode::from(1);
    }
    print_all(&out)
}

/// Writes `out` to stdout; a closed pipe (e.g. `| head`) is not an error worth reporting.
fn print_all(out: &[u8]) -> ExitCode {
    let _ = std::io::stdout().lock().write_all(out);
    ExitCode::SUCCESS
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
        Ok(text) => print_all(text.as_bytes()),
        Err(e) => {
            eprintln!("cascade decode: {}", e.0);
            ExitCode::from(2)
        }
    }
}

/// Whether the program was run under the name `nfdc` (a symlink to `cascade`, say).
fn invoked_as_nfdc() -> bool {
    std::env::args_os()
        .next()
        .is_some_and(|a0| std::path::Path::new(&a0).file_name() == Some("nfdc".as_ref()))
}

fn main() -> ExitCode {
    if invoked_as_nfdc() {
        let argv = std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return ctl::run_as_nfdc(argv);
    }
    let cli = Cli::parse();
    match &cli.command {
        Command::Run(args) => run::run(args),
        Command::Decode(args) => run_decode(args),
        Command::Bench(cmd) => cmd.run(),
        Command::Model(cmd) => cmd.run(),
        Command::Emulate(args) => {
            // Ctrl-C and SIGTERM set the flag; the emulator then tears everything down.
            match signals::StopSignals::block().into_flag() {
                Ok(stop) => lab::emulate::run_cli(args, stop),
                Err(e) => {
                    eprintln!("cascade emulate: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Sim(args) => sim::sim(args),
        Command::Ctl(args) => ctl::run(args),
        Command::Peek(args) => tools::peek(args),
        Command::Poke(args) => tools::poke(args),
        Command::Put(args) => tools::put(args),
        Command::Get(args) => tools::get(args),
        Command::Ping(args) => tools_ping::ping(args),
        Command::Pingserver(args) => tools_ping::pingserver(args),
        Command::Completions { shell } => completions(*shell),
        Command::Man { subcommand } => man(subcommand.as_deref()),
    }
}
