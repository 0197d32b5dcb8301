//! Starting a router's threads: the state every thread shares, the I/O thread, the workers
//! with their engines and L2 files, core placement, and the hash key (random, or kept beside
//! the L2 files so that names map to the same worker after a restart).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use engine::fw::pipeline::{Engine, EngineConfig};
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, PitCsConfig};
use wire::{fill_random, Limits};

use crate::config::{self, Config};
use crate::dispatch::{Dispatcher, WorkerMapping};
use crate::io::{Io, IoCommand, IoConfig, IoParts, IoWaker, MgmtInput};
use crate::pool::Pool;
use crate::worker::{self, Control, Worker, WorkerLink};
use crate::{mem, LINK_HEADROOM_BYTES};

/// What every thread of a router shares, built before any of them starts.
pub(crate) struct Shared {
    pub(crate) key: HashKey,
    pub(crate) workers: usize,
    pub(crate) mapping: WorkerMapping,
    pub(crate) limits: Limits,
    pub(crate) fib: Arc<Fib>,
    pub(crate) pool: Arc<Pool>,
    pub(crate) links: Vec<Arc<WorkerLink>>,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) start: Instant,
    pub(crate) cs_policy: CsPolicy,
    /// The L2 directory's lock ([`lock_store_dir`]), kept by every worker's L2.
    store_lock: Option<Arc<File>>,
    /// Cores available to the process.
    cores: usize,
}

impl Shared {
    /// Validates `cfg` and builds the shared state: key, FIB, packet pool, worker rings.
    pub(crate) fn new(cfg: &Config) -> Result<Shared, String> {
        cfg.validate()?;
        mem::steady_allocator();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = cfg.worker_count(cores).min(255);
        let mapping = cfg.worker_mapping();
        let (key, store_lock) = if cfg.store.l2_path.is_empty() {
            (random_key(), None)
        } else {
            let dir = Path::new(&cfg.store.l2_path);
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("store.l2_path {}: {e}", dir.display()))?;
            let lock = lock_store_dir(dir)?;
            (store_key(dir, n, mapping)?, Some(Arc::new(lock)))
        };
        let limits = Limits {
            max_packet_bytes: cfg.limits.max_packet_bytes,
            max_name_components: cfg.limits.max_name_components,
            verify_parameters_digest: false,
            ..Limits::default()
        };
        let pool = Arc::new(Pool::new(
            cfg.workers.buffers,
            cfg.limits.max_packet_bytes + LINK_HEADROOM_BYTES,
        ));
        pool.prefault(cfg.workers.prefault_buffers);
        Ok(Shared {
            key,
            workers: n,
            mapping,
            limits,
            fib: Arc::new(Fib::new(key, cfg.fib.capacity, cfg.fib.m)),
            pool,
            links: (0..n)
                .map(|_| Arc::new(WorkerLink::new(cfg.workers.ring_capacity)))
                .collect(),
            stop: Arc::new(AtomicBool::new(false)),
            start: Instant::now(),
            cs_policy: match cfg.cs.policy {
                config::CsPolicy::Lru => CsPolicy::Lru,
                config::CsPolicy::Fifo => CsPolicy::Fifo,
            },
            store_lock,
            cores,
        })
    }

    /// The I/O thread's state, with its listeners bound.
    pub(crate) fn io(
        &self,
        cfg: &Config,
        worker_ctl: Vec<Sender<Control>>,
        mgmt: Sender<MgmtInput>,
        commands: Receiver<IoCommand>,
    ) -> Result<Io, String> {
        let f = &cfg.faces;
        Io::new(
            IoParts {
                cfg: IoConfig {
                    max_faces: f.max_faces,
                    send_queue_bytes: f.send_queue_bytes,
                    udp_mtu: f.udp_mtu,
                    udp_idle_timeout_ms: f.udp_idle_timeout_s.saturating_mul(1000),
                    malformed_limit: f.malformed_limit,
                    limits: self.limits,
                },
                dispatcher: self.dispatcher(),
                pool: self.pool.clone(),
                workers: self.links.clone(),
                worker_ctl,
                mgmt,
                commands,
                stop: self.stop.clone(),
                start: self.start,
            },
            &cfg.listen.unix,
            &cfg.listen.tcp,
            &cfg.listen.udp,
        )
    }

    fn dispatcher(&self) -> Dispatcher {
        Dispatcher::new(self.key, self.workers, self.mapping, self.limits)
    }

    /// Placement: pin only when every thread can have a core of its own, or when told to.
    fn auto_pin(&self, cfg: &Config) -> bool {
        cfg.workers.cores.is_empty() && self.cores > self.workers
    }

    /// Starts one worker thread per control channel, each with its engine and L2 file, onto
    /// `threads`. On an error, the threads already started are in `threads`.
    pub(crate) fn spawn_workers(
        &self,
        cfg: &Config,
        ctl_rx: Vec<Receiver<Control>>,
        io_waker: &Arc<IoWaker>,
        threads: &mut Vec<JoinHandle<()>>,
    ) -> Result<(), String> {
        let auto_pin = self.auto_pin(cfg);
        let prefault_bytes = cfg.workers.prefault_mb << 20;
        let stopped_flushing = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        for (i, rx) in ctl_rx.into_iter().enumerate() {
            let mut engine = self.engine(cfg);
            let tier = open_l2(cfg, i, self.workers)?.map(|t| {
                let h = store::SharedL2Tier::new(t);
                engine.set_slow_tier(Box::new(h.clone()));
                worker::L2::new(
                    h,
                    self.dispatcher(),
                    self.limits,
                    self.links.clone(),
                    cfg.store.admission == config::L2Admission::WriteBack,
                    stopped_flushing.clone(),
                    self.store_lock.clone(),
                )
            });
            let w = Worker::new(
                i,
                engine,
                self.links[i].clone(),
                self.pool.clone(),
                rx,
                io_waker.clone(),
                self.stop.clone(),
                self.start,
                Duration::from_millis(cfg.workers.tick_ms),
                tier,
            );
            let core = cfg
                .workers
                .cores
                .get(i)
                .copied()
                .or(auto_pin.then_some(i + 1));
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
        Ok(())
    }

    /// A worker's engine: its share of the PIT and CS, the shared FIB.
    fn engine(&self, cfg: &Config) -> Engine {
        let n = self.workers;
        let ecfg = EngineConfig {
            pit_cs: PitCsConfig {
                pit_capacity: cfg.pit.capacity.div_ceil(n).max(64),
                cs_capacity: cfg.cs.capacity.div_ceil(n),
                cs_policy: self.cs_policy,
                ..PitCsConfig::default()
            },
            limits: self.limits,
            ..EngineConfig::default()
        };
        Engine::new(self.key, self.fib.clone(), ecfg)
    }

    /// Starts the I/O thread.
    pub(crate) fn spawn_io(&self, cfg: &Config, io: Io) -> Result<JoinHandle<()>, String> {
        let io_core = cfg.workers.io_core.or(self.auto_pin(cfg).then_some(0));
        let prefault_bytes = cfg.workers.prefault_mb << 20;
        spawn(
            "cascade-io".into(),
            Box::new(move || {
                if let Some(c) = io_core {
                    pin_to(c);
                }
                mem::prefault_arena(prefault_bytes);
                io.run();
            }),
        )
    }
}

/// Starts a named thread; the error names it.
pub(crate) fn spawn(name: String, f: Box<dyn FnOnce() + Send>) -> Result<JoinHandle<()>, String> {
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(f)
        .map_err(|e| format!("cannot start thread {name}: {e}"))
}

fn random_key() -> HashKey {
    let mut b = [0u8; 16];
    fill_random(&mut b);
    HashKey::from_bytes(b)
}

/// The lock file in `l2_path`: `flock`ed by the router using the directory, its pid inside.
const LOCK_FILE: &str = "lock";

/// What the error of a router whose L2 directory another router holds says.
const IN_USE: &str = "in use by another router";

/// The exit status `cascade run` gives a [`crate::Router::start`] error: 2 (a usage problem,
/// like a bad configuration) when another router holds the L2 directory, 1 for every other
/// error.
pub fn start_exit_code(err: &str) -> u8 {
    if err.contains(IN_USE) {
        2
    } else {
        1
    }
}

/// Locks the L2 directory for this router: an exclusive `flock` on `<dir>/lock`, which lasts
/// while the returned file is open (every worker's L2 keeps it) and ends with the process
/// however it ends. The lock file holds the process id, so that a second router names the
/// holder in its one-line error.
fn lock_store_dir(dir: &Path) -> Result<File, String> {
    use std::os::fd::AsRawFd;
    let path = dir.join(LOCK_FILE);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(&path)
        .map_err(|e| format!("store.l2_path {}: {e}", path.display()))?;
    // SAFETY: plain syscall on an open descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(format!("store.l2_path {}: {e}", path.display()));
        }
        let holder = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .map_or_else(|| "holder unknown".to_string(), |pid| format!("pid {pid}"));
        return Err(format!(
            "store.l2_path {}: {IN_USE} ({holder})",
            dir.display()
        ));
    }
    // Informative only: the lock is the flock, not the contents.
    let pid = format!("{}\n", std::process::id());
    let _ = f
        .set_len(0)
        .and_then(|()| f.write_all_at(pid.as_bytes(), 0));
    Ok(f)
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
fn store_key(dir: &Path, workers: usize, mapping: WorkerMapping) -> Result<HashKey, String> {
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
        // Shorter than a key file: what an older router left when it crashed while writing
        // the key, before any L2 file was created (they are created after it). A new key.
        Ok(b) if b.len() < KEY_FILE_BYTES => {
            tracing::warn!(
                path = %path.display(),
                bytes = b.len(),
                "partial key file (a crash while it was written): writing a new key"
            );
            new_key(&path, workers, mapping.code(), batch_of(mapping))
        }
        Ok(_) => Err(format!("{}: not a Cascade key file", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            new_key(&path, workers, mapping.code(), batch_of(mapping))
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Writes a new random key to `path` (mode 0600) with the worker count and the mapping, all
/// or nothing: into a temporary file, synced, then renamed over `path` (the directory is
/// synced too), so that a crash leaves either no key file or a whole one.
fn new_key(path: &Path, workers: usize, code: u8, batch: u32) -> Result<HashKey, String> {
    use std::io::Write as _;
    let mut k = [0u8; 16];
    fill_random(&mut k);
    let mut rec = [0u8; KEY_FILE_BYTES];
    rec[..16].copy_from_slice(&k);
    rec[16] = workers as u8;
    rec[17] = code;
    rec[18..].copy_from_slice(&batch.to_le_bytes());
    let tmp = path.with_extension("key.tmp");
    let write = || -> io::Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&rec)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    };
    write().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(HashKey::from_bytes(k))
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
