//! One table for the PIT and the CS (So, Narayanan and Oran, ANCS 2013, §3.2): one lookup per Interest and per Data.
//!
//! A [`NameEntry`] exists for each name that has pending Interests or cached Data. It holds up
//! to four PIT entries (aggregation is by Name + CanBePrefix + MustBeFresh) and one CS slot,
//! which is either the Data itself (direct) or, at the name of a CanBePrefix Interest that a
//! longer Data satisfied, a reference to the entry holding that Data (indirect, in the manner of
//! NDN-DPDK), so that later CanBePrefix Interests for the same name hit in one lookup. When the
//! Data for a pending Interest arrives, the PIT entry goes and the same name entry becomes a CS
//! entry: the PIT turns into the CS in place.
//!
//! Capacity is fixed at construction: `pit_capacity` PIT entries, `cs_capacity` CS entries
//! (direct and indirect), and one name entry per PIT or CS entry plus one spare (a new name is
//! allocated before the CS evicts to make room for it). Data are copied into slots of fixed
//! mappings ([`super::cs_data`]); the table never allocates after construction, except for a
//! PIT entry's second upstream or downstream and its stored Interest, whose buffers it keeps.
//!
//! Expiry is driven by the time the caller passes in: PIT entries sit on a timer wheel of
//! [`WHEEL_SLOTS`] slots of [`WHEEL_TICK_MS`]; advancing time visits only the slots that passed.

use smallvec::SmallVec;

use super::cs_data::{DataSlots, Slot};
use super::index::{
    prefetch_line, prefetch_lines, prefetch_lines_for_write, HashIndex, IndexError,
};
use crate::hash::PrefixHashes;
use wire::lp::NackReason;
use wire::NameView;

mod check;
mod cs;
mod long_names;
mod share;
mod wheel;

use long_names::LongNames;
use share::FaceShares;
pub use share::{
    PitLimits, DEFAULT_FACE_SLOTS, DEFAULT_MAX_LIFETIME_MS, DEFAULT_SHARE_WATERMARK_PERCENT,
    MAX_FACE_SLOTS,
};

/// A face number.
pub type FaceId = u32;

/// Sentinel for "no entry".
pub const NONE: u32 = u32::MAX;

/// A name entry's slot while it holds no Data.
const NO_DATA: Slot = Slot {
    class: 0,
    index: NONE,
};

/// Timer wheel granularity.
pub const WHEEL_TICK_MS: u64 = 8;
/// Timer wheel slots (a lap is `WHEEL_SLOTS * WHEEL_TICK_MS` = 8.2 s; longer lifetimes take
/// several laps).
pub const WHEEL_SLOTS: usize = 1024;

/// Name bytes kept inside the entry itself. IRCache-shaped names average 58 characters in
/// 6.66 components, about 72 bytes of components; longer names take a slot of a fixed pool
/// ([`LONG_NAME_SLOT_BYTES`] or a whole-packet slot), so a flood of long names can neither
/// allocate on the hot path nor grow the table's memory: when the pool is empty, the Interest
/// is refused as if the PIT were full.
pub const NAME_INLINE: usize = 88;

/// Bytes of a slot of the pool of long names (names of [`NAME_INLINE`] + 1 to this many bytes).
pub const LONG_NAME_SLOT_BYTES: usize = 512;

/// Slots of the pool for long names: one per this many name entries (at least 16).
pub const LONG_NAME_SLOT_EVERY: usize = 8;

/// Slots of the pool for the longest names (up to a whole packet): one per this many name
/// entries (at least 16).
pub const HUGE_NAME_SLOT_EVERY: usize = 1024;

/// Largest PIT token stored per in-record (NDNLPv2 allows up to 32 bytes).
pub const MAX_TOKEN: usize = 32;

/// Replacement policy of the CS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsPolicy {
    /// First in, first out: hits do not reorder.
    Fifo,
    /// Least recently used: a hit moves the entry to the back.
    Lru,
}

/// Sizes and policies of a PIT+CS table.
#[derive(Debug, Clone, Copy)]
pub struct PitCsConfig {
    /// Most PIT entries.
    pub pit_capacity: usize,
    /// Most CS entries (direct and indirect).
    pub cs_capacity: usize,
    /// CS replacement policy.
    pub cs_policy: CsPolicy,
    /// Most in-records per PIT entry (further downstreams are refused).
    pub max_in_records: usize,
    /// Most out-records per PIT entry.
    pub max_out_records: usize,
}

impl Default for PitCsConfig {
    fn default() -> Self {
        PitCsConfig {
            pit_capacity: 65_536,
            cs_capacity: 65_536,
            cs_policy: CsPolicy::Lru,
            max_in_records: 16,
            max_out_records: 16,
        }
    }
}

/// A downstream that is waiting for Data. In declaration order (the token last: its bytes are
/// written only when the downstream sent one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct InRecord {
    /// The downstream face.
    pub face: FaceId,
    /// The nonce it sent.
    pub nonce: [u8; 4],
    /// When its Interest expires.
    pub expiry_ms: u64,
    token_len: u8,
    token: [u8; MAX_TOKEN],
}

impl InRecord {
    /// The NDNLPv2 PIT token the downstream attached, to be returned with the Data.
    pub fn pit_token(&self) -> Option<&[u8]> {
        (self.token_len > 0).then(|| &self.token[..usize::from(self.token_len)])
    }

    fn set_token(&mut self, t: Option<&[u8]>) {
        let t = t.unwrap_or(&[]);
        let n = t.len().min(MAX_TOKEN);
        self.token[..n].copy_from_slice(&t[..n]);
        self.token_len = n as u8;
    }
}

/// An upstream the Interest was forwarded to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutRecord {
    /// The upstream face.
    pub face: FaceId,
    /// The nonce sent there.
    pub nonce: [u8; 4],
    /// When it was last sent.
    pub last_sent_ms: u64,
    /// When it expires.
    pub expiry_ms: u64,
    /// The Nack the upstream answered with, if any.
    pub nack: Option<NackReason>,
    /// Per-upstream retransmission suppression (multicast, ASF): the interval grown by the
    /// retransmissions forwarded here; 0 until the first, the strategy's initial interval
    /// applying (NFD keeps it on the out-record).
    pub retx_interval_ms: u32,
}

/// Which strategy's measurements a PIT entry's Data and Nacks feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum MeasuredBy {
    /// None (best-route, multicast, random).
    #[default]
    None,
    /// ASF's ([`crate::fw::asf`]).
    Asf,
    /// The access strategy's ([`crate::fw::access`]).
    Access,
}

/// A pending Interest (aggregated by Name + CanBePrefix + MustBeFresh).
///
/// Laid out on whole cache lines, in the order a new Interest writes them: the scalar fields,
/// the first out-record and the first in-record (up to its PIT token, whose bytes are written
/// only when the downstream sent one) in lines 0–1; the stored Interest (only for a pending
/// slower-tier lookup) last, touched only when `has_interest` says so. [`PitCs::prefetch_free`]
/// warms just the lines an insertion writes.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct PitEntry {
    /// The name entry this PIT entry belongs to.
    pub owner: u32,
    /// Strategy state: retransmission suppression interval.
    pub retx_interval_ms: u32,
    /// When the entry expires (the latest in-record expiry).
    pub expiry_ms: u64,
    wheel_slot: u32,
    wheel_prev: u32,
    wheel_next: u32,
    /// Offset of the Nonce value inside `interest`, if it has one.
    pub nonce_offset: Option<u16>,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// Strategy state: waiting for the CS's slower tier.
    pub cs_pending: bool,
    /// Congestion notification: the Data that satisfies this entry is sent with a
    /// CongestionMark (the Interest met a congested store; see `fw::pipeline::CongestionConfig`).
    pub cc_mark: bool,
    /// Strategy state: the strategy whose measurements its Data and Nacks feed.
    pub measured_by: MeasuredBy,
    is_digest: bool,
    in_use: bool,
    /// `interest` holds a stored Interest (cleared with it when the entry is removed, so that
    /// a new entry need not touch the line it lives on).
    has_interest: bool,
    /// Upstreams (one inline: a second upstream, for multicast or a retransmission elsewhere,
    /// moves them to a heap buffer the slot keeps).
    pub out_records: SmallVec<[OutRecord; 1]>,
    /// Downstreams.
    pub in_records: SmallVec<[InRecord; 1]>,
    /// The Interest stored for a pending slower-tier lookup (wire bytes), for Nacks and for
    /// forwarding after it completes; empty otherwise.
    pub interest: Vec<u8>,
    /// The NextHopFaceId the stored Interest came with (NFD honours it when the content store
    /// misses, so a slower tier's miss forwards there, and so does another worker the Interest
    /// is handed on to); meaningful only with a stored Interest.
    pub stored_next_hop: Option<FaceId>,
    /// The NDNLPv2 CongestionMark the stored Interest came with (0: none): NFD keeps an
    /// Interest's mark as a tag that its link service writes on the Interest it forwards, so the
    /// stored copy forwards with it too; meaningful only with a stored Interest.
    pub stored_mark: u64,
}

impl PitEntry {
    /// Satisfied, and kept a little longer for a slower upstream's Data ([`PitCs::linger`]): its
    /// downstreams were answered and their in-records went (any other entry has one from its
    /// creation on).
    #[inline]
    pub fn satisfied(&self) -> bool {
        self.in_records.is_empty()
    }
}

/// Bytes of a [`PitEntry`] a new Interest writes: through the first in-record's token length
/// (a `SmallVec` keeps its length before its inline items).
const PIT_HOT_BYTES: usize = core::mem::offset_of!(PitEntry, in_records)
    + core::mem::size_of::<usize>()
    + core::mem::offset_of!(InRecord, token);

/// CS content of a name entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CsKind {
    None,
    Direct,
    Indirect { target: u32, generation: u32 },
}

/// One name with its PIT entries and CS slot.
///
/// On whole cache lines: what a lookup compares and a new Interest writes (hash, PIT slots,
/// name bytes) in lines 0–1 (names up to 88 bytes); the CS fields, written when Data is cached,
/// in line 2.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct NameEntry {
    hash: u64,
    generation: u32,
    depth: u16,
    in_use: bool,
    pit: [u32; 4],
    name_len: u16,
    /// The pool slot holding the name ([`LongNames`]), or `NONE` when it is inline.
    long: u32,
    name: [u8; NAME_INLINE],
    cs: CsKind,
    cs_prev: u32,
    cs_next: u32,
    fresh_until_ms: u64,
    /// The Data slot ([`PitCs::data`]) while the entry caches Data directly; index `NONE`
    /// otherwise.
    slot: Slot,
    /// Bytes of the Data in `slot`.
    data_len: u16,
}

/// How many entries ahead of the replacement list's head the eviction cursor warms: an
/// eviction every Data under a full CS, ~500 ns each, so 8 entries give the prefetches several
/// memory latencies to land.
const VICTIM_LOOKAHEAD: u32 = 8;

/// Bytes of a [`NameEntry`] a lookup and a new Interest touch (through the name bytes).
const NAME_HOT_BYTES: usize = 128;

const _: () = {
    // The layout the prefetches rely on.
    assert!(core::mem::size_of::<NameEntry>() == 192);
    assert!(core::mem::offset_of!(NameEntry, cs) >= NAME_HOT_BYTES);
    assert!(core::mem::offset_of!(NameEntry, name) + NAME_INLINE == NAME_HOT_BYTES);
    assert!(PIT_HOT_BYTES <= 128);
};

impl NameEntry {
    fn new() -> Self {
        NameEntry {
            hash: 0,
            name_len: 0,
            long: NONE,
            name: [0; NAME_INLINE],
            depth: 0,
            generation: 0,
            pit: [NONE; 4],
            cs: CsKind::None,
            slot: NO_DATA,
            data_len: 0,
            fresh_until_ms: 0,
            cs_prev: NONE,
            cs_next: NONE,
            in_use: false,
        }
    }

    /// The Data slot, if the entry holds one.
    #[inline]
    fn data_slot(&self) -> Option<Slot> {
        (self.slot.index != NONE).then_some(self.slot)
    }

    fn is_empty(&self) -> bool {
        self.pit.iter().all(|&p| p == NONE) && self.cs == CsKind::None
    }

    /// The keyed hash of the name.
    pub fn hash_value(&self) -> u64 {
        self.hash
    }
}

#[inline]
fn pit_slot(cbp: bool, mbf: bool) -> usize {
    usize::from(cbp) * 2 + usize::from(mbf)
}

/// Why an insertion was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFull {
    /// All PIT entries are in use.
    Pit,
    /// All name entries are in use (cannot happen when sized as documented).
    Names,
    /// The index ran out of overflow buckets.
    Index,
}

impl From<IndexError> for TableFull {
    fn from(_: IndexError) -> Self {
        TableFull::Index
    }
}

/// Result of looking an Interest up in the CS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsMatch {
    /// Cached Data satisfies the Interest: the name entry holding it.
    Hit(u32),
    /// Nothing in the RAM CS.
    Miss,
}

/// Counters kept by the table.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PitCsCounters {
    /// CS lookups that hit.
    pub cs_hits: u64,
    /// CS lookups that missed.
    pub cs_misses: u64,
    /// CS insertions.
    pub cs_inserts: u64,
    /// CS evictions by the replacement policy.
    pub cs_evictions: u64,
    /// PIT entries that expired.
    pub pit_expired: u64,
    /// Evicted Data not kept for write-back because the eviction log was full.
    pub cs_evictions_unlogged: u64,
    /// Data not cached because they are larger than the largest slot
    /// ([`super::cs_data::CLASS_BYTES`]; only with packet limits above the protocol's).
    pub cs_too_large: u64,
}

/// Data evicted from the CS, kept (copied) for a slower tier's write-back admission until the
/// owner drains it. Bounded in entries and bytes; off (capacity 0) unless asked for.
#[derive(Debug, Default)]
struct EvictionLog {
    bytes: Vec<u8>,
    ends: Vec<u32>,
    /// Per Data, when its freshness in the CS ended (or ends), `now_ms` units.
    fresh_until_ms: Vec<u64>,
    max_entries: usize,
    max_bytes: usize,
}

impl EvictionLog {
    /// Keeps a copy of `data` if the log has room; `false` if it was full.
    fn push(&mut self, data: &[u8], fresh_until_ms: u64) -> bool {
        if self.ends.len() >= self.max_entries || self.bytes.len() + data.len() > self.max_bytes {
            return false;
        }
        self.bytes.extend_from_slice(data);
        self.ends.push(self.bytes.len() as u32);
        self.fresh_until_ms.push(fresh_until_ms);
        true
    }
}

/// The Data entry `n` holds in `slots`, if it holds one.
#[inline]
fn data_of<'a>(n: &NameEntry, slots: &'a DataSlots) -> Option<&'a [u8]> {
    n.data_slot()
        .map(|s| &slots.slot(s)[..usize::from(n.data_len)])
}

/// The name (Name TLV-VALUE) of entry `n`.
#[inline(always)]
fn name_of<'a>(n: &'a NameEntry, long: &'a LongNames) -> &'a [u8] {
    let len = usize::from(n.name_len);
    if n.long == NONE {
        &n.name[..len.min(NAME_INLINE)]
    } else {
        long.bytes(n.long, len)
    }
}

/// The PIT+CS table of one worker.
#[derive(Debug)]
pub struct PitCs {
    config: PitCsConfig,
    index: HashIndex,
    names: super::mem::FixedArena<NameEntry>,
    free_names: Vec<u32>,
    long_names: LongNames,
    /// The slots the CS's Data live in (a CS entry holds at most one): fixed mappings, so
    /// caching never allocates and where a Data lands does not depend on the heap.
    data: DataSlots,
    pits: super::mem::FixedArena<PitEntry>,
    free_pits: Vec<u32>,
    pit_len: usize,
    cs_len: usize,
    cs_head: u32,
    /// Eviction look-ahead: an entry of the replacement list about `victim_ahead` entries
    /// after the head, or `NONE` ([`PitCs::warm_victims`]).
    victim_cursor: u32,
    victim_ahead: u32,
    cs_tail: u32,
    wheel: Box<[u32]>,
    wheel_time_ms: u64,
    /// Live CanBePrefix PIT entries per name depth: a Data probes a shorter prefix only where
    /// this is non-zero.
    cbp_by_depth: Vec<u32>,
    /// Live CanBePrefix PIT entries (the sum of `cbp_by_depth`).
    cbp_pits: u32,
    /// Live PIT entries whose name ends with an implicit digest.
    digest_pits: u32,
    /// Evicted Data kept for write-back (empty and unused unless enabled).
    evicted: EvictionLog,
    /// In-records per face and the fair share ([`PitLimits`]).
    shares: FaceShares,
    /// The filter of the names the CS holds, told of every name that comes to hold Data or
    /// stops ([`PitCs::set_filter`]).
    filter: Option<Box<dyn super::cs_filter::CsFilter>>,
    /// Counters.
    pub counters: PitCsCounters,
}

impl PitCs {
    /// A table with the capacities of `config` and the default [`PitLimits`], all memory
    /// allocated now.
    pub fn new(config: PitCsConfig) -> Self {
        Self::with_limits(config, PitLimits::default())
    }

    /// A table with the capacities of `config` and the per-face `limits`, all memory allocated
    /// now.
    pub fn with_limits(config: PitCsConfig, limits: PitLimits) -> Self {
        // One spare: Data for a new name gets its entry before the CS evicts, even when the PIT
        // and the CS are both full.
        let names_cap = config.pit_capacity + config.cs_capacity + 1;
        assert!(names_cap < NONE as usize, "table too large");
        PitCs {
            config,
            index: HashIndex::with_capacity(names_cap),
            names: super::mem::arena(names_cap, |_| NameEntry::new()),
            free_names: (0..names_cap as u32).rev().collect(),
            long_names: LongNames::new(names_cap),
            data: DataSlots::new(config.cs_capacity),
            pits: super::mem::arena(config.pit_capacity, |_| PitEntry {
                wheel_slot: NONE,
                wheel_prev: NONE,
                wheel_next: NONE,
                ..PitEntry::default()
            }),
            free_pits: (0..config.pit_capacity as u32).rev().collect(),
            pit_len: 0,
            cs_len: 0,
            cs_head: NONE,
            victim_cursor: NONE,
            victim_ahead: 0,
            cs_tail: NONE,
            wheel: vec![NONE; WHEEL_SLOTS].into_boxed_slice(),
            wheel_time_ms: 0,
            cbp_by_depth: vec![0; u16::MAX as usize + 1],
            cbp_pits: 0,
            digest_pits: 0,
            evicted: EvictionLog::default(),
            shares: FaceShares::new(limits, config.pit_capacity),
            filter: None,
            counters: PitCsCounters::default(),
        }
    }

    /// Puts `filter` in front of the CS: every name the CS holds Data for now is inserted into
    /// it, and from now on every name that comes to hold Data is inserted and every one that
    /// stops (eviction, erasure, replacement by a Data too large to keep) removed.
    pub fn set_filter(&mut self, mut filter: Box<dyn super::cs_filter::CsFilter>) {
        let mut i = self.cs_head;
        while i != NONE {
            let n = &self.names[i as usize];
            if n.cs == CsKind::Direct {
                filter.insert(n.hash);
            }
            i = n.cs_next;
        }
        self.filter = Some(filter);
    }

    /// The filter in front of the CS, if one is set.
    #[inline]
    pub fn filter(&self) -> Option<&dyn super::cs_filter::CsFilter> {
        self.filter.as_deref()
    }

    /// Tells the filter that entry `e`'s name came to hold Data (`held`) or stopped.
    #[inline]
    fn filter_note(&mut self, e: u32, held: bool) {
        if let Some(f) = self.filter.as_mut() {
            let h = self.names[e as usize].hash;
            if held {
                f.insert(h);
            } else {
                f.remove(h);
            }
        }
    }

    /// The configuration.
    pub fn config(&self) -> &PitCsConfig {
        &self.config
    }

    /// Live PIT entries.
    pub fn pit_len(&self) -> usize {
        self.pit_len
    }

    /// Live CS entries (direct and indirect).
    pub fn cs_len(&self) -> usize {
        self.cs_len
    }

    /// Live name entries.
    pub fn names_len(&self) -> usize {
        self.names.len() - self.free_names.len()
    }

    /// Changes the CS capacity (entries beyond it are evicted now) and policy.
    pub fn set_cs_capacity(&mut self, capacity: usize, policy: CsPolicy) {
        // The name arena was sized at start-up; the CS may shrink but not outgrow it.
        self.config.cs_capacity = capacity.min(self.names.len() - self.config.pit_capacity - 1);
        self.config.cs_policy = policy;
        while self.cs_len > self.config.cs_capacity {
            self.evict_one();
        }
    }

    /// Removes every CS entry whose name starts with `prefix` (components bytes); returns how
    /// many. Bounded by the table size.
    pub fn erase_cs(&mut self, prefix: &[u8], limit: usize) -> usize {
        let mut erased = 0;
        let mut i = self.cs_head;
        while i != NONE && erased < limit {
            let next = self.names[i as usize].cs_next;
            if name_of(&self.names[i as usize], &self.long_names).starts_with(prefix) {
                self.cs_remove(i);
                self.release_if_empty(i);
                erased += 1;
            }
            i = next;
        }
        erased
    }

    /// Prefetches the bucket a name's lookup will touch.
    #[inline]
    pub fn prefetch(&self, full_hash: u64) {
        self.index.prefetch(full_hash);
    }

    /// Prefetches the next `n` free PIT and name entries, which the next `n` new Interests will
    /// take (they are popped from the free lists in this order): their first touch is a write
    /// to a random cache line, the single largest cost of a PIT insert.
    #[inline]
    pub fn prefetch_free(&self, n: usize) {
        fn lines<T>(item: &T, bytes: usize) {
            prefetch_lines_for_write(item as *const T as *const u8, bytes);
        }
        for &p in self.free_pits.iter().rev().take(n) {
            lines(&self.pits[p as usize], PIT_HOT_BYTES);
        }
        for &e in self.free_names.iter().rev().take(n) {
            lines(&self.names[e as usize], NAME_HOT_BYTES);
        }
    }

    /// Second-level prefetch, once [`PitCs::prefetch`]'s bucket has arrived: prefetches the
    /// name entry a lookup of `full_hash` will compare (its first two lines: hash and name).
    #[inline]
    pub fn prefetch_entry(&self, full_hash: u64) {
        if let Some(e) = self.index.first_candidate(full_hash) {
            if let Some(n) = self.names.get(e as usize) {
                prefetch_lines(n as *const NameEntry as *const u8, NAME_HOT_BYTES);
            }
        }
    }

    /// Third-level prefetch for a Data, once [`PitCs::prefetch_entry`]'s lines have arrived:
    /// the PIT entries its name entry points at (their in-records are read to send the Data).
    /// (The slot the CS copies the Data into is, under a full CS, the one an eviction just gave
    /// back: the eviction cursor warms it.)
    #[inline]
    pub fn prefetch_for_data(&self, full_hash: u64) {
        let Some(n) = self
            .index
            .first_candidate(full_hash)
            .and_then(|e| self.names.get(e as usize))
        else {
            return;
        };
        if n.hash != full_hash {
            return;
        }
        for &p in &n.pit {
            if let Some(pe) = self.pits.get(p as usize) {
                prefetch_lines(pe as *const PitEntry as *const u8, 128);
            }
        }
    }

    /// Finds the name entry of exactly these components.
    #[inline]
    pub fn find(&self, hash: u64, name_value: &[u8]) -> Option<u32> {
        let (names, long) = (&self.names, &self.long_names);
        self.index.find(hash, |e| {
            let n = &names[e as usize];
            n.hash == hash && name_of(n, long) == name_value
        })
    }

    /// Finds the name entry whose components are `head` followed by `tail`.
    fn find_concat(&self, hash: u64, head: &[u8], tail: &[u8]) -> Option<u32> {
        let (names, long) = (&self.names, &self.long_names);
        self.index.find(hash, |e| {
            let n = &names[e as usize];
            let v = name_of(n, long);
            n.hash == hash
                && v.len() == head.len() + tail.len()
                && v.starts_with(head)
                && v.ends_with(tail)
        })
    }

    /// The name entry `i`.
    pub fn name_entry(&self, i: u32) -> &NameEntry {
        &self.names[i as usize]
    }

    /// The Data name entry `i` caches directly, if any.
    pub fn data(&self, i: u32) -> Option<&[u8]> {
        let n = &self.names[i as usize];
        match n.cs {
            CsKind::Direct => data_of(n, &self.data),
            _ => None,
        }
    }

    /// The name (Name TLV-VALUE) of name entry `i`.
    pub fn name_value(&self, i: u32) -> &[u8] {
        name_of(&self.names[i as usize], &self.long_names)
    }

    /// The PIT entry `p`.
    pub fn pit(&self, p: u32) -> &PitEntry {
        &self.pits[p as usize]
    }

    /// The PIT entry `p`, mutably.
    pub fn pit_mut(&mut self, p: u32) -> &mut PitEntry {
        &mut self.pits[p as usize]
    }

    /// The PIT entry of name entry `e` for (CanBePrefix, MustBeFresh).
    pub fn pit_of(&self, e: u32, cbp: bool, mbf: bool) -> Option<u32> {
        let p = self.names[e as usize].pit[pit_slot(cbp, mbf)];
        (p != NONE).then_some(p)
    }

    /// All PIT entries of name entry `e`.
    pub fn pits_of(&self, e: u32) -> [u32; 4] {
        self.names[e as usize].pit
    }
    fn alloc_name(&mut self, hash: u64, value: &[u8], depth: usize) -> Result<u32, TableFull> {
        if value.len() > usize::from(u16::MAX) {
            return Err(TableFull::Names);
        }
        let long = if value.len() > NAME_INLINE {
            let slot = self.long_names.take(value.len()).ok_or(TableFull::Names)?;
            self.long_names.bytes_mut(slot)[..value.len()].copy_from_slice(value);
            slot
        } else {
            NONE
        };
        let Some(i) = self.free_names.pop() else {
            if long != NONE {
                self.long_names.give_back(long);
            }
            return Err(TableFull::Names);
        };
        if let Err(e) = self.index.insert(hash, i) {
            self.free_names.push(i);
            if long != NONE {
                self.long_names.give_back(long);
            }
            return Err(e.into());
        }
        let n = &mut self.names[i as usize];
        debug_assert!(!n.in_use && n.is_empty() && n.long == NONE);
        n.hash = hash;
        n.name_len = value.len() as u16;
        n.long = long;
        if long == NONE {
            n.name[..value.len()].copy_from_slice(value);
        }
        n.depth = depth.min(u16::MAX as usize) as u16;
        n.generation = n.generation.wrapping_add(1);
        n.in_use = true;
        Ok(i)
    }

    /// Finds or creates the name entry for exactly these components.
    pub fn find_or_insert(
        &mut self,
        hash: u64,
        value: &[u8],
        depth: usize,
    ) -> Result<u32, TableFull> {
        match self.find(hash, value) {
            Some(e) => Ok(e),
            None => self.alloc_name(hash, value, depth),
        }
    }

    /// Creates the name entry for these components, which the caller has just looked up
    /// with [`PitCs::find`] and not found (the table unchanged since).
    pub fn insert_new(&mut self, hash: u64, value: &[u8], depth: usize) -> Result<u32, TableFull> {
        debug_assert!(self.find(hash, value).is_none(), "name already indexed");
        self.alloc_name(hash, value, depth)
    }

    fn release_if_empty(&mut self, e: u32) {
        let n = &mut self.names[e as usize];
        if n.in_use && n.is_empty() {
            n.in_use = false;
            if n.long != NONE {
                self.long_names.give_back(n.long);
                n.long = NONE;
            }
            let hash = n.hash;
            let removed = self.index.remove(hash, e);
            debug_assert!(removed);
            self.free_names.push(e);
        }
    }

    /// Gets or creates the PIT entry of name entry `e` for (cbp, mbf). `is_digest` says whether
    /// the name ends with an implicit digest. Returns the entry and whether it is new.
    pub fn pit_get_or_insert(
        &mut self,
        e: u32,
        cbp: bool,
        mbf: bool,
        is_digest: bool,
    ) -> Result<(u32, bool), TableFull> {
        let slot = pit_slot(cbp, mbf);
        let existing = self.names[e as usize].pit[slot];
        if existing != NONE {
            return Ok((existing, false));
        }
        let Some(p) = self.free_pits.pop() else {
            self.release_if_empty(e);
            return Err(TableFull::Pit);
        };
        let depth = usize::from(self.names[e as usize].depth);
        self.names[e as usize].pit[slot] = p;
        let pe = &mut self.pits[p as usize];
        pe.owner = e;
        pe.can_be_prefix = cbp;
        pe.must_be_fresh = mbf;
        pe.in_records.clear();
        pe.out_records.clear();
        pe.expiry_ms = 0;
        // A free entry's stored Interest was cleared when it was removed (`has_interest`).
        debug_assert!(!pe.has_interest && pe.interest.is_empty());
        pe.nonce_offset = None;
        pe.retx_interval_ms = 0;
        pe.cs_pending = false;
        pe.cc_mark = false;
        pe.measured_by = MeasuredBy::None;
        pe.is_digest = is_digest;
        pe.in_use = true;
        self.pit_len += 1;
        if cbp {
            self.cbp_by_depth[depth] += 1;
            self.cbp_pits += 1;
        }
        if is_digest {
            self.digest_pits += 1;
        }
        Ok((p, true))
    }

    /// Adds or refreshes the in-record of `face` on PIT entry `p`, and reschedules its expiry.
    /// Returns false if the entry already has the maximum number of in-records.
    pub fn add_in_record(
        &mut self,
        p: u32,
        face: FaceId,
        nonce: [u8; 4],
        expiry_ms: u64,
        token: Option<&[u8]>,
    ) -> bool {
        let max = self.config.max_in_records;
        let pe = &mut self.pits[p as usize];
        if let Some(r) = pe.in_records.iter_mut().find(|r| r.face == face) {
            r.nonce = nonce;
            r.expiry_ms = expiry_ms;
            r.set_token(token);
        } else {
            if pe.in_records.len() >= max {
                return false;
            }
            let mut r = InRecord {
                face,
                nonce,
                expiry_ms,
                token_len: 0,
                token: [0; MAX_TOKEN],
            };
            r.set_token(token);
            pe.in_records.push(r);
            self.shares.add(face);
        }
        let new_expiry = pe
            .in_records
            .iter()
            .map(|r| r.expiry_ms)
            .max()
            .unwrap_or(expiry_ms);
        self.schedule(p, new_expiry);
        true
    }

    /// Records that the Interest of PIT entry `p` was sent to `face`.
    pub fn add_out_record(
        &mut self,
        p: u32,
        face: FaceId,
        nonce: [u8; 4],
        now_ms: u64,
        expiry_ms: u64,
    ) -> bool {
        let max = self.config.max_out_records;
        let pe = &mut self.pits[p as usize];
        if let Some(r) = pe.out_records.iter_mut().find(|r| r.face == face) {
            r.nonce = nonce;
            r.last_sent_ms = now_ms;
            r.expiry_ms = expiry_ms;
            r.nack = None;
            return true;
        }
        if pe.out_records.len() >= max {
            return false;
        }
        pe.out_records.push(OutRecord {
            face,
            nonce,
            last_sent_ms: now_ms,
            expiry_ms,
            nack: None,
            retx_interval_ms: 0,
        });
        true
    }

    /// Whether PIT entry `p` is in use (not free).
    pub fn pit_in_use(&self, p: u32) -> bool {
        self.pits.get(p as usize).is_some_and(|pe| pe.in_use)
    }

    /// Marks PIT entry `p` satisfied and keeps it until `until_ms` with no downstream (its
    /// in-records go): a Data still due from another upstream then finds it (ASF keeps an entry
    /// 50 ms for a probe's Data, as NFD's `setExpiryTimer` after satisfaction).
    pub fn linger(&mut self, p: u32, until_ms: u64) {
        let pe = &mut self.pits[p as usize];
        for r in pe.in_records.drain(..) {
            self.shares.remove(r.face);
        }
        self.schedule(p, until_ms);
    }

    /// Keeps a copy of the Interest wire in PIT entry `p`, with the CongestionMark it came with
    /// (0: none).
    pub fn store_interest(
        &mut self,
        p: u32,
        wire: &[u8],
        nonce_offset: Option<usize>,
        congestion_mark: u64,
    ) {
        let pe = &mut self.pits[p as usize];
        pe.interest.clear();
        pe.interest.extend_from_slice(wire);
        pe.has_interest = true;
        pe.nonce_offset = nonce_offset.and_then(|o| u16::try_from(o).ok());
        pe.stored_mark = congestion_mark;
    }

    /// Removes the in-records of PIT entry `p` that `gone` picks (downstreams another engine
    /// took over), and reschedules the entry's expiry to its latest remaining in-record. The
    /// entry stays, even with none left.
    pub fn remove_in_records(&mut self, p: u32, mut gone: impl FnMut(&InRecord) -> bool) {
        let pe = &mut self.pits[p as usize];
        let shares = &mut self.shares;
        pe.in_records.retain(|r| {
            let g = gone(r);
            if g {
                shares.remove(r.face);
            }
            !g
        });
        if let Some(expiry) = pe.in_records.iter().map(|r| r.expiry_ms).max() {
            self.schedule(p, expiry);
        }
    }

    /// Removes PIT entry `p` (satisfied, expired or rejected). Calls `on_out_nonce` with the
    /// nonce of every out-record, for the dead-nonce list.
    pub fn pit_remove(&mut self, p: u32, mut on_out_nonce: impl FnMut([u8; 4])) {
        let pe = &mut self.pits[p as usize];
        debug_assert!(pe.in_use);
        if !pe.in_use {
            return;
        }
        for r in &pe.out_records {
            on_out_nonce(r.nonce);
        }
        for r in &pe.in_records {
            self.shares.remove(r.face);
        }
        pe.in_use = false;
        if pe.has_interest {
            pe.interest.clear();
            pe.has_interest = false;
            pe.stored_next_hop = None;
            pe.stored_mark = 0;
        }
        let (owner, cbp, mbf, is_digest) =
            (pe.owner, pe.can_be_prefix, pe.must_be_fresh, pe.is_digest);
        self.unschedule(p);
        self.free_pits.push(p);
        self.pit_len -= 1;
        let n = &mut self.names[owner as usize];
        n.pit[pit_slot(cbp, mbf)] = NONE;
        if cbp {
            self.cbp_by_depth[usize::from(n.depth)] -= 1;
            self.cbp_pits -= 1;
        }
        if is_digest {
            self.digest_pits -= 1;
        }
        self.release_if_empty(owner);
    }

    /// Whether [`PitCs::matching_pits`] needs a Data's prefix hashes (and the full-name state):
    /// only while CanBePrefix or implicit-digest Interests are pending. Otherwise the full-name
    /// hash alone finds every PIT entry a Data satisfies.
    #[inline]
    pub fn data_needs_prefixes(&self) -> bool {
        self.cbp_pits > 0 || self.digest_pits > 0
    }

    /// Finds the PIT entries a Data satisfies and passes each to `f` (which must not touch the
    /// table). At most one lookup for the exact name, plus one per name depth where CanBePrefix
    /// entries live, plus one for the implicit digest when digest Interests are pending.
    pub fn matching_pits(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        data_wire: &[u8],
        mut f: impl FnMut(u32, bool),
    ) -> usize {
        let mut lookups = 0;
        let n = h.len();
        // Exact name: every PIT entry there matches.
        if let Some(e) = self.find(h.full(), name.value()) {
            lookups += 1;
            for p in self.names[e as usize].pit {
                if p != NONE {
                    f(p, true);
                }
            }
        }
        // Shorter prefixes with CanBePrefix entries.
        debug_assert!(
            self.cbp_pits == 0 || h.has_prefixes(),
            "CanBePrefix Interests pending: prefixes needed"
        );
        for d in 0..n {
            if self.cbp_by_depth[d] == 0 {
                continue;
            }
            let (Some(hash), Some(end)) = (h.prefix(d, name), h.prefix_end(d, name)) else {
                continue;
            };
            lookups += 1;
            if let Some(e) = self.find(hash, &name.value()[..end]) {
                let ne = &self.names[e as usize];
                for p in [ne.pit[pit_slot(true, false)], ne.pit[pit_slot(true, true)]] {
                    if p != NONE {
                        f(p, false);
                    }
                }
            }
        }
        // The full name with the implicit digest.
        if self.digest_pits > 0 {
            // The digest component's TLV, on the stack: the name with it is compared in two
            // parts rather than assembled (no allocation per Data).
            let mut digest = [0u8; 34];
            digest[..2].copy_from_slice(&[0x01, 0x20]);
            digest[2..].copy_from_slice(&wire::sha256(&[data_wire]));
            debug_assert!(
                h.has_prefixes(),
                "digest Interests pending: prefixes needed"
            );
            let hash = h.extend_full(&digest);
            lookups += 1;
            if let Some(e) = hash.and_then(|hash| self.find_concat(hash, name.value(), &digest)) {
                for p in self.names[e as usize].pit {
                    if p != NONE {
                        f(p, false);
                    }
                }
            }
        }
        lookups
    }
}
