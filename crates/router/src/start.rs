//! Starting a router's threads: the state every thread shares, the I/O loops (one I/O thread,
//! or one loop per worker when sharded) with their listeners, the workers with their engines and
//! L2 files, core placement, and the hash key (random, or kept beside the L2 files so that
//! names map to the same worker after a restart: [`store_dir`]).

mod listen6;
mod nbcache;
mod nofile;
mod store_dir;

use std::fs::File;
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use engine::fw::pipeline::{Engine, EngineConfig};
use engine::hash::HashKey;
use engine::table::fib::Fib;
use engine::table::pit_cs::{CsPolicy, PitCsConfig};
use face::table::{bind_udp_group, UdpSteering};
use wire::{fill_random, Limits};

use crate::config::{self, Config, Threads};
use crate::dispatch::{Dispatcher, L2Prefixes, WorkerMapping};
use crate::failure::{spawn, Failure};
use store_dir::{l2_prefix_filters, open_l2, open_store_dir, StoreError};

use crate::io::{Io, IoConfig, IoParts, IoWaker};
use crate::mgmt_queue::MgmtSender;
use crate::pool::Pool;
use crate::shard::{FaceOwners, IoHandle, IoHandles, Peers, ShardLink};
use crate::worker::{self, Control, Worker, WorkerLink};
use crate::{mem, LINK_HEADROOM_BYTES};
pub use store_dir::start_exit_code;

/// The L2 store's directory as start-up found it.
enum StoreDir {
    /// No `[store]`: no L2.
    None,
    /// Locked for this router (the lock is kept by every worker's L2).
    Locked(Arc<File>),
    /// A storage fault made the directory unusable: every worker forwards from RAM only.
    Off,
}

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
    /// The first thread that failed, if one has.
    pub(crate) failure: Arc<Failure>,
    pub(crate) start: Instant,
    pub(crate) cs_policy: CsPolicy,
    /// The L2 directory, if the configuration has one.
    store: StoreDir,
    /// Per worker, the prefixes its L2 answers CanBePrefix Interests for (several workers).
    l2_prefixes: Option<L2Prefixes>,
    /// Cores available to the process.
    cores: usize,
    /// How the threads forward (`[workers] threads`, `auto` resolved).
    pub(crate) mode: Threads,
}

/// The I/O loops of a router, ready to run, and how the other threads reach them.
pub(crate) struct Loops {
    /// The loops, in order (one, or one per worker when sharded).
    pub(crate) loops: Vec<Io>,
    /// Their command channels, wakers and face ranges.
    pub(crate) handles: Arc<IoHandles>,
    /// A sharded router's send rings and counters, one per loop (none otherwise).
    pub(crate) shards: Vec<Arc<ShardLink>>,
}

impl Shared {
    /// Validates `cfg` and builds the shared state: key, FIB, packet pool, worker rings.
    pub(crate) fn new(cfg: &Config) -> Result<Shared, String> {
        cfg.validate()?;
        mem::steady_allocator();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = cfg.worker_count(cores).min(255);
        let mapping = cfg.worker_mapping();
        let (key, store) = if cfg.store.l2_path.is_empty() {
            (random_key(), StoreDir::None)
        } else {
            match open_store_dir(Path::new(&cfg.store.l2_path), n, mapping) {
                Ok((key, lock)) => (key, StoreDir::Locked(Arc::new(lock))),
                Err(StoreError::Refused(e)) => return Err(e),
                Err(StoreError::Fault(e)) => {
                    tracing::warn!("{e}: L2 off, forwarding from RAM only");
                    (random_key(), StoreDir::Off)
                }
            }
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
            failure: Arc::new(Failure::default()),
            start: Instant::now(),
            cs_policy: match cfg.cs.policy {
                config::CsPolicy::Lru => CsPolicy::Lru,
                config::CsPolicy::Fifo => CsPolicy::Fifo,
            },
            l2_prefixes: match store {
                StoreDir::Locked(_) => l2_prefix_filters(cfg, n),
                _ => None,
            },
            store,
            cores,
            mode: cfg.thread_mode(cores),
        })
    }

    /// How many I/O loops (face tables) there are: one per worker when sharded, else one.
    fn loops(&self) -> usize {
        if self.mode == Threads::Sharded {
            self.workers
        } else {
            1
        }
    }

    /// The I/O loops with their listeners bound: one (the I/O thread, or the loop the single
    /// worker runs in), or one per worker when sharded, each with its socket of the UDP
    /// listener's group and a range of face ids, the first with the Unix and TCP listeners.
    pub(crate) fn io_loops(
        &self,
        cfg: &Config,
        worker_ctl: &[Sender<Control>],
        mgmt: &MgmtSender,
    ) -> Result<Loops, String> {
        let n = self.loops();
        let (udp, mut steering) = bind_udp(&cfg.listen.udp, n)?;
        let v4 = udp
            .first()
            .and_then(|s| s.local_addr().ok())
            .map(|a| a.port());
        let mut udp = udp.into_iter();
        let mut udp6 = listen6::bind_udp6(cfg, n, &mut steering, v4)?.into_iter();
        let tcp6 = cfg.listen.tcp6_addr()?;
        let f = &cfg.faces;
        let whole = IoConfig {
            max_faces: nofile::max_faces_within_nofile(f.max_faces),
            send_queue_bytes: f.send_queue_bytes,
            udp_mtu: f.udp_mtu,
            udp_idle_timeout_ms: f.udp_idle_timeout_s.saturating_mul(1000),
            malformed_limit: f.malformed_limit,
            bounds: cfg.face_bounds(),
            limits: self.limits,
            spin: Duration::from_micros(cfg.workers.spin_us),
            udp_rx: cfg.workers.udp_io.rx(cfg.workers.udp_gro),
            first_face_id: face::FIRST_FACE_ID,
            face_id_space: cfg.face_id_space(n),
            unix_access: crate::privileges::socket_access(cfg)?,
            stream: cfg.connections.limits(),
            local: cfg.local.policy(),
            congestion_marking: cfg.face_system.general.enable_congestion_marking,
        };
        let share = whole.share(n);
        let owners = FaceOwners::new(n, share.max_faces, share.face_id_space);
        let mut loops = Vec::with_capacity(n);
        let mut handles = Vec::with_capacity(n);
        for i in 0..n {
            let (tx, rx) = channel();
            let (unix, tcp) = if i == 0 {
                (&cfg.listen.unix[..], &cfg.listen.tcp[..])
            } else {
                ("", "")
            };
            let parts = IoParts {
                cfg: IoConfig {
                    first_face_id: owners.first_id(i),
                    ..share.clone()
                },
                dispatcher: self.dispatcher(),
                pool: self.pool.clone(),
                workers: self.links.clone(),
                worker_ctl: worker_ctl.to_vec(),
                mgmt: mgmt.clone(),
                commands: rx,
                stop: self.stop.clone(),
                start: self.start,
            };
            let mut io = Io::new(parts, unix, tcp, udp.next())?;
            let explicit = cfg.listen.tcp6 != config::listen6::AUTO;
            let v4_port = io.bound().tcp.map(|a| a.port());
            let tcp6 = (tcp6.filter(|_| i == 0)).map(|a| {
                if explicit {
                    a
                } else {
                    config::listen6::port_of(a, v4_port)
                }
            });
            io.listen_v6(tcp6, udp6.next(), explicit)?;
            if i == 0 {
                io.listen_ws(&cfg.listen)?;
            }
            handles.push(IoHandle {
                commands: tx,
                waker: io.waker(),
            });
            loops.push(io);
        }
        let mut shards = Vec::new();
        if n > 1 {
            shards = (handles.iter())
                .map(|h| Arc::new(ShardLink::new(cfg.workers.ring_capacity, h.waker.clone())))
                .collect();
            // Mirrors need a socket of the group in every loop.
            let group = loops[0].bound().udp.filter(|_| steering.sockets() == n);
            for (i, io) in loops.iter_mut().enumerate() {
                let peers = Peers::new(i, &handles, owners, group);
                io.join_shards(i, shards.clone(), owners, peers);
            }
        }
        // The multicast faces are the first loop's (the others send to them through its ring).
        loops[0].open_multicast(&cfg.face_system);
        Ok(Loops {
            loops,
            handles: Arc::new(IoHandles::new(handles, owners, steering)),
            shards,
        })
    }

    fn dispatcher(&self) -> Dispatcher {
        Dispatcher::new(self.key, self.workers, self.mapping, self.limits)
            .with_l2_prefixes(self.l2_prefixes.clone())
    }

    /// Placement: pin only when every thread can have a core of its own, or when told to.
    fn auto_pin(&self, cfg: &Config) -> bool {
        let threads = match self.mode {
            Threads::Sharded => self.workers,
            _ => self.workers + 1,
        };
        cfg.workers.cores.is_empty() && self.cores >= threads
    }

    /// Starts one worker thread per control channel, each with its engine and L2 file, onto
    /// `threads`; or, when the workers run inside I/O loops (one thread, or sharded), returns
    /// them in order, worker `i` woken through loop `i` (`wakers`). On an error, the threads
    /// already started are in `threads`.
    pub(crate) fn spawn_workers(
        &self,
        cfg: &Config,
        ctl_rx: Vec<Receiver<Control>>,
        wakers: &[Arc<IoWaker>],
        threads: &mut Vec<JoinHandle<()>>,
    ) -> Result<Vec<Worker>, String> {
        let inline = self.mode != Threads::IoWorkers;
        let mut workers = Vec::new();
        let auto_pin = self.auto_pin(cfg);
        let prefault_bytes = cfg.workers.prefault_mb << 20;
        let stopped_flushing = Arc::new(AtomicUsize::new(0));
        for (i, rx) in ctl_rx.into_iter().enumerate() {
            let mut engine = self.engine(cfg);
            let filter = nbcache::attach(cfg, i, self.workers, &mut engine)?;
            let (tier, l2_off) = self.worker_l2(cfg, i, &mut engine, &stopped_flushing, filter)?;
            let waker = &wakers[if inline { i } else { 0 }];
            let mut w = Worker::new(
                i,
                engine,
                self.links[i].clone(),
                self.pool.clone(),
                rx,
                waker.clone(),
                self.stop.clone(),
                self.start,
                Duration::from_millis(cfg.workers.tick_ms),
                Duration::from_micros(cfg.workers.spin_us),
                tier,
                l2_off,
            );
            if inline {
                if prefault_bytes > 0 {
                    w.prefault();
                }
                let _ = self.links[i].host.set(waker.clone());
                workers.push(w);
                continue;
            }
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
                    if prefault_bytes > 0 {
                        mem::prefault_arena(prefault_bytes);
                        mem::prefault_stack(mem::LOOP_STACK_PREFAULT_BYTES);
                        w.prefault();
                    }
                    w.run();
                }),
                &self.stop,
                &self.failure,
            )?);
        }
        Ok(workers)
    }

    /// Worker `i`'s L2 (attached to its `engine`), and whether a storage fault turned it off
    /// at open (logged here, in one line).
    fn worker_l2(
        &self,
        cfg: &Config,
        i: usize,
        engine: &mut Engine,
        stopped_flushing: &Arc<AtomicUsize>,
        filter: Option<Arc<store::CountingBloom>>,
    ) -> Result<(Option<worker::L2>, bool), String> {
        let lock = match &self.store {
            StoreDir::None => return Ok((None, false)),
            StoreDir::Off => return Ok((None, true)),
            StoreDir::Locked(lock) => lock,
        };
        let link = filter.map(|filter| store::FilterLink {
            filter,
            key: self.key,
        });
        let prefixes = (self.l2_prefixes.as_ref()).map(|f| store::FilterLink {
            filter: f[i].clone(),
            key: self.key,
        });
        let tier = match open_l2(cfg, i, self.workers, link, prefixes) {
            Ok(t) => t,
            Err(StoreError::Refused(e)) => return Err(e),
            Err(StoreError::Fault(e)) => {
                tracing::warn!(worker = i, "{e}: L2 off, forwarding from RAM only");
                // It hands nothing over at a stop: counted as done at once, so that the
                // workers with an L2 do not wait for it until the stop's deadline.
                stopped_flushing.fetch_add(1, Ordering::SeqCst);
                return Ok((None, true));
            }
        };
        let h = store::SharedL2Tier::new(tier);
        engine.set_slow_tier(Box::new(h.clone()));
        let mut l2 = worker::L2::new(
            h,
            self.dispatcher(),
            self.limits,
            self.links.clone(),
            cfg.store.admission == config::L2Admission::WriteBack,
            stopped_flushing.clone(),
            Some(lock.clone()),
        );
        l2.blocking = cfg.store.io == config::StoreIo::Blocking;
        l2.back_pressure = cfg.store.back_pressure;
        Ok((Some(l2), false))
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
            pit_limits: cfg.pit_limits(self.loops()),
            limits: self.limits,
            ..EngineConfig::default()
        };
        Engine::new(self.key, self.fib.clone(), ecfg)
    }

    /// Starts I/O loop `i`: the I/O thread (`cascade-io`), or a sharded router's loop `i`
    /// (`cascade-s<i>`, placed as worker `i`).
    pub(crate) fn spawn_io(
        &self,
        cfg: &Config,
        i: usize,
        io: Io,
    ) -> Result<JoinHandle<()>, String> {
        let auto = self.auto_pin(cfg);
        let (name, io_core) = if self.mode == Threads::Sharded {
            let core = cfg.workers.cores.get(i).copied();
            (format!("cascade-s{i}"), core.or(auto.then_some(i)))
        } else {
            (
                "cascade-io".into(),
                cfg.workers.io_core.or(auto.then_some(0)),
            )
        };
        let prefault_bytes = cfg.workers.prefault_mb << 20;
        spawn(
            name,
            Box::new(move || {
                if let Some(c) = io_core {
                    pin_to(c);
                }
                if prefault_bytes > 0 {
                    mem::prefault_arena(prefault_bytes);
                    mem::prefault_stack(mem::LOOP_STACK_PREFAULT_BYTES);
                }
                io.run();
            }),
            &self.stop,
            &self.failure,
        )
    }
}

/// The UDP listener (`""`: none) as a group of `n` sockets steered by remote (fewer if the
/// kernel refuses the steering; one with `n` = 1). Errors name the flag.
fn bind_udp(udp: &str, n: usize) -> Result<(Vec<UdpSocket>, UdpSteering), String> {
    if udp.is_empty() {
        return Ok((Vec::new(), UdpSteering::over(n)));
    }
    let addr: SocketAddr = udp
        .parse()
        .map_err(|_| format!("bad UDP address {udp:?} (--udp ADDR)"))?;
    let (group, steering) = bind_udp_group(addr, n).map_err(|e| {
        format!("cannot bind UDP {addr}: {e} (change it with --udp ADDR, or --udp '' to disable)")
    })?;
    if steering.sockets() < n {
        tracing::warn!(
            "UDP {addr}: the kernel refused to steer remotes over {n} sockets; the first thread \
             receives every datagram"
        );
    }
    Ok((group, steering))
}

fn random_key() -> HashKey {
    let mut b = [0u8; 16];
    fill_random(&mut b);
    HashKey::from_bytes(b)
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
