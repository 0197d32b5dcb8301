//! `cascade sim`: the whole-router deterministic simulation ([`router::sim`]) from the
//! command line: one seed (or a range of seeds), a number of steps, the faults to inject.

use std::process::ExitCode;

use router::sim::{run, Faults, L2Sim, SimConfig};

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
    /// clock, corrupt@STEP (flip a byte of a Data from that step on: the checker must fail),
    /// plant@STEP (with --l2: a wrong slot that passes the store's checks; must fail),
    /// unfilter@STEP (with --l2: a held chunk taken out of the CS filter; must fail),
    /// forget@STEP (with --l2: a crash whose new store forgets the reads lookups wait for;
    /// must fail).
    #[arg(long, default_value = "all")]
    faults: String,
    /// Give every worker an L2 store on a simulated disk (RAM CS of 12 entries in all).
    #[arg(long)]
    l2: bool,
    /// The L2 disks' faults (implies --l2): a comma-separated list of default, none,
    /// read=PM, write=PM, torn=PM, lost=PM, flip=PM, open=PM, crash=PM, restart=PM, off=PM
    /// (per mille), delay=STEPS, reorder, inorder, extents=N, batch=B.
    #[arg(long, value_name = "LIST")]
    l2_faults: Option<String>,
    /// Forwarding workers (1 to 8); by default 1 to 3, drawn from the seed.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=8))]
    workers: Option<u64>,
    /// How names are spread over the workers, as `workers.mapping`: content (the default),
    /// or name (a Data answering a CanBePrefix Interest often has another owner, which its
    /// worker hands it over to for L2).
    #[arg(long, value_enum, default_value_t = SimMapping::Content)]
    mapping: SimMapping,
}

/// `--mapping`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum SimMapping {
    Content,
    Name,
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
    let l2 = match args.l2_faults.as_deref().map(L2Sim::parse) {
        None => args.l2.then_some(L2Sim::DEFAULT),
        Some(Ok(l)) => Some(l),
        Some(Err(e)) => {
            eprintln!("cascade sim: --l2-faults: {e}");
            return ExitCode::from(2);
        }
    };
    let mut total = router::sim::L2Stats::default();
    for seed in args.seed..args.seed.saturating_add(args.seeds) {
        let mut cfg = SimConfig::new(seed, args.steps);
        if let Some(l) = l2 {
            cfg = cfg.with_l2(l);
        }
        cfg.faults = faults;
        if let Some(w) = args.workers {
            cfg.workers = w as usize;
        }
        if args.mapping == SimMapping::Name {
            cfg.mapping = router::dispatch::WorkerMapping::Name;
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
                if l2.is_some() {
                    println!("  L2: {}", l2_line(&s.l2));
                    total.add(&s.l2);
                }
            }
            Err(f) => {
                eprintln!("cascade sim: FAILED: {f}");
                eprintln!(
                    "replay: cascade sim --seed {} --steps {} --faults {}{}{}{}",
                    f.seed,
                    args.steps,
                    args.faults,
                    args.workers
                        .map_or(String::new(), |w| format!(" --workers {w}")),
                    match args.mapping {
                        SimMapping::Content => "",
                        SimMapping::Name => " --mapping name",
                    },
                    match (&args.l2_faults, args.l2) {
                        (Some(l), _) => format!(" --l2-faults {l}"),
                        (None, true) => " --l2".into(),
                        (None, false) => String::new(),
                    }
                );
                return ExitCode::from(1);
            }
        }
    }
    if l2.is_some() && args.seeds > 1 {
        println!("all seeds, L2: {}", l2_line(&total));
    }
    ExitCode::SUCCESS
}

/// What the L2 stores did, and the faults their disks injected, by kind.
fn l2_line(l: &router::sim::L2Stats) -> String {
    let d = &l.disk;
    format!(
        "{} reads, {} writes, {} served, {} failed lookups, {} checksum failures, {} times off, \
         {} workers off from the start ({} chunks handed to them dropped), \
         {} clean restarts, {} crash reopens ({} chunks recovered, {} lookups waiting), {} \
         failed opens, {} chunks read back, {} filter counts checked, {} chunks dropped by \
         admission (backlog peak {}); faults: {} read EIO, {} write EIO, {} write ENOSPC, {} \
         torn, {} lost, {} bit flips, {} reordered, {} delayed, {} crashes ({} writes lost, {} \
         torn), {} failed after a crash; open path: {} errors, {} lost or torn, {} files left \
         short, {} superblocks torn",
        d.reads,
        d.writes,
        l.served,
        l.failed,
        l.checksum_failures,
        l.turned_off,
        l.off_at_open,
        l.dropped_off,
        l.restarts,
        l.crash_reopens,
        l.recovered,
        l.waiting_at_reopen,
        l.open_failures,
        l.read_back,
        l.filter_checks,
        l.admit_dropped,
        l.max_backlog,
        d.read_errors,
        d.write_eio,
        d.write_enospc,
        d.torn_writes,
        d.lost_writes,
        d.bit_flips,
        d.reordered,
        d.delayed,
        d.crashes,
        d.crash_lost,
        d.crash_torn,
        d.after_crash,
        d.open_errors,
        d.open_lost,
        d.truncated,
        d.torn_superblocks
    )
}
