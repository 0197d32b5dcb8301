//! Statistics of name sets and a reference longest-prefix matcher.

use std::collections::HashSet;

use wire::{Component, Name};

/// Summary statistics of a set of names, counted the way Table 3 of So et al. counts URLs.
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

/// Characters of a name in URL form as So et al. count them: the sum of the component value
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

/// The number of virtual entries the 2-stage FIB (Algorithm 1 of So et al.) needs at depth `m`:
/// distinct depth-`m` prefixes of longer FIB prefixes that are not FIB prefixes themselves.
/// Divided by `fib.len()`, this is the "FIB expansion" of So et al. (Table 5).
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
