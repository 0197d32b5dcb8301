//! `cascade bench hcs`: the hierarchical content store of Mansilha et al., "Exploiting
//! parallelism in hierarchical content stores for high-speed ICN routers" (Computer Networks,
//! 2017), driven by its workloads.
//!
//! Each worker thread owns one HCS (no shared state): the L1 logic of
//! [`TierSim`](crate::tier_sim::TierSim) with the chunks' bytes in a slab beside it, and an L2
//! that is either a real file ([`store::L2File`], one per worker, `O_DIRECT` unless
//! `--buffered`) or the paper's emulated L2 (`--emulated`).
//! Requests reach workers by hashing the content name (H=Content) or the batch id (H=Batch).
//!
//! Per |L1| point: the requests are generated before timing (fixed seed); the paper's warm-up
//! (10 × |L1| requests) runs the L1 logic only (no L2 I/O, the chunk bytes are not loaded), then
//! the measured window (20 × |L1| requests, at least 100k) runs with real L2 reads: an L1 miss
//! submits its batch read and goes on; a hit on a chunk whose batch is still in flight is
//! counted as a pending hit. A batch read the full L2 queue cannot take waits in a backlog of
//! at most one queue's worth, submitted oldest first as completions make room, while the bench
//! thread goes on serving, as a worker that never blocks on storage would; only when the
//! backlog is full too does the thread wait for a completion.
//!
//! Prefetch-ahead is on by default, as in the router (`--no-prefetch-ahead` for the paper's own
//! setting). The model each point is compared with: for `Seq`, one miss per content with
//! prefetch-ahead ([`model::seq_ahead_hit_ratio`]) and the paper's eq. 3 without; for `Unif`,
//! eq. 2 either way (L1 holds `|L1|` distinct chunks whatever was read ahead); for
//! `Real` with a FIFO L1, the stream model ([`model::predict_real_window`]: prefetched chunks
//! evicted before their stream asks for them when L1 cannot keep a batch per active stream,
//! and the measured window's place on the workload's start-up ramp), with the paper's eq. 4 and
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

mod args;
mod device;
mod hit_cost;
mod models;
#[cfg(feature = "plot")]
mod plot;
mod point;
mod report;
mod runner;
mod worker;

pub use args::*;
pub use runner::run_hcs;

/// Chunk size `|c|` (Mansilha et al. 2017, Table 3).
const CHUNK_BYTES: usize = 8192;
/// Chunks per content (Mansilha et al. 2017, Table 3).
const CHUNKS_PER_CONTENT: u32 = 1280;

/// A 64-bit mixer (the SplitMix64 finaliser): spreads keys over workers and offsets.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
