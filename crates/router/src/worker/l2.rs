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
    /// Chunks dropped because the backlog (or the hand-over queue) was full, or stop's
    /// deadline came first.
    pub admit_dropped: u64,
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
/// directly) and the NextHopFaceId the Interest came with, followed by what is left of the
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
        L2 {
            tier,
            dispatcher,
            limits,
            backlog: VecDeque::with_capacity(ADMIT_BACKLOG_CHUNKS),
            handovers: VecDeque::new(),
            spare: Vec::new(),
            admit_dropped: 0,
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
        let owner = self.dispatcher.owner(name);
        if owner == me {
            self.admit(tier, name.value(), data, arrived_at_ms);
            return;
        }
        let stamp = stamp(arrived_at_ms);
        // It satisfied an Interest here (a CanBePrefix one, or a copy of a Data without our
        // token), but its name lives on another worker: that worker stores it, so that it
        // finds it after a restart.
        if !self.handovers.is_empty() || !self.hand_over(pool, owner, face, &[&stamp, data]) {
            if self.handovers.len() >= ADMIT_BACKLOG_CHUNKS {
                self.admit_dropped += 1;
                return;
            }
            let buf = self.buffer(&[&stamp, data]);
            self.handovers.push_back((owner, buf));
        }
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

    /// A reused buffer holding `parts` one after the other (warm-up allocates the buffers;
    /// after that they are reused).
    fn buffer(&mut self, parts: &[&[u8]]) -> Vec<u8> {
        let mut buf = self.spare.pop().unwrap_or_default();
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
    /// then the Data).
    pub(super) fn admit_handed_over(&mut self, tier: &mut L2Tier, bytes: &[u8]) {
        let (at, data) = unstamp(bytes);
        if let Some((data, name)) = chunk_of(data, &self.limits) {
            self.admit(tier, name.value(), data, at);
        }
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
            self.spare.push(buf);
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
        let bufs = self.backlog.drain(..).map(|(_, b)| b);
        let bufs: Vec<Vec<u8>> = bufs
            .chain(self.handovers.drain(..).map(|(_, b)| b))
            .collect();
        self.spare.extend(bufs);
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
}

impl Worker {
    /// The admission queues of the worker's L2 (`None` without one).
    pub fn admission_queues(&self) -> Option<AdmissionQueues> {
        let t = self.tier.as_ref()?;
        Some(AdmissionQueues {
            backlog: t.backlog.len(),
            handovers: t.handovers.len(),
            dropped: t.admit_dropped,
        })
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

    /// A worker's L2 on a store whose write queue holds one write.
    fn l2(dir: &std::path::Path, back_pressure: bool) -> L2 {
        let cfg = store::L2Config {
            slot_bytes: 1024,
            batch: 4,
            queue_depth: 1,
            ..store::L2Config::new(dir.join("l2"), 4096)
        };
        let tier = L2Tier::new(store::L2File::open(&cfg).unwrap(), 256);
        let limits = Limits::default();
        let d = Dispatcher::new(HashKey::fixed(1, 2), 1, WorkerMapping::Content, limits);
        let peers = vec![Arc::new(WorkerLink::new(64))];
        let mut l2 = L2::new(
            SharedL2Tier::new(tier),
            d,
            limits,
            peers,
            false,
            Arc::new(AtomicUsize::new(0)),
            None,
        );
        l2.back_pressure = back_pressure;
        l2
    }

    /// Offers `n` new chunks without letting a write complete: returns the loop iterations in
    /// which the worker held its input back.
    fn offer(l2: &mut L2, n: usize) -> usize {
        let handle = l2.tier.clone();
        let mut held = 0;
        for s in 0..n {
            let name = Name::from_uri(&format!("/bp/seg={s}")).unwrap();
            let data = Data::new(name.clone(), vec![7; 100]).to_wire();
            l2.admit(&mut handle.lock(), &name.to_wire()[2..], &data, None);
            held += usize::from(l2.holds_input());
        }
        held
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
        // Off: never held, and what overflows the backlog is dropped, counted.
        let mut off = l2(&dir.join("off"), false);
        assert_eq!(offer(&mut off, total), 0);
        assert_eq!(off.backlog.len(), ADMIT_BACKLOG_CHUNKS);
        assert_eq!(off.admit_dropped, (total - 1 - ADMIT_BACKLOG_CHUNKS) as u64);
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
