//! The synthetic FIB.

use std::collections::HashSet;

use wire::{Component, Name};

use super::names::UrlGen;
use super::rng::Rng;
use super::vocab::{domain_label, word, HOSTS, TLDS};

/// Table 5 of So et al.: the FIB prefix-depth distribution (URLBlacklist): share of prefixes with
/// `d + 1` components at index `d`. The ≤2 bucket (1.8%) is all depth 2 and the ≥8 bucket
/// (3.4%) is spread over depths 8 to 11; the mean is about 4.26.
pub const TABLE5_DEPTH_SHARES: [f64; 11] = [
    0.0, 0.018, 0.285, 0.369, 0.191, 0.069, 0.033, 0.022, 0.008, 0.003, 0.001,
];

/// Parameters of [`synthetic_fib_with`].
#[derive(Debug, Clone, PartialEq)]
pub struct FibConfig {
    /// Share of prefixes per depth (index `d` is depth `d + 1`); normalized before use.
    pub depth_shares: Vec<f64>,
    /// Probability, per depth (index `d` is depth `d + 1`), that a new prefix's parent is itself
    /// a FIB prefix (rather than a non-FIB intermediate name). Missing entries use the last one.
    pub parent_in_fib: Vec<f64>,
    /// Probability that a prefix whose parent is not in the FIB reuses an existing non-FIB
    /// parent instead of a fresh one.
    pub reuse_virtual_parent: f64,
}

impl Default for FibConfig {
    fn default() -> Self {
        FibConfig {
            depth_shares: TABLE5_DEPTH_SHARES.to_vec(),
            // Depth 3 (`/com/youtube/www`) rarely has its registered domain in the list; deeper
            // prefixes mostly extend a listed host or path.
            parent_in_fib: vec![0.0, 0.0, 0.12, 0.97, 0.7, 0.65],
            reuse_virtual_parent: 0.3,
        }
    }
}

/// The key of `name` in [`FibBuilder::seen`]: the standard library's hasher with its fixed
/// key (`DefaultHasher::new`), so the builder stays deterministic for a seed. (The algorithm
/// could change with Rust releases; the builder's output would only change if it then made
/// two of the names it considers collide.)
fn name_key(name: &Name) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    name.hash(&mut h);
    h.finish()
}

/// Builds the FIB as a tree, level by level.
struct FibBuilder<'a> {
    rng: Rng,
    gen: UrlGen,
    cfg: &'a FibConfig,
    /// All names created (FIB and intermediate), by id.
    nodes: Vec<Name>,
    /// Membership of every created name (FIB or not), to keep siblings distinct: 64-bit hashes
    /// ([`name_key`]), so that a name is not stored twice. A collision can only make the
    /// builder draw another component, never let two equal names through.
    seen: HashSet<u64>,
    /// Per depth: attachment pools (an id appears once per creation plus once per child:
    /// uniform picks from a pool are preferential attachment).
    fib_pool: Vec<Vec<usize>>,
    virt_pool: Vec<Vec<usize>>,
    fib: Vec<usize>,
}

impl FibBuilder<'_> {
    fn parent_in_fib(&self, depth: usize) -> f64 {
        let p = &self.cfg.parent_in_fib;
        p.get(depth - 1)
            .or(p.last())
            .copied()
            .unwrap_or(0.9)
            .clamp(0.0, 1.0)
    }

    fn pool(&mut self, fib: bool, depth: usize) -> &mut Vec<usize> {
        let pools = if fib {
            &mut self.fib_pool
        } else {
            &mut self.virt_pool
        };
        if pools.len() <= depth {
            pools.resize(depth + 1, Vec::new());
        }
        &mut pools[depth]
    }

    /// A candidate last component for a node at `depth`.
    fn component(&mut self, depth: usize, attempt: usize) -> Component {
        let rng = &mut self.rng;
        let mut c = match depth {
            1 => Component::generic(self.gen.tld(rng).as_bytes()),
            2 => Component::generic(domain_label(rng).into_bytes()),
            3 => {
                let s = if attempt == 0 && rng.chance(0.5) {
                    "www".to_string()
                } else if rng.chance(0.5) {
                    rng.pick(HOSTS).to_string()
                } else {
                    let l = rng.range(2, 9);
                    word(rng, l)
                };
                Component::generic(s.into_bytes())
            }
            _ => {
                if rng.chance(0.1) {
                    self.gen.file(rng)
                } else {
                    self.gen.dir(rng)
                }
            }
        };
        if attempt >= 8 {
            c.value
                .extend_from_slice(format!("{}", rng.below(1 << 20)).as_bytes());
        }
        c
    }

    /// Creates a child of `parent` (a node id, or the root) at `depth` with a fresh name.
    fn create(&mut self, parent: Option<usize>, depth: usize, fib: bool) -> usize {
        let mut name = parent.map(|p| self.nodes[p].clone()).unwrap_or_default();
        let mut attempt = 0;
        let key = loop {
            name.push(self.component(depth, attempt));
            let key = name_key(&name);
            if !self.seen.contains(&key) {
                break key;
            }
            name.components.pop();
            attempt += 1;
        };
        let id = self.nodes.len();
        self.seen.insert(key);
        self.nodes.push(name);
        self.pool(fib, depth).push(id);
        if fib {
            self.fib.push(id);
        }
        id
    }

    /// Chooses (or creates) the parent of a new node at `depth` (≥ 2).
    fn parent(&mut self, depth: usize) -> usize {
        let pd = depth - 1;
        if pd == 1 {
            // TLDs: pick by popularity; the TLD nodes are ids 0.. in `TLDS` order.
            return self.gen.tld.sample(&mut self.rng);
        }
        let fib_avail = self.fib_pool.get(pd).is_some_and(|v| !v.is_empty());
        let p_in = self.parent_in_fib(depth);
        if fib_avail && self.rng.chance(p_in) {
            let pool = &self.fib_pool[pd];
            let id = pool[self.rng.index(pool.len())];
            self.fib_pool[pd].push(id);
            return id;
        }
        let virt_avail = self.virt_pool.get(pd).is_some_and(|v| !v.is_empty());
        if virt_avail && self.rng.chance(self.cfg.reuse_virtual_parent) {
            let pool = &self.virt_pool[pd];
            let id = pool[self.rng.index(pool.len())];
            self.virt_pool[pd].push(id);
            return id;
        }
        let gp = self.parent(pd);
        self.create(Some(gp), pd, false)
    }
}

/// Largest-remainder apportionment of `count` over `shares`.
pub(super) fn apportion(count: usize, shares: &[f64]) -> Vec<usize> {
    let total: f64 = shares.iter().sum();
    let exact: Vec<f64> = shares.iter().map(|s| s / total * count as f64).collect();
    let mut out: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let mut left = count - out.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    for &i in order.iter().cycle() {
        if left == 0 {
            break;
        }
        if shares[i] > 0.0 {
            out[i] += 1;
            left -= 1;
        }
    }
    out
}

/// `count` distinct FIB prefixes whose depth distribution follows Table 5 of So et al. (mean depth
/// about 4.26), with the default [`FibConfig`].
///
/// Prefixes look like the names of [`ircache_like_names`](super::ircache_like_names)
/// (`/com/youtube/www/cats`) and form a realistic hierarchy: a deep prefix usually has its
/// shallower ancestors in the FIB too, so the 2-stage FIB needs few virtual entries
/// ([`virtual_entries_needed`](super::virtual_entries_needed); about 3–5% at M = 4, So et al.
/// measured 6.4%). The result is shuffled (insertion order is random); sort by length if parents
/// must come first.
pub fn synthetic_fib(seed: u64, count: usize) -> Vec<Name> {
    synthetic_fib_with(seed, count, &FibConfig::default())
}

/// [`synthetic_fib`] with explicit parameters.
pub fn synthetic_fib_with(seed: u64, count: usize, cfg: &FibConfig) -> Vec<Name> {
    let mut rng = Rng::new(seed ^ 0xF1B0_0000_5EED_0002);
    let mut vocab_rng = rng.fork();
    let gen = UrlGen::new(&mut vocab_rng, 5_000, 1.0, &[1.0, 1.0, 0.5]);
    let per_depth = apportion(count, &cfg.depth_shares);
    let mut b = FibBuilder {
        rng,
        gen,
        cfg,
        nodes: Vec::with_capacity(count + count / 4),
        seen: HashSet::with_capacity(count + count / 4),
        fib_pool: Vec::new(),
        virt_pool: Vec::new(),
        fib: Vec::with_capacity(count),
    };
    // Depth 1: every TLD exists as a node; the first `per_depth[0]` (by popularity) are FIB
    // prefixes, the others intermediate.
    let n_tld_fib = per_depth.first().copied().unwrap_or(0);
    let mut extra_depth2 = 0;
    for (i, (tld, _)) in TLDS.iter().enumerate() {
        let id = b.nodes.len();
        let name = Name::new().with_str(tld);
        b.seen.insert(name_key(&name));
        b.nodes.push(name);
        let fib = i < n_tld_fib;
        b.pool(fib, 1).push(id);
        if fib {
            b.fib.push(id);
        }
    }
    if n_tld_fib > TLDS.len() {
        extra_depth2 = n_tld_fib - TLDS.len();
    }
    for (d, &n) in per_depth.iter().enumerate().skip(1) {
        let depth = d + 1;
        let n = if depth == 2 { n + extra_depth2 } else { n };
        for _ in 0..n {
            let parent = b.parent(depth);
            b.create(Some(parent), depth, true);
        }
    }
    // Each FIB node appears once in `b.fib`: its name moves out instead of being copied.
    let mut fib: Vec<Name> = b
        .fib
        .iter()
        .map(|&id| std::mem::take(&mut b.nodes[id]))
        .collect();
    b.rng.shuffle(&mut fib);
    fib
}
