//! The I/O thread: polls the faces and moves packets between them and the workers.
//!
//! One `mio` poll loop drives the [`FaceTable`] (the listeners, the faces, their send queues:
//! the `face` crate). Every received link-layer packet is classified by [`Dispatcher`] (parsed
//! only as far as the name and its hash) and copied into a pool buffer on the ring of the worker
//! that owns the name; fragments go through the face's reassembler first. Worker outputs come
//! back on one ring per worker and go into the faces' send queues. Management's commands
//! (create, update, close, list faces; send a packet) are served between turns.
//!
//! With one worker run inline ([`Io::run_inline`], `[workers] threads = "one"`), each turn
//! also runs that worker's engine on what it received and moves its output into the send
//! queues before the next poll; the poll's idle timeout then honours the worker's tick and its
//! L2 polling, and its control messages wake this thread.
//!
//! With `threads = "sharded"` there is one such loop per worker, each over its own shard of
//! the faces ([`crate::shard`]): a packet it receives for another loop's worker goes onto that
//! worker's input ring, and an output of its worker for a face another loop holds onto that
//! loop's send ring, which the loop drains into its face queues every turn.
//!
//! Reads are bounded per event (a busy face is revisited on the next turn instead of starving
//! the others), queues are bounded, and a face that sends malformed packets is counted and,
//! past a limit, closed.

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use engine::fw::pipeline::FaceInfo;
use face::link::{encode_link, link_len};
use face::lp_frag::{LpHeaders, PitToken, Reassembled};
use face::table::{
    bind_unix_with, Accepted, Face, FaceConfig, FaceRx, FaceSink, FaceTable, Listener, Notice,
    UdpLink,
};
use face::{FaceId, FaceParams, FaceUpdate, UpdateError};
use mio::net::TcpListener;
use mio::{Events, Poll, Waker};
use wire::nfd::FaceEventKind;
use wire::{Limits, LpPacketView};

use crate::dispatch::{Dispatcher, Route};
use crate::mgmt_queue::MgmtSender;
use crate::pool::{Pkt, PktKind, Pool};
use crate::privileges::{set_socket_access, SocketAccess};
use crate::shard::{FaceOwners, Peers, ShardLink, ShardStats, MIRROR_COUNTS_MS};
use crate::worker::{spin_until, Control, Wake, Worker, WorkerLink};

pub use face::table::{CreateError, FaceCounters, FaceDesc, FIRST_FACE_ID};

mod cert_fetch;
mod listen6;
mod multicast;
mod ws;

// The faces' ids are the engine's.
const _: fn(engine::table::pit_cs::FaceId) -> FaceId = |id| id;

/// Mgmt commands handled per turn.
const COMMANDS_PER_TURN: usize = 64;

/// The I/O thread's wake-up handle.
#[derive(Debug)]
pub struct IoWaker {
    waker: Waker,
    sleeping: AtomicBool,
}

impl Wake for IoWaker {
    #[inline]
    fn wake(&self) {
        if self.sleeping.swap(false, Ordering::SeqCst) {
            let _ = self.waker.wake();
        }
    }

    fn wake_now(&self) {
        IoWaker::wake_now(self);
    }
}

impl IoWaker {
    /// Wakes the thread even if it is not polling yet (control plane).
    pub fn wake_now(&self) {
        self.sleeping.store(false, Ordering::SeqCst);
        let _ = self.waker.wake();
    }
}

/// Requests to the I/O thread from management and start-up.
#[derive(Debug)]
pub enum IoCommand {
    /// Send these bytes (a whole link-layer packet) on a face.
    Send {
        /// Face.
        face: FaceId,
        /// Bytes.
        bytes: Vec<u8>,
    },
    /// Create a UDP face to `remote`.
    CreateUdp {
        /// Remote endpoint.
        remote: SocketAddr,
        /// Persistency, MTU (default: the configured UDP MTU), link options.
        params: FaceParams,
        /// Reply.
        reply: Sender<Result<FaceDesc, CreateError>>,
    },
    /// Create a unicast Ethernet face on an interface's channel.
    CreateEther {
        /// The interface.
        ifname: String,
        /// The remote.
        remote: face::netif::MacAddr,
        /// Persistency, MTU (default: the interface's), link options.
        params: FaceParams,
        /// Reply.
        reply: Sender<Result<FaceDesc, CreateError>>,
    },
    /// Take over a connected TCP stream as a face.
    AdoptTcp {
        /// The stream.
        stream: std::net::TcpStream,
        /// Persistency and link options.
        params: FaceParams,
        /// Reply.
        reply: Sender<Result<FaceDesc, CreateError>>,
    },
    /// Create a permanent TCP face that is DOWN and redials `remote`.
    DialTcp {
        /// Remote endpoint.
        remote: SocketAddr,
        /// Link options (the face is permanent).
        params: FaceParams,
        /// Reply.
        reply: Sender<Result<FaceDesc, CreateError>>,
    },
    /// Close a face.
    Destroy {
        /// Face.
        id: FaceId,
        /// Reply: the face as it was, or `None` if there was none.
        reply: Sender<Option<FaceDesc>>,
    },
    /// Change a face (`faces/update`).
    Update {
        /// Face.
        id: FaceId,
        /// The changes.
        update: FaceUpdate,
        /// Reply: the face after the change, or why nothing changed.
        reply: Sender<Result<FaceDesc, UpdateError>>,
    },
    /// List every face.
    List {
        /// Reply.
        reply: Sender<Vec<FaceDesc>>,
    },
    /// What the face table's bounds refused or evicted.
    Bounds {
        /// Reply.
        reply: Sender<face::table::BoundCounters>,
    },
    /// Change the face table's limits that can change while it runs (a reload).
    Limits(face::table::RuntimeLimits),
    /// List the listening channels' local URIs.
    Channels {
        /// Reply.
        reply: Sender<Vec<String>>,
    },
    /// Make a connection another loop's listener accepted a face of this loop (a sharded
    /// router's stream faces are handed out in turn).
    Adopt(Accepted),
    /// Mirror another loop's UDP face (new or changed): send its packets on this loop's own
    /// socket of the group.
    Mirror {
        /// Face.
        id: FaceId,
        /// Its remote, local address and MTU.
        link: UdpLink,
    },
    /// Another loop's UDP face closed: forget its mirror.
    Unmirror(FaceId),
    /// What other loops' mirrors of this loop's faces sent (added to the faces' counters).
    Counts(Vec<(FaceId, FaceCounters)>),
}

/// What the I/O thread tells management.
#[derive(Debug)]
pub enum MgmtInput {
    /// A management Interest (the received bytes, possibly an LpPacket).
    Interest {
        /// Incoming face.
        face: FaceId,
        /// The face is local.
        local: bool,
        /// Bytes.
        bytes: Vec<u8>,
    },
    /// A face was created or destroyed (as it is now): a `faces/events` notification; a
    /// destroyed face's routes go.
    FaceEvent(FaceEventKind, Box<FaceDesc>),
    /// The HTTP endpoint asks for the datasets' figures ([`mgmt::StatusView`]).
    Status(std::sync::mpsc::Sender<Box<mgmt::StatusView>>),
    /// A reload of the static faces, routes and strategies (`crate::reload`), and where the
    /// outcome goes.
    Reload(
        Box<crate::reload::Statics>,
        std::sync::mpsc::Sender<Result<crate::reload::Reloaded, String>>,
    ),
}

/// Settings of the I/O thread.
#[derive(Debug, Clone)]
pub struct IoConfig {
    /// Most faces.
    pub max_faces: usize,
    /// Stream send queue bound.
    pub send_queue_bytes: usize,
    /// UDP MTU.
    pub udp_mtu: usize,
    /// Idle timeout of on-demand UDP faces.
    pub udp_idle_timeout_ms: u64,
    /// Malformed packets before a face is closed.
    pub malformed_limit: u64,
    /// What remotes can make the face table hold.
    pub bounds: face::table::FaceBounds,
    /// Packet limits.
    pub limits: Limits,
    /// How long the thread, idle, polls without blocking before it sleeps in the poll.
    pub spin: Duration,
    /// The first face id the table gives out (a sharded router's loops each have a range).
    pub first_face_id: FaceId,
    /// How face ids split into slot and generation: the same in every loop and worker.
    pub face_id_space: face::table::FaceIdSpace,
    /// How the UDP sockets receive.
    pub udp_rx: face::UdpRx,
    /// The Unix socket's mode and group, set before it takes its path.
    pub unix_access: SocketAccess,
    /// Limits of connection faces (send-queue budget, timeouts, connections per address).
    pub stream: face::StreamLimits,
    /// Who may connect to the Unix socket; loopback TCP's scope (`[local]`).
    pub local: face::table::LocalPolicy,
    /// `face_system.general.enable_congestion_marking`.
    pub congestion_marking: bool,
}

impl IoConfig {
    /// One loop's share of the bounds when `shards` loops hold the faces: the most faces (and
    /// so the face id range), the on-demand quota and the reassembly budget, each divided
    /// (rounded up; the quota rounded down, so that it stays below the most faces, and at
    /// least one if there is one). The limit per host is each loop's whole: a host's remotes
    /// (its ports) are spread over the loops, unevenly, so a divided limit would refuse a
    /// host's remotes while it holds fewer faces than the limit.
    pub fn share(&self, shards: usize) -> IoConfig {
        let n = shards.max(1);
        let mut c = self.clone();
        c.max_faces = self.max_faces.div_ceil(n);
        let b = &mut c.bounds;
        if b.max_on_demand_faces > 0 {
            b.max_on_demand_faces = (b.max_on_demand_faces / n).max(1);
        }
        b.reassembly_budget_bytes = b.reassembly_budget_bytes.div_ceil(n);
        b.unproven_send_bytes_per_s = b.unproven_send_bytes_per_s.div_ceil(n as u64);
        b.on_demand_faces_per_s = b.on_demand_faces_per_s.div_ceil(n as u64);
        b.on_demand_faces_burst = b.on_demand_faces_burst.div_ceil(n as u64);
        c.stream.send_queue_budget_bytes = self.stream.send_queue_budget_bytes.div_ceil(n);
        c
    }
}

/// The listeners actually bound (with ephemeral ports resolved).
#[derive(Debug, Clone, Default)]
pub struct Bound {
    /// Unix socket path.
    pub unix: Option<PathBuf>,
    /// TCP address.
    pub tcp: Option<SocketAddr>,
    /// UDP address.
    pub udp: Option<SocketAddr>,
    /// WebSocket address.
    pub ws: Option<SocketAddr>,
    /// IPv6 TCP address (`[listen] tcp6`).
    pub tcp6: Option<SocketAddr>,
    /// IPv6 UDP address (`[listen] udp6`).
    pub udp6: Option<SocketAddr>,
}

/// The I/O thread.
pub struct Io {
    poll: Poll,
    waker: Arc<IoWaker>,
    faces: FaceTable,
    rx: Rx,
    commands: Receiver<IoCommand>,
    stop: Arc<AtomicBool>,
    last_sweep_ms: u64,
    last_counts_ms: u64,
    bound: Bound,
    spin: Duration,
    /// The worker this thread runs itself (`[workers] threads = "one"` or `"sharded"`), if
    /// any.
    inline: Option<Box<Worker>>,
    /// A sharded router's other loops (none otherwise).
    shard: Option<Shard>,
}

/// One loop of a sharded router: which it is, every loop's send ring, who holds which face.
struct Shard {
    me: usize,
    links: Vec<Arc<ShardLink>>,
    owners: FaceOwners,
}

/// What the I/O thread needs from the router.
pub struct IoParts {
    /// Settings.
    pub cfg: IoConfig,
    /// Classifier.
    pub dispatcher: Dispatcher,
    /// Buffers.
    pub pool: Arc<Pool>,
    /// Worker rings.
    pub workers: Vec<Arc<WorkerLink>>,
    /// Worker control channels.
    pub worker_ctl: Vec<Sender<Control>>,
    /// Management input.
    pub mgmt: MgmtSender,
    /// Commands from management.
    pub commands: Receiver<IoCommand>,
    /// Stop flag.
    pub stop: Arc<AtomicBool>,
    /// The router's time origin.
    pub start: Instant,
}

impl Io {
    /// Creates the poll and binds the Unix and TCP listeners (empty string = off), and listens
    /// on `udp`, if any. Errors name what failed.
    pub fn new(
        parts: IoParts,
        unix: &str,
        tcp: &str,
        udp: Option<UdpSocket>,
    ) -> Result<Io, String> {
        let poll = Poll::new().map_err(|e| format!("cannot create poll: {e}"))?;
        let waker = Waker::new(poll.registry(), face::table::DRIVER_TOKEN)
            .map_err(|e| format!("waker: {e}"))?;
        let registry = poll
            .registry()
            .try_clone()
            .map_err(|e| format!("poll registry: {e}"))?;
        let cfg = parts.cfg;
        let faces = FaceTable::with_id_space(
            registry,
            FaceConfig {
                max_faces: cfg.max_faces,
                send_queue_bytes: cfg.send_queue_bytes,
                udp_mtu: cfg.udp_mtu,
                udp_idle_timeout_ms: cfg.udp_idle_timeout_ms,
                malformed_limit: cfg.malformed_limit,
                max_packet_bytes: cfg.limits.max_packet_bytes,
                bounds: cfg.bounds,
                udp_rx: cfg.udp_rx,
                stream: cfg.stream,
                local: cfg.local.clone(),
                congestion_marking: cfg.congestion_marking,
            },
            cfg.first_face_id,
            cfg.face_id_space,
        );
        let n_workers = parts.workers.len();
        let mut io = Io {
            poll,
            waker: Arc::new(IoWaker {
                waker,
                sleeping: AtomicBool::new(false),
            }),
            faces,
            rx: Rx {
                dispatcher: parts.dispatcher,
                pool: parts.pool,
                workers: parts.workers,
                worker_ctl: parts.worker_ctl,
                mgmt: parts.mgmt,
                wake: vec![false; n_workers],
                start: parts.start,
                me: None,
                peers: None,
                counts: ShardStats::default(),
                cert_fetches: cert_fetch::CertFetches::default(),
            },
            commands: parts.commands,
            stop: parts.stop,
            last_sweep_ms: 0,
            last_counts_ms: 0,
            bound: Bound::default(),
            spin: cfg.spin,
            inline: None,
            shard: None,
        };
        io.listen(unix, tcp, udp, cfg.unix_access)?;
        Ok(io)
    }

    /// Binds the listeners (empty string = off); the Unix socket gets `access` before it takes
    /// its path.
    fn listen(
        &mut self,
        unix: &str,
        tcp: &str,
        udp: Option<UdpSocket>,
        access: SocketAccess,
    ) -> Result<(), String> {
        let register = |e: std::io::Error| format!("register listener: {e}");
        if !unix.is_empty() {
            let path = PathBuf::from(unix);
            let set = |p: &Path| set_socket_access(p, access).map_err(std::io::Error::other);
            let l = bind_unix_with(&path, set).map_err(|e| {
                format!(
                    "cannot listen on Unix socket {}: {e} (choose another path with --unix PATH, or --unix '' to disable)",
                    path.display()
                )
            })?;
            self.bound.unix = Some(path.clone());
            self.faces
                .add_listener(Listener::Unix(l, path))
                .map_err(register)?;
        }
        if !tcp.is_empty() {
            let addr: SocketAddr = tcp
                .parse()
                .map_err(|_| format!("bad TCP address {tcp:?} (--tcp ADDR)"))?;
            let l = TcpListener::bind(addr)
                .map_err(|e| format!("cannot listen on TCP {addr}: {e} (change it with --tcp ADDR, or --tcp '' to disable)"))?;
            let local = l.local_addr().map_err(|e| e.to_string())?;
            self.bound.tcp = Some(local);
            self.faces
                .add_listener(Listener::Tcp(l, local))
                .map_err(register)?;
        }
        if let Some(s) = udp {
            let local = s.local_addr().map_err(|e| e.to_string())?;
            self.bound.udp = Some(local);
            self.faces
                .add_udp_socket(s, true)
                .map_err(|e| format!("UDP {local}: {e}"))?;
            if let Some(e) = self.faces.udp_ring_failure() {
                tracing::warn!("UDP {local}: no io_uring receive ({e}): recvmmsg instead");
            }
        }
        Ok(())
    }

    /// The wake handle workers and management use.
    pub fn waker(&self) -> Arc<IoWaker> {
        self.waker.clone()
    }

    /// What was bound.
    pub fn bound(&self) -> Bound {
        self.bound.clone()
    }

    /// Runs `worker` inside this thread's loop instead of on a thread of its own: after each
    /// receive the loop runs its engine on what came in and queues its output for sending in
    /// the same turn (no ring hand-off between threads, no wake-up). The worker's link wakes
    /// this thread (`WorkerLink::host`). With one worker, this loop is the router's only one;
    /// with several (`threads = "sharded"`), each has its loop.
    pub fn run_inline(&mut self, worker: Worker) {
        self.rx.me = Some(worker.index());
        self.inline = Some(Box::new(worker));
    }

    /// Makes this loop loop `me` of a sharded router: `links` are every loop's send rings,
    /// `owners` tells which loop holds a face, and `peers` how it reaches the other loops
    /// (where its accepted connections go, who mirrors its UDP faces).
    pub(crate) fn join_shards(
        &mut self,
        me: usize,
        links: Vec<Arc<ShardLink>>,
        owners: FaceOwners,
        peers: Peers,
    ) {
        debug_assert_eq!(links.len(), owners.shards());
        self.rx.peers = Some(peers);
        self.shard = Some(Shard { me, links, owners });
    }

    /// Runs the loop until the stop flag is set.
    pub fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        let mut more = false;
        while !self.stop.load(Ordering::Relaxed) {
            let mut busy = std::mem::take(&mut more) | self.drain_outputs();
            busy |= self.handle_commands();
            self.faces.flush(&mut self.rx);
            let now = self.rx.now_ms();
            if now >= self.last_sweep_ms + 1000 {
                self.last_sweep_ms = now;
                self.faces.sweep(now, &mut self.rx);
            }
            if now >= self.last_counts_ms + MIRROR_COUNTS_MS && self.faces.mirrors() > 0 {
                self.last_counts_ms = now;
                if let Some(p) = &mut self.rx.peers {
                    p.send_counts(&mut self.faces);
                }
            }
            let pending = self.faces.start_turn();
            let polled = if busy || pending {
                self.poll.poll(&mut events, Some(Duration::ZERO))
            } else {
                self.idle_poll(&mut events)
            };
            if let Err(e) = polled {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    tracing::error!("poll: {e}");
                    break;
                }
            }
            self.waker.sleeping.store(false, Ordering::SeqCst);
            for ev in events.iter() {
                self.faces.on_event(
                    ev.token(),
                    ev.is_readable() || ev.is_read_closed(),
                    ev.is_writable(),
                    &mut self.rx,
                );
            }
            self.faces.serve_pending(&mut self.rx);
            if self.inline.is_some() {
                // Other loops' workers start on what this turn received for them at once.
                self.wake_workers();
                more = self.forward_inline();
            }
            self.wake_workers();
            if let Some(s) = &self.shard {
                s.links[s.me].publish(&self.rx.counts);
            }
        }
        // Clean shutdown: remove the Unix socket file.
        self.faces.remove_socket_files();
        if let Some(w) = self.inline.take() {
            w.finish();
        }
    }

    /// Runs the inline worker on what this turn received, its outputs going straight into the
    /// face queues; true if it may have more to do (the step bound was reached).
    fn forward_inline(&mut self) -> bool {
        let (Some(w), Some(me)) = (self.inline.as_mut(), self.rx.me) else {
            return false;
        };
        let link = self.rx.workers[me].clone();
        // At most as many batches as a full input ring holds, before the thread receives again.
        let steps = link.input.capacity() / engine::fw::pipeline::MAX_BATCH + 1;
        for _ in 0..steps {
            let worked = w.step();
            // The worker's output ring is drained after every batch, so that it never fills.
            let left = match &self.shard {
                None => drain_output(&link, &mut self.faces, &self.rx.pool),
                Some(s) => drain_ring(&link.output, |p| {
                    s.deliver(p, &mut self.faces, &mut self.rx);
                }),
            };
            if !worked && !left {
                return false;
            }
        }
        true
    }

    /// Polls with nothing to do: spins first (up to the spin budget) on the workers' output
    /// rings, the stop flag and non-blocking polls, then sleeps in the poll until an event, a
    /// worker's wake-up or the 100 ms timeout.
    fn idle_poll(&mut self, events: &mut Events) -> std::io::Result<()> {
        let (poll, stop) = (&mut self.poll, &self.stop);
        let waiting = Waiting::of(&self.rx, self.shard.as_ref());
        let mut polled = Ok(false);
        let ready = spin_until(self.spin, || {
            if waiting.any() || stop.load(Ordering::Relaxed) {
                return true;
            }
            // Events a poll returns are not returned again: they go back to the loop.
            polled = poll
                .poll(events, Some(Duration::ZERO))
                .map(|()| !events.is_empty());
            !matches!(polled, Ok(false))
        });
        match polled {
            Ok(true) => return Ok(()),
            Err(e) => return Err(e),
            Ok(false) if ready => return self.poll.poll(events, Some(Duration::ZERO)),
            Ok(false) => {}
        }
        // An inline worker's clock advances, and its L2 completions are polled, as often as its
        // own thread would do it.
        let nap = self
            .inline
            .as_mut()
            .map_or(IDLE_POLL, |w| w.idle().min(IDLE_POLL));
        // A reliable face's next retransmission or Ack.
        let nap = (self.faces.next_reliability_ms())
            .map(|t| Duration::from_millis(t.saturating_sub(self.rx.now_ms())))
            .map_or(nap, |d| d.min(nap));
        self.waker.sleeping.store(true, Ordering::SeqCst);
        // After `sleeping` is set, a control message for the inline worker, input from another
        // loop or a packet on this loop's send ring wakes the poll: take those sent before.
        let control = self.inline.as_mut().is_some_and(|w| w.apply_control());
        let waiting = Waiting::of(&self.rx, self.shard.as_ref());
        let timeout = if control || waiting.any() {
            self.waker.sleeping.store(false, Ordering::SeqCst);
            Duration::ZERO
        } else {
            nap
        };
        self.poll.poll(events, Some(timeout))
    }

    fn wake_workers(&mut self) {
        let rx = &mut self.rx;
        for (flag, link) in rx.wake.iter_mut().zip(&rx.workers) {
            if std::mem::take(flag) {
                link.wake();
            }
        }
    }

    /// Moves worker outputs into face queues (a sharded loop's: what the other loops' workers
    /// put on its send ring); true if a ring had to be left non-empty.
    fn drain_outputs(&mut self) -> bool {
        if let Some(s) = &self.shard {
            let (faces, pool) = (&mut self.faces, &self.rx.pool);
            return drain_ring(&s.links[s.me].sends, |p| send_pkt(faces, pool, p));
        }
        let mut busy = false;
        for w in &self.rx.workers {
            busy |= drain_output(w, &mut self.faces, &self.rx.pool);
        }
        busy
    }

    /// Handles management's commands; true if more are waiting.
    fn handle_commands(&mut self) -> bool {
        for _ in 0..COMMANDS_PER_TURN {
            let c = match self.commands.try_recv() {
                Ok(c) => c,
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Disconnected) => {
                    self.stop.store(true, Ordering::SeqCst);
                    return false;
                }
            };
            self.command(c);
        }
        true
    }

    fn command(&mut self, c: IoCommand) {
        let (faces, rx) = (&mut self.faces, &mut self.rx);
        match c {
            IoCommand::Send { face, bytes } => {
                let now_ms = rx.start.elapsed().as_millis() as u64;
                let limits = rx.dispatcher.limits();
                rx.cert_fetches.on_send(face, &bytes, limits, now_ms);
                let kind = PktKind::of_link(&bytes);
                faces.send(face, kind.into(), &bytes);
            }
            IoCommand::CreateUdp {
                remote,
                params,
                reply,
            } => {
                let _ = reply.send(faces.create_udp(remote, &params, rx));
            }
            IoCommand::CreateEther {
                ifname,
                remote,
                params,
                reply,
            } => {
                let _ = reply.send(faces.create_ether(&ifname, remote, &params, rx));
            }
            IoCommand::AdoptTcp {
                stream,
                params,
                reply,
            } => {
                let _ = reply.send(faces.adopt_tcp(stream, &params, rx));
            }
            IoCommand::DialTcp {
                remote,
                params,
                reply,
            } => {
                let _ = reply.send(faces.dial_tcp(remote, &params, rx));
            }
            IoCommand::Destroy { id, reply } => {
                let _ = reply.send(faces.close(id, "destroyed by management", rx));
            }
            IoCommand::Update { id, update, reply } => {
                let _ = reply.send(faces.update(id, &update, rx));
            }
            IoCommand::List { reply } => {
                let _ = reply.send(faces.list());
            }
            IoCommand::Channels { reply } => {
                let _ = reply.send(faces.channels());
            }
            IoCommand::Bounds { reply } => {
                let _ = reply.send(faces.bound_counters());
            }
            IoCommand::Limits(l) => faces.set_runtime_limits(l),
            IoCommand::Adopt(conn) => {
                faces.adopt(conn, rx);
            }
            IoCommand::Mirror { id, link } => {
                if let Some(p) = &rx.peers {
                    faces.mirror_udp(id, link, p.mirror_sequence(id));
                }
            }
            // What the mirror sent since its last counts is not counted (the face is gone).
            IoCommand::Unmirror(id) => faces.unmirror(id, |_| {}),
            IoCommand::Counts(counts) => {
                for (id, c) in &counts {
                    faces.add_counts(*id, c);
                }
            }
        }
    }
}

/// What an idle loop waits for besides its sockets: the workers' outputs (an I/O thread), or
/// its own worker's input and output and its send ring (a loop with its worker inside).
struct Waiting<'a> {
    outputs: &'a [Arc<WorkerLink>],
    inline: Option<&'a WorkerLink>,
    sends: Option<&'a ArrayQueue<Pkt>>,
}

impl<'a> Waiting<'a> {
    fn of(rx: &'a Rx, shard: Option<&'a Shard>) -> Self {
        let inline = rx.me.map(|i| &*rx.workers[i]);
        Waiting {
            outputs: if inline.is_some() { &[] } else { &rx.workers },
            inline,
            sends: shard.map(|s| &s.links[s.me].sends),
        }
    }

    fn any(&self) -> bool {
        self.outputs.iter().any(|w| !w.output.is_empty())
            || self
                .inline
                .is_some_and(|w| !w.input.is_empty() || !w.output.is_empty())
            || self.sends.is_some_and(|s| !s.is_empty())
    }
}

impl Shard {
    /// Sends an output of this loop's worker: into the face's queue if this loop holds the
    /// face or a mirror of it, else onto the send ring of the loop that holds it (dropped and
    /// counted if it is full).
    #[inline]
    fn deliver(&self, p: Pkt, faces: &mut FaceTable, rx: &mut Rx) {
        let owner = self.owners.owner(p.face);
        if owner == self.me {
            rx.counts.kept_out += 1;
            send_pkt(faces, &rx.pool, p);
            return;
        }
        if faces.send(p.face, p.kind.into(), p.bytes()) {
            rx.counts.direct_out += 1;
            rx.pool.put(p.buf);
            return;
        }
        match self.links[owner].sends.push(p) {
            Ok(()) => {
                rx.counts.crossed_out += 1;
                rx.wake[owner] = true;
            }
            Err(p) => {
                rx.counts.send_ring_full += 1;
                rx.pool.put(p.buf);
            }
        }
    }
}

/// The longest the thread sleeps in its poll with nothing to do.
const IDLE_POLL: Duration = Duration::from_millis(100);

/// Moves one worker's outputs into face queues (at most a ring's capacity); true if the ring
/// had to be left non-empty.
fn drain_output(w: &WorkerLink, faces: &mut FaceTable, pool: &Pool) -> bool {
    drain_ring(&w.output, |p| send_pkt(faces, pool, p))
}

/// Hands the packets of `ring` to `deliver` (at most the ring's capacity); true if the ring
/// had to be left non-empty.
#[inline]
fn drain_ring(ring: &ArrayQueue<Pkt>, mut deliver: impl FnMut(Pkt)) -> bool {
    for _ in 0..ring.capacity() {
        let Some(p) = ring.pop() else {
            return false;
        };
        deliver(p);
    }
    !ring.is_empty()
}

/// Queues a packet on its face and gives its buffer back.
#[inline]
fn send_pkt(faces: &mut FaceTable, pool: &Pool, p: Pkt) {
    faces.send(p.face, p.kind.into(), p.bytes());
    pool.put(p.buf);
}

/// What receiving needs: the classifier, the buffers, the rings (and which workers to wake),
/// the workers' control channels, management's channel and the router's time origin.
struct Rx {
    dispatcher: Dispatcher,
    pool: Arc<Pool>,
    workers: Vec<Arc<WorkerLink>>,
    worker_ctl: Vec<Sender<Control>>,
    wake: Vec<bool>,
    mgmt: MgmtSender,
    start: Instant,
    /// The worker this loop runs inside (one thread, or a sharded loop).
    me: Option<usize>,
    /// A sharded router's other loops: where accepted connections go, who mirrors the UDP
    /// faces.
    peers: Option<Peers>,
    /// What crossed between loops (a sharded loop's).
    counts: ShardStats,
    /// Management's certificate fetches on this loop's faces, for apps that answer them
    /// without echoing the PIT token.
    cert_fetches: cert_fetch::CertFetches,
}

impl Rx {
    /// Tells every worker about a face (new or changed).
    fn announce(&self, f: &Face) {
        for c in &self.worker_ctl {
            let _ = c.send(Control::Face {
                id: f.id(),
                info: FaceInfo {
                    local: f.local(),
                    multi_access: false,
                    local_fields: f.local_fields(),
                },
                local_fields: f.local_fields(),
            });
        }
        for w in &self.workers {
            w.wake();
        }
    }
}

impl FaceSink for Rx {
    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn face_up(&mut self, face: &Face) {
        self.announce(face);
        if let Some(p) = &self.peers {
            p.announce(face);
        }
        tracing::debug!(face = face.id(), uri = %face.uri(), "face up");
        let created = MgmtInput::FaceEvent(FaceEventKind::Created, Box::new(face.desc()));
        let _ = self.mgmt.event(created);
    }

    fn face_state(&mut self, face: &Face, up: bool) {
        tracing::info!(face = face.id(), uri = %face.uri(), up, "face state");
        let kind = if up {
            FaceEventKind::Up
        } else {
            FaceEventKind::Down
        };
        let _ = self
            .mgmt
            .event(MgmtInput::FaceEvent(kind, Box::new(face.desc())));
    }

    fn face_changed(&mut self, face: &Face) {
        self.announce(face);
        if let Some(p) = &self.peers {
            p.announce(face);
        }
    }

    fn face_down(&mut self, face: &Face, why: &str) {
        if let Some(p) = &self.peers {
            p.retire(face);
        }
        tracing::debug!(face = face.id(), uri = %face.uri(), why, "face down");
        let destroyed = MgmtInput::FaceEvent(FaceEventKind::Destroyed, Box::new(face.desc()));
        let _ = self.mgmt.event(destroyed);
    }

    #[inline]
    fn receive(&mut self, rx: FaceRx<'_>, bytes: &[u8], now_ms: u64) -> bool {
        handle_packet(self, rx, bytes, now_ms)
    }

    fn accepted(&mut self, conn: Accepted) -> Option<Accepted> {
        match &mut self.peers {
            Some(p) => p.hand(conn),
            None => Some(conn),
        }
    }

    fn notice(&mut self, notice: Notice<'_>) {
        match notice {
            Notice::AcceptFailed(e) => tracing::warn!("accept: {e}"),
            Notice::FaceLimit => tracing::warn!("face limit reached: connection refused"),
            Notice::AddressLimit(ip) => {
                tracing::warn!(%ip, "per-address connection limit reached: connection refused")
            }
            // ICMP errors surface here on unconnected sockets: not fatal.
            Notice::RecvFailed(e) => tracing::trace!("udp recv: {e}"),
            Notice::Penalized { remotes, dropped } => {
                tracing::debug!(remotes, dropped, "UDP remotes kept out for sending garbage")
            }
            Notice::Bounds(b) => tracing::info!(?b, "face bounds refused or evicted"),
            Notice::UnixPeerRefused(c) => tracing::debug!(?c, "unix peer not allowed: refused"),
            Notice::UnixPeer(id, c) => {
                tracing::debug!(
                    face = id,
                    uid = c.uid,
                    gid = c.gid,
                    pid = c.pid,
                    "unix peer"
                )
            }
        }
    }
}

fn push_to(
    ctx: &mut Rx,
    c: &mut FaceCounters,
    w: usize,
    face: FaceId,
    kind: PktKind,
    full_hash: Option<u64>,
    link: Link<'_>,
) {
    let Some(mut p) = link.pkt(&ctx.pool, face) else {
        c.drop_no_buffer += 1;
        return;
    };
    p.kind = kind;
    p.full_hash = full_hash;
    match ctx.workers[w].input.push(p) {
        Ok(()) if ctx.me == Some(w) => ctx.counts.kept_in += 1,
        Ok(()) => {
            ctx.wake[w] = true;
            ctx.counts.crossed_in += 1;
        }
        Err(p) => {
            c.drop_ring_full += 1;
            ctx.workers[w].input_full.fetch_add(1, Ordering::Relaxed);
            ctx.pool.put(p.buf);
        }
    }
}

/// Routes one received link-layer packet; returns true if it was malformed (and counted).
#[inline]
fn handle_packet(ctx: &mut Rx, rx: FaceRx<'_>, bytes: &[u8], now: u64) -> bool {
    let FaceRx {
        id: face,
        local,
        counters: c,
        reassembler: reasm,
    } = rx;
    let (route, kind, full_hash) = ctx.dispatcher.classify_hashed(bytes);
    c.in_bytes += bytes.len() as u64;
    if route == Route::Reassemble {
        let Some(reasm) = reasm else {
            c.malformed += 1;
            return true;
        };
        let Ok(lp) = LpPacketView::decode(bytes, ctx.dispatcher.limits()) else {
            c.malformed += 1;
            return true;
        };
        return match reasm.receive(u64::from(face), &lp, now) {
            Ok(Some(whole)) => route_whole(ctx, c, face, local, &whole),
            Ok(None) => false,
            Err(e) if e.is_malformed() => {
                c.malformed += 1;
                true
            }
            Err(_) => false,
        };
    }
    route_packet(
        ctx,
        c,
        face,
        local,
        Link::Bytes(bytes),
        (route, kind, full_hash),
    )
}

/// Routes a reassembled packet as if it had come in one piece (its bytes were counted as they
/// came), from the network packet and the first fragment's headers; returns true if it was
/// malformed (and counted).
fn route_whole(
    ctx: &mut Rx,
    c: &mut FaceCounters,
    face: FaceId,
    local: bool,
    whole: &Reassembled<'_>,
) -> bool {
    let (headers, packet) = (&whole.headers, &whole.packet[..]);
    if headers.is_empty() {
        let class = ctx.dispatcher.classify_hashed(packet);
        return route_packet(ctx, c, face, local, Link::Bytes(packet), class);
    }
    // The link-layer packet the face would have received whole must fit the packet limits.
    if link_len(headers, packet.len()) > ctx.dispatcher.limits().max_packet_bytes {
        c.malformed += 1;
        return true;
    }
    let token = headers.pit_token.as_ref().map(PitToken::as_bytes);
    // The NB-CC signal of the first fragment concerns the face: every worker takes it.
    let (nack, signal) = (headers.nack.is_some(), headers.nbcc.is_some());
    let class = ctx.dispatcher.classify_network(packet, token, nack, signal);
    route_packet(ctx, c, face, local, Link::Parts(headers, packet), class)
}

/// A received packet as the worker rings take it: link-layer bytes as received, or a network
/// packet and its link headers (encoded once, into the pool buffer).
#[derive(Clone, Copy)]
enum Link<'a> {
    Bytes(&'a [u8]),
    Parts(&'a LpHeaders, &'a [u8]),
}

impl Link<'_> {
    #[inline]
    fn pkt(self, pool: &Pool, face: FaceId) -> Option<Pkt> {
        match self {
            Link::Bytes(b) => pool.pkt_from(face, b),
            Link::Parts(h, p) => pool.pkt_link(face, h, p),
        }
    }

    fn to_vec(self) -> Vec<u8> {
        match self {
            Link::Bytes(b) => b.to_vec(),
            Link::Parts(h, p) => {
                let mut v = Vec::with_capacity(link_len(h, p.len()));
                encode_link(&mut v, h, p, usize::MAX);
                v
            }
        }
    }
}

/// Hands a classified packet to its worker(s) or to management; returns true if it was
/// malformed (and counted).
#[inline]
fn route_packet(
    ctx: &mut Rx,
    c: &mut FaceCounters,
    face: FaceId,
    local: bool,
    link: Link<'_>,
    (route, kind, full_hash): (Route, PktKind, Option<u64>),
) -> bool {
    if kind == PktKind::Data && !ctx.cert_fetches.is_empty() {
        certificate_to_mgmt(ctx, face, local, link);
    }
    match route {
        // A fragment inside a reassembled packet is as malformed as garbage.
        Route::Malformed | Route::Reassemble => {
            c.malformed += 1;
            return true;
        }
        Route::Idle => {}
        Route::Mgmt { localhost } => {
            count_kind(c, kind);
            ctx.mgmt.interest(face, local, localhost, || link.to_vec());
        }
        Route::Worker(w) => {
            count_kind(c, kind);
            push_to(ctx, c, w, face, kind, full_hash, link);
        }
        Route::AllWorkers { owner } => {
            count_kind(c, kind);
            push_to(ctx, c, owner, face, kind, full_hash, link);
            for w in (0..ctx.workers.len()).filter(|&w| w != owner) {
                push_to(ctx, c, w, face, kind, full_hash, link);
            }
        }
    }
    false
}

/// A Data without a PIT token that answers a certificate fetch management sent on `face` goes
/// to management too (it still goes to its worker).
#[cold]
fn certificate_to_mgmt(ctx: &mut Rx, face: FaceId, local: bool, link: Link<'_>) {
    let now_ms = ctx.start.elapsed().as_millis() as u64;
    let limits = ctx.dispatcher.limits();
    let (headers, bytes) = match link {
        Link::Bytes(b) => (None, b),
        Link::Parts(h, p) => (Some(h), p),
    };
    let tagged = ctx
        .cert_fetches
        .answer_link(face, headers, bytes, limits, now_ms);
    if let Some(tagged) = tagged {
        ctx.mgmt.interest(face, local, false, || tagged);
    }
}

fn count_kind(c: &mut FaceCounters, kind: PktKind) {
    c.count_in(kind.into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::hash::HashKey;
    use wire::lp::{Nack, NackReason};
    use wire::{Data, Interest, Name};

    /// A reassembled packet is classified from its parts as its whole link-layer packet would be.
    #[test]
    fn reassembled_parts_classify_like_the_whole_link_packet() {
        let d = Dispatcher::new(
            HashKey::fixed(1, 2),
            4,
            crate::dispatch::WorkerMapping::Content,
            Limits::default(),
        );
        let interest = Interest::new(Name::from_uri("/a/b").unwrap(), [1; 4]).to_wire();
        let mgmt = Interest::new(Name::from_uri("/localhost/nfd/faces/list").unwrap(), [1; 4]);
        let data = Data::new(Name::from_uri("/a/b").unwrap(), vec![7; 3000]).to_wire();
        let ours = crate::dispatch::worker_token(2);
        for packet in [&interest, &mgmt.to_wire(), &data] {
            for h in [
                LpHeaders {
                    pit_token: PitToken::new(&ours),
                    ..LpHeaders::default()
                },
                LpHeaders {
                    pit_token: PitToken::new(&[9, 9]),
                    congestion_mark: Some(1),
                    ..LpHeaders::default()
                },
                // An NB-CC signal on a Data sends it to every worker, token or not.
                LpHeaders {
                    pit_token: PitToken::new(&ours),
                    nbcc: Some(wire::lp::NbccSignal::Alpha),
                    ..LpHeaders::default()
                },
                LpHeaders {
                    nack: Some(Nack {
                        reason: Some(NackReason::NoRoute),
                    }),
                    ..LpHeaders::default()
                },
            ] {
                let mut whole = Vec::new();
                assert!(encode_link(&mut whole, &h, packet, usize::MAX));
                let token = h.pit_token.as_ref().map(PitToken::as_bytes);
                assert_eq!(
                    d.classify_network(packet, token, h.nack.is_some(), h.nbcc.is_some()),
                    d.classify_hashed(&whole),
                    "{h:?}"
                );
            }
        }
    }
}
