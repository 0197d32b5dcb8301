//! Which worker owns a packet: PIT+CS tables are partitioned across workers by name hash, so no
//! two workers ever touch the same entry and no lock is needed (So et al., ANCS 2013, §3.3;
//! Kirchner et al., "Augustus: a CCN router for programmable networks", ANCS 2016).
//!
//! - **By full name** (H=Content): the keyed hash of the whole name, as So et al.'s dispatcher
//!   computes it.
//! - **By batch** (H=Batch, Mansilha et al., 2017): for a name whose last component is a segment number s,
//!   the hash of the name without it plus floor(s / B), so that the B consecutive chunks of one
//!   batch meet on one worker (and one L2 read), while a popular content's batches spread over
//!   all workers. Names without a segment fall back to the full-name hash.

use crate::hash::{full_name_hash, prefix_hash, HashKey};
use wire::{tt, NameView};

/// How packets are mapped to workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapping {
    /// By the hash of the full name.
    FullName,
    /// By name prefix + floor(segment / batch).
    Batch {
        /// Chunks per batch (B).
        batch: u64,
    },
}

/// The worker in `0..workers` that owns a name with full-name hash `hash`.
#[inline]
pub fn worker_of(hash: u64, workers: usize) -> usize {
    // Multiply-shift: uniform for any worker count, no division.
    ((u128::from(hash) * workers as u128) >> 64) as usize
}

/// The hash that picks the worker under `mapping`.
pub fn mapping_hash(key: HashKey, name: &NameView<'_>, mapping: Mapping) -> u64 {
    match mapping {
        Mapping::FullName => full_name_hash(key, name),
        Mapping::Batch { batch } => match name.last() {
            Some(c) if u32::from(c.typ) == tt::SEGMENT && batch > 0 => {
                let seg = c.as_number().unwrap_or(0);
                let base = prefix_hash(key, name, name.len() - 1);
                // Mix the batch number in with a different odd multiplier per bit pattern.
                let b = (seg / batch).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                base ^ b ^ (b >> 31)
            }
            _ => full_name_hash(key, name),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{Component, Limits, Name};

    const KEY: HashKey = HashKey::fixed(3, 4);

    fn h(name: &Name, m: Mapping) -> u64 {
        let w = name.to_wire();
        let v = NameView::decode(&w, &Limits::default()).unwrap();
        mapping_hash(KEY, &v, m)
    }

    #[test]
    fn batch_mapping_groups_consecutive_chunks() {
        let base = Name::from_uri("/video/v=1").unwrap();
        let seg = |s| base.clone().with(Component::segment(s));
        let m = Mapping::Batch { batch: 10 };
        assert_eq!(h(&seg(0), m), h(&seg(9), m));
        assert_ne!(h(&seg(9), m), h(&seg(10), m));
        assert_ne!(h(&seg(0), Mapping::FullName), h(&seg(1), Mapping::FullName));
        // A name without a segment maps by its full name either way.
        let plain = Name::from_uri("/a/b").unwrap();
        assert_eq!(h(&plain, m), h(&plain, Mapping::FullName));
    }

    #[test]
    fn worker_of_is_balanced() {
        let mut counts = [0usize; 3];
        for i in 0..30_000u64 {
            let name = Name::from_uri("/x").unwrap().with(Component::segment(i));
            counts[worker_of(h(&name, Mapping::FullName), 3)] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
        assert_eq!(worker_of(u64::MAX, 4), 3);
        assert_eq!(worker_of(0, 4), 0);
    }
}
