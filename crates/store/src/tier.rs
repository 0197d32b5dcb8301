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
//!   `engine.insert_cs(now_ms, data)`.
//! - [`SharedL2Tier`] is a cloneable handle: one clone is boxed into the engine with
//!   [`Engine::set_slow_tier`](engine::fw::pipeline::Engine::set_slow_tier), the worker keeps
//!   another to poll and admit. Both are used from the worker's own thread, so the lock is
//!   never contended.
//!
//! Bounded: one waiting entry per read in flight (at most the queue depth), each with room for
//! `B` names of at most `max_name_bytes`, allocated at construction.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use engine::fw::pipeline::SlowTier;
use wire::{DataView, Limits};

use crate::l2::{Admit, BatchRead, L2File, ReadStart};
use crate::layout::ChunkName;

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
}

#[derive(Debug)]
struct Wait {
    ticket: u64,
    active: bool,
    slots: u64,
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
        }
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
        self.counters.lookups += 1;
        let Some(name) = ChunkName::parse(name_value).filter(|_| {
            name_value.len() <= self.max_name_bytes && name_value.len() <= usize::from(u16::MAX)
        }) else {
            self.counters.bad_names += 1;
            return false;
        };
        let ReadStart::Pending { ticket, slot, .. } = self.l2.read(&name) else {
            return false;
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
                    return false;
                };
                let e = &mut self.waits[w];
                e.active = true;
                e.ticket = ticket;
                e.slots = 0;
                w
            }
        };
        let bit = 1u64 << slot;
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
        self.counters.pending += 1;
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
        match ChunkName::parse(name_value) {
            Some(name) => self.l2.admit(&name, data),
            None => Admit::TooLarge,
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
        let L2Tier {
            l2,
            max_name_bytes,
            waits,
            names,
            counters,
            waiting,
            ..
        } = self;
        let batch = l2.superblock().batch as usize;
        let mut n = 0;
        let mut on_batch = |b: &BatchRead<'_>| {
            let before = counters.served + counters.failed;
            n += deliver(b, waits, names, batch, *max_name_bytes, counters, &mut f);
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
    for c in b.chunks() {
        let bit = 1u64 << c.slot;
        let full_hash = match w {
            Some(w) if waiting & bit != 0 && name_of(w, c.slot as usize) == c.name => {
                waiting &= !bit;
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
            });
            n += 1;
        }
        waits[w].active = false;
        waits[w].slots = 0;
    }
    n
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

    fn holds(&mut self, _full_hash: u64, name_value: &[u8]) -> bool {
        self.lock().holds(name_value)
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

    fn holds(&mut self, _full_hash: u64, name_value: &[u8]) -> bool {
        L2Tier::holds(self, name_value)
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
