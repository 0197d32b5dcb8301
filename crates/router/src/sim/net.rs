//! The router under simulation: the real dispatcher, pool, rings, workers and management,
//! wired as [`crate::Router::start`] wires them, with the I/O thread's two duties (route a
//! received packet, drain the workers' outputs) done by the simulation one call at a time.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::fw::pipeline::{Engine, EngineConfig, FaceInfo};
use engine::fw::strategy::{Strategy, StrategyKind};
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, FaceId, PitCsConfig};
use face::link::encode_link;
use face::lp_frag::{LpHeaders, PitToken};
use face::{FaceDesc, FaceParams};
use mgmt::{CreateFaceError, Forwarder, UpdateFaceError, WorkerStats};
use wire::nfd::{FaceEventKind, FacePersistency};
use wire::{Limits, Name};

use crate::dispatch::{Dispatcher, Route};
use crate::io::MgmtInput;
use crate::manager::{
    cs_config_to_workers, erase_in_turn, strategy_to_workers, to_workers, WorkerControls,
};
use crate::mgmt_queue::{mgmt_queue, MgmtReceiver, MgmtSender};
use crate::pool::Pool;
use crate::worker::{Control, Snapshot, Wake, Worker, WorkerLink};

use super::SimConfig;

/// Wakes nobody: the simulation steps every thread itself.
#[derive(Debug)]
struct NoWake;

impl Wake for NoWake {
    fn wake(&self) {}
}

/// What management did that the simulated I/O thread carries out after the call: Data to
/// send, faces to close.
#[derive(Default)]
pub(super) struct FwdEffects {
    /// Link-layer packets for faces (management's answers).
    pub sent: VecDeque<(FaceId, Vec<u8>)>,
    /// Faces management closed.
    pub destroyed: Vec<FaceId>,
    /// The faces, as `faces/list` would describe them.
    pub faces: Vec<FaceDesc>,
}

/// The workers, shared between the simulation and management's forwarder (which steps a
/// worker's control channel for the commands that wait for an answer, as `cs/erase` does).
type Workers = Rc<RefCell<Vec<Worker>>>;

/// The router as management sees it in the simulation: the router's control messages to the
/// workers, and the I/O thread's part recorded in [`FwdEffects`].
pub(super) struct SimForwarder {
    workers: Workers,
    ctl: Vec<Sender<Control>>,
    effects: Rc<RefCell<FwdEffects>>,
}

impl WorkerControls for SimForwarder {
    fn worker_count(&self) -> usize {
        self.ctl.len()
    }

    fn control(&self, w: usize, c: Control) {
        let _ = self.ctl[w].send(c);
    }

    /// The worker applies its control messages at once (its thread would, between two
    /// batches).
    fn answer<T>(&self, w: usize, rx: Receiver<T>) -> Option<T> {
        self.workers.borrow_mut()[w].apply_control();
        rx.try_recv().ok()
    }
}

impl Forwarder for SimForwarder {
    fn faces(&self) -> Vec<FaceDesc> {
        self.effects.borrow().faces.clone()
    }

    fn channels(&self) -> Vec<String> {
        Vec::new()
    }

    /// The simulation has no sockets: no face is created through management.
    fn create_face(&self, uri: &str, _params: &FaceParams) -> Result<FaceDesc, CreateFaceError> {
        Err(CreateFaceError::UnsupportedScheme(uri.to_string()))
    }

    fn update_face(&self, _id: FaceId, _u: &face::FaceUpdate) -> Result<FaceDesc, UpdateFaceError> {
        Err(UpdateFaceError::NotFound)
    }

    fn destroy_face(&self, id: FaceId) {
        self.effects.borrow_mut().destroyed.push(id);
    }

    fn send(&self, face: FaceId, pit_token: Option<&[u8]>, data: &[u8]) {
        let headers = LpHeaders {
            pit_token: pit_token.and_then(PitToken::new),
            ..LpHeaders::default()
        };
        let mut bytes = Vec::with_capacity(data.len() + 64);
        if encode_link(&mut bytes, &headers, data, usize::MAX) {
            self.effects.borrow_mut().sent.push_back((face, bytes));
        }
    }

    fn set_strategy(&self, prefix: &Name, kind: Option<StrategyKind>) {
        strategy_to_workers(self, prefix, kind.map(Strategy::new));
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
        (0..self.ctl.len())
            .filter_map(|i| snapshot(&self.ctl[i], &mut self.workers.borrow_mut()[i]))
            .map(crate::manager::worker_stats)
            .collect()
    }
}

/// Worker `w`'s snapshot, taken at once through its control channel (`None` if more control
/// messages than one call applies were waiting ahead of it).
fn snapshot(ctl: &Sender<Control>, w: &mut Worker) -> Option<Snapshot> {
    let (tx, rx) = channel();
    let _ = ctl.send(Control::Snapshot(tx));
    w.apply_control();
    rx.try_recv().ok()
}

/// Where a received packet went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Routed {
    /// Onto worker rings (how many pushes were refused because a ring was full).
    Workers {
        /// Pushes refused.
        refused: u32,
    },
    /// To management's queue (false: refused, for scope or a full queue).
    Mgmt(bool),
    /// Counted and dropped: malformed, or a fragment (the simulated faces do not fragment).
    Malformed,
    /// An IDLE packet.
    Idle,
    /// No pool buffer was free.
    NoBuffer,
}

/// The real parts of a router, stepped by the simulation.
pub(super) struct SimRouter {
    pub dispatcher: Dispatcher,
    pub pool: Arc<Pool>,
    pub links: Vec<Arc<WorkerLink>>,
    ctl: Vec<Sender<Control>>,
    pub workers: Workers,
    pub clock: Arc<AtomicU64>,
    mgmt_tx: MgmtSender,
    mgmt_rx: MgmtReceiver,
    pub manager: mgmt::Manager<SimForwarder>,
    pub effects: Rc<RefCell<FwdEffects>>,
    /// Capacity of a worker's PIT.
    pub pit_capacity: usize,
    /// Each worker's L2 store, when the run has L2.
    pub l2: Vec<super::l2::SimL2>,
    /// Each worker's turns so far (each polls its L2).
    pub turns: Vec<std::cell::Cell<u64>>,
    /// Every name the stores may hold a chunk under (with L2).
    pub l2_names: super::l2::L2Names,
}

/// Mixed into the seed for the draw of the workers whose store is off at open.
const OFF_AT_OPEN_SALT: u64 = 0x0FF0_0FF0 << 32;

impl SimRouter {
    /// A router of `cfg.workers` workers, the hash key drawn from the seed.
    pub fn new(cfg: &SimConfig, key_bytes: [u8; 16]) -> Self {
        let key = HashKey::from_bytes(key_bytes);
        let n = cfg.workers;
        let limits = Limits {
            verify_parameters_digest: false,
            ..Limits::default()
        };
        let fib = Arc::new(Fib::new(key, 1024, 4));
        let pool = Arc::new(Pool::new(
            cfg.buffers,
            limits.max_packet_bytes + crate::LINK_HEADROOM_BYTES,
        ));
        let links: Vec<_> = (0..n)
            .map(|_| Arc::new(WorkerLink::new(cfg.ring_capacity)))
            .collect();
        let clock = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let start = Instant::now();
        let pit_capacity = cfg.pit_capacity;
        let mut ctl = Vec::new();
        let mut workers = Vec::new();
        let mut l2 = Vec::new();
        // The dispatchers' prefix filters of the workers' stores (two workers or more).
        let prefixes = cfg
            .l2
            .and_then(|l| super::filters::prefix_filters(n, l.extents));
        let l2_prefixes: Option<crate::dispatch::L2Prefixes> = prefixes.clone().map(Into::into);
        let dispatcher =
            || Dispatcher::new(key, n, cfg.mapping, limits).with_l2_prefixes(l2_prefixes.clone());
        for (i, link) in links.iter().enumerate() {
            let ecfg = EngineConfig {
                pit_cs: PitCsConfig {
                    pit_capacity,
                    cs_capacity: cfg.cs_capacity.div_ceil(n),
                    ..PitCsConfig::default()
                },
                dead_nonce_capacity: 1024,
                limits,
                ..EngineConfig::default()
            };
            let (tx, rx) = channel();
            ctl.push(tx);
            let mut engine = Engine::new(key, fib.clone(), ecfg);
            // A worker whose store fails to open at the start has none (`off=`): drawn
            // apart from the run's other choices, so that `off=0` leaves them as they were.
            let off = cfg.l2.is_some_and(|l| {
                let mut r = super::rng::Rng::new(cfg.seed ^ OFF_AT_OPEN_SALT ^ i as u64);
                r.below(1000) < u64::from(l.off_pm)
            });
            let tier = cfg.l2.filter(|_| !off).map(|l| {
                let ram_cs = cfg.cs_capacity.div_ceil(n);
                let pf = prefixes.as_ref().map(|p| p[i].clone());
                let (sim, tier) = super::l2::SimL2::open(
                    &l,
                    (cfg.seed, i, key),
                    &clock,
                    &mut engine,
                    (ram_cs, pf),
                );
                l2.push(sim);
                engine.set_slow_tier(Box::new(tier.clone()));
                super::l2::SimL2::worker_l2(tier, dispatcher(), limits, links.clone())
            });
            let w = Worker::new(
                i,
                engine,
                link.clone(),
                pool.clone(),
                rx,
                Arc::new(NoWake),
                stop.clone(),
                start,
                Duration::from_millis(10),
                Duration::ZERO,
                tier,
                off,
            );
            workers.push(w.with_clock(clock.clone()));
        }
        let workers = Rc::new(RefCell::new(workers));
        let effects = Rc::new(RefCell::new(FwdEffects::default()));
        let forwarder = SimForwarder {
            workers: workers.clone(),
            ctl: ctl.clone(),
            effects: effects.clone(),
        };
        let parts = mgmt::ManagerParts {
            fib,
            start,
            cs_capacity: cfg.cs_capacity,
            cs_policy: CsPolicy::Lru,
            limits,
            rib: mgmt::RibOptions::default(),
        };
        let (mgmt_tx, mgmt_rx) = mgmt_queue(cfg.mgmt_queue);
        SimRouter {
            dispatcher: dispatcher(),
            pool,
            links,
            ctl,
            workers,
            clock,
            mgmt_tx,
            mgmt_rx,
            manager: mgmt::Manager::new(forwarder, parts),
            effects,
            pit_capacity,
            l2,
            turns: vec![std::cell::Cell::new(0); n],
            l2_names: super::l2::L2Names::new(),
        }
    }

    /// A face appeared: every worker is told (before its first packet, as the I/O thread
    /// does), and management gets the event.
    pub fn face_up(&mut self, id: FaceId, local: bool) {
        for c in &self.ctl {
            let _ = c.send(Control::Face {
                id,
                info: FaceInfo {
                    local,
                    multi_access: false,
                    local_fields: false,
                },
                local_fields: false,
            });
        }
        let desc = face_desc(id, local);
        self.effects.borrow_mut().faces.push(desc.clone());
        self.mgmt_tx
            .event(MgmtInput::FaceEvent(FaceEventKind::Created, Box::new(desc)));
    }

    /// A face closed: management gets the event (the workers are not told, as in the router:
    /// what they send to it is dropped).
    pub fn face_down(&mut self, id: FaceId) {
        let mut fx = self.effects.borrow_mut();
        let Some(at) = fx.faces.iter().position(|d| d.id == id) else {
            return;
        };
        let desc = fx.faces.remove(at);
        drop(fx);
        self.mgmt_tx.event(MgmtInput::FaceEvent(
            FaceEventKind::Destroyed,
            Box::new(desc),
        ));
    }

    /// The I/O thread's receive path for one whole packet from `face`: classify, then onto
    /// the worker rings or management's queue (the router's `route_packet`, without
    /// reassembly).
    pub fn receive(&self, face: FaceId, local: bool, bytes: &[u8]) -> Routed {
        let (route, kind, full_hash) = self.dispatcher.classify_hashed(bytes);
        let push = |w: usize| -> Result<bool, ()> {
            let Some(mut p) = self.pool.pkt_from(face, bytes) else {
                return Err(());
            };
            p.kind = kind;
            p.full_hash = full_hash;
            match self.links[w].input.push(p) {
                Ok(()) => Ok(true),
                Err(p) => {
                    self.links[w].input_full.fetch_add(1, Ordering::Relaxed);
                    self.pool.put(p.buf);
                    Ok(false)
                }
            }
        };
        let targets: Vec<usize> = match route {
            Route::Malformed | Route::Reassemble => return Routed::Malformed,
            Route::Idle => return Routed::Idle,
            Route::Mgmt { localhost } => {
                return Routed::Mgmt(
                    self.mgmt_tx
                        .interest(face, local, localhost, || bytes.to_vec()),
                )
            }
            Route::Worker(w) => vec![w],
            Route::AllWorkers { owner } => std::iter::once(owner)
                .chain((0..self.links.len()).filter(|&w| w != owner))
                .collect(),
        };
        let mut refused = 0;
        for w in targets {
            match push(w) {
                Ok(true) => {}
                Ok(false) => refused += 1,
                Err(()) => return Routed::NoBuffer,
            }
        }
        Routed::Workers { refused }
    }

    /// The I/O thread's other duty: every worker's outputs, in worker order, each ring at
    /// most its capacity, as (face, link-layer packet); the buffers go back to the pool.
    pub fn drain_outputs(&self, mut out: impl FnMut(FaceId, &[u8])) {
        for l in &self.links {
            for _ in 0..l.output.capacity() {
                let Some(p) = l.output.pop() else {
                    break;
                };
                out(p.face, p.bytes());
                self.pool.put(p.buf);
            }
        }
    }

    /// One turn of worker `w`'s loop: a batch if there is input, else its idle turn (the
    /// engine's clock advances: PIT expiry). True if it had work.
    pub fn step_worker(&self, w: usize) -> bool {
        self.turns[w].set(self.turns[w].get() + 1);
        let mut ws = self.workers.borrow_mut();
        if ws[w].step() {
            return true;
        }
        ws[w].idle();
        false
    }

    /// Worker `w`'s snapshot (applying its waiting control messages first).
    pub fn snapshot(&self, w: usize) -> Option<Snapshot> {
        snapshot(&self.ctl[w], &mut self.workers.borrow_mut()[w])
    }

    /// One turn of the management thread: one input, if any. True if there was one.
    pub fn step_mgmt(&mut self) -> bool {
        match self.mgmt_rx.recv_timeout(Duration::ZERO) {
            Ok(MgmtInput::Interest { face, local, bytes }) => {
                self.manager.on_interest(face, local, &bytes)
            }
            Ok(MgmtInput::FaceEvent(kind, face)) => self.manager.face_event(kind, &face),
            Ok(MgmtInput::Status(_)) | Ok(MgmtInput::Reload(..)) => {}
            Err(_) => return false,
        }
        true
    }

    /// Management Interests waiting in its queue.
    pub fn mgmt_pending(&self) -> usize {
        self.mgmt_tx.stats().pending.load(Ordering::Relaxed)
    }
}

/// How management sees a simulated face.
fn face_desc(id: FaceId, local: bool) -> FaceDesc {
    FaceDesc {
        id,
        uri: format!("sim://{id}"),
        local_uri: "sim://router".into(),
        local,
        persistency: FacePersistency::Persistent,
        mtu: None,
        options: face::LinkOptions {
            local_fields: false,
            lp_reliability: false,
            congestion_marking: false,
            base_congestion_marking_interval_ns: 0,
            default_congestion_threshold_bytes: 0,
        },
        counters: face::FaceCounters::default(),
    }
}
