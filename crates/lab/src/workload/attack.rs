//! Attack workloads.

use wire::{Component, Name};

use super::rng::Rng;
use super::vocab::{token, ALNUM};

/// `count` names of exactly `components` random alphanumeric tokens (4 to 12 characters): the
/// DoS scenario of So et al. of long non-matching names made of garbage tokens, which costs a
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
