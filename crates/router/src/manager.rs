//! The management thread: [`mgmt::Manager`] driving this router through its channels.
//!
//! The manager itself (commands, the RIB, datasets) is the `mgmt` crate's. This module gives it
//! the router as a [`Forwarder`] ([`Channels`]: requests to the I/O loops, which drive the face
//! tables, each to the loop that holds the face, and control messages to the workers), reads
//! the start-up configuration into it, and runs its thread: management Interests and face
//! events (created, destroyed) come from the I/O loops, and expired routes and waiting
//! notification Interests go every turn. A reload of the configuration comes the same way, so
//! that it never races a management command.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::fw::strategy::{Strategy, StrategyKind};
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId};
use face::link::encode_link;
use face::lp_frag::{LpHeaders, PitToken};
use face::{CreateError, FaceDesc, FaceParams, FaceUpdate};
use mgmt::{CreateFaceError, CsTierInfo, Forwarder, UpdateFaceError, WorkerStats};
use wire::nfd::FacePersistency;
use wire::{Limits, Name};

use crate::config::parse_face_uri;
use crate::io::MgmtInput;
use crate::mgmt_queue::MgmtReceiver;
use crate::reload::{self, Applied, Statics};
use crate::shard::IoHandles;
use crate::worker::{Control, L2Snapshot, WorkerLink};

/// How long a control-plane request to another thread may take.
const REPLY_TIMEOUT: Duration = Duration::from_secs(5);

/// How long `faces/create` waits for a TCP connection.
const TCP_CONNECT_TIMEOUT: Duration = Duration::from_secs(4);

/// What the management thread needs from the router.
pub struct ManagerParts {
    /// The shared FIB.
    pub fib: Arc<Fib>,
    /// Worker links (to wake them).
    pub workers: Vec<Arc<WorkerLink>>,
    /// Worker control channels.
    pub worker_ctl: Vec<Sender<Control>>,
    /// The I/O loops.
    pub io: Arc<IoHandles>,
    /// Management input.
    pub input: MgmtReceiver,
    /// Stop flag.
    pub stop: Arc<AtomicBool>,
    /// Router time origin.
    pub start: Instant,
    /// Total CS capacity.
    pub cs_capacity: usize,
    /// CS policy.
    pub cs_policy: CsPolicy,
    /// Packet limits.
    pub limits: Limits,
    /// The RIB's options.
    pub rib: mgmt::RibOptions,
    /// `face_system.general.enable_congestion_marking`.
    pub congestion_marking: bool,
}

/// The management thread's state: the manager and its input.
pub struct Manager {
    manager: mgmt::Manager<Channels>,
    input: MgmtReceiver,
    stop: Arc<AtomicBool>,
    /// The static faces, routes and strategies applied last.
    applied: Applied,
}

impl Manager {
    /// A manager of the router these parts belong to, with NFD's default strategy choices.
    pub fn new(p: ManagerParts) -> Self {
        let channels = Channels {
            workers: p.workers,
            worker_ctl: p.worker_ctl,
            io: p.io,
            congestion_marking: AtomicBool::new(p.congestion_marking),
        };
        let parts = mgmt::ManagerParts {
            fib: p.fib,
            start: p.start,
            cs_capacity: p.cs_capacity,
            cs_policy: p.cs_policy,
            limits: p.limits,
            rib: p.rib,
        };
        Manager {
            manager: mgmt::Manager::new(channels, parts),
            input: p.input,
            stop: p.stop,
            applied: Applied::default(),
        }
    }

    /// Runs until the stop flag is set.
    pub fn run(mut self) {
        let (m, applied) = (&mut self.manager, &mut self.applied);
        while !self.stop.load(Ordering::Relaxed) {
            match self.input.recv_timeout(Duration::from_millis(200)) {
                Ok(MgmtInput::Interest { face, local, bytes }) => {
                    m.on_interest(face, local, &bytes)
                }
                Ok(MgmtInput::FaceEvent(kind, face)) => m.face_event(kind, &face),
                Ok(MgmtInput::Status(reply)) => {
                    let _ = reply.send(Box::new(m.status_view()));
                }
                Ok(MgmtInput::Reload(statics, reply)) => {
                    // The static faces this reload makes take the new marking default.
                    let marking = &m.forwarder().congestion_marking;
                    let before = marking.swap(statics.limits.congestion_marking, Ordering::Relaxed);
                    let done = reload::apply(m, applied, &statics);
                    if done.is_ok() {
                        m.forwarder().io.set_runtime_limits(statics.limits);
                    } else {
                        m.forwarder()
                            .congestion_marking
                            .store(before, Ordering::Relaxed);
                    }
                    let _ = reply.send(done);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if let Err(e) = reload::refresh_anchors(m, applied, std::time::Instant::now()) {
                tracing::warn!("localhop trust anchors not refreshed: {e}");
            }
            m.tick();
        }
    }

    /// Start-up configuration: the authorizations, static faces, their routes (origin 255,
    /// "static", as NFD) and strategy choices. Runs before the manager thread starts; the I/O
    /// thread must be running. A reload ([`MgmtInput::Reload`]) applies a new file's
    /// authorizations, faces, routes and strategies the same way.
    pub fn configure(&mut self, cfg: &crate::Config) -> Result<(), String> {
        if let Some(p) = &cfg.rib.auto_prefix_propagate {
            let (rv, skipped) = p.load(cfg.rib.readvertise_retry_ms)?;
            for why in skipped {
                tracing::warn!("prefix propagation: an identity is left out: {why}");
            }
            self.manager.set_propagation(rv);
        }
        reload::apply(&mut self.manager, &mut self.applied, &Statics::of(cfg)).map(drop)
    }
}

/// The router as management sees it: requests to the I/O loops (faces, sending) and control
/// messages to the workers (strategies, CS settings, snapshots).
pub struct Channels {
    workers: Vec<Arc<WorkerLink>>,
    worker_ctl: Vec<Sender<Control>>,
    io: Arc<IoHandles>,
    /// `face_system.general.enable_congestion_marking`, as a reload leaves it.
    congestion_marking: AtomicBool,
}

impl WorkerControls for Channels {
    fn worker_count(&self) -> usize {
        self.worker_ctl.len()
    }

    fn control(&self, w: usize, c: Control) {
        let _ = self.worker_ctl[w].send(c);
        self.workers[w].wake();
    }

    fn answer<T>(&self, _w: usize, rx: Receiver<T>) -> Option<T> {
        rx.recv_timeout(REPLY_TIMEOUT).ok()
    }
}

/// A router's workers as management reaches them: a control message to one, and its answer.
/// The [`Forwarder`] methods that only talk to workers are written once over it
/// ([`to_workers`], [`cs_config_to_workers`], [`erase_in_turn`]), for [`Channels`] and for
/// the simulation's forwarder ([`crate::sim`]).
pub(crate) trait WorkerControls {
    /// Number of workers.
    fn worker_count(&self) -> usize;

    /// Hands worker `w` a control message (and wakes it).
    fn control(&self, w: usize, c: Control);

    /// Worker `w`'s answer on `rx` to the message just handed to it (`None`: no answer).
    fn answer<T>(&self, w: usize, rx: Receiver<T>) -> Option<T>;
}

/// The same control message to every worker.
pub(crate) fn to_workers(wc: &impl WorkerControls, mut make: impl FnMut() -> Control) {
    for w in 0..wc.worker_count() {
        wc.control(w, make());
    }
}

/// A strategy choice to every worker.
pub(crate) fn strategy_to_workers(
    wc: &impl WorkerControls,
    prefix: &Name,
    strategy: Option<Strategy>,
) {
    to_workers(wc, || Control::Strategy {
        prefix: prefix.clone(),
        strategy,
    });
}

/// The CS capacity and policy: each worker gets an equal share of the capacity.
pub(crate) fn cs_config_to_workers(wc: &impl WorkerControls, capacity: usize, policy: CsPolicy) {
    let per = capacity.div_ceil(wc.worker_count().max(1));
    to_workers(wc, || Control::CsConfig {
        capacity: per,
        policy,
    });
}

/// Erases at most `limit` CS entries under `prefix`, asking the workers in turn, each for
/// what the ones before it left.
pub(crate) fn erase_in_turn(wc: &impl WorkerControls, prefix: &Name, limit: usize) -> usize {
    let mut bytes = Vec::new();
    for comp in &prefix.components {
        comp.encode(&mut bytes);
    }
    let mut erased = 0usize;
    for w in 0..wc.worker_count() {
        let (tx, rx) = channel();
        let c = Control::CsErase {
            prefix: bytes.clone(),
            limit: limit - erased,
            reply: tx,
        };
        wc.control(w, c);
        erased += wc.answer(w, rx).unwrap_or(0);
        if erased >= limit {
            break;
        }
    }
    erased
}

/// What a loop answered to a face creation, as NFD words failures.
fn created(r: Option<Result<FaceDesc, CreateError>>) -> Result<FaceDesc, CreateFaceError> {
    let failed = |e: String| CreateFaceError::Failed(format!("Face creation failed: {e}"));
    match r {
        None => Err(failed("no answer".into())),
        Some(Ok(d)) => Ok(d),
        Some(Err(CreateError::Exists(d))) => Err(CreateFaceError::Exists(d)),
        Some(Err(CreateError::Failed(e))) => Err(failed(e)),
    }
}

impl Forwarder for Channels {
    fn faces(&self) -> Vec<FaceDesc> {
        self.io.faces()
    }

    fn link_defaults(&self) -> face::LinkOptions {
        face::LinkOptions {
            congestion_marking: self.congestion_marking.load(Ordering::Relaxed),
            ..face::LinkOptions::default()
        }
    }

    fn channels(&self) -> Vec<String> {
        self.io.channels()
    }

    /// Creates a UDP face (on the I/O loop its remote is steered to), or connects a TCP one and
    /// hands it to an I/O loop. A face to that remote that exists already is `Exists` (for TCP,
    /// checked before connecting, and again by the loop). Failures are worded as NFD words
    /// them.
    fn create_face(&self, uri: &str, params: &FaceParams) -> Result<FaceDesc, CreateFaceError> {
        let (udp, addr) = parse_face_uri(uri).map_err(|e| {
            if e.contains("scheme") {
                CreateFaceError::UnsupportedScheme(e)
            } else {
                CreateFaceError::BadUri(e)
            }
        })?;
        let params = *params;
        let r = if udp {
            self.io.create_udp(addr, params)
        } else {
            let canonical = face::FaceUri::tcp(addr).to_string();
            if let Some(d) = self.faces().into_iter().find(|d| d.uri == canonical) {
                return Err(CreateFaceError::Exists(Box::new(d)));
            }
            let stream = TcpStream::connect_timeout(&addr, TCP_CONNECT_TIMEOUT).map_err(|e| {
                if e.kind() == std::io::ErrorKind::TimedOut {
                    CreateFaceError::Failed("Connection timed out".into())
                } else {
                    CreateFaceError::connection_failed(&e)
                }
            })?;
            self.io.adopt_tcp(stream, params)
        };
        created(r)
    }

    fn create_ether_face(
        &self,
        ifname: &str,
        remote: face::netif::MacAddr,
        params: &FaceParams,
    ) -> Result<FaceDesc, CreateFaceError> {
        match self.io.create_ether(ifname, remote, *params) {
            // NFD's words when the interface has no channel.
            Some(Err(CreateError::Failed(e))) if e.starts_with("No channels") => {
                Err(CreateFaceError::Failed(e))
            }
            r => created(r),
        }
    }

    /// As `create_face`, but a permanent TCP face whose remote does not answer is created
    /// DOWN and redials it (with NFD's back-off), so that an unreachable `[[face]]` does not
    /// stop the router from starting or reloading.
    fn create_configured_face(
        &self,
        uri: &str,
        params: &FaceParams,
    ) -> Result<FaceDesc, CreateFaceError> {
        let r = self.create_face(uri, params);
        let unreachable =
            matches!(&r, Err(CreateFaceError::Failed(e)) if e.starts_with("Connection"));
        match parse_face_uri(uri) {
            Ok((false, addr))
                if unreachable && params.persistency == FacePersistency::Permanent =>
            {
                tracing::warn!(uri, "configured face unreachable: created DOWN, redialing");
                created(self.io.dial_tcp(addr, *params))
            }
            _ => r,
        }
    }

    fn update_face(&self, id: FaceId, update: &FaceUpdate) -> Result<FaceDesc, UpdateFaceError> {
        self.io
            .update(id, *update)
            .unwrap_or(Err(UpdateFaceError::NotFound))
    }

    fn destroy_face(&self, id: FaceId) {
        let _ = self.io.destroy(id);
    }

    fn send(&self, face: FaceId, pit_token: Option<&[u8]>, data: &[u8]) {
        let headers = LpHeaders {
            pit_token: pit_token.and_then(PitToken::new),
            ..LpHeaders::default()
        };
        let mut bytes = Vec::with_capacity(data.len() + 64);
        if encode_link(&mut bytes, &headers, data, usize::MAX) {
            self.io.send(face, bytes);
        }
    }

    fn set_strategy(&self, prefix: &Name, kind: Option<StrategyKind>) {
        self.set_strategy_instance(prefix, kind.map(Strategy::new));
    }

    fn set_strategy_instance(&self, prefix: &Name, strategy: Option<Strategy>) {
        strategy_to_workers(self, prefix, strategy);
    }

    fn cs_flags(&self, admit: bool, serve: bool) {
        to_workers(self, || Control::CsFlags { admit, serve });
    }

    fn cs_config(&self, capacity: usize, policy: CsPolicy) {
        cs_config_to_workers(self, capacity, policy);
    }

    fn cs_erase(&self, prefix: &Name, limit: usize) -> usize {
        erase_in_turn(self, prefix, limit)
    }

    fn stats(&self) -> Vec<WorkerStats> {
        crate::worker::snapshots(&self.worker_ctl, &self.workers, REPLY_TIMEOUT)
            .into_iter()
            .map(worker_stats)
            .collect()
    }
}

/// What management reports of one worker, from its snapshot.
pub(crate) fn worker_stats(s: crate::worker::Snapshot) -> WorkerStats {
    WorkerStats {
        counters: s.counters,
        pit_len: s.pit_len,
        cs_len: s.cs_len,
        cs_hits: s.cs_hits,
        cs_misses: s.cs_misses,
        l2: s.l2.as_ref().map(tier_info),
        nbcc_unavailable_faces: s.nbcc_unavailable_faces,
        measurements: s.measurements,
        measured_prefixes: s.measured_prefixes,
        latency: s.latency,
    }
}

/// One worker's L2 tier as a `cs/tiers` entry.
fn tier_info(x: &L2Snapshot) -> CsTierInfo {
    CsTierInfo {
        level: 2,
        workers: 1,
        capacity: x.capacity_chunks,
        n_entries: x.stored_chunks,
        n_lookups: x.tier.lookups,
        n_hits: x.tier.pending,
        n_misses: x.tier.lookups - x.tier.pending,
        n_reads: x.file.reads_submitted,
        n_read_bytes: x.file.bytes_read,
        n_writes: x.file.writes_submitted,
        n_write_bytes: x.file.bytes_written,
        n_checksum_failures: x.file.checksum_failures,
        n_prefetched: x.prefetch_tracked,
        n_prefetch_used: x.prefetch_used,
        n_admit_dropped: x.admit_dropped,
        queue_depth: x.queue_depth,
        n_in_flight: x.in_flight,
        batch: x.batch,
        stall_max_us: x.stalls.storage_max_ns / 1000,
        stall_p999_us: x.stalls.storage_p999_ns / 1000,
        n_stalls_over_1ms: x.stalls.storage_over_1ms,
        loop_max_us: x.stalls.loop_max_ns / 1000,
        loop_p999_us: x.stalls.loop_p999_ns / 1000,
        n_ahead_offered: x.tier.ahead_offered,
        n_ahead_reads: x.tier.ahead_reads,
        n_name_mismatches: x.file.name_mismatches,
        n_workers_off: u64::from(x.off),
        n_io_errors: x.file.read_errors + x.file.write_errors,
        n_input_held: x.input_held,
        n_deferred: x.tier.deferred,
        n_prefix_lookups: x.tier.prefix_lookups,
        n_prefix_pending: x.tier.prefix_pending,
        n_prefix_stale: x.tier.prefix_stale,
        n_prefix_handovers: x.prefix_handovers,
        n_prefix_handovers_full: x.prefix_handovers_full,
        n_admit_taken: x.admit.taken,
        n_admit_received: x.admit.received,
        n_admit_offered: x.admit.offered,
        n_admit_handed: x.admit.handed,
        n_admit_malformed: x.admit.malformed,
        n_prefix_missed: x.tier.prefix_missed,
    }
}
