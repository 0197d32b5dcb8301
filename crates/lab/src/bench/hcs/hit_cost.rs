//! The cost of an L1 hit with 10M entries.

use std::time::Instant;

use store::Replacement;

use super::{mix, CHUNKS_PER_CONTENT};
use crate::tier_sim::{TierSim, TierSimConfig};

/// L1 entries for the L1-hit cost measurement.
const HIT_COST_ENTRIES: usize = 10_000_000;
/// Lookups per timed block in the L1-hit cost measurement.
const HIT_COST_BLOCK: usize = 1000;

/// Median cost of an L1 hit with 10M entries, in ns (blocks of 1,000 random present keys).
pub(super) fn l1_hit_cost_ns(seed: u64) -> f64 {
    let contents = (HIT_COST_ENTRIES as u32).div_ceil(CHUNKS_PER_CONTENT);
    let mut h = TierSim::new(TierSimConfig {
        l1_chunks: HIT_COST_ENTRIES,
        batch: 10,
        chunks_per_content: CHUNKS_PER_CONTENT,
        replacement: Replacement::Fifo,
        prefetch_ahead: false,
    });
    'fill: for c in 0..contents {
        for k in (0..CHUNKS_PER_CONTENT).step_by(10) {
            if h.l1_len() >= HIT_COST_ENTRIES {
                break 'fill;
            }
            h.request(c, k);
        }
    }
    let mut x = seed | 1;
    let mut keys = Vec::with_capacity(200 * HIT_COST_BLOCK);
    while keys.len() < keys.capacity() {
        x = mix(x.wrapping_add(0x9e37_79b9_7f4a_7c15));
        let c = (x % u64::from(contents)) as u32;
        let k = ((x >> 32) % u64::from(CHUNKS_PER_CONTENT)) as u32;
        if h.l1_contains(c, k) {
            keys.push((c, k));
        }
    }
    let mut blocks: Vec<f64> = keys
        .chunks(HIT_COST_BLOCK)
        .map(|b| {
            let t = Instant::now();
            let mut hits = 0u32;
            for &(c, k) in b {
                hits += u32::from(h.request(c, k).l1_hit);
            }
            std::hint::black_box(hits);
            t.elapsed().as_nanos() as f64 / b.len() as f64
        })
        .collect();
    blocks.sort_by(f64::total_cmp);
    blocks[blocks.len() / 2]
}
