//! Chunk-request workloads for the hierarchical content store (Table 3 and §3.3.3 of Mansilha
//! et al., "Exploiting parallelism in hierarchical content stores for high-speed ICN routers",
//! Computer Networks, 2017).
//!
//! Mansilha et al. drive their RAM+SSD content store with three synthetic workloads over a
//! catalogue of equally sized contents, each made of `chunks_per_content` chunks:
//!
//! - [`Seq`] (best case): every chunk of every content, in order, content after content;
//! - [`Unif`] (worst case): each request is a uniformly random chunk of a uniformly random
//!   content;
//! - [`Real`] (typical): contents start as a Poisson process of rate λ, each one chosen by a
//!   Zipf(α) popularity, and each is then streamed as `chunks_per_content` (1,280) chunks at a
//!   constant `chunk_rate_per_s` (8 chunks/s, i.e. 512 kbit/s of 8 KB chunks), with no shaping,
//!   so streams overlap; requests of all active streams come out merged in time order.
//!
//! The paper warms L1 up with `10 × |L1|` requests ([`warmup_requests`]) and then issues as many
//! requests as the catalogue has chunks.
//!
//! Every generator is an endless iterator (take what you need) whose memory is bounded and
//! whose output is a pure function of its parameters and seed, built on the seeded
//! [`Rng`] and [`Zipf`] of [`crate::workload`].

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fmt;
use std::str::FromStr;

use crate::workload::{Rng, Zipf};

/// Table 3: chunks in one content (160 s of streaming at 8 chunks/s).
pub const DEFAULT_CHUNKS_PER_CONTENT: u32 = 1280;
/// Table 3: streaming rate of one content, in chunks per second.
pub const DEFAULT_CHUNK_RATE_PER_S: f64 = 8.0;
/// Table 3: arrival rate of new contents (Real), per second.
pub const DEFAULT_LAMBDA_PER_S: f64 = 1.0;
/// Table 3: Zipf exponent of content popularity (Real).
pub const DEFAULT_ALPHA: f64 = 1.0;
/// Table 3: chunk size in bytes.
pub const DEFAULT_CHUNK_BYTES: u32 = 8192;
/// Table 3: catalogue of (up to) 10^6 chunks, i.e. 781 contents of 1,280 chunks.
pub const DEFAULT_CATALOGUE_CONTENTS: u32 = 1_000_000 / DEFAULT_CHUNKS_PER_CONTENT;

/// The warm-up length Mansilha et al. (2017) use before measuring: ten times the L1 size, in
/// requests.
pub fn warmup_requests(l1_chunks: u64) -> u64 {
    l1_chunks.saturating_mul(10)
}

/// One chunk request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// When the request is issued, in seconds from the start of the workload. [`Seq`] and
    /// [`Unif`] have no timing of their own and use the request index (one request per second).
    pub time_s: f64,
    /// Content id in `0..catalogue_contents` (for [`Real`], the Zipf rank: 0 is most popular).
    pub content: u32,
    /// Chunk index in `0..chunks_per_content`.
    pub chunk: u32,
}

// ---------------------------------------------------------------------------------------------
// Seq
// ---------------------------------------------------------------------------------------------

/// The sequential workload: chunk 0, 1, … of content 0, then of content 1, …, wrapping around
/// the catalogue.
#[derive(Debug, Clone)]
pub struct Seq {
    catalogue_contents: u32,
    chunks_per_content: u32,
    content: u32,
    chunk: u32,
    index: u64,
}

impl Seq {
    /// A sequential walk over `catalogue_contents × chunks_per_content` chunks (both positive).
    pub fn new(catalogue_contents: u32, chunks_per_content: u32) -> Self {
        assert!(catalogue_contents > 0, "Seq: empty catalogue");
        assert!(chunks_per_content > 0, "Seq: contents without chunks");
        Seq {
            catalogue_contents,
            chunks_per_content,
            content: 0,
            chunk: 0,
            index: 0,
        }
    }
}

impl Iterator for Seq {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        let req = Request {
            time_s: self.index as f64,
            content: self.content,
            chunk: self.chunk,
        };
        self.index += 1;
        self.chunk += 1;
        if self.chunk == self.chunks_per_content {
            self.chunk = 0;
            self.content += 1;
            if self.content == self.catalogue_contents {
                self.content = 0;
            }
        }
        Some(req)
    }
}

// ---------------------------------------------------------------------------------------------
// Unif
// ---------------------------------------------------------------------------------------------

/// The uniform workload: every request is an independent, uniformly random chunk of a uniformly
/// random content.
#[derive(Debug, Clone)]
pub struct Unif {
    catalogue_contents: u32,
    chunks_per_content: u32,
    rng: Rng,
    index: u64,
}

impl Unif {
    /// Uniform requests over `catalogue_contents × chunks_per_content` chunks (both positive).
    pub fn new(catalogue_contents: u32, chunks_per_content: u32, seed: u64) -> Self {
        assert!(catalogue_contents > 0, "Unif: empty catalogue");
        assert!(chunks_per_content > 0, "Unif: contents without chunks");
        Unif {
            catalogue_contents,
            chunks_per_content,
            rng: Rng::new(seed),
            index: 0,
        }
    }
}

impl Iterator for Unif {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        let content = self.rng.below(u64::from(self.catalogue_contents)) as u32;
        let chunk = self.rng.below(u64::from(self.chunks_per_content)) as u32;
        let req = Request {
            time_s: self.index as f64,
            content,
            chunk,
        };
        self.index += 1;
        Some(req)
    }
}

// ---------------------------------------------------------------------------------------------
// Real
// ---------------------------------------------------------------------------------------------

/// Parameters of the [`Real`] workload.
#[derive(Debug, Clone, PartialEq)]
pub struct RealParams {
    /// Contents in the catalogue (Zipf ranks).
    pub catalogue_contents: u32,
    /// Arrival rate of new content streams (Poisson), per second.
    pub lambda_per_s: f64,
    /// Zipf exponent of content popularity.
    pub alpha: f64,
    /// Chunks per content (each stream requests all of them, in order).
    pub chunks_per_content: u32,
    /// Streaming rate of one content, in chunks per second.
    pub chunk_rate_per_s: f64,
}

impl Default for RealParams {
    fn default() -> Self {
        RealParams {
            catalogue_contents: DEFAULT_CATALOGUE_CONTENTS,
            lambda_per_s: DEFAULT_LAMBDA_PER_S,
            alpha: DEFAULT_ALPHA,
            chunks_per_content: DEFAULT_CHUNKS_PER_CONTENT,
            chunk_rate_per_s: DEFAULT_CHUNK_RATE_PER_S,
        }
    }
}

impl RealParams {
    /// Mean number of concurrently active streams (Little's law):
    /// `λ × chunks_per_content / chunk_rate_per_s` (160 with Table 3's values).
    pub fn mean_active_streams(&self) -> f64 {
        self.lambda_per_s * f64::from(self.chunks_per_content) / self.chunk_rate_per_s
    }
}

/// One active stream: its next request is `chunk` at `start_s + chunk / rate`.
#[derive(Debug, Clone, Copy)]
struct Stream {
    next_s: f64,
    start_s: f64,
    id: u64,
    content: u32,
    chunk: u32,
}

impl PartialEq for Stream {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Stream {}

impl PartialOrd for Stream {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Stream {
    /// Reversed (earliest first, then oldest stream first) so that `BinaryHeap` is a min-heap.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .next_s
            .total_cmp(&self.next_s)
            .then_with(|| other.id.cmp(&self.id))
    }
}

/// The realistic workload: Poisson content arrivals, Zipf popularity, constant-rate streams,
/// merged in time order.
///
/// Memory: one heap entry per active stream. A stream lives `chunks_per_content /
/// chunk_rate_per_s` seconds (160 s), so by Little's law the heap holds on average
/// [`RealParams::mean_active_streams`] = `λ × 1280 / 8` = 160 streams with Table 3's values;
/// the count is Poisson-distributed in steady state, so it practically never exceeds
/// `mean + 8 √mean` (about 260). The Zipf table holds one `f64` per content.
#[derive(Debug, Clone)]
pub struct Real {
    params: RealParams,
    zipf: Zipf,
    arrivals: Rng,
    popularity: Rng,
    next_arrival_s: f64,
    next_id: u64,
    active: BinaryHeap<Stream>,
    max_active: usize,
}

impl Real {
    /// A realistic workload with `params` (positive catalogue, rates and chunk count,
    /// non-negative α), deterministic for `seed`.
    pub fn new(params: RealParams, seed: u64) -> Self {
        assert!(params.catalogue_contents > 0, "Real: empty catalogue");
        assert!(
            params.chunks_per_content > 0,
            "Real: contents without chunks"
        );
        assert!(
            params.lambda_per_s > 0.0 && params.lambda_per_s.is_finite(),
            "Real: bad arrival rate {}",
            params.lambda_per_s
        );
        assert!(
            params.chunk_rate_per_s > 0.0 && params.chunk_rate_per_s.is_finite(),
            "Real: bad chunk rate {}",
            params.chunk_rate_per_s
        );
        assert!(
            params.alpha >= 0.0 && params.alpha.is_finite(),
            "Real: bad Zipf exponent {}",
            params.alpha
        );
        let mut root = Rng::new(seed);
        let mut arrivals = root.fork();
        let popularity = root.fork();
        let zipf = Zipf::new(params.catalogue_contents as usize, params.alpha);
        let first = exponential(&mut arrivals, params.lambda_per_s);
        Real {
            params,
            zipf,
            arrivals,
            popularity,
            next_arrival_s: first,
            next_id: 0,
            active: BinaryHeap::new(),
            max_active: 0,
        }
    }

    /// The workload's parameters.
    pub fn params(&self) -> &RealParams {
        &self.params
    }

    /// Streams currently active (started and not finished).
    pub fn active_streams(&self) -> usize {
        self.active.len()
    }

    /// The most streams that were ever active at once so far.
    pub fn max_active_streams(&self) -> usize {
        self.max_active
    }

    /// Starts every stream that arrives no later than the earliest pending chunk request.
    fn admit_arrivals(&mut self) {
        while self
            .active
            .peek()
            .is_none_or(|s| self.next_arrival_s <= s.next_s)
        {
            let start_s = self.next_arrival_s;
            let content = self.zipf.sample(&mut self.popularity) as u32;
            self.active.push(Stream {
                next_s: start_s,
                start_s,
                id: self.next_id,
                content,
                chunk: 0,
            });
            self.next_id += 1;
            self.max_active = self.max_active.max(self.active.len());
            self.next_arrival_s += exponential(&mut self.arrivals, self.params.lambda_per_s);
        }
    }
}

/// An exponential inter-arrival time of rate `rate` (mean `1 / rate`).
fn exponential(rng: &mut Rng, rate: f64) -> f64 {
    // 1 - U is in (0, 1], so the logarithm is finite.
    -(1.0 - rng.f64()).ln() / rate
}

impl Iterator for Real {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        self.admit_arrivals();
        let mut stream = self.active.pop()?;
        let req = Request {
            time_s: stream.next_s,
            content: stream.content,
            chunk: stream.chunk,
        };
        stream.chunk += 1;
        if stream.chunk < self.params.chunks_per_content {
            stream.next_s = stream.start_s + f64::from(stream.chunk) / self.params.chunk_rate_per_s;
            self.active.push(stream);
        }
        Some(req)
    }
}

// ---------------------------------------------------------------------------------------------
// Selection by name
// ---------------------------------------------------------------------------------------------

/// The three workloads of Table 3 of Mansilha et al. (2017).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// [`Seq`]: chunks in order.
    Seq,
    /// [`Unif`]: uniformly random chunks.
    Unif,
    /// [`Real`]: Poisson arrivals, Zipf popularity, constant-rate streams.
    Real,
}

impl WorkloadKind {
    /// All kinds, in the paper's order of presentation.
    pub const ALL: [WorkloadKind; 3] = [WorkloadKind::Seq, WorkloadKind::Unif, WorkloadKind::Real];

    /// The CLI name: `"seq"`, `"unif"` or `"real"`.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Seq => "seq",
            WorkloadKind::Unif => "unif",
            WorkloadKind::Real => "real",
        }
    }

    /// The kind called `name` (case-insensitive), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }

    /// This workload's requests with `params`, deterministic for `seed` ([`Seq`] ignores the
    /// seed, [`Seq`] and [`Unif`] ignore λ, α and the chunk rate).
    pub fn requests(self, params: &RealParams, seed: u64) -> Requests {
        match self {
            WorkloadKind::Seq => Requests::Seq(Seq::new(
                params.catalogue_contents,
                params.chunks_per_content,
            )),
            WorkloadKind::Unif => Requests::Unif(Unif::new(
                params.catalogue_contents,
                params.chunks_per_content,
                seed,
            )),
            WorkloadKind::Real => Requests::Real(Box::new(Real::new(params.clone(), seed))),
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WorkloadKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::from_name(s).ok_or_else(|| format!("unknown workload {s:?} (seq, unif or real)"))
    }
}

/// The requests of any [`WorkloadKind`].
#[derive(Debug, Clone)]
pub enum Requests {
    /// A [`Seq`] workload.
    Seq(Seq),
    /// A [`Unif`] workload.
    Unif(Unif),
    /// A [`Real`] workload.
    Real(Box<Real>),
}

impl Iterator for Requests {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        match self {
            Requests::Seq(w) => w.next(),
            Requests::Unif(w) => w.next(),
            Requests::Real(w) => w.next(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn small_real(chunks: u32) -> RealParams {
        RealParams {
            catalogue_contents: 100,
            chunks_per_content: chunks,
            ..RealParams::default()
        }
    }

    #[test]
    fn deterministic_for_a_seed() {
        let params = RealParams::default();
        for kind in WorkloadKind::ALL {
            let a: Vec<Request> = kind.requests(&params, 7).take(10_000).collect();
            let b: Vec<Request> = kind.requests(&params, 7).take(10_000).collect();
            assert_eq!(a, b, "{kind}");
            if kind != WorkloadKind::Seq {
                let c: Vec<Request> = kind.requests(&params, 8).take(10_000).collect();
                assert_ne!(a, c, "{kind}: seeds 7 and 8 agree");
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for kind in WorkloadKind::ALL {
            assert_eq!(kind.name().parse::<WorkloadKind>(), Ok(kind));
        }
        assert_eq!(WorkloadKind::from_name("REAL"), Some(WorkloadKind::Real));
        assert!("zipf".parse::<WorkloadKind>().is_err());
        assert_eq!(warmup_requests(1000), 10_000);
    }

    #[test]
    fn seq_walks_chunks_in_order_and_wraps() {
        let reqs: Vec<Request> = Seq::new(3, 4).take(3 * 4 * 2 + 1).collect();
        for (i, r) in reqs.iter().enumerate() {
            let j = (i % 12) as u32;
            assert_eq!((r.content, r.chunk), (j / 4, j % 4), "request {i}");
            assert_eq!(r.time_s, i as f64);
        }
    }

    #[test]
    fn unif_covers_the_catalogue_uniformly() {
        let (contents, chunks) = (20u32, 10u32);
        let cells = (contents * chunks) as usize;
        let n = cells * 500;
        let mut hist = vec![0u64; cells];
        for r in Unif::new(contents, chunks, 3).take(n) {
            assert!(r.content < contents && r.chunk < chunks);
            hist[(r.content * chunks + r.chunk) as usize] += 1;
        }
        let expected = n as f64 / cells as f64;
        let chi2: f64 = hist
            .iter()
            .map(|&o| (o as f64 - expected).powi(2) / expected)
            .sum();
        // 199 degrees of freedom: mean 199, sd ≈ 20; this bound is ~5 sd out.
        assert!(chi2 < 300.0, "chi-square {chi2}");
        assert!(hist.iter().all(|&o| o > 0));
    }

    #[test]
    fn real_arrival_rate_and_zipf_popularity() {
        // Short streams keep the run fast; arrivals and popularity do not depend on length.
        let params = small_real(8);
        let mut w = Real::new(params.clone(), 11);
        let mut starts = vec![0u64; params.catalogue_contents as usize];
        let mut arrivals = 0u64;
        let mut last_start = 0.0;
        let mut last_time = 0.0;
        while arrivals < 40_000 {
            let r = w.next().expect("endless");
            assert!(r.time_s >= last_time);
            last_time = r.time_s;
            if r.chunk == 0 {
                arrivals += 1;
                starts[r.content as usize] += 1;
                last_start = r.time_s;
            }
        }
        let rate = arrivals as f64 / last_start;
        assert!(
            (rate - params.lambda_per_s).abs() < 0.05 * params.lambda_per_s,
            "arrival rate {rate}"
        );
        let harmonic: f64 = (1..=params.catalogue_contents)
            .map(|k| f64::from(k).powf(-params.alpha))
            .sum();
        for (rank, &count) in starts.iter().enumerate().take(3) {
            let p = ((rank + 1) as f64).powf(-params.alpha) / harmonic;
            let share = count as f64 / arrivals as f64;
            assert!((share - p).abs() < 0.015, "rank {rank}: {share} vs {p}");
        }
        assert!(starts[0] > starts[9] && starts[9] > starts[99]);
    }

    #[test]
    fn real_streams_are_consecutive_and_bounded() {
        let params = RealParams::default();
        let spacing = 1.0 / params.chunk_rate_per_s;
        let mean = params.mean_active_streams();
        assert_eq!(mean, 160.0);
        let bound = (mean + 8.0 * mean.sqrt()) as usize;
        let mut w = Real::new(params.clone(), 5);
        // Open streams: (content, next chunk, expected time of that chunk).
        let mut open: Vec<(u32, u32, f64)> = Vec::new();
        let mut completed = 0;
        let mut last_time = 0.0;
        for _ in 0..400_000 {
            let r = w.next().expect("endless");
            assert!(r.time_s >= last_time, "time went back");
            last_time = r.time_s;
            assert!(r.chunk < params.chunks_per_content);
            if r.chunk == 0 {
                open.push((r.content, 1, r.time_s + spacing));
            } else {
                let i = open
                    .iter()
                    .position(|&(c, k, t)| {
                        c == r.content && k == r.chunk && (t - r.time_s).abs() < 1e-6
                    })
                    .unwrap_or_else(|| panic!("chunk out of sequence: {r:?}"));
                if r.chunk + 1 == params.chunks_per_content {
                    open.swap_remove(i);
                    completed += 1;
                } else {
                    open[i].1 += 1;
                    open[i].2 = r.time_s + spacing;
                }
            }
            assert!(open.len() <= w.active_streams());
            assert!(
                w.active_streams() <= bound,
                "{} streams",
                w.active_streams()
            );
        }
        assert!(completed > 100, "only {completed} streams completed");
        assert!(w.max_active_streams() <= bound);
        assert!(w.max_active_streams() as f64 > 0.8 * mean);
    }
}
