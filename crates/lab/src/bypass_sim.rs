//! A discrete-event simulation of the N-queue bypass model of Pan et al., "NB-Cache:
//! Non-Blocking In-Network Caching for High-Performance Content Routers", to check the Markov
//! chain of [`model::bypass`] against.
//!
//! Packets arrive as a Poisson process of rate `λ` and go to the first queue holding fewer
//! than `T` packets (a full queue is bypassed; a packet that finds every queue full is lost).
//! Each queue is FIFO with one server; a packet's service time is drawn from the exponential
//! distribution of rate `μ` when its service starts. The simulation keeps the next arrival
//! time and each busy server's completion time and jumps to the earliest; it integrates each
//! queue's length and busy time over time. Deterministic for a given seed.
//!
//! The first `warmup` arrivals are not measured. The measured arrivals are cut into
//! [`BATCHES`] consecutive batches, and the spread of the batch means gives each figure's
//! standard error (the batch-means method), so a comparison with the model can use a
//! tolerance derived from the simulation's length.

use model::bypass::{Bypass, QueueStats};

use crate::workload::Rng;

/// Batches of the batch-means method.
pub const BATCHES: usize = 20;

/// How long to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimConfig {
    /// Measured arrivals (at least [`BATCHES`]).
    pub arrivals: u64,
    /// Arrivals simulated before measuring.
    pub warmup: u64,
    /// Seed of the random numbers.
    pub seed: u64,
}

impl SimConfig {
    /// `arrivals` measured after a warm-up of a tenth as many.
    pub fn new(arrivals: u64, seed: u64) -> Self {
        SimConfig {
            arrivals: arrivals.max(BATCHES as u64),
            warmup: arrivals / 10,
            seed,
        }
    }
}

/// A simulated figure: its estimate over the whole measurement and its standard error.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// Standard error, from the batch means.
    pub stderr: f64,
}

/// One queue's simulated figures.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SimQueue {
    /// Time-average number of packets in the queue (the one in service included).
    pub mean_length: Estimate,
    /// Fraction of time the queue is not empty.
    pub utilization: Estimate,
}

impl SimQueue {
    /// The point estimates in the model's shape.
    pub fn stats(&self) -> QueueStats {
        QueueStats {
            mean_length: self.mean_length.value,
            utilization: self.utilization.value,
        }
    }
}

/// What a simulation measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SimResult {
    /// Measured arrivals.
    pub arrivals: u64,
    /// Of which lost.
    pub lost: u64,
    /// Fraction of measured arrivals lost.
    pub loss: Estimate,
    /// Per queue, by priority.
    pub per_queue: Vec<SimQueue>,
    /// Simulated time measured (in units of `1/μ` times `μ`: the rates' own unit).
    pub time: f64,
}

/// Per-batch sums.
#[derive(Clone, Default)]
struct Batch {
    time: f64,
    arrivals: u64,
    lost: u64,
    /// ∫ length dt and ∫ busy dt per queue.
    area: Vec<(f64, f64)>,
}

/// The event loop's state.
struct Queues {
    len: Vec<usize>,
    /// Completion time of the packet in service (infinite when idle).
    done_at: Vec<f64>,
}

/// Simulates `p` for `cfg.warmup + cfg.arrivals` arrivals.
///
/// # Panics
///
/// If `p` has no queue or a threshold of 0 (check with [`Bypass::states`] first).
pub fn simulate(p: &Bypass, cfg: &SimConfig) -> SimResult {
    assert!(p.queues > 0 && p.threshold > 0, "simulate: empty model");
    let n = p.queues;
    let mut rng = Rng::new(cfg.seed);
    let mut exp = |rate: f64| -(1.0 - rng.f64()).ln() / rate;
    let mut q = Queues {
        len: vec![0; n],
        done_at: vec![f64::INFINITY; n],
    };
    let per_batch = (cfg.arrivals / BATCHES as u64).max(1);
    let mut batches = vec![
        Batch {
            area: vec![(0.0, 0.0); n],
            ..Batch::default()
        };
        BATCHES
    ];
    let total = cfg.warmup + per_batch * BATCHES as u64;
    let (mut now, mut next_arrival, mut seen) = (0.0, exp(p.lambda), 0u64);
    loop {
        let (first, t_done) =
            q.done_at
                .iter()
                .copied()
                .enumerate()
                .fold(
                    (0, f64::INFINITY),
                    |b, (i, t)| if t < b.1 { (i, t) } else { b },
                );
        let t = next_arrival.min(t_done);
        // The batch the interval (now, t] belongs to: the one of the arrivals it leads to.
        let measured = seen.checked_sub(cfg.warmup);
        let batch = measured.map(|m| ((m / per_batch) as usize).min(BATCHES - 1));
        if let Some(b) = batch {
            let bt = &mut batches[b];
            let dt = t - now;
            bt.time += dt;
            for (a, &l) in bt.area.iter_mut().zip(&q.len) {
                a.0 += l as f64 * dt;
                a.1 += if l > 0 { dt } else { 0.0 };
            }
        }
        now = t;
        if next_arrival <= t_done {
            if seen == total {
                break;
            }
            seen += 1;
            let target = q.len.iter().position(|&l| l < p.threshold);
            if let Some(b) = batch {
                batches[b].arrivals += 1;
                batches[b].lost += u64::from(target.is_none());
            }
            if let Some(i) = target {
                q.len[i] += 1;
                if q.len[i] == 1 {
                    q.done_at[i] = now + exp(p.mu);
                }
            }
            next_arrival = now + exp(p.lambda);
        } else {
            let i = first;
            q.len[i] -= 1;
            q.done_at[i] = if q.len[i] > 0 {
                now + exp(p.mu)
            } else {
                f64::INFINITY
            };
        }
    }
    summarise(&batches, n)
}

/// The whole-run estimates and the batch-means standard errors.
fn summarise(batches: &[Batch], n: usize) -> SimResult {
    let time: f64 = batches.iter().map(|b| b.time).sum();
    let arrivals: u64 = batches.iter().map(|b| b.arrivals).sum();
    let lost: u64 = batches.iter().map(|b| b.lost).sum();
    let estimate = |whole: f64, per: &dyn Fn(&Batch) -> f64| {
        let k = batches.len() as f64;
        let var = batches
            .iter()
            .map(|b| (per(b) - whole).powi(2))
            .sum::<f64>()
            / (k - 1.0).max(1.0);
        Estimate {
            value: whole,
            stderr: (var / k).sqrt(),
        }
    };
    let loss = estimate(lost as f64 / arrivals.max(1) as f64, &|b| {
        b.lost as f64 / b.arrivals.max(1) as f64
    });
    let per_queue = (0..n)
        .map(|i| {
            let whole_len = batches.iter().map(|b| b.area[i].0).sum::<f64>() / time;
            let whole_busy = batches.iter().map(|b| b.area[i].1).sum::<f64>() / time;
            SimQueue {
                mean_length: estimate(whole_len, &|b| b.area[i].0 / b.time),
                utilization: estimate(whole_busy, &|b| b.area[i].1 / b.time),
            }
        })
        .collect();
    SimResult {
        arrivals,
        lost,
        loss,
        per_queue,
        time,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bypass(queues: usize, threshold: usize, lambda: f64) -> Bypass {
        Bypass {
            queues,
            threshold,
            lambda,
            mu: 1.0,
        }
    }

    /// Within `z` standard errors (and a floor for figures the simulation cannot resolve).
    fn agrees(sim: Estimate, model: f64, z: f64) -> bool {
        (sim.value - model).abs() <= z * sim.stderr + 1e-4
    }

    #[test]
    fn the_simulation_agrees_with_the_markov_chain_within_its_standard_errors() {
        for (n, t, lambda) in [(2, 3, 1.5), (3, 2, 2.5), (1, 4, 0.8)] {
            let p = bypass(n, t, lambda);
            let sol = model::bypass::solve(&p).unwrap();
            let sim = simulate(&p, &SimConfig::new(400_000, 7));
            // Five standard errors of the batch means: a failure by chance is ~1e-6 per
            // figure, while an error in the chain's transitions moves figures by far more.
            assert!(
                agrees(sim.loss, sol.loss, 5.0),
                "{n}x{t}: {:?} vs {}",
                sim.loss,
                sol.loss
            );
            for (s, m) in sim.per_queue.iter().zip(&sol.per_queue) {
                assert!(agrees(s.mean_length, m.mean_length, 5.0), "{s:?} vs {m:?}");
                assert!(agrees(s.utilization, m.utilization, 5.0), "{s:?} vs {m:?}");
            }
            assert!(sim.per_queue[0].mean_length.stderr > 0.0);
        }
    }

    #[test]
    fn a_wrong_chain_is_told_apart() {
        // The simulation distinguishes bypass from plain drop: 2 queues of threshold 2 lose far
        // less than 1 queue of threshold 2 at the same load.
        let two = simulate(&bypass(2, 2, 2.0), &SimConfig::new(200_000, 3));
        let one = model::bypass::mm1_drop(2.0, 1.0, 2).unwrap();
        assert!(two.loss.value + 10.0 * two.loss.stderr < one.loss);
    }

    #[test]
    fn the_same_seed_gives_the_same_run_and_counts_add_up() {
        let p = bypass(3, 2, 3.0);
        let a = simulate(&p, &SimConfig::new(50_000, 11));
        let b = simulate(&p, &SimConfig::new(50_000, 11));
        let c = simulate(&p, &SimConfig::new(50_000, 12));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.arrivals, 50_000);
        assert!(a.lost > 0 && a.lost < a.arrivals);
        assert!((a.loss.value - a.lost as f64 / a.arrivals as f64).abs() < 1e-15);
    }
}
