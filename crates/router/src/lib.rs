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
//!   packet to the worker that owns the name.
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
pub mod worker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use engine::fw::pipeline::{Engine, EngineConfig};
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, PitCsConfig};
use wire::{fill_random, Limits};

pub use config::{Config, Overrides};
pub use io::Bound;

use crate::dispatch::{Dispatcher, WorkerMapping};
use crate::io::{Io, IoCommand, IoConfig, IoParts, IoWaker};
use crate::manager::{Manager, ManagerParts};
use crate::pool::Pool;
use crate::worker::{Control, Worker, WorkerLink};

/// Bytes of link-layer headers a pool buffer holds beyond the largest network packet.
pub const LINK_HEADROOM_BYTES: usize = 256;

/// A running router.
pub struct Router {
    stop: StopHandle,
    threads: Vec<JoinHandle<()>>,
    bound: Bound,
    workers: usize,
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

fn random_key() -> HashKey {
    let mut b = [0u8; 16];
    fill_random(&mut b);
    HashKey::from_bytes(b)
}

/// Bytes of `<l2_path>/hash.key`: the key, the worker count, the mapping's code and the
/// mapping's batch (u32 little-endian; 0 unless `batch`).
const KEY_FILE_BYTES: usize = 22;

/// Key files written before `workers.mapping` existed: key and worker count (mapping `name`).
const OLD_KEY_FILE_BYTES: usize = 17;

/// The hash key of a router with an L2 store: kept in `<l2_path>/hash.key` (mode 0600) so that
/// after a restart every name maps to the same worker, and so to the L2 file that holds it.
/// The file also records the worker count and the mapping; a different count or mapping is
/// refused (one line naming the key), since chunks would sit in the files of workers that no
/// longer own them.
fn store_key(
    dir: &std::path::Path,
    workers: usize,
    mapping: WorkerMapping,
) -> Result<HashKey, String> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let path = dir.join("hash.key");
    std::fs::create_dir_all(dir).map_err(|e| format!("store.l2_path {}: {e}", dir.display()))?;
    let batch_of = |m: WorkerMapping| match m {
        WorkerMapping::Batch { batch } => batch as u32,
        _ => 0,
    };
    match std::fs::read(&path) {
        Ok(b) if b.len() == KEY_FILE_BYTES || b.len() == OLD_KEY_FILE_BYTES => {
            if usize::from(b[16]) != workers {
                return Err(format!(
                    "store.l2_path {}: written by a router with {} workers, this one has {workers} (use --workers {})",
                    dir.display(),
                    b[16],
                    b[16]
                ));
            }
            let (code, batch) = if b.len() == KEY_FILE_BYTES {
                (b[17], u32::from_le_bytes([b[18], b[19], b[20], b[21]]))
            } else {
                (WorkerMapping::Name.code(), 0)
            };
            if workers > 1 && (code, batch) != (mapping.code(), batch_of(mapping)) {
                let was = match (WorkerMapping::config_name(code), batch) {
                    ("batch", b) => format!("\"batch\" with store.batch = {b}"),
                    (name, _) => format!("{name:?}"),
                };
                return Err(format!(
                    "workers.mapping: store.l2_path {} was written with workers.mapping = {was}; set it back, or use another l2_path (chunks would sit on workers that no longer own them)",
                    dir.display()
                ));
            }
            let mut k = [0u8; 16];
            k.copy_from_slice(&b[..16]);
            Ok(HashKey::from_bytes(k))
        }
        Ok(_) => Err(format!("{}: not a Cascade key file", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut k = [0u8; 16];
            fill_random(&mut k);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let mut rec = [0u8; KEY_FILE_BYTES];
            rec[..16].copy_from_slice(&k);
            rec[16] = workers as u8;
            rec[17] = mapping.code();
            rec[18..].copy_from_slice(&batch_of(mapping).to_le_bytes());
            f.write_all(&rec)
                .and_then(|()| f.sync_all())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(HashKey::from_bytes(k))
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn pin_to(core: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET stays within it for core < CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if core < libc::CPU_SETSIZE as usize {
            libc::CPU_SET(core, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
}

impl Router {
    /// Starts a router: binds the listeners, starts the threads, creates the static faces,
    /// routes and strategies. Errors are one line naming what failed.
    pub fn start(cfg: &Config) -> Result<Router, String> {
        cfg.validate()?;
        mem::steady_allocator();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = cfg.worker_count(cores).min(255);
        let mapping = cfg.worker_mapping();
        let key = if cfg.store.l2_path.is_empty() {
            random_key()
        } else {
            store_key(std::path::Path::new(&cfg.store.l2_path), n, mapping)?
        };
        let limits = Limits {
            max_packet_bytes: cfg.limits.max_packet_bytes,
            max_name_components: cfg.limits.max_name_components,
            verify_parameters_digest: false,
            ..Limits::default()
        };
        let fib = Arc::new(Fib::new(key, cfg.fib.capacity, cfg.fib.m));
        let pool = Arc::new(Pool::new(
            cfg.workers.buffers,
            cfg.limits.max_packet_bytes + LINK_HEADROOM_BYTES,
        ));
        pool.prefault(cfg.workers.prefault_buffers);
        let prefault_bytes = cfg.workers.prefault_mb << 20;
        let links: Vec<Arc<WorkerLink>> = (0..n)
            .map(|_| Arc::new(WorkerLink::new(cfg.workers.ring_capacity)))
            .collect();
        let (ctl_tx, ctl_rx): (Vec<_>, Vec<_>) = (0..n).map(|_| channel::<Control>()).unzip();
        let (mgmt_tx, mgmt_rx) = channel();
        let (io_tx, io_rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let start = Instant::now();
        let io = Io::new(
            IoParts {
                cfg: IoConfig {
                    max_faces: cfg.faces.max_faces,
                    send_queue_bytes: cfg.faces.send_queue_bytes,
                    udp_mtu: cfg.faces.udp_mtu,
                    udp_idle_timeout_ms: cfg.faces.udp_idle_timeout_s.saturating_mul(1000),
                    malformed_limit: cfg.faces.malformed_limit,
                    limits,
                },
                dispatcher: Dispatcher::new(key, n, mapping, limits),
                pool: pool.clone(),
                workers: links.clone(),
                worker_ctl: ctl_tx.clone(),
                mgmt: mgmt_tx,
                commands: io_rx,
                stop: stop.clone(),
                start,
            },
            &cfg.listen.unix,
            &cfg.listen.tcp,
            &cfg.listen.udp,
        )?;
        let bound = io.bound();
        let io_waker = io.waker();
        let handle = StopHandle {
            flag: stop.clone(),
            io: io_waker.clone(),
            links: links.clone(),
        };
        // Placement: pin only when every thread can have a core of its own, or when told to.
        let auto_pin = cfg.workers.cores.is_empty() && cores > n;
        let io_core = cfg.workers.io_core.or(auto_pin.then_some(0));
        let worker_core = |i: usize| {
            cfg.workers
                .cores
                .get(i)
                .copied()
                .or(auto_pin.then_some(i + 1))
        };
        let cs_policy = match cfg.cs.policy {
            config::CsPolicy::Lru => CsPolicy::Lru,
            config::CsPolicy::Fifo => CsPolicy::Fifo,
        };
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let stopped_flushing = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.clone())
                .spawn(f)
                .map_err(|e| format!("cannot start thread {name}: {e}"))
        };
        for (i, rx) in ctl_rx.into_iter().enumerate() {
            let ecfg = EngineConfig {
                pit_cs: PitCsConfig {
                    pit_capacity: cfg.pit.capacity.div_ceil(n).max(64),
                    cs_capacity: cfg.cs.capacity.div_ceil(n),
                    cs_policy,
                    ..PitCsConfig::default()
                },
                limits,
                ..EngineConfig::default()
            };
            let mut engine = Engine::new(key, fib.clone(), ecfg);
            let tier = match open_l2(cfg, i, n) {
                Ok(t) => t,
                Err(e) => {
                    handle.stop();
                    for t in threads.drain(..) {
                        let _ = t.join();
                    }
                    return Err(e);
                }
            };
            let tier = tier.map(|t| {
                let h = store::SharedL2Tier::new(t);
                engine.set_slow_tier(Box::new(h.clone()));
                worker::L2::new(
                    h,
                    Dispatcher::new(key, n, mapping, limits),
                    limits,
                    links.clone(),
                    cfg.store.admission == config::L2Admission::WriteBack,
                    stopped_flushing.clone(),
                )
            });
            let w = Worker::new(
                i,
                engine,
                links[i].clone(),
                pool.clone(),
                rx,
                io_waker.clone(),
                stop.clone(),
                start,
                Duration::from_millis(cfg.workers.tick_ms),
                tier,
            );
            let core = worker_core(i);
            threads.push(spawn(
                format!("cascade-w{i}"),
                Box::new(move || {
                    if let Some(c) = core {
                        pin_to(c);
                    }
                    mem::prefault_arena(prefault_bytes);
                    w.run();
                }),
            )?);
        }
        threads.push(spawn(
            "cascade-io".into(),
            Box::new(move || {
                if let Some(c) = io_core {
                    pin_to(c);
                }
                mem::prefault_arena(prefault_bytes);
                io.run();
            }),
        )?);
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

/// Opens worker `i`'s L2 file (`<l2_path>/l2-w<i>.dat`) if the config has a store: an existing
/// file is reopened with its index (or rebuilt from its slot headers after a crash).
fn open_l2(cfg: &Config, i: usize, workers: usize) -> Result<Option<store::L2Tier>, String> {
    let s = &cfg.store;
    if s.l2_path.is_empty() {
        return Ok(None);
    }
    let dir = std::path::PathBuf::from(&s.l2_path);
    std::fs::create_dir_all(&dir).map_err(|e| format!("store.l2_path {}: {e}", dir.display()))?;
    let per_worker = s.l2_capacity.div_ceil(workers as u64);
    let extents = per_worker.div_ceil(u64::from(s.batch)).max(1);
    let extents = u32::try_from(extents)
        .map_err(|_| format!("store.l2_capacity {} is too large", s.l2_capacity))?;
    let mut c = store::L2Config::new(dir.join(format!("l2-w{i}.dat")), extents);
    c.batch = s.batch;
    c.queue_depth = s.queue_depth;
    c.io_threads = s.queue_depth.min(16);
    c.direct = s.direct;
    c.replacement = match s.replacement {
        config::L2Replacement::Fifo => store::Replacement::Fifo,
        config::L2Replacement::Lru => store::Replacement::Lru,
    };
    c.admission = match s.admission {
        config::L2Admission::WriteThrough => store::l2::Admission::WriteThrough,
        config::L2Admission::WriteBack => store::l2::Admission::WriteBack,
    };
    c.decision = match s.decision {
        config::L2Decision::Always => store::l2::Decision::Always,
        config::L2Decision::Lcp => store::l2::Decision::Lcp { p: s.lcp_p },
        config::L2Decision::TwoLru => store::l2::Decision::TwoLru {
            filter_batches: extents,
        },
    };
    c.seed = i as u64 + 1;
    let file = store::L2File::open(&c).map_err(|e| format!("store: {}: {e}", c.path.display()))?;
    tracing::info!(
        worker = i,
        path = %c.path.display(),
        chunks = file.stored_chunks(),
        backend = ?file.backend(),
        "L2 open"
    );
    Ok(Some(
        store::L2Tier::new(file, store::tier::DEFAULT_MAX_NAME_BYTES)
            .with_prefetch_ahead(s.prefetch_ahead),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_key_file_keeps_the_key_workers_and_mapping() {
        let dir = std::env::temp_dir().join(format!("cascade-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let batch = WorkerMapping::Batch { batch: 10 };
        let k = store_key(&dir, 2, batch).unwrap();
        assert_eq!(std::fs::read(dir.join("hash.key")).unwrap().len(), 22);
        assert_eq!(store_key(&dir, 2, batch).unwrap(), k, "same key again");
        for (workers, mapping, needle) in [
            (3, batch, "2 workers"),
            (2, WorkerMapping::Content, "\"batch\" with store.batch = 10"),
            (2, WorkerMapping::Batch { batch: 16 }, "workers.mapping"),
        ] {
            let e = store_key(&dir, workers, mapping).unwrap_err();
            assert!(e.contains(needle) && !e.contains('\n'), "{e}");
        }
        // A key file from before the mapping was recorded: its chunks were mapped by full name.
        let old = std::fs::read(dir.join("hash.key")).unwrap()[..17].to_vec();
        std::fs::write(dir.join("hash.key"), &old).unwrap();
        assert_eq!(store_key(&dir, 2, WorkerMapping::Name).unwrap(), k);
        let e = store_key(&dir, 2, WorkerMapping::Content).unwrap_err();
        assert!(e.contains("workers.mapping = \"name\""), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
