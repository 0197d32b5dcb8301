//! A forwarding worker: one engine, its input ring, its output ring, its control channel.
//!
//! The loop takes up to [`MAX_BATCH`] packets from the input ring, runs them through the engine
//! and turns each action into a link-layer packet in a pool buffer (NDNLPv2 headers only when a
//! field is needed: the downstream's PIT token, our own PIT token on Interests sent upstream, a
//! Nack, a CongestionMark, IncomingFaceId for local faces that asked for it). Outputs go to the
//! worker's output ring, which the I/O thread drains into per-face queues. Nothing here locks or
//! allocates per packet; control messages (faces, strategies, CS settings, snapshots) are
//! applied between batches.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use engine::fw::pipeline::{
    Action, Counters, Engine, FaceInfo, Output, PacketRef, SendKind, MAX_BATCH,
};
use engine::fw::strategy::Strategy;
use engine::table::pit_cs::{CsPolicy, FaceId};
use face::link::encode_link;
use face::lp_frag::{LpHeaders, PitToken};
use store::{L2Tier, SharedL2Tier};
use wire::lp::Nack;
use wire::tlv::Reader;
use wire::{tt, Limits, Name, NameView};

use crate::dispatch::{worker_token, Dispatcher};
use crate::pool::{Pkt, PktKind, Pool};

mod batch_time;
mod l2;
mod stalls;

use batch_time::BatchTimes;
pub use batch_time::BATCH_TIME_BOUNDS;

pub use l2::{
    AdmissionQueues, ADMIT_BACKLOG_CHUNKS, ADMIT_HOLD_CHUNKS, DEFAULT_STOP_BUDGET, L2,
    POLL_OPS_PER_ITERATION,
};
use l2::{EVICTION_LOG_MAX_BYTES, EVICTION_LOG_MAX_ENTRIES};
use stalls::{context_switches, Stalls};
pub use stalls::{StallSummary, STALL_BUCKETS};

/// Control messages applied per call between batches.
const CONTROL_PER_CALL: usize = 64;

/// How often an idle worker polls its L2 while operations are in flight.
pub const L2_POLL_INTERVAL: Duration = Duration::from_micros(200);

/// Face id NFD uses for Data served from the content store (IncomingFaceId).
pub const CONTENT_STORE_FACE_ID: u64 = 254;

/// A control message for a worker, applied between batches.
#[derive(Debug)]
pub enum Control {
    /// A face appeared or changed.
    Face {
        /// Face id.
        id: FaceId,
        /// Its properties for the engine.
        info: FaceInfo,
        /// Attach IncomingFaceId to packets sent to it.
        local_fields: bool,
    },
    /// Set (`Some`) or unset (`None`) the strategy of a prefix, with its parameters.
    Strategy {
        /// Prefix.
        prefix: Name,
        /// Strategy instance.
        strategy: Option<Strategy>,
    },
    /// The content store's admission and serving switches.
    CsFlags {
        /// Data are admitted.
        admit: bool,
        /// Interests are served.
        serve: bool,
    },
    /// CS capacity and policy for this worker.
    CsConfig {
        /// Entries.
        capacity: usize,
        /// Policy.
        policy: CsPolicy,
    },
    /// Erase CS entries under a prefix; replies with the number erased.
    CsErase {
        /// Name prefix (its components' TLV bytes).
        prefix: Vec<u8>,
        /// Most entries to erase.
        limit: usize,
        /// Where the count goes.
        reply: Sender<usize>,
    },
    /// Reply with a snapshot of the worker's state.
    Snapshot(Sender<Snapshot>),
}

/// A worker's counters and table sizes.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Engine counters.
    pub counters: Counters,
    /// PIT entries.
    pub pit_len: usize,
    /// CS entries.
    pub cs_len: usize,
    /// CS capacity.
    pub cs_capacity: usize,
    /// CS policy is LRU.
    pub cs_lru: bool,
    /// Outputs dropped because the output ring was full.
    pub out_ring_full: u64,
    /// Outputs dropped because no buffer was free or the packet did not fit.
    pub out_no_buffer: u64,
    /// Batches processed.
    pub batches: u64,
    /// CS hits.
    pub cs_hits: u64,
    /// CS misses.
    pub cs_misses: u64,
    /// The L2 tier, if there is one.
    pub l2: Option<L2Snapshot>,
    /// Upstream faces under a Nack-α now (NB-CC).
    pub nbcc_unavailable_faces: u64,
    /// Live strategy measurements entries (ASF's namespaces).
    pub measurements: usize,
    /// Their name hashes ([`engine::fw::pipeline::Engine::measured_prefixes`]).
    pub measured_prefixes: Vec<u64>,
    /// Latency histograms: the batch time, and with an L2 its loop and storage times.
    pub latency: Vec<mgmt::LatencyHistogram>,
}

/// A worker's L2 tier state.
#[derive(Debug, Clone, Copy, Default)]
pub struct L2Snapshot {
    /// A storage fault turned this worker's L2 off, when it was opened (every other figure is
    /// then 0) or since ([`store::L2File::fault`]): the worker forwards from RAM only.
    pub off: bool,
    /// Chunks not admitted because the write backlog was full.
    pub admit_dropped: u64,
    /// The worker's admission queues and counters ([`L2::admission_balanced`]).
    pub admit: AdmissionQueues,
    /// Loop iterations in which the worker held its input back while L2 writes were in flight.
    pub input_held: u64,
    /// Chunks stored.
    pub stored_chunks: u64,
    /// Capacity in chunks.
    pub capacity_chunks: u64,
    /// Lookup counters.
    pub tier: store::TierCounters,
    /// The file's counters (reads, writes, bytes, checksum failures, ...).
    pub file: store::L2Counters,
    /// Operations in flight now.
    pub in_flight: u64,
    /// Operations in flight at most.
    pub queue_depth: u64,
    /// Chunks per batch.
    pub batch: u64,
    /// Prefetched chunks (read with a batch, nobody waiting) the RAM CS accepted and that are
    /// tracked for usefulness.
    pub prefetch_tracked: u64,
    /// Of those, how many the RAM CS served afterwards.
    pub prefetch_used: u64,
    /// Evicted Data the engine could not log for write-back (its log was full).
    pub evictions_unlogged: u64,
    /// Loop iteration and storage times.
    pub stalls: StallSummary,
    /// CanBePrefix Interests its L2 missed, handed on to the next worker whose L2 may hold
    /// their name.
    pub prefix_handovers: u64,
    /// Hand-overs refused by a full input ring or pool (forwarded from this worker instead).
    pub prefix_handovers_full: u64,
}

/// What a worker shares with the I/O thread and management.
#[derive(Debug)]
pub struct WorkerLink {
    /// Packets to forward (pushed by the I/O thread).
    pub input: ArrayQueue<Pkt>,
    /// Packets to send (drained by the I/O thread).
    pub output: ArrayQueue<Pkt>,
    /// The worker is parked (or about to): unpark it after pushing.
    pub parked: AtomicBool,
    /// The worker's thread, to unpark it.
    pub thread: OnceLock<Thread>,
    /// Set when the worker has no thread of its own and runs inside the I/O thread's loop
    /// (`[workers] threads = "one"`): waking the worker wakes that thread.
    pub host: OnceLock<Arc<dyn Wake>>,
    /// Packets the I/O thread could not push because the input ring was full.
    pub input_full: AtomicU64,
    /// Milliseconds a stop may take, set by whoever asks for the stop (the worker flushes its
    /// RAM CS and admission queues to L2 within most of it).
    pub stop_budget_ms: AtomicU64,
}

impl WorkerLink {
    /// Rings of `capacity` packets.
    pub fn new(capacity: usize) -> Self {
        WorkerLink {
            input: ArrayQueue::new(capacity),
            output: ArrayQueue::new(capacity),
            parked: AtomicBool::new(false),
            thread: OnceLock::new(),
            host: OnceLock::new(),
            input_full: AtomicU64::new(0),
            stop_budget_ms: AtomicU64::new(DEFAULT_STOP_BUDGET.as_millis() as u64),
        }
    }

    /// Wakes the worker whether or not it is parked (control messages that want an answer now,
    /// and stopping).
    pub fn unpark(&self) {
        if let Some(h) = self.host.get() {
            h.wake_now();
            return;
        }
        self.parked.store(false, Ordering::SeqCst);
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    /// Wakes the worker if it is parked (call after pushing input or control).
    #[inline]
    pub fn wake(&self) {
        if let Some(h) = self.host.get() {
            h.wake();
            return;
        }
        if self.parked.swap(false, Ordering::SeqCst) {
            if let Some(t) = self.thread.get() {
                t.unpark();
            }
        }
    }
}

/// Asks every worker for a [`Snapshot`] and collects the answers that come within `timeout`.
pub fn snapshots(
    control: &[Sender<Control>],
    links: &[Arc<WorkerLink>],
    timeout: Duration,
) -> Vec<Snapshot> {
    let rxs: Vec<Receiver<Snapshot>> = control
        .iter()
        .zip(links)
        .map(|(c, l)| {
            let (tx, rx) = std::sync::mpsc::channel();
            let _ = c.send(Control::Snapshot(tx));
            l.unpark();
            rx
        })
        .collect();
    rxs.iter()
        .filter_map(|rx| rx.recv_timeout(timeout).ok())
        .collect()
}

/// Something that wakes the I/O thread.
pub trait Wake: Send + Sync + std::fmt::Debug {
    /// Wake it (cheap when it is not asleep).
    fn wake(&self);

    /// Wake it even if it is not asleep yet (control plane, stopping).
    fn wake_now(&self) {
        self.wake();
    }
}

/// Times `ready` is asked between two reads of the clock while spinning.
const SPIN_CHECKS_PER_CLOCK_READ: u32 = 16;

/// Spins (`std::hint::spin_loop`) until `ready` answers true or `budget` has passed, without
/// a system call of its own: what an idle thread does before it parks (or sleeps in
/// `epoll_wait`), so that work coming within `budget` finds it awake and needs no wake-up.
/// Returns whether `ready` answered true; a zero budget returns false without asking.
/// `ready` should answer true for a stop request too, so that a stop is honoured at once.
pub fn spin_until(budget: Duration, mut ready: impl FnMut() -> bool) -> bool {
    if budget.is_zero() {
        return false;
    }
    let t0 = Instant::now();
    loop {
        for _ in 0..SPIN_CHECKS_PER_CLOCK_READ {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if t0.elapsed() >= budget {
            return false;
        }
    }
}

/// Prefetched chunks tracked for usefulness, per worker.
pub const PREFETCH_TRACKED: usize = 4096;

/// Which prefetched chunks (read from L2 with their batch, nobody waiting) the RAM CS served
/// afterwards: a direct-mapped table of name fingerprints, the last [`PREFETCH_TRACKED`] at
/// most (a chunk pushed out by a newer one before it was asked for counts as unused).
struct PrefetchUse {
    slots: Box<[u64]>,
    tracked: u64,
    used: u64,
}

impl PrefetchUse {
    fn new() -> Self {
        PrefetchUse {
            slots: vec![0; PREFETCH_TRACKED].into_boxed_slice(),
            tracked: 0,
            used: 0,
        }
    }

    /// FNV-1a over the name TLV value, never 0.
    fn key(name_value: &[u8]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in name_value {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        h | 1
    }

    fn note(&mut self, name_value: &[u8]) {
        let k = Self::key(name_value);
        self.slots[(k >> 1) as usize % PREFETCH_TRACKED] = k;
        self.tracked += 1;
    }

    /// A Data packet left the RAM CS: counts it if it was a tracked prefetched chunk.
    fn served(&mut self, data: &[u8]) {
        let mut r = Reader::new(data);
        let Some(name) = r.read().ok().and_then(|d| d.reader().read().ok()) else {
            return;
        };
        let k = Self::key(name.value);
        let slot = &mut self.slots[(k >> 1) as usize % PREFETCH_TRACKED];
        if *slot == k {
            *slot = 0;
            self.used += 1;
        }
    }
}

/// Turns engine actions into link-layer packets on the worker's output ring.
struct Emitter {
    index: usize,
    pool: Arc<Pool>,
    link: Arc<WorkerLink>,
    /// Per face slot (the engine's [`engine::table::pit_cs::PitCs::face_slot`]): the face
    /// declared there last, and whether it wants LocalFields.
    local_fields: Vec<(FaceId, bool)>,
    /// The face slots' mask.
    face_mask: usize,
    out_ring_full: u64,
    out_no_buffer: u64,
    /// With an L2 tier: which prefetched chunks were served.
    prefetch: Option<PrefetchUse>,
}

impl Emitter {
    /// Encodes and queues every action of `out`; returns how many were queued and, as a bit
    /// set, which inputs went out as Data (they satisfied an Interest).
    fn emit(&mut self, out: &Output<'_>, inputs: &[(FaceId, &[u8])]) -> (usize, u64) {
        let room = self.pool.buf_bytes();
        let token = worker_token(self.index);
        let mut sent = 0usize;
        let mut data_inputs = 0u64;
        for a in out.actions {
            if a.kind == SendKind::Idle {
                sent += usize::from(self.emit_idle(a));
                continue;
            }
            let packet = out.bytes(a, inputs);
            let mut h = LpHeaders {
                pit_token: out.pit_token(a).and_then(PitToken::new),
                congestion_mark: (a.congestion_mark != 0).then_some(a.congestion_mark),
                nbcc: a.nbcc,
                ..LpHeaders::default()
            };
            match a.kind {
                SendKind::Interest => h.pit_token = PitToken::new(&token),
                SendKind::Nack(r) => h.nack = Some(Nack { reason: Some(r) }),
                SendKind::Idle => {}
                SendKind::Data => match &a.packet {
                    PacketRef::Input { index, .. } => {
                        data_inputs |= 1u64 << (*index as u64 & 63);
                    }
                    PacketRef::Out(_) => {
                        if let Some(p) = self.prefetch.as_mut().filter(|p| p.tracked > p.used) {
                            p.served(packet);
                        }
                    }
                },
            }
            let wants_face_id = self.local_fields.get(a.face as usize & self.face_mask);
            if wants_face_id == Some(&(a.face, true)) && !matches!(a.kind, SendKind::Nack(_)) {
                // The face it came in on, even for a copy (an Interest with its HopLimit
                // decremented, or forwarded after a slower-tier miss); the content store's id
                // only for a Data the CS served (NFD's onContentStoreHit).
                h.incoming_face_id = Some(a.incoming.map_or(CONTENT_STORE_FACE_ID, u64::from));
            }
            let Some(mut buf) = self.pool.get() else {
                self.out_no_buffer += 1;
                continue;
            };
            if !encode_link(&mut buf, &h, packet, room) {
                self.out_no_buffer += 1;
                self.pool.put(buf);
                continue;
            }
            let kind = match a.kind {
                SendKind::Interest => PktKind::Interest,
                SendKind::Data => PktKind::Data,
                SendKind::Nack(_) => PktKind::Nack,
                SendKind::Idle => PktKind::Other,
            };
            sent += usize::from(self.queue(a.face, kind, buf));
        }
        (sent, data_inputs)
    }

    /// Queues an IDLE LpPacket carrying the NB-CC signal of `a`; true if queued.
    fn emit_idle(&mut self, a: &Action) -> bool {
        let Some(sig) = a.nbcc else {
            return false;
        };
        let Some(mut buf) = self.pool.get() else {
            self.out_no_buffer += 1;
            return false;
        };
        sig.encode_idle(&mut buf);
        self.queue(a.face, PktKind::Other, buf)
    }

    /// Puts an encoded packet on the output ring; true if it went.
    fn queue(&mut self, face: FaceId, kind: PktKind, buf: Vec<u8>) -> bool {
        let p = Pkt {
            face,
            kind,
            buf,
            full_hash: None,
        };
        match self.link.output.push(p) {
            Ok(()) => true,
            Err(p) => {
                self.out_ring_full += 1;
                self.pool.put(p.buf);
                false
            }
        }
    }
}

/// The Data inside a received link-layer packet, with its name's components, if its last name
/// component is a segment number (a chunk, which L2 stores; other Data stay in L1).
fn chunk_of<'a>(bytes: &'a [u8], limits: &Limits) -> Option<(&'a [u8], NameView<'a>)> {
    let data = if bytes.first() == Some(&(tt::LP_PACKET as u8)) {
        wire::LpPacketView::decode(bytes, limits).ok()?.fragment()?
    } else {
        bytes
    };
    let mut r = Reader::new(data);
    let outer = r.read().ok()?;
    if outer.typ != tt::DATA {
        return None;
    }
    let name = NameView::from_element(outer.reader().read().ok()?, limits).ok()?;
    let last = name.last()?;
    (u32::from(last.typ) == tt::SEGMENT).then_some((data, name))
}

/// Everything a worker runs with.
pub struct Worker {
    engine: Engine,
    emit: Emitter,
    control: Receiver<Control>,
    io: Arc<dyn Wake>,
    stop: Arc<AtomicBool>,
    start: Instant,
    tick: Duration,
    /// How long the worker spins for input before it parks (zero: it parks at once).
    spin: Duration,
    batch: Vec<Pkt>,
    /// The Interests other workers handed on, taken out of a batch ([`PktKind::HandOn`]).
    handed_on: Vec<Pkt>,
    batches: u64,
    tier: Option<L2>,
    /// A storage fault turned this worker's L2 off when it was opened (there is no `tier`).
    l2_off_at_open: bool,
    /// Chunks other workers handed over for an L2 this worker does not have (off at open):
    /// received and dropped, reported as such in its [`L2Snapshot`].
    admit_dropped_off: u64,
    stalls: Option<Box<Stalls>>,
    batch_times: BatchTimes,
    /// A simulated clock in milliseconds ([`Worker::with_clock`]); the wall clock if `None`.
    clock: Option<Arc<AtomicU64>>,
}

impl Worker {
    /// A worker around `engine`, with an optional L2 tier (already attached to the engine);
    /// `l2_off`: the configuration has an L2 that a storage fault kept from opening. When idle
    /// it spins for up to `spin` before it parks for up to `tick`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: usize,
        engine: Engine,
        link: Arc<WorkerLink>,
        pool: Arc<Pool>,
        control: Receiver<Control>,
        io: Arc<dyn Wake>,
        stop: Arc<AtomicBool>,
        start: Instant,
        tick: Duration,
        spin: Duration,
        tier: Option<L2>,
        l2_off: bool,
    ) -> Self {
        let mut engine = engine;
        if let Some(t) = tier.as_ref().filter(|t| t.write_back) {
            // Between two drains the CS evicts at most one entry per Data inserted: a batch of
            // input, or the chunks of every L2 read that completed in one poll.
            let (qd, b) = {
                let g = t.tier.lock();
                (
                    g.l2().config().queue_depth,
                    g.l2().superblock().batch as usize,
                )
            };
            let entries = (qd * b + MAX_BATCH).min(EVICTION_LOG_MAX_ENTRIES);
            let bytes = (entries * t.limits.max_packet_bytes).min(EVICTION_LOG_MAX_BYTES);
            engine.table_mut().log_evictions(entries, bytes);
        }
        let face_mask = engine.table().face_slots() - 1;
        Worker {
            engine,
            emit: Emitter {
                index,
                pool,
                link,
                local_fields: Vec::new(),
                face_mask,
                out_ring_full: 0,
                out_no_buffer: 0,
                prefetch: tier.as_ref().map(|_| PrefetchUse::new()),
            },
            control,
            io,
            stop,
            start,
            tick,
            spin,
            batch: Vec::with_capacity(MAX_BATCH),
            handed_on: Vec::with_capacity(MAX_BATCH),
            batches: 0,
            stalls: tier.as_ref().map(|_| Box::new(Stalls::new())),
            batch_times: BatchTimes::default(),
            tier,
            l2_off_at_open: l2_off,
            admit_dropped_off: 0,
            clock: None,
        }
    }

    /// Reads the time from `clock` (milliseconds since the start) instead of the wall clock:
    /// a deterministic simulation ([`crate::sim`]) moves it.
    pub fn with_clock(mut self, clock: Arc<AtomicU64>) -> Self {
        self.clock = Some(clock);
        self
    }

    fn now_ms(&self) -> u64 {
        match &self.clock {
            Some(c) => c.load(Ordering::Relaxed),
            None => self.start.elapsed().as_millis() as u64,
        }
    }

    /// The worker's index (the PIT token it puts on Interests, its share of the names).
    pub fn index(&self) -> usize {
        self.emit.index
    }

    /// Maps now the worker's memory that its loop would otherwise touch for the first time
    /// while forwarding (a page fault each, which can wait on the process's memory-map lock):
    /// the engine's reserved memory (its CS's and its output buffer's: `Engine::prefault`),
    /// and its L2's backlog buffers when they were made. The stall histograms
    /// are mapped when made. Call it before the loop runs; returns the bytes touched.
    pub fn prefault(&mut self) -> usize {
        self.engine.prefault()
    }

    /// Runs until the stop flag is set, then closes the L2 tier (writing its index).
    pub fn run(mut self) {
        let link = self.emit.link.clone();
        let _ = link.thread.set(std::thread::current());
        while !self.stop.load(Ordering::Relaxed) {
            if self.step() {
                continue;
            }
            let nap = self.idle();
            let held = self.holds_input();
            if !held && self.spin_for_work() {
                continue;
            }
            link.parked.store(true, Ordering::SeqCst);
            if (held || link.input.is_empty()) && !self.stop.load(Ordering::SeqCst) {
                std::thread::park_timeout(nap);
            }
            link.parked.store(false, Ordering::SeqCst);
        }
        self.finish();
    }

    /// One iteration of the worker's loop: control messages, one batch of input, finished L2
    /// operations (timed for the stall figures when there is an L2). True if it had work.
    /// The worker's own thread calls it in a loop; with `[workers] threads = "one"` the I/O
    /// thread calls it after each receive.
    pub fn step(&mut self) -> bool {
        let t0 = self.stalls.as_mut().map(|st| {
            st.start_iteration();
            Instant::now()
        });
        self.drain_control();
        let busy = self.run_batch();
        let completed = self.poll_tier();
        if let (Some(t0), Some(st), Some(t)) = (t0, &mut self.stalls, &self.tier) {
            let lookups = t.tier.take_engine_ns();
            st.lookups_max_ns = st.lookups_max_ns.max(lookups);
            let storage = std::mem::take(&mut st.current_ns) + lookups;
            if busy || completed > 0 {
                let loop_ns = t0.elapsed().as_nanos() as u64;
                // Only long iterations pay for a second look at the switch counters.
                let (blocked, preempted, on_cpu) = if storage > 100_000 {
                    let now = context_switches();
                    (
                        now.0 > st.switches.0,
                        now.1 > st.switches.1,
                        (now.2 - st.switches.2 > 1000, now.3 > st.switches.3),
                    )
                } else {
                    (false, false, (false, false))
                };
                st.record(storage, loop_ns, preempted, blocked, on_cpu);
            }
        }
        busy || completed > 0
    }

    /// What the worker does when a [`Self::step`] found no work: the engine's clock advances
    /// (PIT expiry) and the answer is how long the thread may sleep: the tick, or 200 µs while
    /// L2 operations are in flight or chunks wait for room (storage completions wake nobody,
    /// so they are polled).
    pub fn idle(&mut self) -> Duration {
        let now = self.now_ms();
        if self.tier.as_ref().is_some_and(|t| t.blocking) {
            self.engine.set_waiting_before(self.emit.link.input.len());
        }
        // The clock advances, and NB-CC's signals due on IDLE packets go out.
        let out = self.engine.tick(now);
        if self.emit.emit(&out, &[]).0 > 0 {
            self.io.wake();
        }
        let in_flight = self
            .tier
            .as_ref()
            .is_some_and(|t| t.queued() > 0 || t.tier.lock().l2().in_flight() > 0);
        if in_flight {
            L2_POLL_INTERVAL
        } else {
            self.tick
        }
    }

    /// Applies the control messages waiting (a bounded number); true if there were any.
    pub fn apply_control(&mut self) -> bool {
        self.drain_control() > 0
    }

    /// At a stop: flushes what L2 needs at a clean stop and closes the tier (writing its
    /// index). [`Self::run`] ends with it; the I/O thread calls it for an inline worker.
    pub fn finish(mut self) {
        self.flush_at_stop();
        if let Some(mut t) = self.tier.take() {
            drop(self.engine); // releases the engine's handle to the tier
            let fault = t.tier.lock().l2().fault();
            t.log_fault(fault, self.emit.index);
            match t.tier.into_inner() {
                Ok(tier) => {
                    if let Err(e) = tier.close() {
                        tracing::warn!("closing L2: {e}");
                    }
                }
                Err(_) => tracing::warn!("L2 tier still shared; index not written"),
            }
        }
    }

    /// Spins for up to the spin budget until input, a control message (applied here) or a
    /// stop request comes; true if one came. The worker is not marked parked meanwhile, so
    /// the I/O thread pushes input without unparking it.
    fn spin_for_work(&mut self) -> bool {
        let (input, stop, control) = (&self.emit.link.input, &self.stop, &self.control);
        let mut message = None;
        let ready = spin_until(self.spin, || {
            if !input.is_empty() || stop.load(Ordering::Relaxed) {
                return true;
            }
            message = control.try_recv().ok();
            message.is_some()
        });
        if let Some(c) = message {
            self.apply(c);
        }
        ready
    }

    /// Hands finished L2 reads to the engine: waiting Interests are answered (or forwarded on a
    /// failed read), the rest of the batch goes into the RAM CS.
    fn poll_tier(&mut self) -> usize {
        let t0 = Instant::now();
        let n = self.poll_tier_inner();
        if let Some(st) = &mut self.stalls {
            let ns = t0.elapsed().as_nanos() as u64;
            st.current_ns += ns;
            st.poll_max_ns = st.poll_max_ns.max(ns);
        }
        n
    }

    fn poll_tier_inner(&mut self) -> usize {
        let now = self.now_ms();
        let Some(t) = &mut self.tier else {
            return 0;
        };
        t.retry(&self.emit.pool);
        let engine = &mut self.engine;
        let emit = &mut self.emit;
        let mut sent = 0;
        let mut tier = t.tier.lock();
        // The store's clock (the wall clock, or the simulation's): a chunk's freshness counts
        // from its write to L2.
        let store_now_ms = tier.l2().now_ms();
        let mut on_chunk = |c: store::TierCompletion<'_>| match c.full_hash {
            Some(h) => {
                if c.data.is_none() {
                    let counts = (&mut t.prefix_handovers, &mut t.prefix_handovers_full);
                    let (d, peers, pool) = (&t.dispatcher, &t.peers, &emit.pool);
                    let at = (h, c.name_value);
                    l2::hand_on_prefix_miss(engine, d, peers, pool, emit.index, now, at, counts);
                }
                let age = c.age_ms(store_now_ms);
                let out = engine.complete_pending_aged(now, h, c.name_value, c.data, age);
                sent += emit.emit(&out, &[]).0;
            }
            None => {
                if let Some(d) = c.data {
                    if engine.insert_cs_aged(now, d, c.age_ms(store_now_ms)) {
                        if let Some(p) = emit.prefetch.as_mut() {
                            p.note(c.name_value);
                        }
                    }
                }
            }
        };
        let n = if t.blocking {
            tier.complete_waiting(&mut on_chunk)
        } else {
            tier.poll_max(POLL_OPS_PER_ITERATION, &mut on_chunk)
        };
        // A fault is found only while completions are handled.
        let fault = if n > 0 { tier.l2().fault() } else { None };
        drop(tier);
        t.log_fault(fault, emit.index);
        if n > 0 {
            self.write_back();
        }
        if sent > 0 {
            self.io.wake();
        }
        n
    }

    /// Applies control messages: a bounded number per call; returns how many.
    fn drain_control(&mut self) -> usize {
        for n in 0..CONTROL_PER_CALL {
            match self.control.try_recv() {
                Ok(c) => self.apply(c),
                Err(_) => return n,
            }
        }
        CONTROL_PER_CALL
    }

    fn apply(&mut self, c: Control) {
        match c {
            Control::Face {
                id,
                info,
                local_fields,
            } => {
                self.engine.set_face(id, info);
                let i = self.engine.table().face_slot(id);
                let lf = &mut self.emit.local_fields;
                if lf.len() <= i {
                    lf.resize(i + 1, (engine::table::pit_cs::NONE, false));
                }
                lf[i] = (id, local_fields);
            }
            Control::Strategy { prefix, strategy } => self.engine.set_strategy(&prefix, strategy),
            Control::CsFlags { admit, serve } => self.engine.set_cs_flags(admit, serve),
            Control::CsConfig { capacity, policy } => {
                self.engine.table_mut().set_cs_capacity(capacity, policy);
            }
            Control::CsErase {
                prefix,
                limit,
                reply,
            } => {
                let n = self.engine.table_mut().erase_cs(&prefix, limit);
                let _ = reply.send(n);
            }
            Control::Snapshot(reply) => {
                let t = self.engine.table();
                let off_at_open = self.l2_off_at_open.then(|| L2Snapshot {
                    off: true,
                    admit_dropped: self.admit_dropped_off,
                    admit: self.admission_queues().unwrap_or_default(),
                    ..L2Snapshot::default()
                });
                let l2 = self.tier.as_ref().map(|x| {
                    let g = x.tier.lock();
                    let (prefetch_tracked, prefetch_used) = self
                        .emit
                        .prefetch
                        .as_ref()
                        .map_or((0, 0), |p| (p.tracked, p.used));
                    L2Snapshot {
                        off: g.l2().fault().is_some(),
                        admit_dropped: x.admit_dropped,
                        admit: x.admission(),
                        prefix_handovers: x.prefix_handovers,
                        prefix_handovers_full: x.prefix_handovers_full,
                        input_held: x.input_held,
                        stored_chunks: g.l2().stored_chunks(),
                        capacity_chunks: u64::from(g.l2().config().extents)
                            * u64::from(g.l2().config().batch),
                        tier: *g.counters(),
                        file: *g.l2().counters(),
                        in_flight: g.l2().in_flight() as u64,
                        queue_depth: g.l2().config().queue_depth as u64,
                        batch: u64::from(g.l2().config().batch),
                        prefetch_tracked,
                        prefetch_used,
                        evictions_unlogged: t.counters.cs_evictions_unlogged,
                        stalls: self
                            .stalls
                            .as_ref()
                            .map_or_else(StallSummary::default, |st| st.summary()),
                    }
                });
                let _ = reply.send(Snapshot {
                    counters: self.engine.counters().clone(),
                    pit_len: t.pit_len(),
                    cs_len: t.cs_len(),
                    cs_capacity: t.config().cs_capacity,
                    cs_lru: t.config().cs_policy == CsPolicy::Lru,
                    out_ring_full: self.emit.out_ring_full,
                    out_no_buffer: self.emit.out_no_buffer,
                    batches: self.batches,
                    cs_hits: t.counters.cs_hits,
                    cs_misses: t.counters.cs_misses,
                    l2: l2.or(off_at_open),
                    nbcc_unavailable_faces: self.engine.unavailable_faces(self.now_ms()),
                    measurements: self.engine.measurements_len(self.now_ms()),
                    measured_prefixes: {
                        let mut v = Vec::new();
                        self.engine.measured_prefixes(self.now_ms(), &mut v);
                        v
                    },
                    latency: std::iter::once(self.batch_times.histogram())
                        .chain(self.stalls.iter().flat_map(|st| st.histograms()))
                        .collect(),
                });
            }
        }
    }

    /// Write-back: offers the chunks the RAM CS evicted since the last call to L2 (call after
    /// every engine call that can insert into the CS, before the engine's log fills).
    fn write_back(&mut self) {
        if !self.tier.as_ref().is_some_and(|t| t.write_back) {
            return;
        }
        let now_ms = self.now_ms();
        let Some(t) = &mut self.tier else {
            return;
        };
        let me = self.emit.index;
        let pool = &self.emit.pool;
        let handle = t.tier.clone();
        let mut tier = handle.lock();
        let store_now_ms = tier.l2().now_ms();
        // Each slot records the chunk's arrival, so that a read-back ages from it.
        self.engine
            .table_mut()
            .drain_evicted_fresh(|bytes, until_ms| {
                if let Some((data, name)) = chunk_of(bytes, &t.limits) {
                    let at = l2::arrived_at_ms(data, &t.limits, until_ms, now_ms, store_now_ms);
                    t.store((&mut tier, me, pool), 0, data, &name, at);
                }
            });
    }

    /// Runs the Interests other workers handed on ([`Worker::handed_on`]) through the engine,
    /// each with what is left of its downstream's lifetime.
    fn run_handed_on(&mut self) {
        let handed = std::mem::take(&mut self.handed_on);
        let now = self.now_ms();
        let mut inputs: [(FaceId, &[u8]); MAX_BATCH] = [(0, &[]); MAX_BATCH];
        let mut hashes: [Option<u64>; MAX_BATCH] = [None; MAX_BATCH];
        let mut left_ms = [0u64; MAX_BATCH];
        for (((slot, hash), left), p) in inputs
            .iter_mut()
            .zip(hashes.iter_mut())
            .zip(left_ms.iter_mut())
            .zip(&handed)
        {
            let (link, ms) = l2::handed_on(p.bytes());
            *slot = (p.face, link);
            *hash = p.full_hash;
            *left = ms;
        }
        let n = handed.len().min(MAX_BATCH);
        let out = self
            .engine
            .process_handed_on(now, &inputs[..n], &hashes[..n], &left_ms[..n]);
        let (sent, _) = self.emit.emit(&out, &inputs[..n]);
        let mut handed = handed;
        for p in handed.drain(..) {
            self.emit.pool.put(p.buf);
        }
        self.handed_on = handed;
        if sent > 0 {
            self.io.wake();
        }
    }

    /// Processes one batch; false if the input ring was empty.
    fn run_batch(&mut self) -> bool {
        if self.hold_input() {
            return false;
        }
        let mut batch = std::mem::take(&mut self.batch);
        while batch.len() < MAX_BATCH {
            match self.emit.link.input.pop() {
                Some(p) => batch.push(p),
                None => break,
            }
        }
        if batch.is_empty() {
            self.batch = batch;
            return false;
        }
        // A face is announced on the control channel before its first packet is pushed: having
        // popped the packet, the announcement is visible now.
        self.drain_control();
        // Chunks other workers handed over for this worker's L2 are stored, not forwarded.
        if batch.iter().any(|p| p.kind == PktKind::Admit) {
            let t0 = Instant::now();
            let mut i = 0;
            while i < batch.len() {
                if batch[i].kind != PktKind::Admit {
                    i += 1;
                    continue;
                }
                let p = batch.remove(i);
                match &mut self.tier {
                    Some(t) => {
                        let handle = t.tier.clone();
                        t.admit_handed_over(&mut handle.lock(), p.bytes());
                    }
                    None => self.admit_dropped_off += 1,
                }
                self.emit.pool.put(p.buf);
            }
            if let Some(st) = &mut self.stalls {
                st.current_ns += t0.elapsed().as_nanos() as u64;
            }
        }
        // Interests other workers handed on go through the engine apart (with what is left of
        // their lifetimes); the rest of the batch keeps its order.
        if batch.iter().any(|p| p.kind == PktKind::HandOn) {
            let mut i = 0;
            while i < batch.len() {
                if batch[i].kind == PktKind::HandOn {
                    self.handed_on.push(batch.remove(i));
                } else {
                    i += 1;
                }
            }
            self.run_handed_on();
        }
        if batch.is_empty() {
            self.batch = batch;
            return true;
        }
        self.batches += 1;
        let t_batch = Instant::now();
        let now = self.now_ms();
        let mut inputs: [(FaceId, &[u8]); MAX_BATCH] = [(0, &[]); MAX_BATCH];
        let mut hashes: [Option<u64>; MAX_BATCH] = [None; MAX_BATCH];
        for ((slot, hash), p) in inputs.iter_mut().zip(hashes.iter_mut()).zip(&batch) {
            *slot = (p.face, p.bytes());
            *hash = p.full_hash;
        }
        let inputs = &inputs[..batch.len()];
        if self.tier.as_ref().is_some_and(|t| t.blocking) {
            let backlog = self.emit.link.input.len();
            self.engine.set_waiting_before(backlog);
        }
        let out = self
            .engine
            .process_hashed(now, inputs, &hashes[..batch.len()]);
        let (sent, data_inputs) = self.emit.emit(&out, inputs);
        // Write-through to L2: chunks that satisfied an Interest.
        let t_admit = self.tier.as_ref().map(|_| Instant::now());
        if let (Some(t), true) = (&mut self.tier, data_inputs != 0) {
            if !t.write_back {
                let me = self.emit.index;
                let handle = t.tier.clone();
                let mut tier = handle.lock();
                for (i, &(face, bytes)) in inputs.iter().enumerate() {
                    if data_inputs & (1u64 << i) == 0 {
                        continue;
                    }
                    if let Some((data, name)) = chunk_of(bytes, &t.limits) {
                        t.store((&mut tier, me, &self.emit.pool), face, data, &name, None);
                    }
                }
            }
        }
        self.write_back();
        if let (Some(t0), Some(st)) = (t_admit, &mut self.stalls) {
            st.current_ns += t0.elapsed().as_nanos() as u64;
        }
        for p in batch.drain(..) {
            self.emit.pool.put(p.buf);
        }
        self.batch = batch;
        if sent > 0 {
            self.io.wake();
        }
        let batch_ns = t_batch.elapsed().as_nanos() as u64;
        self.batch_times.record(batch_ns);
        true
    }
}
