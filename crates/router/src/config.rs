//! The daemon's configuration: embedded defaults, a TOML file, command-line overrides.
//!
//! Every field has a default, so an empty file (or none) gives a working router. Unknown keys
//! are errors: a typo must not silently fall back to a default. [`Config::validate`] checks what
//! serde cannot (ranges, names, URIs) and names the offending key in a one-line error.

mod http;
mod ws;

use std::net::SocketAddr;

use face::uri::{FaceUri, ResolveError, UriErrorKind};
use serde::Deserialize;

pub mod authorizations;
pub mod localhop;
mod rib;
pub mod rib_propagate;
pub use rib::Rib;
mod general;
pub use general::{parse_unix_mode, General, DEFAULT_UNIX_MODE};

/// Where NDN applications look for a forwarder (NFD's default Unix socket), and the NDN port
/// for TCP and UDP.
pub use face::uri::{DEFAULT_PORT, DEFAULT_UNIX_PATH};
mod capacity;
mod face_budget;
mod face_system;
mod limits_stream;
mod local;
mod reflection;
pub use local::Local;
pub mod listen6;
mod strategy;
mod udp_io;
pub use face_system::FaceSystem;
pub use http::{Http, DEFAULT_HTTP_PORT};
pub use limits_stream::Connections;
pub use udp_io::UdpIo;

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The user to run as, the log filter (`[general]`).
    pub general: General,
    /// Listeners.
    pub listen: Listen,
    /// Forwarding workers and I/O placement.
    pub workers: Workers,
    /// The in-RAM content store (per worker: the capacity is split between workers).
    pub cs: Cs,
    /// The PIT (per worker: the capacity is split between workers).
    pub pit: Pit,
    /// The FIB, shared by all workers.
    pub fib: Fib,
    /// Packet limits.
    pub limits: PacketLimits,
    /// Face defaults.
    pub faces: Faces,
    /// Faces created at start-up (`[[face]]`).
    #[serde(rename = "face")]
    pub static_faces: Vec<StaticFace>,
    /// Routes installed at start-up (`[[route]]`).
    #[serde(rename = "route")]
    pub routes: Vec<Route>,
    /// Strategy choices at start-up (`[[strategy]]`).
    #[serde(rename = "strategy")]
    pub strategies: Vec<StrategyEntry>,
    /// The L2 content store on disk (`[store]`; off unless `l2_path` is set).
    pub store: Store,
    /// The RIB's options (`[rib]`).
    pub rib: Rib,
    /// The HTTP endpoint: metrics and the status page (`[http]`).
    pub http: Http,
    /// The multicast faces (`[face_system.udp]`, `[face_system.ether]`; off by default).
    pub face_system: FaceSystem,
    /// Bounds of connection faces (`[connections]`).
    pub connections: Connections,
    /// Who is local: the Unix socket's allow-lists, loopback TCP's scope (`[local]`).
    pub local: Local,
    /// Who may send which command (`[[authorize]]`, NFD's `authorizations`).
    #[serde(rename = "authorize")]
    pub authorizations: Vec<authorizations::AuthorizeEntry>,
}

/// L2 replacement policy.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum L2Replacement {
    /// First in, first out (as in Mansilha et al., "Exploiting parallelism in hierarchical
    /// content stores for high-speed ICN routers", Computer Networks, 2017).
    #[default]
    Fifo,
    /// Least recently used.
    Lru,
}

/// Which batches L2 admits.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum L2Decision {
    /// Every batch (as in Mansilha et al. (2017)).
    #[default]
    Always,
    /// With probability `lcp_p` (leave copy probabilistically).
    Lcp,
    /// Only batches offered twice recently (2-LRU).
    #[serde(rename = "2lru")]
    TwoLru,
}

/// When chunks are offered to L2.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum L2Admission {
    /// Every chunk that satisfied an Interest is written to L2 at once (survives a crash).
    #[default]
    WriteThrough,
    /// Chunks are written to L2 when the RAM CS evicts them, and what the RAM CS still holds
    /// at a clean stop (the hierarchy of Mansilha et al. (2017): L2 holds what L1 drops).
    WriteBack,
}

/// The L2 tier: one file per worker in a directory, chunks of B-segment batches.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Store {
    /// Directory of the L2 files (`l2-w<N>.dat`); empty: no L2.
    pub l2_path: String,
    /// Chunks L2 holds over all workers (each takes one 8,704-byte slot on disk).
    pub l2_capacity: u64,
    /// Chunks per batch B.
    pub batch: u32,
    /// Reads and writes in flight per worker.
    pub queue_depth: usize,
    /// Open the files with O_DIRECT.
    pub direct: bool,
    /// Replacement policy.
    pub replacement: L2Replacement,
    /// When chunks are offered: on insertion (write-through) or on eviction (write-back).
    pub admission: L2Admission,
    /// Admission decision.
    pub decision: L2Decision,
    /// Admission probability for `decision = "lcp"`.
    pub lcp_p: f64,
    /// Read the next batch when the penultimate chunk of one is served from the RAM CS.
    pub prefetch_ahead: bool,
    /// NB-Cache's first-stage bypass: a counting Bloom filter of the names each worker's CS
    /// holds (RAM and L2) in front of the CS lookup; a sure miss skips the CS and L2.
    pub bloom: bool,
    /// The filter's false-positive rate at its capacity (sizes its memory unless
    /// `bloom_bytes` is set).
    pub bloom_fp_rate: f64,
    /// Names the filters hold at capacity, over all workers; 0: the RAM CS's capacity plus
    /// L2's.
    pub bloom_capacity: u64,
    /// Bytes of filter over all workers; 0: sized for `bloom_fp_rate`.
    pub bloom_bytes: u64,
    /// NB-Cache's second-stage bypass (active queue management): past `bypass_threshold`
    /// waiting L2 lookups, an Interest for a name L2 holds goes upstream if it can.
    pub aqm: bool,
    /// Waiting L2 lookups (per worker) from which `aqm` sends Interests upstream, and from
    /// which `ecn` and `nbcc` count the store as congested (0: always).
    pub bypass_threshold: usize,
    /// Mark Data with an NDNLPv2 CongestionMark while the store is congested: every Data of an
    /// Interest that arrived then (plain ECN), or with `nbcc` only those of Interests that had
    /// to wait for L2 because no upstream was available to bypass to.
    pub ecn: bool,
    /// NB-CC (Pan et al.): Nack-α / Nack-β to downstream neighbours on the Data sent to them,
    /// lazy marking (with `ecn`), and no bypass to an upstream under a Nack-α.
    pub nbcc: bool,
    /// A new round of Nack-α every this many milliseconds while the store stays congested.
    pub nbcc_interval_ms: u64,
    /// How long a Nack-α received keeps its face unavailable to bypassed Interests (longer
    /// than the neighbours' `nbcc_interval_ms`, or the label lapses between their rounds).
    pub nbcc_timeout_ms: u64,
    /// `non-blocking` (the default: the worker never waits for storage) or `blocking` (the
    /// worker waits for the L2 reads a batch started before it goes on, as a classic content
    /// router waits for its storage).
    pub io: StoreIo,
    /// Admission back-pressure: a worker whose L2 write backlog is long takes no new input
    /// until its disk catches up (off: chunks past the backlog are dropped, counted).
    pub back_pressure: bool,
}

/// Whether a worker waits for its storage reads.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum StoreIo {
    /// Interests wait in the PIT while the worker goes on forwarding.
    #[default]
    NonBlocking,
    /// The worker waits for the reads a batch started before it takes the next batch.
    Blocking,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            l2_path: String::new(),
            l2_capacity: 100_000,
            batch: 10,
            queue_depth: 16,
            direct: false,
            replacement: L2Replacement::Fifo,
            admission: L2Admission::WriteThrough,
            decision: L2Decision::Always,
            lcp_p: 0.1,
            prefetch_ahead: true,
            bloom: false,
            bloom_fp_rate: 0.01,
            bloom_capacity: 0,
            bloom_bytes: 0,
            aqm: false,
            bypass_threshold: 64,
            ecn: false,
            nbcc: false,
            nbcc_interval_ms: 100,
            nbcc_timeout_ms: 1000,
            io: StoreIo::NonBlocking,
            back_pressure: true,
        }
    }
}

/// Listeners; an empty string turns one off.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Listen {
    /// Unix stream socket path.
    pub unix: String,
    /// TCP listen address.
    pub tcp: String,
    /// UDP unicast listen address.
    pub udp: String,
    /// TCP listen address over IPv6 ("auto": `[::]` on `tcp`'s port when `tcp` is `0.0.0.0`).
    pub tcp6: String,
    /// UDP unicast listen address over IPv6 ("auto", as `tcp6`).
    pub udp6: String,
    /// WebSocket (`ws://`) listen addresses, comma-separated (NFD's: port 9696, IPv4 and IPv6).
    pub websocket: String,
    /// `wss://`: the WebSocket listener's certificate chain (PEM file; with the key).
    pub websocket_tls_cert: String,
    /// `wss://`: the private key of `websocket_tls_cert` (PEM file).
    pub websocket_tls_key: String,
    /// The Unix socket's permission bits, in octal.
    pub unix_mode: String,
    /// The Unix socket's group (empty: the process's).
    pub unix_group: String,
}

impl Default for Listen {
    fn default() -> Self {
        Listen {
            unix: DEFAULT_UNIX_PATH.into(),
            tcp: format!("0.0.0.0:{DEFAULT_PORT}"),
            udp: format!("0.0.0.0:{DEFAULT_PORT}"),
            tcp6: listen6::AUTO.into(),
            udp6: listen6::AUTO.into(),
            websocket: format!("0.0.0.0:{0}, [::]:{0}", face::table::DEFAULT_WS_PORT),
            websocket_tls_cert: String::new(),
            websocket_tls_key: String::new(),
            unix_mode: DEFAULT_UNIX_MODE.into(),
            unix_group: String::new(),
        }
    }
}

/// Default of [`Workers::spin_us`].
pub const DEFAULT_SPIN_US: u64 = 0;

/// Largest [`Workers::spin_us`]: a millisecond, the shortest tick.
pub const MAX_SPIN_US: u64 = 1000;

/// Forwarding workers and thread placement.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Workers {
    /// Number of forwarding workers; 0 = one per available core, minus the core the I/O thread
    /// needs (at least one).
    pub count: usize,
    /// Cores to pin the workers to, in order (empty: automatic — pinned only when there are more
    /// cores than threads, otherwise left to the scheduler).
    pub cores: Vec<usize>,
    /// Core to pin the I/O thread to (absent: automatic, as for workers).
    pub io_core: Option<usize>,
    /// Capacity of each ring between the I/O thread and a worker, in packets.
    pub ring_capacity: usize,
    /// Packet buffers in the shared pool (each holds one packet of up to
    /// [`PacketLimits::max_packet_bytes`] plus link headers).
    pub buffers: usize,
    /// Pool buffers allocated and touched at start-up (the rest are allocated when first
    /// needed); at most `buffers`.
    pub prefault_buffers: usize,
    /// MiB of each worker's and the I/O thread's malloc arena touched when the thread starts,
    /// so that what it allocates later is already mapped (0: none, and neither the threads'
    /// stacks nor the CS's small-page Data slots are touched either).
    pub prefault_mb: usize,
    /// Worker tick: the longest a worker sleeps when idle (PIT expiry runs at least this often).
    pub tick_ms: u64,
    /// Microseconds an idle worker spins checking its input before it parks, and the I/O
    /// thread polls without blocking before it sleeps (0: park and sleep at once).
    pub spin_us: u64,
    /// How chunks are spread over workers: `content` (H=Content), `batch` (H=Batch, by content
    /// name and `floor(segment / store.batch)`), or `name` (each chunk by its full name).
    pub mapping: Mapping,
    /// Which threads forward: `one` (one thread receives, forwards and sends: one worker run
    /// inside the I/O loop), `io+workers` (an I/O thread and `count` worker threads with rings
    /// between them), `sharded` (`count` threads, each receiving, forwarding and sending for
    /// its own share of the faces), or `auto` (chosen from the worker count and the cores:
    /// [`Config::thread_mode`]).
    pub threads: Threads,
    /// How the UDP sockets receive: `auto`, `uring` or `recvmmsg` ([`UdpIo`]).
    pub udp_io: UdpIo,
    /// `UDP_GRO` on the UDP sockets (io_uring receives only).
    pub udp_gro: bool,
}

/// Largest core count on which `[workers] threads = "auto"` runs a single worker inside the
/// I/O thread's loop.
pub const AUTO_ONE_THREAD_MAX_CORES: usize = 2;

/// Which threads forward packets.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
pub enum Threads {
    /// `one` with one worker on a machine of at most [`AUTO_ONE_THREAD_MAX_CORES`] cores,
    /// otherwise `io+workers`.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// One thread does everything: its loop receives, runs the single worker's engine and
    /// sends, with no hand-off between threads.
    #[serde(rename = "one")]
    One,
    /// An I/O thread and `workers.count` worker threads.
    #[serde(rename = "io+workers")]
    IoWorkers,
    /// `workers.count` threads, each running one worker inside an I/O loop of its own over its
    /// shard of the faces: its own socket of the UDP listener's `SO_REUSEPORT` group, the
    /// faces of the remotes steered to that socket, its share of the stream faces. A packet
    /// whose name another worker owns crosses one ring to that worker's thread, and a packet
    /// for a face another thread holds crosses one ring to that thread.
    #[serde(rename = "sharded")]
    Sharded,
}

impl Threads {
    /// Its name in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            Threads::Auto => "auto",
            Threads::One => "one",
            Threads::IoWorkers => "io+workers",
            Threads::Sharded => "sharded",
        }
    }
}

impl Workers {
    /// `threads = "one"` runs exactly one worker.
    fn check_threads(&self) -> Result<(), String> {
        if self.threads == Threads::One && self.count > 1 {
            return Err(format!(
                "workers.threads: \"one\" runs one worker, but workers.count is {}",
                self.count
            ));
        }
        Ok(())
    }
}

/// How chunks (names ending in a segment number) are spread over workers.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mapping {
    /// By content name (the name without its segment).
    #[default]
    Content,
    /// By content name and batch number.
    Batch,
    /// By full name.
    Name,
}

impl Default for Workers {
    fn default() -> Self {
        Workers {
            count: 0,
            cores: Vec::new(),
            io_core: None,
            ring_capacity: 4096,
            buffers: 16_384,
            prefault_buffers: 2_048,
            prefault_mb: 16,
            tick_ms: 10,
            spin_us: DEFAULT_SPIN_US,
            mapping: Mapping::Content,
            threads: Threads::Auto,
            udp_io: UdpIo::Auto,
            udp_gro: false,
        }
    }
}

/// CS replacement policy.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CsPolicy {
    /// Least recently used (NFD's default is LRU too).
    Lru,
    /// First in, first out.
    Fifo,
}

/// `Err` naming `key` unless `lo <= v <= hi`.
fn range(key: &str, v: usize, lo: usize, hi: usize) -> Result<(), String> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(format!("{key}: {v} is outside {lo}..={hi}"))
    }
}

/// The in-RAM content store.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Cs {
    /// Most Data packets, over all workers (NFD's default: 65,536).
    pub capacity: usize,
    /// Replacement policy.
    pub policy: CsPolicy,
}

impl Default for Cs {
    fn default() -> Self {
        Cs {
            capacity: 65_536,
            policy: CsPolicy::Lru,
        }
    }
}

/// The PIT.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Pit {
    /// Most pending Interests, over all workers.
    pub capacity: usize,
    /// Longest an Interest waits in the PIT: a longer InterestLifetime is cut to this.
    pub max_lifetime_ms: u64,
    /// PIT occupancy (percent of a worker's share of `capacity`) from which a face holding
    /// its fair share of the PIT gets Nack (Congestion) for a new Interest.
    pub share_watermark_percent: u8,
}

impl Default for Pit {
    fn default() -> Self {
        Pit {
            capacity: 131_072,
            max_lifetime_ms: engine::table::pit_cs::DEFAULT_MAX_LIFETIME_MS,
            share_watermark_percent: engine::table::pit_cs::DEFAULT_SHARE_WATERMARK_PERCENT,
        }
    }
}

/// The FIB.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Fib {
    /// Most entries (real and virtual).
    pub capacity: usize,
    /// Stage-1 depth M of the 2-stage longest-prefix match.
    pub m: usize,
}

impl Default for Fib {
    fn default() -> Self {
        Fib {
            capacity: 65_536,
            m: 4,
        }
    }
}

/// Packet limits.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct PacketLimits {
    /// Largest network packet.
    pub max_packet_bytes: usize,
    /// Most name components.
    pub max_name_components: usize,
}

impl Default for PacketLimits {
    fn default() -> Self {
        PacketLimits {
            max_packet_bytes: wire::MAX_NDN_PACKET_BYTES,
            max_name_components: 128,
        }
    }
}

/// Default of `faces.udp_mtu`: NFD's `face_system.udp.unicast_mtu` default, the largest NDN
/// packet, so that a peer that does not reassemble NDNLPv2 fragments (python-ndn) gets every
/// Data whole, as it does from NFD.
pub const DEFAULT_UDP_MTU: usize = wire::MAX_NDN_PACKET_BYTES;

/// Face defaults.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Faces {
    /// Most faces at once (listeners excluded).
    pub max_faces: usize,
    /// Bytes a stream face may hold unsent before it drops packets.
    pub send_queue_bytes: usize,
    /// UDP MTU: larger packets are fragmented (NDNLPv2).
    pub udp_mtu: usize,
    /// Seconds of silence after which an on-demand UDP face is closed.
    pub udp_idle_timeout_s: u64,
    /// Malformed packets after which a face is closed (a UDP face is closed when it has sent
    /// this many and more malformed than good ones).
    pub malformed_limit: u64,
    /// Most on-demand UDP faces (below `max_faces`; the least recently active is evicted for a
    /// new remote).
    pub max_on_demand_faces: usize,
    /// Most on-demand UDP faces per remote host (IPv4 address, IPv6 /64).
    pub max_on_demand_per_host: usize,
    /// Bytes all UDP faces' NDNLPv2 reassembly may hold together.
    pub reassembly_budget_bytes: usize,
    /// Bytes sent to an on-demand UDP face per byte received from it, until it has sent a
    /// Data or a Nack (0: no bound).
    pub unproven_send_ratio: u64,
    /// Bytes per second all on-demand UDP faces with an unproven address are sent together
    /// (0: no bound); see `config/reflection.rs`.
    pub unproven_send_bytes_per_s: u64,
    /// New on-demand faces per second (0: no bound); see `config/face_budget.rs`.
    pub on_demand_faces_per_s: u64,
    /// New on-demand faces at once after a quiet time.
    pub on_demand_faces_burst: u64,
}

impl Default for Faces {
    fn default() -> Self {
        let b = face::table::FaceBounds::default();
        Faces {
            max_faces: 4096,
            send_queue_bytes: 16 << 20,
            udp_mtu: DEFAULT_UDP_MTU,
            udp_idle_timeout_s: 600,
            malformed_limit: 64,
            max_on_demand_faces: b.max_on_demand_faces,
            max_on_demand_per_host: b.max_on_demand_per_host,
            reassembly_budget_bytes: b.reassembly_budget_bytes,
            unproven_send_ratio: b.unproven_send_ratio,
            unproven_send_bytes_per_s: b.unproven_send_bytes_per_s,
            on_demand_faces_per_s: b.on_demand_faces_per_s,
            on_demand_faces_burst: b.on_demand_faces_burst,
        }
    }
}

/// A face to create at start-up.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StaticFace {
    /// `udp://host:port` or `tcp://host:port` (`udp4`, `udp6`, `tcp4`, `tcp6` too).
    pub uri: String,
}

/// A route to install at start-up.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// Name prefix.
    pub prefix: String,
    /// The URI of a `[[face]]`.
    pub face: String,
    /// Cost.
    #[serde(default)]
    pub cost: u32,
}

/// A strategy choice at start-up.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StrategyEntry {
    /// Name prefix.
    pub prefix: String,
    /// `best-route`, `multicast`, `asf`, or NFD's instance names with version and parameters.
    pub strategy: String,
}

/// Overrides from the command line.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--unix PATH`.
    pub unix: Option<String>,
    /// `--tcp ADDR`.
    pub tcp: Option<String>,
    /// `--udp ADDR`.
    pub udp: Option<String>,
    /// `--websocket ADDR`.
    pub websocket: Option<String>,
    /// `--workers N`.
    pub workers: Option<usize>,
}

/// Parses a name prefix written as a URI.
pub fn parse_prefix(key: &str, s: &str) -> Result<wire::Name, String> {
    wire::Name::from_uri(s).map_err(|e| format!("{key}: bad name {s:?}: {}", e.0))
}

/// The strategy named `s`: `best-route`, `multicast`, `asf`, or an NFD strategy name.
/// Read as management reads it ([`StrategyEntry::instance`]).
pub fn parse_strategy(s: &str) -> Option<engine::fw::strategy::StrategyKind> {
    Some(mgmt::strategy::parse_config_name(s).ok()?.0.kind)
}

/// Parses a `udp://host:port`-style face URI ([`FaceUri`]) and resolves it: (is_udp, address).
/// The errors name the URI; those about its scheme say "scheme".
pub fn parse_face_uri(s: &str) -> Result<(bool, SocketAddr), String> {
    let unsupported = |scheme: &str| format!("face URI {s:?}: unsupported scheme {scheme:?}");
    let uri = s
        .parse::<FaceUri>()
        .map_err(|e| match (e.kind(), e.scheme()) {
            (UriErrorKind::NoScheme, _) => {
                format!("face URI {s:?} lacks a scheme (udp:// or tcp://)")
            }
            (UriErrorKind::UnsupportedScheme | UriErrorKind::RelativeUnixPath, Some(scheme)) => {
                unsupported(scheme)
            }
            _ => format!("face URI {s:?}: {}", e.reason()),
        })?;
    let udp = match uri {
        FaceUri::Udp { .. } => true,
        FaceUri::Tcp { .. } => false,
        FaceUri::Unix(_) => return Err(unsupported("unix")),
    };
    let addrs = uri.socket_addrs().map_err(|e| match e {
        ResolveError::Lookup { source, .. } => format!("face URI {s:?}: {source}"),
        _ => format!("face URI {s:?}: no address of the right family"),
    })?;
    Ok((udp, addrs[0]))
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Config {
    /// Parses a TOML document; the error is one line naming the problem and its line.
    pub fn from_toml(text: &str) -> Result<Config, String> {
        Self::from_toml_in(text, None)
    }

    /// [`Config::from_toml`] of a file in directory `dir`: relative `[[authorize]]` certfiles
    /// are read from `dir`, as NFD reads them from its configuration file's directory.
    pub fn from_toml_in(text: &str, dir: Option<&std::path::Path>) -> Result<Config, String> {
        let mut c: Config = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| format!("line {}: ", line_of(text, s.start)))
                .unwrap_or_default();
            format!("{line}{}", e.message().replace('\n', " "))
        })?;
        authorizations::resolve_in(&mut c.authorizations, dir);
        c.rib.resolve_in(dir);
        c.validate()?;
        Ok(c)
    }

    /// Applies command-line overrides.
    pub fn apply(&mut self, o: &Overrides) {
        if let Some(u) = &o.unix {
            self.listen.unix = u.clone();
        }
        if let Some(t) = &o.tcp {
            self.listen.tcp = t.clone();
        }
        if let Some(u) = &o.udp {
            self.listen.udp = u.clone();
        }
        if let Some(w) = &o.websocket {
            self.listen.websocket = w.clone();
        }
        if let Some(w) = o.workers {
            self.workers.count = w;
        }
    }

    /// Checks what the types do not: one line naming the key on error.
    pub fn validate(&self) -> Result<(), String> {
        for (key, v) in [
            ("listen.tcp", &self.listen.tcp),
            ("listen.udp", &self.listen.udp),
        ] {
            if !v.is_empty() && v.parse::<SocketAddr>().is_err() {
                return Err(format!("{key}: {v:?} is not an address like 0.0.0.0:6363"));
            }
        }
        self.listen.validate_v6()?;
        self.http.validate()?;
        self.listen.validate_ws()?;
        self.face_system.validate()?;
        self.local.validate()?;
        authorizations::load(&self.authorizations)?;
        self.rib.validate()?;
        range("workers.count", self.workers.count, 0, 64)?;
        self.workers.check_threads()?;
        range(
            "workers.ring_capacity",
            self.workers.ring_capacity,
            64,
            1 << 20,
        )?;
        range("workers.buffers", self.workers.buffers, 256, 1 << 22)?;
        range(
            "workers.prefault_buffers",
            self.workers.prefault_buffers,
            0,
            self.workers.buffers,
        )?;
        range("workers.prefault_mb", self.workers.prefault_mb, 0, 1 << 16)?;
        range("workers.tick_ms", self.workers.tick_ms as usize, 1, 1000)?;
        range(
            "workers.spin_us",
            self.workers.spin_us.min(usize::MAX as u64) as usize,
            0,
            MAX_SPIN_US as usize,
        )?;
        range("cs.capacity", self.cs.capacity, 0, 1 << 30)?;
        range("pit.capacity", self.pit.capacity, 64, 1 << 30)?;
        range("fib.capacity", self.fib.capacity, 64, 1 << 30)?;
        range("fib.m", self.fib.m, 1, engine::hash::MAX_PREFIX_STATES)?;
        range(
            "limits.max_packet_bytes",
            self.limits.max_packet_bytes,
            512,
            wire::MAX_NDN_PACKET_BYTES,
        )?;
        range(
            "limits.max_name_components",
            self.limits.max_name_components,
            1,
            engine::hash::MAX_PREFIX_STATES.max(128),
        )?;
        range("faces.max_faces", self.faces.max_faces, 1, 1 << 20)?;
        range(
            "faces.send_queue_bytes",
            self.faces.send_queue_bytes,
            9000,
            1 << 30,
        )?;
        range("faces.udp_mtu", self.faces.udp_mtu, 128, 65_507)?;
        range(
            "faces.malformed_limit",
            self.faces.malformed_limit as usize,
            1,
            usize::MAX,
        )?;
        self.validate_bounds()?;
        self.validate_store()?;
        general::validate(self)?;
        self.connections.validate(self.faces.send_queue_bytes)?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        capacity::validate(self, cores)?;
        for &c in self.workers.cores.iter().chain(self.workers.io_core.iter()) {
            if c >= 1024 {
                return Err(format!(
                    "workers.cores: core {c} does not exist ({cores} available)"
                ));
            }
        }
        for f in &self.static_faces {
            parse_face_uri(&f.uri).map_err(|e| format!("face.uri: {e}"))?;
        }
        for r in &self.routes {
            parse_prefix("route.prefix", &r.prefix)?;
            if !self.static_faces.iter().any(|f| f.uri == r.face) {
                return Err(format!(
                    "route {}: face {:?} is not one of the [[face]] URIs",
                    r.prefix, r.face
                ));
            }
        }
        for s in &self.strategies {
            s.instance()?;
        }
        Ok(())
    }

    /// The PIT's per-face limits for each worker's engine: `[pit]`'s lifetime cap and
    /// watermark, and per-face state for every slot of the face ids of `loops` face tables.
    pub fn pit_limits(&self, loops: usize) -> engine::table::pit_cs::PitLimits {
        engine::table::pit_cs::PitLimits {
            max_lifetime_ms: self.pit.max_lifetime_ms,
            share_watermark_percent: self.pit.share_watermark_percent,
            face_slots: self.face_id_space(loops).slots(),
        }
    }

    /// How face ids split into slot and generation, for `loops` face tables sharing `max_faces`.
    pub fn face_id_space(&self, loops: usize) -> face::table::FaceIdSpace {
        let per_loop = self.faces.max_faces.div_ceil(loops.max(1));
        face::table::FaceIdSpace::for_tables(loops, per_loop)
    }

    /// The face table's bounds: `[faces]`' quota and budgets, and a face id quarantine 10 s
    /// longer than the longest a PIT entry lives (`pit.max_lifetime_ms`).
    pub fn face_bounds(&self) -> face::table::FaceBounds {
        let f = &self.faces;
        face::table::FaceBounds {
            max_on_demand_faces: f.max_on_demand_faces,
            max_on_demand_per_host: f.max_on_demand_per_host,
            reassembly_budget_bytes: f.reassembly_budget_bytes,
            unproven_send_ratio: f.unproven_send_ratio,
            unproven_send_bytes_per_s: f.unproven_send_bytes_per_s,
            face_id_quarantine_ms: self.pit.max_lifetime_ms.saturating_add(10_000),
            on_demand_faces_per_s: f.on_demand_faces_per_s,
            on_demand_faces_burst: f.on_demand_faces_burst,
        }
    }

    /// The budgets of what one face or remote can take: `[pit]`'s lifetime cap and share,
    /// `[faces]`' on-demand quota and reassembly budget.
    fn validate_bounds(&self) -> Result<(), String> {
        range(
            "pit.max_lifetime_ms",
            self.pit.max_lifetime_ms.min(usize::MAX as u64) as usize,
            1000,
            3_600_000,
        )?;
        range(
            "pit.share_watermark_percent",
            usize::from(self.pit.share_watermark_percent),
            1,
            100,
        )?;
        if self.faces.max_on_demand_faces >= self.faces.max_faces {
            return Err(format!(
                "faces.max_on_demand_faces: {} is not below faces.max_faces ({}): other faces \
                 need room",
                self.faces.max_on_demand_faces, self.faces.max_faces
            ));
        }
        range(
            "faces.max_on_demand_per_host",
            self.faces.max_on_demand_per_host,
            1,
            1 << 20,
        )?;
        range(
            "faces.reassembly_budget_bytes",
            self.faces.reassembly_budget_bytes,
            64 << 10,
            1 << 30,
        )?;
        range(
            "faces.unproven_send_ratio",
            self.faces.unproven_send_ratio.min(usize::MAX as u64) as usize,
            0,
            1 << 20,
        )?;
        reflection::validate(&self.faces)?;
        face_budget::validate(&self.faces)
    }

    /// The checks of `[store]`: the L2 keys when there is an L2, NB-Cache's always.
    fn validate_store(&self) -> Result<(), String> {
        if !self.store.l2_path.is_empty() {
            range("store.batch", self.store.batch as usize, 1, 64)?;
            range("store.queue_depth", self.store.queue_depth, 1, 4096)?;
            if self.store.l2_capacity < u64::from(self.store.batch) {
                return Err(format!(
                    "store.l2_capacity: {} is less than one batch of {} chunks",
                    self.store.l2_capacity, self.store.batch
                ));
            }
            if !(0.0..=1.0).contains(&self.store.lcp_p) {
                return Err(format!(
                    "store.lcp_p: {} is not a probability",
                    self.store.lcp_p
                ));
            }
        }
        if self.store.bloom && !(self.store.bloom_fp_rate > 0.0 && self.store.bloom_fp_rate <= 0.5)
        {
            return Err(format!(
                "store.bloom_fp_rate: {} is outside (0, 0.5]",
                self.store.bloom_fp_rate
            ));
        }
        range(
            "store.bypass_threshold",
            self.store.bypass_threshold,
            0,
            1 << 20,
        )?;
        let ms = |v: u64| v.min(usize::MAX as u64) as usize;
        range(
            "store.nbcc_interval_ms",
            ms(self.store.nbcc_interval_ms),
            1,
            60_000,
        )?;
        range(
            "store.nbcc_timeout_ms",
            ms(self.store.nbcc_timeout_ms),
            1,
            600_000,
        )?;
        Ok(())
    }

    /// The dispatcher's mapping of names to workers.
    pub fn worker_mapping(&self) -> crate::dispatch::WorkerMapping {
        use crate::dispatch::WorkerMapping;
        match self.workers.mapping {
            Mapping::Content => WorkerMapping::Content,
            Mapping::Batch => WorkerMapping::Batch {
                batch: u64::from(self.store.batch.max(1)),
            },
            Mapping::Name => WorkerMapping::Name,
        }
    }

    /// Number of workers to run on a machine with `cores` cores: `count`, or with `count` 0 one
    /// per core (less one for the I/O thread unless `sharded`, at least one).
    pub fn worker_count(&self, cores: usize) -> usize {
        match self.workers.threads {
            Threads::One => 1,
            _ if self.workers.count > 0 => self.workers.count,
            Threads::Sharded => cores.max(1),
            _ => cores.saturating_sub(1).max(1),
        }
    }

    /// How the router forwards on a machine with `cores` cores (`[workers] threads`, with
    /// `auto` resolved): `one` with one worker on at most [`AUTO_ONE_THREAD_MAX_CORES`] cores,
    /// otherwise `io+workers`.
    pub fn thread_mode(&self, cores: usize) -> Threads {
        match self.workers.threads {
            Threads::Auto
                if self.worker_count(cores) == 1 && cores <= AUTO_ONE_THREAD_MAX_CORES =>
            {
                Threads::One
            }
            Threads::Auto => Threads::IoWorkers,
            t => t,
        }
    }

    /// Whether the router runs its single worker inside the I/O thread's loop on a machine
    /// with `cores` cores (`[workers] threads`).
    pub fn runs_inline(&self, cores: usize) -> bool {
        self.thread_mode(cores) == Threads::One
    }
}

#[cfg(test)]
mod tests;
