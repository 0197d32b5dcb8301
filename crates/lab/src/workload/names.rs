//! IRCache-like names.

use wire::{Component, Name};

use super::rng::{Discrete, Rng, Zipf};
use super::vocab::{
    domain_label, path_vocabulary, token, word, ALNUM, CC_SECOND_LEVEL, EXTENSIONS, HEX, HOSTS,
    QUERY_KEYS, TLDS,
};

/// Parameters of [`ircache_like_names_with`]. [`NameConfig::default`] is calibrated to Table 3 of
/// So et al. (6.66 components, 58.4 URL characters per name).
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
pub(super) type Site = Vec<Component>;

/// Shared machinery for URL-shaped components.
pub(super) struct UrlGen {
    pub(super) tld: Discrete,
    ext: Discrete,
    words: Vec<String>,
    word_zipf: Zipf,
    pairs: Discrete,
}

impl UrlGen {
    pub(super) fn new(rng: &mut Rng, path_words: usize, path_zipf: f64, pairs: &[f64]) -> Self {
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

    pub(super) fn tld(&self, rng: &mut Rng) -> &'static str {
        TLDS[self.tld.sample(rng)].0
    }

    /// A site's reverse-domain components: TLD, then `labels` domain labels.
    pub(super) fn site(&self, rng: &mut Rng, labels: usize) -> Site {
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
    pub(super) fn dir(&self, rng: &mut Rng) -> Component {
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
    pub(super) fn file(&self, rng: &mut Rng) -> Component {
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
    pub(super) fn query(&self, rng: &mut Rng) -> Component {
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
    pub(super) fn extend_path(
        &self,
        rng: &mut Rng,
        name: &mut Name,
        n: usize,
        file_prob: f64,
        q: f64,
    ) {
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

/// `count` URL-shaped names in the style of the IRCache workload of So et al., with the default,
/// Table 3-calibrated [`NameConfig`]: over many names the mean is about 6.66 components and
/// 58.4 URL characters ([`url_chars`](super::url_chars)), and nearly all names are distinct.
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
