//! A counting Bloom filter of the names a worker's content store holds, RAM tier and L2
//! together: NB-Cache's first-stage bypass (Pan et al., "NB-Cache: Non-Blocking In-Network
//! Caching for High-Performance Content Routers"). A name the filter has never seen is a sure
//! miss, and the engine skips the CS and its storage queue for it.
//!
//! # Shape
//!
//! - **Blocked**: the filter is an array of 64-byte lines of 128 four-bit counters. A name's
//!   `k` counters all lie in one line, chosen from its 64-bit full-name hash (the keyed SipHash
//!   the dispatcher and the engine already computed) by multiply-shift, so a lookup, an
//!   insertion or a removal touches exactly one cache line, and the engine can prefetch it with
//!   the name's other first-level lines. The `k` positions in the line come from a
//!   finalizer of the same hash, 7 bits each (with replacement: a name may count twice in one
//!   counter, and is removed twice).
//! - **Counting**: insertion increments the name's counters, removal decrements them, so names
//!   leave the filter when the CS and L2 drop them. A counter that reaches 15 sticks there: it
//!   is never decremented again, so no removal can ever make a member look absent (no false
//!   negatives), at the price of a slightly higher false-positive rate after heavy churn. A
//!   removal that finds a counter at 0 (the name was not inserted) leaves it at 0 and is
//!   counted ([`BloomStats::underflows`]): counts never underflow.
//! - **Sized for a false-positive rate**: [`Geometry::for_fp_rate`] picks the fewest lines
//!   (and the `k`) whose expected false-positive rate at `capacity` names is at most the
//!   target, from the exact rate of a blocked filter: the number of names in a line is
//!   binomial (Poisson), and for a line holding `j` names the chance that `k` probes all find
//!   a non-zero counter is `E[(X/128)^k]`, `X` the occupied counters after `k·j` throws
//!   (computed from the occupancy distribution, not the usual independence approximation,
//!   which is 10–15 % optimistic here). [`Geometry::for_bytes`] sizes by memory instead.
//!
//! # Sharing
//!
//! The engine's RAM CS updates the filter on insertion and eviction (through
//! [`BloomHandle`], its `CsFilter`), and the worker's L2 on writes and extent evictions
//! ([`crate::L2File`]); both hold an `Arc` of the same filter. The counters are atomics so that
//! the two handles can share it safely, but the filter has **one writer thread**: the worker
//! that owns both (a read-modify-write is a relaxed load and a store, no locked instruction).
//! Anyone may read.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use engine::fw::pipeline::CsFilter;
use engine::table::index::prefetch_line;
use engine::table::mem::{arena, FixedArena};

/// Counters per 64-byte line.
pub const COUNTERS_PER_LINE: usize = 128;

/// Largest number of counters per name.
pub const MAX_K: u32 = 16;

/// A counter's sticky maximum.
const SATURATED: u64 = 15;

/// Most names per line the sizing considers (a line of 128 counters holding more is useless).
const MAX_NAMES_PER_LINE: u64 = 64;

/// One cache line of 128 four-bit counters.
#[derive(Default)]
#[repr(C, align(64))]
struct Line([AtomicU64; 8]);

/// Lines and counters per name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// 64-byte lines.
    pub lines: u64,
    /// Counters per name.
    pub k: u32,
}

/// Invalid filter parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum BloomError {
    /// The capacity is 0.
    ZeroCapacity,
    /// The false-positive rate is not in (0, 1).
    BadFpRate(f64),
    /// Fewer bytes than one line per 64 names.
    TooSmall {
        /// Bytes asked for.
        bytes: u64,
    },
}

impl std::fmt::Display for BloomError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ZeroCapacity => write!(f, "the filter's capacity must be at least 1 name"),
            Self::BadFpRate(p) => write!(f, "the false-positive rate must be in (0, 1), got {p}"),
            Self::TooSmall { bytes } => write!(
                f,
                "{bytes} bytes is less than one 64-byte line per {MAX_NAMES_PER_LINE} names"
            ),
        }
    }
}

impl std::error::Error for BloomError {}

/// `E[(X/c)^k]` for every line load `j = 0..=max_j`: the chance that `k` probes into a line
/// holding `j` names all find a non-zero counter, `X` the occupied counters after `k·j` uniform
/// throws into `c` counters.
fn line_fp_by_load(k: u32, max_j: u64) -> Vec<f64> {
    let c = COUNTERS_PER_LINE;
    let cf = c as f64;
    // occ[x]: probability that x counters are occupied after the throws so far.
    let mut occ = vec![0.0f64; c + 1];
    occ[0] = 1.0;
    let mut out = Vec::with_capacity(max_j as usize + 1);
    let frac_k: Vec<f64> = (0..=c).map(|x| (x as f64 / cf).powi(k as i32)).collect();
    for _ in 0..=max_j {
        out.push(occ.iter().zip(&frac_k).map(|(p, f)| p * f).sum());
        for _ in 0..k {
            for x in (0..=c).rev() {
                let stay = occ[x] * x as f64 / cf;
                let from = if x > 0 {
                    occ[x - 1] * (cf - (x - 1) as f64) / cf
                } else {
                    0.0
                };
                occ[x] = stay + from;
            }
        }
    }
    out
}

/// The expected false-positive rate of `lines` lines holding `names` names with `k` counters
/// each, given `by_load` from [`line_fp_by_load`]: the Poisson mixture over a line's load.
fn mixture(by_load: &[f64], names: u64, lines: u64) -> f64 {
    let mean = names as f64 / lines as f64;
    // Poisson pmf, iteratively; the tail beyond `by_load` counts as a certain false positive.
    let mut pmf = (-mean).exp();
    let (mut fp, mut mass) = (0.0, 0.0);
    for (j, &f) in by_load.iter().enumerate() {
        if j > 0 {
            pmf *= mean / j as f64;
        }
        fp += pmf * f;
        mass += pmf;
    }
    fp + (1.0 - mass).max(0.0)
}

impl Geometry {
    /// The expected false-positive rate with `names` names in the filter.
    pub fn fp_rate(&self, names: u64) -> f64 {
        mixture(&line_fp_by_load(self.k, max_load()), names, self.lines)
    }

    /// Bytes of counters.
    pub fn bytes(&self) -> u64 {
        self.lines * 64
    }

    /// The fewest lines, over `k = 1..=MAX_K`, whose expected false-positive rate at
    /// `capacity` names is at most `fp_rate`.
    pub fn for_fp_rate(capacity: u64, fp_rate: f64) -> Result<Geometry, BloomError> {
        if capacity == 0 {
            return Err(BloomError::ZeroCapacity);
        }
        if !(fp_rate > 0.0 && fp_rate < 1.0) {
            return Err(BloomError::BadFpRate(fp_rate));
        }
        let mut best: Option<Geometry> = None;
        for k in 1..=MAX_K {
            let by_load = line_fp_by_load(k, max_load());
            let fp = |lines: u64| mixture(&by_load, capacity, lines);
            let mut lo = capacity.div_ceil(MAX_NAMES_PER_LINE).max(1);
            if fp(lo) <= fp_rate {
                best = Some(Geometry { lines: lo, k });
                continue;
            }
            // Double until the target is met (it is, eventually: the rate falls to 0), then
            // bisect for the fewest lines.
            let mut hi = lo;
            while fp(hi) > fp_rate && hi < u64::MAX / 2 {
                lo = hi;
                hi *= 2;
            }
            if fp(hi) > fp_rate {
                continue;
            }
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if fp(mid) <= fp_rate {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            if best.is_none_or(|b| hi < b.lines) {
                best = Some(Geometry { lines: hi, k });
            }
        }
        best.ok_or(BloomError::BadFpRate(fp_rate))
    }

    /// `bytes` of counters (rounded down to whole lines) and the `k` that minimizes the
    /// expected false-positive rate at `capacity` names.
    pub fn for_bytes(capacity: u64, bytes: u64) -> Result<Geometry, BloomError> {
        if capacity == 0 {
            return Err(BloomError::ZeroCapacity);
        }
        let lines = bytes / 64;
        if lines == 0 || lines < capacity.div_ceil(MAX_NAMES_PER_LINE) {
            return Err(BloomError::TooSmall { bytes });
        }
        let k = (1..=MAX_K)
            .map(|k| (k, mixture(&line_fp_by_load(k, max_load()), capacity, lines)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(1, |(k, _)| k);
        Ok(Geometry { lines, k })
    }
}

/// The line loads the sizing accounts for: well past the largest mean it considers.
fn max_load() -> u64 {
    MAX_NAMES_PER_LINE * 3
}

/// Counts of the filter's own events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BloomStats {
    /// Names inserted.
    pub inserts: u64,
    /// Names removed.
    pub removes: u64,
    /// Counters that reached their maximum and stuck there.
    pub saturated: u64,
    /// Removals that found a counter at 0 (the name was not in the filter): left at 0.
    pub underflows: u64,
}

/// The counting Bloom filter (see the module documentation).
pub struct CountingBloom {
    lines: FixedArena<Line>,
    geometry: Geometry,
    capacity: u64,
    inserts: AtomicU64,
    removes: AtomicU64,
    saturated: AtomicU64,
    underflows: AtomicU64,
}

impl std::fmt::Debug for CountingBloom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountingBloom")
            .field("geometry", &self.geometry)
            .field("capacity", &self.capacity)
            .field("stats", &self.stats())
            .finish()
    }
}

/// The murmur3 64-bit finalizer: a bijection whose every output bit depends on every input bit.
fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl CountingBloom {
    /// An empty filter of `geometry` for `capacity` names, its memory allocated and touched
    /// now (its own huge-page-advised mapping).
    pub fn new(geometry: Geometry, capacity: u64) -> Self {
        let lines = usize::try_from(geometry.lines).expect("filter larger than the address space");
        CountingBloom {
            lines: arena(lines.max(1), |_| Line::default()),
            geometry: Geometry {
                lines: lines.max(1) as u64,
                k: geometry.k.clamp(1, MAX_K),
            },
            capacity,
            inserts: AtomicU64::new(0),
            removes: AtomicU64::new(0),
            saturated: AtomicU64::new(0),
            underflows: AtomicU64::new(0),
        }
    }

    /// A filter sized for `fp_rate` at `capacity` names ([`Geometry::for_fp_rate`]).
    pub fn with_fp_rate(capacity: u64, fp_rate: f64) -> Result<Self, BloomError> {
        Ok(Self::new(
            Geometry::for_fp_rate(capacity, fp_rate)?,
            capacity,
        ))
    }

    /// A filter of `bytes` of counters for `capacity` names ([`Geometry::for_bytes`]).
    pub fn with_bytes(capacity: u64, bytes: u64) -> Result<Self, BloomError> {
        Ok(Self::new(Geometry::for_bytes(capacity, bytes)?, capacity))
    }

    /// Lines and counters per name.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The names it was sized for.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The expected false-positive rate at its capacity.
    pub fn target_fp_rate(&self) -> f64 {
        self.geometry.fp_rate(self.capacity)
    }

    /// Counts of its events.
    pub fn stats(&self) -> BloomStats {
        BloomStats {
            inserts: self.inserts.load(Relaxed),
            removes: self.removes.load(Relaxed),
            saturated: self.saturated.load(Relaxed),
            underflows: self.underflows.load(Relaxed),
        }
    }

    /// The line of `hash` (multiply-shift of the whole hash) and the positions source.
    #[inline(always)]
    fn line(&self, hash: u64) -> &Line {
        let i = ((u128::from(hash) * u128::from(self.geometry.lines)) >> 64) as usize;
        &self.lines[i]
    }

    /// Calls `f(word, shift)` for each of the `k` counters of `hash` in its line.
    #[inline(always)]
    fn for_each_counter(&self, hash: u64, mut f: impl FnMut(usize, u32) -> bool) -> bool {
        let mut bits = fmix64(hash ^ 0x9e37_79b9_7f4a_7c15);
        let mut left = 9; // 7-bit positions in one 64-bit word
        for i in 0..self.geometry.k {
            if left == 0 {
                bits = fmix64(hash ^ 0x6a09_e667_f3bc_c909 ^ u64::from(i));
                left = 9;
            }
            let c = (bits & 0x7f) as usize;
            bits >>= 7;
            left -= 1;
            if !f(c / 16, (c % 16) as u32 * 4) {
                return false;
            }
        }
        true
    }

    /// Whether the filter may hold the name of `hash`; `false` is certain.
    #[inline]
    pub fn may_contain(&self, hash: u64) -> bool {
        let line = self.line(hash);
        self.for_each_counter(hash, |w, s| (line.0[w].load(Relaxed) >> s) & 0xf != 0)
    }

    /// Adds the name of `hash` (once more).
    pub fn insert(&self, hash: u64) {
        let line = self.line(hash);
        let mut saturated = 0;
        self.for_each_counter(hash, |w, s| {
            let word = line.0[w].load(Relaxed);
            let c = (word >> s) & 0xf;
            if c < SATURATED {
                line.0[w].store(word + (1 << s), Relaxed);
                saturated += u64::from(c + 1 == SATURATED);
            }
            true
        });
        self.inserts.fetch_add(1, Relaxed);
        if saturated > 0 {
            self.saturated.fetch_add(saturated, Relaxed);
        }
    }

    /// Removes the name of `hash` once (a saturated counter stays; one at 0 stays at 0).
    pub fn remove(&self, hash: u64) {
        let line = self.line(hash);
        let mut underflows = 0;
        self.for_each_counter(hash, |w, s| {
            let word = line.0[w].load(Relaxed);
            match (word >> s) & 0xf {
                0 => underflows += 1,
                SATURATED => {}
                _ => line.0[w].store(word - (1 << s), Relaxed),
            }
            true
        });
        self.removes.fetch_add(1, Relaxed);
        if underflows > 0 {
            self.underflows.fetch_add(underflows, Relaxed);
        }
    }

    /// Requests the line of `hash`.
    #[inline(always)]
    pub fn prefetch(&self, hash: u64) {
        prefetch_line(self.line(hash) as *const Line as *const u8);
    }

    /// The counter values of `hash` (for tests and diagnostics).
    pub fn counts(&self, hash: u64) -> Vec<u8> {
        let line = self.line(hash);
        let mut out = Vec::with_capacity(self.geometry.k as usize);
        self.for_each_counter(hash, |w, s| {
            out.push(((line.0[w].load(Relaxed) >> s) & 0xf) as u8);
            true
        });
        out
    }
}

/// The engine's handle on a shared [`CountingBloom`] (its `CsFilter`).
#[derive(Debug, Clone)]
pub struct BloomHandle(pub Arc<CountingBloom>);

impl CsFilter for BloomHandle {
    #[inline]
    fn prefetch(&self, full_hash: u64) {
        self.0.prefetch(full_hash);
    }

    #[inline]
    fn may_hold(&self, full_hash: u64) -> bool {
        self.0.may_contain(full_hash)
    }

    fn insert(&mut self, full_hash: u64) {
        self.0.insert(full_hash);
    }

    fn remove(&mut self, full_hash: u64) {
        self.0.remove(full_hash);
    }
}

#[cfg(test)]
mod tests;
