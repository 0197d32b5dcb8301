//! `cascade bench hcs`: the hierarchical content store of seed 000 driven by its workloads.
//!
//! Each worker thread owns one HCS (no shared state): the L1 logic of [`crate::tier_sim::TierSim`] with the
//! chunks' bytes in a slab beside it, and an L2 that is either a real file ([`store::L2File`],
//! one per worker, `O_DIRECT` unless `--buffered`) or seed 000's emulated L2 (`--emulated`).
//! Requests reach workers by hashing the content name (H=Content) or the batch id (H=Batch).
//!
//! Per |L1| point: the requests are generated before timing (fixed seed); the seed's warm-up
//! (10 × |L1| requests) runs the L1 logic only (no L2 I/O, the chunk bytes are not loaded), then
//! the measured window (20 × |L1| requests, at least 100k) runs with real L2 reads: an L1 miss
//! submits its batch read and goes on; a hit on a chunk whose batch is still in flight is
//! counted as a pending hit. A batch read the full L2 queue cannot take waits in a backlog of
//! at most one queue's worth, submitted oldest first as completions make room, while the bench
//! thread goes on serving, as a worker that never blocks on storage would; only when the
//! backlog is full too does the thread wait for a completion.
//!
//! Prefetch-ahead is on by default, as in the router (`--no-prefetch-ahead` for the seed's own
//! setting). The model each point is compared with: for `Seq`, one miss per content with
//! prefetch-ahead ([`model::seq_ahead_hit_ratio`]) and seed 000's eq. 3 without; for `Unif`,
//! eq. 2 either way (L1 holds `|L1|` distinct chunks whatever was read ahead); for
//! `Real` with a FIFO L1, the stream model ([`model::predict_real_window`]: prefetched chunks
//! evicted before their stream asks for them when L1 cannot keep a batch per active stream,
//! and the measured window's place on the workload's start-up ramp), with the seed's eq. 4 and
//! the stream model's steady state printed beside it (the stream model covers
//! prefetch-ahead); with LRU, eq. 4 (the stream model is derived for FIFO; eq. 4 has no
//! prefetch-ahead term).
//!
//! Also measured in the same run: the device's sequential read bandwidth (a scratch file in the
//! L2 directory, written once and read with `O_DIRECT` in 1 MiB blocks: at queue depth 1 with
//! `pread`, at the L2's queue depth with the same I/O engine, and at queue depth 64; three
//! passes of each before the L2 runs and three after; the reference is the highest of the three
//! modes' medians, and the fastest single pass is printed beside it), and the cost of an
//! L1 hit with 10M entries (median of 1,000-lookup blocks of random present keys).

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::hcs_workload::{warmup_requests, RealParams, WorkloadKind};
use crate::tier_sim::{TierSim, TierSimConfig};
use engine::table::mem::{arena, FixedArena};
use model::{predict_l1, predict_real_window, HcsParams, Policy, Streams};
use serde_json::{json, Value};
use store::emulated::fill_chunk;
use store::io::{AlignedBuf, Io, IoBackend, IoKind, IoOp};
use store::l2::supports_direct;
use store::layout::EXTENT_ALIGN_BYTES;
use store::{
    Admit, BatchRead, ChunkName, EmuDelay, EmuMemory, EmulatedL2, EmulatedL2Config, L2Config,
    L2Error, L2File, ReadStart, Replacement,
};

/// Chunk size `|c|` (seed 000, Table 3).
const CHUNK_BYTES: usize = 8192;
/// Chunks per content (seed 000, Table 3).
const CHUNKS_PER_CONTENT: u32 = 1280;
/// Smallest measured window, in requests.
const MIN_WINDOW: u64 = 100_000;
/// L1 entries for the L1-hit cost measurement.
const HIT_COST_ENTRIES: usize = 10_000_000;
/// Lookups per timed block in the L1-hit cost measurement.
const HIT_COST_BLOCK: usize = 1000;

/// How requests are spread over workers (seed 000 §5.2).
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
    /// FIFO (the seed's).
    Fifo,
    /// LRU.
    Lru,
}

/// Options of `cascade bench hcs`.
#[derive(clap::Args, Debug, Clone)]
pub struct HcsBenchArgs {
    /// Workload: seq, unif or real (seed 000, Table 3).
    #[arg(long, default_value = "real")]
    pub workload: WorkloadKind,
    /// Total L1 size in chunks (default: 10% of the catalogue).
    #[arg(long)]
    pub l1: Option<u64>,
    /// Catalogue size in contents of 1,280 chunks (default 100; the seed's 781 = 10^6 chunks).
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
    /// No prefetch-ahead: seed 000's own measurements, compared with its eq. 2-4.
    #[arg(long, overrides_with = "prefetch_ahead")]
    pub no_prefetch_ahead: bool,
    /// Directory for the L2 files and the scratch file (default: a new temporary directory).
    #[arg(long)]
    pub l2_path: Option<PathBuf>,
    /// Use seed 000's emulated L2 instead of a file.
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

/// One measured point.
#[derive(Debug, Clone, Copy, Default)]
struct Point {
    l1_chunks: u64,
    requests: u64,
    l1_hits: u64,
    pending_hits: u64,
    prefetch_used: u64,
    prefetch_evicted_unused: u64,
    l2_batch_reads: u64,
    l2_bytes: u64,
    l2_misses: u64,
    checksum_failures: u64,
    elapsed_s: f64,
    /// The model the point is compared with (see the module documentation).
    model: f64,
    /// Seed 000's eq. 2–4 for this workload.
    model_seed: f64,
    /// `Real`: the stream model's steady state (every stream past the ramp).
    model_steady: Option<f64>,
    /// Longest and 99.9th-percentile request iteration (L1 logic, serving, L2 submit and
    /// poll; the bench's own waits on a full L2 queue excluded), ns; max over workers.
    iter_max_ns: u64,
    iter_p999_ns: u64,
    /// Time the bench threads waited for a completion because the L2 queue was full, s.
    blocked_s: f64,
    /// CPU time of the bench threads, s.
    cpu_s: f64,
    /// L2 operations in flight, summed over the per-request samples.
    in_flight_sum: u64,
    /// Per-request samples of the L2 queue.
    queue_samples: u64,
    /// Samples that found the L2 queue full.
    queue_full: u64,
    /// Batch reads waiting for room in the L2 queue, summed over the per-request samples.
    backlog_sum: u64,
    /// Batch reads given up because the queue stayed full with nothing in flight (never
    /// expected: counted so that a run that had any says so).
    l2_gave_up: u64,
}

impl Point {
    fn hit_ratio(&self) -> f64 {
        ratio(self.l1_hits, self.requests)
    }
    fn chunks_per_s(&self) -> f64 {
        self.requests as f64 / self.elapsed_s.max(1e-9)
    }
    fn gbps(&self) -> f64 {
        self.chunks_per_s() * CHUNK_BYTES as f64 * 8.0 / 1e9
    }
    fn l2_gbytes_per_s(&self) -> f64 {
        self.l2_bytes as f64 / self.elapsed_s.max(1e-9) / 1e9
    }
    fn usefulness(&self) -> f64 {
        ratio(
            self.prefetch_used,
            self.prefetch_used + self.prefetch_evicted_unused,
        )
    }
    fn add(&mut self, o: &Point) {
        self.requests += o.requests;
        self.l1_hits += o.l1_hits;
        self.pending_hits += o.pending_hits;
        self.prefetch_used += o.prefetch_used;
        self.prefetch_evicted_unused += o.prefetch_evicted_unused;
        self.l2_batch_reads += o.l2_batch_reads;
        self.l2_bytes += o.l2_bytes;
        self.l2_misses += o.l2_misses;
        self.checksum_failures += o.checksum_failures;
        self.elapsed_s = self.elapsed_s.max(o.elapsed_s);
        self.iter_max_ns = self.iter_max_ns.max(o.iter_max_ns);
        self.iter_p999_ns = self.iter_p999_ns.max(o.iter_p999_ns);
        self.blocked_s += o.blocked_s;
        self.cpu_s += o.cpu_s;
        self.in_flight_sum += o.in_flight_sum;
        self.queue_samples += o.queue_samples;
        self.queue_full += o.queue_full;
        self.backlog_sum += o.backlog_sum;
        self.l2_gave_up += o.l2_gave_up;
    }

    /// Mean L2 operations in flight at a request.
    fn mean_in_flight(&self) -> f64 {
        ratio(self.in_flight_sum, self.queue_samples)
    }

    /// Mean batch reads waiting for room in the L2 queue at a request.
    fn mean_backlog(&self) -> f64 {
        ratio(self.backlog_sum, self.queue_samples)
    }
}

/// Request-iteration times in 1 µs buckets up to [`STALL_BUCKETS`] µs (beyond: the last
/// bucket), with the exact maximum.
struct StallHist {
    buckets: Vec<u64>,
    max_ns: u64,
    n: u64,
}

/// Buckets of [`StallHist`] (1 µs each).
const STALL_BUCKETS: usize = 16_384;

impl StallHist {
    fn new() -> Self {
        StallHist {
            buckets: vec![0; STALL_BUCKETS],
            max_ns: 0,
            n: 0,
        }
    }

    #[inline]
    fn record(&mut self, ns: u64) {
        self.buckets[((ns / 1000) as usize).min(STALL_BUCKETS - 1)] += 1;
        self.max_ns = self.max_ns.max(ns);
        self.n += 1;
    }

    /// The upper edge (ns) of the bucket holding quantile `q`, capped at the maximum.
    fn quantile_ns(&self, q: f64) -> u64 {
        let want = (q * self.n as f64).ceil() as u64;
        let mut seen = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= want.max(1) {
                return ((i as u64 + 1) * 1000).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

/// CPU time of the calling thread, s.
fn thread_cpu_s() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: plain syscall writing into a local timespec.
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
    }
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Runs `cascade bench hcs`.
pub fn run_hcs(args: &HcsBenchArgs) -> Result<(), String> {
    // The worker count resolved once (the per-request mapping reads it).
    let args = &HcsBenchArgs {
        workers: Some(args.workers()),
        ..args.clone()
    };
    let catalogue = if args.quick {
        args.catalogue.min(100)
    } else {
        args.catalogue
    };
    let catalogue_chunks = u64::from(catalogue) * u64::from(CHUNKS_PER_CONTENT);
    if !(args.tau_gbps.is_finite() && args.tau_gbps > 0.0) {
        return Err(format!(
            "--tau-gbps must be positive, got {}",
            args.tau_gbps
        ));
    }
    let l1_points: Vec<u64> = match (args.sweep, args.l1) {
        (Some(Sweep::L1), _) => [1, 5, 10, 25, 50]
            .iter()
            .map(|pct| catalogue_chunks * pct / 100)
            .collect(),
        (None, Some(l1)) => vec![l1],
        (None, None) => vec![catalogue_chunks / 10],
    };
    if l1_points
        .iter()
        .any(|&l| l < u64::from(args.workers()) || l > 50_000_000)
    {
        return Err(format!(
            "|L1| must be between the number of workers ({}) and 50M chunks",
            args.workers()
        ));
    }
    let (_tmp, dir) = match &args.l2_path {
        Some(p) => {
            std::fs::create_dir_all(p)
                .map_err(|e| format!("cannot create {}: {e}", p.display()))?;
            (None, p.clone())
        }
        None => {
            let t = TempDir::new()?;
            let p = t.0.clone();
            (Some(t), p)
        }
    };
    let direct = !args.buffered && !args.emulated && supports_direct(&dir);
    if !args.buffered && !args.emulated && !direct {
        eprintln!(
            "note: {} does not accept O_DIRECT; the L2 file goes through the page cache",
            dir.display()
        );
    }
    let backend = match args.io {
        IoArg::Auto => IoBackend::Auto,
        IoArg::Uring => IoBackend::Uring,
        IoArg::Threads => IoBackend::Threads,
    };

    let scratch_bytes: u64 = match args.scratch_mib {
        Some(mib) => mib << 20,
        None if args.quick => 1 << 30,
        None => 4 << 30,
    };
    let seq = SeqRead {
        qd: usize::from(args.queue_depth),
        threads: usize::from(args.workers()),
        backend,
        extent: extent_bytes(args.batch),
    };
    // Written once, read `DEVICE_PASSES` times before the L2 runs and as many times after.
    let scratch = if args.emulated {
        None
    } else {
        Some(Scratch::write(&dir, scratch_bytes)?)
    };
    let mut device = Device::default();
    if let Some(s) = &scratch {
        for _ in 0..DEVICE_PASSES {
            device.add(seq.pass(s)?);
        }
    }
    let params = RealParams {
        catalogue_contents: catalogue,
        chunks_per_content: CHUNKS_PER_CONTENT,
        ..RealParams::default()
    };
    let mut points = Vec::with_capacity(l1_points.len());
    let mut backend_name = String::from("emulated");
    for &l1 in &l1_points {
        let window = window_for(args, l1);
        let (p, b) = run_point(args, &params, &dir, l1, window, direct, backend)?;
        backend_name = b;
        if !args.json {
            print_point_line(args.workload, &p);
        }
        points.push(p);
    }
    // Measured again after the L2 runs: the reference is the best mode's median over all
    // passes, before and after.
    if let Some(s) = &scratch {
        for _ in 0..DEVICE_PASSES {
            device.add(seq.pass(s)?);
        }
    }
    drop(scratch);
    let device = (!args.emulated).then_some(device);
    let rmse = (points
        .iter()
        .map(|p| (p.hit_ratio() - p.model).powi(2))
        .sum::<f64>()
        / points.len() as f64)
        .sqrt();
    // For reference: against seed 000's eq. 4 (which assumes L1 keeps a batch per stream).
    let rmse_seed = (points
        .iter()
        .map(|p| (p.hit_ratio() - p.model_seed).powi(2))
        .sum::<f64>()
        / points.len() as f64)
        .sqrt();
    let hit_ns = if args.no_hit_cost {
        None
    } else {
        Some(l1_hit_cost_ns(args.seed))
    };
    if let Some(path) = &args.plot {
        let model_at = |l1: f64| -> f64 {
            let l1 = l1 as u64;
            models(args, &params, l1, warmup_requests(l1), window_for(args, l1))
                .map(|m| m.0)
                .unwrap_or(0.0)
        };
        plot(path, args.workload, &points, model_at, model_name(args))?;
    }
    let total = points.iter().fold(Point::default(), |mut a, p| {
        a.add(p);
        a
    });
    if args.json {
        let pts: Vec<Value> = points
            .iter()
            .map(|p| {
                json!({
                    "l1_chunks": p.l1_chunks,
                    "l1_hit_ratio": p.hit_ratio(),
                    "model_hit_ratio": p.model,
                    "seed_model_hit_ratio": p.model_seed,
                    "model_steady_hit_ratio": p.model_steady,
                    "chunks_per_s": p.chunks_per_s(),
                    "gbps": p.gbps(),
                    "pending_hits": p.pending_hits,
                    "prefetch_usefulness": p.usefulness(),
                    "l2_hit_ratio": l2_hit_ratio(p),
                    "l2_read_gbytes_per_s": p.l2_gbytes_per_s(),
                    "l2_mean_in_flight": p.mean_in_flight(),
                    "l2_queue_full_share": ratio(p.queue_full, p.queue_samples),
                    "l2_mean_backlog": p.mean_backlog(),
                    "l2_reads_given_up": p.l2_gave_up,
                    "blocked_on_full_queue_s": p.blocked_s,
                    "bench_cpu_s": p.cpu_s,
                    "elapsed_s": p.elapsed_s,
                    "iteration_max_us": p.iter_max_ns as f64 / 1e3,
                    "iteration_p999_us": p.iter_p999_ns as f64 / 1e3,
                })
            })
            .collect();
        let out = json!({
            "workload": args.workload.name(),
            "points": pts,
            "rmse": rmse,
            "model": model_name(args),
            "rmse_seed_model": rmse_seed,
            "catalogue_chunks": catalogue_chunks,
            "batch": args.batch,
            "prefetch_ahead": args.ahead(),
            "workers": args.workers(),
            "mapping": format!("{:?}", args.mapping).to_lowercase(),
            "l2": if args.emulated { "emulated".to_string() } else { format!("file ({backend_name}, {})", if direct { "O_DIRECT" } else { "buffered" }) },
            "device_seq_read_gbytes_per_s": device.as_ref().map(Device::best),
            "device_seq_read_qd1_gbytes_per_s": device.as_ref().map(|d| median(&d.qd1)),
            "device_seq_read_qd_gbytes_per_s": device.as_ref().map(|d| median(&d.qd)),
            "device_seq_read_qd64_gbytes_per_s": device.as_ref().map(|d| median(&d.deep)),
            "device_seq_read_passes": device.as_ref().map(|d| json!({
                "qd1": d.qd1,
                "qd": d.qd,
                "qd64": d.deep,
            })),
            "device_seq_read_best_pass_gbytes_per_s": device.as_ref().map(Device::best_pass),
            "device_random_extent_read_gbytes_per_s": device.as_ref().map(|d| median(&d.random)),
            "device_random_extent_read_passes": device.as_ref().map(|d| d.random.clone()),
            "l1_hit_ns_median_10m": hit_ns,
            "checksum_failures": total.checksum_failures,
        });
        println!("{out}");
    } else {
        println!(
            "workload={} catalogue={} chunks B={} workers={} mapping={:?} L2={}",
            args.workload,
            catalogue_chunks,
            args.batch,
            args.workers(),
            args.mapping,
            if args.emulated {
                format!(
                    "emulated (tau={} Gbps, {:?}, {:?})",
                    args.tau_gbps, args.delay, args.memory
                )
            } else {
                format!(
                    "file in {} ({backend_name}, {}, queue depth {})",
                    dir.display(),
                    if direct { "O_DIRECT" } else { "buffered" },
                    args.queue_depth
                )
            }
        );
        println!(
            "L1 hit ratio RMSE against the model ({}): {rmse:.4}",
            model_name(args)
        );
        match args.workload {
            WorkloadKind::Real => println!(
                "  against seed 000's eq. 4 (L1 keeps every stream's batch): {rmse_seed:.4}"
            ),
            WorkloadKind::Seq if args.ahead() => {
                println!("  against seed 000's eq. 3 (no prefetch-ahead): {rmse_seed:.4}")
            }
            _ => {}
        }
        if let Some(d) = &device {
            let best_l2 = points
                .iter()
                .map(Point::l2_gbytes_per_s)
                .fold(0.0, f64::max);
            println!(
                "device sequential read: {:.3} GB/s (1 MiB O_DIRECT, the best mode's median \
                 of {} passes, {DEVICE_PASSES} before and {DEVICE_PASSES} after the L2 runs; \
                 median [min-max] of QD1 {}, {} x QD{} {}, QD{DEEP_QD} {}); best L2 read \
                 bandwidth {:.3} GB/s = {:.0}% of it",
                d.best(),
                d.qd1.len(),
                range(&d.qd1),
                args.workers(),
                args.queue_depth,
                range(&d.qd),
                range(&d.deep),
                best_l2,
                100.0 * best_l2 / d.best().max(1e-9)
            );
            println!(
                "  (the best single pass, {:.3} GB/s, would put the L2 at {:.0}%); not the \
                 reference: {} x QD{} reads of one L2 extent ({} bytes) at random offsets, \
                 the L2's I/O without its CPU work: {} GB/s, the L2 at {:.0}% of it",
                d.best_pass(),
                100.0 * best_l2 / d.best_pass().max(1e-9),
                args.workers(),
                args.queue_depth,
                extent_bytes(args.batch),
                range(&d.random),
                100.0 * best_l2 / median(&d.random).max(1e-9)
            );
        }
        if let Some(ns) = hit_ns {
            println!("L1 hit cost, 10M entries: median {ns:.0} ns");
        }
        if total.checksum_failures > 0 {
            println!("checksum failures: {}", total.checksum_failures);
        }
    }
    Ok(())
}

/// Measured requests after the warm-up at an |L1| point.
fn window_for(args: &HcsBenchArgs, l1: u64) -> u64 {
    if args.quick {
        (20 * l1).clamp(MIN_WINDOW, 300_000)
    } else {
        (20 * l1).max(MIN_WINDOW)
    }
}

impl HcsBenchArgs {
    /// Whether the tiers read ahead (on unless `--no-prefetch-ahead`).
    fn ahead(&self) -> bool {
        !self.no_prefetch_ahead
    }

    /// Worker threads: `--workers`, else one per core available to this process (1 if that
    /// cannot be known), at most 64.
    fn workers(&self) -> u16 {
        self.workers.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(64) as u16)
        })
    }
}

/// What the points are compared with.
fn model_name(args: &HcsBenchArgs) -> &'static str {
    match (args.workload, args.replacement) {
        (WorkloadKind::Seq, _) if args.ahead() => {
            "Seq with prefetch-ahead, 1 - 1/chunks per content"
        }
        (WorkloadKind::Seq, _) => "seed 000 eq. 3",
        (WorkloadKind::Unif, _) => "seed 000 eq. 2",
        (WorkloadKind::Real, ReplacementArg::Fifo) => "stream model over the measured window",
        (WorkloadKind::Real, ReplacementArg::Lru) if args.ahead() => {
            "seed 000 eq. 4 with Che-LRU, which has no prefetch-ahead term"
        }
        (WorkloadKind::Real, ReplacementArg::Lru) => "seed 000 eq. 4 with Che-LRU",
    }
}

/// The models for one point: (compared with, seed 000's eq. 2–4, stream model's steady state).
fn models(
    args: &HcsBenchArgs,
    params: &RealParams,
    l1: u64,
    warm: u64,
    window: u64,
) -> Result<(f64, f64, Option<f64>), String> {
    let hp = HcsParams {
        l1_chunks: l1,
        catalogue: u64::from(params.catalogue_contents),
        chunks_per_content: u64::from(CHUNKS_PER_CONTENT),
        batch: u64::from(args.batch),
        alpha: params.alpha,
        policy: match args.replacement {
            ReplacementArg::Fifo => Policy::Fifo,
            ReplacementArg::Lru => Policy::Lru,
        },
    };
    let seed = predict_l1(&hp).map_err(|e| e.to_string())?;
    Ok(match args.workload {
        WorkloadKind::Seq if args.ahead() => (seed.seq_ahead, seed.seq, None),
        WorkloadKind::Seq => (seed.seq, seed.seq, None),
        WorkloadKind::Unif => (seed.unif, seed.unif, None),
        WorkloadKind::Real if args.replacement == ReplacementArg::Lru => {
            (seed.real, seed.real, None)
        }
        WorkloadKind::Real => {
            let s = Streams {
                lambda_per_s: params.lambda_per_s,
                chunk_rate_per_s: params.chunk_rate_per_s,
                prefetch_ahead: args.ahead(),
            };
            let w = predict_real_window(&hp, &s, warm, window).map_err(|e| e.to_string())?;
            (w.hit_ratio, seed.real, Some(w.steady.hit_ratio))
        }
    })
}

fn l2_hit_ratio(p: &Point) -> f64 {
    ratio(
        p.l2_batch_reads - p.l2_misses.min(p.l2_batch_reads),
        p.l2_batch_reads,
    )
}

fn print_point_line(w: WorkloadKind, p: &Point) {
    println!(
        "{w} |L1|={:>8} L1 hit={:.4} model={:.4} (pending hits {}) L2 hit={:.4} \
         prefetch usefulness={:.3} {:.0} chunks/s {:.2} Gbps L2 read {:.3} GB/s",
        p.l1_chunks,
        p.hit_ratio(),
        p.model,
        p.pending_hits,
        l2_hit_ratio(p),
        p.usefulness(),
        p.chunks_per_s(),
        p.gbps(),
        p.l2_gbytes_per_s()
    );
    if let Some(steady) = p.model_steady {
        println!(
            "    model: stream model over this window {:.4}; its steady state {steady:.4}; seed \
             000 eq. 4 {:.4}",
            p.model, p.model_seed
        );
    }
    if p.queue_samples > 0 {
        println!(
            "    L2 queue: {:.1} in flight on average, full at {:.0}% of requests, {:.1} reads \
             waiting for room on average{}; bench threads {:.2} s CPU in {:.2} s, {:.2} s \
             waiting on a full backlog; request iteration (L2 submit/poll included, waits \
             excluded) max {:.0} us, p99.9 {:.1} us",
            p.mean_in_flight(),
            100.0 * ratio(p.queue_full, p.queue_samples),
            p.mean_backlog(),
            if p.l2_gave_up > 0 {
                format!(" ({} given up)", p.l2_gave_up)
            } else {
                String::new()
            },
            p.cpu_s,
            p.elapsed_s,
            p.blocked_s,
            p.iter_max_ns as f64 / 1e3,
            p.iter_p999_ns as f64 / 1e3
        );
    }
}

/// A temporary directory removed on drop (in the system temp dir, not tmpfs-only).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, String> {
        let base = std::env::var_os("TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/var/tmp"));
        let p = base.join(format!("cascade-hcs-{}", std::process::id()));
        std::fs::create_dir_all(&p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn worker_of(mapping: Mapping, workers: u16, batch: u32, content: u32, chunk: u32) -> usize {
    let key = match mapping {
        Mapping::Content => u64::from(content),
        Mapping::Batch => (u64::from(content) << 32) | u64::from(chunk / batch),
    };
    (mix(key) % u64::from(workers)) as usize
}

/// The name TLV value `/hcs/<content>/seg=<chunk>` (17 bytes).
fn chunk_name(content: u32, chunk: u32) -> [u8; 17] {
    let mut n = [0u8; 17];
    n[..5].copy_from_slice(&[8, 3, b'h', b'c', b's']);
    n[5..7].copy_from_slice(&[8, 4]);
    n[7..11].copy_from_slice(&content.to_be_bytes());
    n[11..13].copy_from_slice(&[0x32, 4]);
    n[13..17].copy_from_slice(&chunk.to_be_bytes());
    n
}

/// (content, chunk) back from a name made by [`chunk_name`].
fn parse_name(n: &[u8]) -> Option<(u32, u32)> {
    if n.len() != 17 {
        return None;
    }
    Some((
        u32::from_be_bytes(n[7..11].try_into().ok()?),
        u32::from_be_bytes(n[13..17].try_into().ok()?),
    ))
}

fn position(content: u32, chunk: u32) -> u64 {
    u64::from(content) * u64::from(CHUNKS_PER_CONTENT) + u64::from(chunk)
}

enum L2 {
    File(Box<L2File>),
    Emu(Box<EmulatedL2>),
}

/// One worker's HCS: the L1 logic, the chunk bytes of its L1 slots, and its L2.
struct Worker {
    hcs: TierSim,
    slab: FixedArena<u8>,
    /// `(content << 32) | chunk` whose bytes are in each L1 slot (`u64::MAX`: none).
    slot_key: Vec<u64>,
    out: Vec<u8>,
    sink: u64,
    point: Point,
}

impl Worker {
    fn serve(&mut self, content: u32, chunk: u32) {
        let Some(slot) = self.hcs.l1_slot(content, chunk) else {
            return;
        };
        let key = (u64::from(content) << 32) | u64::from(chunk);
        if self.slot_key[slot as usize] == key {
            let at = slot as usize * CHUNK_BYTES;
            self.out.copy_from_slice(&self.slab[at..at + CHUNK_BYTES]);
            self.sink = self.sink.wrapping_add(u64::from(self.out[CHUNK_BYTES - 1]));
        } else {
            self.point.pending_hits += 1;
        }
    }

    /// Copies a chunk read from L2 into its L1 slot, if it is still in L1.
    fn fill(
        hcs: &TierSim,
        slab: &mut [u8],
        slot_key: &mut [u64],
        content: u32,
        chunk: u32,
        bytes: &[u8],
    ) {
        if let Some(slot) = hcs.l1_slot(content, chunk) {
            let at = slot as usize * CHUNK_BYTES;
            let n = bytes.len().min(CHUNK_BYTES);
            slab[at..at + n].copy_from_slice(&bytes[..n]);
            slot_key[slot as usize] = (u64::from(content) << 32) | u64::from(chunk);
        }
    }
}

/// Runs one |L1| point over all workers; returns the summed point and the I/O engine's name.
fn run_point(
    args: &HcsBenchArgs,
    params: &RealParams,
    dir: &Path,
    l1_total: u64,
    window: u64,
    direct: bool,
    backend: IoBackend,
) -> Result<(Point, String), String> {
    let w = usize::from(args.workers());
    // Requests, generated before timing and split by worker.
    let warm = warmup_requests(l1_total);
    let mut per: Vec<(Vec<(u32, u32)>, usize)> = (0..w).map(|_| (Vec::new(), 0)).collect();
    for (i, r) in args
        .workload
        .requests(params, args.seed)
        .take((warm + window) as usize)
        .enumerate()
    {
        let k = worker_of(args.mapping, args.workers(), args.batch, r.content, r.chunk);
        per[k].0.push((r.content, r.chunk));
        if (i as u64) < warm {
            per[k].1 += 1;
        }
    }
    let catalogue = params.catalogue_contents;
    let results: Vec<Result<(Point, String), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = per
            .into_iter()
            .enumerate()
            .map(|(i, (reqs, warm_n))| {
                s.spawn(move || {
                    run_worker(
                        args,
                        i,
                        catalogue,
                        dir,
                        (l1_total / w as u64) as usize,
                        &reqs,
                        warm_n,
                        direct,
                        backend,
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("worker panicked".into())))
            .collect()
    });
    let mut total = Point {
        l1_chunks: l1_total,
        ..Point::default()
    };
    let mut name = String::new();
    for r in results {
        let (p, n) = r?;
        total.add(&p);
        name = n;
    }
    (total.model, total.model_seed, total.model_steady) =
        models(args, params, l1_total, warm, window)?;
    Ok((total, name))
}

#[allow(clippy::too_many_arguments)]
fn run_worker(
    args: &HcsBenchArgs,
    index: usize,
    catalogue: u32,
    dir: &Path,
    l1: usize,
    reqs: &[(u32, u32)],
    warm: usize,
    direct: bool,
    backend: IoBackend,
) -> Result<(Point, String), String> {
    let batch = args.batch;
    let mut l2 = if args.emulated {
        L2::Emu(Box::new(EmulatedL2::new(EmulatedL2Config {
            capacity_chunks: u64::from(catalogue) * u64::from(CHUNKS_PER_CONTENT),
            chunk_bytes: CHUNK_BYTES as u32,
            throughput_gbps: args.tau_gbps,
            memory: match args.memory {
                MemoryArg::Static => EmuMemory::Static,
                MemoryArg::Dynamic => EmuMemory::Dynamic,
            },
            delay: match args.delay {
                DelayArg::Busy => EmuDelay::Busy,
                DelayArg::Sleep => EmuDelay::Sleep,
            },
        })?))
    } else {
        L2::File(Box::new(open_preloaded(
            args, index, catalogue, dir, direct, backend,
        )?))
    };
    let backend_name = match &l2 {
        L2::File(f) => format!("{:?}", f.backend()).to_lowercase(),
        L2::Emu(_) => "emulated".into(),
    };
    let mut wk = Worker {
        hcs: TierSim::new(TierSimConfig {
            l1_chunks: l1,
            batch,
            chunks_per_content: CHUNKS_PER_CONTENT,
            replacement: match args.replacement {
                ReplacementArg::Fifo => Replacement::Fifo,
                ReplacementArg::Lru => Replacement::Lru,
            },
            prefetch_ahead: args.ahead(),
        }),
        // Its own mapping on huge pages (2 MB each, where the kernel grants them): serving and
        // filling land on random slots of |L1| × 8 KB, which on 4 KB pages miss the TLB on
        // nearly every chunk. Written before timing: the warm-up runs the L1 logic only, so
        // the measured window would otherwise take the slab's first-touch page faults.
        slab: arena(l1 * CHUNK_BYTES, |_| 0u8),
        slot_key: vec![u64::MAX; l1],
        out: vec![0u8; CHUNK_BYTES],
        sink: 0,
        point: Point::default(),
    };
    // Warm-up: L1 logic only; the slots count as loaded.
    for &(c, k) in &reqs[..warm] {
        let o = wk.hcs.request(c, k);
        for (s, e) in [o.miss_batch, o.ahead_batch].into_iter().flatten() {
            for chunk in s..e {
                if let Some(slot) = wk.hcs.l1_slot(c, chunk) {
                    wk.slot_key[slot as usize] = (u64::from(c) << 32) | u64::from(chunk);
                }
            }
        }
    }
    let before = *wk.hcs.counters();
    let l2_before = match &l2 {
        L2::File(f) => *f.counters(),
        L2::Emu(_) => Default::default(),
    };
    let qd = usize::from(args.queue_depth);
    // Batch reads the full queue could not take yet, oldest first; at most one queue's worth.
    let backlog_cap = qd;
    let mut backlog: VecDeque<(u32, u32)> = VecDeque::with_capacity(backlog_cap);
    let mut backlog_sum = 0u64;
    let mut stalls = StallHist::new();
    let mut blocked = std::time::Duration::ZERO;
    let cpu0 = thread_cpu_s();
    let start = Instant::now();
    for &(c, k) in &reqs[warm..] {
        let t_iter = Instant::now();
        let mut waited = std::time::Duration::ZERO;
        if let L2::File(f) = &l2 {
            let n = f.in_flight();
            wk.point.in_flight_sum += n as u64;
            wk.point.queue_samples += 1;
            wk.point.queue_full += u64::from(n >= qd);
        }
        let o = wk.hcs.request(c, k);
        if o.l1_hit {
            wk.serve(c, k);
        }
        for (s, e) in [o.miss_batch, o.ahead_batch].into_iter().flatten() {
            match &mut l2 {
                L2::Emu(emu) => {
                    let Worker {
                        hcs,
                        slab,
                        slot_key,
                        ..
                    } = &mut wk;
                    emu.read_batch(position(c, s), e - s, |i, bytes| {
                        Worker::fill(hcs, slab, slot_key, c, s + i, bytes)
                    });
                }
                L2::File(f) => {
                    // Behind reads already waiting, or the queue is full: wait in the
                    // backlog (a full backlog waits for a completion first).
                    if backlog.len() == backlog_cap {
                        let tw = Instant::now();
                        wait_and_submit(&mut wk, f, &mut backlog);
                        waited += tw.elapsed();
                    }
                    backlog.push_back((c, s));
                    submit_backlog(f, &mut backlog, &mut wk.point);
                }
            }
        }
        if !o.l1_hit {
            wk.serve(c, k);
        }
        if let L2::File(f) = &mut l2 {
            let Worker {
                hcs,
                slab,
                slot_key,
                ..
            } = &mut wk;
            f.poll(|b| fill_batch(hcs, slab, slot_key, b));
            submit_backlog(f, &mut backlog, &mut wk.point);
            backlog_sum += backlog.len() as u64;
        }
        stalls.record(t_iter.elapsed().saturating_sub(waited).as_nanos() as u64);
        blocked += waited;
    }
    if let L2::File(f) = &mut l2 {
        // The window ends when every read it asked for has been submitted and completed.
        while !backlog.is_empty() {
            wait_and_submit(&mut wk, f, &mut backlog);
        }
        f.flush();
    }
    let elapsed_s = start.elapsed().as_secs_f64();
    let cpu_s = thread_cpu_s() - cpu0;
    let k = wk.hcs.counters().since(&before);
    let mut p = Point {
        requests: k.requests,
        l1_hits: k.l1_hits,
        pending_hits: wk.point.pending_hits,
        prefetch_used: k.prefetch_used,
        prefetch_evicted_unused: k.prefetch_evicted_unused,
        l2_batch_reads: k.l2_batch_reads,
        l2_misses: wk.point.l2_misses,
        elapsed_s,
        iter_max_ns: stalls.max_ns,
        iter_p999_ns: stalls.quantile_ns(0.999),
        blocked_s: blocked.as_secs_f64(),
        cpu_s,
        in_flight_sum: wk.point.in_flight_sum,
        queue_samples: wk.point.queue_samples,
        queue_full: wk.point.queue_full,
        backlog_sum,
        l2_gave_up: wk.point.l2_gave_up,
        ..Point::default()
    };
    match l2 {
        L2::File(f) => {
            let c = *f.counters();
            p.l2_bytes = c.bytes_read - l2_before.bytes_read;
            p.checksum_failures = c.checksum_failures - l2_before.checksum_failures;
            f.close().map_err(|e| e.to_string())?;
        }
        L2::Emu(e) => p.l2_bytes = e.bytes_read(),
    }
    std::hint::black_box(wk.sink);
    Ok((p, backend_name))
}

/// Copies every chunk of a completed batch read into its L1 slot.
fn fill_batch(hcs: &TierSim, slab: &mut [u8], slot_key: &mut [u64], b: &BatchRead<'_>) {
    for ch in b.chunks() {
        if let Some((c, k)) = parse_name(ch.name) {
            Worker::fill(hcs, slab, slot_key, c, k, ch.payload);
        }
    }
}

/// Waits for one L2 completion (its chunks go to their L1 slots), then submits what the
/// backlog can; with nothing in flight to wait for, the oldest backlog read is given up.
fn wait_and_submit(wk: &mut Worker, f: &mut L2File, backlog: &mut VecDeque<(u32, u32)>) {
    let Worker {
        hcs,
        slab,
        slot_key,
        point,
        ..
    } = wk;
    if !f.wait_one(|b| fill_batch(hcs, slab, slot_key, b)) {
        backlog.pop_front();
        point.l2_gave_up += 1;
    }
    submit_backlog(f, backlog, point);
}

/// Submits the backlog's batch reads, oldest first, while the L2 queue takes them (a full
/// queue is seen before any name is built).
fn submit_backlog(f: &mut L2File, backlog: &mut VecDeque<(u32, u32)>, point: &mut Point) {
    let qd = f.config().queue_depth;
    while let Some(&(c, s)) = backlog.front() {
        if f.in_flight() >= qd {
            return;
        }
        let name = chunk_name(c, s);
        let chunk = ChunkName::parse(&name).expect("valid name");
        match f.read(&chunk) {
            ReadStart::Pending { .. } => {}
            ReadStart::Miss => point.l2_misses += 1,
            ReadStart::Busy => return,
        }
        backlog.pop_front();
    }
}

/// Bytes of one L2 extent (a batch read) with the default slot size and `batch` slots.
fn extent_bytes(batch: u32) -> usize {
    let slot = u64::from(L2Config::new("", 1).slot_bytes);
    (slot * u64::from(batch)).div_ceil(EXTENT_ALIGN_BYTES) as usize * EXTENT_ALIGN_BYTES as usize
}

/// Opens worker `index`'s L2 file and writes every chunk it owns that is not there yet.
fn open_preloaded(
    args: &HcsBenchArgs,
    index: usize,
    catalogue: u32,
    dir: &Path,
    direct: bool,
    backend: IoBackend,
) -> Result<L2File, String> {
    let b = args.batch;
    let batches_per_content = CHUNKS_PER_CONTENT.div_ceil(b);
    let owned: Vec<(u32, u32)> = (0..catalogue)
        .flat_map(|c| (0..batches_per_content).map(move |k| (c, k * b)))
        .filter(|&(c, s)| worker_of(args.mapping, args.workers(), b, c, s) == index)
        .collect();
    let config = L2Config {
        direct,
        backend,
        queue_depth: usize::from(args.queue_depth),
        io_threads: usize::from(args.queue_depth),
        batch: b,
        ..L2Config::new(
            dir.join(format!("hcs-worker-{index}.l2")),
            (owned.len() as u32).max(1),
        )
    };
    let mut l2 = match L2File::open(&config) {
        Ok(l2) => l2,
        Err(L2Error::Config(_) | L2Error::Layout(_)) => {
            // A file from another geometry (our own name in our directory): start over.
            let _ = std::fs::remove_file(&config.path);
            let _ = std::fs::remove_file(config.index_path());
            L2File::open(&config).map_err(|e| e.to_string())?
        }
        Err(e) => return Err(e.to_string()),
    };
    let want: u64 = owned
        .iter()
        .map(|&(_, s)| u64::from(b.min(CHUNKS_PER_CONTENT - s)))
        .sum();
    if l2.stored_chunks() < want {
        let mut payload = vec![0u8; CHUNK_BYTES];
        for &(c, s) in &owned {
            for k in s..(s + b).min(CHUNKS_PER_CONTENT) {
                let name = chunk_name(c, k);
                let chunk = ChunkName::parse(&name).expect("valid name");
                fill_chunk(&mut payload, position(c, k));
                loop {
                    match l2.admit(&chunk, &payload) {
                        Admit::Busy => {
                            l2.wait_one(|_| {});
                        }
                        Admit::Writing | Admit::Present => break,
                        other => return Err(format!("preloading L2: {other:?}")),
                    }
                }
            }
        }
        l2.flush();
    }
    Ok(l2)
}

/// Passes of each sequential-read mode before the L2 runs, and as many again after them.
const DEVICE_PASSES: usize = 3;

/// Sequential read bandwidth of the device under the L2 directory, GB/s: every pass of each
/// mode, in the order measured.
#[derive(Debug, Clone, Default)]
struct Device {
    /// `pread` at queue depth 1.
    qd1: Vec<f64>,
    /// One reader per worker with the L2's I/O engine at the L2's queue depth.
    qd: Vec<f64>,
    /// One reader at queue depth [`DEEP_QD`] (a virtual disk may want more than the L2's
    /// depth).
    deep: Vec<f64>,
    /// Not part of the reference: the L2's own pattern without its CPU work (reads of one
    /// extent at random aligned offsets, one reader per worker at the L2's queue depth).
    random: Vec<f64>,
}

/// The deepest queue the sequential reference tries.
const DEEP_QD: usize = 64;

impl Device {
    fn add(&mut self, p: Pass) {
        self.qd1.push(p.qd1);
        self.qd.push(p.qd);
        self.deep.push(p.deep);
        self.random.push(p.random);
    }

    /// The reference: the median of the mode whose median is the highest.
    fn best(&self) -> f64 {
        median(&self.qd1)
            .max(median(&self.qd))
            .max(median(&self.deep))
    }

    /// The fastest single pass of any mode.
    fn best_pass(&self) -> f64 {
        self.qd1
            .iter()
            .chain(&self.qd)
            .chain(&self.deep)
            .fold(0.0, |a, &b| a.max(b))
    }
}

/// Median (the mean of the middle two for an even count; 0 for none).
fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// `median [min-max]` of the passes, GB/s.
fn range(v: &[f64]) -> String {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    format!("{:.3} [{lo:.3}-{hi:.3}]", median(v))
}

/// The scratch file of the sequential reference, removed on drop.
struct Scratch {
    path: PathBuf,
    bytes: u64,
}

/// Block size of the sequential reference.
const SEQ_BLOCK: usize = 1 << 20;

impl Scratch {
    /// Writes `bytes` (a multiple of [`SEQ_BLOCK`]) to a scratch file in `dir` and syncs it.
    fn write(dir: &Path, bytes: u64) -> Result<Self, String> {
        let path = dir.join("seq-scratch");
        let err = |e: std::io::Error| format!("scratch file {}: {e}", path.display());
        let f = File::create(&path).map_err(err)?;
        let scratch = Scratch {
            path: path.clone(),
            bytes,
        };
        let mut block = vec![0u8; SEQ_BLOCK];
        for (i, b) in block.iter_mut().enumerate() {
            *b = (i * 31 % 251) as u8;
        }
        let mut off = 0;
        while off < bytes {
            f.write_at(&block, off).map_err(err)?;
            off += SEQ_BLOCK as u64;
        }
        f.sync_all().map_err(err)?;
        Ok(scratch)
    }

    /// Opens the file for reading with `O_DIRECT` (or through the page cache, dropped from it,
    /// if `O_DIRECT` is refused).
    fn open(&self) -> Result<File, String> {
        let err = |e: std::io::Error| format!("scratch file {}: {e}", self.path.display());
        let f = match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&self.path)
        {
            Ok(f) => f,
            Err(_) => File::open(&self.path).map_err(err)?,
        };
        drop_cache(&f);
        Ok(f)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// GB/s of one pass of each mode.
struct Pass {
    qd1: f64,
    qd: f64,
    deep: f64,
    random: f64,
}

/// How the sequential reference reads: the L2's queue depth, readers (one per worker) and
/// I/O engine; `extent` is the L2's batch read (bytes) for the random-read figure.
struct SeqRead {
    qd: usize,
    threads: usize,
    backend: IoBackend,
    extent: usize,
}

impl SeqRead {
    /// One pass of each mode over the whole scratch file in 1 MiB blocks: `pread` at queue
    /// depth 1; `threads` readers with the L2's I/O engine at depth `qd`, each over its own
    /// contiguous part of the file; one reader at [`DEEP_QD`]; then as many bytes in reads
    /// of one L2 extent at random 4 KiB-aligned offsets (`threads` readers at depth `qd`).
    fn pass(&self, s: &Scratch) -> Result<Pass, String> {
        let bytes = s.bytes;
        let f = s.open()?;
        let mut buf = AlignedBuf::new(SEQ_BLOCK);
        let t = Instant::now();
        let mut off = 0;
        while off < bytes {
            f.read_at(buf.as_mut_slice(), off)
                .map_err(|e| format!("scratch read: {e}"))?;
            off += SEQ_BLOCK as u64;
        }
        let qd1 = bytes as f64 / t.elapsed().as_secs_f64() / 1e9;
        drop(f);
        let qd = self.at(s, self.qd, self.threads, SEQ_BLOCK, false)?;
        let deep = self.at(s, DEEP_QD, 1, SEQ_BLOCK, false)?;
        let random = self.at(s, self.qd, self.threads, self.extent, true)?;
        Ok(Pass {
            qd1,
            qd,
            deep,
            random,
        })
    }

    /// `threads` readers, each with its own I/O engine at depth `qd`, started together, each
    /// reading its share of the file in `block`-byte reads: its own contiguous part in order,
    /// or (`random`) as many reads at random 4 KiB-aligned offsets; GB/s.
    fn at(
        &self,
        s: &Scratch,
        qd: usize,
        threads: usize,
        block: usize,
        random: bool,
    ) -> Result<f64, String> {
        let bytes = s.bytes;
        let bsize = block as u64;
        let part = (bytes / bsize).div_ceil(threads as u64) * bsize;
        let mut readers = Vec::with_capacity(threads);
        for i in 0..threads as u64 {
            let f = Arc::new(s.open()?);
            let io = Io::new(f, self.backend, qd, qd).map_err(|e| format!("scratch I/O: {e}"))?;
            let bufs: Vec<AlignedBuf> = (0..qd).map(|_| AlignedBuf::new(block)).collect();
            readers.push((io, bufs, i * part, ((i + 1) * part).min(bytes), i));
        }
        let places = (bytes - bsize) / 4096 + 1;
        let mut total = 0u64;
        let t = Instant::now();
        std::thread::scope(|sc| {
            let hs: Vec<_> = readers
                .into_iter()
                .map(|(mut io, mut bufs, from, to, i)| {
                    sc.spawn(move || -> Result<u64, String> {
                        let mut next = from;
                        let mut done = from;
                        let mut x = mix(0x5eed ^ i);
                        while done < to {
                            while next < to && io.has_room() {
                                let Some(buf) = bufs.pop() else { break };
                                let offset = if random {
                                    x = mix(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
                                    x % places * 4096
                                } else {
                                    next
                                };
                                let len = block.min((to - next) as usize);
                                let op = IoOp {
                                    kind: IoKind::Read,
                                    offset,
                                    len: len.div_ceil(4096) * 4096,
                                    buf,
                                    tag: next,
                                };
                                io.submit(op)
                                    .map_err(|_| "scratch read refused".to_string())?;
                                next += len as u64;
                            }
                            let d = io.wait().ok_or("scratch read lost")?;
                            if !d.complete() {
                                return Err(format!("scratch read failed: {:?}", d.result));
                            }
                            done += d.op.len as u64;
                            bufs.push(d.op.buf);
                        }
                        Ok(done - from)
                    })
                })
                .collect();
            hs.into_iter().try_for_each(|h| {
                total += h.join().unwrap_or_else(|_| Err("reader panicked".into()))?;
                Ok::<(), String>(())
            })
        })?;
        Ok(total as f64 / t.elapsed().as_secs_f64() / 1e9)
    }
}

fn drop_cache(f: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: advisory syscall on an open descriptor.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

/// Median cost of an L1 hit with 10M entries, in ns (blocks of 1,000 random present keys).
fn l1_hit_cost_ns(seed: u64) -> f64 {
    let contents = (HIT_COST_ENTRIES as u32).div_ceil(CHUNKS_PER_CONTENT);
    let mut h = TierSim::new(TierSimConfig {
        l1_chunks: HIT_COST_ENTRIES,
        batch: 10,
        chunks_per_content: CHUNKS_PER_CONTENT,
        replacement: Replacement::Fifo,
        prefetch_ahead: false,
    });
    'fill: for c in 0..contents {
        for k in (0..CHUNKS_PER_CONTENT).step_by(10) {
            if h.l1_len() >= HIT_COST_ENTRIES {
                break 'fill;
            }
            h.request(c, k);
        }
    }
    let mut x = seed | 1;
    let mut keys = Vec::with_capacity(200 * HIT_COST_BLOCK);
    while keys.len() < keys.capacity() {
        x = mix(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
        let c = (x % u64::from(contents)) as u32;
        let k = ((x >> 32) % u64::from(CHUNKS_PER_CONTENT)) as u32;
        if h.l1_contains(c, k) {
            keys.push((c, k));
        }
    }
    let mut blocks: Vec<f64> = keys
        .chunks(HIT_COST_BLOCK)
        .map(|b| {
            let t = Instant::now();
            let mut hits = 0u32;
            for &(c, k) in b {
                hits += u32::from(h.request(c, k).l1_hit);
            }
            std::hint::black_box(hits);
            t.elapsed().as_nanos() as f64 / b.len() as f64
        })
        .collect();
    blocks.sort_by(f64::total_cmp);
    blocks[blocks.len() / 2]
}

// ------------------------------------------------------------------------------------ plot

const W: u32 = 800;
const H: u32 = 560;

/// Draws the sweep like seed 000's Fig. 5(a): L1 hit ratio against |L1| (log scale), model as a
/// line, measurements as squares. Labels use an embedded 8×8 bitmap font (no font files).
fn plot(
    path: &Path,
    workload: WorkloadKind,
    points: &[Point],
    model_at: impl Fn(f64) -> f64,
    model_label: &str,
) -> Result<(), String> {
    use plotters::prelude::*;
    let (x0, x1) = (
        points.iter().map(|p| p.l1_chunks).min().unwrap_or(1).max(1) as f64 / 1.5,
        points.iter().map(|p| p.l1_chunks).max().unwrap_or(1) as f64 * 1.5,
    );
    let mut buf = vec![255u8; (W * H * 3) as usize];
    let mut labels: Vec<(i32, i32, String, bool)> = Vec::new();
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| format!("plot: {e:?}");
        let mut chart = ChartBuilder::on(&root)
            .margin(30)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d((x0..x1).log_scale(), 0.0..1.05)
            .map_err(e)?;
        // Grid and frame by hand: plotters' mesh would draw text, and no font is registered.
        let grey = RGBColor(220, 220, 220);
        for i in 1..=5 {
            let y = f64::from(i) * 0.2;
            chart
                .draw_series(LineSeries::new([(x0, y), (x1, y)], grey))
                .map_err(e)?;
        }
        let mut t = 10f64.powf(x0.log10().ceil());
        while t <= x1 {
            chart
                .draw_series(LineSeries::new([(t, 0.0), (t, 1.05)], grey))
                .map_err(e)?;
            t *= 10.0;
        }
        chart
            .draw_series(LineSeries::new(
                [(x0, 0.0), (x1, 0.0), (x1, 1.05), (x0, 1.05), (x0, 0.0)],
                BLACK,
            ))
            .map_err(e)?;
        let model: Vec<(f64, f64)> = (0..=60)
            .map(|i| {
                let l1 = x0 * (x1 / x0).powf(f64::from(i) / 60.0);
                (l1, model_at(l1))
            })
            .collect();
        chart
            .draw_series(LineSeries::new(model, BLUE.stroke_width(2)))
            .map_err(e)?;
        chart
            .draw_series(points.iter().map(|p| {
                let (x, y) = (p.l1_chunks as f64, p.hit_ratio());
                Rectangle::new([(x / 1.04, y - 0.012), (x * 1.04, y + 0.012)], RED.filled())
            }))
            .map_err(e)?;
        for i in 0..=5 {
            let y = f64::from(i) * 0.2;
            let (px, py) = chart.backend_coord(&(x0, y));
            labels.push((px - 34, py - 4, format!("{y:.1}"), false));
        }
        let mut t = 10f64.powf(x0.log10().ceil());
        while t <= x1 {
            let (px, py) = chart.backend_coord(&(t, 0.0));
            labels.push((px - 12, py + 10, format!("{t:.0}"), false));
            t *= 10.0;
        }
        root.present().map_err(e)?;
    }
    labels.push((
        200,
        8,
        format!("{workload}: L1 hit ratio vs |L1| (chunks)"),
        true,
    ));
    labels.push((440, 40, format!("-- {model_label}"), false));
    labels.push((440, 52, "[] measured".into(), false));
    for (x, y, s, big) in labels {
        draw_text(&mut buf, x, y, &s, if big { 2 } else { 1 });
    }
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), W, H);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .and_then(|mut w| w.write_image_data(&buf))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Draws ASCII text with the embedded 8×8 font, `scale` pixels per font pixel.
fn draw_text(buf: &mut [u8], x: i32, y: i32, s: &str, scale: i32) {
    for (i, ch) in s.chars().enumerate() {
        let glyph = font8x8::legacy::BASIC_LEGACY[(ch as usize) & 0x7f];
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) == 0 {
                    continue;
                }
                for dy in 0..scale {
                    for dx in 0..scale {
                        let px = x + (i as i32 * 8 + col) * scale + dx;
                        let py = y + row as i32 * scale + dy;
                        if (0..W as i32).contains(&px) && (0..H as i32).contains(&py) {
                            let at = ((py as u32 * W + px as u32) * 3) as usize;
                            buf[at..at + 3].copy_from_slice(&[0, 0, 0]);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_names_round_trip_and_split_at_the_segment() {
        let n = chunk_name(7, 1234);
        assert_eq!(parse_name(&n), Some((7, 1234)));
        let c = ChunkName::parse(&n).unwrap();
        assert_eq!(c.segment, 1234);
        assert_eq!(c.prefix.len(), 11);
        assert_eq!(parse_name(&[0; 5]), None);
    }

    #[test]
    fn mapping_by_batch_keeps_a_batch_on_one_worker_and_spreads_batches() {
        let mut seen = [0u32; 4];
        for k in 0..1280 {
            let w = worker_of(Mapping::Batch, 4, 10, 3, k);
            assert_eq!(w, worker_of(Mapping::Batch, 4, 10, 3, k / 10 * 10));
            seen[w] += 1;
        }
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
        let w = worker_of(Mapping::Content, 4, 10, 3, 0);
        assert!((0..1280).all(|k| worker_of(Mapping::Content, 4, 10, 3, k) == w));
    }

    fn pass(qd1: f64, qd: f64, deep: f64) -> Pass {
        Pass {
            qd1,
            qd,
            deep,
            // Never part of the reference, however fast.
            random: 9.0,
        }
    }

    #[test]
    fn the_device_reference_is_the_best_modes_median_not_its_best_pass() {
        assert_eq!(median(&[]), 0.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        let mut d = Device::default();
        d.add(pass(2.6, 1.0, 1.5));
        d.add(pass(1.6, 1.1, 1.6));
        d.add(pass(1.7, 1.2, 1.7));
        // QD1 has the fastest pass (2.6) but its median (1.7) ties QD64's; QD16 is lower.
        assert_eq!(d.best(), 1.7);
        assert_eq!(d.best_pass(), 2.6);
        d.add(pass(1.5, 1.9, 2.0));
        // Medians of four passes: QD1 1.65, QD16 1.15, QD64 1.65; no single fast pass (2.6,
        // 2.0) becomes the reference.
        assert!((d.best() - 1.65).abs() < 1e-9, "{}", d.best());
        assert_eq!(range(&d.qd), "1.150 [1.000-1.900]");
        // The random-read figure reads what one L2 batch read reads: B slots of 8,704 bytes,
        // rounded up to 4 KiB.
        assert_eq!(extent_bytes(10), 90_112);
        assert_eq!(extent_bytes(1), 12_288);
    }

    #[test]
    fn a_device_pass_reads_the_scratch_file_in_every_mode_and_the_file_goes_away() {
        let dir = TempDir::new().unwrap();
        let s = Scratch::write(&dir.0, 8 << 20).unwrap();
        let seq = SeqRead {
            qd: 4,
            threads: 2,
            backend: IoBackend::Auto,
            extent: extent_bytes(10),
        };
        let p = seq.pass(&s).unwrap();
        for v in [p.qd1, p.qd, p.deep, p.random] {
            assert!(v.is_finite() && v > 0.0, "{v}");
        }
        let path = s.path.clone();
        assert!(path.exists());
        drop(s);
        assert!(!path.exists());
    }

    #[test]
    fn text_is_drawn_in_black() {
        let mut buf = vec![255u8; (W * H * 3) as usize];
        draw_text(&mut buf, 10, 10, "A1", 1);
        assert!(buf.chunks(3).any(|p| p == [0, 0, 0]));
        let mut blank = vec![255u8; (W * H * 3) as usize];
        draw_text(&mut blank, 10, 10, " ", 1);
        assert!(blank.iter().all(|&b| b == 255));
    }
}
