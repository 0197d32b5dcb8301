//! Cascade's storage tiers behind the engine's in-RAM content store (seed 000, `SPEC.md` §3).
//!
//! - [`hcs`]: the hierarchical CS logic on chunk ids (L1 FIFO/LRU, batch prefetch), used to
//!   check the L1 hit ratio against seed 000's model;
//! - [`l2`]: the L2 tier on a real file or block device ([`L2File`]): batches of `B` chunks in
//!   contiguous extents, non-blocking I/O through io_uring or a `pread`/`pwrite` thread pool
//!   ([`io`]), FIFO/LRU replacement, admission decisions, CRC32C on every slot, an index that
//!   survives clean restarts and is rebuilt by a scan after a crash ([`layout`] is the format);
//! - [`emulated`]: seed 000's emulated L2 (delay `B·|c|/τ`, busy-wait or sleep, static or
//!   dynamic memory);
//! - [`tier`]: the adapter that plugs an [`L2File`] behind the engine's CS as its
//!   `SlowTier` and hands completed batches back in the shape of
//!   `Engine::complete_pending`.
//!
//! The crate owns its disk I/O and nothing else: no sockets, no engine tables.

pub mod emulated;
pub mod hcs;
pub mod io;
pub mod l2;
pub mod layout;
mod list;
pub mod tier;

pub use emulated::{EmuDelay, EmuMemory, EmulatedL2, EmulatedL2Config};
pub use hcs::{Counters, Hcs, HcsConfig, Outcome, Replacement};
pub use io::{ActiveBackend, IoBackend};
pub use l2::{
    Admission, Admit, BatchRead, Chunk, Decision, L2Config, L2Counters, L2Error, L2File, ReadStart,
};
pub use layout::ChunkName;
pub use tier::{L2Tier, SharedL2Tier, TierCompletion, TierCounters};
