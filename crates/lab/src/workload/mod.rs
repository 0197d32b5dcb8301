//! Deterministic synthetic name workloads for tests and benchmarks (seed 002, §4.1).
//!
//! The seed drove its forwarding engine with names made from the URLs of 16 IRCache traces
//! (reverse domain components, then path components, the query string as one component):
//! 6.66 components and 58.4 characters per name on average (Table 3). Its FIB was synthesized
//! from prefixes of those names to follow the URLBlacklist prefix-depth distribution, a
//! long-tailed one with mean 4.26 (Table 5). Neither data set ships with Cascade, so this module
//! generates look-alikes:
//!
//! - [`ircache_like_names`]: URL-shaped names calibrated to Table 3;
//! - [`synthetic_fib`]: distinct FIB prefixes with Table 5's depth distribution, whose deep
//!   prefixes mostly hang below shallower FIB prefixes (so 2-stage FIB expansion stays small);
//! - [`interests_for_fib`]: Interest names extending FIB prefixes (most match, some do not);
//! - attack shapes: [`garbage_token_names`], [`shared_long_prefix_names`],
//!   [`random_binary_names`].
//!
//! Everything is a pure function of its seed: a small xoshiro256** generator ([`Rng`]) and
//! table-driven [`Discrete`] and [`Zipf`] samplers, no outside randomness, and hash sets are
//! used only for membership tests (never iterated), so the output is identical on every run and
//! platform.

use std::collections::HashSet;

use wire::{Component, Name};

// ---------------------------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Statistics and reference helpers
// ---------------------------------------------------------------------------------------------

/// Summary statistics of a set of names, counted the way seed 002's Table 3 counts URLs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NameStats {
    /// Number of names.
    pub count: usize,
    /// Mean number of components per name.
    pub mean_components: f64,
    /// Mean URL characters per name: component value bytes plus one `/` per component
    /// (see [`url_chars`]).
    pub mean_chars: f64,
    /// Number of distinct names.
    pub distinct: usize,
}

/// Characters of a name in URL form as seed 002 counts them: the sum of the component value
/// lengths plus one `/` per component.
pub fn url_chars(name: &Name) -> usize {
    name.components.iter().map(|c| c.value.len() + 1).sum()
}

/// Component-count and character statistics of `names` (all zero for an empty slice).
pub fn stats(names: &[Name]) -> NameStats {
    let count = names.len();
    if count == 0 {
        return NameStats {
            count: 0,
            mean_components: 0.0,
            mean_chars: 0.0,
            distinct: 0,
        };
    }
    let comps: usize = names.iter().map(Name::len).sum();
    let chars: usize = names.iter().map(url_chars).sum();
    let distinct = names.iter().collect::<HashSet<_>>().len();
    NameStats {
        count,
        mean_components: comps as f64 / count as f64,
        mean_chars: chars as f64 / count as f64,
        distinct,
    }
}

/// Number of names per component count: `hist[d]` names have `d` components.
pub fn depth_histogram(names: &[Name]) -> Vec<usize> {
    let mut hist = Vec::new();
    for n in names {
        if hist.len() <= n.len() {
            hist.resize(n.len() + 1, 0);
        }
        hist[n.len()] += 1;
    }
    hist
}

/// The number of virtual entries the 2-stage FIB (seed 002, Algorithm 1) needs at depth `m`:
/// distinct depth-`m` prefixes of longer FIB prefixes that are not FIB prefixes themselves.
/// Divided by `fib.len()`, this is the seed's "FIB expansion" (Table 5).
pub fn virtual_entries_needed(fib: &[Name], m: usize) -> usize {
    let real: HashSet<&[Component]> = fib.iter().map(|n| n.components.as_slice()).collect();
    let mut virt: HashSet<&[Component]> = HashSet::new();
    for n in fib {
        if n.len() > m {
            let p = &n.components[..m];
            if !real.contains(p) {
                virt.insert(p);
            }
        }
    }
    virt.len()
}

/// A slow, obviously-correct longest-prefix matcher over a set of prefixes: a reference for
/// testing real FIB implementations and for classifying workload names.
#[derive(Debug, Clone, Default)]
pub struct NaiveLpm {
    prefixes: HashSet<Vec<Component>>,
    max_depth: usize,
}

impl NaiveLpm {
    /// A matcher over `prefixes` (duplicates are fine).
    pub fn new(prefixes: &[Name]) -> Self {
        NaiveLpm {
            prefixes: prefixes.iter().map(|n| n.components.clone()).collect(),
            max_depth: prefixes.iter().map(Name::len).max().unwrap_or(0),
        }
    }

    /// Is `prefix` exactly one of the prefixes?
    pub fn contains(&self, prefix: &[Component]) -> bool {
        self.prefixes.contains(prefix)
    }

    /// The length of the longest prefix of `name` in the set, if any (0 when the empty name is
    /// in the set and nothing longer matches).
    pub fn longest_match(&self, name: &Name) -> Option<usize> {
        let top = name.len().min(self.max_depth);
        (0..=top)
            .rev()
            .find(|&k| self.prefixes.contains(&name.components[..k]))
    }
}

// ---------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------

/// Top-level domains with rough popularity weights (IRCache-era traffic is mostly `.com`).
const TLDS: &[(&str, f64)] = &[
    ("com", 52.0),
    ("net", 9.0),
    ("org", 6.0),
    ("edu", 3.0),
    ("de", 4.0),
    ("uk", 3.0),
    ("jp", 3.0),
    ("cn", 2.0),
    ("ru", 2.0),
    ("br", 2.0),
    ("fr", 2.0),
    ("info", 1.5),
    ("it", 1.5),
    ("nl", 1.5),
    ("au", 1.5),
    ("ca", 1.5),
    ("kr", 1.0),
    ("tv", 1.0),
    ("us", 1.0),
    ("gov", 1.0),
    ("es", 1.0),
    ("pl", 1.0),
    ("in", 1.0),
    ("mx", 0.5),
    ("biz", 0.5),
    ("tw", 0.5),
    ("se", 0.5),
    ("ch", 0.5),
];

/// Country TLDs that usually carry a second-level label such as `co` (`uk/co/bbc`).
const CC_SECOND_LEVEL: &[(&str, &[&str])] = &[
    ("uk", &["co", "ac", "org", "gov"]),
    ("jp", &["co", "ne", "or", "ac"]),
    ("au", &["com", "net", "edu"]),
    ("br", &["com", "gov"]),
    ("cn", &["com", "net", "edu"]),
    ("kr", &["co", "or"]),
    ("mx", &["com"]),
    ("tw", &["com", "edu"]),
    ("in", &["co", "ac"]),
];

/// TLD-like first components that no realistic FIB routes (for non-matching Interests).
const UNROUTED: &[&str] = &["invalid", "test", "example", "onion", "lan", "internal"];

/// Host labels (the most specific domain label).
const HOSTS: &[&str] = &[
    "www", "images", "img", "static", "cdn", "news", "mail", "ads", "video", "media", "blog", "m",
    "en", "s", "i", "api", "shop", "login", "search", "maps", "download", "photos", "a", "ad",
    "pics", "web", "edition", "sports", "music", "forums",
];

/// Common URL path words (the head of the path-word Zipf distribution).
const PATH_WORDS: &[&str] = &[
    "images",
    "img",
    "news",
    "index",
    "cgi-bin",
    "search",
    "en",
    "us",
    "media",
    "static",
    "js",
    "css",
    "content",
    "files",
    "photos",
    "video",
    "2009",
    "2010",
    "blog",
    "forum",
    "wp-content",
    "uploads",
    "data",
    "ads",
    "api",
    "v1",
    "home",
    "products",
    "article",
    "story",
    "sports",
    "weather",
    "i",
    "pics",
    "thumbs",
    "assets",
    "scripts",
    "common",
    "default",
    "shared",
    "library",
    "music",
    "games",
    "world",
    "business",
    "tech",
    "entertainment",
    "politics",
    "local",
    "health",
    "travel",
    "2008",
    "01",
    "02",
    "03",
    "04",
    "05",
    "06",
    "07",
    "08",
    "09",
    "10",
    "11",
    "12",
    "include",
    "xml",
    "rss",
    "feeds",
    "banner",
    "banners",
    "adserver",
    "pagead",
    "ajax",
    "lib",
    "public",
    "user",
    "users",
    "profile",
    "members",
    "archive",
    "archives",
    "gallery",
    "download",
    "downloads",
    "docs",
    "help",
    "support",
    "about",
    "catalog",
    "shop",
    "cart",
];

/// File extensions of the last path component.
const EXTENSIONS: &[(&str, f64)] = &[
    ("html", 14.0),
    ("jpg", 16.0),
    ("gif", 18.0),
    ("php", 8.0),
    ("js", 9.0),
    ("css", 5.0),
    ("png", 6.0),
    ("htm", 4.0),
    ("asp", 2.0),
    ("aspx", 2.0),
    ("swf", 2.0),
    ("xml", 2.0),
    ("jsp", 1.0),
    ("cgi", 1.0),
    ("txt", 1.0),
    ("flv", 1.0),
];

/// Query-string keys.
const QUERY_KEYS: &[&str] = &[
    "id", "q", "p", "page", "s", "t", "ref", "lang", "cat", "type", "sid", "uid", "v", "u", "c",
    "key", "format", "size", "ts", "rnd", "callback", "r", "n", "src", "cid", "action", "mode",
];

const CONSONANTS: &[u8] = b"bcdfghjklmnprstvwxyz";
const VOWELS: &[u8] = b"aeiou";
const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &[u8] = b"0123456789abcdef";

/// A pronounceable pseudo-word of exactly `len` lowercase letters.
fn word(rng: &mut Rng, len: usize) -> String {
    let mut s = String::with_capacity(len);
    let mut vowel = rng.chance(0.3);
    while s.len() < len {
        let set = if vowel { VOWELS } else { CONSONANTS };
        s.push(char::from(*rng.pick(set)));
        // Mostly alternate; sometimes two consonants in a row.
        vowel = if vowel { false } else { !rng.chance(0.15) };
    }
    s
}

/// A token of `len` characters from `alphabet`.
fn token(rng: &mut Rng, alphabet: &[u8], len: usize) -> String {
    (0..len).map(|_| char::from(*rng.pick(alphabet))).collect()
}

/// A domain label (registered-domain name): pseudo-word, sometimes with a digit or hyphen part.
fn domain_label(rng: &mut Rng) -> String {
    let len = rng.range(4, 13);
    let mut s = word(rng, len);
    if rng.chance(0.08) {
        s.push_str(&rng.range(1, 99).to_string());
    } else if rng.chance(0.08) {
        s.push('-');
        let l = rng.range(2, 6);
        s.push_str(&word(rng, l));
    }
    s
}

/// The vocabulary of path words: the common list, then generated words.
fn path_vocabulary(rng: &mut Rng, size: usize) -> Vec<String> {
    let mut v: Vec<String> = PATH_WORDS.iter().map(|s| (*s).to_string()).collect();
    let mut seen: HashSet<String> = v.iter().cloned().collect();
    while v.len() < size.max(PATH_WORDS.len()) {
        let w = match rng.index(10) {
            0 => {
                let (a, b) = (rng.range(3, 7), rng.range(3, 7));
                format!("{}-{}", word(rng, a), word(rng, b))
            }
            1 => {
                let (a, b) = (rng.range(3, 6), rng.range(3, 7));
                format!("{}_{}", word(rng, a), word(rng, b))
            }
            2 => {
                let a = rng.range(3, 8);
                format!("{}{}", word(rng, a), rng.range(1, 999))
            }
            _ => {
                let a = rng.range(3, 11);
                word(rng, a)
            }
        };
        if seen.insert(w.clone()) {
            v.push(w);
        }
    }
    v
}

// ---------------------------------------------------------------------------------------------
// IRCache-like names
// ---------------------------------------------------------------------------------------------

/// Parameters of [`ircache_like_names_with`]. [`NameConfig::default`] is calibrated to seed
/// 002's Table 3 (6.66 components, 58.4 URL characters per name).
#[derive(Debug, Clone, PartialEq)]
pub struct NameConfig {
    /// Number of distinct web sites (reverse-domain parts) to draw from.
    pub sites: usize,
    /// Zipf exponent of site popularity.
    pub site_zipf: f64,
    /// Size of the path-word vocabulary.
    pub path_words: usize,
    /// Zipf exponent of path-word popularity.
    pub path_zipf: f64,
    /// Weights of the number of domain labels after the TLD (index 0 is one label).
    pub domain_label_weights: Vec<f64>,
    /// Weights of the number of path components (index `k` is `k` components).
    pub path_len_weights: Vec<f64>,
    /// Probability that the last path component is a file name (`word_123.jpg`).
    pub file_prob: f64,
    /// Probability of a final query-string component (`?id=1&lang=en`).
    pub query_prob: f64,
    /// Weights of the number of `key=value` pairs in a query string (index 0 is one pair).
    pub query_pairs_weights: Vec<f64>,
}

impl Default for NameConfig {
    fn default() -> Self {
        NameConfig {
            sites: 20_000,
            site_zipf: 0.75,
            path_words: 5_000,
            path_zipf: 1.0,
            domain_label_weights: vec![0.20, 0.64, 0.16],
            path_len_weights: vec![
                0.030, 0.165, 0.225, 0.195, 0.125, 0.095, 0.060, 0.038, 0.024, 0.015, 0.010, 0.007,
                0.005, 0.003, 0.002, 0.001, 0.001,
            ],
            file_prob: 0.75,
            query_prob: 0.24,
            query_pairs_weights: vec![0.30, 0.28, 0.18, 0.10, 0.06, 0.04, 0.02, 0.02],
        }
    }
}

/// A web site: its reverse-domain components.
type Site = Vec<Component>;

/// Shared machinery for URL-shaped components.
struct UrlGen {
    tld: Discrete,
    ext: Discrete,
    words: Vec<String>,
    word_zipf: Zipf,
    pairs: Discrete,
}

impl UrlGen {
    fn new(rng: &mut Rng, path_words: usize, path_zipf: f64, pairs: &[f64]) -> Self {
        let words = path_vocabulary(rng, path_words);
        let word_zipf = Zipf::new(words.len(), path_zipf);
        UrlGen {
            tld: Discrete::new(&TLDS.iter().map(|t| t.1).collect::<Vec<_>>()),
            ext: Discrete::new(&EXTENSIONS.iter().map(|t| t.1).collect::<Vec<_>>()),
            words,
            word_zipf,
            pairs: Discrete::new(pairs),
        }
    }

    fn tld(&self, rng: &mut Rng) -> &'static str {
        TLDS[self.tld.sample(rng)].0
    }

    /// A site's reverse-domain components: TLD, then `labels` domain labels.
    fn site(&self, rng: &mut Rng, labels: usize) -> Site {
        let tld = self.tld(rng);
        let mut c = vec![Component::generic(tld.as_bytes())];
        let mut left = labels;
        if labels >= 2 {
            if let Some((_, sl)) = CC_SECOND_LEVEL.iter().find(|(t, _)| *t == tld) {
                if rng.chance(0.8) {
                    c.push(Component::generic(rng.pick(sl).as_bytes()));
                    left -= 1;
                }
            }
        }
        c.push(Component::generic(domain_label(rng).into_bytes()));
        left -= 1;
        for i in 0..left {
            let last = i + 1 == left;
            let label = if last && rng.chance(0.6) {
                "www".to_string()
            } else if rng.chance(0.6) {
                rng.pick(HOSTS).to_string()
            } else {
                let l = rng.range(2, 8);
                let mut w = word(rng, l);
                if rng.chance(0.3) {
                    w.push_str(&rng.range(1, 20).to_string());
                }
                w
            };
            c.push(Component::generic(label.into_bytes()));
        }
        c
    }

    /// A directory-like path component.
    fn dir(&self, rng: &mut Rng) -> Component {
        let s = match rng.index(20) {
            0..=15 => self.words[self.word_zipf.sample(rng)].clone(),
            16 | 17 => rng.range(1, 99_999).to_string(),
            _ => {
                let l = rng.range(7, 18);
                token(rng, ALNUM, l)
            }
        };
        Component::generic(s.into_bytes())
    }

    /// A file-like last path component (`word_4711.jpg`), usually unique.
    fn file(&self, rng: &mut Rng) -> Component {
        let ext = EXTENSIONS[self.ext.sample(rng)].0;
        let stem = match rng.index(10) {
            0..=2 => self.words[self.word_zipf.sample(rng)].clone(),
            3..=6 => {
                let w = &self.words[self.word_zipf.sample(rng)];
                format!("{}_{}", w, rng.range(1, 99_999))
            }
            7 | 8 => {
                let l = rng.range(8, 24);
                token(rng, HEX, l)
            }
            _ => {
                let l = rng.range(3, 9);
                format!("{}{}", word(rng, l), rng.range(1, 9_999))
            }
        };
        Component::generic(format!("{stem}.{ext}").into_bytes())
    }

    /// A query-string component (`?key=value&key=value`).
    fn query(&self, rng: &mut Rng) -> Component {
        let pairs = self.pairs.sample(rng) + 1;
        let mut s = String::from("?");
        for i in 0..pairs {
            if i > 0 {
                s.push('&');
            }
            let key: &&str = rng.pick(QUERY_KEYS);
            s.push_str(key);
            s.push('=');
            match rng.index(4) {
                0 => s.push_str(&rng.below(1_000_000).to_string()),
                1 => {
                    let l = rng.range(4, 16);
                    s.push_str(&token(rng, ALNUM, l));
                }
                2 => s.push_str(&self.words[self.word_zipf.sample(rng)]),
                _ => {
                    let l = rng.range(1, 4);
                    s.push_str(&rng.below(10u64.pow(l as u32)).to_string());
                }
            }
        }
        Component::generic(s.into_bytes())
    }

    /// Appends `n` path components (the last one usually a file) and perhaps a query.
    fn extend_path(&self, rng: &mut Rng, name: &mut Name, n: usize, file_prob: f64, q: f64) {
        for i in 0..n {
            let c = if i + 1 == n && rng.chance(file_prob) {
                self.file(rng)
            } else {
                self.dir(rng)
            };
            name.push(c);
        }
        if rng.chance(q) {
            name.push(self.query(rng));
        }
    }
}

/// `count` URL-shaped names in the style of seed 002's IRCache workload, with the default,
/// Table 3-calibrated [`NameConfig`]: over many names the mean is about 6.66 components and
/// 58.4 URL characters ([`url_chars`]), and nearly all names are distinct.
///
/// A name is a reverse-domain part (TLD, then one to three labels, e.g. `/com/youtube/www`),
/// path components (directories, then usually a file name), and sometimes a final query-string
/// component such as `?id=42&lang=en`. Sites and path words follow Zipf popularity, so names
/// share prefixes the way real traffic does.
pub fn ircache_like_names(seed: u64, count: usize) -> Vec<Name> {
    ircache_like_names_with(seed, count, &NameConfig::default())
}

/// [`ircache_like_names`] with explicit parameters.
pub fn ircache_like_names_with(seed: u64, count: usize, cfg: &NameConfig) -> Vec<Name> {
    let mut rng = Rng::new(seed ^ 0x1C0C_AC4E_0000_0001);
    let mut vocab_rng = rng.fork();
    let gen = UrlGen::new(
        &mut vocab_rng,
        cfg.path_words,
        cfg.path_zipf,
        &cfg.query_pairs_weights,
    );
    let labels = Discrete::new(&cfg.domain_label_weights);
    let sites: Vec<Site> = (0..cfg.sites.max(1))
        .map(|_| {
            let l = labels.sample(&mut vocab_rng) + 1;
            gen.site(&mut vocab_rng, l)
        })
        .collect();
    let site_zipf = Zipf::new(sites.len(), cfg.site_zipf);
    let path_len = Discrete::new(&cfg.path_len_weights);
    (0..count)
        .map(|_| {
            let mut name = Name {
                components: sites[site_zipf.sample(&mut rng)].clone(),
            };
            let n = path_len.sample(&mut rng);
            // A bare site URL usually carries a query (`example.com/?q=...`); keep it rare.
            let q = if n == 0 { 0.6 } else { cfg.query_prob };
            gen.extend_path(&mut rng, &mut name, n, cfg.file_prob, q);
            name
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Synthetic FIB
// ---------------------------------------------------------------------------------------------

/// Seed 002's Table 5 FIB prefix-depth distribution (URLBlacklist): share of prefixes with
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
fn apportion(count: usize, shares: &[f64]) -> Vec<usize> {
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

/// `count` distinct FIB prefixes whose depth distribution follows seed 002's Table 5
/// (mean depth about 4.26), with the default [`FibConfig`].
///
/// Prefixes look like the names of [`ircache_like_names`] (`/com/youtube/www/cats`) and form
/// a realistic hierarchy: a deep prefix usually has its shallower ancestors in the FIB too, so
/// the 2-stage FIB needs few virtual entries ([`virtual_entries_needed`]; about 3–5% at
/// M = 4, the seed measured 6.4%). The result is shuffled (insertion order is random); sort by
/// length if parents must come first.
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

// ---------------------------------------------------------------------------------------------
// Interests against a FIB
// ---------------------------------------------------------------------------------------------

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
            // Mean 2.4 extra components: 4.26 + 2.4 = 6.66 (seed 002 §4.1 reports a mean
            // distance of 2.40 between Interest and FIB names).
            extra_weights: vec![0.31, 0.32, 0.20, 0.09, 0.045, 0.02, 0.01, 0.005],
            query_prob: 0.2,
        }
    }
}

/// `count` Interest names against `fib`, with the default [`InterestConfig`]: 90% extend a
/// uniformly chosen FIB prefix with URL-like components (about 2.4 more on average, so with
/// [`synthetic_fib`] the mean is about 6.66 components), 10% are IRCache-like names that match
/// no FIB prefix. Mirrors seed 002's trace Interests against its URLBlacklist-derived FIB.
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

// ---------------------------------------------------------------------------------------------
// Attack workloads
// ---------------------------------------------------------------------------------------------

/// `count` names of exactly `components` random alphanumeric tokens (4 to 12 characters): the
/// seed's DoS scenario of long non-matching names made of garbage tokens, which costs a
/// longest-first FIB lookup `components` probes (use 30 or more).
pub fn garbage_token_names(seed: u64, count: usize, components: usize) -> Vec<Name> {
    let mut rng = Rng::new(seed ^ 0x6A2B_A6E0_0000_0004);
    (0..count)
        .map(|_| Name {
            components: (0..components)
                .map(|_| {
                    let l = rng.range(4, 12);
                    Component::generic(token(&mut rng, ALNUM, l).into_bytes())
                })
                .collect(),
        })
        .collect()
}

/// `count` distinct names that share one random `prefix_len`-component prefix and differ only
/// in one final component (`prefix_len + 1` components each): stresses per-prefix work that
/// repeats for every name, and hash-table chains along a single path.
pub fn shared_long_prefix_names(seed: u64, count: usize, prefix_len: usize) -> Vec<Name> {
    let mut rng = Rng::new(seed ^ 0x54A2_ED00_0000_0005);
    let prefix: Vec<Component> = (0..prefix_len)
        .map(|_| {
            let l = rng.range(4, 12);
            Component::generic(token(&mut rng, ALNUM, l).into_bytes())
        })
        .collect();
    (0..count)
        .map(|i| {
            let mut components = prefix.clone();
            let tail = format!("{i:x}-{}", token(&mut rng, ALNUM, 6));
            components.push(Component::generic(tail.into_bytes()));
            Name { components }
        })
        .collect()
}

/// `count` names of 1 to 16 generic components of 0 to 40 uniformly random bytes (mostly
/// non-printable; empty components are legal in NDN v0.3): exercises parsing, escaping and
/// hashing of arbitrary component bytes.
pub fn random_binary_names(seed: u64, count: usize) -> Vec<Name> {
    let mut rng = Rng::new(seed ^ 0xB1A4_0000_0000_0006);
    (0..count)
        .map(|_| {
            let k = rng.range(1, 16);
            Name {
                components: (0..k)
                    .map(|_| {
                        let mut v = vec![0u8; rng.range(0, 40)];
                        rng.fill_bytes(&mut v);
                        Component::generic(v)
                    })
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(hist: &[usize], lo: usize, hi: usize, total: usize) -> f64 {
        let n: usize = hist
            .iter()
            .enumerate()
            .filter(|(d, _)| (lo..=hi).contains(d))
            .map(|(_, c)| c)
            .sum();
        n as f64 / total as f64
    }

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let a: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..100).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..100).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::new(43);
            (0..100).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut r = Rng::new(0);
        let mut counts = [0usize; 10];
        for _ in 0..100_000 {
            let x = r.below(10);
            counts[x as usize] += 1;
            let f = r.f64();
            assert!((0.0..1.0).contains(&f));
            let k = r.range(3, 5);
            assert!((3..=5).contains(&k));
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
        let mut v: Vec<u32> = (0..100).collect();
        r.shuffle(&mut v);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        assert_ne!(v, sorted);
    }

    #[test]
    fn discrete_and_zipf_follow_their_weights() {
        let d = Discrete::new(&[1.0, 0.0, 3.0]);
        assert!((d.mean() - 1.5).abs() < 1e-12);
        let mut r = Rng::new(7);
        let mut counts = [0usize; 3];
        for _ in 0..40_000 {
            counts[d.sample(&mut r)] += 1;
        }
        assert_eq!(counts[1], 0);
        assert!((9_300..10_700).contains(&counts[0]), "{counts:?}");
        let z = Zipf::new(1000, 1.0);
        let mut counts = vec![0usize; 1000];
        for _ in 0..50_000 {
            counts[z.sample(&mut r)] += 1;
        }
        // P(rank 0) = 1/H(1000) ≈ 0.1336; rank 1 about half of that.
        assert!((6_200..7_200).contains(&counts[0]), "{}", counts[0]);
        assert!(counts[0] > counts[1] && counts[1] > counts[9]);
    }

    #[test]
    fn stats_and_reference_helpers() {
        let n = |s: &str| Name::from_uri(s).unwrap();
        let names = vec![n("/com/cisco/ndn"), n("/com/cisco/ndn"), n("/a")];
        let s = stats(&names);
        assert_eq!(s.count, 3);
        assert_eq!(s.distinct, 2);
        assert_eq!(url_chars(&names[0]), 14); // "/com/cisco/ndn"
        assert!((s.mean_components - 7.0 / 3.0).abs() < 1e-12);
        assert!((s.mean_chars - 30.0 / 3.0).abs() < 1e-12);
        assert_eq!(stats(&[]).count, 0);
        assert_eq!(depth_histogram(&names), vec![0, 1, 0, 2]);

        let fib = vec![
            n("/com/a"),
            n("/com/a/b/c"),
            n("/com/d/e/f"),
            n("/com/d/e/g"),
        ];
        // Depth-3 virtual entries: /com/a/b and /com/d/e (once).
        assert_eq!(virtual_entries_needed(&fib, 3), 2);
        assert_eq!(virtual_entries_needed(&fib, 2), 1); // /com/d
        assert_eq!(virtual_entries_needed(&fib, 4), 0);
        let lpm = NaiveLpm::new(&fib);
        assert_eq!(lpm.longest_match(&n("/com/a/b/x")), Some(2));
        assert_eq!(lpm.longest_match(&n("/com/a/b/c/d")), Some(4));
        assert_eq!(lpm.longest_match(&n("/com/d/e")), None);
        assert!(lpm.contains(&n("/com/d/e/g").components));

        assert_eq!(apportion(10, &[0.5, 0.0, 0.5]), vec![5, 0, 5]);
        assert_eq!(apportion(7, &[1.0, 1.0, 1.0]).iter().sum::<usize>(), 7);
    }

    #[test]
    fn ircache_names_match_table3() {
        let names = ircache_like_names(0x5EED, 100_000);
        let s = stats(&names);
        assert!((s.mean_components - 6.66).abs() <= 0.15, "{s:?}");
        assert!((s.mean_chars - 58.4).abs() <= 2.0, "{s:?}");
        assert!(s.distinct >= 95_000, "{s:?}");
        let tlds: HashSet<&[u8]> = TLDS.iter().map(|t| t.0.as_bytes()).collect();
        let mut queries = 0;
        for n in &names {
            assert!(n.len() >= 2, "{n}");
            assert!(tlds.contains(n.components[0].value.as_slice()), "{n}");
            for (i, c) in n.components.iter().enumerate() {
                assert_eq!(c.typ, 8);
                assert!(!c.value.is_empty());
                if c.value.starts_with(b"?") {
                    assert_eq!(i + 1, n.len(), "query is the last component: {n}");
                    assert!(c.value.contains(&b'='));
                    queries += 1;
                }
            }
        }
        assert!((20_000..32_000).contains(&queries), "{queries}");
        let multi = names
            .iter()
            .filter_map(|n| n.components.last())
            .filter(|c| c.value.contains(&b'&'))
            .count();
        assert!(multi > 10_000, "{multi}");
        // Sites are Zipf-popular: prefixes are shared.
        let sites: HashSet<Name> = names.iter().map(|n| n.prefix(2)).collect();
        assert!(sites.len() < 20_000, "{}", sites.len());
    }

    #[test]
    fn generators_are_deterministic() {
        assert_eq!(ircache_like_names(3, 2000), ircache_like_names(3, 2000));
        assert_ne!(ircache_like_names(3, 2000), ircache_like_names(4, 2000));
        let fib = synthetic_fib(3, 2000);
        assert_eq!(fib, synthetic_fib(3, 2000));
        assert_ne!(fib, synthetic_fib(4, 2000));
        assert_eq!(
            interests_for_fib(5, &fib, 2000),
            interests_for_fib(5, &fib, 2000)
        );
        assert_ne!(
            interests_for_fib(5, &fib, 2000),
            interests_for_fib(6, &fib, 2000)
        );
        assert_eq!(
            garbage_token_names(1, 50, 30),
            garbage_token_names(1, 50, 30)
        );
        assert_ne!(
            garbage_token_names(1, 50, 30),
            garbage_token_names(2, 50, 30)
        );
        assert_eq!(
            shared_long_prefix_names(1, 50, 20),
            shared_long_prefix_names(1, 50, 20)
        );
        assert_ne!(
            shared_long_prefix_names(1, 50, 20),
            shared_long_prefix_names(2, 50, 20)
        );
        assert_eq!(random_binary_names(1, 50), random_binary_names(1, 50));
        assert_ne!(random_binary_names(1, 50), random_binary_names(2, 50));
        // A longer run starts with the shorter one (names do not depend on the count)...
        assert_eq!(
            ircache_like_names(3, 3000)[..2000],
            ircache_like_names(3, 2000)[..]
        );
    }

    #[test]
    fn fib_follows_table5() {
        let fib = synthetic_fib(0xF1B, 100_000);
        let s = stats(&fib);
        assert_eq!(s.count, 100_000);
        assert_eq!(s.distinct, 100_000, "FIB prefixes are distinct");
        assert!((s.mean_components - 4.26).abs() <= 0.1, "{s:?}");
        let h = depth_histogram(&fib);
        let total = fib.len();
        let buckets = [
            (0, 2, 0.018),
            (3, 3, 0.285),
            (4, 4, 0.369),
            (5, 5, 0.191),
            (6, 6, 0.069),
            (7, 7, 0.033),
            (8, usize::MAX, 0.034),
        ];
        for (lo, hi, want) in buckets {
            let got = share(&h, lo, hi, total);
            assert!(
                (got - want).abs() <= 0.01,
                "depth {lo}..={hi}: {got} vs {want}"
            );
        }
        // Realistic hierarchy: deep prefixes mostly have their parent in the FIB.
        let lpm = NaiveLpm::new(&fib);
        let deep: Vec<&Name> = fib.iter().filter(|n| n.len() >= 5).collect();
        let with_parent = deep
            .iter()
            .filter(|n| lpm.contains(&n.components[..n.len() - 1]))
            .count();
        assert!(
            with_parent * 10 >= deep.len() * 6,
            "{with_parent}/{}",
            deep.len()
        );
        // 2-stage FIB expansion stays small (the seed: 6.4% at M = 4).
        for m in 3..=8 {
            let e = virtual_entries_needed(&fib, m) as f64 / total as f64;
            assert!(e < 0.10, "expansion at M={m}: {e}");
            if m == 4 {
                assert!(e > 0.01, "expansion at M=4 suspiciously small: {e}");
            }
        }
        // The most-likely heuristic of the seed picks M = 4 for this FIB.
        let most_likely = (0..h.len()).max_by_key(|&d| h[d]).unwrap();
        assert_eq!(most_likely, 4);
    }

    #[test]
    fn fib_small_counts() {
        assert!(synthetic_fib(1, 0).is_empty());
        for count in [1, 2, 7, 50] {
            let fib = synthetic_fib(1, count);
            assert_eq!(fib.len(), count);
            assert_eq!(stats(&fib).distinct, count);
        }
    }

    #[test]
    fn interests_mostly_match_the_fib() {
        let fib = synthetic_fib(11, 50_000);
        let interests = interests_for_fib(12, &fib, 50_000);
        let s = stats(&interests);
        assert_eq!(s.count, 50_000);
        assert!((s.mean_components - 6.66).abs() <= 0.15, "{s:?}");
        assert!(s.distinct >= 47_500, "{s:?}");
        let lpm = NaiveLpm::new(&fib);
        let mut matched = 0;
        let mut distance = 0;
        for n in &interests {
            if let Some(k) = lpm.longest_match(n) {
                matched += 1;
                assert!(k < n.len(), "Interests extend their prefix: {n}");
                distance += n.len() - k;
            }
        }
        let ratio = matched as f64 / interests.len() as f64;
        assert!((ratio - 0.9).abs() <= 0.01, "match ratio {ratio}");
        // The seed reports a mean distance of 2.40 components between Interest and FIB name.
        let d = distance as f64 / matched as f64;
        assert!((2.0..2.8).contains(&d), "mean distance {d}");

        let all_miss = interests_for_fib(1, &[], 100);
        assert_eq!(all_miss.len(), 100);
        let all_hit = interests_for_fib_with(
            1,
            &fib,
            1000,
            &InterestConfig {
                match_ratio: 1.0,
                ..InterestConfig::default()
            },
        );
        assert!(all_hit.iter().all(|n| lpm.longest_match(n).is_some()));
    }

    #[test]
    fn interests_miss_even_under_tld_routes() {
        // A FIB that routes every TLD: the non-matching names must still miss.
        let fib: Vec<Name> = TLDS.iter().map(|t| Name::new().with_str(t.0)).collect();
        let interests = interests_for_fib(2, &fib, 1000);
        let lpm = NaiveLpm::new(&fib);
        let misses = interests
            .iter()
            .filter(|n| lpm.longest_match(n).is_none())
            .count();
        assert_eq!(misses, 100);
    }

    #[test]
    fn attack_shapes() {
        let fib = synthetic_fib(1, 10_000);
        let lpm = NaiveLpm::new(&fib);

        let garbage = garbage_token_names(1, 1000, 32);
        assert_eq!(garbage.len(), 1000);
        assert_eq!(stats(&garbage).distinct, 1000);
        for n in &garbage {
            assert_eq!(n.len(), 32);
            assert!(n
                .components
                .iter()
                .all(|c| (4..=12).contains(&c.value.len())
                    && c.value.iter().all(u8::is_ascii_alphanumeric)));
            assert_eq!(lpm.longest_match(n), None);
        }

        let shared = shared_long_prefix_names(1, 1000, 40);
        assert_eq!(stats(&shared).distinct, 1000);
        let prefix = shared[0].prefix(40);
        for n in &shared {
            assert_eq!(n.len(), 41);
            assert!(prefix.is_prefix_of(n));
        }

        let binary = random_binary_names(1, 1000);
        let mut bytes = 0usize;
        let mut unprintable = 0usize;
        for n in &binary {
            assert!((1..=16).contains(&n.len()));
            for c in &n.components {
                assert!(c.value.len() <= 40);
                bytes += c.value.len();
                unprintable += c
                    .value
                    .iter()
                    .filter(|b| !(0x20..0x7f).contains(*b))
                    .count();
            }
            // Legal names: they survive an encode/decode round trip.
            assert_eq!(&Name::decode(&n.to_wire()).unwrap(), n);
        }
        assert!(unprintable * 2 > bytes, "{unprintable}/{bytes}");
    }
}
