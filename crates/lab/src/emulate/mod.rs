//! `cascade emulate`: a chain of real `cascade run` processes, after the evaluation of Pan et
//! al., "NB-Cache: Non-Blocking In-Network Caching for High-Performance Content Routers".
//!
//! A scenario file ([`scenario`]) names the routers, the links and their rates, which contents
//! each router's store holds and the consumer's load. The emulator
//!
//! 1. builds the network ([`net`]): each node in its own network namespace, neighbours joined
//!    by veth pairs shaped by `tc tbf`; where namespaces are not permitted, every router on its
//!    own loopback UDP port (it says which it used);
//! 2. places the contents ([`place`]): each router alone fetches its share from a producer, so
//!    that its L2 store writes it, and stops cleanly;
//! 3. slows the stores the scenario names ([`throttle`]): a block-I/O cgroup caps their reads
//!    per second;
//! 4. for each case (A–D, the NB-Cache switches of `[store]`), congestion control and
//!    threshold: starts the routers on their stores, sends the consumer's trace through the
//!    chain ([`consumer`]), reads every router's counters through the management protocol
//!    ([`report`]), stops the routers, and prints RTT and throughput;
//! 5. tears everything down at the end, on an error or on Ctrl-C (the caller's stop flag):
//!    every process, namespace, cgroup and file it made is owned by a guard that removes it.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub mod catalogue;
pub mod consumer;
pub mod net;
pub mod node;
pub mod place;
#[cfg(feature = "plot")]
mod plot;
pub mod report;
mod run;
pub mod scenario;
pub mod throttle;

/// Pan et al.'s test cases (their Fig. 14), as switches of `[store]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Case {
    /// A classic content router: no bloom filter, no queue threshold, blocking I/O.
    #[value(name = "A", alias = "a")]
    A,
    /// NB-Cache: bloom filter, queue threshold, non-blocking I/O.
    #[value(name = "B", alias = "b")]
    B,
    /// Bloom filter, blocking I/O.
    #[value(name = "C", alias = "c")]
    C,
    /// Bloom filter, non-blocking I/O, no queue threshold.
    #[value(name = "D", alias = "d")]
    D,
}

impl Case {
    /// All four.
    pub const ALL: [Case; 4] = [Case::A, Case::B, Case::C, Case::D];

    /// `store.bloom`.
    pub fn bloom(self) -> bool {
        self != Case::A
    }

    /// `store.aqm`.
    pub fn aqm(self) -> bool {
        self == Case::B
    }

    /// `store.io = "blocking"`.
    pub fn blocking(self) -> bool {
        matches!(self, Case::A | Case::C)
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Case::A => "A",
            Case::B => "B",
            Case::C => "C",
            Case::D => "D",
        })
    }
}

/// Congestion control of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Cc {
    /// None: the consumer sends at its rate whatever comes back.
    None,
    /// Routers mark Data past their queue threshold; the consumer's window halves on a mark.
    Ecn,
    /// NB-CC: marks only when no bypass is possible, with Nack-α/β between routers.
    Nbcc,
}

impl Cc {
    /// All three, in the order a full run takes them.
    pub const ALL: [Cc; 3] = [Cc::None, Cc::Ecn, Cc::Nbcc];

    /// `store.ecn`: the routers mark Data (plain ECN, or NB-CC's lazy marking).
    pub fn ecn(self) -> bool {
        self != Cc::None
    }

    /// `store.nbcc`: Nack-α/β between routers, bypass only to available upstreams.
    pub fn nbcc(self) -> bool {
        self == Cc::Nbcc
    }

    /// Whether the consumer runs an AIMD window on the marks (else it sends open loop).
    pub fn aimd(self) -> bool {
        self != Cc::None
    }
}

impl fmt::Display for Cc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cc::None => "none",
            Cc::Ecn => "ecn",
            Cc::Nbcc => "nbcc",
        })
    }
}

/// One run: a case, a congestion control and a bypass threshold.
pub type RunSpec = (Case, Cc, usize);

/// What `--sweep` varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Sweep {
    /// `store.bypass_threshold` over the scenario's `router.thresholds` (case B).
    Threshold,
}

/// Arguments of `cascade emulate`.
#[derive(clap::Args, Debug)]
pub struct EmulateArgs {
    /// `nbcache` (built in: Pan et al.'s chain of four routers) or a scenario file.
    #[arg(long, default_value = "nbcache")]
    pub scenario: String,
    /// Run only this case (repeatable; default: A, B, C and D).
    #[arg(long, value_enum)]
    pub case: Vec<Case>,
    /// Run only this congestion control (repeatable; default: none, ecn and nbcc; with
    /// `--sweep`: none and nbcc).
    #[arg(long, value_enum)]
    pub cc: Vec<Cc>,
    /// Repeat case B for each of the scenario's `router.thresholds`.
    #[arg(long, value_enum)]
    pub sweep: Option<Sweep>,
    /// Print one JSON object per run, one per line.
    #[arg(long)]
    pub json: bool,
    /// Draw throughput and RTT by case (or by threshold) to this PNG file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Use loopback UDP ports even where namespaces are permitted.
    #[arg(long, conflicts_with = "namespaces")]
    pub loopback: bool,
    /// Fail unless namespaces are permitted.
    #[arg(long)]
    pub namespaces: bool,
    /// Override the scenario's `consumer.requests`.
    #[arg(long)]
    pub requests: Option<u64>,
    /// Override the scenario's `consumer.rate_pps`.
    #[arg(long)]
    pub rate: Option<u64>,
    /// Working directory (stores, configurations, logs); default: a new one under the
    /// temporary directory, removed at the end.
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    /// Keep the working directory.
    #[arg(long)]
    pub keep: bool,
}

impl EmulateArgs {
    /// The runs asked for: (case, congestion control, threshold), in order.
    fn runs(&self, thresholds: &[usize], default_threshold: usize) -> Result<Vec<RunSpec>, String> {
        let ccs = match (self.cc.is_empty(), self.sweep.is_some()) {
            // Pan et al. sweep the threshold for B and B+NB-CC.
            (true, true) => vec![Cc::None, Cc::Nbcc],
            (true, false) => Cc::ALL.to_vec(),
            (false, _) => self.cc.clone(),
        };
        let cases = match (self.sweep, self.case.is_empty()) {
            (Some(_), true) => vec![Case::B],
            (Some(_), false) => {
                if let Some(c) = self.case.iter().find(|c| !c.aqm()) {
                    return Err(format!(
                        "--sweep threshold: case {c} has no queue threshold (only B has)"
                    ));
                }
                self.case.clone()
            }
            (None, true) => Case::ALL.to_vec(),
            (None, false) => self.case.clone(),
        };
        let ths = if self.sweep.is_some() {
            thresholds.to_vec()
        } else {
            vec![default_threshold]
        };
        let mut out = Vec::new();
        for &cc in &ccs {
            for &th in &ths {
                out.extend(cases.iter().map(|&c| (c, cc, th)));
            }
        }
        Ok(out)
    }
}

/// Runs `cascade emulate` until done or `stop` is set; an error is printed as one line (exit
/// status 2 for a bad scenario or options, 1 for a failed or interrupted run).
pub fn run_cli(args: &EmulateArgs, stop: Arc<AtomicBool>) -> ExitCode {
    let (code, result) = match run::prepare(args) {
        Ok(prepared) => (1, run::run(args, prepared, &stop)),
        Err(e) => (2, Err(e)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cascade emulate: {e}");
            ExitCode::from(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: EmulateArgs,
    }

    fn runs(argv: &[&str]) -> Result<Vec<RunSpec>, String> {
        let cli = Cli::try_parse_from(std::iter::once("x").chain(argv.iter().copied()))
            .map_err(|e| e.to_string())?;
        cli.args.runs(&[10, 20], 64)
    }

    #[test]
    fn the_runs_asked_for() {
        // Everything: cases A–D under each congestion control.
        let all = runs(&[]).unwrap();
        assert_eq!(all.len(), 12);
        assert!(all.iter().all(|&(_, _, th)| th == 64));
        for cc in Cc::ALL {
            let cases: Vec<Case> = all.iter().filter(|r| r.1 == cc).map(|r| r.0).collect();
            assert_eq!(cases, Case::ALL);
        }
        assert_eq!(
            runs(&["--case", "B"]).unwrap(),
            [
                (Case::B, Cc::None, 64),
                (Case::B, Cc::Ecn, 64),
                (Case::B, Cc::Nbcc, 64)
            ]
        );
        assert_eq!(runs(&["--case", "a", "--case", "D"]).unwrap().len(), 6);
        assert_eq!(
            runs(&["--case", "B", "--cc", "nbcc", "--cc", "ecn"]).unwrap(),
            [(Case::B, Cc::Nbcc, 64), (Case::B, Cc::Ecn, 64)]
        );
        assert_eq!(runs(&["--cc", "ecn"]).unwrap().len(), 4);
        assert_eq!(
            runs(&["--sweep", "threshold", "--cc", "none"]).unwrap(),
            [(Case::B, Cc::None, 10), (Case::B, Cc::None, 20)]
        );
        assert_eq!(runs(&["--sweep", "threshold"]).unwrap().len(), 4);
        assert!(runs(&["--sweep", "threshold", "--case", "A"])
            .unwrap_err()
            .contains("case A"));
        assert!(runs(&["--cc", "reno"]).is_err());
        assert!(runs(&["--case", "E"]).is_err());
        assert!(runs(&["--loopback", "--namespaces"]).is_err());
    }

    #[test]
    fn cases_are_the_documented_switches() {
        let switches: Vec<(bool, bool, bool)> = Case::ALL
            .iter()
            .map(|c| (c.bloom(), c.aqm(), c.blocking()))
            .collect();
        assert_eq!(
            switches,
            [
                (false, false, true),
                (true, true, false),
                (true, false, true),
                (true, false, false)
            ]
        );
    }
}
