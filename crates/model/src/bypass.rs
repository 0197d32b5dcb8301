//! The N-queue bypass model of Pan et al., "NB-Cache: Non-Blocking In-Network Caching for
//! High-Performance Content Routers" (§IV), and its baseline, the M/M/1 queue with a drop
//! threshold.
//!
//! # The model
//!
//! `n` queues, each with one exponential server of rate `μ`, ranked by priority; packets
//! arrive as a Poisson process of rate `λ` at queue 0. A queue holding `T` packets (the bypass
//! threshold; the paper's `n*m` model has `T = m − 1`) is bypassed: the packet moves on to the
//! next queue, and so on; a packet that finds every queue at the threshold is lost. A state is
//! the vector `(a_0, …, a_{n−1})`, `0 ≤ a_i ≤ T`, so there are `(T + 1)^n` states. From state
//! `a` the chain moves
//!
//! - to `a + e_j` at rate `λ`, where `j` is the first queue with `a_j < T` (the paper's λ-out;
//!   none in the all-full state);
//! - to `a − e_i` at rate `μ` for every non-empty queue `i` (μ-out).
//!
//! [`generator`] builds the transition-rate matrix for any `n` and `T` (the paper's automated
//! generation, as a sparse matrix: `n + 2` entries per state at most rather than the paper's
//! dense `m^{2n}` scan), and [`solve`] finds the steady state `π Q = 0`, `Σ π = 1` by
//! Gauss–Seidel sweeps over the sparse matrix (the classic method for Markov chains: it needs
//! no fill-in, which a direct factorization of this grid-shaped chain would), stopping when
//! the residual `‖π Q‖₁ / (λ + nμ)`, computed afresh by a sparse matrix–vector product, is at
//! most the tolerance. By PASTA the loss rate is `π(T, …, T)`.
//!
//! Pure computation: no I/O.

use std::fmt;

use sprs::{CsMat, TriMat};

/// Default convergence tolerance of [`solve`]: `‖π Q‖₁ / (λ + nμ) ≤ 1e-12`.
pub const DEFAULT_TOLERANCE: f64 = 1e-12;

/// Most Gauss–Seidel sweeps [`solve`] runs before giving up.
pub const MAX_SWEEPS: u32 = 200_000;

/// Most states a model may have (`(T + 1)^n`): about 0.5 GB of matrix and vectors.
pub const MAX_STATES: usize = 1 << 22;

/// How often (in sweeps) [`solve`] computes the residual.
const CHECK_EVERY: u32 = 10;

/// Invalid parameters of the bypass model, or a solve that did not converge.
#[derive(Debug, Clone, PartialEq)]
pub enum BypassError {
    /// No queue.
    NoQueue,
    /// The threshold is 0 (a queue would hold nothing).
    ZeroThreshold,
    /// `(T + 1)^n` is above [`MAX_STATES`].
    TooManyStates {
        /// Queues asked for.
        queues: usize,
        /// Threshold asked for.
        threshold: usize,
    },
    /// A rate is not finite and positive.
    BadRate(f64),
    /// [`MAX_SWEEPS`] sweeps did not bring the residual under the tolerance.
    NotConverged {
        /// The residual reached.
        residual: f64,
    },
}

impl fmt::Display for BypassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoQueue => write!(f, "the model needs at least one queue"),
            Self::ZeroThreshold => write!(f, "the threshold must be at least 1"),
            Self::TooManyStates { queues, threshold } => write!(
                f,
                "{queues} queues with threshold {threshold} have more than {MAX_STATES} states"
            ),
            Self::BadRate(r) => write!(f, "rates must be finite and > 0, got {r}"),
            Self::NotConverged { residual } => write!(
                f,
                "the steady state did not converge in {MAX_SWEEPS} sweeps (residual {residual:e})"
            ),
        }
    }
}

impl std::error::Error for BypassError {}

/// Parameters of the `n`-queue bypass model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bypass {
    /// Queues `n` (routers along the path).
    pub queues: usize,
    /// Bypass threshold `T = m − 1`: packets a queue holds (the one in service included)
    /// before arrivals bypass it.
    pub threshold: usize,
    /// Arrival rate `λ`.
    pub lambda: f64,
    /// Service rate `μ` of each queue.
    pub mu: f64,
}

impl Bypass {
    /// Checks the parameters; returns the number of states `(T + 1)^n`.
    pub fn states(&self) -> Result<usize, BypassError> {
        if self.queues == 0 {
            return Err(BypassError::NoQueue);
        }
        if self.threshold == 0 {
            return Err(BypassError::ZeroThreshold);
        }
        for r in [self.lambda, self.mu] {
            if !(r.is_finite() && r > 0.0) {
                return Err(BypassError::BadRate(r));
            }
        }
        let too_many = BypassError::TooManyStates {
            queues: self.queues,
            threshold: self.threshold,
        };
        let m = self.threshold.checked_add(1).ok_or(too_many.clone())?;
        let exp = u32::try_from(self.queues).map_err(|_| too_many.clone())?;
        m.checked_pow(exp)
            .filter(|&s| s <= MAX_STATES)
            .ok_or(too_many)
    }

    /// The number of packets in queue `i` in state `s` (`s = Σ a_i (T + 1)^i`).
    pub fn length(&self, s: usize, i: usize) -> usize {
        let m = self.threshold + 1;
        (s / m.pow(i as u32)) % m
    }
}

/// Per-queue figures of the steady state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueStats {
    /// Mean number of packets in the queue, the one in service included.
    pub mean_length: f64,
    /// Probability that the queue is not empty (its server's utilization).
    pub utilization: f64,
}

impl QueueStats {
    /// Mean number of packets waiting (not in service): `mean_length − utilization`.
    pub fn mean_waiting(&self) -> f64 {
        self.mean_length - self.utilization
    }
}

/// The steady state of a bypass model.
#[derive(Debug, Clone, PartialEq)]
pub struct BypassSolution {
    /// Number of states `(T + 1)^n`.
    pub states: usize,
    /// Fraction of arrivals lost (every queue at the threshold).
    pub loss: f64,
    /// Per queue, by priority.
    pub per_queue: Vec<QueueStats>,
    /// `‖π Q‖₁ / (λ + nμ)` of the solution returned.
    pub residual: f64,
    /// Gauss–Seidel sweeps run.
    pub sweeps: u32,
}

impl BypassSolution {
    /// Mean number of packets in the system (the paper's Fig. 9(a), Eq. 8).
    pub fn mean_in_system(&self) -> f64 {
        self.per_queue.iter().map(|q| q.mean_length).sum()
    }

    /// Mean number of packets waiting in the queues, not in service (Fig. 9(b)).
    pub fn mean_waiting(&self) -> f64 {
        self.per_queue.iter().map(QueueStats::mean_waiting).sum()
    }

    /// Mean server utilization over the queues (Fig. 9(d), Eq. 9–10).
    pub fn utilization(&self) -> f64 {
        let n = self.per_queue.len().max(1) as f64;
        self.per_queue.iter().map(|q| q.utilization).sum::<f64>() / n
    }
}

/// The transition-rate matrix `Q` of the model (row: from, column: to; each row sums to 0),
/// states numbered `s = Σ a_i (T + 1)^i`.
pub fn generator(p: &Bypass) -> Result<CsMat<f64>, BypassError> {
    let states = p.states()?;
    let mut tri = TriMat::with_capacity((states, states), states * (p.queues + 2));
    for_each_transition(p, states, |from, to, rate| tri.add_triplet(from, to, rate));
    Ok(tri.to_csr())
}

/// Calls `f(from, to, rate)` for every transition, then `f(s, s, −Σ rates out of s)`.
fn for_each_transition(p: &Bypass, states: usize, mut f: impl FnMut(usize, usize, f64)) {
    let m = p.threshold + 1;
    let powers: Vec<usize> = (0..p.queues).map(|i| m.pow(i as u32)).collect();
    for s in 0..states {
        let mut out = 0.0;
        let mut placed = false;
        for &w in &powers {
            let a = (s / w) % m;
            if !placed && a < p.threshold {
                // The first queue under its threshold takes the arrival.
                f(s, s + w, p.lambda);
                out += p.lambda;
                placed = true;
            }
            if a > 0 {
                f(s, s - w, p.mu);
                out += p.mu;
            }
        }
        f(s, s, -out);
    }
}

/// The steady state of the model, to [`DEFAULT_TOLERANCE`].
pub fn solve(p: &Bypass) -> Result<BypassSolution, BypassError> {
    solve_to(p, DEFAULT_TOLERANCE)
}

/// The steady state of the model: Gauss–Seidel sweeps on `Qᵀ πᵀ = 0` (over the in-transitions
/// of each state, from `Qᵀ` in compressed rows), renormalised after each sweep, until
/// `‖π Q‖₁ / (λ + nμ) ≤ tolerance` or [`MAX_SWEEPS`].
pub fn solve_to(p: &Bypass, tolerance: f64) -> Result<BypassSolution, BypassError> {
    let q = generator(p)?;
    let qt: CsMat<f64> = q.transpose_view().to_csr();
    let states = qt.rows();
    let scale = p.lambda + p.queues as f64 * p.mu;
    let mut pi = vec![1.0 / states as f64; states];
    let (indptr, indices, data) = (qt.indptr(), qt.indices(), qt.data());
    let indptr = indptr.raw_storage();
    let mut sweeps = 0;
    let residual = loop {
        for j in 0..states {
            let (mut inflow, mut diag) = (0.0, 0.0);
            for k in indptr[j]..indptr[j + 1] {
                let i = indices[k];
                if i == j {
                    diag = data[k];
                } else {
                    inflow += data[k] * pi[i];
                }
            }
            // Every state has an out-transition (n ≥ 1, T ≥ 1), so diag < 0.
            pi[j] = inflow / -diag;
        }
        let total: f64 = pi.iter().sum();
        for x in &mut pi {
            *x /= total;
        }
        sweeps += 1;
        if sweeps % CHECK_EVERY == 0 || sweeps >= MAX_SWEEPS {
            let r = residual(&qt, &pi) / scale;
            if r <= tolerance {
                break r;
            }
            if sweeps >= MAX_SWEEPS {
                return Err(BypassError::NotConverged { residual: r });
            }
        }
    };
    let per_queue = (0..p.queues)
        .map(|i| {
            let (mut len, mut busy) = (0.0, 0.0);
            for (s, &x) in pi.iter().enumerate() {
                let a = p.length(s, i);
                len += a as f64 * x;
                if a > 0 {
                    busy += x;
                }
            }
            QueueStats {
                mean_length: len,
                utilization: busy,
            }
        })
        .collect();
    Ok(BypassSolution {
        states,
        loss: pi[states - 1],
        per_queue,
        residual,
        sweeps,
    })
}

/// `‖Qᵀ πᵀ‖₁`, by sparse matrix–vector product.
fn residual(qt: &CsMat<f64>, pi: &[f64]) -> f64 {
    let mut out = vec![0.0; pi.len()];
    sprs::prod::mul_acc_mat_vec_csr(qt.view(), pi, &mut out[..]);
    out.iter().map(|x| x.abs()).sum()
}

/// The M/M/1 queue with a drop threshold `K` (M/M/1/K): a packet that finds `K` packets in
/// the system is dropped. Closed forms with `ρ = λ/μ`: `p_k = ρ^k (1 − ρ) / (1 − ρ^{K+1})`
/// (`1/(K + 1)` when `ρ = 1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mm1Drop {
    /// Drop threshold `K`.
    pub threshold: usize,
    /// Mean number of packets in the system.
    pub mean_length: f64,
    /// Probability that the server is busy.
    pub utilization: f64,
    /// Fraction of arrivals dropped, `p_K`.
    pub loss: f64,
}

impl Mm1Drop {
    /// Mean number of packets waiting (not in service).
    pub fn mean_waiting(&self) -> f64 {
        self.mean_length - self.utilization
    }
}

/// The M/M/1/K figures for arrival rate `lambda`, service rate `mu` and threshold `threshold`.
pub fn mm1_drop(lambda: f64, mu: f64, threshold: usize) -> Result<Mm1Drop, BypassError> {
    Bypass {
        queues: 1,
        threshold,
        lambda,
        mu,
    }
    .states()?;
    let rho = lambda / mu;
    let k = threshold as i32;
    // p_i ∝ ρ^i; normalised directly (no cancellation near ρ = 1).
    let weights: Vec<f64> = (0..=k).map(|i| rho.powi(i)).collect();
    let total: f64 = weights.iter().sum();
    let mean = weights
        .iter()
        .enumerate()
        .map(|(i, w)| i as f64 * w)
        .sum::<f64>()
        / total;
    Ok(Mm1Drop {
        threshold,
        mean_length: mean,
        utilization: 1.0 - weights[0] / total,
        loss: weights[threshold] / total,
    })
}

#[cfg(test)]
mod tests;
