//! # router — the Cascade daemon
//!
//! Wires faces, forwarding workers, the shared FIB and NFD-compatible management into a router
//! (the threading model of Kirchner et al., "Augustus: a CCN router for programmable
//! networks", ANCS 2016; NDN-DPDK's split of data and control planes):
//!
//! ```text
//!   sockets ──► I/O thread ──(ring per worker)──► worker 0..N-1 (one engine each)
//!      ▲          │   ▲                                   │
//!      │          │   └──────(ring per worker)────────────┘
//!      └── per-face queues                 management thread ──► FIB (RCU), worker control
//! ```
//!
//! - [`io`]: one poll loop drives the face table (the `face` crate's faces, listeners and send
//!   queues); it parses only as far as the name and its hash ([`dispatch`]) and hands each
//!   packet to the worker that owns the name. With `[workers] threads = "one"` (and what
//!   `"auto"` picks on one or two cores) the loop runs the single worker itself, receiving,
//!   forwarding and sending in one turn with no thread between.
//! - [`shard`]: with `threads = "sharded"`, one such loop per worker, each with the worker
//!   inside and its own shard of the faces (its socket of the UDP listener's `SO_REUSEPORT`
//!   group, its share of the stream faces, a range of face ids); packets cross between loops
//!   on bounded rings only when the name, or the face, belongs to another loop. Management
//!   reaches the loops through [`shard::IoHandles`].
//! - [`worker`]: runs an [`engine::fw::pipeline::Engine`] on batches, with no lock on the hot
//!   path, and writes link-layer packets into pool buffers ([`pool`]).
//! - [`manager`]: the management thread. It runs `mgmt`'s manager (NFD's management protocol,
//!   the RIB) and gives it the router as an `mgmt::Forwarder`: requests to the I/O thread and
//!   control messages to the workers. FIB and strategy changes reach every worker without a
//!   pause in forwarding.
//! - [`config`]: embedded defaults, TOML, command-line overrides.
//! - [`reload`]: a new configuration file applied while forwarding, as a difference.
//! - [`mgmt_queue`]: the bounded queue of Interests from the I/O loops to management.
//! - [`failure`]: a thread that panics or ends before a stop fails the whole router.
//! - [`http`]: the HTTP endpoint (`[http]`): Prometheus metrics and a live status page, on a
//!   thread of its own, fed by the management thread.
//! - [`privileges`]: the Unix socket's mode and group, and the drop from root to `[general]
//!   user` once the listeners are bound and the L2 store is open.
//! - [`sim`]: a whole-router deterministic simulation (one seed, a simulated clock, invariants
//!   checked after every step), run by `cascade sim`.
//! - [`mem`]: steady memory for the forwarding threads (allocator settings, pre-faulting), so
//!   that they do not block in the kernel on the process's memory map.
//!
//! This crate owns the threads and wires the parts together; the engine, the wire format, the
//! faces and their table, and management (commands, the RIB, datasets) live in their own crates
//! and are only called from here.

pub mod config;
pub mod dispatch;
pub mod failure;
pub mod http;
pub mod io;
pub mod manager;
pub mod mem;
pub mod mgmt_queue;
pub mod pool;
pub mod privileges;
pub mod reload;
pub mod shard;
pub mod sim;
mod start;
pub mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use config::{Config, Overrides, Threads};
pub use io::Bound;
pub use start::start_exit_code;

use crate::failure::{spawn, Failure};
use crate::io::IoWaker;
use crate::manager::{Manager, ManagerParts};
use crate::shard::{IoHandles, ShardLink, ShardStats};
use crate::start::{Loops, Shared};
use crate::worker::{Control, WorkerLink};

/// How long a reload may take in the management thread (creating TCP faces connects).
const RELOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// Bytes of link-layer headers a pool buffer holds beyond the largest network packet.
pub const LINK_HEADROOM_BYTES: usize = 256;

/// A running router.
pub struct Router {
    stop: StopHandle,
    threads: Vec<JoinHandle<()>>,
    bound: Bound,
    workers: usize,
    mode: Threads,
    control: Vec<Sender<Control>>,
    shards: Vec<Arc<ShardLink>>,
    failure: Arc<Failure>,
    mgmt_queue: Arc<mgmt_queue::MgmtQueueStats>,
    http: Option<std::net::SocketAddr>,
    /// Reloads go to management through its queue.
    mgmt_tx: mgmt_queue::MgmtSender,
    /// The configuration as it runs (its static parts as the last reload left them).
    running: Config,
}

/// Stops a router from another thread (a signal handler thread, a test).
#[derive(Clone)]
pub struct StopHandle {
    flag: Arc<AtomicBool>,
    io: Arc<IoHandles>,
    links: Vec<Arc<WorkerLink>>,
}

impl StopHandle {
    /// Asks every thread to stop, within `budget`: the workers store what their RAM CS and
    /// admission queues hold in L2 within most of it (the rest is dropped, counted).
    pub fn stop_within(&self, budget: std::time::Duration) {
        for l in &self.links {
            l.stop_budget_ms
                .store(budget.as_millis() as u64, Ordering::Relaxed);
        }
        self.stop();
    }

    /// Asks every thread to stop (within [`worker::DEFAULT_STOP_BUDGET`]).
    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.io.wake_all_now();
        for l in &self.links {
            l.unpark();
        }
    }

    /// Has a stop been asked for?
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

impl Router {
    /// Starts a router: binds the listeners, starts the threads, creates the static faces,
    /// routes and strategies. Errors are one line naming what failed.
    pub fn start(cfg: &Config) -> Result<Router, String> {
        let run_as = privileges::run_as(cfg)?;
        let shared = Shared::new(cfg)?;
        let Shared {
            key: _,
            workers: n,
            ref fib,
            ref links,
            ref stop,
            ref failure,
            start,
            cs_policy,
            limits,
            mode,
            ..
        } = shared;
        let fib = fib.clone();
        let (ctl_tx, ctl_rx): (Vec<_>, Vec<_>) = (0..n).map(|_| channel::<Control>()).unzip();
        let (mgmt_tx, mgmt_rx) = mgmt_queue::mgmt_queue(mgmt_queue::DEFAULT_MGMT_QUEUE_INTERESTS);
        let Loops {
            loops,
            handles,
            shards,
        } = shared.io_loops(cfg, &ctl_tx, &mgmt_tx)?;
        let mgmt_queue = Arc::clone(mgmt_tx.stats());
        let bound = loops[0].bound();
        let wakers: Vec<Arc<IoWaker>> = loops.iter().map(|l| l.waker()).collect();
        let handle = StopHandle {
            flag: stop.clone(),
            io: handles.clone(),
            links: links.clone(),
        };
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let started = shared
            .spawn_workers(cfg, ctl_rx, &wakers, &mut threads)
            .and_then(|inline| {
                if let Some(who) = &run_as {
                    if !cfg.store.l2_path.is_empty() {
                        privileges::give_store(std::path::Path::new(&cfg.store.l2_path), who)?;
                    }
                    privileges::drop_to(who)?;
                }
                let mut loops = loops;
                for (io, w) in loops.iter_mut().zip(inline) {
                    io.run_inline(w);
                }
                for (i, io) in loops.into_iter().enumerate() {
                    threads.push(shared.spawn_io(cfg, i, io)?);
                }
                Ok(())
            });
        if let Err(e) = started {
            handle.stop();
            for t in threads.drain(..) {
                let _ = t.join();
            }
            return Err(e);
        }
        let (links, stop, failure) = (links.clone(), stop.clone(), failure.clone());
        let mut manager = Manager::new(ManagerParts {
            fib,
            workers: links.clone(),
            worker_ctl: ctl_tx.clone(),
            io: handles.clone(),
            input: mgmt_rx,
            stop: stop.clone(),
            start,
            cs_capacity: cfg.cs.capacity,
            cs_policy,
            limits,
            rib: cfg.rib.options(),
            congestion_marking: cfg.face_system.general.enable_congestion_marking,
        });
        let router = Router {
            stop: handle,
            threads,
            bound,
            workers: n,
            mode,
            control: ctl_tx,
            shards,
            failure: failure.clone(),
            mgmt_queue,
            http: None,
            mgmt_tx: mgmt_tx.clone(),
            running: cfg.clone(),
        };
        if let Err(e) = manager.configure(cfg) {
            router.stop.stop();
            router.join();
            return Err(e);
        }
        let mut router = router;
        router.threads.push(spawn(
            "cascade-mgmt".into(),
            Box::new(move || manager.run()),
            &stop,
            &failure,
        )?);
        let io = router.stop.io.clone();
        if let Some((addr, t)) = http::start(&cfg.http, mgmt_tx, io, &links, start, stop, &failure)
        {
            router.http = Some(addr);
            router.threads.push(t);
        }
        tracing::info!(
            workers = n,
            threads = mode.name(),
            unix = ?router.bound.unix,
            tcp = ?router.bound.tcp,
            udp = ?router.bound.udp,
            ws = ?router.bound.ws,
            "cascade router started"
        );
        Ok(router)
    }

    /// Applies `new` while forwarding ([`reload`]): its static faces, routes and strategies
    /// as a difference against the running ones, through the management thread. The sections
    /// that only a restart applies are listed in the answer and keep running as they are. An
    /// error (one line) leaves the running configuration as it was.
    pub fn reload(&mut self, new: &Config) -> Result<reload::Reloaded, String> {
        new.validate()?;
        let (tx, rx) = channel();
        let statics = Box::new(reload::Statics::of(new));
        self.mgmt_tx.event(io::MgmtInput::Reload(statics, tx));
        let mut done = rx
            .recv_timeout(RELOAD_TIMEOUT)
            .map_err(|_| format!("management did not answer within {RELOAD_TIMEOUT:?}"))??;
        done.need_restart = reload::restart_sections(&self.running, new);
        done.limits_applied = reload::runtime_changes(&self.running, new);
        reload::keep_runtime_keys(&mut self.running, new);
        self.running.static_faces = new.static_faces.clone();
        self.running.routes = new.routes.clone();
        self.running.strategies = new.strategies.clone();
        self.running.authorizations = new.authorizations.clone();
        self.running.general.log = new.general.log.clone();
        Ok(done)
    }

    /// What the listeners bound to.
    pub fn bound(&self) -> &Bound {
        &self.bound
    }

    /// Where the HTTP endpoint listens (none if `[http] listen` is off or did not bind).
    pub fn http_addr(&self) -> Option<std::net::SocketAddr> {
        self.http
    }

    /// Number of forwarding workers.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Whether one thread receives, forwards and sends (`[workers] threads = "one"`, or what
    /// `auto` chose), rather than an I/O thread and worker threads, or sharded loops.
    pub fn one_thread(&self) -> bool {
        self.mode == Threads::One
    }

    /// How the router forwards: `One`, `IoWorkers` or `Sharded` (never `Auto`).
    pub fn threads(&self) -> Threads {
        self.mode
    }

    /// A sharded router's counters per loop: packets kept and packets that crossed to another
    /// loop (empty unless sharded).
    pub fn shard_stats(&self) -> Vec<ShardStats> {
        self.shards.iter().map(|s| s.stats()).collect()
    }

    /// Which I/O loop holds face `id` (0 unless sharded).
    pub fn face_loop(&self, id: face::FaceId) -> usize {
        self.stop.io.owner(id)
    }

    /// Which I/O loop receives the datagrams of UDP remote `remote` and holds its face (0
    /// unless sharded).
    pub fn udp_loop(&self, remote: std::net::SocketAddr) -> usize {
        self.stop.io.udp_owner(remote)
    }

    /// Each worker's counters and table sizes (waits up to a second per worker).
    pub fn snapshots(&self) -> Vec<worker::Snapshot> {
        worker::snapshots(&self.control, &self.stop.links, Duration::from_secs(1))
    }

    /// Every face with its counters (asks the I/O loops; those that do not answer within 5 s
    /// are left out).
    pub fn faces(&self) -> Vec<io::FaceDesc> {
        self.stop.io.faces()
    }

    /// Packets the I/O thread dropped because a worker's input ring was full.
    pub fn input_ring_full(&self) -> u64 {
        self.stop
            .links
            .iter()
            .map(|l| l.input_full.load(Ordering::Relaxed))
            .sum()
    }

    /// A handle that stops the router.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// The first thread that failed (panicked, or ended before a stop was asked for): the
    /// router is then stopping, and the daemon should exit non-zero.
    pub fn failure(&self) -> Option<String> {
        self.failure.get()
    }

    /// The management queue's counters: Interests waiting, refused when full, dropped for
    /// scope (`/localhost` from a non-local face).
    pub fn mgmt_queue(&self) -> &mgmt_queue::MgmtQueueStats {
        &self.mgmt_queue
    }

    /// Waits for every thread to finish (after a stop).
    pub fn join(self) {
        for t in self.threads {
            let _ = t.join();
        }
    }

    /// Waits up to `deadline` for every thread to finish (after a stop); the names of those
    /// still running at the deadline otherwise (they are left running).
    pub fn join_within(self, deadline: Duration) -> Result<(), Vec<String>> {
        let until = std::time::Instant::now() + deadline;
        let mut threads = self.threads;
        loop {
            let (done, running): (Vec<_>, Vec<_>) =
                threads.into_iter().partition(|t| t.is_finished());
            for t in done {
                let _ = t.join();
            }
            threads = running;
            if threads.is_empty() {
                return Ok(());
            }
            if std::time::Instant::now() >= until {
                return Err(threads
                    .iter()
                    .map(|t| t.thread().name().unwrap_or("unnamed").to_string())
                    .collect());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
