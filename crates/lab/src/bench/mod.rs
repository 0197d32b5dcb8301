//! `cascade bench`: benchmarks that reproduce the published figures of the papers Cascade is
//! built on.
//!
//! - [`attack`]: a hostile neighbour against a real `cascade run` while a legitimate consumer
//!   fetches: face-table lockout, PIT exhaustion, reassembly, management flood, garbage,
//!   reflection;
//! - [`engine`]: the forwarding engine in-process on one thread, after So, Narayanan and Oran,
//!   "Named Data Networking on a Router: Fast and DoS-resistant Forwarding with Hash Tables"
//!   (ANCS 2013);
//! - [`forward`]: the router over real sockets, after Kirchner et al., "Augustus: a CCN router
//!   for programmable networks" (ANCS 2016);
//! - [`hcs`]: the hierarchical content store, after Mansilha et al., "Exploiting parallelism in
//!   hierarchical content stores for high-speed ICN routers" (Computer Networks, 2017).

use std::process::ExitCode;

use clap::Subcommand;

pub mod attack;
pub mod engine;
pub mod forward;
pub mod hcs;

/// The benchmarks of `cascade bench`.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Attacks from 127/8 sources against a real `cascade run` while a legitimate consumer
    /// fetches: its throughput against an unattacked baseline, and the router's RSS.
    Attack(attack::AttackBenchArgs),
    /// The forwarding engine in-process on one thread (So et al., ANCS 2013): cycles per packet,
    /// LPM probes by algorithm and M, prefetching, the garbage-name attack.
    Engine(engine::EngineBenchArgs),
    /// The router over real sockets (Kirchner et al., ANCS 2016): satisfied Interests/s, drops,
    /// RTT, with the load generator's own ceiling measured in the same run.
    Forward(forward::ForwardBenchArgs),
    /// The hierarchical content store (Mansilha et al. 2017): L1 hit ratio against the model,
    /// L2 on a real file or emulated, throughput, L2 and device read bandwidth, L1-hit cost.
    Hcs(hcs::HcsBenchArgs),
}

impl BenchCommand {
    /// Runs the benchmark; an error is printed as one line on stderr (exit status 1).
    pub fn run(&self) -> ExitCode {
        let (name, result) = match self {
            BenchCommand::Attack(args) => ("attack", attack::run(args)),
            BenchCommand::Engine(args) => ("engine", engine::run_engine(args)),
            BenchCommand::Forward(args) => ("forward", forward::run(args)),
            BenchCommand::Hcs(args) => ("hcs", hcs::run_hcs(args)),
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("cascade bench {name}: {e}");
                ExitCode::from(1)
            }
        }
    }
}
