//! The L2 behind the engine's in-RAM CS: an adapter shaped for [`SlowTier`] and
//! [`Engine::complete_pending`](engine::fw::pipeline::Engine::complete_pending).
//!
//! - [`L2Tier::lookup`] has `SlowTier::lookup`'s signature: an L1 (engine CS) miss whose chunk
//!   is in L2 answers `true` (pending) and starts (or joins) the read of its whole batch.
//! - [`L2Tier::poll`] drains finished reads without blocking and hands out one
//!   [`TierCompletion`] per chunk: every chunk that verified (its checksum, then
//!   [`data_name_matches`]), the requested ones and the rest of the batch (for L1), and one
//!   completion with `data: None` for each waiting chunk that did not verify, so that every
//!   pending lookup is completed exactly once. A completion with
//!   `full_hash: Some(h)` goes straight to `engine.complete_pending(now_ms, h, name_value,
//!   data)`; one with `full_hash: None` (the batch's other chunks) to
//!   `engine.insert_cs(now_ms, data)`. Both have an `_aged` form that takes the chunk's age
//!   ([`TierCompletion::age_ms`]): the RAM CS then counts its FreshnessPeriod from its write to
//!   L2, as L2 itself does for MustBeFresh lookups.
//! - [`SharedL2Tier`] is a cloneable handle: one clone is boxed into the engine with
//!   [`Engine::set_slow_tier`](engine::fw::pipeline::Engine::set_slow_tier), the worker keeps
//!   another to poll and admit. Both are used from the worker's own thread, so the lock is
//!   never contended.
//!
//! - [`L2Tier::lookup_prefix`] answers a CanBePrefix Interest: it reads the newest batch the
//!   prefix index has under the Interest's name ([`L2File::read_prefix`]) and completes the
//!   lookup (its `full_hash`, the Interest's name) with the first chunk of that batch whose name
//!   starts with the Interest's, and, for MustBeFresh, that is still fresh: written less than
//!   its FreshnessPeriod ago, by the wall clock, as the RAM CS counts from its arrival; else
//!   without data (the engine forwards the Interest). With
//!   [`L2Tier::set_prefix_miss_completions`], a lookup the prefix index has nothing for
//!   completes the same way at the next poll, so that a router with several workers can hand
//!   the Interest on to another worker's L2 instead.
//! - [`L2Tier::lookup_fresh`] is [`L2Tier::lookup`] for a MustBeFresh Interest: the chunk
//!   completes it only if it is fresh by the same rule ([`is_fresh`]); a stale chunk completes
//!   every lookup waiting for it without data and is not handed to the RAM CS.
//!
//! Bounded: one waiting entry per read in flight (at most the queue depth), each with room for
//! `B` names of at most `max_name_bytes`, allocated at construction.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use engine::fw::pipeline::SlowTier;
use wire::{DataView, Limits};

use crate::l2::{Admit, BatchRead, L2File, ReadStart};
use crate::layout::ChunkName;

/// Lookups of chunks L2 holds that wait for room in a full queue, per tier (more are misses).
pub const DEFERRED_LOOKUPS: usize = 1024;

/// Default longest name (name TLV value bytes) a pending lookup may have.
pub const DEFAULT_MAX_NAME_BYTES: usize = 512;

/// Limits for decoding a stored Data: none beyond the slot's own size (the engine applies the
/// router's limits when it takes the Data).
const STORED_DATA_LIMITS: Limits = Limits {
    max_packet_bytes: usize::MAX,
    max_name_components: usize::MAX,
    max_name_bytes: usize::MAX,
    verify_parameters_digest: false,
};

/// Whether `payload` is a Data packet whose Name is `name_value` (a name TLV value): the check
/// every chunk read from L2 passes before it is served or put into the RAM CS. A slot whose
/// checksum holds may still carry another Data (an older or buggy writer, a crafted file).
pub fn data_name_matches(name_value: &[u8], payload: &[u8]) -> bool {
    DataView::decode(payload, &STORED_DATA_LIMITS).is_ok_and(|d| d.name().value() == name_value)
}

/// One chunk coming back from L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierCompletion<'a> {
    /// The engine's full-name hash when a lookup is waiting for this chunk (pass it to
    /// `complete_pending`); `None` for the other chunks of the batch (prefetch for L1).
    pub full_hash: Option<u64>,
    /// The chunk's name (name TLV value).
    pub name_value: &'a [u8],
    /// The Data packet, or `None` when the waiting chunk could not be served (corrupt, gone,
    /// I/O error): the engine then forwards the Interest upstream.
    pub data: Option<&'a [u8]>,
    /// When the chunk was written to L2 (wall clock, ms since the Unix epoch; 0: unknown, and
    /// always 0 without data). Its freshness counts from then: see [`TierCompletion::age_ms`].
    pub stored_at_ms: u64,
}

impl TierCompletion<'_> {
    /// How long ago the chunk was stored, at `unix_now_ms` ([`crate::l2::unix_ms`]): the age to give the
    /// engine's `complete_pending_aged` and `insert_cs_aged`, so that the RAM CS counts the
    /// Data's FreshnessPeriod from its write to L2 (before a restart, too), not from its read.
    /// `u64::MAX` when the write time is unknown (stale at once, as [`is_fresh`] judges it); 0
    /// if the wall clock went back since.
    pub fn age_ms(&self, unix_now_ms: u64) -> u64 {
        match self.stored_at_ms {
            0 => u64::MAX,
            t => unix_now_ms.saturating_sub(t),
        }
    }
}

/// Counters of an [`L2Tier`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TierCounters {
    /// Lookups.
    pub lookups: u64,
    /// Lookups answered pending.
    pub pending: u64,
    /// Lookups refused for a name longer than the limit or not valid TLV.
    pub bad_names: u64,
    /// Pending lookups completed with data.
    pub served: u64,
    /// Pending lookups completed without data.
    pub failed: u64,
    /// Chunks handed out for L1 that nobody was waiting for.
    pub prefetched: u64,
    /// Prefetch-ahead: CS hits on a batch's penultimate chunk, for which the tier named the
    /// next batch.
    pub ahead_offered: u64,
    /// Prefetch-ahead: batch reads started for the engine's prefetch (the next batch was not
    /// in the CS, is in L2, and the queue had room).
    pub ahead_reads: u64,
    /// Lookups that found the queue full for a chunk L2 holds and waited for room.
    pub deferred: u64,
    /// CanBePrefix lookups asked of the prefix index.
    pub prefix_lookups: u64,
    /// Of those, answered pending (a batch under the prefix is being read).
    pub prefix_pending: u64,
    /// Pending CanBePrefix lookups the batch read had no (fresh) chunk for.
    pub prefix_stale: u64,
    /// CanBePrefix lookups the prefix index had nothing for (or that found the queue full),
    /// answered pending to complete without data at the next drain
    /// ([`L2Tier::set_prefix_miss_completions`]).
    pub prefix_missed: u64,
    /// Pending exact lookups of a MustBeFresh Interest whose chunk was stale (or of unknown
    /// age): completed without data (the engine forwards the Interest).
    pub stale: u64,
}

/// Batches a CanBePrefix lookup reads at most (newest first) to find a chunk it can serve.
pub const PREFIX_READS_PER_LOOKUP: u8 = 8;

/// A CanBePrefix lookup waiting for its batch read.
#[derive(Debug, Clone, Copy)]
struct PrefixWait {
    ticket: u64,
    active: bool,
    /// Its batch had no chunk to serve: read the next one under the prefix.
    again: bool,
    /// The prefix index had no batch under the name (or the queue was full): completes
    /// without data at the next drain (with `again` set, so no batch read completes it).
    missed: bool,
    reads: u8,
    must_be_fresh: bool,
    hash: u64,
    name_len: u16,
}

#[derive(Debug)]
struct Wait {
    ticket: u64,
    active: bool,
    slots: u64,
    /// Waiting slots that a MustBeFresh Interest waits for: served only if still fresh.
    fresh: u64,
    hashes: [u64; 64],
    name_lens: [u16; 64],
}

/// The L2 adapter of one worker.
#[derive(Debug)]
pub struct L2Tier {
    l2: L2File,
    max_name_bytes: usize,
    waits: Vec<Wait>,
    /// `waits.len() × B × max_name_bytes` bytes: the names of waiting lookups.
    names: Vec<u8>,
    counters: TierCounters,
    /// Read the next batch when the penultimate chunk of one is served from the CS.
    prefetch_ahead: bool,
    /// Lookups answered pending and not completed yet.
    waiting: usize,
    /// Lookups waiting for room in the queue: (full-name hash, MustBeFresh, name), at most
    /// [`DEFERRED_LOOKUPS`]; their buffers are reused.
    deferred: VecDeque<(u64, bool, Vec<u8>)>,
    deferred_spare: Vec<Vec<u8>>,
    /// CanBePrefix lookups waiting (at most the queue depth)...
    prefix_waits: Vec<PrefixWait>,
    /// ...and their names, `max_name_bytes` each.
    prefix_names: Vec<u8>,
    /// Answer a CanBePrefix lookup that finds nothing pending too, and complete it without
    /// data at the next drain (see [`L2Tier::set_prefix_miss_completions`]).
    complete_prefix_misses: bool,
}

impl L2Tier {
    /// Wraps an open store; names of pending lookups may have up to `max_name_bytes` bytes.
    /// The store checks every chunk it reads with [`data_name_matches`] before handing it out.
    pub fn new(mut l2: L2File, max_name_bytes: usize) -> Self {
        l2.set_payload_check(data_name_matches);
        let qd = l2.config().queue_depth;
        let batch = l2.superblock().batch as usize;
        L2Tier {
            waits: (0..qd)
                .map(|_| Wait {
                    ticket: 0,
                    active: false,
                    slots: 0,
                    fresh: 0,
                    hashes: [0; 64],
                    name_lens: [0; 64],
                })
                .collect(),
            // Mapped now, so that the worker never faults on them.
            names: {
                let mut v = vec![0u8; qd * batch * max_name_bytes];
                // SAFETY: the vector's own zeroed bytes.
                unsafe { crate::io::touch_pages(v.as_mut_ptr(), v.len()) };
                v
            },
            max_name_bytes,
            l2,
            counters: TierCounters::default(),
            prefetch_ahead: true,
            waiting: 0,
            prefix_waits: vec![
                PrefixWait {
                    ticket: 0,
                    active: false,
                    again: false,
                    missed: false,
                    reads: 0,
                    must_be_fresh: false,
                    hash: 0,
                    name_len: 0,
                };
                qd
            ],
            prefix_names: vec![0; qd * max_name_bytes],
            deferred: VecDeque::with_capacity(DEFERRED_LOOKUPS),
            deferred_spare: Vec::new(),
            complete_prefix_misses: false,
        }
    }

    /// With `on`, a CanBePrefix lookup whose name the prefix index has no batch under (or that
    /// finds the queue full) answers pending too and completes without data at the next drain,
    /// as one whose batches had no fresh chunk does: every miss then reaches the caller's
    /// completion handler, where a router with several workers hands the Interest on to the
    /// next worker whose L2 may hold the name (the engine forwards it otherwise). Off by
    /// default: a miss answers `false` at once.
    pub fn set_prefix_miss_completions(&mut self, on: bool) {
        self.complete_prefix_misses = on;
    }

    /// Turns prefetch-ahead on (the default) or off: with it, a CS hit on the penultimate
    /// chunk of a batch (the last one when B = 1) reads the next batch into the CS, unless the
    /// CS holds its first chunk already (the improvement Mansilha et al., 2017, left for later).
    pub fn with_prefetch_ahead(mut self, on: bool) -> Self {
        self.prefetch_ahead = on;
        self
    }

    /// `SlowTier::ahead_of`: for a CS hit on the chunk of a batch that triggers prefetch-ahead,
    /// writes the name of the next batch's first chunk into `out` (the same prefix, the next
    /// multiple of B as segment number) and answers `true`.
    pub fn ahead_of(&mut self, name_value: &[u8], out: &mut Vec<u8>) -> bool {
        if !self.prefetch_ahead {
            return false;
        }
        let Some(name) = ChunkName::parse(name_value) else {
            return false;
        };
        if name.prefix.len() == name.name.len() {
            return false; // no segment component: not a chunk
        }
        let b = u64::from(self.l2.superblock().batch);
        if name.segment % b != b.saturating_sub(2) {
            return false;
        }
        let Some(next) = (name.segment / b + 1).checked_mul(b) else {
            return false;
        };
        out.extend_from_slice(name.prefix);
        wire::tlv::write_nni_tlv(out, wire::tt::SEGMENT, next);
        if out.len() > self.max_name_bytes {
            out.clear();
            return false;
        }
        self.counters.ahead_offered += 1;
        true
    }

    /// `SlowTier::prefetch`: starts reading the batch of `name_value` with nobody waiting; its
    /// chunks come back from [`L2Tier::poll`] with `full_hash: None` (for the CS). Not in L2, a
    /// read already in flight, or a full queue: nothing.
    pub fn prefetch(&mut self, name_value: &[u8]) {
        let Some(name) = ChunkName::parse(name_value) else {
            return;
        };
        if let ReadStart::Pending { joined: false, .. } = self.l2.read(&name) {
            self.counters.ahead_reads += 1;
        }
    }

    /// The store.
    pub fn l2(&self) -> &L2File {
        &self.l2
    }

    /// The store, mutably (for admission and counters).
    pub fn l2_mut(&mut self) -> &mut L2File {
        &mut self.l2
    }

    /// Counters.
    pub fn counters(&self) -> &TierCounters {
        &self.counters
    }

    /// Closes the store cleanly (waits for I/O, writes the index).
    pub fn close(self) -> Result<(), crate::l2::L2Error> {
        self.l2.close()
    }

    /// `SlowTier::lookup`: `true` (pending) if the chunk is in L2 and its batch read was
    /// started or joined; `false` (miss) otherwise, including when the queue is full.
    pub fn lookup(&mut self, full_hash: u64, name_value: &[u8]) -> bool {
        self.lookup_with(full_hash, name_value, false)
    }

    /// `SlowTier::lookup_fresh`: [`L2Tier::lookup`] for a MustBeFresh Interest. The chunk
    /// completes the lookup only if it is still fresh ([`is_fresh`]: written to L2 less than its
    /// FreshnessPeriod ago; a slot without a write time is never fresh); else the lookup
    /// completes without data, and so do the other lookups waiting for that chunk (the engine
    /// forwards them all: a stale chunk is never served to a MustBeFresh Interest), and the
    /// chunk is not handed out for the RAM CS.
    pub fn lookup_fresh(&mut self, full_hash: u64, name_value: &[u8]) -> bool {
        self.lookup_with(full_hash, name_value, true)
    }

    fn lookup_with(&mut self, full_hash: u64, name_value: &[u8], must_be_fresh: bool) -> bool {
        self.counters.lookups += 1;
        let Some(name) = ChunkName::parse(name_value).filter(|_| {
            name_value.len() <= self.max_name_bytes && name_value.len() <= usize::from(u16::MAX)
        }) else {
            self.counters.bad_names += 1;
            return false;
        };
        match self.start_read(full_hash, &name, must_be_fresh) {
            ReadStart::Pending { .. } => {}
            // Held, but the queue is full: the lookup waits for room (bounded), so that a
            // burst of Interests for stored chunks is answered from L2, not sent upstream.
            ReadStart::Busy
                if self.deferred.len() < DEFERRED_LOOKUPS && self.l2.contains(&name) =>
            {
                let mut buf = self.deferred_spare.pop().unwrap_or_default();
                buf.clear();
                buf.extend_from_slice(name_value);
                self.deferred.push_back((full_hash, must_be_fresh, buf));
                self.waiting += 1;
                self.counters.deferred += 1;
            }
            _ => return false,
        }
        self.counters.pending += 1;
        true
    }

    /// Starts (or joins) the read of `name`'s batch and records the lookup as waiting for it.
    fn start_read(&mut self, full_hash: u64, name: &ChunkName<'_>, fresh: bool) -> ReadStart {
        let name_value = name.name;
        let r = self.l2.read(name);
        let ReadStart::Pending { ticket, slot, .. } = r else {
            return r;
        };
        let w = match self
            .waits
            .iter()
            .position(|w| w.active && w.ticket == ticket)
        {
            Some(w) => w,
            None => {
                // At most queue-depth reads are in flight, so a free entry exists.
                let Some(w) = self.waits.iter().position(|w| !w.active) else {
                    return ReadStart::Miss;
                };
                let e = &mut self.waits[w];
                e.active = true;
                e.ticket = ticket;
                e.slots = 0;
                e.fresh = 0;
                w
            }
        };
        let bit = 1u64 << slot;
        if fresh {
            self.waits[w].fresh |= bit;
        }
        if self.waits[w].slots & bit == 0 {
            let batch = self.l2.superblock().batch as usize;
            let at = (w * batch + slot as usize) * self.max_name_bytes;
            self.names[at..at + name_value.len()].copy_from_slice(name_value);
            let e = &mut self.waits[w];
            e.slots |= bit;
            e.hashes[slot as usize] = full_hash;
            e.name_lens[slot as usize] = name_value.len() as u16;
            self.waiting += 1;
        }
        r
    }

    /// Reads the next batch for the CanBePrefix lookups whose batch had no chunk to serve; one
    /// with no batch left completes without data. Returns the completions handed out.
    fn prefix_again(&mut self, f: &mut impl FnMut(TierCompletion<'_>)) -> usize {
        let mut n = 0;
        for i in 0..self.prefix_waits.len() {
            let w = self.prefix_waits[i];
            if !w.active || !w.again {
                continue;
            }
            let at = i * self.max_name_bytes;
            let name = &self.prefix_names[at..at + usize::from(w.name_len)];
            // A lookup the prefix index had nothing for, or whose batches are all read, completes
            // without data.
            if !w.missed {
                match self.l2.read_prefix_next(name, w.ticket) {
                    ReadStart::Busy => continue, // next time
                    ReadStart::Pending { ticket, .. } => {
                        let w = &mut self.prefix_waits[i];
                        (w.ticket, w.again, w.reads) = (ticket, false, w.reads + 1);
                        continue;
                    }
                    ReadStart::Miss => self.counters.prefix_stale += 1,
                }
            }
            self.prefix_waits[i].active = false;
            self.waiting -= 1;
            self.counters.failed += 1;
            f(TierCompletion {
                full_hash: Some(w.hash),
                name_value: name,
                data: None,
                stored_at_ms: 0,
            });
            n += 1;
        }
        n
    }

    /// Starts the reads of deferred lookups while the queue has room; a lookup whose chunk
    /// left L2 meanwhile completes without data. Returns the completions handed out.
    fn retry_deferred(&mut self, f: &mut impl FnMut(TierCompletion<'_>)) -> usize {
        let mut n = 0;
        while let Some((full_hash, fresh, buf)) = self.deferred.pop_front() {
            let r = match ChunkName::parse(&buf) {
                Some(name) => self.start_read(full_hash, &name, fresh),
                None => ReadStart::Miss,
            };
            match r {
                // Busy with nothing in flight would never end: a miss then.
                ReadStart::Busy if self.l2.in_flight() > 0 => {
                    self.deferred.push_front((full_hash, fresh, buf));
                    break;
                }
                ReadStart::Pending { .. } => self.waiting -= 1, // counted when deferred
                ReadStart::Miss | ReadStart::Busy => {
                    self.waiting -= 1;
                    self.counters.failed += 1;
                    f(TierCompletion {
                        full_hash: Some(full_hash),
                        name_value: &buf,
                        data: None,
                        stored_at_ms: 0,
                    });
                    n += 1;
                }
            }
            self.deferred_spare.push(buf);
        }
        n
    }

    /// `SlowTier::lookup_prefix`: for a CanBePrefix Interest named `name_value` (MustBeFresh if
    /// `must_be_fresh`), `true` (pending) if the prefix index has a batch under that name and
    /// its read was started or joined; the completion carries `full_hash` and `name_value`.
    pub fn lookup_prefix(
        &mut self,
        full_hash: u64,
        name_value: &[u8],
        must_be_fresh: bool,
    ) -> bool {
        self.counters.prefix_lookups += 1;
        if name_value.len() > self.max_name_bytes || name_value.is_empty() {
            self.counters.bad_names += 1;
            return false;
        }
        let Some(w) = self.prefix_waits.iter().position(|w| !w.active) else {
            return false;
        };
        let (ticket, missed) = match self.l2.read_prefix(name_value) {
            ReadStart::Pending { ticket, .. } => (ticket, false),
            _ if self.complete_prefix_misses => (0, true),
            _ => return false,
        };
        let at = w * self.max_name_bytes;
        self.prefix_names[at..at + name_value.len()].copy_from_slice(name_value);
        self.prefix_waits[w] = PrefixWait {
            ticket,
            active: true,
            again: missed,
            missed,
            reads: 1,
            must_be_fresh,
            hash: full_hash,
            name_len: name_value.len() as u16,
        };
        self.waiting += 1;
        self.counters.pending += 1;
        if missed {
            self.counters.prefix_missed += 1;
        } else {
            self.counters.prefix_pending += 1;
        }
        true
    }

    /// `SlowTier::holds`: whether L2's index holds the chunk (no I/O; the slot is verified only
    /// when read).
    pub fn holds(&self, name_value: &[u8]) -> bool {
        ChunkName::parse(name_value).is_some_and(|n| self.l2.contains(&n))
    }

    /// `SlowTier::waiting`: lookups answered pending whose batch read has not completed (the
    /// storage queue that NB-Cache's second-stage bypass watches).
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// Offers a chunk (name TLV value, Data packet) for storage in L2; see [`L2File::admit`].
    pub fn admit(&mut self, name_value: &[u8], data: &[u8]) -> Admit {
        self.admit_arrived(name_value, data, None)
    }

    /// [`L2Tier::admit`] for a chunk that arrived at `arrived_at_ms` (the store's clock,
    /// [`L2File::now_ms`]; `None`: now), which its slot records as its write time: a read-back
    /// then ages from the arrival ([`L2File::admit_stamped`]; write-back).
    pub fn admit_arrived(
        &mut self,
        name_value: &[u8],
        data: &[u8],
        arrived_at_ms: Option<u64>,
    ) -> Admit {
        match ChunkName::parse(name_value) {
            Some(name) => self.l2.admit_stamped(&name, data, arrived_at_ms),
            None => self.l2.refuse_malformed(),
        }
    }

    /// Drains finished I/O without blocking and calls `f` once per chunk (see
    /// [`TierCompletion`]). Returns the number of completions handed out.
    pub fn poll(&mut self, f: impl FnMut(TierCompletion<'_>)) -> usize {
        self.drain(Some(usize::MAX), f).0
    }

    /// Like [`L2Tier::poll`], but handles at most `max_ops` finished operations (batch reads
    /// or writes); the rest wait for the next call. A forwarding worker calls this once per
    /// iteration so that a burst of completions never stalls it.
    pub fn poll_max(&mut self, max_ops: usize, f: impl FnMut(TierCompletion<'_>)) -> usize {
        self.drain(Some(max_ops), f).0
    }

    /// Blocks until no lookup waits any more (every read a pending lookup started has
    /// completed), handing out completions as [`L2Tier::poll`] does, then drains what else
    /// finished: the blocking I/O of a classic content router. Returns the number of
    /// completions handed out.
    pub fn complete_waiting(&mut self, mut f: impl FnMut(TierCompletion<'_>)) -> usize {
        let mut n = 0;
        while self.waiting > 0 {
            let (k, any) = self.drain(None, &mut f);
            n += k;
            if !any {
                break; // nothing in flight: the waiting lookups can never complete
            }
        }
        n + self.drain(Some(usize::MAX), f).0
    }

    /// Like [`L2Tier::poll`] but blocks until at least one operation finishes (benchmarks and
    /// tests; a forwarding worker polls). `false` if nothing was in flight.
    pub fn wait(&mut self, f: impl FnMut(TierCompletion<'_>)) -> bool {
        self.drain(None, f).1
    }

    /// (completions handed out, whether anything finished). `None`: block for one operation;
    /// `Some(max)`: drain at most `max` without blocking.
    fn drain(
        &mut self,
        max: Option<usize>,
        mut f: impl FnMut(TierCompletion<'_>),
    ) -> (usize, bool) {
        let (k, any) = self.drain_io(max, &mut f);
        (
            k + self.prefix_again(&mut f) + self.retry_deferred(&mut f),
            any,
        )
    }

    fn drain_io(
        &mut self,
        max: Option<usize>,
        mut f: impl FnMut(TierCompletion<'_>),
    ) -> (usize, bool) {
        let L2Tier {
            l2,
            max_name_bytes,
            waits,
            names,
            counters,
            waiting,
            prefix_waits,
            prefix_names,
            ..
        } = self;
        let batch = l2.superblock().batch as usize;
        let mut n = 0;
        let mut on_batch = |b: &BatchRead<'_>| {
            let before = counters.served + counters.failed;
            n += deliver(b, waits, names, batch, *max_name_bytes, counters, &mut f);
            let prefix = (prefix_waits.as_mut_slice(), prefix_names.as_slice());
            n += deliver_prefix(b, prefix, *max_name_bytes, counters, &mut f);
            *waiting -= (counters.served + counters.failed - before) as usize;
        };
        let any = match max {
            None => l2.wait_one(&mut on_batch),
            Some(max) => l2.poll_max(max, &mut on_batch) > 0,
        };
        (n, any)
    }
}

fn deliver(
    b: &BatchRead<'_>,
    waits: &mut [Wait],
    names: &[u8],
    batch: usize,
    max_name_bytes: usize,
    counters: &mut TierCounters,
    f: &mut impl FnMut(TierCompletion<'_>),
) -> usize {
    let w = waits.iter().position(|w| w.active && w.ticket == b.ticket);
    let mut waiting = w.map_or(0, |w| waits[w].slots);
    let name_of = |w: usize, s: usize| {
        let at = (w * batch + s) * max_name_bytes;
        &names[at..at + usize::from(waits[w].name_lens[s])]
    };
    let mut n = 0;
    let now_ms = b.now_ms();
    for c in b.chunks() {
        let bit = 1u64 << c.slot;
        let full_hash = match w {
            Some(w) if waiting & bit != 0 && name_of(w, c.slot as usize) == c.name => {
                waiting &= !bit;
                if waits[w].fresh & bit != 0 && !is_fresh(c.payload, c.stored_at_ms, now_ms) {
                    // Stale for a MustBeFresh Interest: every waiter goes upstream, and the
                    // RAM CS does not get it (it would count its freshness from now).
                    counters.failed += 1;
                    counters.stale += 1;
                    f(TierCompletion {
                        full_hash: Some(waits[w].hashes[c.slot as usize]),
                        name_value: c.name,
                        data: None,
                        stored_at_ms: 0,
                    });
                    n += 1;
                    continue;
                }
                counters.served += 1;
                Some(waits[w].hashes[c.slot as usize])
            }
            _ => {
                counters.prefetched += 1;
                None
            }
        };
        f(TierCompletion {
            full_hash,
            name_value: c.name,
            data: Some(c.payload),
            stored_at_ms: c.stored_at_ms,
        });
        n += 1;
    }
    if let Some(w) = w {
        // Waiting chunks that did not verify (or whose slot holds another name).
        while waiting != 0 {
            let s = waiting.trailing_zeros() as usize;
            waiting &= waiting - 1;
            counters.failed += 1;
            f(TierCompletion {
                full_hash: Some(waits[w].hashes[s]),
                name_value: name_of(w, s),
                data: None,
                stored_at_ms: 0,
            });
            n += 1;
        }
        waits[w].active = false;
        waits[w].slots = 0;
        waits[w].fresh = 0;
    }
    n
}

/// Completes the CanBePrefix lookups waiting for batch read `b`: each with the first chunk whose
/// name starts with the Interest's name (and that is fresh, for MustBeFresh), else without data.
fn deliver_prefix(
    b: &BatchRead<'_>,
    (waits, names): (&mut [PrefixWait], &[u8]),
    max_name_bytes: usize,
    counters: &mut TierCounters,
    f: &mut impl FnMut(TierCompletion<'_>),
) -> usize {
    let mut n = 0;
    let now_ms = b.now_ms();
    for (i, w) in waits.iter_mut().enumerate() {
        if !w.active || w.again || w.ticket != b.ticket {
            continue;
        }
        let name = &names[i * max_name_bytes..i * max_name_bytes + usize::from(w.name_len)];
        // `name` is whole components: a byte prefix of a chunk's name is a component prefix.
        let chunk = b.chunks().find(|c| {
            c.name.starts_with(name)
                && (!w.must_be_fresh || is_fresh(c.payload, c.stored_at_ms, now_ms))
        });
        match chunk {
            Some(_) => counters.served += 1,
            None if w.reads < PREFIX_READS_PER_LOOKUP && !b.io_error => {
                w.again = true; // L2Tier::prefix_again reads the next batch
                continue;
            }
            None => {
                counters.failed += 1;
                counters.prefix_stale += 1;
            }
        }
        w.active = false;
        f(TierCompletion {
            full_hash: Some(w.hash),
            name_value: name,
            data: chunk.map(|c| c.payload),
            stored_at_ms: chunk.map_or(0, |c| c.stored_at_ms),
        });
        n += 1;
    }
    n
}

/// Whether a Data written to L2 at `stored_at_ms` is still fresh at `now_ms` (both ms since the
/// Unix epoch), as the RAM CS judges it from its arrival: less than its FreshnessPeriod ago. A
/// Data without one is never fresh, and neither is one whose write time is unknown
/// (`stored_at_ms == 0`: a slot written before slots carried the time; a rebuild keeps the 0):
/// its age cannot be told, and "stale" is the answer that never serves old data to a
/// MustBeFresh Interest (it still serves Interests without MustBeFresh).
pub fn is_fresh(data: &[u8], stored_at_ms: u64, now_ms: u64) -> bool {
    let freshness_ms = DataView::decode(data, &STORED_DATA_LIMITS)
        .ok()
        .and_then(|d| d.freshness_ms())
        .unwrap_or(0);
    stored_at_ms > 0 && stored_at_ms.saturating_add(freshness_ms) > now_ms
}

/// A cloneable handle on one worker's [`L2Tier`]: box one clone into the engine as its
/// [`SlowTier`], keep another to poll and admit. Both are used only from the worker's thread,
/// so the lock is never contended (the handle is `Send` so that the engine can move to its
/// worker). The handles also add up the time the engine spent in L2 lookups and read-ahead
/// requests ([`SharedL2Tier::take_engine_ns`]), so that a worker can tell storage time from
/// forwarding time.
#[derive(Debug, Clone)]
pub struct SharedL2Tier {
    tier: Arc<Mutex<L2Tier>>,
    engine_ns: Arc<AtomicU64>,
}

impl SharedL2Tier {
    /// Wraps a tier.
    pub fn new(tier: L2Tier) -> Self {
        SharedL2Tier {
            tier: Arc::new(Mutex::new(tier)),
            engine_ns: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Locks the tier (never contended when used from one worker; a poisoned lock is taken
    /// over: the tier's state stays consistent between calls).
    pub fn lock(&self) -> MutexGuard<'_, L2Tier> {
        self.tier.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// [`L2Tier::poll`].
    pub fn poll(&self, f: impl FnMut(TierCompletion<'_>)) -> usize {
        self.lock().poll(f)
    }

    /// [`L2Tier::admit`].
    pub fn admit(&self, name_value: &[u8], data: &[u8]) -> Admit {
        self.lock().admit(name_value, data)
    }

    /// Nanoseconds the engine spent in this tier's lookups and read-ahead requests since the
    /// last call.
    pub fn take_engine_ns(&self) -> u64 {
        self.engine_ns.swap(0, Ordering::Relaxed)
    }

    /// The tier itself, when this is the last handle on it (`Err(self)` otherwise).
    pub fn into_inner(self) -> Result<L2Tier, Self> {
        let SharedL2Tier { tier, engine_ns } = self;
        match Arc::try_unwrap(tier) {
            Ok(m) => Ok(m.into_inner().unwrap_or_else(|e| e.into_inner())),
            Err(tier) => Err(SharedL2Tier { tier, engine_ns }),
        }
    }

    /// Runs `f` on the tier, adding the time it took to the engine's storage time.
    fn timed<R>(&mut self, f: impl FnOnce(&mut L2Tier) -> R) -> R {
        let t = Instant::now();
        let r = f(&mut self.lock());
        self.engine_ns
            .fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        r
    }
}

impl SlowTier for SharedL2Tier {
    fn lookup(&mut self, full_hash: u64, name_value: &[u8]) -> bool {
        self.timed(|t| t.lookup(full_hash, name_value))
    }

    fn lookup_fresh(&mut self, full_hash: u64, name_value: &[u8]) -> bool {
        self.timed(|t| t.lookup_fresh(full_hash, name_value))
    }

    fn holds(&mut self, _full_hash: u64, name_value: &[u8]) -> bool {
        self.lock().holds(name_value)
    }

    fn lookup_prefix(&mut self, full_hash: u64, name_value: &[u8], must_be_fresh: bool) -> bool {
        self.timed(|t| t.lookup_prefix(full_hash, name_value, must_be_fresh))
    }

    fn waiting(&self) -> usize {
        self.lock().waiting()
    }

    fn ahead_of(&mut self, name_value: &[u8], out: &mut Vec<u8>) -> bool {
        // No I/O: not storage time.
        self.lock().ahead_of(name_value, out)
    }

    fn prefetch(&mut self, name_value: &[u8]) {
        self.timed(|t| t.prefetch(name_value))
    }
}

impl SlowTier for L2Tier {
    fn lookup(&mut self, full_hash: u64, name_value: &[u8]) -> bool {
        L2Tier::lookup(self, full_hash, name_value)
    }

    fn lookup_fresh(&mut self, full_hash: u64, name_value: &[u8]) -> bool {
        L2Tier::lookup_fresh(self, full_hash, name_value)
    }

    fn holds(&mut self, _full_hash: u64, name_value: &[u8]) -> bool {
        L2Tier::holds(self, name_value)
    }

    fn lookup_prefix(&mut self, full_hash: u64, name_value: &[u8], must_be_fresh: bool) -> bool {
        L2Tier::lookup_prefix(self, full_hash, name_value, must_be_fresh)
    }

    fn waiting(&self) -> usize {
        L2Tier::waiting(self)
    }

    fn ahead_of(&mut self, name_value: &[u8], out: &mut Vec<u8>) -> bool {
        L2Tier::ahead_of(self, name_value, out)
    }

    fn prefetch(&mut self, name_value: &[u8]) {
        L2Tier::prefetch(self, name_value)
    }
}

#[cfg(test)]
mod tests {
    mod arrival;

    use super::*;
    use crate::io::IoKind;
    use crate::l2::{L2Config, L2File};
    use wire::{Data, Name};

    fn chunk(uri: &str) -> (Vec<u8>, Vec<u8>) {
        let name = Name::from_uri(uri).unwrap();
        let mut d = Data::new(name.clone(), uri.as_bytes().to_vec());
        d.sign_digest_sha256();
        (name.to_wire()[2..].to_vec(), d.to_wire())
    }

    /// A tier holding segments 0..4 of /f (one batch).
    fn tier(dir: &std::path::Path) -> L2Tier {
        let cfg = L2Config {
            slot_bytes: 1024,
            batch: 4,
            queue_depth: 4,
            ..L2Config::new(dir.join("l2"), 8)
        };
        let mut t = L2Tier::new(L2File::open(&cfg).unwrap(), 256);
        for s in 0..4 {
            let (n, d) = chunk(&format!("/f/seg={s}"));
            assert_eq!(t.admit(&n, &d), Admit::Writing);
        }
        t.l2_mut().flush();
        t
    }

    #[test]
    fn a_failed_read_completes_the_waiting_lookups_without_data_and_turns_l2_off() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = tier(dir.path());
        let (n1, _) = chunk("/f/seg=1");
        let (n2, _) = chunk("/f/seg=2");
        assert!(t.lookup(11, &n1) && t.lookup(12, &n2));
        t.l2_mut().fail_next_io(IoKind::Read, libc::EIO);
        let mut got = Vec::new();
        assert!(t.wait(|c| got.push((c.full_hash, c.name_value.to_vec(), c.data.is_some()))));
        got.sort();
        assert_eq!(
            got,
            vec![(Some(11), n1.clone(), false), (Some(12), n2, false)]
        );
        assert_eq!((t.counters().served, t.counters().failed), (0, 2));
        assert!(t.l2().fault().is_some());
        // Off: a miss at once (the engine forwards upstream), nothing admitted, no I/O.
        assert!(!t.lookup(13, &n1));
        let (n5, d5) = chunk("/f/seg=5");
        assert_eq!(t.admit(&n5, &d5), Admit::Off);
        assert_eq!(t.l2().in_flight(), 0);
        assert!(!t.wait(|_| panic!("nothing in flight")));
    }

    #[test]
    fn waiting_counts_pending_lookups_until_their_reads_complete() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = tier(dir.path());
        let (n1, _) = chunk("/f/seg=1");
        let (n2, _) = chunk("/f/seg=2");
        let (absent, _) = chunk("/g/seg=0");
        assert!(t.holds(&n1) && !t.holds(&absent));
        assert_eq!(t.waiting(), 0);
        assert!(t.lookup(1, &n1) && t.lookup(2, &n2));
        assert!(!t.lookup(3, &absent));
        assert_eq!(t.waiting(), 2);
        let mut served = 0;
        while t.waiting() > 0 {
            assert!(t.wait(|c| served += usize::from(c.full_hash.is_some())));
        }
        assert_eq!(served, 2);
        assert_eq!(SlowTier::waiting(&t), 0);
        // Blocking: one call returns once every waiting lookup has its answer.
        assert!(t.lookup(1, &n1));
        let mut got = Vec::new();
        assert!(t.complete_waiting(|c| got.push(c.full_hash)) >= 1);
        assert_eq!(t.waiting(), 0);
        assert!(got.contains(&Some(1)));
        assert_eq!(t.complete_waiting(|_| panic!("nothing waits")), 0);
    }

    /// A Data named `uri` with FreshnessPeriod `fresh_ms` (none if 0).
    fn chunk_fresh(uri: &str, fresh_ms: u64) -> (Vec<u8>, Vec<u8>) {
        let name = Name::from_uri(uri).unwrap();
        let mut d = Data::new(name.clone(), uri.as_bytes().to_vec());
        if fresh_ms > 0 {
            d.meta_info = Some(wire::data::MetaInfo {
                freshness_ms: Some(fresh_ms),
                ..Default::default()
            });
        }
        d.sign_digest_sha256();
        (name.to_wire()[2..].to_vec(), d.to_wire())
    }

    fn value(uri: &str) -> Vec<u8> {
        Name::from_uri(uri).unwrap().to_wire()[2..].to_vec()
    }

    /// The answer to a CanBePrefix lookup of `uri`: `None` if it did not go pending, else the
    /// name of the Data it completed with (empty: completed without data).
    fn prefix_answer(t: &mut L2Tier, uri: &str, fresh: bool) -> Option<String> {
        let n = value(uri);
        if !t.lookup_prefix(77, &n, fresh) {
            return None;
        }
        let mut got = None;
        while t.waiting() > 0 {
            t.wait(|c| {
                if c.full_hash == Some(77) {
                    assert_eq!(c.name_value, n.as_slice(), "completes the Interest's name");
                    got = Some(c.data.map_or(String::new(), |d| {
                        let v = wire::DataView::decode(d, &STORED_DATA_LIMITS).unwrap();
                        v.name().to_name().to_string()
                    }));
                }
            });
        }
        got
    }

    #[test]
    fn can_be_prefix_lookups_find_the_newest_batch_under_a_prefix_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = L2Config {
            slot_bytes: 1024,
            batch: 4,
            queue_depth: 4,
            ..L2Config::new(dir.path().join("l2"), 4)
        };
        let mut t = L2Tier::new(L2File::open(&cfg).unwrap(), 256);
        for uri in [
            "/p/v=1/seg=1",
            "/p/v=2/seg=2",
            "/p/v=2/seg=3",
            "/stale/v=1/seg=0",
        ] {
            let (n, d) = chunk_fresh(uri, if uri.starts_with("/p") { 3_600_000 } else { 0 });
            assert_eq!(t.admit(&n, &d), Admit::Writing);
        }
        t.l2_mut().flush();
        let check = |t: &mut L2Tier| {
            assert_eq!(
                prefix_answer(t, "/p", true).as_deref(),
                Some("/p/v=2/seg=2")
            );
            assert_eq!(
                prefix_answer(t, "/p/v=1", true).as_deref(),
                Some("/p/v=1/seg=1")
            );
            assert_eq!(prefix_answer(t, "/q", false), None);
            // A name that is a prefix in bytes but not in components.
            assert_eq!(prefix_answer(t, "/p/v=2/seg=2/x", false), None);
            // No FreshnessPeriod: served to an Interest without MustBeFresh only.
            assert_eq!(prefix_answer(t, "/stale", true).as_deref(), Some(""));
            assert_eq!(
                prefix_answer(t, "/stale", false).as_deref(),
                Some("/stale/v=1/seg=0")
            );
        };
        check(&mut t);
        assert_eq!(t.counters().prefix_stale, 1);
        // A clean restart (index file, then one slot read per extent), and a crash (scan).
        t.close().unwrap();
        let mut t = L2Tier::new(L2File::open(&cfg).unwrap(), 256);
        assert!(t.l2().counters().loaded_index_file);
        check(&mut t);
        drop(t);
        let mut t = L2Tier::new(L2File::open(&cfg).unwrap(), 256);
        assert!(!t.l2().counters().loaded_index_file);
        check(&mut t);
        // The newest batch under /p holds no fresh chunk (RDR metadata, say): the lookup reads
        // the next one.
        let (n, d) = chunk_fresh("/p/32=metadata/v=9/seg=0", 0);
        assert_eq!(t.admit(&n, &d), Admit::Writing);
        t.l2_mut().flush();
        assert_eq!(
            prefix_answer(&mut t, "/p", true).as_deref(),
            Some("/p/v=2/seg=2")
        );
        assert_eq!(
            prefix_answer(&mut t, "/p", false).as_deref(),
            Some("/p/32=metadata/v=9/seg=0")
        );
        // A new batch evicts the oldest extent (FIFO): /p/v=1 is gone from the prefix index.
        let (n, d) = chunk_fresh("/r/seg=0", 1000);
        assert_eq!(t.admit(&n, &d), Admit::Writing);
        t.l2_mut().flush();
        assert_eq!(prefix_answer(&mut t, "/p/v=1", false), None);
        assert_eq!(
            prefix_answer(&mut t, "/p", true).as_deref(),
            Some("/p/v=2/seg=2")
        );
        assert_eq!(
            prefix_answer(&mut t, "/r", true).as_deref(),
            Some("/r/seg=0")
        );
    }

    #[test]
    fn a_lookup_that_finds_the_queue_full_waits_for_room_and_is_served() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = L2Config {
            slot_bytes: 1024,
            batch: 2,
            queue_depth: 1,
            ..L2Config::new(dir.path().join("l2"), 4)
        };
        let mut t = L2Tier::new(L2File::open(&cfg).unwrap(), 256);
        for uri in ["/d/seg=0", "/d/seg=2", "/d/seg=4"] {
            let (n, d) = chunk(uri);
            while t.admit(&n, &d) == Admit::Busy {
                t.l2_mut().flush();
            }
        }
        t.l2_mut().flush();
        let names: Vec<Vec<u8>> = ["/d/seg=0", "/d/seg=2", "/d/seg=4"]
            .iter()
            .map(|u| chunk(u).0)
            .collect();
        // One read in flight at most: the second and third batches wait for room.
        for (i, n) in names.iter().enumerate() {
            assert!(t.lookup(i as u64, n), "pending");
        }
        assert!(
            !t.lookup(9, &chunk("/d/seg=6").0),
            "not held: a miss at once"
        );
        assert_eq!((t.waiting(), t.counters().deferred), (3, 2));
        let mut served = Vec::new();
        while t.waiting() > 0 {
            assert!(
                t.wait(|c| if let (Some(h), Some(_)) = (c.full_hash, c.data) {
                    served.push(h)
                })
            );
        }
        served.sort();
        assert_eq!(served, [0, 1, 2]);
    }

    #[test]
    fn a_read_that_finds_the_queue_full_of_writes_loses_no_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = L2Config {
            slot_bytes: 1024,
            batch: 2,
            queue_depth: 2,
            ..L2Config::new(dir.path().join("l2"), 64)
        };
        let mut t = L2Tier::new(L2File::open(&cfg).unwrap(), 256);
        let (n, d) = chunk("/k/seg=0");
        assert_eq!(t.admit(&n, &d), Admit::Writing);
        t.l2_mut().flush();
        let name = ChunkName::parse(&n).unwrap();
        for round in 0..8 {
            for s in 0..2 {
                let (w, d) = chunk(&format!("/w{round}/seg={s}"));
                assert_eq!(t.admit(&w, &d), Admit::Writing);
            }
            assert_eq!(
                t.l2_mut().read(&name),
                ReadStart::Busy,
                "queue full of writes"
            );
            t.l2_mut().flush();
        }
        assert!(matches!(t.l2_mut().read(&name), ReadStart::Pending { .. }));
    }

    #[test]
    fn a_failed_write_turns_l2_off() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = tier(dir.path());
        let (n, d) = chunk("/g/seg=0");
        t.l2_mut().fail_next_io(IoKind::Write, libc::ENOSPC);
        assert_eq!(t.admit(&n, &d), Admit::Writing);
        t.l2_mut().flush();
        let fault = t.l2().fault().expect("off");
        assert!(fault.write && fault.errno == libc::ENOSPC, "{fault}");
        let (n1, _) = chunk("/f/seg=1");
        assert!(!t.lookup(1, &n1), "what was stored is not read any more");
        assert_eq!(t.l2().counters().refused_off, 1);
    }
}
