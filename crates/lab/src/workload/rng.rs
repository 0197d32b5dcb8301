//! Seeded random numbers: a xoshiro256** generator and table-driven samplers.

/// One SplitMix64 step (used to expand a 64-bit seed into the xoshiro state).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A small, fast, seeded pseudo-random generator (xoshiro256**, seeded through SplitMix64).
///
/// Not cryptographic: it exists so that workloads are reproducible from a `u64` seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut s = [0u64; 4];
        for w in &mut s {
            *w = splitmix64(&mut sm);
        }
        if s == [0; 4] {
            s[0] = 1; // the all-zero state is a fixed point of xoshiro
        }
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (`n` must be positive; the bias of the multiply-shift
    /// reduction is below 2^-32 for any `n` used here).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniform index in `0..n` (`n` must be positive).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// A uniform integer in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        assert!(lo <= hi, "Rng::range: empty range");
        lo + self.index(hi - lo + 1)
    }

    /// A uniform float in `[0, 1)` (53 random bits).
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// A uniformly chosen element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// Fills `buf` with random bytes.
    pub fn fill_bytes(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }

    /// An independent generator derived from this one's next output (for sub-streams, so that
    /// changing how much one part of a workload draws does not shift another part).
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }
}

/// A discrete distribution over `0..weights.len()`, sampled by binary search over its CDF.
#[derive(Debug, Clone)]
pub struct Discrete {
    cdf: Vec<f64>,
}

impl Discrete {
    /// A distribution proportional to `weights` (non-negative, finite, not all zero).
    pub fn new(weights: &[f64]) -> Self {
        assert!(!weights.is_empty(), "Discrete::new: no weights");
        let mut acc = 0.0;
        let mut cdf = Vec::with_capacity(weights.len());
        for &w in weights {
            assert!(w >= 0.0 && w.is_finite(), "Discrete::new: bad weight {w}");
            acc += w;
            cdf.push(acc);
        }
        assert!(acc > 0.0, "Discrete::new: all weights are zero");
        for c in &mut cdf {
            *c /= acc;
        }
        Discrete { cdf }
    }

    /// Draws an outcome.
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.f64();
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len() - 1)
    }

    /// Number of outcomes.
    pub fn len(&self) -> usize {
        self.cdf.len()
    }

    /// Always false (a distribution has at least one outcome).
    pub fn is_empty(&self) -> bool {
        self.cdf.is_empty()
    }

    /// Probability of outcome `i`.
    pub fn probability(&self, i: usize) -> f64 {
        match i {
            0 => self.cdf[0],
            _ if i < self.cdf.len() => self.cdf[i] - self.cdf[i - 1],
            _ => 0.0,
        }
    }

    /// The mean outcome (`sum i * p(i)`).
    pub fn mean(&self) -> f64 {
        (0..self.len())
            .map(|i| i as f64 * self.probability(i))
            .sum()
    }
}

/// A Zipf distribution over ranks `0..n`: `P(k) ∝ 1 / (k + 1)^s`.
#[derive(Debug, Clone)]
pub struct Zipf {
    inner: Discrete,
}

impl Zipf {
    /// A Zipf distribution over `n > 0` ranks with exponent `s ≥ 0`.
    pub fn new(n: usize, s: f64) -> Self {
        let weights: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
        Zipf {
            inner: Discrete::new(&weights),
        }
    }

    /// Draws a rank (0 is the most popular).
    pub fn sample(&self, rng: &mut Rng) -> usize {
        self.inner.sample(rng)
    }

    /// Number of ranks.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Always false (a distribution has at least one rank).
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }
}
