//! The options of `cascade bench hcs`.

use std::path::PathBuf;

use crate::hcs_workload::WorkloadKind;

/// Smallest measured window, in requests.
const MIN_WINDOW: u64 = 100_000;

/// How requests are spread over workers (§5.2 of Mansilha et al. 2017).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mapping {
    /// Hash of the content name.
    Content,
    /// Hash of the batch id (content name + ⌊chunk/B⌋).
    Batch,
}

/// What `--sweep` varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Sweep {
    /// The L1 size.
    L1,
}

/// Emulated-L2 delay (`--delay`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DelayArg {
    /// Busy-wait.
    Busy,
    /// Sleep.
    Sleep,
}

/// Emulated-L2 memory (`--memory`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MemoryArg {
    /// Preallocated.
    Static,
    /// One batch allocated per read.
    Dynamic,
}

/// I/O engine (`--io`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum IoArg {
    /// io_uring, falling back to threads.
    Auto,
    /// io_uring only.
    Uring,
    /// pread/pwrite thread pool.
    Threads,
}

/// Replacement (`--replacement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReplacementArg {
    /// FIFO (the paper's).
    Fifo,
    /// LRU.
    Lru,
}

/// Options of `cascade bench hcs`.
#[derive(clap::Args, Debug, Clone)]
pub struct HcsBenchArgs {
    /// Workload: seq, unif or real (Mansilha et al. 2017, Table 3).
    #[arg(long, default_value = "real")]
    pub workload: WorkloadKind,
    /// Total L1 size in chunks (default: 10% of the catalogue).
    #[arg(long)]
    pub l1: Option<u64>,
    /// Catalogue size in contents of 1,280 chunks (default 100; the paper's 781 = 10^6 chunks).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub catalogue: u32,
    /// Batch size B in chunks.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub batch: u32,
    /// Worker threads, one HCS each (default: one per core this process may run on, as the
    /// router's workers are deployed; at most 64).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub workers: Option<u16>,
    /// Request-to-worker mapping.
    #[arg(long, value_enum, default_value = "content")]
    pub mapping: Mapping,
    /// L1 replacement.
    #[arg(long, value_enum, default_value = "fifo")]
    pub replacement: ReplacementArg,
    /// Read the next batch on the penultimate chunk of the current one (the default, as in the
    /// router's `[store] prefetch_ahead`); the flag is kept so that older commands still parse.
    #[arg(long, overrides_with = "no_prefetch_ahead")]
    pub prefetch_ahead: bool,
    /// No prefetch-ahead: Mansilha et al.'s own measurements, compared with their eq. 2-4.
    #[arg(long, overrides_with = "prefetch_ahead")]
    pub no_prefetch_ahead: bool,
    /// Directory for the L2 files and the scratch file (default: a new temporary directory).
    #[arg(long)]
    pub l2_path: Option<PathBuf>,
    /// Use the emulated L2 of Mansilha et al. instead of a file.
    #[arg(long)]
    pub emulated: bool,
    /// Emulated L2 throughput τ in Gbit/s.
    #[arg(long, default_value_t = 4.0)]
    pub tau_gbps: f64,
    /// Emulated L2 delay technique.
    #[arg(long, value_enum, default_value = "busy")]
    pub delay: DelayArg,
    /// Emulated L2 memory technique.
    #[arg(long, value_enum, default_value = "static")]
    pub memory: MemoryArg,
    /// L2 file through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// L2 queue depth.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub queue_depth: u16,
    /// L2 I/O engine.
    #[arg(long, value_enum, default_value = "auto")]
    pub io: IoArg,
    /// Sweep a parameter (l1: |L1| = 1, 5, 10, 25, 50 % of the catalogue) and print the RMSE
    /// against the model.
    #[arg(long, value_enum)]
    pub sweep: Option<Sweep>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Draw the sweep (L1 hit ratio, measured and model, against |L1|) to this PNG file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Smaller: catalogue of at most 100 contents, windows of at most 300k requests, 1 GiB
    /// scratch file; finishes in under 2 minutes.
    #[arg(long)]
    pub quick: bool,
    /// Skip the 10M-entry L1-hit cost measurement.
    #[arg(long)]
    pub no_hit_cost: bool,
    /// Size of the scratch file the device's sequential read bandwidth is measured on, MiB
    /// (default: 1,024 with `--quick`, else 4,096; at least 8).
    #[arg(long, value_parser = clap::value_parser!(u64).range(8..=1 << 20))]
    pub scratch_mib: Option<u64>,
    /// Workload seed.
    #[arg(long, default_value_t = 0x5eed_0000)]
    pub seed: u64,
}

/// Measured requests after the warm-up at an |L1| point.
pub(super) fn window_for(args: &HcsBenchArgs, l1: u64) -> u64 {
    if args.quick {
        (20 * l1).clamp(MIN_WINDOW, 300_000)
    } else {
        (20 * l1).max(MIN_WINDOW)
    }
}

impl HcsBenchArgs {
    /// Whether the tiers read ahead (on unless `--no-prefetch-ahead`).
    pub(super) fn ahead(&self) -> bool {
        !self.no_prefetch_ahead
    }

    /// Worker threads: `--workers`, else one per core available to this process (1 if that
    /// cannot be known), at most 64.
    pub(super) fn workers(&self) -> u16 {
        self.workers.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(64) as u16)
        })
    }
}
