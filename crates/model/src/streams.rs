//! Stream-aware L1 model of the `Real` workload of Mansilha et al., "Exploiting parallelism in
//! hierarchical content stores for high-speed ICN routers" (Computer Networks, 2017), with a FIFO
//! L1.
//!
//! # Why the paper's model is not enough
//!
//! Eq. 4–6 assume that the `B − 1` chunks a batch read brings into L1 stay there until the
//! stream that caused the read asks for them, so that only a batch's first chunk can miss. A
//! stream asks for them one every `Δ = 1 / r` seconds (`r` = 8 chunks/s), so the last one
//! waits `(B − 1) Δ` (1.125 s for `B = 10`). With `N = λ × S / r` streams active (Little's
//! law: arrivals λ per second, each streaming `S` chunks for `S / r` seconds; 160 with Table
//! 3's values), a FIFO L1 of `L` chunks keeps a chunk for only about `L / (r N)` seconds when
//! every stream reads one batch per batch it plays — 1 s for `L` = 1,280, shorter than the
//! 1.125 s the last prefetched chunk waits. A chunk evicted before its request misses and reads
//! the batch again, which inserts `B` more chunks, shortens the time every chunk stays and
//! evicts more prefetched chunks: below a critical L1 size the hit ratio collapses (to about
//! `1 − 5/B` at `L` = 1,280: each stream reads every batch five times).
//!
//! # The model
//!
//! **Items.** L1 is modelled per *batch* `(m, k)` (content `m`, batch `k`): the `b` chunks of
//! one read enter L1 together at the FIFO head and, `L` insertions later, leave together, so a
//! batch is either wholly in L1 ("on") or wholly out, and a read inserts all its `b` chunks.
//!
//! **Requests of one batch.** Each stream of content `m` passes over batch `k` exactly once,
//! a fixed time after it started; stream starts are Poisson with rate `λ q_m` (`q_m` =
//! Zipf(α) popularity), so the passes (*visits*) over batch `(m, k)` are Poisson with rate
//! `ρ_m = λ q_m`. A visit is a fixed sequence of events at offsets `o_0 < o_1 < …`: the `b`
//! requests `0, Δ, …, (b − 1) Δ`, and with prefetch-ahead also, `2Δ` before the first one, the
//! read-ahead issued at the previous batch's penultimate chunk (an event that reads the batch
//! if it is off, but is not a request). The batches of a content are independent items of
//! this kind (the paper's Che approximation makes the same independence assumption between
//! contents).
//!
//! **Sojourn.** Each insertion keeps the batch on for a sojourn `T`: the time the next `L`
//! inserted chunks take, i.e. `L / B` further batch reads. Reads come from many independent
//! streams, so we take them to be a Poisson process (Palm–Khintchine); then `T` is Gamma
//! distributed with shape `κ = L / B` and mean `T̄`, independently for each insertion. `T̄`
//! plays the role of Che's characteristic time, but in seconds. (With a deterministic `T`,
//! the occupancy below is a step function of `T` with steps at multiples of `Δ`, and its roots
//! sit on the steps; the spread of `T` is what decides which side of a step the L1 settles on.)
//!
//! **One batch's cycle.** A batch inserted at time 0 by an event with index `j` of some visit
//! (the *trigger*) is on during `[0, T)`; every event in that time hits; the first event at or
//! after `T` misses and starts the next cycle. It comes either from the trigger visit itself —
//! its first event `i > j` with `o_i − o_j ≥ T`, at `O = o_i − o_j − T` after `T` — or from
//! another visit. Other visits are taken to be an independent Poisson process (Che's
//! assumption again): the first of their events after `T` comes after `x` with probability
//! `S(x) = exp(−ρ ℓ(x))`, `ℓ(x) = x + Σ_{i≥1} min(x, o_i − o_{i−1})` being the measure of
//! visit starts with an event in `[T, T + x]`; such an event has index `i` with density
//! `ρ S(x)` for each `i` that is 0 or whose gap `o_i − o_{i−1}` exceeds `x`. This gives a
//! Markov chain on the trigger index with transitions (averaging over `T`)
//!
//! ```text
//! P(j → i) = E[S(O); own event i is next]           (own visit, i > j)
//! P(j → k) += E[ρ A(min(O, g_k))]                   (another visit, index k; O = ∞ if the
//!                                                    trigger visit has no event after T)
//! E[W | j] = E[A(O)],   A(x) = ∫_0^x S(y) dy
//! ```
//!
//! where `g_k` is event `k`'s gap (`g_0 = ∞`) and `W` the wait from `T` to the next miss. With
//! its stationary law `π`, a batch's mean cycle is `E[C] = T̄ + Σ_j π_j E[W | j]` (renewal
//! reward), it is on a share `T̄ / E[C]` of the time, is read `1 / E[C]` times per second, and
//! `Σ_{j request} π_j / E[C]` of those reads are request misses (the rest are read-aheads).
//! The Gamma averages are closed forms: on each piece where `ℓ` is linear, `S(O)` and `A(O)`
//! are `c₁ + c₂ e^{−uO}`, and `E[e^{uT}; a < T ≤ c] = (1 − uθ)^{−κ} (F_{κ,θ'}(c) − F_{κ,θ'}(a))`
//! with `θ = T̄ / κ`, `θ' = θ / (1 − uθ)` and `F` the Gamma CDF.
//!
//! **Occupancy (Che's equation in seconds).** Summing over all batches of the catalogue,
//!
//! ```text
//! Σ_batches b · T̄ / E[C](T̄) = L,
//! L1 hit ratio = 1 − Σ_batches (request misses per second) / (λ S)
//! ```
//!
//! (`λ S` = requests per second). The occupancy is not monotone in `T̄` when `T̄` is near the
//! visit's length — this is the collapse — so there can be several roots; we take the
//! largest, the stable state that an L1 reaches from a hot start (the paper's warm-up): the
//! occupancy grows through `L` there, and it is where the L1 stays while that state exists.
//!
//! **Limits.** When visits take no time (`r → ∞`) a batch is never re-read during its visit,
//! `E[W] = 1 / ρ_m`, `E[C] = T̄ + 1 / ρ_m`, the share on is `ρ_m T̄ / (1 + ρ_m T̄)` and the
//! equations are exactly eq. 4–6 ([`crate::predict_l1`]) with `T_C = λ T̄`. With visits of
//! finite length, the only other difference at large `L` is that a visit already under way
//! when its batch leaves L1 reads it again at once (a term of order `ρ_m b Δ`); both models
//! tend to 1 as `L` grows.
//!
//! **The paper's measurement window.** The workload starts with no stream (the paper's and
//! Cascade's generators), so at time `t < S / r` only `λ t` streams are active, they have
//! reached only the first `r t` chunks of their contents, and the requests so far number
//! `Λ(t) = λ r t² / 2` (then `λ S` per second). At time `t` the model is the one above with
//! only the share `φ = min(1, t r / S)` of every content's batches live. The paper warms L1 up
//! with `10 |L1|` requests and measures the next ones, so for a small L1 the window lies on
//! this ramp: [`predict_real_window`] averages the hit ratio over the window's requests (the
//! largest root at each `t`; as `t` grows the occupancy grows at every `T̄`, so that root only
//! moves down, as the L1 itself does when its state collapses).
//!
//! Not modelled: the fluctuation of the number of active streams (Poisson, ±√N) and of the
//! time the collapse happens in one run; LRU (the paper's policy is FIFO, for which the
//! chunks of one read leave together).

use crate::{zipf, HcsParams, ModelError, Policy};

/// Bisection steps on `T̄`.
const ROOT_STEPS: u32 = 80;
/// Points of the window average (midpoints in request order).
const WINDOW_POINTS: usize = 64;
/// Probability below which an interval of `T` is ignored.
const NEGLIGIBLE: f64 = 1e-300;

/// Timing of the `Real` workload and the prefetch mode (Table 3 and §3.3.3 of the paper).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Streams {
    /// Stream (content) arrivals per second, Poisson (Table 3: 1).
    pub lambda_per_s: f64,
    /// Chunks per second of one stream (Table 3: 8).
    pub chunk_rate_per_s: f64,
    /// Read the next batch when the current batch's penultimate chunk is requested.
    pub prefetch_ahead: bool,
}

impl Default for Streams {
    fn default() -> Self {
        Self {
            lambda_per_s: 1.0,
            chunk_rate_per_s: 8.0,
            prefetch_ahead: false,
        }
    }
}

impl Streams {
    /// Mean number of active streams in steady state (Little's law):
    /// `λ × chunks_per_content / chunk_rate` (160 with Table 3's values).
    pub fn mean_active(&self, chunks_per_content: u64) -> f64 {
        self.lambda_per_s * chunks_per_content as f64 / self.chunk_rate_per_s
    }

    /// Seconds one stream lasts: `chunks_per_content / chunk_rate`.
    pub fn duration_s(&self, chunks_per_content: u64) -> f64 {
        chunks_per_content as f64 / self.chunk_rate_per_s
    }
}

/// The stream model's prediction for one state of the workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamPrediction {
    /// Mean sojourn of a chunk in L1 `T̄`, seconds (infinite when L1 holds every live chunk).
    pub t_mean_s: f64,
    /// L1 hit ratio of the requests.
    pub hit_ratio: f64,
    /// Batch reads from L2 (misses and read-aheads) per request.
    pub reads_per_request: f64,
    /// Active streams.
    pub active_streams: f64,
    /// Share of each content's batches that streams have reached (1 in steady state).
    pub live_share: f64,
}

/// The stream model averaged over a measurement window of the paper's protocol.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowPrediction {
    /// Mean L1 hit ratio over the window's requests.
    pub hit_ratio: f64,
    /// Batch reads per request over the window.
    pub reads_per_request: f64,
    /// Expected workload time of the window's first request, s.
    pub start_s: f64,
    /// Expected workload time of the window's last request, s.
    pub end_s: f64,
    /// Fewest expected active streams during the window.
    pub min_active_streams: f64,
    /// The steady state (every content's batches live, `λ S / r` streams).
    pub steady: StreamPrediction,
}

/// One kind of batch: its visit's events and how many batches of a content are of this kind.
#[derive(Debug, Clone)]
struct Shape {
    /// Event offsets from the first event, s.
    offs: Vec<f64>,
    /// Whether each event is a request (else a read-ahead).
    request: Vec<bool>,
    /// Chunks in the batch.
    chunks: f64,
    /// Batches of this kind per content.
    per_content: f64,
    /// Gap before each event (`gaps[0] = ∞`).
    gaps: Vec<f64>,
    /// Breakpoints of `ℓ`: 0 then the distinct finite gaps, ascending.
    xs: Vec<f64>,
    /// Slope of `ℓ` on `[xs[q], xs[q + 1])`: 1 + events whose gap exceeds `xs[q]`.
    beta: Vec<f64>,
    /// For every `(j, i, q)`: the `T` interval where the trigger `j`'s next own event is `i`
    /// and `O` lies in piece `q`.
    triples: Vec<Triple>,
    /// The distinct ends of those intervals and of `o_last − o_j`, ascending.
    points: Vec<f64>,
    /// Index in `points` of `o_last − o_j`, for each trigger `j` (the trigger's visit has no
    /// event left after `T` beyond it).
    last: Vec<usize>,
}

#[derive(Debug, Clone, Copy)]
struct Triple {
    j: usize,
    i: usize,
    q: usize,
    /// `T ∈ (points[lo], points[hi]]`.
    lo: usize,
    hi: usize,
    /// `O = k0 − T`.
    k0: f64,
    /// `O` ranges over `[o_lo, o_hi)`.
    o_hi: f64,
}

impl Shape {
    fn new(offs: Vec<f64>, request: Vec<bool>, chunks: f64, per_content: f64) -> Self {
        let e = offs.len();
        let mut gaps = vec![f64::INFINITY; e];
        for i in 1..e {
            gaps[i] = offs[i] - offs[i - 1];
        }
        let mut xs: Vec<f64> = gaps[1..].to_vec();
        xs.push(0.0);
        xs.sort_by(f64::total_cmp);
        xs.dedup_by(|a, b| (*a - *b).abs() <= 1e-12 * b.abs().max(1e-300));
        let beta: Vec<f64> = xs
            .iter()
            .map(|&x| 1.0 + gaps[1..].iter().filter(|&&g| g > x * (1.0 + 1e-12)).count() as f64)
            .collect();
        let mut raw = Vec::new();
        let mut ends = Vec::new();
        for j in 0..e {
            ends.push(offs[e - 1] - offs[j]);
            for i in j + 1..e {
                let k0 = offs[i] - offs[j];
                for q in 0..xs.len() {
                    if xs[q] >= gaps[i] * (1.0 - 1e-12) {
                        break;
                    }
                    let o_hi = xs.get(q + 1).copied().unwrap_or(f64::INFINITY).min(gaps[i]);
                    let (t_lo, t_hi) = ((k0 - o_hi).max(0.0), k0 - xs[q]);
                    ends.push(t_lo);
                    ends.push(t_hi);
                    raw.push((j, i, q, t_lo, t_hi, k0, o_hi));
                }
            }
        }
        ends.sort_by(f64::total_cmp);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12);
        ends.dedup_by(|a, b| close(*a, *b));
        let at = |x: f64| -> usize {
            let k = ends.partition_point(|&p| p < x && !close(p, x));
            k.min(ends.len() - 1)
        };
        let triples = raw
            .into_iter()
            .map(|(j, i, q, t_lo, t_hi, k0, o_hi)| Triple {
                j,
                i,
                q,
                lo: at(t_lo),
                hi: at(t_hi),
                k0,
                o_hi,
            })
            .collect();
        let last = (0..e).map(|j| at(offs[e - 1] - offs[j])).collect();
        Self {
            offs,
            request,
            chunks,
            per_content,
            gaps,
            xs,
            beta,
            triples,
            points: ends,
            last,
        }
    }

    /// Events of one visit.
    fn events(&self) -> usize {
        self.offs.len()
    }

    /// Longest time from an event to the visit's last one.
    fn span(&self) -> f64 {
        self.offs[self.offs.len() - 1] - self.offs[0]
    }
}

/// The batch kinds of one content.
fn shapes(chunks_per_content: u64, batch: u64, s: &Streams) -> Vec<Shape> {
    let dt = 1.0 / s.chunk_rate_per_s;
    let full = chunks_per_content / batch;
    let rest = chunks_per_content - full * batch;
    // A batch of `b` chunks; `ahead`: preceded, 2Δ before its first request, by the read-ahead
    // of the previous batch's penultimate chunk.
    let visit = |b: u64, ahead: bool, per_content: f64| {
        let mut offs = Vec::with_capacity(b as usize + 1);
        let mut request = Vec::with_capacity(b as usize + 1);
        if ahead {
            offs.push(0.0);
            request.push(false);
        }
        let base = if ahead { 2.0 * dt } else { 0.0 };
        for c in 0..b {
            offs.push(base + c as f64 * dt);
            request.push(true);
        }
        Shape::new(offs, request, b as f64, per_content)
    };
    // `Hcs` reads ahead from a batch of at least 2 chunks that is not the content's last.
    let ahead = s.prefetch_ahead && batch >= 2;
    let mut out = Vec::new();
    if ahead {
        if full >= 1 {
            out.push(visit(batch, false, 1.0));
            if full >= 2 {
                out.push(visit(batch, true, (full - 1) as f64));
            }
            if rest > 0 {
                out.push(visit(rest, true, 1.0));
            }
        } else {
            out.push(visit(rest, false, 1.0));
        }
    } else {
        if full > 0 {
            out.push(visit(batch, false, full as f64));
        }
        if rest > 0 {
            out.push(visit(rest, false, 1.0));
        }
    }
    out
}

/// Per-batch results at one `T̄`.
#[derive(Debug, Clone, Copy, Default)]
struct Cycle {
    /// Mean cycle between reads, s.
    mean: f64,
    /// Share of reads caused by a request (not a read-ahead).
    request_share: f64,
}

/// The Gamma law of the sojourn: shape `kappa`, scale `theta`.
#[derive(Debug, Clone, Copy)]
struct Sojourn {
    kappa: f64,
    theta: f64,
}

impl Sojourn {
    fn mean(&self) -> f64 {
        self.kappa * self.theta
    }

    /// `P(T ≤ x)` for this law with scale `theta`.
    fn cdf_with(&self, theta: f64, x: f64) -> f64 {
        if x <= 0.0 {
            0.0
        } else if x.is_infinite() {
            1.0
        } else {
            gamma_p(self.kappa, x / theta)
        }
    }

    /// `E[e^{u T}; a < T ≤ c]` for `u ≥ 0`, `c` finite; `cdf_u(x)` must give the CDF of the
    /// law with scale `θ / (1 − uθ)` when `uθ < 0.5` (closed form), else it is not used and the
    /// moment is integrated numerically (small shapes only: a broad law).
    fn exp_moment(&self, u: f64, a: f64, c: f64, cdf_u: impl FnOnce() -> (f64, f64)) -> f64 {
        if c <= a {
            return 0.0;
        }
        let ut = u * self.theta;
        if ut < 0.5 {
            let scale = (-self.kappa * (-ut).ln_1p()).exp();
            let (fa, fc) = cdf_u();
            scale * (fc - fa).max(0.0)
        } else {
            // 16-point Gauss–Legendre on (a, c].
            let (mid, half) = (0.5 * (a + c), 0.5 * (c - a));
            let ln_norm = ln_gamma(self.kappa) + self.kappa * self.theta.ln();
            GL16.iter()
                .map(|&(x, w)| {
                    let t = mid + half * x;
                    let ln_pdf = (self.kappa - 1.0) * t.ln() - t / self.theta - ln_norm;
                    w * half * (u * t + ln_pdf).exp()
                })
                .sum()
        }
    }
}

/// One batch of `shape` whose visits come at rate `rho`, with sojourn law `soj`; `cdf[p]` is
/// that law's CDF at `shape.points[p]`; `memo` is scratch space.
fn cycle(shape: &Shape, rho: f64, soj: &Sojourn, cdf: &[f64], memo: &mut Vec<f64>) -> Cycle {
    let e = shape.events();
    let nq = shape.xs.len();
    // S and A at the breakpoints, and A(∞).
    let mut s_at = vec![1.0; nq];
    let mut a_at = vec![0.0; nq];
    for q in 1..nq {
        let w = shape.xs[q] - shape.xs[q - 1];
        let u = rho * shape.beta[q - 1];
        s_at[q] = s_at[q - 1] * (-u * w).exp();
        a_at[q] = a_at[q - 1] + s_at[q - 1] * w * exprel(-u * w);
    }
    let a_inf = a_at[nq - 1] + s_at[nq - 1] / (rho * shape.beta[nq - 1]);
    // A(x) for a finite x (the gaps).
    let a_of = |x: f64| -> f64 {
        if x.is_infinite() {
            return a_inf;
        }
        let q = shape.xs.partition_point(|&b| b <= x).saturating_sub(1);
        let d = x - shape.xs[q];
        a_at[q] + s_at[q] * d * exprel(-rho * shape.beta[q] * d)
    };
    let a_gap: Vec<f64> = shape.gaps.iter().map(|&g| a_of(g)).collect();
    let t_mean = soj.mean();
    // Fast path: the sojourn (almost) never ends before the visit does.
    if cdf[shape.last[0]] <= NEGLIGIBLE {
        // From any trigger: the next read is another visit's event k with prob. ρ A(g_k).
        let share: f64 = (0..e)
            .filter(|&k| shape.request[k])
            .map(|k| rho * a_gap[k])
            .sum();
        return Cycle {
            mean: t_mean + a_inf,
            request_share: share.clamp(0.0, 1.0),
        };
    }
    let np = shape.points.len();
    memo.clear();
    memo.resize(nq * np, f64::NAN);
    let mut p = vec![0.0; e * e];
    let mut ew = vec![0.0; e];
    for t in &shape.triples {
        let m = (cdf[t.hi] - cdf[t.lo]).max(0.0);
        if m <= NEGLIGIBLE {
            continue;
        }
        let q = t.q;
        let u = rho * shape.beta[q];
        let xq = shape.xs[q];
        let (a, c) = (shape.points[t.lo], shape.points[t.hi]);
        let theta_u = soj.theta / (1.0 - u * soj.theta);
        let mut cdf_u = |k: usize| -> f64 {
            let slot = &mut memo[q * np + k];
            if slot.is_nan() {
                *slot = soj.cdf_with(theta_u, shape.points[k]);
            }
            *slot
        };
        let moment = soj.exp_moment(u, a, c, || (cdf_u(t.lo), cdf_u(t.hi)));
        // E[e^{−u (O − x_q)}] over this piece, O = k0 − T.
        let mu = (-u * (t.k0 - xq)).exp() * moment;
        let own = s_at[q] * mu;
        // E[A(O)] on the piece: A(O) = A(x_q) + S(x_q) (1 − e^{−u (O − x_q)}) / u.
        let ea = if u > 0.0 {
            (a_at[q] + s_at[q] / u) * m - s_at[q] / u * mu
        } else {
            a_at[q] * m + s_at[q] * (t.k0 - xq) * m
        };
        p[t.j * e + t.i] += own;
        ew[t.j] += ea;
        for k in 0..e {
            // O < g_k over the whole piece (pieces end at gaps) or O ≥ g_k over all of it.
            p[t.j * e + k] += if shape.gaps[k] >= t.o_hi * (1.0 - 1e-12) {
                rho * ea
            } else {
                rho * a_gap[k] * m
            };
        }
    }
    for j in 0..e {
        let m = (1.0 - cdf[shape.last[j]]).max(0.0);
        if m <= NEGLIGIBLE {
            continue;
        }
        ew[j] += a_inf * m;
        for k in 0..e {
            p[j * e + k] += rho * a_gap[k] * m;
        }
    }
    // Rows sum to 1 up to rounding; renormalise so the chain is exactly stochastic.
    for j in 0..e {
        let row: f64 = p[j * e..(j + 1) * e].iter().sum();
        if row > 0.0 {
            for x in &mut p[j * e..(j + 1) * e] {
                *x /= row;
            }
        }
    }
    let pi = stationary(&p, e);
    let mean = t_mean + pi.iter().zip(&ew).map(|(a, b)| a * b).sum::<f64>();
    let share = pi
        .iter()
        .zip(&shape.request)
        .filter(|(_, &r)| r)
        .map(|(x, _)| x)
        .sum::<f64>();
    Cycle {
        mean,
        request_share: share.clamp(0.0, 1.0),
    }
}

/// Stationary law of the row-stochastic `e × e` matrix `p` (Gaussian elimination on
/// `πP = π`, `Σπ = 1`).
fn stationary(p: &[f64], e: usize) -> Vec<f64> {
    // Rows of (Pᵀ − I), the last replaced by ones.
    let mut a = vec![0.0; e * (e + 1)];
    let w = e + 1;
    for r in 0..e {
        for c in 0..e {
            a[r * w + c] = p[c * e + r] - if r == c { 1.0 } else { 0.0 };
        }
    }
    for c in 0..e {
        a[(e - 1) * w + c] = 1.0;
    }
    a[(e - 1) * w + e] = 1.0;
    for col in 0..e {
        let piv = (col..e)
            .max_by(|&x, &y| a[x * w + col].abs().total_cmp(&a[y * w + col].abs()))
            .unwrap_or(col);
        if piv != col {
            for c in 0..w {
                a.swap(col * w + c, piv * w + c);
            }
        }
        let d = a[col * w + col];
        if d.abs() < 1e-300 {
            continue;
        }
        for r in 0..e {
            if r != col {
                let f = a[r * w + col] / d;
                if f != 0.0 {
                    for c in col..w {
                        a[r * w + c] -= f * a[col * w + c];
                    }
                }
            }
        }
    }
    let mut pi: Vec<f64> = (0..e)
        .map(|r| {
            let d = a[r * w + r];
            if d.abs() < 1e-300 {
                0.0
            } else {
                (a[r * w + e] / d).max(0.0)
            }
        })
        .collect();
    let s: f64 = pi.iter().sum();
    if s > 0.0 {
        for x in &mut pi {
            *x /= s;
        }
    }
    pi
}

/// The catalogue and workload state the equations sum over.
struct System {
    shapes: Vec<Shape>,
    rhos: Vec<f64>,
    kappa: f64,
    /// Requests per second of the whole catalogue at `φ = 1`.
    requests_per_s: f64,
    /// Chunks of the whole catalogue.
    chunks: f64,
    l1: f64,
    streams: Streams,
    chunks_per_content: u64,
    /// `T̄` above which a sojourn shorter than the longest visit has probability < 1e-15.
    safe: f64,
}

/// Sums at one `T̄` and live share `φ`.
#[derive(Debug, Clone, Copy)]
struct Sums {
    occupancy: f64,
    reads_per_s: f64,
    misses_per_s: f64,
}

impl System {
    fn new(p: &HcsParams, s: &Streams) -> Result<Self, ModelError> {
        if p.batch == 0 {
            return Err(ModelError::ZeroBatch);
        }
        if p.chunks_per_content == 0 {
            return Err(ModelError::ZeroChunksPerContent);
        }
        for r in [s.lambda_per_s, s.chunk_rate_per_s] {
            if !(r.is_finite() && r > 0.0) {
                return Err(ModelError::BadRate(r));
            }
        }
        if p.policy != Policy::Fifo {
            return Err(ModelError::StreamModelNeedsFifo);
        }
        let catalogue = usize::try_from(p.catalogue).map_err(|_| ModelError::EmptyCatalogue)?;
        let q = zipf(catalogue, p.alpha)?;
        let shapes = shapes(p.chunks_per_content, p.batch, s);
        let kappa = (p.l1_chunks as f64 / p.batch as f64).max(1e-3);
        let span = shapes.iter().map(Shape::span).fold(0.0, f64::max).max(1e-9);
        let safe = span / gamma_lower_quantile(kappa, 1e-15).max(1e-300);
        Ok(Self {
            shapes,
            rhos: q.iter().map(|&x| s.lambda_per_s * x).collect(),
            kappa,
            requests_per_s: s.lambda_per_s * p.chunks_per_content as f64,
            chunks: p.catalogue as f64 * p.chunks_per_content as f64,
            l1: p.l1_chunks as f64,
            streams: *s,
            chunks_per_content: p.chunks_per_content,
            safe,
        })
    }

    fn sums(&self, t_mean: f64, phi: f64) -> Sums {
        let soj = Sojourn {
            kappa: self.kappa,
            theta: t_mean / self.kappa,
        };
        let mut out = Sums {
            occupancy: 0.0,
            reads_per_s: 0.0,
            misses_per_s: 0.0,
        };
        let mut memo = Vec::new();
        for shape in &self.shapes {
            let w = shape.per_content * phi;
            let cdf: Vec<f64> = shape
                .points
                .iter()
                .map(|&x| soj.cdf_with(soj.theta, x))
                .collect();
            for &rho in &self.rhos {
                if rho <= 0.0 {
                    continue;
                }
                let c = cycle(shape, rho, &soj, &cdf, &mut memo);
                out.occupancy += w * shape.chunks * t_mean / c.mean;
                out.reads_per_s += w / c.mean;
                out.misses_per_s += w * c.request_share / c.mean;
            }
        }
        out
    }

    /// Largest `T̄` whose occupancy is `|L1|`, searching no higher than `cap`.
    fn root(&self, phi: f64, cap: f64) -> f64 {
        if self.l1 >= self.chunks * phi {
            return f64::INFINITY;
        }
        if self.l1 <= 0.0 {
            return 0.0;
        }
        let f = |t: f64| self.sums(t, phi).occupancy - self.l1;
        let span = self
            .shapes
            .iter()
            .map(Shape::span)
            .fold(0.0, f64::max)
            .max(1e-9);
        // Above `safe`, sojourns shorter than any visit are negligible and the occupancy
        // grows with T̄ (Che's monotone case).
        let mut hi = cap.min(self.safe.max(span));
        if !hi.is_finite() || hi <= 0.0 {
            hi = span;
        }
        if f(hi) < 0.0 {
            // Monotone above: bracket and bisect.
            let mut lo = hi;
            let mut up = hi * 2.0;
            let mut n = 0;
            while f(up) < 0.0 && n < 2000 {
                lo = up;
                up *= 2.0;
                n += 1;
            }
            if cap.is_finite() && up > cap {
                up = cap;
            }
            return bisect(&f, lo, up);
        }
        // Scan down in steps no wider than half the sojourn's spread until the occupancy
        // drops below |L1|.
        let ratio = 1.0 + 0.5 / self.kappa.sqrt().max(1.0);
        let floor = span * 1e-6;
        let mut t = hi;
        loop {
            let lo = t / ratio;
            if lo < floor {
                return bisect(&f, 0.0, t);
            }
            if f(lo) < 0.0 {
                return bisect(&f, lo, t);
            }
            t = lo;
        }
    }

    fn predict(&self, phi: f64, cap: f64) -> StreamPrediction {
        let t = self.root(phi, cap);
        let requests = self.requests_per_s * phi;
        let (hit, reads) = if t.is_infinite() {
            (1.0, 0.0)
        } else {
            let s = self.sums(t, phi);
            (
                (1.0 - s.misses_per_s / requests).clamp(0.0, 1.0),
                s.reads_per_s / requests,
            )
        };
        StreamPrediction {
            t_mean_s: t,
            hit_ratio: hit,
            reads_per_request: reads,
            active_streams: self.streams.mean_active(self.chunks_per_content) * phi,
            live_share: phi,
        }
    }
}

/// Bisection for the sign change of `f` in `[lo, hi]` (`f(lo) < 0 ≤ f(hi)`); returns `hi`'s
/// side.
fn bisect(f: &impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    for _ in 0..ROOT_STEPS {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi || hi - lo <= 1e-10 * hi {
            break;
        }
        if f(mid) >= 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The stream model's steady state (every batch live, `λ S / r` active streams): mean sojourn,
/// L1 hit ratio and reads per request of the `Real` workload with a FIFO L1.
pub fn predict_real_streams(p: &HcsParams, s: &Streams) -> Result<StreamPrediction, ModelError> {
    Ok(System::new(p, s)?.predict(1.0, f64::INFINITY))
}

/// The stream model averaged over the requests `warmup .. warmup + window` of a workload that
/// starts with no active stream (the paper's protocol: `warmup = 10 |L1|`), see the module
/// documentation.
pub fn predict_real_window(
    p: &HcsParams,
    s: &Streams,
    warmup: u64,
    window: u64,
) -> Result<WindowPrediction, ModelError> {
    let sys = System::new(p, s)?;
    let steady = sys.predict(1.0, f64::INFINITY);
    let d = s.duration_s(p.chunks_per_content);
    let rate = s.lambda_per_s * s.chunk_rate_per_s; // dΛ/dt = rate · t on the ramp
    let ramp_requests = 0.5 * rate * d * d;
    let time_of = |n: f64| -> f64 {
        if n <= ramp_requests {
            (2.0 * n / rate).sqrt()
        } else {
            d + (n - ramp_requests) / (rate * d)
        }
    };
    let (n0, n1) = (warmup as f64, (warmup + window.max(1)) as f64);
    let mut cap = f64::INFINITY;
    let (mut hit, mut reads, mut min_phi) = (0.0, 0.0, 1.0_f64);
    for k in 0..WINDOW_POINTS {
        let n = n0 + (k as f64 + 0.5) * (n1 - n0) / WINDOW_POINTS as f64;
        let phi = (time_of(n) / d).min(1.0);
        min_phi = min_phi.min(phi);
        let pr = if phi >= 1.0 {
            steady
        } else {
            let pr = sys.predict(phi, cap);
            cap = pr.t_mean_s;
            pr
        };
        hit += pr.hit_ratio;
        reads += pr.reads_per_request;
    }
    Ok(WindowPrediction {
        hit_ratio: hit / WINDOW_POINTS as f64,
        reads_per_request: reads / WINDOW_POINTS as f64,
        start_s: time_of(n0),
        end_s: time_of(n1),
        min_active_streams: s.mean_active(p.chunks_per_content) * min_phi,
        steady,
    })
}

// ------------------------------------------------------------------ special functions

/// `(1 − e^{x}) / (−x)` = `(e^{x} − 1) / x`, 1 at 0 (no cancellation for small `x`).
fn exprel(x: f64) -> f64 {
    if x.abs() < 1e-300 {
        1.0
    } else {
        x.exp_m1() / x
    }
}

/// `ln Γ(x)`, `x > 0` (Lanczos, g = 7, 9 terms; relative error ~1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, &g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularised lower incomplete gamma `P(a, x)`: series below `a + 1`, Lentz's continued
/// fraction above (both need `O(√a)` terms near `x = a`).
fn gamma_p(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let ln_pre = -x + a * x.ln() - ln_gamma(a);
    if x < a + 1.0 {
        let mut ap = a;
        let mut del = 1.0 / a;
        let mut sum = del;
        for _ in 0..1_000_000 {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        (sum.ln() + ln_pre).exp().min(1.0)
    } else {
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..1_000_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (1.0 - (h.ln() + ln_pre).exp()).max(0.0)
    }
}

/// The `p` quantile of Gamma(shape `a`, mean 1), by bisection on [`gamma_p`].
fn gamma_lower_quantile(a: f64, p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    if gamma_p(a, a * hi) < p {
        return hi;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if gamma_p(a, a * mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// 16-point Gauss–Legendre nodes and weights on [−1, 1].
const GL16: [(f64, f64); 16] = [
    (-0.989_400_934_991_649_9, 0.027_152_459_411_754_1),
    (-0.944_575_023_073_232_6, 0.062_253_523_938_647_9),
    (-0.865_631_202_387_831_7, 0.095_158_511_682_492_8),
    (-0.755_404_408_355_003, 0.124_628_971_255_533_9),
    (-0.617_876_244_402_643_7, 0.149_595_988_816_576_7),
    (-0.458_016_777_657_227_4, 0.169_156_519_395_002_5),
    (-0.281_603_550_779_258_9, 0.182_603_415_044_923_6),
    (-0.095_012_509_837_637_4, 0.189_450_610_455_068_5),
    (0.095_012_509_837_637_4, 0.189_450_610_455_068_5),
    (0.281_603_550_779_258_9, 0.182_603_415_044_923_6),
    (0.458_016_777_657_227_4, 0.169_156_519_395_002_5),
    (0.617_876_244_402_643_7, 0.149_595_988_816_576_7),
    (0.755_404_408_355_003, 0.124_628_971_255_533_9),
    (0.865_631_202_387_831_7, 0.095_158_511_682_492_8),
    (0.944_575_023_073_232_6, 0.062_253_523_938_647_9),
    (0.989_400_934_991_649_9, 0.027_152_459_411_754_1),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict_l1;

    /// Table 3 with the bench's catalogue of 100 contents.
    fn table3(l1: u64) -> HcsParams {
        HcsParams {
            l1_chunks: l1,
            catalogue: 100,
            chunks_per_content: 1280,
            batch: 10,
            alpha: 1.0,
            policy: Policy::Fifo,
        }
    }

    #[test]
    fn gamma_cdf_matches_closed_forms() {
        for x in [1e-3_f64, 0.1, 0.5, 1.0, 2.0, 7.5, 30.0] {
            let exact1 = -(-x).exp_m1();
            assert!((gamma_p(1.0, x) - exact1).abs() < 1e-14, "P(1, {x})");
            // Integer shape n: P(n, x) = 1 − e^{−x} Σ_{k<n} x^k / k!.
            for n in [2u32, 5, 50, 128] {
                let mut term = 1.0;
                let mut sum = 1.0;
                for k in 1..n {
                    term *= x / f64::from(k);
                    sum += term;
                }
                let exact = 1.0 - (-x).exp() * sum;
                assert!(
                    (gamma_p(f64::from(n), x) - exact).abs() < 1e-12,
                    "P({n}, {x}): {} vs {exact}",
                    gamma_p(f64::from(n), x)
                );
            }
        }
        // Around the mean of a large shape (central limit: a bit over 1/2).
        let p = gamma_p(1e6, 1e6);
        assert!(p > 0.5 && p < 0.501, "{p}");
        assert!((ln_gamma(10.0) - 362_880f64.ln()).abs() < 1e-12);
        let q = gamma_lower_quantile(128.0, 1e-15);
        assert!((gamma_p(128.0, 128.0 * q) - 1e-15).abs() < 1e-17 && q < 1.0);
    }

    #[test]
    fn stationary_law_of_a_small_chain() {
        // Two states: 0 → 1 w.p. 0.3, 1 → 0 w.p. 0.6: π = (2/3, 1/3).
        let pi = stationary(&[0.7, 0.3, 0.6, 0.4], 2);
        assert!((pi[0] - 2.0 / 3.0).abs() < 1e-14 && (pi[1] - 1.0 / 3.0).abs() < 1e-14);
    }

    #[test]
    fn instantaneous_visits_reduce_to_the_seeds_model() {
        // r → ∞: a visit takes no time, so only Che's first-chunk misses remain (eq. 4–6).
        let fast = Streams {
            chunk_rate_per_s: 1e9,
            ..Streams::default()
        };
        for l1 in [128, 1_280, 3_200, 12_800, 64_000, 127_999] {
            let p = table3(l1);
            let old = predict_l1(&p).unwrap();
            let new = predict_real_streams(&p, &fast).unwrap();
            assert!(
                (new.hit_ratio - old.real).abs() < 1e-6,
                "|L1| {l1}: {} vs {}",
                new.hit_ratio,
                old.real
            );
            // T_C is in units of 1/λ = 1 s here.
            assert!((new.t_mean_s / old.t_c - 1.0).abs() < 1e-5, "|L1| {l1}");
        }
    }

    #[test]
    fn large_l1_approaches_the_seeds_model() {
        let s = Streams::default();
        let mut prev_gap = f64::INFINITY;
        for l1 in [3_200, 6_400, 12_800, 32_000, 64_000, 100_000] {
            let p = table3(l1);
            let old = predict_l1(&p).unwrap().real;
            let new = predict_real_streams(&p, &s).unwrap().hit_ratio;
            let gap = old - new;
            // Only the visits under way when their batch leaves L1 differ (order ρ B Δ).
            assert!((0.0..0.005).contains(&gap), "|L1| {l1}: {new} vs {old}");
            assert!(gap < prev_gap, "|L1| {l1}: the gap must shrink");
            prev_gap = gap;
        }
        assert!(prev_gap < 2e-4);
        let all = predict_real_streams(&table3(128_000), &s).unwrap();
        assert_eq!((all.hit_ratio, all.t_mean_s), (1.0, f64::INFINITY));
    }

    #[test]
    fn hit_ratio_is_monotone_in_l1() {
        let s = Streams::default();
        let mut prev = 0.0;
        let mut l1 = 100u64;
        while l1 < 128_000 {
            let h = predict_real_streams(&table3(l1), &s).unwrap().hit_ratio;
            assert!(h >= prev - 1e-9, "|L1| {l1}: {h} < {prev}");
            prev = h;
            l1 = l1 * 5 / 4;
        }
    }

    #[test]
    fn l1_smaller_than_a_batch_per_stream_collapses() {
        let s = Streams::default();
        let p = table3(1_280);
        let pr = predict_real_streams(&p, &s).unwrap();
        // 160 streams, a sojourn well below the 1.125 s a prefetched chunk waits: every
        // stream reads each batch about five times (B / ⌈r T̄⌉ = 10 / 2).
        assert_eq!(s.mean_active(1280), 160.0);
        assert!(pr.t_mean_s < 0.25 && pr.t_mean_s > 0.125, "{pr:?}");
        assert!((pr.hit_ratio - 0.5).abs() < 0.03, "{pr:?}");
        assert!((pr.reads_per_request - 0.5).abs() < 0.03, "{pr:?}");
        // Enough room for every stream's batch: the paper's regime, one read per batch.
        let ok = predict_real_streams(&table3(2_560), &s).unwrap();
        assert!(ok.t_mean_s > 1.125 && ok.hit_ratio > 0.9, "{ok:?}");
        assert!((ok.reads_per_request - (1.0 - ok.hit_ratio)).abs() < 1e-3);
    }

    #[test]
    fn occupancy_at_the_root_is_the_l1_size() {
        for (l1, s) in [
            (1_280, Streams::default()),
            (2_560, Streams::default()),
            (
                1_600,
                Streams {
                    prefetch_ahead: true,
                    ..Streams::default()
                },
            ),
        ] {
            let p = table3(l1);
            let sys = System::new(&p, &s).unwrap();
            let t = sys.root(1.0, f64::INFINITY);
            let occ = sys.sums(t, 1.0).occupancy;
            assert!((occ - l1 as f64).abs() < 1e-3 * l1 as f64, "{l1}: {occ}");
        }
    }

    #[test]
    fn prefetch_ahead_removes_the_batch_boundary_misses() {
        let ahead = Streams {
            prefetch_ahead: true,
            ..Streams::default()
        };
        let p = table3(6_400);
        let with = predict_real_streams(&p, &ahead).unwrap();
        let without = predict_real_streams(&p, &Streams::default()).unwrap();
        // Only each stream's first batch can still miss: about 1 request in 1,280 plus sharing.
        assert!(
            with.hit_ratio > 0.99 && with.hit_ratio > without.hit_ratio,
            "{with:?}"
        );
        // The same batches are read, only 2Δ earlier (so they need a little more room).
        assert!(
            (with.reads_per_request - without.reads_per_request).abs() < 0.002,
            "{with:?} {without:?}"
        );
        assert!(with.t_mean_s <= without.t_mean_s);
    }

    #[test]
    fn window_on_the_ramp_lies_between_the_seed_and_the_steady_state() {
        let s = Streams::default();
        let p = table3(1_280);
        let w = predict_real_window(&p, &s, 12_800, 100_000).unwrap();
        // Expected times of the window: Λ(t) = λ r t² / 2 up to t = 160 s.
        assert!((w.start_s - (2.0 * 12_800.0 / 8.0_f64).sqrt()).abs() < 1e-9);
        assert!((w.end_s - (160.0 + (112_800.0 - 102_400.0) / 1_280.0)).abs() < 1e-9);
        assert!(w.hit_ratio > w.steady.hit_ratio + 0.1);
        assert!(w.hit_ratio < predict_l1(&p).unwrap().real - 0.05);
        // A window after the ramp is the steady state.
        let late = predict_real_window(&table3(12_800), &s, 128_000, 256_000).unwrap();
        assert!(late.start_s >= 160.0);
        assert!((late.hit_ratio - late.steady.hit_ratio).abs() < 1e-12);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let s = Streams::default();
        let lru = HcsParams {
            policy: Policy::Lru,
            ..table3(1_280)
        };
        assert_eq!(
            predict_real_streams(&lru, &s),
            Err(ModelError::StreamModelNeedsFifo)
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let s1 = Streams {
                lambda_per_s: bad,
                ..s
            };
            let s2 = Streams {
                chunk_rate_per_s: bad,
                ..s
            };
            assert!(matches!(
                predict_real_streams(&table3(1_280), &s1),
                Err(ModelError::BadRate(_))
            ));
            assert!(matches!(
                predict_real_window(&table3(1_280), &s2, 1, 1),
                Err(ModelError::BadRate(_))
            ));
        }
        let zero = HcsParams {
            batch: 0,
            ..table3(1_280)
        };
        assert_eq!(predict_real_streams(&zero, &s), Err(ModelError::ZeroBatch));
    }
}
