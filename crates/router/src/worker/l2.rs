//! A worker's L2 tier: the chunks it owns, admission with a bounded backlog and back-pressure,
//! write-back.
//!
//! Admission never gives up on a chunk silently. A chunk whose write finds L2's queue full
//! waits in the worker's backlog and is retried on every loop iteration; a chunk owned by
//! another worker whose input ring is full waits in the hand-over queue. While the backlog
//! holds [`ADMIT_HOLD_CHUNKS`] chunks or more, the worker takes no new input (it polls its L2
//! until the disk catches up; the I/O thread's input ring fills and drops, counted, and
//! consumers retransmit): the back-pressure that lets a fetch through a router with a store
//! store every chunk. Only when a single loop iteration overfills the backlog is a chunk
//! dropped, counted in `admit_dropped`; the store itself counts what its policy refused
//! (`admit_rejected`), what does not fit a slot (`admit_too_large`) and what a storage fault
//! refused (`refused_off`).
//!
//! Every chunk is accounted for at the worker too ([`L2::admission_balanced`]): what the worker
//! took from its own traffic (`admit_taken`) and what other workers handed over to it
//! (`admit_received`) equals what it offered its store (`admit_offered`, any outcome but a full
//! queue), what waits in its backlog and hand-over queue, what it handed over to the owner
//! (`admit_handed`), what it dropped (`admit_dropped`) and the hand-overs that carried no chunk
//! (`admit_malformed`, refused). The deterministic simulation checks this after every step.

use super::*;
use engine::fw::pipeline::HandOn;
use face::link::link_len;
use wire::InterestView;

/// Most finished L2 operations a worker handles per loop iteration (each batch read hands up
/// to B chunks to the engine): bounds the time storage takes from forwarding at once.
pub const POLL_OPS_PER_ITERATION: usize = 4;

/// Chunks waiting for room in L2's write queue, per worker (and, separately, chunks waiting
/// for room in their owner's input ring).
pub const ADMIT_BACKLOG_CHUNKS: usize = 512;

/// Backlogged chunks at which a worker stops taking input until its L2 writes catch up: low
/// enough that one loop iteration (a batch of input, the chunks of the L2 reads it polls, the
/// write-back evictions they cause) never overfills [`ADMIT_BACKLOG_CHUNKS`].
pub const ADMIT_HOLD_CHUNKS: usize = 128;

/// Backlog buffers a worker's L2 allocates, and writes, when it is made: as many as the
/// backlog holds before the worker holds its input back, twice (the rest, up to
/// [`ADMIT_BACKLOG_CHUNKS`] per queue, are allocated when first needed). A buffer made while
/// forwarding would take page faults on fresh memory, which can wait on the process's
/// memory-map lock (`crate::mem`).
pub const ADMIT_PREALLOCATED_BUFFERS: usize = 2 * ADMIT_HOLD_CHUNKS;

/// Bytes a backlog buffer holds beyond the longest packet: its arrival stamp and a name of up
/// to this many bytes less 8 (a longer one grows the buffer).
const BUFFER_EXTRA_BYTES: usize = 512;

/// Most evicted Data a write-back worker's engine logs between two drains.
pub(super) const EVICTION_LOG_MAX_ENTRIES: usize = 4096;

/// Most bytes of evicted Data a write-back worker's engine logs between two drains (further
/// evictions are counted as `cs_evictions_unlogged`, never stored).
pub(super) const EVICTION_LOG_MAX_BYTES: usize = 8 << 20;

/// CS entries evicted per step when a write-back worker empties its RAM CS at stop.
pub(super) const STOP_FLUSH_STEP: usize = 64;

/// How long a stop may take when whoever stops the router gave no budget
/// ([`WorkerLink::stop_budget_ms`]).
pub const DEFAULT_STOP_BUDGET: Duration = Duration::from_secs(10);

/// Share of the stop budget a worker spends storing its RAM CS and queues in L2 (the rest is
/// for closing the file, writing its index, and the other threads).
const STOP_FLUSH_SHARE_PERCENT: u64 = 80;

/// A worker's L2 tier, and which chunks it owns (only the worker that owns a name stores it).
pub struct L2 {
    /// The tier (the engine holds another handle to it).
    pub tier: SharedL2Tier,
    /// Decides ownership of names.
    pub dispatcher: Dispatcher,
    /// Limits for parsing.
    pub limits: Limits,
    /// Chunks whose admission found the write queue full: (name length, 8-byte arrival stamp +
    /// name + Data) in buffers that are reused, at most [`ADMIT_BACKLOG_CHUNKS`].
    pub backlog: VecDeque<(usize, Vec<u8>)>,
    /// Chunks owned by another worker whose input ring was full: (owner, 8-byte arrival stamp +
    /// Data), retried.
    pub handovers: VecDeque<(usize, Vec<u8>)>,
    /// Free backlog buffers.
    pub spare: Vec<Vec<u8>>,
    /// Capacity of a new backlog buffer: the longest packet and [`BUFFER_EXTRA_BYTES`].
    buffer_bytes: usize,
    /// Chunks dropped because the backlog (or the hand-over queue) was full, or stop's
    /// deadline came first.
    pub admit_dropped: u64,
    /// Chunks this worker took for L2 from its own traffic (Data that satisfied an Interest,
    /// or that its RAM CS evicted), its own or another worker's to store.
    pub admit_taken: u64,
    /// Hand-overs other workers pushed into this worker's input ring that it took (chunks it
    /// owns; malformed ones included).
    pub admit_received: u64,
    /// Chunks offered to the store with an outcome (written, present, rejected, too large,
    /// off, malformed name: anything but a full write queue, which keeps them in the backlog).
    pub admit_offered: u64,
    /// Chunks pushed into their owner's input ring.
    pub admit_handed: u64,
    /// Hand-overs received that carried no chunk (no Data, or a name without a segment
    /// number): refused, counted.
    pub admit_malformed: u64,
    /// Loop iterations in which the worker held its input back (back-pressure).
    pub input_held: u64,
    /// Every worker's rings, to hand a chunk to the worker that owns it.
    pub peers: Vec<Arc<WorkerLink>>,
    /// Write-back: chunks go to L2 when the RAM CS evicts them (and at a clean stop), not
    /// when they first satisfy an Interest.
    pub write_back: bool,
    /// Workers that finished writing their RAM CS back at stop (shared by all workers, so
    /// that chunks handed to a peer at stop are stored before it closes its file).
    pub stopped_flushing: Arc<AtomicUsize>,
    /// The L2 directory's lock, shared by every worker's L2: released when the last worker
    /// that uses the directory has closed its file.
    pub dir_lock: Option<Arc<std::fs::File>>,
    /// The storage fault that turned the tier off was logged.
    pub fault_logged: bool,
    /// `[store] io = "blocking"`: after each batch the worker waits until every lookup it
    /// parked on L2 has completed, as a classic content router waits for its storage (the
    /// seed's cases A and C of Pan et al., NB-Cache); otherwise it polls and goes on.
    pub blocking: bool,
    /// `[store] back_pressure`: hold input while the backlog is long (else chunks past the
    /// backlog are dropped, counted in `admit_dropped`).
    pub back_pressure: bool,
    /// CanBePrefix Interests this worker's L2 missed that it handed on to the next worker
    /// whose L2 may hold their name.
    pub prefix_handovers: u64,
    /// Of those misses, the ones whose hand-over found the next worker's input ring (or the
    /// packet pool) full: forwarded upstream from here instead.
    pub prefix_handovers_full: u64,
}

/// A chunk's arrival time (store clock, ms; `None`: unknown, the write time then), as the
/// 8 bytes that lead a queued or handed-over chunk (0: none).
fn stamp(arrived_at_ms: Option<u64>) -> [u8; 8] {
    arrived_at_ms.unwrap_or(0).to_le_bytes()
}

/// The arrival time and the rest of a [`stamp`]ed buffer.
fn unstamp(buf: &[u8]) -> (Option<u64>, &[u8]) {
    let (t, rest) = buf.split_at(8.min(buf.len()));
    let t = u64::from_le_bytes(t.try_into().unwrap_or([0; 8]));
    ((t != 0).then_some(t), rest)
}

/// When a Data the RAM CS evicts arrived, on the store's clock: its freshness in the CS ended
/// (or ends) at `fresh_until_ms` (the engine's clock, now `now_ms`), which is its arrival plus
/// its FreshnessPeriod, so it arrived that period before, less what is left of it. A stale
/// Data may have arrived earlier still: that period before now is as stale, and so is judged
/// the same. `store_now_ms` is the store's clock now.
pub(super) fn arrived_at_ms(
    data: &[u8],
    limits: &Limits,
    fresh_until_ms: u64,
    now_ms: u64,
    store_now_ms: u64,
) -> Option<u64> {
    let period_ms = wire::DataView::decode(data, limits)
        .ok()?
        .freshness_ms()
        .unwrap_or(0);
    let left_ms = fresh_until_ms.saturating_sub(now_ms).min(period_ms);
    Some(store_now_ms.saturating_sub(period_ms - left_ms))
}

/// Bytes after a handed-on Interest's link-layer packet ([`PktKind::HandOn`]): what is left of
/// its downstream's lifetime, ms, little endian.
const HAND_ON_TRAILER_BYTES: usize = 8;

/// A handed-on Interest's packet ([`PktKind::HandOn`]) as its link-layer packet and what is
/// left of its downstream's lifetime (ms; 0, expired, if the packet is too short).
pub(super) fn handed_on(bytes: &[u8]) -> (&[u8], u64) {
    let Some(at) = bytes.len().checked_sub(HAND_ON_TRAILER_BYTES) else {
        return (bytes, 0);
    };
    let (link, left) = bytes.split_at(at);
    (link, u64::from_le_bytes(left.try_into().unwrap_or([0; 8])))
}

/// After this worker's L2 completed the lookup of `name_value` (full-name hash `full_hash`)
/// without data: hands every CanBePrefix Interest waiting for it on to the next worker whose
/// L2 may hold a chunk under the name ([`Dispatcher::next_prefix_holder`]), pushing it into
/// that worker's input ring as if it came from its downstream face ([`PktKind::HandOn`]): an
/// LpPacket with the downstream's PIT token (so that the worker answers the downstream
/// directly), the NextHopFaceId and CongestionMark the Interest came with, followed by what is left of the
/// downstream's lifetime (so that it expires there when it would have here); that worker
/// counts it as handed on, not as a new incoming Interest. The PIT entry here goes with the
/// hand-over (nobody would satisfy it: the Data comes from the other worker's L2, or from the
/// upstream it forwards to, with that worker's token). No next worker, or a full ring or pool
/// (counted in `handovers.1`): the entry stays without the downstreams handed on before, and
/// the caller's `complete_pending` forwards it for the others. Allocates nothing (pool
/// buffers).
#[allow(clippy::too_many_arguments)]
pub(super) fn hand_on_prefix_miss(
    engine: &mut Engine,
    dispatcher: &Dispatcher,
    peers: &[Arc<WorkerLink>],
    pool: &Pool,
    me: usize,
    now_ms: u64,
    (full_hash, name_value): (u64, &[u8]),
    handovers: (&mut u64, &mut u64),
) {
    if !dispatcher.hands_on_prefix_misses() {
        return;
    }
    let limits = *dispatcher.limits();
    let done = engine.hand_on_pending(now_ms, full_hash, name_value, |h: &HandOn<'_>| {
        let Some(next) = InterestView::decode(h.interest, &limits)
            .ok()
            .and_then(|i| dispatcher.next_prefix_holder(me, &i.name()))
        else {
            return false;
        };
        let headers = LpHeaders {
            pit_token: h.pit_token.and_then(PitToken::new),
            next_hop_face_id: h.next_hop.map(u64::from),
            congestion_mark: (h.congestion_mark != 0).then_some(h.congestion_mark),
            ..LpHeaders::default()
        };
        let room = pool.buf_bytes();
        let fits = link_len(&headers, h.interest.len()) + HAND_ON_TRAILER_BYTES <= room;
        let pushed = fits.then(|| pool.get()).flatten().map(|mut buf| {
            let encoded = encode_link(&mut buf, &headers, h.interest, room);
            debug_assert!(encoded);
            buf.extend_from_slice(&h.lifetime_left_ms.to_le_bytes());
            let p = Pkt {
                face: h.face,
                kind: PktKind::HandOn,
                buf,
                full_hash: Some(full_hash),
            };
            peers[next].input.push(p).map_err(|p| pool.put(p.buf))
        });
        if pushed == Some(Ok(())) {
            peers[next].wake();
            return true;
        }
        *handovers.1 += 1;
        false
    });
    *handovers.0 += u64::from(done.interests);
}

impl L2 {
    /// A tier with an empty backlog.
    /// Write-through unless `write_back`; `stopped_flushing` and `dir_lock` are shared by every
    /// worker's L2.
    pub fn new(
        tier: SharedL2Tier,
        dispatcher: Dispatcher,
        limits: Limits,
        peers: Vec<Arc<WorkerLink>>,
        write_back: bool,
        stopped_flushing: Arc<AtomicUsize>,
        dir_lock: Option<Arc<std::fs::File>>,
    ) -> Self {
        // Every L2 miss of a CanBePrefix lookup reaches the worker, which may hand it on.
        if dispatcher.hands_on_prefix_misses() {
            tier.lock().set_prefix_miss_completions(true);
        }
        let buffer_bytes = limits.max_packet_bytes + BUFFER_EXTRA_BYTES;
        let mut spare = Vec::with_capacity(2 * ADMIT_BACKLOG_CHUNKS);
        for _ in 0..ADMIT_PREALLOCATED_BUFFERS {
            let mut buf = Vec::with_capacity(buffer_bytes);
            crate::mem::touch(buf.spare_capacity_mut());
            spare.push(buf);
        }
        // The queues' reserved memory written once (a pushed entry holds no allocation).
        let mut backlog = VecDeque::with_capacity(ADMIT_BACKLOG_CHUNKS);
        let mut handovers = VecDeque::with_capacity(ADMIT_BACKLOG_CHUNKS);
        for _ in 0..ADMIT_BACKLOG_CHUNKS {
            backlog.push_back((0, Vec::new()));
            handovers.push_back((0, Vec::new()));
        }
        backlog.clear();
        handovers.clear();
        L2 {
            tier,
            dispatcher,
            limits,
            backlog,
            handovers,
            spare,
            buffer_bytes,
            admit_dropped: 0,
            admit_taken: 0,
            admit_received: 0,
            admit_offered: 0,
            admit_handed: 0,
            admit_malformed: 0,
            input_held: 0,
            peers,
            write_back,
            stopped_flushing,
            dir_lock,
            fault_logged: false,
            blocking: false,
            back_pressure: true,
            prefix_handovers: 0,
            prefix_handovers_full: 0,
        }
    }

    /// Logs, once, the storage fault that turned the tier off (`fault`, read from the tier
    /// after it handled completions: faults are found there).
    pub(super) fn log_fault(&mut self, fault: Option<store::L2Fault>, worker: usize) {
        if let (Some(f), false) = (fault, self.fault_logged) {
            self.fault_logged = true;
            tracing::warn!(worker, "store: L2 {f}: L2 off, forwarding from RAM only");
        }
    }

    /// Stores a chunk this worker saw in its own L2 if it owns the name, else hands it to the
    /// owner's input ring (or, when that ring or the pool is full, queues it to hand over later).
    /// `arrived_at_ms`: when it arrived (store clock; `None`: now), the write time its slot
    /// records.
    pub(super) fn store(
        &mut self,
        (tier, me, pool): (&mut L2Tier, usize, &Pool),
        face: FaceId,
        data: &[u8],
        name: &NameView<'_>,
        arrived_at_ms: Option<u64>,
    ) {
        self.admit_taken += 1;
        let owner = self.dispatcher.owner(name);
        if owner == me {
            self.admit(tier, name.value(), data, arrived_at_ms);
        } else {
            self.hand_over_or_queue(pool, owner, face, &[&stamp(arrived_at_ms), data]);
        }
        debug_assert!(self.admission_balanced());
    }

    /// Hands a chunk (`parts`: its arrival [`stamp`], the Data) to `owner`, or queues it
    /// behind earlier hand-overs (or when the ring or pool is full), or drops it, counted, when
    /// the queue is full.
    fn hand_over_or_queue(&mut self, pool: &Pool, owner: usize, face: FaceId, parts: &[&[u8]]) {
        // It satisfied an Interest here (a CanBePrefix one, or a copy of a Data without our
        // token), but its name lives on another worker: that worker stores it, so that it
        // finds it after a restart.
        if self.handovers.is_empty() && self.hand_over(pool, owner, face, parts) {
            self.admit_handed += 1;
            return;
        }
        if self.handovers.len() >= ADMIT_BACKLOG_CHUNKS {
            self.admit_dropped += 1;
            return;
        }
        let buf = self.buffer(parts);
        self.handovers.push_back((owner, buf));
    }

    /// Pushes a chunk (`parts`: its arrival [`stamp`], the Data) into `owner`'s input ring;
    /// false if the pool or the ring is full.
    fn hand_over(&self, pool: &Pool, owner: usize, face: FaceId, parts: &[&[u8]]) -> bool {
        let len = parts.iter().map(|p| p.len()).sum::<usize>();
        if len > pool.buf_bytes() {
            return false;
        }
        let Some(mut buf) = pool.get() else {
            return false;
        };
        buf.clear();
        for p in parts {
            buf.extend_from_slice(p);
        }
        let p = Pkt {
            face,
            kind: PktKind::Admit,
            buf,
            full_hash: None,
        };
        match self.peers[owner].input.push(p) {
            Ok(()) => {
                self.peers[owner].wake();
                true
            }
            Err(p) => {
                pool.put(p.buf);
                false
            }
        }
    }

    /// A reused buffer holding `parts` one after the other ([`ADMIT_PREALLOCATED_BUFFERS`]
    /// are made with the tier; a backlog longer than that allocates the others, once each,
    /// large enough for any chunk of a usual name).
    fn buffer(&mut self, parts: &[&[u8]]) -> Vec<u8> {
        let mut buf = match self.spare.pop() {
            Some(b) => b,
            None => Vec::with_capacity(self.buffer_bytes),
        };
        buf.clear();
        for p in parts {
            buf.extend_from_slice(p);
        }
        buf
    }

    /// Offers a chunk; when the write queue is full it waits in the backlog (bounded: the
    /// worker holds its input back long before the backlog fills, see [`L2::holds_input`]).
    /// `arrived_at_ms` (store clock; `None`: now) is the write time its slot records.
    pub(super) fn admit(
        &mut self,
        tier: &mut L2Tier,
        name_value: &[u8],
        data: &[u8],
        arrived_at_ms: Option<u64>,
    ) {
        // Behind a backlog, a new chunk waits its turn (its write would find the queue full).
        if self.backlog.is_empty()
            && tier.admit_arrived(name_value, data, arrived_at_ms) != store::Admit::Busy
        {
            self.admit_offered += 1;
            return;
        }
        if self.backlog.len() >= ADMIT_BACKLOG_CHUNKS {
            self.admit_dropped += 1;
            return;
        }
        let buf = self.buffer(&[&stamp(arrived_at_ms), name_value, data]);
        self.backlog.push_back((name_value.len(), buf));
    }

    /// Stores a chunk another worker handed over ([`PktKind::Admit`]: its arrival [`stamp`],
    /// then the Data); one that carries no chunk is refused, counted in `admit_malformed`.
    pub(super) fn admit_handed_over(&mut self, tier: &mut L2Tier, bytes: &[u8]) {
        self.admit_received += 1;
        let (at, data) = unstamp(bytes);
        match chunk_of(data, &self.limits) {
            Some((data, name)) => self.admit(tier, name.value(), data, at),
            None => self.admit_malformed += 1,
        }
        debug_assert!(self.admission_balanced());
    }

    /// The worker's admission identity: every chunk it took or received is offered to its
    /// store, waiting in a queue, handed over, dropped or (a malformed hand-over) refused,
    /// each exactly once.
    pub fn admission_balanced(&self) -> bool {
        let accounted = self.admit_offered
            + self.queued() as u64
            + self.admit_handed
            + self.admit_dropped
            + self.admit_malformed;
        self.admit_taken + self.admit_received == accounted
    }

    /// Whether the worker should take no new input now: its backlog is past
    /// [`ADMIT_HOLD_CHUNKS`], so the disk is behind (only this worker's own writes count, which
    /// always progress: workers never wait for one another). Never with `back_pressure` off.
    pub fn holds_input(&self) -> bool {
        self.back_pressure && self.backlog.len() >= ADMIT_HOLD_CHUNKS
    }

    /// Retries backlogged chunks while the write queue has room, and queued hand-overs while
    /// their owners' rings have room.
    pub(super) fn retry(&mut self, pool: &Pool) {
        while let Some((owner, buf)) = self.handovers.pop_front() {
            if !self.hand_over(pool, owner, 0, &[&buf]) {
                self.handovers.push_front((owner, buf));
                break;
            }
            self.admit_handed += 1;
            self.spare.push(buf);
        }
        if self.backlog.is_empty() {
            return;
        }
        let mut tier = self.tier.lock();
        while let Some((n, buf)) = self.backlog.pop_front() {
            let (at, chunk) = unstamp(&buf);
            if tier.admit_arrived(&chunk[..n], &chunk[n..], at) == store::Admit::Busy {
                self.backlog.push_front((n, buf));
                break;
            }
            self.admit_offered += 1;
            self.spare.push(buf);
        }
        drop(tier);
        debug_assert!(self.admission_balanced());
    }

    /// The admission queues and counters now.
    pub fn admission(&self) -> AdmissionQueues {
        AdmissionQueues {
            backlog: self.backlog.len(),
            handovers: self.handovers.len(),
            dropped: self.admit_dropped,
            taken: self.admit_taken,
            received: self.admit_received,
            offered: self.admit_offered,
            handed: self.admit_handed,
            malformed: self.admit_malformed,
        }
    }

    /// Chunks waiting (backlog and hand-overs).
    pub fn queued(&self) -> usize {
        self.backlog.len() + self.handovers.len()
    }

    /// Drops (and counts) everything still queued: stop's deadline came, or the store can
    /// take nothing more.
    pub(super) fn drop_queued(&mut self) {
        self.admit_dropped += self.queued() as u64;
        self.spare.extend(self.backlog.drain(..).map(|(_, b)| b));
        self.spare.extend(self.handovers.drain(..).map(|(_, b)| b));
    }
}

/// A worker's admission queues now (read by the deterministic simulation's checker).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AdmissionQueues {
    /// Chunks in the backlog ([`L2::backlog`]).
    pub backlog: usize,
    /// Chunks waiting to be handed over ([`L2::handovers`]).
    pub handovers: usize,
    /// [`L2::admit_dropped`].
    pub dropped: u64,
    /// [`L2::admit_taken`].
    pub taken: u64,
    /// [`L2::admit_received`].
    pub received: u64,
    /// [`L2::admit_offered`].
    pub offered: u64,
    /// [`L2::admit_handed`].
    pub handed: u64,
    /// [`L2::admit_malformed`].
    pub malformed: u64,
}

impl AdmissionQueues {
    /// [`L2::admission_balanced`], on these figures.
    pub fn balanced(&self) -> bool {
        let accounted = self.offered
            + (self.backlog + self.handovers) as u64
            + self.handed
            + self.dropped
            + self.malformed;
        self.taken + self.received == accounted
    }
}

impl Worker {
    /// The admission queues of the worker's L2 (`None` without one). A worker whose L2 was
    /// off at open has none: what other workers hand over to it is received and dropped.
    pub fn admission_queues(&self) -> Option<AdmissionQueues> {
        match &self.tier {
            Some(t) => Some(t.admission()),
            None => self.l2_off_at_open.then_some(AdmissionQueues {
                received: self.admit_dropped_off,
                dropped: self.admit_dropped_off,
                ..AdmissionQueues::default()
            }),
        }
    }

    /// Whether the worker takes no new input now ([`L2::holds_input`]).
    pub(super) fn holds_input(&self) -> bool {
        self.tier.as_ref().is_some_and(L2::holds_input)
    }

    /// [`Self::holds_input`], counting the iterations held back.
    pub(super) fn hold_input(&mut self) -> bool {
        match &mut self.tier {
            Some(t) if t.holds_input() => {
                t.input_held += 1;
                true
            }
            _ => false,
        }
    }

    /// At a clean stop, within most of the stop budget: everything the RAM CS holds is offered
    /// to L2 (write-back: it was not stored yet; write-through: chunks already stored answer
    /// at once, the rest are stored now), chunks owned by a peer are handed over, and the
    /// admission queues are emptied (the worker may block on its own writes here: it no
    /// longer forwards). Then the worker waits for every peer to get this far, storing what
    /// they hand over, so that nothing admitted before the stop is lost. What the deadline
    /// leaves is counted as dropped.
    pub(super) fn flush_at_stop(&mut self) {
        let budget_ms = self.emit.link.stop_budget_ms.load(Ordering::Relaxed);
        let until = Instant::now()
            + Duration::from_millis(budget_ms.saturating_mul(STOP_FLUSH_SHARE_PERCENT) / 100);
        let Some(t) = &mut self.tier else {
            return;
        };
        let workers = t.peers.len();
        let flushed = t.stopped_flushing.clone();
        let handle = t.tier.clone();
        if !t.write_back {
            // From now on evictions are offered to L2, as with write-back.
            let bytes = STOP_FLUSH_STEP * t.limits.max_packet_bytes;
            t.write_back = true;
            self.engine
                .table_mut()
                .log_evictions(STOP_FLUSH_STEP, bytes.min(EVICTION_LOG_MAX_BYTES));
        }
        let policy = self.engine.table().config().cs_policy;
        while Instant::now() < until {
            let len = self.engine.table().cs_len();
            if len == 0 {
                break;
            }
            // Shrinking the CS evicts (into the log) the entries the policy drops first.
            self.engine
                .table_mut()
                .set_cs_capacity(len.saturating_sub(STOP_FLUSH_STEP), policy);
            self.write_back();
            self.drain_backlog_blocking(until);
        }
        // Every worker counts itself once its hand-overs are in their owners' rings; a worker
        // that saw every peer counted has, after one more look at its ring, all they handed
        // over.
        let mut counted = false;
        loop {
            let all = flushed.load(Ordering::SeqCst) >= workers;
            while let Some(p) = self.emit.link.input.pop() {
                if let (PktKind::Admit, Some(t)) = (p.kind, &mut self.tier) {
                    t.admit_handed_over(&mut handle.lock(), p.bytes());
                }
                self.emit.pool.put(p.buf);
            }
            self.drain_backlog_blocking(until);
            let Some(t) = &mut self.tier else {
                return;
            };
            if !counted && t.handovers.is_empty() {
                counted = true;
                flushed.fetch_add(1, Ordering::SeqCst);
            }
            if counted && all {
                break;
            }
            if Instant::now() >= until {
                t.drop_queued();
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Retries the admission queues, waiting for L2 writes to finish, until the backlog is
    /// empty (hand-overs wait for their owners), nothing in flight could make room, or `until`
    /// passes: what is left then is dropped and counted.
    fn drain_backlog_blocking(&mut self, until: Instant) {
        let Some(t) = &mut self.tier else {
            return;
        };
        loop {
            t.retry(&self.emit.pool);
            if t.backlog.is_empty() {
                return;
            }
            if Instant::now() >= until {
                t.drop_queued();
                return;
            }
            let mut tier = t.tier.lock();
            if !tier.l2_mut().wait_one(|_| {}) {
                // Busy with nothing in flight: no extent can be freed.
                drop(tier);
                t.drop_queued();
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::WorkerMapping;
    use engine::hash::HashKey;
    use wire::{Data, Name};

    /// A worker's L2 on a store whose write queue holds one write, the only worker.
    fn l2(dir: &std::path::Path, back_pressure: bool) -> L2 {
        let mut l2 = l2_among(dir, vec![Arc::new(WorkerLink::new(64))]);
        l2.back_pressure = back_pressure;
        l2
    }

    /// A worker's L2 on a store whose write queue holds one write, among `peers` (every
    /// worker's rings).
    fn l2_among(dir: &std::path::Path, peers: Vec<Arc<WorkerLink>>) -> L2 {
        let cfg = store::L2Config {
            slot_bytes: 1024,
            batch: 4,
            queue_depth: 1,
            ..store::L2Config::new(dir.join("l2"), 4096)
        };
        let tier = L2Tier::new(store::L2File::open(&cfg).unwrap(), 256);
        let limits = Limits::default();
        let d = Dispatcher::new(
            HashKey::fixed(1, 2),
            peers.len(),
            WorkerMapping::Content,
            limits,
        );
        L2::new(
            SharedL2Tier::new(tier),
            d,
            limits,
            peers,
            false,
            Arc::new(AtomicUsize::new(0)),
            None,
        )
    }

    /// The backlog's buffers are made (and mapped) with the tier, each large enough for the
    /// longest packet: a backlog up to [`ADMIT_PREALLOCATED_BUFFERS`] chunks long, of
    /// the longest chunks, allocates nothing and reuses the same buffers.
    #[test]
    fn backlog_buffers_are_made_with_the_tier_and_fit_the_longest_chunk() {
        let dir = scratch("prealloc");
        let mut l2 = l2(&dir, false);
        assert_eq!(l2.spare.len(), ADMIT_PREALLOCATED_BUFFERS);
        let made: std::collections::HashSet<usize> =
            l2.spare.iter().map(|b| b.as_ptr() as usize).collect();
        let longest = Limits::default().max_packet_bytes;
        let name = Name::from_uri("/bp/long/seg=0").unwrap();
        // The longest Data the limits let in.
        let overhead = Data::new(name.clone(), vec![9; longest]).to_wire().len() - longest;
        let data = (0..16)
            .map(|less| Data::new(name.clone(), vec![9; longest - overhead + less]).to_wire())
            .take_while(|d| d.len() <= longest)
            .last()
            .unwrap();
        assert!(data.len() > longest - 8, "{}", data.len());
        let n = ADMIT_PREALLOCATED_BUFFERS;
        let bufs: Vec<Vec<u8>> = (0..n)
            .map(|_| l2.buffer(&[&stamp(None), name_value(&data), &data]))
            .collect();
        assert!(l2.spare.is_empty());
        for b in &bufs {
            assert!(
                made.contains(&(b.as_ptr() as usize)),
                "a buffer grew or is new"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The name's value in Data packet `data`.
    fn name_value(data: &[u8]) -> &[u8] {
        chunk_of(data, &Limits::default()).unwrap().1.value()
    }

    /// The chunk `/bp/seg=<s>` as a Data packet.
    fn chunk(s: usize) -> Vec<u8> {
        chunk_named(&format!("/bp/seg={s}"))
    }

    /// The chunk `uri` as a Data packet.
    fn chunk_named(uri: &str) -> Vec<u8> {
        Data::new(Name::from_uri(uri).unwrap(), vec![7; 100]).to_wire()
    }

    /// Worker `me` takes the chunk `data` for L2 (its own to store, or another worker's).
    fn take(l2: &mut L2, me: usize, pool: &Pool, data: &[u8]) {
        let (data, name) = chunk_of(data, &l2.limits).unwrap();
        let handle = l2.tier.clone();
        l2.store((&mut handle.lock(), me, pool), 0, data, &name, None);
    }

    /// Offers `n` new chunks without letting a write complete: returns the loop iterations in
    /// which the worker held its input back.
    fn offer(l2: &mut L2, n: usize) -> usize {
        let pool = Pool::new(4, 2048);
        let mut held = 0;
        for s in 0..n {
            take(l2, 0, &pool, &chunk(s));
            held += usize::from(l2.holds_input());
        }
        held
    }

    /// Chunks `/bp/c<c>/seg=0` whose owner among `workers` is `owner` (a content's chunks
    /// all have the same owner), bounded.
    fn owned_by(owner: usize, workers: usize) -> impl Iterator<Item = Vec<u8>> {
        let limits = Limits::default();
        let d = Dispatcher::new(
            HashKey::fixed(1, 2),
            workers,
            WorkerMapping::Content,
            limits,
        );
        (0..100_000)
            .map(|c| chunk_named(&format!("/bp/c{c}/seg=0")))
            .filter(move |data| d.owner(&chunk_of(data, &limits).unwrap().1) == owner)
    }

    /// A scratch directory of its own for a test.
    fn scratch(test: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("cascade-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_chunk_taken_is_offered_to_the_store_or_waits_in_the_backlog_counted() {
        let dir = scratch("admit-taken");
        let mut l2 = l2(&dir, true);
        offer(&mut l2, 3);
        // The first write takes the queue; the other two wait.
        let q = l2.admission();
        assert_eq!((q.taken, q.offered, q.backlog), (3, 1, 2), "{q:?}");
        assert!(q.balanced() && l2.admission_balanced(), "{q:?}");
        // The disk catches up: both are offered.
        let pool = Pool::new(4, 2048);
        for _ in 0..8 {
            l2.tier.lock().l2_mut().wait_one(|_| {});
            l2.retry(&pool);
        }
        let q = l2.admission();
        assert_eq!((q.taken, q.offered, q.backlog), (3, 3, 0), "{q:?}");
        assert!(q.balanced(), "{q:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_chunk_another_worker_owns_is_handed_over_and_received_by_it_counted() {
        let peers = vec![Arc::new(WorkerLink::new(8)), Arc::new(WorkerLink::new(8))];
        let pool = Pool::new(8, 2048);
        let (d0, d1) = (scratch("admit-handed-0"), scratch("admit-handed-1"));
        let mut w0 = l2_among(&d0, peers.clone());
        let mut w1 = l2_among(&d1, peers.clone());
        let data = owned_by(1, 2).next().unwrap();
        take(&mut w0, 0, &pool, &data);
        let q0 = w0.admission();
        assert_eq!((q0.taken, q0.handed, q0.offered), (1, 1, 0), "{q0:?}");
        assert!(q0.balanced(), "{q0:?}");
        // The owner takes it from its input ring and offers it to its store.
        let p = peers[1].input.pop().unwrap();
        assert_eq!(p.kind, PktKind::Admit);
        let handle = w1.tier.clone();
        w1.admit_handed_over(&mut handle.lock(), p.bytes());
        let q1 = w1.admission();
        assert_eq!((q1.taken, q1.received, q1.offered), (0, 1, 1), "{q1:?}");
        assert!(q1.balanced(), "{q1:?}");
        assert_eq!(w1.tier.lock().l2().counters().admit_offers, 1);
        for d in [d0, d1] {
            let _ = std::fs::remove_dir_all(&d);
        }
    }

    #[test]
    fn hand_overs_past_a_full_ring_wait_then_past_the_bound_are_dropped_counted() {
        let dir = scratch("admit-dropped");
        let ring = 4;
        let peers = vec![
            Arc::new(WorkerLink::new(ring)),
            Arc::new(WorkerLink::new(ring)),
        ];
        let pool = Pool::new(2 * ring, 2048);
        let mut w0 = l2_among(&dir, peers.clone());
        let total = ring + ADMIT_BACKLOG_CHUNKS + 10;
        for data in owned_by(1, 2).take(total) {
            take(&mut w0, 0, &pool, &data);
        }
        let q = w0.admission();
        let counts = (q.taken, q.handed, q.handovers, q.dropped);
        assert_eq!(
            counts,
            (total as u64, ring as u64, ADMIT_BACKLOG_CHUNKS, 10),
            "{q:?}"
        );
        assert!(q.balanced(), "{q:?}");
        // The owner empties its ring: the queue moves on, still balanced.
        while let Some(p) = peers[1].input.pop() {
            pool.put(p.buf);
        }
        w0.retry(&pool);
        let q = w0.admission();
        assert_eq!(
            (q.handed, q.handovers),
            (2 * ring as u64, ADMIT_BACKLOG_CHUNKS - ring)
        );
        assert!(q.balanced(), "{q:?}");
        // Stop's deadline: what is queued is dropped, counted.
        w0.drop_queued();
        let q = w0.admission();
        assert_eq!(
            (q.handovers, q.dropped),
            (0, (10 + ADMIT_BACKLOG_CHUNKS - ring) as u64)
        );
        assert!(q.balanced(), "{q:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_malformed_hand_over_is_refused_counted_not_lost() {
        let dir = scratch("admit-malformed");
        let mut l2 = l2(&dir, true);
        let handle = l2.tier.clone();
        // No Data; a Data whose name has no segment number; too short for its stamp.
        let not_a_chunk = Data::new(Name::from_uri("/bp/meta").unwrap(), vec![1]).to_wire();
        let stamped = [&[0u8; 8][..], &not_a_chunk].concat();
        for bytes in [&b"\0\0\0\0\0\0\0\0junk"[..], &stamped, &[5, 6]] {
            l2.admit_handed_over(&mut handle.lock(), bytes);
        }
        let q = l2.admission();
        assert_eq!((q.received, q.malformed, q.offered), (3, 3, 0), "{q:?}");
        assert!(q.balanced(), "{q:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn back_pressure_holds_input_while_the_backlog_is_long_and_can_be_turned_off() {
        let dir = std::env::temp_dir().join(format!("cascade-bp-{}", std::process::id()));
        for d in ["on", "off"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let total = ADMIT_BACKLOG_CHUNKS + 100;
        let mut on = l2(&dir.join("on"), true);
        // One write in flight, the rest in the backlog: held from the 128th backlogged chunk.
        let held = offer(&mut on, ADMIT_HOLD_CHUNKS + 1);
        assert_eq!((on.backlog.len(), held), (ADMIT_HOLD_CHUNKS, 1));
        assert_eq!(on.admit_dropped, 0);
        assert!(on.admission_balanced());
        // Off: never held, and what overflows the backlog is dropped, counted.
        let mut off = l2(&dir.join("off"), false);
        assert_eq!(offer(&mut off, total), 0);
        assert_eq!(off.backlog.len(), ADMIT_BACKLOG_CHUNKS);
        assert_eq!(off.admit_dropped, (total - 1 - ADMIT_BACKLOG_CHUNKS) as u64);
        assert!(off.admission_balanced(), "{:?}", off.admission());
        // The disk catches up: the backlog drains into the store.
        let pool = Pool::new(4, 2048);
        for _ in 0..total {
            off.retry(&pool);
            if off.backlog.is_empty() {
                break;
            }
            off.tier.lock().l2_mut().wait_one(|_| {});
        }
        assert!(off.backlog.is_empty());
        off.tier.lock().l2_mut().flush();
        let stored = off.tier.lock().l2().stored_chunks();
        assert_eq!(stored, (ADMIT_BACKLOG_CHUNKS + 1) as u64);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
