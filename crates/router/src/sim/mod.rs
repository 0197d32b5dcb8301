//! A whole-router deterministic simulation, in the manner of TigerBeetle's simulator: one
//! seed drives every choice and a simulated clock, and invariants are checked after every
//! step.
//!
//! What is real and what is simulated:
//!
//! - **Real**: the I/O thread's classifier ([`crate::dispatch::Dispatcher`]: worker by name,
//!   PIT tokens, Data to every worker, management Interests), the packet pool and the worker
//!   rings ([`crate::worker::WorkerLink`], the same bounded queues), the forwarding workers
//!   ([`crate::worker::Worker`], each with its engine, stepped one batch or one idle turn at a
//!   time, reading the simulated clock), their control channel, the management queue
//!   ([`crate::mgmt_queue`]: its scope rule and bound) and NFD management itself
//!   ([`mgmt::Manager`]: commands parsed from the wire, the RIB, the shared FIB, strategies,
//!   the content store's settings).
//! - **Simulated**: the faces (no sockets: the I/O thread's receive and drain are two calls,
//!   `SimRouter::receive` and `SimRouter::drain_outputs`, mirroring `io.rs`
//!   without fragment reassembly; a face's send queue is a bounded inbox), management's view
//!   of the faces (a [`mgmt::Forwarder`] that applies what the router's applies, face creation
//!   through `faces/create` excepted), the peers: consumers, producers (which drop, delay,
//!   Nack and duplicate answers), a hostile face (garbage, truncated packets, replays,
//!   floods, loops, unsolicited Data and Nacks, HopLimit 0, `/localhost` from a non-local
//!   face) and an administrator (routes, strategies, `cs/erase`, `cs/config`,
//!   `faces/destroy`).
//! - **L2** (with [`SimConfig::l2`]): each worker's real store, lookups, write-back
//!   admission and hand-overs, on a simulated disk ([`store::sim::SimDisk`]) that completes
//!   operations when stepped and injects read and write errors, torn and lost writes, bit
//!   flips, delays and reordering, crashes and clean restarts whatever lookups wait (the store
//!   reopens through its real open path: index load or rebuild scan, itself faulted: failed
//!   and short reads, `ENOSPC` and `EROFS`, torn superblocks, lost index files, files left
//!   short), the real L2 filters (the CS Bloom filter, with two workers or more the
//!   dispatchers' prefix filters) and each worker's admission queues; see the `l2` and
//!   `filters` modules for their checks.
//! - **Not covered**: the poll loop and socket faces (UDP, TCP, Unix, WebSocket, Ethernet,
//!   fragmentation, reliability), sharded loops, the HTTP endpoint, reloads, the L2
//!   directory's lock and `hash.key` (opened at start-up with the real file system).
//!
//! Invariants (checked after every step): a Data reaches a face only for an Interest it
//! sent and satisfies, at most once per Interest, with the producer's bytes and the PIT token
//! the Interest carried; a Nack only for a name the face asked for; an Interest never
//! reaches a consumer; every packet the router sends decodes; the rings, the pool, the
//! management queue, each face's queue, each worker's PIT and CS within their capacities; no
//! panic; at the end, with the traffic stopped and the clock past every lifetime, every PIT
//! empty. A failure names the seed and the step; the same seed replays the same run (the
//! same trace hash).

mod actors;
mod check;
mod faces;
mod filters;
mod l2;
mod net;
mod packets;
pub mod rng;
mod world;

use std::fmt;

pub use l2::{L2Sim, L2Stats, READ_BACK_EVERY};
pub use store::sim::{DiskCounts, DiskFaults};
pub use world::run;

/// The faults a run injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Faults {
    /// A hostile face sends garbage, replays, floods and loops.
    pub hostile: bool,
    /// Producers drop, delay, Nack and duplicate their answers.
    pub producers: bool,
    /// The administrator changes routes, strategies and the CS, and destroys faces.
    pub admin: bool,
    /// The clock sometimes jumps by seconds (Interests expire in the PIT).
    pub clock_jumps: bool,
    /// From this step on, the first Data delivered to a consumer has a byte flipped: the
    /// checker must catch it (a test of the checker).
    pub corrupt_at: Option<u64>,
    /// From this step on, with L2, the first chunk a store holds gets a slot that passes every
    /// check of the store but carries other bytes: the checker must catch it (a test of the
    /// checker).
    pub plant_at: Option<u64>,
    /// From this step on, with L2, the name of a chunk a store holds is taken out of its CS
    /// filter behind the store's back: the checker must catch the false negative.
    pub unfilter_at: Option<u64>,
    /// From this step on, with L2, the first store with lookups waiting crashes and its new
    /// store forgets the reads the old one left in flight: the checker must catch the
    /// lookups that would wait for ever.
    pub forget_at: Option<u64>,
}

impl Faults {
    /// Every fault but the corruption.
    pub const ALL: Faults = Faults {
        hostile: true,
        producers: true,
        admin: true,
        clock_jumps: true,
        corrupt_at: None,
        plant_at: None,
        unfilter_at: None,
        forget_at: None,
    };

    /// No fault.
    pub const NONE: Faults = Faults {
        hostile: false,
        producers: false,
        admin: false,
        clock_jumps: false,
        corrupt_at: None,
        plant_at: None,
        unfilter_at: None,
        forget_at: None,
    };

    /// Parses a comma-separated list: `all`, `none`, `hostile`, `producers`, `admin`,
    /// `clock`, `corrupt@STEP`, `plant@STEP`, `unfilter@STEP`, `forget@STEP`.
    pub fn parse(s: &str) -> Result<Faults, String> {
        let mut f = Faults::NONE;
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "all" => {
                    f = Faults {
                        corrupt_at: f.corrupt_at,
                        plant_at: f.plant_at,
                        unfilter_at: f.unfilter_at,
                        forget_at: f.forget_at,
                        ..Faults::ALL
                    }
                }
                "none" => {}
                "hostile" => f.hostile = true,
                "producers" => f.producers = true,
                "admin" => f.admin = true,
                "clock" => f.clock_jumps = true,
                w => {
                    let (what, at) = w.split_once('@').unwrap_or((w, ""));
                    let at = at.parse().ok();
                    match (what, at) {
                        ("corrupt", Some(n)) => f.corrupt_at = Some(n),
                        ("plant", Some(n)) => f.plant_at = Some(n),
                        ("unfilter", Some(n)) => f.unfilter_at = Some(n),
                        ("forget", Some(n)) => f.forget_at = Some(n),
                        _ => {
                            return Err(format!(
                                "unknown fault {w:?} (all, none, hostile, producers, admin, \
                                 clock, corrupt@STEP, plant@STEP, unfilter@STEP, forget@STEP)"
                            ))
                        }
                    }
                }
            }
        }
        Ok(f)
    }
}

/// A run: its seed, length, faults and the router's (small) capacities.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The seed every choice comes from.
    pub seed: u64,
    /// Steps to run (then the traffic stops and the PITs must drain).
    pub steps: u64,
    /// The faults injected.
    pub faults: Faults,
    /// Forwarding workers (1..=8).
    pub workers: usize,
    /// Capacity of each worker's input and output rings, in packets.
    pub ring_capacity: usize,
    /// Packet buffers in the pool.
    pub buffers: usize,
    /// Each worker's PIT capacity, in entries.
    pub pit_capacity: usize,
    /// The CS capacity (shared among the workers), in entries.
    pub cs_capacity: usize,
    /// Capacity of management's queue, in Interests.
    pub mgmt_queue: usize,
    /// Capacity of a face's send queue, in packets.
    pub face_queue: usize,
    /// Each worker's L2 store on a simulated disk, and its faults; `None`: no L2.
    pub l2: Option<L2Sim>,
    /// How names are spread over the workers (`workers.mapping`). With `Content` (the
    /// default) a Data that answers a CanBePrefix Interest for its content has the
    /// Interest's worker; with `Name` it often has another, so that workers hand chunks over
    /// for L2.
    pub mapping: crate::dispatch::WorkerMapping,
}

impl SimConfig {
    /// A run of `steps` steps from `seed`, with every fault but the corruption, 1 to 3
    /// workers (drawn from the seed) and small tables, so that every bound is reached.
    pub fn new(seed: u64, steps: u64) -> Self {
        SimConfig {
            seed,
            steps,
            faults: Faults::ALL,
            workers: 1 + (seed % 3) as usize,
            ring_capacity: 32,
            buffers: 256,
            pit_capacity: 64,
            cs_capacity: 48,
            mgmt_queue: 16,
            face_queue: 64,
            l2: None,
            mapping: crate::dispatch::WorkerMapping::Content,
        }
    }
}

impl SimConfig {
    /// With L2 (`l2`) on every worker, and a RAM CS of 12 entries in all, so that it evicts
    /// into L2 often.
    pub fn with_l2(mut self, l2: L2Sim) -> Self {
        self.l2 = Some(l2);
        self.cs_capacity = 12;
        self
    }
}

/// Counts of what a run did (printed by `cascade sim`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Packets the faces sent the router.
    pub sent: u64,
    /// Packets the router sent the faces (read and checked).
    pub checked: u64,
    /// Data checked at consumers.
    pub data: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Packets the dispatcher counted malformed.
    pub malformed: u64,
    /// Pushes refused by a full worker ring.
    pub ring_full: u64,
    /// Packets the router sent to a face already closed.
    pub to_closed_face: u64,
    /// Packets dropped because a face's queue was full.
    pub face_queue_full: u64,
    /// Management commands sent.
    pub commands: u64,
    /// Faces destroyed by management.
    pub destroyed: u64,
    /// Worker batches.
    pub batches: u64,
    /// Largest PIT seen in a worker.
    pub max_pit: u64,
    /// What the L2 stores did (with L2).
    pub l2: L2Stats,
}

/// A passed run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Its seed.
    pub seed: u64,
    /// Steps run.
    pub steps: u64,
    /// Hash of every packet in and out, in order: the same seed gives the same hash.
    pub trace_hash: u64,
    /// What it did.
    pub stats: SimStats,
}

/// A failed run: which invariant broke, at which step of which seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimFailure {
    /// The seed (replay with it).
    pub seed: u64,
    /// The step at which the check failed (0: setup; past `steps`: the final drain).
    pub step: u64,
    /// What broke.
    pub what: String,
    /// The trace hash up to the failure.
    pub trace_hash: u64,
}

impl fmt::Display for SimFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "seed {} step {}: {} (trace {:016x})",
            self.seed, self.step, self.what, self.trace_hash
        )
    }
}

/// FNV-1a's offset basis.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over `bytes`, from `h`.
fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests;
