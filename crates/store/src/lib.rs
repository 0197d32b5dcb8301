//! Cascade's storage tiers behind the engine's in-RAM content store, after Mansilha et al.,
//! "Exploiting parallelism in hierarchical content stores for high-speed ICN routers"
//! (Computer Networks, 2017).
//!
//! - [`l2`]: the L2 tier on a real file or block device ([`L2File`]): batches of `B` chunks in
//!   contiguous extents, non-blocking I/O through io_uring or a `pread`/`pwrite` thread pool
//!   ([`io`]), FIFO/LRU replacement ([`Replacement`], kept in [`list`] order), admission
//!   decisions, CRC32C on every slot, an index that survives clean restarts and is rebuilt by a
//!   scan after a crash ([`layout`] is the format), start-up from whatever a crash while the
//!   file was created left, and a storage fault that turns the store off ([`L2Fault`]) instead
//!   of failing on every packet;
//! - [`bloom`]: the counting Bloom filter of the names a worker's CS holds, RAM tier and L2
//!   together, in front of the CS lookup (the first-stage bypass of Pan et al., "NB-Cache:
//!   Non-Blocking In-Network Caching for High-Performance Content Routers"): the engine consults
//!   it through its `CsFilter` ([`BloomHandle`]), L2 keeps its names in it ([`FilterLink`]);
//! - [`sim`]: a simulated disk (an in-memory image, operations completed when the simulation
//!   steps it, faults drawn from a seed) that an [`L2File`] can stand on instead of its file:
//!   the router's deterministic simulation drives L2 with it;
//! - [`emulated`]: the emulated L2 of Mansilha et al. (delay `B·|c|/τ`, busy-wait or sleep,
//!   static or dynamic memory);
//! - [`tier`]: the adapter that plugs an [`L2File`] behind the engine's CS as its
//!   `SlowTier` and hands completed batches back in the shape of
//!   `Engine::complete_pending`; it serves a chunk only if its Data carries the name asked for
//!   ([`tier::data_name_matches`]).
//!
//! The crate owns its disk I/O and nothing else: no sockets, no engine tables. The simulator
//! of the hierarchical store on chunk ids (L1 FIFO/LRU with batch prefetch, checked against
//! the models) is research code and lives in the `lab` crate.

pub mod bloom;
pub mod emulated;
pub mod io;
pub mod l2;
pub mod layout;
pub mod list;
mod replacement;
pub mod sim;
pub mod tier;

pub use bloom::{BloomHandle, CountingBloom, Geometry};
pub use emulated::{EmuDelay, EmuMemory, EmulatedL2, EmulatedL2Config};
pub use io::{ActiveBackend, IoBackend};
pub use l2::{
    Admission, Admit, BatchRead, Chunk, Decision, FilterLink, L2Config, L2Counters, L2Error,
    L2Fault, L2File, ReadStart,
};
pub use layout::ChunkName;
pub use replacement::Replacement;
pub use tier::{L2Tier, SharedL2Tier, TierCompletion, TierCounters};
