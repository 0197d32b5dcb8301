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
//! - [`worker`]: runs an [`engine::fw::pipeline::Engine`] on batches, with no lock on the hot
//!   path, and writes link-layer packets into pool buffers ([`pool`]).
//! - [`manager`]: the management thread. It runs `mgmt`'s manager (NFD's management protocol,
//!   the RIB) and gives it the router as an `mgmt::Forwarder`: requests to the I/O thread and
//!   control messages to the workers. FIB and strategy changes reach every worker without a
//!   pause in forwarding.
//! - [`config`]: embedded defaults, TOML, command-line overrides.
//! - [`mem`]: steady memory for the forwarding threads (allocator settings, pre-faulting), so
//!   that they do not block in the kernel on the process's memory map.
//!
//! This crate owns the threads and wires the parts together; the engine, the wire format, the
//! faces and their table, and management (commands, the RIB, datasets) live in their own crates
//! and are only called from here.

pub mod config;
pub mod dispatch;
pub mod io;
pub mod manager;
pub mod mem;
pub mod pool;
mod start;
pub mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub use config::{Config, Overrides};
pub use io::Bound;
pub use start::start_exit_code;

use crate::io::{IoCommand, IoWaker};
use crate::manager::{Manager, ManagerParts};
use crate::start::{spawn, Shared};
use crate::worker::{Control, WorkerLink};

/// Bytes of link-layer headers a pool buffer holds beyond the largest network packet.
pub const LINK_HEADROOM_BYTES: usize = 256;

/// A running router.
pub struct Router {
    stop: StopHandle,
    threads: Vec<JoinHandle<()>>,
    bound: Bound,
    workers: usize,
    one_thread: bool,
    control: Vec<Sender<Control>>,
    io: Sender<IoCommand>,
}

/// Stops a router from another thread (a signal handler thread, a test).
#[derive(Clone)]
pub struct StopHandle {
    flag: Arc<AtomicBool>,
    io: Arc<IoWaker>,
    links: Vec<Arc<WorkerLink>>,
}

impl StopHandle {
    /// Asks every thread to stop.
    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.io.wake_now();
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
        let shared = Shared::new(cfg)?;
        let Shared {
            key: _,
            workers: n,
            ref fib,
            ref links,
            ref stop,
            start,
            cs_policy,
            limits,
            ..
        } = shared;
        let fib = fib.clone();
        let (ctl_tx, ctl_rx): (Vec<_>, Vec<_>) = (0..n).map(|_| channel::<Control>()).unzip();
        let (mgmt_tx, mgmt_rx) = channel();
        let (io_tx, io_rx) = channel();
        let mut io = shared.io(cfg, ctl_tx.clone(), mgmt_tx, io_rx)?;
        let bound = io.bound();
        let io_waker = io.waker();
        let handle = StopHandle {
            flag: stop.clone(),
            io: io_waker.clone(),
            links: links.clone(),
        };
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        match shared.spawn_workers(cfg, ctl_rx, &io_waker, &mut threads) {
            Ok(Some(inline)) => io.run_inline(inline),
            Ok(None) => {}
            Err(e) => {
                handle.stop();
                for t in threads.drain(..) {
                    let _ = t.join();
                }
                return Err(e);
            }
        }
        threads.push(shared.spawn_io(cfg, io)?);
        let (links, stop) = (links.clone(), stop.clone());
        let mut manager = Manager::new(ManagerParts {
            fib,
            workers: links.clone(),
            worker_ctl: ctl_tx.clone(),
            io: io_tx.clone(),
            io_waker: io_waker.clone(),
            input: mgmt_rx,
            stop: stop.clone(),
            start,
            cs_capacity: cfg.cs.capacity,
            cs_policy,
            limits,
        });
        let router = Router {
            stop: handle,
            threads,
            bound,
            workers: n,
            one_thread: shared.inline,
            control: ctl_tx,
            io: io_tx,
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
        )?);
        tracing::info!(
            workers = n,
            one_thread = router.one_thread,
            unix = ?router.bound.unix,
            tcp = ?router.bound.tcp,
            udp = ?router.bound.udp,
            "cascade router started"
        );
        Ok(router)
    }

    /// What the listeners bound to.
    pub fn bound(&self) -> &Bound {
        &self.bound
    }

    /// Number of forwarding workers.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Whether one thread receives, forwards and sends (`[workers] threads = "one"`, or what
    /// `auto` chose), rather than an I/O thread and worker threads.
    pub fn one_thread(&self) -> bool {
        self.one_thread
    }

    /// Each worker's counters and table sizes (waits up to a second per worker).
    pub fn snapshots(&self) -> Vec<worker::Snapshot> {
        worker::snapshots(&self.control, &self.stop.links, Duration::from_secs(1))
    }

    /// Every face with its counters (asks the I/O thread; empty if it does not answer).
    pub fn faces(&self) -> Vec<io::FaceDesc> {
        let (tx, rx) = channel();
        if self.io.send(IoCommand::List { reply: tx }).is_err() {
            return Vec::new();
        }
        self.stop.io.wake_now();
        rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default()
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

    /// Waits for every thread to finish (after a stop).
    pub fn join(self) {
        for t in self.threads {
            let _ = t.join();
        }
    }
}
