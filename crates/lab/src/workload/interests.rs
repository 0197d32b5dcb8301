//! Interest names against a FIB.

use wire::{Component, Name};

use super::names::{ircache_like_names, UrlGen};
use super::rng::{Discrete, Rng};
use super::stats::NaiveLpm;
use super::vocab::{token, ALNUM, UNROUTED};

/// Parameters of [`interests_for_fib_with`].
#[derive(Debug, Clone, PartialEq)]
pub struct InterestConfig {
    /// Share of Interests built by extending a FIB prefix (the others match no FIB prefix).
    pub match_ratio: f64,
    /// Weights of the number of components added to the chosen FIB prefix (index 0 is one).
    pub extra_weights: Vec<f64>,
    /// Probability that the extension ends with a query-string component (counted in the
    /// extra components).
    pub query_prob: f64,
}

impl Default for InterestConfig {
    fn default() -> Self {
        InterestConfig {
            match_ratio: 0.9,
            // Mean 2.4 extra components: 4.26 + 2.4 = 6.66 (So et al. §4.1 report a mean
            // distance of 2.40 between Interest and FIB names).
            extra_weights: vec![0.31, 0.32, 0.20, 0.09, 0.045, 0.02, 0.01, 0.005],
            query_prob: 0.2,
        }
    }
}

/// `count` Interest names against `fib`, with the default [`InterestConfig`]: 90% extend a
/// uniformly chosen FIB prefix with URL-like components (about 2.4 more on average, so with
/// [`synthetic_fib`](super::synthetic_fib) the mean is about 6.66 components), 10% are IRCache-like
/// names that match no FIB prefix. Mirrors the trace Interests of So et al. against their
/// URLBlacklist-derived FIB.
pub fn interests_for_fib(seed: u64, fib: &[Name], count: usize) -> Vec<Name> {
    interests_for_fib_with(seed, fib, count, &InterestConfig::default())
}

/// [`interests_for_fib`] with explicit parameters. With an empty `fib` every Interest is a
/// non-matching one.
///
/// # Panics
/// If non-matching Interests are asked for and `fib` holds the empty name (which matches
/// everything).
pub fn interests_for_fib_with(
    seed: u64,
    fib: &[Name],
    count: usize,
    cfg: &InterestConfig,
) -> Vec<Name> {
    let mut rng = Rng::new(seed ^ 0x1D7E_4E57_0000_0003);
    let mut vocab_rng = rng.fork();
    let gen = UrlGen::new(&mut vocab_rng, 5_000, 1.0, &[0.4, 0.3, 0.2, 0.1]);
    let extra = Discrete::new(&cfg.extra_weights);
    let lpm = NaiveLpm::new(fib);
    let n_miss = ((1.0 - cfg.match_ratio.clamp(0.0, 1.0)) * count as f64).round() as usize;
    let misses = ircache_like_names(rng.next_u64(), if fib.is_empty() { count } else { n_miss });
    let mut misses = misses.into_iter();
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        // Spread the non-matching names evenly over the sequence.
        let miss = fib.is_empty() || ((i + 1) * n_miss / count.max(1)) > (i * n_miss / count);
        if miss {
            let mut n = misses.next().unwrap_or_default();
            let mut attempt = 0;
            while lpm.longest_match(&n).is_some() {
                let first = if attempt == 0 {
                    rng.pick(UNROUTED).to_string()
                } else {
                    let l = rng.range(8, 16);
                    token(&mut rng, ALNUM, l)
                };
                if n.is_empty() {
                    n.push(Component::generic(first.into_bytes()));
                } else {
                    n.components[0] = Component::generic(first.into_bytes());
                }
                attempt += 1;
                assert!(
                    attempt < 100,
                    "cannot build a name outside the FIB (empty prefix?)"
                );
            }
            out.push(n);
        } else {
            let base = rng.pick(fib);
            let k = extra.sample(&mut rng) + 1;
            let q = rng.chance(cfg.query_prob);
            let path = if q { k - 1 } else { k };
            // An extension that happens to spell another FIB prefix is redrawn: an Interest
            // always names something below its longest match.
            let n = loop {
                let mut n = base.clone();
                gen.extend_path(&mut rng, &mut n, path, 0.8, 0.0);
                if q {
                    n.push(gen.query(&mut rng));
                }
                if !lpm.contains(&n.components) {
                    break n;
                }
            };
            out.push(n);
        }
    }
    out
}
