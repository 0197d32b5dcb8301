//! The L2 tier in the simulation: each worker's real store ([`store::L2File`] behind
//! [`store::L2Tier`], the worker's own write-back admission and lookups) on a simulated disk
//! ([`store::sim::SimDisk`]) whose operations complete when the simulation steps it, with
//! faults drawn from the seed; crashes and clean restarts reopen the store from the disk's
//! image through its real open path (index load, or the rebuild scan), at once, whatever
//! lookups wait for the store, with faults on that path too (a store that cannot open stays
//! off, counted, and the worker forwards from RAM); workers whose store failed to open at the
//! start (`off=`: no L2 at all, as the router runs such a worker; what other workers hand
//! over to it is received and dropped, counted); the L2 filters (see the `filters` module);
//! each worker's admission queues.
//!
//! Checks, besides the router's (a Data served from L2 must carry the producer's bytes, as
//! every Data does): the store's queues within their bounds (operations in flight and on the
//! disk at most the queue depth, waiting lookups at most what the tier has room for); every
//! offer to a store counted once with its outcome (`admit_offers` equals
//! [`store::L2Counters::offers_accounted`], after every step); a store
//! that a fault turned off submits no more reads (the worker goes on from RAM, and a panic
//! anywhere fails the run); after every reopen, and every [`READ_BACK_EVERY`] steps, every
//! chunk the store's index holds reads back, through the store's own checks, as the
//! producer's bytes or as a miss, never as other bytes; a store that failed to open is off;
//! no lookup waits for ever (lookups wait only while the store has a read in flight, or one
//! a reopen left, which its next poll completes as a miss); each worker's backlog and
//! hand-over queue within [`ADMIT_BACKLOG_CHUNKS`], its count of dropped chunks never going
//! back; each worker's admission identity after every step (chunks taken plus received equal
//! chunks offered to its store, queued, handed over, dropped or refused as malformed:
//! [`crate::worker::AdmissionQueues::balanced`]), and no worker receiving more hand-overs than
//! the workers handed over; and at the end of the run (the traffic stopped, the disks caught
//! up) both queues empty and every hand-over received: every chunk a worker took for L2 was
//! offered to a store or counted dropped.

use std::collections::HashSet;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use engine::fw::pipeline::Engine;
use engine::hash::HashKey;
use store::sim::{plant, read_back, DiskCounts, DiskFaults, ReadBack, SimDisk};
use store::{ChunkName, CountingBloom, L2Config, L2File, L2Tier, SharedL2Tier};
use wire::Name;

use crate::worker::ADMIT_BACKLOG_CHUNKS;

use super::filters::{held, SimFilters};

use super::net::SimRouter;
use super::packets::{all_chunk_names, canonical_data, decode, Received};
use super::rng::Rng;
use super::SimStats;

/// Steps between two read-back checks of every store (also after every reopen and at the
/// end of the run).
pub const READ_BACK_EVERY: u64 = 500;

/// Slot size of the simulated stores (the simulation's Data are about 120 bytes).
const SLOT_BYTES: u32 = 512;
/// Queue depth of the simulated stores.
const QUEUE_DEPTH: usize = 4;
/// Longest name a pending lookup may have.
const MAX_NAME_BYTES: usize = 256;

/// The L2 of a simulated router: its size and the faults injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Sim {
    /// The disks' faults.
    pub disk: DiskFaults,
    /// Per mille of steps that crash a worker's store.
    pub crash_pm: u32,
    /// Per mille of steps that restart a worker's store cleanly (close, then open).
    pub restart_pm: u32,
    /// Extents per worker's store.
    pub extents: u32,
    /// Chunks per batch.
    pub batch: u32,
    /// Per mille of workers whose store fails to open at the start: the worker forwards from
    /// RAM only, and drops (counted) what other workers hand over to it.
    pub off_pm: u32,
}

impl L2Sim {
    /// The default faults: 10‰ of reads fail, 5‰ of writes fail, 20‰ are torn and 20‰ lost,
    /// 5‰ of disk steps flip a bit, completions reordered and delayed up to 8 steps, 50‰ of
    /// the open path's operations fail or lose their bytes (and 50‰ of crashes leave the file
    /// short or its superblock torn), 1‰ of steps crash a store and 1‰ restart one cleanly; 6 extents of 2 chunks per worker (far
    /// fewer than the names, so that L2 evicts).
    pub const DEFAULT: L2Sim = L2Sim {
        disk: DiskFaults {
            read_error_pm: 10,
            write_error_pm: 5,
            torn_write_pm: 20,
            lost_write_pm: 20,
            bit_flip_pm: 5,
            reorder: true,
            max_delay_steps: 8,
            open_error_pm: 50,
        },
        crash_pm: 1,
        restart_pm: 1,
        extents: 6,
        batch: 2,
        off_pm: 0,
    };

    /// No fault at all (the disk completes in order, nothing crashes).
    pub const NO_FAULTS: L2Sim = L2Sim {
        disk: DiskFaults::NONE,
        crash_pm: 0,
        restart_pm: 0,
        ..L2Sim::DEFAULT
    };

    /// Parses a comma-separated list of `default`, `none`, `read=PM`, `write=PM`, `torn=PM`,
    /// `lost=PM`, `flip=PM`, `open=PM`, `crash=PM`, `restart=PM`, `off=PM` (per mille),
    /// `delay=STEPS`, `reorder`, `inorder`, `extents=N`, `batch=B`, applied in order from the
    /// defaults.
    pub fn parse(s: &str) -> Result<L2Sim, String> {
        let mut l = L2Sim::DEFAULT;
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let (key, value) = word.split_once('=').unwrap_or((word, ""));
            let n = || -> Result<u32, String> {
                value
                    .parse()
                    .map_err(|_| format!("L2 fault {word:?}: {key} needs a number"))
            };
            match key {
                "default" => l = L2Sim::DEFAULT,
                "none" => l = L2Sim::NO_FAULTS,
                "read" => l.disk.read_error_pm = n()?,
                "write" => l.disk.write_error_pm = n()?,
                "torn" => l.disk.torn_write_pm = n()?,
                "lost" => l.disk.lost_write_pm = n()?,
                "flip" => l.disk.bit_flip_pm = n()?,
                "open" => l.disk.open_error_pm = n()?,
                "crash" => l.crash_pm = n()?,
                "restart" => l.restart_pm = n()?,
                "off" => l.off_pm = n()?,
                "delay" => l.disk.max_delay_steps = n()?,
                "reorder" => l.disk.reorder = true,
                "inorder" => l.disk.reorder = false,
                "extents" => l.extents = n()?.clamp(1, 1024),
                "batch" => l.batch = n()?.clamp(1, 8),
                _ => {
                    return Err(format!(
                        "unknown L2 fault {word:?} (default, none, read=, write=, torn=, lost=, \
                         flip=, open=, crash=, restart=, off=, delay=, reorder, inorder, \
                         extents=, batch=)"
                    ))
                }
            }
        }
        if [
            l.disk.read_error_pm,
            l.disk.write_error_pm,
            l.disk.torn_write_pm,
            l.disk.lost_write_pm,
            l.disk.bit_flip_pm,
            l.disk.open_error_pm,
            l.crash_pm,
            l.restart_pm,
            l.off_pm,
        ]
        .iter()
        .any(|&pm| pm > 1000)
        {
            return Err("L2 fault rates are per mille: 0 to 1000".into());
        }
        Ok(l)
    }
}

/// What a run's stores did (summed over the workers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Stats {
    /// Faults the disks injected, by kind.
    pub disk: DiskCounts,
    /// Clean restarts (close, then open: the index file is loaded).
    pub restarts: u64,
    /// Opens after a crash (the index is rebuilt by a scan).
    pub crash_reopens: u64,
    /// Chunks the stores found at their reopens.
    pub recovered: u64,
    /// Lookups L2 answered with a chunk.
    pub served: u64,
    /// Pending lookups L2 completed without a chunk (I/O error, corrupt, stale).
    pub failed: u64,
    /// Slots dropped because their checksum (or position) failed.
    pub checksum_failures: u64,
    /// Times a fault turned a store off.
    pub turned_off: u64,
    /// Workers whose store failed to open at the start (`off=`).
    pub off_at_open: u64,
    /// Chunks handed over to those workers, received and dropped.
    pub dropped_off: u64,
    /// Chunks read back and checked ([`read_back`]).
    pub read_back: u64,
    /// Reopens that failed (a fault on the open path): the store stayed off.
    pub open_failures: u64,
    /// Lookups waiting for a store when it crashed or restarted (completed as misses).
    pub waiting_at_reopen: u64,
    /// Chunks the workers' admission dropped, counted (backlog or hand-over queue full).
    pub admit_dropped: u64,
    /// Longest backlog seen in a worker.
    pub max_backlog: u64,
    /// Times the checker compared the filters' counts with the RAM CS and the index.
    pub filter_checks: u64,
}

/// One worker's store, as the simulation holds it.
pub(super) struct SimL2 {
    /// The worker whose store it is.
    worker: usize,
    disk: SimDisk,
    tier: SharedL2Tier,
    /// Reads submitted when a fault turned the store off (none may follow).
    reads_at_fault: Option<u64>,
    /// L2 counters of the stores closed so far (their files' counters restart at open).
    closed_checksum_failures: u64,
    /// The worker's filters.
    filters: SimFilters,
    /// Chunks the worker's admission had dropped at the last check.
    dropped: u64,
    /// What the filters depended on at the last check ([`SimFilters::mark`]); `None` after a
    /// reopen.
    mark: Option<[u64; 6]>,
    /// The disk neither corrupts nor loses what it reports written (no torn, lost or failed
    /// writes, no bit flips, no fault on the open path): a reopen must find every chunk the
    /// store held (the writes pending at a crash are not held yet).
    lossless: bool,
    /// The worker's turns when its lookups were first seen waiting with nothing in flight.
    stuck_since: Option<u64>,
}

impl SimL2 {
    /// Worker `w`'s store on a new disk (faults from `seed`), as the worker's L2 tier: the
    /// handle for the engine, and the simulation's own.
    /// The filters are the real ones: the CS filter, shared with `engine`'s RAM tier, and
    /// `prefixes` (the worker's prefix filter, with two workers or more).
    pub fn open(
        l2: &L2Sim,
        (seed, w, key): (u64, usize, HashKey),
        clock: &Arc<std::sync::atomic::AtomicU64>,
        engine: &mut Engine,
        (ram_cs, prefixes): (usize, Option<Arc<CountingBloom>>),
    ) -> (SimL2, SharedL2Tier) {
        let disk = SimDisk::new(seed ^ ((w as u64 + 1) << 40), l2.disk, clock.clone());
        let cfg = L2Config {
            slot_bytes: SLOT_BYTES,
            batch: l2.batch,
            queue_depth: QUEUE_DEPTH,
            disk: Some(disk.clone()),
            ..L2Config::new(format!("sim-l2-{w}"), l2.extents)
        };
        let names = ram_cs as u64 + u64::from(l2.extents * l2.batch);
        let filters = SimFilters::new(key, names, prefixes);
        engine.set_cs_filter(filters.engine_filter());
        let (link, prefix_link) = filters.links();
        let file = L2File::open_with_filters(&cfg, link, prefix_link)
            .expect("a new simulated disk always opens");
        // From now on the open path meets faults too.
        disk.arm_open_faults();
        let tier = SharedL2Tier::new(L2Tier::new(file, MAX_NAME_BYTES));
        let sim = SimL2 {
            worker: w,
            disk,
            tier: tier.clone(),
            reads_at_fault: None,
            closed_checksum_failures: 0,
            filters,
            dropped: 0,
            mark: None,
            lossless: [
                l2.disk.torn_write_pm,
                l2.disk.lost_write_pm,
                l2.disk.write_error_pm,
                l2.disk.bit_flip_pm,
                l2.disk.open_error_pm,
            ] == [0; 5],
            stuck_since: None,
        };
        (sim, tier)
    }

    /// The worker's L2 state for the worker itself (write-back, as `[store] admission`'s
    /// default).
    pub fn worker_l2(
        tier: SharedL2Tier,
        dispatcher: crate::dispatch::Dispatcher,
        limits: wire::Limits,
        peers: Vec<Arc<crate::worker::WorkerLink>>,
    ) -> crate::worker::L2 {
        crate::worker::L2::new(
            tier,
            dispatcher,
            limits,
            peers,
            true,
            Arc::new(AtomicUsize::new(0)),
            None,
        )
    }

    /// Reopens the store now, whatever lookups wait for it (they complete as misses);
    /// `clean`: a clean restart. A store that cannot open must be off (counted); then the
    /// filters' counts are checked.
    fn reopen(
        &mut self,
        clean: bool,
        names: &[(Name, Vec<u8>)],
        stats: &mut L2Stats,
    ) -> Result<(), String> {
        let mut t = self.tier.lock();
        stats.waiting_at_reopen += t.waiting() as u64;
        self.mark = None;
        let failures = t.l2().counters().checksum_failures;
        let held = t.l2().stored_chunks();
        match t.l2_mut().reopen(clean) {
            Ok(()) if self.lossless && t.l2().counters().recovered_chunks < held => {
                return Err(format!(
                    "a {} lost chunks on a disk that loses nothing: {held} held, {} found",
                    if clean { "clean restart" } else { "crash" },
                    t.l2().counters().recovered_chunks
                ));
            }
            Ok(()) => {
                self.closed_checksum_failures += failures;
                stats.recovered += t.l2().counters().recovered_chunks;
                if clean {
                    stats.restarts += 1;
                } else {
                    stats.crash_reopens += 1;
                }
                self.reads_at_fault = None;
            }
            Err(e) => {
                stats.open_failures += 1;
                if t.l2().fault().is_none() {
                    return Err(format!("the store failed to open ({e}) but is not off"));
                }
            }
        }
        drop(t);
        self.check_counts(names, stats)
    }

    /// The filters' counts against the RAM CS and the index, and every prefix of a chunk L2
    /// would serve in the prefix filter.
    fn check_counts(&self, names: &[(Name, Vec<u8>)], stats: &mut L2Stats) -> Result<(), String> {
        let t = self.tier.lock();
        let held = held(t.l2(), &self.disk, names);
        let served: Vec<&Name> = held
            .names
            .iter()
            .filter(|(_, v)| {
                ChunkName::parse(v).is_some_and(|c| {
                    matches!(read_back(t.l2(), &self.disk, &c), ReadBack::Served(_))
                })
            })
            .map(|(n, _)| n)
            .collect();
        stats.filter_checks += 1;
        self.filters.check_counts(t.l2(), names, &held, &served)
    }

    /// The store's bounds, and no read after a fault turned it off.
    /// `turns`: the worker's turns so far.
    fn check(
        &mut self,
        names: &[(Name, Vec<u8>)],
        turns: u64,
        stats: &mut L2Stats,
    ) -> Result<(), String> {
        let t = self.tier.lock();
        let l2 = t.l2();
        let qd = l2.config().queue_depth;
        if l2.in_flight() > qd || self.disk.queued() > qd {
            return Err(format!(
                "L2: {} operations in flight, {} on the disk, queue depth {qd}",
                l2.in_flight(),
                self.disk.queued()
            ));
        }
        let room = qd * l2.superblock().batch as usize + store::tier::DEFERRED_LOOKUPS + qd;
        if t.waiting() > room {
            return Err(format!(
                "L2: {} lookups waiting, room for {room}",
                t.waiting()
            ));
        }
        // Lookups deferred for room in a queue that a reopen emptied are retried at the
        // worker's next poll: waiting with nothing in flight is a hang once it has polled.
        if t.waiting() > 0 && l2.in_flight() == 0 && l2.orphaned_reads() == 0 {
            let since = *self.stuck_since.get_or_insert(turns);
            if turns > since {
                return Err(format!(
                    "L2: {} lookups wait, but the store has no read in flight: they would \
                     wait for ever",
                    t.waiting()
                ));
            }
        } else {
            self.stuck_since = None;
        }
        let c = l2.counters();
        if c.admit_offers != c.offers_accounted() {
            return Err(format!(
                "L2: {} offers, but {} written, present, rejected, busy, too large or off",
                c.admit_offers,
                c.offers_accounted()
            ));
        }
        let reads = l2.counters().reads_submitted;
        match (l2.fault(), self.reads_at_fault) {
            (Some(_), None) => {
                stats.turned_off += 1;
                self.reads_at_fault = Some(reads);
            }
            (Some(f), Some(r)) if reads > r => {
                return Err(format!(
                    "L2 turned off ({f}) but submitted {} reads since",
                    reads - r
                ))
            }
            _ => {}
        }
        let mark = self.filters.mark(l2);
        if self.mark == Some(mark) {
            return Ok(());
        }
        self.mark = Some(mark);
        self.filters.check(l2, &held(l2, &self.disk, names))
    }

    /// The worker's admission queues within their bounds, its dropped chunks counted (never
    /// fewer than before).
    fn check_admission(
        &mut self,
        q: crate::worker::AdmissionQueues,
        stats: &mut L2Stats,
    ) -> Result<(), String> {
        if q.backlog > ADMIT_BACKLOG_CHUNKS || q.handovers > ADMIT_BACKLOG_CHUNKS {
            return Err(format!(
                "admission: {} chunks in the backlog, {} to hand over, at most \
                 {ADMIT_BACKLOG_CHUNKS} each",
                q.backlog, q.handovers
            ));
        }
        if q.dropped < self.dropped {
            return Err(format!(
                "admission: {} chunks counted dropped, {} before",
                q.dropped, self.dropped
            ));
        }
        if !q.balanced() {
            return Err(format!(
                "admission: {} chunks taken and {} received, but {} offered, {} queued, {} \
                 handed over, {} dropped and {} malformed",
                q.taken,
                q.received,
                q.offered,
                q.backlog + q.handovers,
                q.handed,
                q.dropped,
                q.malformed
            ));
        }
        stats.admit_dropped += q.dropped - self.dropped;
        self.dropped = q.dropped;
        stats.max_backlog = stats.max_backlog.max(q.backlog as u64);
        Ok(())
    }

    /// Every chunk the index holds reads back as the producer's bytes or as a miss.
    fn read_back_all(&self, names: &[(Name, Vec<u8>)], stats: &mut L2Stats) -> Result<(), String> {
        let t = self.tier.lock();
        let held = held(t.l2(), &self.disk, names);
        // A slot that carries no name it is known by does not read back.
        stats.read_back += held.unnamed as u64;
        for (name, value) in held.names {
            let Some(chunk) = ChunkName::parse(value) else {
                continue;
            };
            match read_back(t.l2(), &self.disk, &chunk) {
                ReadBack::NotHeld => {}
                ReadBack::Miss => stats.read_back += 1,
                ReadBack::Served(bytes) => {
                    stats.read_back += 1;
                    if bytes != canonical_data(name) {
                        return Err(format!(
                            "L2 holds {name} with bytes that are not the producer's (they pass \
                             every check of the store)"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Plants a wrong slot (right name, one byte changed) for the first chunk the store holds
    /// (a test of the checker); true if it did.
    fn plant_wrong(&self, names: &[Name]) -> bool {
        let t = self.tier.lock();
        for name in names {
            let wire = name.to_wire();
            let Some(chunk) = ChunkName::parse(&wire[2..]) else {
                continue;
            };
            let mut wrong = canonical_data(name);
            if let Some(b) = wrong.last_mut() {
                *b ^= 0x5a;
            }
            if plant(t.l2(), &self.disk, &chunk, &wrong) {
                return true;
            }
        }
        false
    }
}

/// Bugs planted on purpose (tests of the checker): each is due from its step on, and done
/// once (the flag then goes back to false).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Plants {
    /// A wrong slot that passes every check of the store ([`plant`]).
    pub slot: bool,
    /// A held chunk's name taken out of the CS filter behind the store's back.
    pub unfilter: bool,
    /// A crash while lookups wait, after which the new store forgets the reads the old one
    /// left in flight ([`store::sim::forget_orphans`]).
    pub forget: bool,
}

/// Every name a store may hold a chunk under, as the checker probes the stores and their
/// filters with: the producers' chunk names, then the name of every Data given to the router
/// (a hostile face's Data under a prefix nobody serves, which a pending Interest takes into
/// the CS; a producer's answer to a flood Interest). The checker can only compare the
/// filters with the names it probes, so it also checks that these account for every chunk a
/// store holds.
pub(super) struct L2Names {
    names: Vec<(Name, Vec<u8>)>,
    seen: HashSet<Vec<u8>>,
}

impl L2Names {
    /// The producers' chunk names.
    pub fn new() -> Self {
        let mut n = L2Names {
            names: Vec::new(),
            seen: HashSet::new(),
        };
        for name in all_chunk_names() {
            n.add(name);
        }
        n
    }

    fn add(&mut self, name: Name) {
        let v = name.to_wire()[2..].to_vec();
        if self.seen.insert(v.clone()) {
            self.names.push((name, v));
        }
    }

    /// Notes the name of `bytes` if it is a Data (bytes a face gives the router).
    pub fn note(&mut self, bytes: &[u8], limits: &wire::Limits) {
        if let Ok(Received::Data { data, .. }) = decode(bytes, limits) {
            if !self.seen.contains(data.name().value()) {
                self.add(data.name().to_name());
            }
        }
    }

    /// The names and their name TLV values.
    pub fn all(&self) -> &[(Name, Vec<u8>)] {
        &self.names
    }
}

impl SimRouter {
    /// One L2 turn: a worker's disk completes a few operations; that store may crash (and
    /// reopen at once) or restart cleanly (`cfg`'s rates); the due `plants` are planted; then
    /// the checks, and every [`READ_BACK_EVERY`] steps the read-back of every store.
    pub fn l2_step(
        &mut self,
        rng: &mut Rng,
        cfg: &L2Sim,
        step: u64,
        plants: &mut Plants,
        stats: &mut SimStats,
    ) -> Result<(), String> {
        if self.l2.is_empty() {
            // Every worker's store failed to open at the start.
            return self.l2_checks(step % READ_BACK_EVERY == 0, stats);
        }
        let w = rng.index(self.l2.len());
        let s = &mut self.l2[w];
        let names = self.l2_names.all();
        s.disk.step();
        if rng.below(1000) < u64::from(cfg.crash_pm) {
            s.disk.crash();
            s.reopen(false, names, &mut stats.l2)?;
        } else if rng.below(1000) < u64::from(cfg.restart_pm) {
            s.reopen(true, names, &mut stats.l2)?;
        }
        if plants.slot && s.plant_wrong(&all_chunk_names()) {
            plants.slot = false;
        }
        if plants.unfilter
            && s.filters
                .unfilter_one(&held(s.tier.lock().l2(), &s.disk, names))
        {
            plants.unfilter = false;
            s.mark = None;
        }
        if plants.forget && s.tier.lock().waiting() > 0 {
            plants.forget = false;
            s.disk.crash();
            s.reopen(false, names, &mut stats.l2)?;
            store::sim::forget_orphans(s.tier.lock().l2_mut());
        }
        self.l2_checks(step % READ_BACK_EVERY == 0, stats)
    }

    /// The checks of every store and every worker's admission; `read_back`: also read back
    /// every chunk the stores hold, and compare the filters' counts.
    pub fn l2_checks(&mut self, read_back: bool, stats: &mut SimStats) -> Result<(), String> {
        let names = self.l2_names.all();
        let workers = self.workers.borrow();
        let (handed, received) = handovers(&workers);
        if received > handed {
            return Err(format!(
                "admission: {received} hand-overs received, {handed} handed over"
            ));
        }
        for s in &mut self.l2 {
            let w = s.worker;
            let q = workers[w].admission_queues().unwrap_or_default();
            s.check(names, self.turns[w].get(), &mut stats.l2)
                .and_then(|()| s.check_admission(q, &mut stats.l2))
                .and_then(|()| match read_back {
                    true => s
                        .read_back_all(names, &mut stats.l2)
                        .and_then(|()| s.check_counts(names, &mut stats.l2)),
                    false => Ok(()),
                })
                .map_err(|e| format!("worker {w}: {e}"))?;
        }
        Ok(())
    }

    /// At the end of the run (the traffic stopped, the disks caught up): every worker's
    /// admission queues are empty, every chunk it took offered to a store or counted dropped.
    pub fn l2_final(&self) -> Result<(), String> {
        let workers = self.workers.borrow();
        for (w, worker) in workers.iter().enumerate() {
            let q = worker.admission_queues().unwrap_or_default();
            if q.backlog + q.handovers > 0 {
                return Err(format!(
                    "worker {w}: {} chunks still in the backlog and {} to hand over after \
                     the drain (neither stored nor counted dropped)",
                    q.backlog, q.handovers
                ));
            }
        }
        let (handed, received) = handovers(&workers);
        if received != handed {
            return Err(format!(
                "admission: {handed} chunks handed over, but {received} received after the \
                 drain (lost between workers)"
            ));
        }
        Ok(())
    }

    /// Steps every disk until nothing is ready (the final drain: every lookup waiting for L2
    /// completes). True if anything happened.
    pub fn l2_drain(&mut self) -> bool {
        let mut busy = false;
        for s in &mut self.l2 {
            for _ in 0..64 {
                if s.disk.step() == 0 && s.disk.queued() == 0 {
                    break;
                }
                busy = true;
            }
            let t = s.tier.lock();
            busy |= t.waiting() > 0 || t.l2().orphaned_reads() > 0;
        }
        busy
    }

    /// Adds up what the stores did into `stats` (at the end of a run).
    pub fn l2_totals(&self, stats: &mut SimStats) {
        for s in &self.l2 {
            let t = s.tier.lock();
            stats.l2.served += t.counters().served;
            stats.l2.failed += t.counters().failed;
            stats.l2.checksum_failures +=
                s.closed_checksum_failures + t.l2().counters().checksum_failures;
            stats.l2.disk.add(&s.disk.counts());
        }
        let workers = self.workers.borrow();
        for (w, worker) in workers.iter().enumerate() {
            if self.l2.iter().all(|s| s.worker != w) {
                stats.l2.off_at_open += 1;
                stats.l2.dropped_off += worker.admission_queues().map_or(0, |q| q.dropped);
            }
        }
    }
}

/// Chunks the workers handed over, and hand-overs they received (at most as many: the rest
/// wait in their owners' input rings).
fn handovers(workers: &[crate::worker::Worker]) -> (u64, u64) {
    workers
        .iter()
        .filter_map(crate::worker::Worker::admission_queues)
        .fold((0, 0), |(h, r), q| (h + q.handed, r + q.received))
}

impl L2Stats {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &L2Stats) {
        self.disk.add(&o.disk);
        self.restarts += o.restarts;
        self.crash_reopens += o.crash_reopens;
        self.recovered += o.recovered;
        self.served += o.served;
        self.failed += o.failed;
        self.checksum_failures += o.checksum_failures;
        self.turned_off += o.turned_off;
        self.off_at_open += o.off_at_open;
        self.dropped_off += o.dropped_off;
        self.read_back += o.read_back;
        self.open_failures += o.open_failures;
        self.waiting_at_reopen += o.waiting_at_reopen;
        self.admit_dropped += o.admit_dropped;
        self.max_backlog = self.max_backlog.max(o.max_backlog);
        self.filter_checks += o.filter_checks;
    }
}
