//! A worker's L2 tier: the chunks it owns, admission with a bounded backlog, write-back.

use super::*;

/// Most finished L2 operations a worker handles per loop iteration (each batch read hands up
/// to B chunks to the engine): bounds the time storage takes from forwarding at once.
pub const POLL_OPS_PER_ITERATION: usize = 4;

/// Chunks waiting for room in L2's write queue, per worker.
pub const ADMIT_BACKLOG_CHUNKS: usize = 512;

/// Most evicted Data a write-back worker's engine logs between two drains.
pub(super) const EVICTION_LOG_MAX_ENTRIES: usize = 4096;

/// Most bytes of evicted Data a write-back worker's engine logs between two drains (further
/// evictions are counted as `cs_evictions_unlogged`, never stored).
pub(super) const EVICTION_LOG_MAX_BYTES: usize = 8 << 20;

/// CS entries evicted per step when a write-back worker empties its RAM CS at stop.
pub(super) const STOP_FLUSH_STEP: usize = 64;

/// How long a write-back worker waits at stop for its peers' hand-overs.
pub const STOP_FLUSH_WAIT: Duration = Duration::from_secs(2);

/// A worker's L2 tier, and which chunks it owns (only the worker that owns a name stores it).
pub struct L2 {
    /// The tier (the engine holds another handle to it).
    pub tier: SharedL2Tier,
    /// Decides ownership of names.
    pub dispatcher: Dispatcher,
    /// Limits for parsing.
    pub limits: Limits,
    /// Chunks whose admission found the write queue full: (name length, name + Data) in
    /// buffers that are reused, at most [`ADMIT_BACKLOG_CHUNKS`].
    pub backlog: VecDeque<(usize, Vec<u8>)>,
    /// Free backlog buffers.
    pub spare: Vec<Vec<u8>>,
    /// Chunks dropped because the backlog was full.
    pub admit_dropped: u64,
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
        L2 {
            tier,
            dispatcher,
            limits,
            backlog: VecDeque::with_capacity(ADMIT_BACKLOG_CHUNKS),
            spare: Vec::new(),
            admit_dropped: 0,
            peers,
            write_back,
            stopped_flushing,
            dir_lock,
            fault_logged: false,
            blocking: false,
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
    /// owner's input ring (dropped and counted when the ring or the pool is full).
    pub(super) fn store(
        &mut self,
        tier: &mut L2Tier,
        me: usize,
        pool: &Pool,
        face: FaceId,
        data: &[u8],
        name: &NameView<'_>,
    ) {
        let owner = self.dispatcher.owner(name);
        if owner == me {
            self.admit(tier, name.value(), data);
            return;
        }
        // It satisfied an Interest here (a CanBePrefix one, or a copy of a Data without our
        // token), but its name lives on another worker: that worker stores it, so that it
        // finds it after a restart.
        let Some(mut p) = pool.pkt_from(face, data) else {
            self.admit_dropped += 1;
            return;
        };
        p.kind = PktKind::Admit;
        match self.peers[owner].input.push(p) {
            Ok(()) => self.peers[owner].wake(),
            Err(p) => {
                self.admit_dropped += 1;
                pool.put(p.buf);
            }
        }
    }

    /// Offers a chunk; when the write queue is full it waits in the backlog (bounded).
    pub(super) fn admit(&mut self, tier: &mut L2Tier, name_value: &[u8], data: &[u8]) {
        if tier.admit(name_value, data) != store::Admit::Busy {
            return;
        }
        if self.backlog.len() >= ADMIT_BACKLOG_CHUNKS {
            self.admit_dropped += 1;
            return;
        }
        // Warm-up allocates the backlog's buffers; after that they are reused.
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(name_value);
        buf.extend_from_slice(data);
        self.backlog.push_back((name_value.len(), buf));
    }

    /// Retries backlogged chunks while the write queue has room.
    pub(super) fn retry(&mut self) {
        if self.backlog.is_empty() {
            return;
        }
        let mut tier = self.tier.lock();
        while let Some((n, buf)) = self.backlog.pop_front() {
            if tier.admit(&buf[..n], &buf[n..]) == store::Admit::Busy {
                self.backlog.push_front((n, buf));
                break;
            }
            self.spare.push(buf);
        }
    }
}
