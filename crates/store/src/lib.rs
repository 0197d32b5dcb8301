//! Cascade's storage tiers behind the engine's in-RAM content store (seed 000, `SPEC.md` §3).
//!
//! This crate will hold the tiers that sit behind the engine's CS: the L2 tier on disk (or
//! emulated), batch prefetching from L2 into L1, admission and replacement policies, and later
//! the counting Bloom filter. It owns its disk I/O and nothing else.
//!
//! Today: the hierarchical CS logic without disk ([`hcs`]), on chunk ids `(content, chunk)`.

pub mod hcs;

pub use hcs::{Counters, Hcs, HcsConfig, Outcome, Replacement};
