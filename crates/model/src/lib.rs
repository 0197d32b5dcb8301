//! Analytic models for Cascade's hierarchical content store (Mansilha et al.,
//! "Exploiting parallelism in hierarchical content stores for high-speed ICN routers", Computer
//! Networks, 2017).
//!
//! Today: Zipf popularity, Che's approximation of the characteristic time for LRU and for
//! FIFO/Random caches, the paper's L1 hit-ratio models with batch prefetching for the
//! `Seq`, `Unif` and `Real` workloads (eq. 2–6), and a stream-aware model of `Real` with a
//! FIFO L1 ([`streams`]) that also covers an L1 too small to keep each stream's prefetched
//! batch and the paper's measurement window on the workload's start-up ramp.
//!
//! [`bypass`]: the N-queue bypass model of Pan et al., "NB-Cache: Non-Blocking In-Network
//! Caching for High-Performance Content Routers" (a continuous-time Markov chain solved on a
//! sparse matrix), and its baseline, the M/M/1 queue with a drop threshold.
//!
//! Pure computation: no I/O.

use std::fmt;

pub mod bypass;
pub mod streams;

pub use streams::{
    predict_real_streams, predict_real_window, StreamPrediction, Streams, WindowPrediction,
};

/// Most bisection steps (and, separately, bracket doublings) spent solving for `T_C`.
pub const MAX_ITERATIONS: u32 = 200;

/// Relative tolerance on Che's equation: `|Σ h_i(T) − size| ≤ TOLERANCE · max(size, 1)`.
pub const TOLERANCE: f64 = 1e-10;

/// Invalid model parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelError {
    /// The catalogue has no content.
    EmptyCatalogue,
    /// The Zipf exponent is negative or not finite.
    BadAlpha(f64),
    /// The batch size is zero.
    ZeroBatch,
    /// A content has zero chunks.
    ZeroChunksPerContent,
    /// An arrival or streaming rate is not positive and finite.
    BadRate(f64),
    /// The stream model is derived for a FIFO L1 only.
    StreamModelNeedsFifo,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyCatalogue => write!(f, "the catalogue must hold at least one content"),
            Self::BadAlpha(a) => write!(f, "the Zipf exponent must be finite and >= 0, got {a}"),
            Self::ZeroBatch => write!(f, "the batch size must be at least 1"),
            Self::ZeroChunksPerContent => write!(f, "a content must have at least one chunk"),
            Self::BadRate(r) => write!(f, "rates must be finite and > 0, got {r}"),
            Self::StreamModelNeedsFifo => {
                write!(f, "the stream model is derived for a FIFO L1 only")
            }
        }
    }
}

impl std::error::Error for ModelError {}

/// Normalised Zipf popularity over `catalogue` contents: `q_i ∝ 1 / i^α`, `i = 1..=C`,
/// `Σ q_i = 1`. `α = 0` is the uniform distribution.
pub fn zipf(catalogue: usize, alpha: f64) -> Result<Vec<f64>, ModelError> {
    if catalogue == 0 {
        return Err(ModelError::EmptyCatalogue);
    }
    if !alpha.is_finite() || alpha < 0.0 {
        return Err(ModelError::BadAlpha(alpha));
    }
    let mut q: Vec<f64> = (1..=catalogue).map(|i| (i as f64).powf(-alpha)).collect();
    // Sum smallest first for accuracy.
    let total: f64 = q.iter().rev().sum();
    for x in &mut q {
        *x /= total;
    }
    Ok(q)
}

/// Replacement policy for Che's approximation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Least recently used: `h_i = 1 − e^{−q_i T}`.
    Lru,
    /// FIFO (and Random replacement, which has the same approximation):
    /// `h_i = q_i T / (1 + q_i T)`.
    Fifo,
}

impl Policy {
    /// Hit probability of an item requested at rate `q` in a cache of characteristic time `t`.
    pub fn item_hit(self, q: f64, t: f64) -> f64 {
        if t.is_infinite() {
            return if q > 0.0 { 1.0 } else { 0.0 };
        }
        let x = q * t;
        match self {
            Self::Lru => -(-x).exp_m1(),
            Self::Fifo => x / (1.0 + x),
        }
    }

    /// Expected cache occupancy `Σ_i h_i(T)` at characteristic time `t`.
    pub fn occupancy(self, popularity: &[f64], t: f64) -> f64 {
        popularity.iter().map(|&q| self.item_hit(q, t)).sum()
    }
}

/// Solution of Che's approximation for one cache.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Che {
    /// Characteristic time `T_C` (in units of the inverse of the popularity's total rate;
    /// with normalised popularity, in requests). Infinite when the cache holds everything.
    pub t_c: f64,
    /// Overall hit ratio `Σ_i q_i h_i(T_C) / Σ_i q_i`.
    pub hit_ratio: f64,
    /// `Σ_i h_i(T_C) − size`: how far the returned `T_C` is from solving the equation.
    pub residual: f64,
    /// Bisection steps taken.
    pub iterations: u32,
}

/// Che's approximation: `T_C` solving `Σ_i h_i(T) = size` for `policy`, by bracketing (doubling)
/// then bisection, with at most [`MAX_ITERATIONS`] steps each and tolerance [`TOLERANCE`];
/// and the overall hit ratio. `size` is in items (may be fractional); `size ≥` number of items
/// with non-zero popularity gives `T_C = ∞` and hit ratio 1, `size ≤ 0` gives 0.
pub fn che(popularity: &[f64], size: f64, policy: Policy) -> Che {
    let total: f64 = popularity.iter().sum();
    let live = popularity.iter().filter(|&&q| q > 0.0).count() as f64;
    if total <= 0.0 || size.is_nan() || size <= 0.0 {
        return Che {
            t_c: 0.0,
            hit_ratio: 0.0,
            residual: 0.0,
            iterations: 0,
        };
    }
    if size >= live {
        return Che {
            t_c: f64::INFINITY,
            hit_ratio: 1.0,
            residual: live - size.min(live),
            iterations: 0,
        };
    }
    let tol = TOLERANCE * size.max(1.0);
    let f = |t: f64| policy.occupancy(popularity, t) - size;
    // Bracket: occupancy is increasing in T, from 0 at T = 0 to `live` as T → ∞.
    let mut lo = 0.0_f64;
    let mut hi = 1.0 / total;
    let mut steps = 0;
    while f(hi) < 0.0 && steps < 4 * MAX_ITERATIONS {
        lo = hi;
        hi *= 2.0;
        steps += 1;
    }
    let mut t = hi;
    let mut r = f(hi);
    let mut iterations = 0;
    while r.abs() > tol && iterations < MAX_ITERATIONS {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        let rm = f(mid);
        if rm < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
        t = mid;
        r = rm;
        iterations += 1;
    }
    let hit: f64 = popularity.iter().map(|&q| q * policy.item_hit(q, t)).sum();
    Che {
        t_c: t,
        hit_ratio: (hit / total).clamp(0.0, 1.0),
        residual: r,
        iterations,
    }
}

/// Mansilha et al., eq. 2, `Unif`: `|L1| / |C|`, both in chunks, capped at 1.
pub fn unif_hit_ratio(l1_chunks: u64, catalogue_chunks: u64) -> f64 {
    if catalogue_chunks == 0 || l1_chunks >= catalogue_chunks {
        return 1.0;
    }
    l1_chunks as f64 / catalogue_chunks as f64
}

/// Mansilha et al., eq. 3, `Seq`: the first chunk of every batch misses, the other `B − 1` hit thanks to
/// prefetching, so `1 − 1/B`; it degenerates to 1 when L1 holds the whole catalogue.
pub fn seq_hit_ratio(batch: u64, l1_chunks: u64, catalogue_chunks: u64) -> f64 {
    if l1_chunks >= catalogue_chunks || batch == 0 {
        return 1.0;
    }
    1.0 - 1.0 / batch as f64
}

/// `Seq` with prefetch-ahead (the improvement the paper left for later; not in it): the
/// request for a batch's penultimate chunk reads the content's next batch, so that batch is in
/// L1 before its first chunk is asked for, and only a content's very first chunk misses:
/// `1 − 1/chunks_per_content`.
///
/// Derivation, under FIFO or LRU (in `Seq` no chunk is asked for twice while in L1, so the two
/// orders coincide): batch `k + 1` enters L1 when chunk `kB + B − 2` is asked for; before its
/// own last chunk is asked for, one more batch (`k + 2`) enters, so it survives if L1 holds
/// two batches (`|L1| ≥ 2B`). The last batch of a content has no next batch, and a content's
/// first batch has no previous one: its first chunk misses and reads it (with `B = 2` that
/// request is also the penultimate chunk's and reads batch 1 at once). With `B = 1` there is
/// no penultimate chunk and this is eq. 3 (`0`). Below `|L1| = 2B` the next batch can push
/// out the one in use, which this model does not cover: it answers eq. 3 there. As eq. 3, 1
/// when L1 holds the whole catalogue.
pub fn seq_ahead_hit_ratio(
    batch: u64,
    l1_chunks: u64,
    catalogue_chunks: u64,
    chunks_per_content: u64,
) -> f64 {
    if l1_chunks >= catalogue_chunks || chunks_per_content == 0 {
        return 1.0;
    }
    if batch < 2 || l1_chunks < 2 * batch {
        return seq_hit_ratio(batch, l1_chunks, catalogue_chunks);
    }
    1.0 - 1.0 / chunks_per_content as f64
}

/// Mansilha et al., eq. 4, `Real`: `P1st/B + (1 − 1/B) = 1 − (1 − P1st)/B`.
pub fn real_hit_ratio(batch: u64, p1st: f64) -> f64 {
    if batch == 0 {
        return 1.0;
    }
    1.0 - (1.0 - p1st.clamp(0.0, 1.0)) / batch as f64
}

/// Parameters of the L1 hit-ratio model of Mansilha et al..
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HcsParams {
    /// L1 size in chunks.
    pub l1_chunks: u64,
    /// Catalogue size in contents.
    pub catalogue: u64,
    /// Chunks per content (the paper's `Real`: 1,280).
    pub chunks_per_content: u64,
    /// Prefetch batch size `B` in chunks (the paper: 10).
    pub batch: u64,
    /// Zipf exponent of content popularity (the paper: 1).
    pub alpha: f64,
    /// L1 replacement policy (the paper: FIFO).
    pub policy: Policy,
}

impl Default for HcsParams {
    fn default() -> Self {
        Self {
            l1_chunks: 0,
            catalogue: 1,
            chunks_per_content: 1280,
            batch: 10,
            alpha: 1.0,
            policy: Policy::Fifo,
        }
    }
}

/// Predicted L1 hit ratios for the three workloads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L1Prediction {
    /// L1 size expressed in contents: `|L1| / chunks_per_content`, the size fed to Che.
    pub cache_contents: f64,
    /// Che's characteristic time (infinite if L1 holds the whole catalogue).
    pub t_c: f64,
    /// Hit probability of a content's first-chunk request (`P1st`, eq. 5).
    pub p1st: f64,
    /// `Unif` (eq. 2), with or without prefetch-ahead: after warm-up L1 holds `|L1|` distinct
    /// chunks whatever was read ahead, and a uniform request finds one with that probability.
    pub unif: f64,
    /// `Seq` (eq. 3).
    pub seq: f64,
    /// `Seq` with prefetch-ahead ([`seq_ahead_hit_ratio`]).
    pub seq_ahead: f64,
    /// `Real` (eq. 4).
    pub real: f64,
}

/// The L1 hit-ratio model of Mansilha et al.s (eq. 2–6).
///
/// Reading of the seed for `Real`: eq. 5–6 are Che's approximation over the *contents* of the
/// catalogue (`λ_m` = Zipf(α) popularity of content `m`, normalised), with `|L1|` in eq. 6
/// counted in contents. The paper sizes L1 in bytes/chunks and never states the conversion;
/// since every content of `Real` is a stream of `chunks_per_content` chunks, we take the L1
/// capacity in contents to be `|L1| / chunks_per_content` (fractional allowed). The catalogue
/// in chunks, used by `Unif` and `Seq`, is `catalogue × chunks_per_content`.
pub fn predict_l1(p: &HcsParams) -> Result<L1Prediction, ModelError> {
    if p.batch == 0 {
        return Err(ModelError::ZeroBatch);
    }
    if p.chunks_per_content == 0 {
        return Err(ModelError::ZeroChunksPerContent);
    }
    let catalogue = usize::try_from(p.catalogue).map_err(|_| ModelError::EmptyCatalogue)?;
    let popularity = zipf(catalogue, p.alpha)?;
    let catalogue_chunks = p.catalogue.saturating_mul(p.chunks_per_content);
    let cache_contents = p.l1_chunks as f64 / p.chunks_per_content as f64;
    let che = che(&popularity, cache_contents, p.policy);
    let p1st = che.hit_ratio;
    Ok(L1Prediction {
        cache_contents,
        t_c: che.t_c,
        p1st,
        unif: unif_hit_ratio(p.l1_chunks, catalogue_chunks),
        seq: seq_hit_ratio(p.batch, p.l1_chunks, catalogue_chunks),
        seq_ahead: seq_ahead_hit_ratio(
            p.batch,
            p.l1_chunks,
            catalogue_chunks,
            p.chunks_per_content,
        ),
        real: real_hit_ratio(p.batch, p1st),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() <= eps
    }

    #[test]
    fn zipf_is_normalised_and_decreasing() {
        let q = zipf(1000, 0.8).unwrap();
        assert!(close(q.iter().sum::<f64>(), 1.0, 1e-12));
        assert!(q.windows(2).all(|w| w[0] > w[1]));
        let u = zipf(4, 0.0).unwrap();
        assert!(u.iter().all(|&x| close(x, 0.25, 1e-15)));
        assert_eq!(zipf(0, 1.0), Err(ModelError::EmptyCatalogue));
        assert!(matches!(zipf(3, -1.0), Err(ModelError::BadAlpha(_))));
        assert!(matches!(zipf(3, f64::NAN), Err(ModelError::BadAlpha(_))));
    }

    #[test]
    fn che_time_satisfies_its_equation() {
        let q = zipf(10_000, 1.0).unwrap();
        for policy in [Policy::Lru, Policy::Fifo] {
            for size in [0.5, 1.0, 10.0, 100.0, 1234.5, 9_000.0, 9_999.0] {
                let s = che(&q, size, policy);
                assert!(s.t_c.is_finite() && s.t_c > 0.0);
                let occ = policy.occupancy(&q, s.t_c);
                assert!(
                    (occ - size).abs() <= 1e-8 * size.max(1.0),
                    "{policy:?} size {size}: occupancy {occ}"
                );
                assert!(s.iterations <= MAX_ITERATIONS);
                assert!((0.0..=1.0).contains(&s.hit_ratio));
            }
        }
    }

    #[test]
    fn lru_beats_fifo_on_zipf() {
        for alpha in [0.6, 0.8, 1.0, 1.2] {
            let q = zipf(5_000, alpha).unwrap();
            for size in [5.0, 50.0, 500.0, 2_500.0] {
                let lru = che(&q, size, Policy::Lru).hit_ratio;
                let fifo = che(&q, size, Policy::Fifo).hit_ratio;
                assert!(lru >= fifo - 1e-12, "α {alpha} size {size}: {lru} < {fifo}");
            }
        }
    }

    #[test]
    fn hit_ratio_grows_with_size_and_reaches_one() {
        let q = zipf(2_000, 1.0).unwrap();
        for policy in [Policy::Lru, Policy::Fifo] {
            let mut prev = 0.0;
            for size in [1.0, 2.0, 10.0, 100.0, 500.0, 1_000.0, 1_999.0, 1_999.99] {
                let h = che(&q, size, policy).hit_ratio;
                assert!(h > prev, "{policy:?} not increasing at {size}");
                prev = h;
            }
            assert!(prev > 0.99, "{policy:?}: {prev}");
            assert_eq!(che(&q, 2_000.0, policy).hit_ratio, 1.0);
            assert_eq!(che(&q, 5_000.0, policy).hit_ratio, 1.0);
            assert_eq!(che(&q, 0.0, policy).hit_ratio, 0.0);
        }
    }

    #[test]
    fn uniform_popularity_gives_size_over_catalogue() {
        let q = zipf(1_000, 0.0).unwrap();
        for policy in [Policy::Lru, Policy::Fifo] {
            for size in [1.0, 10.0, 250.0, 999.0] {
                let h = che(&q, size, policy).hit_ratio;
                assert!(close(h, size / 1_000.0, 1e-9), "{policy:?} {size}: {h}");
            }
        }
    }

    #[test]
    fn seq_unif_real_models() {
        for b in [1, 2, 8, 10, 16] {
            assert_eq!(seq_hit_ratio(b, 100, 1_000), 1.0 - 1.0 / b as f64);
        }
        assert_eq!(seq_hit_ratio(10, 1_000, 1_000), 1.0);
        assert_eq!(unif_hit_ratio(250, 1_000), 0.25);
        assert_eq!(unif_hit_ratio(5_000, 1_000), 1.0);
        assert_eq!(real_hit_ratio(10, 0.0), 0.9);
        assert_eq!(real_hit_ratio(10, 1.0), 1.0);
        assert!(close(real_hit_ratio(4, 0.5), 0.875, 1e-15));
    }

    #[test]
    fn seq_with_prefetch_ahead_misses_once_per_content() {
        // 1,280-chunk contents, B = 10: one miss per content instead of one per batch.
        assert!(close(
            seq_ahead_hit_ratio(10, 12_800, 128_000, 1_280),
            1279.0 / 1280.0,
            1e-15
        ));
        // B = 2 still reads ahead (the first request is also the penultimate chunk's).
        assert!(close(
            seq_ahead_hit_ratio(2, 4, 128_000, 1_280),
            1279.0 / 1280.0,
            1e-15
        ));
        // No penultimate chunk with B = 1, and an L1 under two batches: eq. 3.
        assert_eq!(seq_ahead_hit_ratio(1, 12_800, 128_000, 1_280), 0.0);
        assert_eq!(seq_ahead_hit_ratio(10, 19, 128_000, 1_280), 0.9);
        // The whole catalogue in L1.
        assert_eq!(seq_ahead_hit_ratio(10, 128_000, 128_000, 1_280), 1.0);
    }

    #[test]
    fn predict_l1_matches_parts() {
        let p = HcsParams {
            l1_chunks: 12_800,
            catalogue: 1_000,
            ..HcsParams::default()
        };
        let pred = predict_l1(&p).unwrap();
        assert_eq!(pred.cache_contents, 10.0);
        assert_eq!(pred.unif, 0.01);
        assert_eq!(pred.seq, 0.9);
        assert_eq!(pred.seq_ahead, 1.0 - 1.0 / 1280.0);
        let q = zipf(1_000, 1.0).unwrap();
        let p1st = che(&q, 10.0, Policy::Fifo).hit_ratio;
        assert_eq!(pred.p1st, p1st);
        assert!(close(pred.real, 1.0 - (1.0 - p1st) / 10.0, 1e-15));
        assert!(pred.real > pred.seq && pred.real < 1.0);
        let full = predict_l1(&HcsParams {
            l1_chunks: 1_280_000,
            ..p
        })
        .unwrap();
        assert_eq!(
            (full.unif, full.seq, full.seq_ahead, full.real),
            (1.0, 1.0, 1.0, 1.0)
        );
        assert_eq!(
            predict_l1(&HcsParams { batch: 0, ..p }),
            Err(ModelError::ZeroBatch)
        );
        assert_eq!(
            predict_l1(&HcsParams { catalogue: 0, ..p }),
            Err(ModelError::EmptyCatalogue)
        );
    }
}
