//! One table for the PIT and the CS (seed 002 §3.2): one lookup per Interest and per Data.
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
    max_entries: usize,
    max_bytes: usize,
}

impl EvictionLog {
    /// Keeps a copy of `data` if the log has room; `false` if it was full.
    fn push(&mut self, data: &[u8]) -> bool {
        if self.ends.len() >= self.max_entries || self.bytes.len() + data.len() > self.max_bytes {
            return false;
        }
        self.bytes.extend_from_slice(data);
        self.ends.push(self.bytes.len() as u32);
        true
    }
}

/// Fixed pools for names longer than [`NAME_INLINE`]: slots of [`LONG_NAME_SLOT_BYTES`] and
/// slots of a whole packet, allocated and written (so every page is mapped: a name copied in
/// while forwarding never takes a page fault) when the table is built.
#[derive(Debug)]
struct LongNames {
    long: super::mem::FixedArena<u8>,
    long_free: Vec<u32>,
    huge: super::mem::FixedArena<u8>,
    huge_free: Vec<u32>,
}

/// Marks a slot of the pool of the longest names in [`NameEntry::long`].
const HUGE_BIT: u32 = 1 << 31;

impl LongNames {
    fn new(names: usize) -> Self {
        let long_n = (names / LONG_NAME_SLOT_EVERY).max(16);
        let huge_n = (names / HUGE_NAME_SLOT_EVERY).max(16);
        // `arena` writes every byte, which maps every page.
        LongNames {
            long: super::mem::arena(long_n * LONG_NAME_SLOT_BYTES, |_| 0),
            long_free: (0..long_n as u32).rev().collect(),
            huge: super::mem::arena(huge_n * wire::MAX_NDN_PACKET_BYTES, |_| 0),
            huge_free: (0..huge_n as u32).rev().collect(),
        }
    }

    /// A slot for a name of `len` bytes (more than [`NAME_INLINE`]), if one is free.
    fn take(&mut self, len: usize) -> Option<u32> {
        if len <= LONG_NAME_SLOT_BYTES {
            self.long_free.pop()
        } else if len <= wire::MAX_NDN_PACKET_BYTES {
            self.huge_free.pop().map(|i| i | HUGE_BIT)
        } else {
            None
        }
    }

    fn give_back(&mut self, slot: u32) {
        if slot & HUGE_BIT != 0 {
            self.huge_free.push(slot & !HUGE_BIT);
        } else {
            self.long_free.push(slot);
        }
    }

    /// The pool holding `slot` and the slot's byte range in it.
    #[inline]
    fn span(slot: u32) -> (bool, core::ops::Range<usize>) {
        let i = (slot & !HUGE_BIT) as usize;
        let huge = slot & HUGE_BIT != 0;
        let size = if huge {
            wire::MAX_NDN_PACKET_BYTES
        } else {
            LONG_NAME_SLOT_BYTES
        };
        (huge, i * size..(i + 1) * size)
    }

    fn bytes_mut(&mut self, slot: u32) -> &mut [u8] {
        match Self::span(slot) {
            (true, r) => &mut self.huge[r],
            (false, r) => &mut self.long[r],
        }
    }

    #[inline]
    fn bytes(&self, slot: u32, len: usize) -> &[u8] {
        let (huge, r) = Self::span(slot);
        let pool = if huge { &self.huge } else { &self.long };
        let slot_bytes = &pool[r];
        &slot_bytes[..len.min(slot_bytes.len())]
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
    /// Counters.
    pub counters: PitCsCounters,
}

impl PitCs {
    /// A table with the capacities of `config`, all memory allocated now.
    pub fn new(config: PitCsConfig) -> Self {
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
            counters: PitCsCounters::default(),
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

    /// Looks an Interest up in the CS (one table lookup; a second one for an implicit-digest
    /// name). `entry` is the name entry of the Interest's name if the caller found it already.
    pub fn cs_lookup(
        &mut self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        entry: Option<u32>,
        cbp: bool,
        mbf: bool,
        now_ms: u64,
    ) -> CsMatch {
        if self.cs_len == 0 {
            self.counters.cs_misses += 1;
            return CsMatch::Miss;
        }
        let found = if name
            .last()
            .is_some_and(|c| u32::from(c.typ) == wire::tt::IMPLICIT_SHA256_DIGEST)
        {
            self.digest_lookup(name, h, mbf, now_ms)
        } else {
            entry.and_then(|e| self.match_entry(e, cbp, mbf, now_ms))
        };
        match found {
            Some(e) => {
                self.counters.cs_hits += 1;
                if self.config.cs_policy == CsPolicy::Lru {
                    self.cs_touch(e);
                }
                CsMatch::Hit(e)
            }
            None => {
                self.counters.cs_misses += 1;
                CsMatch::Miss
            }
        }
    }

    fn fresh_ok(&self, e: u32, mbf: bool, now_ms: u64) -> bool {
        !mbf || self.names[e as usize].fresh_until_ms > now_ms
    }

    fn match_entry(&self, e: u32, cbp: bool, mbf: bool, now_ms: u64) -> Option<u32> {
        let n = &self.names[e as usize];
        match n.cs {
            CsKind::Direct => self.fresh_ok(e, mbf, now_ms).then_some(e),
            CsKind::Indirect { target, generation } if cbp => {
                let t = &self.names[target as usize];
                let valid = t.in_use
                    && t.generation == generation
                    && t.cs == CsKind::Direct
                    && name_of(t, &self.long_names).starts_with(name_of(n, &self.long_names));
                (valid && self.fresh_ok(target, mbf, now_ms)).then_some(target)
            }
            _ => None,
        }
    }

    fn digest_lookup(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        mbf: bool,
        now_ms: u64,
    ) -> Option<u32> {
        let k = h.len().checked_sub(1)?;
        let (hash, end) = (h.prefix(k, name)?, h.prefix_end(k, name)?);
        let e = self.find(hash, &name.value()[..end])?;
        let n = &self.names[e as usize];
        let digest = name.last()?.value;
        (n.cs == CsKind::Direct
            && wire::sha256(&[self.data(e).unwrap_or(&[])]) == digest
            && self.fresh_ok(e, mbf, now_ms))
        .then_some(e)
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
        });
        true
    }

    /// Keeps a copy of the Interest wire in PIT entry `p`.
    pub fn store_interest(&mut self, p: u32, wire: &[u8], nonce_offset: Option<usize>) {
        let pe = &mut self.pits[p as usize];
        pe.interest.clear();
        pe.interest.extend_from_slice(wire);
        pe.has_interest = true;
        pe.nonce_offset = nonce_offset.and_then(|o| u16::try_from(o).ok());
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
        pe.in_use = false;
        if pe.has_interest {
            pe.interest.clear();
            pe.has_interest = false;
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

    /// Caches `data_wire` under its name (entry `e`, found or created by the caller), fresh for
    /// `freshness_ms`. Evicts by the replacement policy if the CS is full.
    pub fn cs_insert(&mut self, e: u32, data_wire: &[u8], freshness_ms: u64, now_ms: u64) {
        if self.config.cs_capacity == 0 {
            self.release_if_empty(e);
            return;
        }
        if self.names[e as usize].cs != CsKind::None {
            self.cs_unlink(e);
        } else if self.cs_len >= self.config.cs_capacity {
            self.evict_one();
        }
        let n = &mut self.names[e as usize];
        // A replaced Data gives its slot back first: the new one may be of another class.
        if let Some(old) = n.data_slot() {
            n.slot = NO_DATA;
            self.data.give_back(old);
        }
        // At most one slot per CS entry and `cs_capacity` of each class, and the CS made room
        // above; only a Data over the largest class (longer than a packet) finds none.
        let Some(slot) = self.data.take(data_wire.len()) else {
            self.counters.cs_too_large += 1;
            n.cs = CsKind::None;
            self.release_if_empty(e);
            return;
        };
        let len = data_wire.len();
        self.data.slot_mut(slot)[..len].copy_from_slice(data_wire);
        let n = &mut self.names[e as usize];
        n.slot = slot;
        n.data_len = len as u16;
        n.cs = CsKind::Direct;
        n.fresh_until_ms = now_ms.saturating_add(freshness_ms);
        self.cs_link_tail(e);
        self.counters.cs_inserts += 1;
    }

    /// Makes name entry `at` (a CanBePrefix Interest's name) point at the Data cached in
    /// `target`, unless `at` already caches something.
    pub fn cs_insert_indirect(&mut self, at: u32, target: u32) {
        if self.config.cs_capacity < 2 || at == target || self.names[at as usize].cs != CsKind::None
        {
            return;
        }
        if self.names[target as usize].cs != CsKind::Direct {
            return;
        }
        if self.cs_len >= self.config.cs_capacity {
            self.evict_one();
            // Eviction may have removed the target itself.
            if self.names[target as usize].cs != CsKind::Direct || !self.names[at as usize].in_use {
                return;
            }
        }
        let generation = self.names[target as usize].generation;
        self.names[at as usize].cs = CsKind::Indirect { target, generation };
        self.cs_link_tail(at);
    }

    fn cs_link_tail(&mut self, e: u32) {
        let tail = self.cs_tail;
        {
            let n = &mut self.names[e as usize];
            n.cs_prev = tail;
            n.cs_next = NONE;
        }
        if tail == NONE {
            self.cs_head = e;
        } else {
            self.names[tail as usize].cs_next = e;
        }
        self.cs_tail = e;
        self.cs_len += 1;
    }

    fn cs_unlink(&mut self, e: u32) {
        if e == self.victim_cursor {
            self.victim_cursor = NONE;
        }
        let (prev, next) = {
            let n = &self.names[e as usize];
            (n.cs_prev, n.cs_next)
        };
        if prev == NONE {
            self.cs_head = next;
        } else {
            self.names[prev as usize].cs_next = next;
        }
        if next == NONE {
            self.cs_tail = prev;
        } else {
            self.names[next as usize].cs_prev = prev;
        }
        self.cs_len -= 1;
    }

    fn cs_touch(&mut self, e: u32) {
        if self.cs_tail != e {
            self.cs_unlink(e);
            self.cs_link_tail(e);
        }
    }

    fn cs_remove(&mut self, e: u32) {
        if self.names[e as usize].cs != CsKind::None {
            self.cs_unlink(e);
            let n = &mut self.names[e as usize];
            n.cs = CsKind::None;
            if let Some(s) = n.data_slot() {
                n.slot = NO_DATA;
                self.data.give_back(s);
            }
        }
    }

    /// Keeps a copy of every Data the replacement policy evicts from now on, up to `max_entries`
    /// Data and `max_bytes` bytes between two [`PitCs::drain_evicted`] calls (further evictions
    /// are counted in `cs_evictions_unlogged`); 0 turns it off. The memory is reserved now.
    /// A slower tier uses it for write-back admission (seed 000: admission on eviction from L1).
    pub fn log_evictions(&mut self, max_entries: usize, max_bytes: usize) {
        let max_bytes = if max_entries == 0 { 0 } else { max_bytes };
        self.evicted = EvictionLog {
            bytes: Vec::with_capacity(max_bytes),
            ends: Vec::with_capacity(max_entries),
            max_entries,
            max_bytes,
        };
    }

    /// Hands every logged evicted Data (oldest first) to `f` and empties the log.
    pub fn drain_evicted(&mut self, mut f: impl FnMut(&[u8])) {
        let mut start = 0usize;
        for &end in &self.evicted.ends {
            f(&self.evicted.bytes[start..end as usize]);
            start = end as usize;
        }
        self.evicted.bytes.clear();
        self.evicted.ends.clear();
    }

    fn evict_one(&mut self) {
        let e = self.cs_head;
        if e == NONE {
            return;
        }
        if self.evicted.max_entries > 0 && self.names[e as usize].cs == CsKind::Direct {
            let data = data_of(&self.names[e as usize], &self.data).unwrap_or(&[]);
            if !self.evicted.push(data) {
                self.counters.cs_evictions_unlogged += 1;
            }
        }
        self.cs_remove(e);
        self.counters.cs_evictions += 1;
        self.release_if_empty(e);
        self.warm_victims();
    }

    /// A full CS evicts on every insertion, walking its replacement list from the head: a
    /// cursor runs [`VICTIM_LOOKAHEAD`] entries ahead of the head and, at each eviction, steps
    /// once (twice while it catches up), prefetching the entry it reaches and the index bucket
    /// of the entry it leaves (whose hash it can now read: that entry was prefetched a few
    /// evictions earlier). So the eviction of an entry finds it, and the bucket it is removed
    /// from, in cache. The list is linked, so the walk itself is one step per eviction; the
    /// cursor is only a hint, reset to the head when its entry leaves the list.
    fn warm_victims(&mut self) {
        if self.victim_cursor == NONE {
            self.victim_cursor = self.cs_head;
            self.victim_ahead = 0;
        } else {
            self.victim_ahead = self.victim_ahead.saturating_sub(1);
        }
        for _ in 0..2 {
            let c = self.victim_cursor;
            if c == NONE || self.victim_ahead >= VICTIM_LOOKAHEAD {
                break;
            }
            let n = &self.names[c as usize];
            self.index.prefetch(n.hash);
            // The slot this entry's eviction frees is the one the next Data of its class is
            // copied into.
            if let Some(d) = data_of(n, &self.data) {
                prefetch_lines_for_write(d.as_ptr(), d.len().min(4 * 64));
            }
            let next = n.cs_next;
            if next == NONE {
                break;
            }
            // Its hash (line 0) and its list links and Data slot (line 2).
            let np = &self.names[next as usize] as *const NameEntry as *const u8;
            prefetch_line(np);
            prefetch_line(np.wrapping_add(128));
            self.victim_cursor = next;
            self.victim_ahead += 1;
        }
    }

    // ---- timer wheel ----

    fn schedule(&mut self, p: u32, expiry_ms: u64) {
        self.unschedule(p);
        let slot =
            ((expiry_ms.max(self.wheel_time_ms) / WHEEL_TICK_MS) % WHEEL_SLOTS as u64) as u32;
        let head = self.wheel[slot as usize];
        {
            let pe = &mut self.pits[p as usize];
            pe.expiry_ms = expiry_ms;
            pe.wheel_slot = slot;
            pe.wheel_prev = NONE;
            pe.wheel_next = head;
        }
        if head != NONE {
            self.pits[head as usize].wheel_prev = p;
        }
        self.wheel[slot as usize] = p;
    }

    fn unschedule(&mut self, p: u32) {
        let (slot, prev, next) = {
            let pe = &self.pits[p as usize];
            (pe.wheel_slot, pe.wheel_prev, pe.wheel_next)
        };
        if slot == NONE {
            return;
        }
        if prev == NONE {
            self.wheel[slot as usize] = next;
        } else {
            self.pits[prev as usize].wheel_next = next;
        }
        if next != NONE {
            self.pits[next as usize].wheel_prev = prev;
        }
        let pe = &mut self.pits[p as usize];
        pe.wheel_slot = NONE;
        pe.wheel_prev = NONE;
        pe.wheel_next = NONE;
    }

    /// Advances time to `now_ms`, passing every PIT entry whose expiry is at or before `now_ms`
    /// to `on_expire` (which decides what to do, typically [`PitCs::pit_remove`] after the
    /// strategy's say). Visits only the wheel slots that time passed over (at most a full lap).
    pub fn expire(&mut self, now_ms: u64, expired: &mut Vec<u32>) {
        expired.clear();
        if now_ms < self.wheel_time_ms {
            return;
        }
        let first = self.wheel_time_ms / WHEEL_TICK_MS;
        let last = now_ms / WHEEL_TICK_MS;
        let laps = (last - first).min(WHEEL_SLOTS as u64 - 1);
        for t in first..=first + laps {
            let slot = (t % WHEEL_SLOTS as u64) as usize;
            let mut p = self.wheel[slot];
            while p != NONE {
                let pe = &self.pits[p as usize];
                let next = pe.wheel_next;
                if pe.expiry_ms <= now_ms {
                    expired.push(p);
                }
                p = next;
            }
        }
        self.wheel_time_ms = now_ms;
        for &p in expired.iter() {
            self.unschedule(p);
        }
        self.counters.pit_expired += expired.len() as u64;
    }

    /// Checks the table's invariants (for tests and the simulator): counts agree with the
    /// arenas, every live PIT entry is reachable from its name entry and scheduled, the CS list
    /// holds exactly the CS entries, and capacities are respected.
    pub fn check_invariants(&self) -> Result<(), String> {
        let live_pits = self.pits.iter().filter(|p| p.in_use).count();
        if live_pits != self.pit_len || live_pits + self.free_pits.len() != self.pits.len() {
            return Err(format!("pit_len {} but {} live", self.pit_len, live_pits));
        }
        if self.pit_len > self.config.pit_capacity || self.cs_len > self.config.cs_capacity {
            return Err("capacity exceeded".into());
        }
        let live_cbp = self
            .pits
            .iter()
            .filter(|p| p.in_use && p.can_be_prefix)
            .count();
        let by_depth: u64 = self.cbp_by_depth.iter().map(|&c| u64::from(c)).sum();
        if live_cbp != self.cbp_pits as usize || by_depth != u64::from(self.cbp_pits) {
            return Err(format!(
                "{live_cbp} live CanBePrefix PIT entries, counted {} ({by_depth} by depth)",
                self.cbp_pits
            ));
        }
        if let Some(p) = self
            .pits
            .iter()
            .position(|p| p.has_interest == p.interest.is_empty() || (!p.in_use && p.has_interest))
        {
            return Err(format!(
                "PIT entry {p}: stored Interest and its flag disagree"
            ));
        }
        let mut cs_count = 0;
        let mut i = self.cs_head;
        while i != NONE {
            cs_count += 1;
            if cs_count > self.names.len() {
                return Err("CS list has a cycle".into());
            }
            if self.names[i as usize].cs == CsKind::None {
                return Err("non-CS entry on the CS list".into());
            }
            i = self.names[i as usize].cs_next;
        }
        let cs_entries = self
            .names
            .iter()
            .filter(|n| n.in_use && n.cs != CsKind::None)
            .count();
        let direct = self
            .names
            .iter()
            .filter(|n| n.in_use && n.cs == CsKind::Direct)
            .count();
        let holding = self
            .names
            .iter()
            .filter(|n| n.data_slot().is_some())
            .count();
        if direct != holding || holding != self.data.live() {
            return Err(format!(
                "Data slots: {direct} direct entries, {holding} holding one, {} handed out",
                self.data.live()
            ));
        }
        self.data.check()?;
        let mut slots: Vec<Slot> = self.names.iter().filter_map(|n| n.data_slot()).collect();
        slots.sort_by_key(|s| (s.class, s.index));
        if slots.windows(2).any(|w| w[0] == w[1]) {
            return Err("two name entries share a Data slot".into());
        }
        if let Some(n) = self.names.iter().find(|n| {
            n.data_slot()
                .is_some_and(|s| usize::from(n.data_len) > self.data.slot(s).len())
        }) {
            return Err(format!("Data of {} bytes beyond its slot", n.data_len));
        }
        if cs_count != self.cs_len || cs_entries != self.cs_len {
            return Err(format!(
                "cs_len {} list {} entries {}",
                self.cs_len, cs_count, cs_entries
            ));
        }
        for (i, n) in self.names.iter().enumerate() {
            if n.in_use {
                if n.is_empty() {
                    return Err(format!("empty name entry {i} not released"));
                }
                if self.find(n.hash, name_of(n, &self.long_names)) != Some(i as u32) {
                    return Err(format!("name entry {i} not indexed"));
                }
                for (s, &p) in n.pit.iter().enumerate() {
                    if p != NONE {
                        let pe = &self.pits[p as usize];
                        if !pe.in_use
                            || pe.owner != i as u32
                            || pit_slot(pe.can_be_prefix, pe.must_be_fresh) != s
                        {
                            return Err(format!("PIT link broken at {i}"));
                        }
                        if pe.wheel_slot == NONE && pe.expiry_ms > self.wheel_time_ms {
                            return Err(format!("PIT entry {p} not scheduled"));
                        }
                    }
                }
            }
        }
        if self.names_len() != self.index.len() {
            return Err("index and arena disagree".into());
        }
        Ok(())
    }
}
