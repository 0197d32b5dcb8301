//! `cascade sim`: the whole-router deterministic simulation ([`router::sim`]) from the
//! command line: one seed (or a range of seeds), a number of steps, the faults to inject.

use std::process::ExitCode;

use router::sim::{run, Faults, SimConfig};

/// `cascade sim` arguments.
#[derive(clap::Args, Debug)]
pub struct SimArgs {
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How many seeds to run, from `--seed` on.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    seeds: u64,
    /// Steps per seed (then the traffic stops and every PIT must drain).
    #[arg(long, default_value_t = 10_000)]
    steps: u64,
    /// Faults to inject: a comma-separated list of all, none, hostile, producers, admin,
    /// clock, corrupt@STEP (flip a byte of a Data from that step on: the checker must fail).
    #[arg(long, default_value = "all")]
    faults: String,
    /// Forwarding workers (1 to 8); by default 1 to 3, drawn from the seed.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=8))]
    workers: Option<u64>,
}

/// Runs the seeds; prints one line per seed (its trace hash and counts), or the broken
/// invariant with its seed and step, and exits 1 on the first failure.
pub fn sim(args: &SimArgs) -> ExitCode {
    let faults = match Faults::parse(&args.faults) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cascade sim: --faults: {e}");
            return ExitCode::from(2);
        }
    };
    for seed in args.seed..args.seed.saturating_add(args.seeds) {
        let mut cfg = SimConfig::new(seed, args.steps);
        cfg.faults = faults;
        if let Some(w) = args.workers {
            cfg.workers = w as usize;
        }
        match run(&cfg) {
            Ok(o) => {
                let s = &o.stats;
                println!(
                    "seed {seed}: ok, {} steps, {} workers, trace {:016x}: {} packets in, {} out \
                     checked ({} Data, {} Nacks), {} malformed, {} ring full, {} face queue \
                     full, {} to closed faces, {} commands, {} faces destroyed, PIT peak {}",
                    o.steps,
                    cfg.workers,
                    o.trace_hash,
                    s.sent,
                    s.checked,
                    s.data,
                    s.nacks,
                    s.malformed,
                    s.ring_full,
                    s.face_queue_full,
                    s.to_closed_face,
                    s.commands,
                    s.destroyed,
                    s.max_pit
                );
            }
            Err(f) => {
                eprintln!("cascade sim: FAILED: {f}");
                eprintln!(
                    "replay: cascade sim --seed {} --steps {} --faults {}{}",
                    f.seed,
                    args.steps,
                    args.faults,
                    args.workers
                        .map_or(String::new(), |w| format!(" --workers {w}"))
                );
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}
