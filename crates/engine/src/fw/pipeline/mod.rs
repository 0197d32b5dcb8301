//! The forwarding pipeline: a batch of (incoming face, packet bytes) in, actions out.
//!
//! [`Engine::process`] runs in three passes over a batch of at most [`MAX_BATCH`] packets:
//! 1. parse each packet (NDNLPv2 headers, then the Interest or Data), hash every name prefix
//!    (or take the full-name hash the dispatcher computed), then request, for the whole batch
//!    at once, the first buckets each packet will touch — its PIT+CS bucket and, for an
//!    Interest, its dead-nonce bucket and the FIB bucket of its stage-1 prefix;
//! 2. prefetch the next levels for the whole batch — the entries those buckets point at, the
//!    FIB lookups' further lines — all at once, so the misses overlap;
//! 3. run each packet through PIT+CS → FIB → strategy (the FIB answer is the one the planning
//!    pass that completed the lookup's plan found, when one did: one epoch guard spans
//!    passes 2 and 3, so the entry is still valid), requesting a Data's PIT entries
//!    a few packets before it is forwarded.
//!
//! Time comes from the caller (`now_ms`); the engine has no clock, no sockets and no threads.
//! Outgoing packets are either an input packet forwarded unchanged (by index) or bytes the engine
//! wrote into its output buffer (Interests with a decremented HopLimit, Data from the CS, Nacks);
//! both stay valid until the next call.
//!
//! Forwarding rules, as NFD users rely on them:
//! - `/localhost` packets are accepted only from local faces and sent only to local faces; an
//!   Interest for `/localhop` that came from a non-local face is not sent to non-local faces;
//! - an Interest with HopLimit 0 is dropped; a forwarded Interest carries HopLimit − 1, and one
//!   that reaches 0 goes only to local faces;
//! - a (name, nonce) in the dead-nonce list, or a nonce already on the PIT entry from another
//!   face or sent upstream, is a loop: Nack Duplicate to a point-to-point downstream (the same
//!   nonce again from the same point-to-point downstream is a retransmission, as in NFD);
//! - no route: Nack NoRoute; PIT full, or nearly full and the downstream already holding its
//!   fair share of it: Nack Congestion; unsolicited Data is dropped;
//! - a Nack from an upstream is recorded; when every upstream has Nacked, the downstreams get a
//!   Nack with the least severe reason.
//!
//! NB-Cache (Pan et al.) runs inside the same pipeline: the CS filter and the queue-threshold
//! bypass ([`CsFilter`], [`EngineConfig::bypass_threshold`]) and its congestion control, plain
//! ECN or NB-CC with its Nack-α / Nack-β signals ([`CongestionConfig`]).

use std::ops::Range;
use std::sync::Arc;

use crate::fw::asf::AsfTable;
use crate::fw::strategy::{self, StrategyChoice, StrategyKind};
use crate::hash::{HashKey, PrefixHashes};
use crate::table::dead_nonce::{dead_nonce_key, DeadNonceList, DEFAULT_LIFETIME_MS};
use crate::table::fib::{Fib, FibCursor, LpmStats};
use crate::table::index::{prefetch_lines, LinePlan};
use crate::table::pit_cs::{CsMatch, FaceId, PitCs, PitCsConfig, PitLimits, TableFull, NONE};

pub use crate::table::cs_filter::CsFilter;
use wire::lp::{NackReason, NbccSignal, CACHE_POLICY_NO_CACHE};
use wire::{tt, DataView, InterestView, Limits, LpPacketView, NameView, PacketView};

mod access;
mod asf;
mod data;
mod handon;
mod interest;
mod nbcc;
mod new_nexthop;

pub use handon::{HandOn, HandedOn};
use interest::{find_nonce_offset, Forward, Planned};
use nbcc::CcState;
pub use nbcc::{CongestionConfig, CongestionCounters};
pub use new_nexthop::{NewNextHopCounters, NEW_NEXTHOP_WATCH};

/// Most packets per batch.
pub const MAX_BATCH: usize = 64;

/// Output buffer room per packet of a batch beyond the longest packet (a Nack's or a
/// HopLimit copy's overhead, a PIT token).
const OUT_SLACK_BYTES: usize = 256;

/// Most planning passes over a batch's FIB lookups (each requests one more line per lookup).
const FIB_PLAN_PASSES: usize = 6;

/// How many packets ahead of the one being forwarded a Data's PIT entries are requested.
const DATA_AHEAD: usize = 8;

/// How many packets ahead of the one being parsed the parse pass requests packet bytes.
const PARSE_AHEAD: usize = 4;

/// Lines of a packet the parse pass requests ahead: the headers and a name of up to 448 bytes
/// (an attacker's long name included; the content of a Data is not parsed, only passed on).
const PARSE_LINES: usize = 8;

/// Requests the first [`PARSE_LINES`] cache lines of `bytes`.
#[inline(always)]
fn prefetch_bytes(bytes: &[u8]) {
    prefetch_lines(bytes.as_ptr(), bytes.len().min(PARSE_LINES * 64));
}

/// Which LPM algorithm the FIB lookup uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LpmAlgorithm {
    /// Algorithm 1 of So et al. (ANCS 2013).
    TwoStage,
    /// The baseline: longest prefix first.
    LongestFirst,
}

/// Engine configuration; capacities are fixed when the engine is built.
#[derive(Debug, Clone, Copy)]
pub struct EngineConfig {
    /// PIT and CS sizes and policies.
    pub pit_cs: PitCsConfig,
    /// The InterestLifetime cap and each face's share of the PIT.
    pub pit_limits: PitLimits,
    /// Dead-nonce list capacity.
    pub dead_nonce_capacity: usize,
    /// Dead-nonce lifetime.
    pub dead_nonce_lifetime_ms: u64,
    /// Packet decoding limits.
    pub limits: Limits,
    /// Prefetch buckets after hashing a batch.
    pub prefetch: bool,
    /// FIB LPM algorithm.
    pub lpm: LpmAlgorithm,
    /// NB-Cache's second-stage bypass (active queue management, Pan et al.): when the slow tier
    /// has at least this many lookups waiting ([`SlowTier::waiting`]), a new Interest for a
    /// name it holds goes upstream instead of joining them, if an upstream is available;
    /// otherwise it queues as usual. A RAM-tier hit is never bypassed. `None`: off.
    pub bypass_threshold: Option<usize>,
    /// Congestion notification of the store: plain ECN or NB-CC (Pan et al.); off by default.
    pub congestion: CongestionConfig,
    /// Capacity of ASF's measurements table, in name prefixes (allocated when a prefix first
    /// chooses ASF; see [`crate::fw::asf`]); the access strategy's table has as many prefixes
    /// and RTO timers ([`crate::fw::access`]).
    pub asf_namespaces: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            pit_cs: PitCsConfig::default(),
            pit_limits: PitLimits::default(),
            dead_nonce_capacity: 65_536,
            dead_nonce_lifetime_ms: DEFAULT_LIFETIME_MS,
            limits: Limits {
                // The forwarder passes ApplicationParameters through; checking their digest
                // is the application's business and costs a SHA-256 per signed Interest.
                verify_parameters_digest: false,
                ..Limits::default()
            },
            prefetch: true,
            lpm: LpmAlgorithm::TwoStage,
            bypass_threshold: None,
            congestion: CongestionConfig::default(),
            asf_namespaces: 1024,
        }
    }
}

/// What the engine knows about a face.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FaceInfo {
    /// A local face (Unix socket, loopback): may carry `/localhost`.
    pub local: bool,
    /// A multi-access face (multicast UDP, Ethernet): no Nacks are sent on it.
    pub multi_access: bool,
    /// LocalFieldsEnabled (NFD's `allowLocalFields`): an Interest's NextHopFaceId is honoured
    /// from this face; from a face without it, such an Interest is dropped, as NFD's
    /// GenericLinkService drops it ([`DropReason::LinkField`]).
    pub local_fields: bool,
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Failed to decode.
    Malformed,
    /// A piece of a fragmented packet (the face reassembles before the engine).
    Fragment,
    /// An LpPacket without a network packet (IDLE).
    NoPayload,
    /// `/localhost` from a non-local face.
    Scope,
    /// HopLimit was 0.
    HopLimit,
    /// Loop (dead nonce or duplicate nonce).
    Loop,
    /// No FIB entry or no eligible next hop.
    NoRoute,
    /// The PIT is full.
    PitFull,
    /// The PIT is nearly full and the face already holds its fair share of it
    /// ([`PitLimits`]).
    PitShare,
    /// Too many downstreams on one PIT entry.
    InRecordsFull,
    /// Data that no PIT entry wanted.
    Unsolicited,
    /// A Nack that matches no out-record.
    NackUnmatched,
    /// A retransmission within the suppression interval.
    Suppressed,
    /// The batch was larger than [`MAX_BATCH`].
    BatchOverflow,
    /// An NDNLPv2 field the packet may not carry, as NFD's GenericLinkService judges it: a
    /// NextHopFaceId on an Interest from a face without LocalFieldsEnabled, or on a Data or a
    /// Nack; a CachePolicy on an Interest or a Nack.
    LinkField,
}

/// Number of [`DropReason`]s.
pub const DROP_REASONS: usize = 15;

impl DropReason {
    /// Index for counter arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// All reasons, in index order.
    pub const ALL: [DropReason; DROP_REASONS] = [
        DropReason::Malformed,
        DropReason::Fragment,
        DropReason::NoPayload,
        DropReason::Scope,
        DropReason::HopLimit,
        DropReason::Loop,
        DropReason::NoRoute,
        DropReason::PitFull,
        DropReason::PitShare,
        DropReason::InRecordsFull,
        DropReason::Unsolicited,
        DropReason::NackUnmatched,
        DropReason::Suppressed,
        DropReason::BatchOverflow,
        DropReason::LinkField,
    ];
}

/// Where the bytes of an outgoing packet are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PacketRef {
    /// The network packet of input `index`, at `range` of its bytes.
    Input {
        /// Index in the batch.
        index: u32,
        /// Byte range of the Interest or Data inside that input.
        range: Range<u32>,
    },
    /// Bytes in the engine's output buffer.
    Out(Range<u32>),
}

/// The kind of packet to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendKind {
    /// An Interest.
    Interest,
    /// A Data.
    Data,
    /// A Nack of the Interest in `packet`.
    Nack(NackReason),
    /// An IDLE LpPacket (no network packet; `packet` is empty) carrying the action's NB-CC
    /// signal.
    Idle,
}

/// One packet to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// Destination face.
    pub face: FaceId,
    /// What it is.
    pub kind: SendKind,
    /// The network-layer packet (Interest or Data).
    pub packet: PacketRef,
    /// The downstream's PIT token to attach (range in the output buffer).
    pub pit_token: Option<Range<u32>>,
    /// CongestionMark to attach (0 = none).
    pub congestion_mark: u64,
    /// NB-CC's Nack-α or Nack-β to attach (NDNLPv2 field 952; on Data and IDLE only).
    pub nbcc: Option<NbccSignal>,
    /// The face the packet came in on, for NDNLPv2 IncomingFaceId: the downstream of a
    /// forwarded Interest (also when `packet` is a copy: HopLimit decremented, or stored for a
    /// slower-tier lookup), the upstream of a Data; `None` for a Data the content store (RAM
    /// or slower tier) served, which NFD marks with its content-store face id, and for Nacks
    /// and IDLE packets.
    pub incoming: Option<FaceId>,
}

/// Per-engine counters (read by management; never shared between workers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Interests received from a face (a CanBePrefix Interest another engine handed on is
    /// counted once, by the engine that received it from the face).
    pub in_interests: u64,
    /// Interests another engine handed on ([`Engine::process_handed_on`]): already counted in
    /// that engine's `in_interests`.
    pub handed_on_in: u64,
    /// Data received.
    pub in_data: u64,
    /// Nacks received.
    pub in_nacks: u64,
    /// Interests sent.
    pub out_interests: u64,
    /// Data sent.
    pub out_data: u64,
    /// Nacks sent.
    pub out_nacks: u64,
    /// PIT entries satisfied by Data (NFD's nSatisfiedInterests, less the CS hits, which the
    /// table counts).
    pub satisfied: u64,
    /// PIT entries that ended unsatisfied (NFD's nUnsatisfiedInterests): expired, rejected for
    /// want of a route, or Nacked by every upstream.
    pub unsatisfied: u64,
    /// FIB lookups and probes.
    pub lpm: LpmStats,
    /// Drops by reason ([`DropReason::index`]).
    pub drops: [u64; DROP_REASONS],
    /// NB-Cache's bypasses of the CS, by reason.
    pub bypass: BypassCounters,
    /// Congestion notification: NB-CC's signals and the Data marked.
    pub congestion: CongestionCounters,
    /// Multicast's afterNewNextHop: Interests sent to next hops added while they waited.
    pub new_nexthop: NewNextHopCounters,
}

/// Interests that did not wait for the content store (NB-Cache, Pan et al.), by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BypassCounters {
    /// First stage: the CS filter found the name surely absent, so neither the CS nor the
    /// slow tier was asked.
    pub filter_skips: u64,
    /// The CS filter said "maybe" but no tier held the name (a positive that missed).
    pub filter_false_positives: u64,
    /// Second stage: the slow tier held the name but had `bypass_threshold` lookups waiting,
    /// so the Interest went upstream.
    pub queue_bypasses: u64,
    /// The slow tier was past the threshold, but no upstream was available: the Interest
    /// queued on it.
    pub queue_no_upstream: u64,
}

/// A slower CS tier behind the in-RAM CS (the SSD L2). A lookup answers miss, or
/// pending: the Interest then waits in its PIT entry until [`Engine::complete_pending`].
pub trait SlowTier {
    /// Starts looking up exactly these name components; `true` means pending.
    fn lookup(&mut self, full_hash: u64, name_value: &[u8]) -> bool;

    /// [`SlowTier::lookup`] for an Interest with MustBeFresh: the completion carries a Data
    /// only if it is still fresh, else none (the engine forwards the Interest). Default:
    /// [`SlowTier::lookup`].
    fn lookup_fresh(&mut self, full_hash: u64, name_value: &[u8]) -> bool {
        self.lookup(full_hash, name_value)
    }

    /// Starts looking up, for a CanBePrefix Interest named `name_value` (`full_hash` its
    /// hash), any stored Data whose name starts with these components, only a fresh one if
    /// `must_be_fresh`; `true` means pending, and the completion names the Interest
    /// ([`Engine::complete_pending`] with `full_hash` and `name_value`, the Data found).
    /// Asked when [`SlowTier::lookup`] missed. Default: never.
    fn lookup_prefix(&mut self, _full_hash: u64, _name_value: &[u8], _must_be_fresh: bool) -> bool {
        false
    }

    /// Whether the tier holds exactly these name components (its index, no I/O): the
    /// second-stage bypass asks it of a name before going round the tier's queue, and the CS
    /// filter's accounting after a lookup that did not go pending (a busy queue is not a false
    /// positive). Default: never.
    fn holds(&mut self, _full_hash: u64, _name_value: &[u8]) -> bool {
        false
    }

    /// Lookups waiting for the tier (answered pending, not yet completed): the length of its
    /// queue for the second-stage bypass. Default: 0.
    fn waiting(&self) -> usize {
        0
    }

    /// Prefetch-ahead, asked after a CS hit on `name_value`: if this hit is the one that
    /// should start reading the tier's next unit (Mansilha et al.'s next batch, asked for at the
    /// penultimate chunk of the current one), writes the name of that unit's first chunk into
    /// `out` (empty on entry) and answers `true`. The engine then calls
    /// [`SlowTier::prefetch`] unless the CS already holds that chunk. Default: never.
    fn ahead_of(&mut self, _name_value: &[u8], _out: &mut Vec<u8>) -> bool {
        false
    }

    /// Starts reading the unit of `name_value` into the CS with no Interest waiting for it: its
    /// chunks come back through the tier's completions like the rest of a batch. Never blocks;
    /// a full queue drops the prefetch. Default: nothing.
    fn prefetch(&mut self, _name_value: &[u8]) {}
}

/// Bytes reserved for the name a slow tier's prefetch-ahead asks for (Name TLV-VALUE; the
/// store's tier names at most 512).
const AHEAD_NAME_BYTES: usize = 1024;

/// The NDNLPv2 header fields the pipeline reads (a bare packet has none).
#[derive(Clone, Copy, Default)]
struct LpInfo<'a> {
    pit_token: Option<&'a [u8]>,
    congestion_mark: u64,
    cache_policy: Option<u64>,
    next_hop_face_id: Option<u64>,
    nbcc: Option<NbccSignal>,
}

impl<'a> LpInfo<'a> {
    const NONE: LpInfo<'static> = LpInfo {
        pit_token: None,
        congestion_mark: 0,
        cache_policy: None,
        next_hop_face_id: None,
        nbcc: None,
    };

    fn of(lp: &LpPacketView<'a>) -> Self {
        LpInfo {
            pit_token: lp.pit_token,
            congestion_mark: lp.congestion_mark.unwrap_or(0),
            cache_policy: lp.cache_policy,
            next_hop_face_id: lp.next_hop_face_id,
            nbcc: lp.nbcc,
        }
    }
}

#[derive(Clone, Copy)]
enum Parsed<'a> {
    Interest {
        i: InterestView<'a>,
        lp: LpInfo<'a>,
    },
    Data {
        d: DataView<'a>,
        lp: LpInfo<'a>,
    },
    Nack {
        i: InterestView<'a>,
        reason: NackReason,
    },
    /// An IDLE LpPacket carrying an NB-CC signal.
    Signal(NbccSignal),
    Dropped(DropReason),
}

/// A forwarding engine: one per worker.
pub struct Engine {
    key: HashKey,
    config: EngineConfig,
    table: PitCs,
    fib: Arc<Fib>,
    dnl: DeadNonceList,
    strategies: StrategyChoice,
    /// ASF's measurements, once a prefix chose ASF.
    asf: Option<AsfTable>,
    /// The access strategy's measurements and timers, once a prefix chose it.
    access: Option<crate::fw::access::AccessTable>,
    /// The CS admits Data (NFD's CS_ENABLE_ADMIT).
    cs_admit: bool,
    /// The CS serves Interests (NFD's CS_ENABLE_SERVE).
    cs_serve: bool,
    /// Per face slot ([`PitCs::face_slot`]): the full id of the face declared there last, and
    /// its properties (a face of an old generation of the slot is unknown).
    faces: Vec<(FaceId, FaceInfo)>,
    slow_tier: Option<Box<dyn SlowTier + Send>>,
    /// The name a slow tier's prefetch-ahead asks for (reused; [`AHEAD_NAME_BYTES`] reserved).
    ahead_name: Vec<u8>,
    counters: Counters,
    /// Congestion notification state (ECN, NB-CC).
    cc: CcState,
    hashes: Vec<PrefixHashes>,
    /// Per batch slot: the FIB lookup planned over the prefetch passes.
    plans: Vec<LinePlan>,
    actions: Vec<Action>,
    out: Vec<u8>,
    expired: Vec<u32>,
    pits_scratch: Vec<(u32, bool)>,
    faces_scratch: Vec<FaceId>,
    /// The random strategy's draws (xorshift64*, seeded from the hash key).
    rng: u64,
    /// Multicast PIT entries watched for new next hops.
    watch: new_nexthop::Watch,
    /// While [`Engine::process_handed_on`] runs: what is left of each input's downstream
    /// lifetime, ms (the expiry its in-record had at the engine that handed it on).
    handed_on: Option<[u64; MAX_BATCH]>,
}

impl core::fmt::Debug for Engine {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Engine")
            .field("pit", &self.table.pit_len())
            .field("cs", &self.table.cs_len())
            .finish()
    }
}

/// The output of one batch.
#[derive(Debug)]
pub struct Output<'e> {
    /// Packets to send.
    pub actions: &'e [Action],
    /// The engine's output buffer that [`PacketRef::Out`] and PIT tokens point into.
    pub out: &'e [u8],
}

impl Output<'_> {
    /// The bytes of an action's packet, given the batch it came from.
    pub fn bytes<'a>(&'a self, a: &Action, inputs: &'a [(FaceId, &'a [u8])]) -> &'a [u8] {
        match &a.packet {
            PacketRef::Input { index, range } => {
                &inputs[*index as usize].1[range.start as usize..range.end as usize]
            }
            PacketRef::Out(r) => &self.out[r.start as usize..r.end as usize],
        }
    }

    /// The PIT token of an action.
    pub fn pit_token(&self, a: &Action) -> Option<&[u8]> {
        a.pit_token
            .as_ref()
            .map(|r| &self.out[r.start as usize..r.end as usize])
    }
}

fn is_under(name: &NameView<'_>, first: &[u8]) -> bool {
    name.components()
        .next()
        .is_some_and(|c| u32::from(c.typ) == tt::GENERIC_COMPONENT && c.value == first)
}

fn range_of(outer: &[u8], inner: &[u8]) -> Range<u32> {
    let start = inner.as_ptr() as usize - outer.as_ptr() as usize;
    start as u32..(start + inner.len()) as u32
}

impl Engine {
    /// An engine with its own PIT+CS and dead-nonce list, sharing `fib`.
    pub fn new(key: HashKey, fib: Arc<Fib>, config: EngineConfig) -> Self {
        let empty = wire::NameView::decode(&[0x07, 0x00], &Limits::default())
            .map(|n| PrefixHashes::new(key, &n));
        let Ok(empty) = empty else {
            unreachable!("the empty name decodes")
        };
        let additions = fib.nexthop_additions();
        Engine {
            key,
            config,
            table: PitCs::with_limits(config.pit_cs, config.pit_limits),
            fib,
            dnl: DeadNonceList::new(config.dead_nonce_capacity, config.dead_nonce_lifetime_ms),
            strategies: StrategyChoice::new(key),
            asf: None,
            access: None,
            cs_admit: true,
            cs_serve: true,
            faces: Vec::new(),
            slow_tier: None,
            ahead_name: Vec::with_capacity(AHEAD_NAME_BYTES),
            counters: Counters::default(),
            cc: CcState::default(),
            hashes: vec![empty; MAX_BATCH],
            plans: vec![LinePlan::default(); MAX_BATCH],
            actions: Vec::with_capacity(MAX_BATCH * 4),
            out: Vec::with_capacity(MAX_BATCH * (config.limits.max_packet_bytes + OUT_SLACK_BYTES)),
            expired: Vec::with_capacity(1024),
            pits_scratch: Vec::with_capacity(16),
            faces_scratch: Vec::with_capacity(16),
            rng: crate::hash::value_hash(key, b"random") | 1,
            watch: new_nexthop::Watch::new(additions),
            handed_on: None,
        }
    }

    /// Attaches a slower CS tier.
    pub fn set_slow_tier(&mut self, tier: Box<dyn SlowTier + Send>) {
        self.slow_tier = Some(tier);
    }

    /// Puts a filter of the names the CS holds (every tier) in front of the CS lookup
    /// (NB-Cache's first-stage bypass, see [`PitCs::set_filter`]): an Interest whose name it
    /// surely does not hold skips the CS and the slow tier. CanBePrefix Interests and names
    /// ending in an implicit digest are not filtered (the filter knows full names only).
    pub fn set_cs_filter(&mut self, filter: Box<dyn CsFilter>) {
        self.table.set_filter(filter);
    }

    /// Turns the second-stage bypass on (`Some(threshold)`) or off
    /// ([`EngineConfig::bypass_threshold`]).
    pub fn set_bypass_threshold(&mut self, threshold: Option<usize>) {
        self.config.bypass_threshold = threshold;
    }

    /// Declares a face's properties (unknown faces are non-local point-to-point); its NB-CC
    /// state starts afresh (available to bypassed Interests, no signal sent to it). Indexed by
    /// the face's slot: a face of another generation of the slot is unknown from then on.
    pub fn set_face(&mut self, face: FaceId, info: FaceInfo) {
        let i = self.table.face_slot(face);
        if self.faces.len() <= i {
            self.faces.resize(i + 1, (NONE, FaceInfo::default()));
        }
        if self.cc.faces.len() <= i {
            self.cc.faces.resize(i + 1, Default::default());
        }
        if self.cc.listed.capacity() < self.cc.faces.len() {
            let more = self.cc.faces.len() - self.cc.listed.len();
            self.cc.listed.reserve_exact(more);
        }
        // A face declared anew (a new face, perhaps on a reused id) starts with no NB-CC state
        // (but stays in the list of downstreams it may be in, which forgets it in time).
        let listed = self.cc.faces[i].listed;
        self.cc.faces[i] = Default::default();
        self.cc.faces[i].listed = listed;
        self.faces[i] = (face, info);
    }

    fn face(&self, face: FaceId) -> FaceInfo {
        match self.faces.get(self.table.face_slot(face)) {
            Some(&(id, info)) if id == face => info,
            _ => FaceInfo::default(),
        }
    }

    /// Whether `face` is the face last declared on its slot ([`Engine::set_face`]).
    #[inline]
    fn face_current(&self, face: FaceId) -> bool {
        let slot = self.table.face_slot(face);
        self.faces.get(slot).is_some_and(|&(id, _)| id == face)
    }

    /// The strategy-choice table.
    pub fn strategies_mut(&mut self) -> &mut StrategyChoice {
        &mut self.strategies
    }

    /// The strategy-choice table.
    pub fn strategies(&self) -> &StrategyChoice {
        &self.strategies
    }

    /// Turns the content store's admission (Data cached) and serving (Interests answered from
    /// it) on or off, as NFD's CS_ENABLE_ADMIT and CS_ENABLE_SERVE flags: with serving off, an
    /// Interest skips every CS tier and goes upstream; pending Interests are still satisfied
    /// by the Data that comes back, which is cached only if admission is on.
    pub fn set_cs_flags(&mut self, admit: bool, serve: bool) {
        self.cs_admit = admit;
        self.cs_serve = serve;
    }

    /// The content store's (admit, serve) flags.
    pub fn cs_flags(&self) -> (bool, bool) {
        (self.cs_admit, self.cs_serve)
    }

    /// The PIT+CS table.
    pub fn table(&self) -> &PitCs {
        &self.table
    }

    /// The PIT+CS table, mutably (CS configuration and erase).
    pub fn table_mut(&mut self) -> &mut PitCs {
        &mut self.table
    }

    /// Maps now the memory the engine reserved but would touch for the first time while it
    /// forwards: the table's ([`PitCs::prefault`]), the output buffer's (room for a batch of
    /// the longest packets, so that a batch of CS hits neither grows it nor faults on it) and
    /// the batch's other scratch lists. Call it once before forwarding; returns the bytes
    /// touched.
    pub fn prefault(&mut self) -> usize {
        use crate::table::mem::touch_spare;
        self.table.prefault()
            + touch_spare(&mut self.out)
            + touch_spare(&mut self.actions)
            + touch_spare(&mut self.expired)
    }

    /// The shared FIB.
    pub fn fib(&self) -> &Arc<Fib> {
        &self.fib
    }

    /// Live entries in the dead-nonce list (never more than its configured capacity).
    pub fn dead_nonce_len(&self) -> usize {
        self.dnl.len()
    }

    /// Counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Changes the LPM algorithm (benchmarks compare them).
    pub fn set_lpm(&mut self, lpm: LpmAlgorithm) {
        self.config.lpm = lpm;
    }

    /// Turns batch prefetching on or off (benchmarks compare them).
    pub fn set_prefetch(&mut self, on: bool) {
        self.config.prefetch = on;
    }

    /// The next random number (xorshift64*).
    fn random(&mut self) -> u64 {
        crate::fw::asf::xorshift(&mut self.rng)
    }

    fn drop_packet(&mut self, reason: DropReason) {
        self.counters.drops[reason.index()] += 1;
    }

    /// Advances time: expires PIT entries and dead nonces. [`Engine::process`] calls it.
    pub fn advance(&mut self, now_ms: u64) {
        self.dnl.expire(now_ms);
        let mut expired = std::mem::take(&mut self.expired);
        self.table.expire(now_ms, &mut expired);
        for &p in &expired {
            if self.table.pit(p).satisfied() {
                // Kept for a slower upstream's Data (ASF): satisfied, as NFD finalizes it.
                self.table.pit_remove(p, |_| {});
                self.counters.satisfied += 1;
                continue;
            }
            let full_hash = self.table.name_entry(self.table.pit(p).owner).hash_value();
            let dnl = &mut self.dnl;
            self.table.pit_remove(p, |nonce| {
                dnl.insert(dead_nonce_key(full_hash, nonce), now_ms)
            });
            self.counters.unsatisfied += 1;
        }
        self.expired = expired;
        self.access_timers(now_ms);
        self.after_new_nexthops(now_ms);
    }

    /// Processes a batch: returns the packets to send. Inputs beyond [`MAX_BATCH`] are dropped.
    pub fn process<'e>(&'e mut self, now_ms: u64, inputs: &[(FaceId, &[u8])]) -> Output<'e> {
        self.process_hashed(now_ms, inputs, &[])
    }

    /// [`Engine::process`] with the full-name hashes the dispatcher computed to pick this
    /// worker (So et al.'s "precomputed hash"): `full_hashes[i]`, where present, is
    /// [`crate::hash::full_name_hash`] under this engine's key of the name of input `i`'s
    /// Interest, Data or Nack (checked in debug builds). A Nack then needs no hashing at all, a
    /// Data neither unless CanBePrefix or implicit-digest Interests are pending, and an
    /// Interest one finalization fewer. The slice may be shorter than `inputs` (or empty).
    pub fn process_hashed<'e>(
        &'e mut self,
        now_ms: u64,
        inputs: &[(FaceId, &[u8])],
        full_hashes: &[Option<u64>],
    ) -> Output<'e> {
        self.actions.clear();
        self.out.clear();
        self.advance(now_ms);
        self.cc_update(now_ms);
        if inputs.len() > MAX_BATCH {
            for _ in MAX_BATCH..inputs.len() {
                self.drop_packet(DropReason::BatchOverflow);
            }
        }
        let inputs = &inputs[..inputs.len().min(MAX_BATCH)];
        let mut parsed: [Option<Parsed<'_>>; MAX_BATCH] = [None; MAX_BATCH];
        self.parse_pass(inputs, full_hashes, &mut parsed);
        // One guard for passes 2 and 3: the FIB entries the planning passes found stay valid
        // until the packets are forwarded.
        let guard = crossbeam_epoch::pin();
        // The FIB answers (entry, probes) of the lookups whose plans completed with one.
        let mut planned: [Option<Planned<'_>>; MAX_BATCH] = [None; MAX_BATCH];
        if self.config.prefetch {
            self.plan_pass(&parsed[..inputs.len()], &guard, &mut planned);
        }
        self.forward_pass(now_ms, inputs, &parsed, &planned, &guard);
        drop(guard);
        self.cc_idle_signals(now_ms);
        Output {
            actions: &self.actions,
            out: &self.out,
        }
    }

    /// [`Engine::process_hashed`] for Interests another engine handed on
    /// ([`Engine::hand_on_pending`]), each from its downstream's face with its link-layer
    /// fields, `lifetimes_ms[i]` what was left of input `i`'s lifetime there: its in-record
    /// here expires then (or at its InterestLifetime, if sooner), and it counts in
    /// [`Counters::handed_on_in`], not in `in_interests`. A missing lifetime is taken as 0
    /// (the Interest expires at once).
    pub fn process_handed_on<'e>(
        &'e mut self,
        now_ms: u64,
        inputs: &[(FaceId, &[u8])],
        full_hashes: &[Option<u64>],
        lifetimes_ms: &[u64],
    ) -> Output<'e> {
        let mut left = [0; MAX_BATCH];
        for (l, &t) in left.iter_mut().zip(lifetimes_ms) {
            *l = t;
        }
        self.handed_on = Some(left);
        self.process_hashed(now_ms, inputs, full_hashes);
        self.handed_on = None;
        Output {
            actions: &self.actions,
            out: &self.out,
        }
    }

    /// Pass 1: parse and hash, with the bytes of the packet PARSE_AHEAD places on requested
    /// meanwhile (a batch's packets are seldom all in cache by now: 64 of them can be half a
    /// megabyte, and the parse and hash read every byte of the name); then the first level of
    /// the prefetches for the whole batch.
    #[inline(always)]
    fn parse_pass<'a>(
        &mut self,
        inputs: &[(FaceId, &'a [u8])],
        full_hashes: &[Option<u64>],
        parsed: &mut [Option<Parsed<'a>>; MAX_BATCH],
    ) {
        if self.config.prefetch {
            for (_, bytes) in inputs.iter().take(PARSE_AHEAD) {
                prefetch_bytes(bytes);
            }
        }
        for (i, (_, bytes)) in inputs.iter().enumerate() {
            if self.config.prefetch {
                if let Some((_, ahead)) = inputs.get(i + PARSE_AHEAD) {
                    prefetch_bytes(ahead);
                }
            }
            let p = self.parse(bytes);
            self.hash_parsed(i, &p, full_hashes.get(i).copied().flatten());
            parsed[i] = Some(p);
        }
        if self.config.prefetch {
            // First level of the prefetches, for the whole batch once it is parsed: requests
            // made back to back overlap their page walks, while one made between two packets'
            // parsing waits out its walk alone (`memlat batch`, docs/performance.md).
            for (i, p) in parsed.iter().enumerate().take(inputs.len()) {
                if let Some(p) = p {
                    self.prefetch_first_level(i, p);
                }
            }
        }
    }

    /// Hashes the name of parsed packet `i`, taking the dispatcher's full-name hash `hint`
    /// where it saves work.
    #[inline(always)]
    fn hash_parsed(&mut self, i: usize, p: &Parsed<'_>, hint: Option<u64>) {
        let h = &mut self.hashes[i];
        match (p, hint) {
            (Parsed::Interest { i, .. }, Some(full)) => {
                h.compute_with_full(self.key, &i.name(), full)
            }
            (Parsed::Nack { i, .. }, Some(full)) => {
                h.set_full(&i.name(), full);
                debug_assert_eq!(full, crate::hash::full_name_hash(self.key, &i.name()));
            }
            // A Data needs its prefixes only for CanBePrefix and digest Interests (and
            // `on_data` computes them if such an Interest arrives later in this batch).
            (Parsed::Data { d, .. }, Some(full)) if !self.table.data_needs_prefixes() => {
                h.set_full(&d.name(), full);
                debug_assert_eq!(full, crate::hash::full_name_hash(self.key, &d.name()));
            }
            (Parsed::Interest { i, .. } | Parsed::Nack { i, .. }, _) => {
                h.compute(self.key, &i.name())
            }
            (Parsed::Data { d, .. }, _) => {
                h.compute(self.key, &d.name());
                debug_assert!(
                    hint.is_none_or(|f| f == h.full()),
                    "a wrong precomputed hash"
                );
            }
            (Parsed::Signal(_) | Parsed::Dropped(_), _) => {}
        }
    }

    /// Pass 2: prefetch the next levels of every lookup of the batch, all at once, and the
    /// free entries the batch's new PIT entries will take. Records in `planned` the FIB answer
    /// of every lookup whose plan completed.
    #[inline(always)]
    fn plan_pass<'g>(
        &mut self,
        parsed: &[Option<Parsed<'_>>],
        guard: &'g crossbeam_epoch::Guard,
        planned: &mut [Option<Planned<'g>>; MAX_BATCH],
    ) {
        // Where each lookup's plan stopped in the last pass (each pass resumes it there).
        let mut cursors = [FibCursor::default(); MAX_BATCH];
        // The batch slots of the Interests whose FIB lookups are still being planned.
        let mut todo = [0u8; MAX_BATCH];
        let mut n_todo = 0;
        for (i, p) in parsed.iter().enumerate() {
            if let Some(Parsed::Interest { .. }) = p {
                todo[n_todo] = i as u8;
                n_todo += 1;
            }
        }
        self.table.prefetch_free(n_todo);
        // Second level: the buckets have (mostly) arrived; prefetch the entries they point
        // at, so the lookups in pass 3 find both levels in cache.
        for (i, p) in parsed.iter().enumerate() {
            if matches!(
                p,
                Some(Parsed::Interest { .. } | Parsed::Data { .. } | Parsed::Nack { .. })
            ) {
                self.table.prefetch_entry(self.hashes[i].full());
            }
        }
        // The FIB lookups: a chain of dependent reads (bucket, entry, next bucket...) whose
        // length depends on what each read finds. Each pass resumes every unfinished
        // lookup where it stopped (its cursor), goes on over the lines already requested
        // and requests the next; the pass's requests are then issued together, so the
        // whole batch's misses overlap instead of one packet's at a time. The pass that
        // completes a plan has the lookup's answer, which pass 3 then uses. A pass visits
        // only the lookups still unfinished.
        for _ in 0..FIB_PLAN_PASSES {
            for &i in &todo[..n_todo] {
                let i = usize::from(i);
                if let Some(Some(Parsed::Interest { i: int, .. })) = parsed.get(i) {
                    let (plan, cursor) = (&mut self.plans[i], &mut cursors[i]);
                    let h = &self.hashes[i];
                    if let Some(a) = self.fib.plan(&int.name(), h, guard, plan, cursor) {
                        planned[i] = Some(a);
                    }
                }
            }
            // The pass's requests, back to back (see `LinePlan::issue`), and the lookups
            // left for the next pass.
            let mut still = 0;
            for t in 0..n_todo {
                let i = usize::from(todo[t]);
                let plan = &mut self.plans[i];
                plan.issue();
                if !plan.complete {
                    todo[still] = i as u8;
                    still += 1;
                }
            }
            n_todo = still;
            if n_todo == 0 {
                break;
            }
        }
    }

    /// Pass 3: forward. A Data's third level (its PIT entries, read through its name entry)
    /// is requested DATA_AHEAD packets before the Data is forwarded: by then its name entry,
    /// requested in pass 2, has arrived, so the request itself does not wait on it.
    #[inline(always)]
    fn forward_pass(
        &mut self,
        now_ms: u64,
        inputs: &[(FaceId, &[u8])],
        parsed: &[Option<Parsed<'_>>; MAX_BATCH],
        planned: &[Option<Planned<'_>>; MAX_BATCH],
        guard: &crossbeam_epoch::Guard,
    ) {
        let third_level = |e: &Self, i: usize| {
            if let Some(Some(Parsed::Data { .. })) = parsed.get(i) {
                e.table.prefetch_for_data(e.hashes[i].full());
            }
        };
        if self.config.prefetch {
            for i in 0..DATA_AHEAD.min(inputs.len()) {
                third_level(self, i);
            }
        }
        for (idx, p) in parsed.iter().enumerate().take(inputs.len()) {
            if self.config.prefetch && idx + DATA_AHEAD < inputs.len() {
                third_level(self, idx + DATA_AHEAD);
            }
            let face = inputs[idx].0;
            // An NB-CC signal that came with a packet (a bare packet has none).
            if let Some(Parsed::Interest { lp, .. } | Parsed::Data { lp, .. }) = p {
                if let Some(sig) = lp.nbcc {
                    self.on_nbcc_signal(now_ms, face, sig);
                }
            }
            match p {
                Some(Parsed::Interest { i, lp }) => {
                    self.cc_note_interest(now_ms, face);
                    self.on_interest(
                        now_ms,
                        idx,
                        face,
                        inputs[idx].1,
                        i,
                        *lp,
                        planned[idx],
                        guard,
                    )
                }
                Some(Parsed::Data { d, lp }) => {
                    self.on_data(now_ms, idx, face, inputs[idx].1, d, *lp)
                }
                Some(Parsed::Nack { i, reason }) => self.on_nack(now_ms, idx, face, i, *reason),
                Some(Parsed::Signal(sig)) => self.on_nbcc_signal(now_ms, face, *sig),
                Some(Parsed::Dropped(r)) => self.drop_packet(*r),
                None => {}
            }
        }
    }

    /// Requests the lines packet `i` of the batch reads first: its PIT+CS bucket and, for an
    /// Interest, its dead-nonce bucket and the first FIB buckets of its lookup.
    #[inline(always)]
    fn prefetch_first_level(&mut self, i: usize, p: &Parsed<'_>) {
        match p {
            Parsed::Interest { i: int, .. } => {
                let full = self.hashes[i].full();
                self.table.prefetch(full);
                if let Some(f) = self.table.filter() {
                    f.prefetch(full);
                }
                self.fib
                    .prefetch(&int.name(), &self.hashes[i], &mut self.plans[i]);
                self.plans[i].issue();
                self.dnl
                    .prefetch(dead_nonce_key(full, int.nonce().unwrap_or([0; 4])));
            }
            Parsed::Data { .. } | Parsed::Nack { .. } => self.table.prefetch(self.hashes[i].full()),
            Parsed::Signal(_) | Parsed::Dropped(_) => {}
        }
    }

    fn parse<'a>(&self, bytes: &'a [u8]) -> Parsed<'a> {
        let limits = &self.config.limits;
        // Bare Interests and Data decode straight into their own (128-byte) views rather than
        // through `PacketView`, which an LpPacket's view makes 336 bytes long: the same
        // validation, without a `memcpy` call per packet.
        match bytes.first().map(|&t| u32::from(t)) {
            Some(tt::INTEREST) => {
                return match InterestView::decode(bytes, limits) {
                    Ok(i) => Parsed::Interest {
                        i,
                        lp: LpInfo::NONE,
                    },
                    Err(_) => Parsed::Dropped(DropReason::Malformed),
                }
            }
            Some(tt::DATA) => {
                return match DataView::decode(bytes, limits) {
                    Ok(d) => Parsed::Data {
                        d,
                        lp: LpInfo::NONE,
                    },
                    Err(_) => Parsed::Dropped(DropReason::Malformed),
                }
            }
            _ => {}
        }
        let Ok(p) = PacketView::decode(bytes, limits) else {
            return Parsed::Dropped(DropReason::Malformed);
        };
        match p {
            PacketView::Interest(i) => Parsed::Interest {
                i,
                lp: LpInfo::NONE,
            },
            PacketView::Data(d) => Parsed::Data {
                d,
                lp: LpInfo::NONE,
            },
            PacketView::Lp(lp) => {
                if lp.is_fragmented() {
                    return Parsed::Dropped(DropReason::Fragment);
                }
                match lp.network_packet(limits) {
                    None => match lp.nbcc {
                        Some(sig) => Parsed::Signal(sig),
                        None => Parsed::Dropped(DropReason::NoPayload),
                    },
                    Some(Err(_)) => Parsed::Dropped(DropReason::Malformed),
                    // The fields NFD's GenericLinkService refuses on each packet type.
                    Some(Ok(PacketView::Interest(_))) if lp.cache_policy.is_some() => {
                        Parsed::Dropped(DropReason::LinkField)
                    }
                    Some(Ok(PacketView::Interest(i))) => match lp.nack {
                        Some(_) if lp.next_hop_face_id.is_some() => {
                            Parsed::Dropped(DropReason::LinkField)
                        }
                        Some(n) => Parsed::Nack {
                            i,
                            reason: n.reason.unwrap_or(NackReason::Other(0)),
                        },
                        None => Parsed::Interest {
                            i,
                            lp: LpInfo::of(&lp),
                        },
                    },
                    Some(Ok(PacketView::Data(_))) if lp.next_hop_face_id.is_some() => {
                        Parsed::Dropped(DropReason::LinkField)
                    }
                    Some(Ok(PacketView::Data(d))) => Parsed::Data {
                        d,
                        lp: LpInfo::of(&lp),
                    },
                    Some(Ok(PacketView::Lp(_))) => Parsed::Dropped(DropReason::Malformed),
                }
            }
        }
    }

    fn push_token(&mut self, token: Option<&[u8]>) -> Option<Range<u32>> {
        token.map(|t| {
            let start = self.out.len() as u32;
            self.out.extend_from_slice(t);
            start..self.out.len() as u32
        })
    }

    fn send(
        &mut self,
        face: FaceId,
        kind: SendKind,
        packet: PacketRef,
        token: Option<&[u8]>,
        mark: u64,
        incoming: Option<FaceId>,
    ) {
        let pit_token = self.push_token(token);
        let mut nbcc = None;
        match kind {
            SendKind::Interest => self.counters.out_interests += 1,
            SendKind::Data => {
                self.counters.out_data += 1;
                nbcc = self.cc_signal_for(face);
            }
            SendKind::Nack(_) => self.counters.out_nacks += 1,
            SendKind::Idle => {}
        }
        self.actions.push(Action {
            face,
            kind,
            packet,
            pit_token,
            congestion_mark: mark,
            nbcc,
            incoming,
        });
    }

    /// Sends a Nack of the input Interest back to its (point-to-point) downstream.
    fn nack_input(
        &mut self,
        face: FaceId,
        idx: usize,
        wire: &[u8],
        i: &InterestView<'_>,
        reason: NackReason,
        token: Option<&[u8]>,
    ) {
        if self.face(face).multi_access {
            return;
        }
        let packet = PacketRef::Input {
            index: idx as u32,
            range: range_of(wire, i.wire()),
        };
        self.send(face, SendKind::Nack(reason), packet, token, 0, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashKey;
    use wire::{Data, Interest, Name};

    /// `bufs` as a batch from `face`.
    fn batch(bufs: &[Vec<u8>], face: FaceId) -> Vec<(FaceId, &[u8])> {
        bufs.iter().map(|b| (face, b.as_slice())).collect()
    }

    /// A batch of CS hits on the longest Data the limits let in goes into the output buffer
    /// reserved when the engine was made: no allocation, whatever the first batches were.
    #[test]
    fn a_batch_of_the_longest_cs_hits_fits_the_output_buffer_reserved_at_start() {
        let key = HashKey::fixed(1, 2);
        let fib = Arc::new(Fib::new(key, 16, 2));
        let config = EngineConfig {
            pit_cs: PitCsConfig {
                pit_capacity: 256,
                cs_capacity: 256,
                ..PitCsConfig::default()
            },
            ..EngineConfig::default()
        };
        let longest = config.limits.max_packet_bytes;
        let mut e = Engine::new(key, fib.clone(), config);
        fib.add_nexthop(&Name::from_uri("/big").unwrap(), 2, 0)
            .unwrap();
        let reserved = e.out.capacity();
        assert!(reserved >= MAX_BATCH * longest, "{reserved}");
        let names: Vec<Name> = (0..MAX_BATCH)
            .map(|k| Name::from_uri(&format!("/big/{k}")).unwrap())
            .collect();
        let interests = |nonce: u32| -> Vec<Vec<u8>> {
            let names = names.iter().enumerate();
            names
                .map(|(k, n)| Interest::new(n.clone(), (nonce + k as u32).to_be_bytes()).to_wire())
                .collect()
        };
        let datas: Vec<Vec<u8>> = names
            .iter()
            .map(|n| {
                let overhead = Data::new(n.clone(), Vec::new()).to_wire().len() + 4;
                Data::new(n.clone(), vec![7; longest - overhead]).to_wire()
            })
            .collect();
        assert!(datas
            .iter()
            .all(|d| d.len() <= longest && d.len() > longest - 8));
        let first = interests(1);
        assert_eq!(e.process(0, &batch(&first, 1)).actions.len(), MAX_BATCH);
        assert_eq!(e.process(1, &batch(&datas, 2)).actions.len(), MAX_BATCH);
        assert_eq!(e.table().cs_len(), MAX_BATCH);
        let hits = interests(1000);
        let out = e.process(2, &batch(&hits, 3));
        assert_eq!(out.actions.len(), MAX_BATCH);
        assert!(
            out.out.len() >= MAX_BATCH * (longest - 8),
            "{}",
            out.out.len()
        );
        assert_eq!(e.out.capacity(), reserved, "the output buffer grew");
    }
}
