//! The L2 tier on a real file (or block device): batches of `B` chunks in contiguous extents,
//! non-blocking reads and writes, FIFO/LRU replacement of extents, admission decisions, a
//! checksum on every slot, and an index that survives restarts.
//!
//! # Shape
//!
//! - The file is preallocated at creation ([`crate::layout`]): a superblock, then `extents`
//!   extents of `batch` slots of `slot_bytes` each.
//! - The in-RAM index maps a 64-bit keyed SipHash of (name prefix, batch number) to an extent,
//!   and keeps per extent a bitmap of the slots that hold a chunk, the FIFO/LRU links and a few
//!   small fields: 48 bytes per extent plus about 19.4 bytes of hash map (a 16-byte entry and
//!   a control byte at 7/8 load), i.e. 6.7 bytes per chunk with `B = 10` and at most 32 bytes
//!   per chunk for any `B ≥ 3` ([`L2File::index_bytes_per_chunk`]). Names are not kept in RAM: a
//!   read returns each slot's name from its header, and the caller compares it with the name it
//!   asked for ([`crate::tier::L2Tier`] does).
//! - Every operation is submitted to the [`Io`] engine (io_uring, or a pool of threads doing
//!   `pread`/`pwrite`) and returns at once; [`L2File::poll`] drains completions. At most
//!   `queue_depth` operations are in flight; a read or write that finds the queue full answers
//!   [`ReadStart::Busy`] / [`Admit::Busy`] instead of waiting. Buffers are allocated at open.
//! - Every slot read is verified (CRC32C over header, name and payload, batch key and slot
//!   position), then by the owner's payload check if it installed one
//!   ([`L2File::set_payload_check`]; [`crate::L2Tier`] checks that the Data's Name is the
//!   slot's name). A slot that fails is dropped from the index and counted, never served.
//! - [`L2File::close`] writes the index to `<path>.idx` with a CRC32C; [`L2File::open`] loads
//!   it and deletes it, so that after a crash (no valid index) the next open rebuilds the
//!   index by scanning every slot header, dropping slots whose checksum fails. A file that a
//!   crash left without a superblock is created again, one shorter than its superblock says
//!   is extended back and scanned.
//! - The first read or write that fails turns the store off for good ([`L2File::fault`]):
//!   reads then miss and offers are refused, without I/O.
//!
//! The deterministic simulation stands a store on a simulated disk instead of a file
//! ([`L2Config::disk`], [`crate::sim`]): the same open path, index and checks, with operations
//! completed when the simulation steps the disk; [`L2File::reopen`] restarts a store in place.
//!
//! `O_DIRECT` is an option ([`L2Config::direct`]); all buffers are 4 KiB-aligned and all
//! offsets and lengths are multiples of 512 bytes (slots) or 4 KiB (extents).

use std::fmt;
use std::fs::{File, OpenOptions};
use std::hash::Hasher;
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use siphasher::sip::SipHasher13;

use crate::io::{ActiveBackend, AlignedBuf, Io, IoBackend, IoDone, IoKind, IoOp};
use crate::layout::{
    le32, le64, ChunkName, LayoutError, SlotError, SlotHeader, Superblock, SLOT_HEADER_BYTES,
    SUPERBLOCK_BYTES,
};
use crate::list::{Order, NIL};
use crate::replacement::Replacement;

mod backing;
mod keys;
mod members;
mod persist;
mod prefixes;

use backing::{Backing, SlotDrop};
use keys::{key_map, prefault_key_map, KeyLru, KeyMap};
pub use members::FilterLink;
use persist::superblock;
pub use prefixes::PREFIX_LEVELS;

/// Default queue depth (operations in flight).
pub const DEFAULT_QUEUE_DEPTH: usize = 16;
/// Default slot size: an 8 KiB chunk plus its header and name, rounded to 512 bytes.
pub const DEFAULT_SLOT_BYTES: u32 = 8704;
/// How many batches one admission decision covers at most (see [`Decision`]).
const DECISION_CACHE_ENTRIES: usize = 4096;
/// Extents read per `pread` while rebuilding the index.
const REBUILD_EXTENTS_PER_READ: u32 = 32;
const INDEX_MAGIC: &[u8; 8] = b"CASCIDX1";

/// A check of a verified slot's content: `(name, payload) -> servable`
/// ([`L2File::set_payload_check`]).
pub type PayloadCheck = fn(name: &[u8], payload: &[u8]) -> bool;
const WRITE_TAG: u64 = 1 << 63;

/// When chunks are offered to L2 (the caller decides when to call [`L2File::admit`]; the
/// setting is carried here so that every user of one store agrees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Admission {
    /// On L1 eviction: L2 holds what L1 drops (the write-back hierarchy of Mansilha et al., 2017).
    #[default]
    WriteBack,
    /// On L1 insertion: every chunk entering L1 is also written to L2.
    WriteThrough,
}

/// Which offered batches L2 accepts (decided once per batch when it has no extent yet).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Decision {
    /// Admit everything (Mansilha et al.'s policy).
    #[default]
    Always,
    /// Leave-copy-probabilistically: admit a new batch with probability `p` (0..=1).
    Lcp {
        /// Admission probability.
        p: f64,
    },
    /// 2-LRU: a batch is admitted only if its key was already offered recently, i.e. is in an
    /// LRU filter of `filter_batches` keys.
    TwoLru {
        /// Keys remembered by the filter.
        filter_batches: u32,
    },
}

/// Configuration of an [`L2File`]; everything is fixed at open.
#[derive(Debug, Clone, PartialEq)]
pub struct L2Config {
    /// The file (created if missing) or block device.
    pub path: PathBuf,
    /// Capacity in extents (batches); chunks = `extents × batch`.
    pub extents: u32,
    /// Bytes per slot (multiple of 512): header (64) + name + payload must fit.
    pub slot_bytes: u32,
    /// Chunks per batch `B` (1..=64).
    pub batch: u32,
    /// Operations in flight at most.
    pub queue_depth: usize,
    /// I/O threads when the thread pool is used.
    pub io_threads: usize,
    /// io_uring, threads, or io_uring with fallback.
    pub backend: IoBackend,
    /// Open with `O_DIRECT` (bypass the page cache).
    pub direct: bool,
    /// Extent replacement.
    pub replacement: Replacement,
    /// When the caller offers chunks.
    pub admission: Admission,
    /// Which new batches are accepted.
    pub decision: Decision,
    /// Seed of the LCP coin.
    pub seed: u64,
    /// A simulated disk to stand on instead of `path` (the deterministic simulation's, see
    /// [`crate::sim`]); `None` for a real store.
    pub disk: Option<crate::sim::SimDisk>,
}

impl L2Config {
    /// Defaults (`B = 10`, 8,704-byte slots, queue depth 16, io_uring with fallback, FIFO,
    /// write-back, always) for `extents` batches at `path`.
    pub fn new(path: impl Into<PathBuf>, extents: u32) -> Self {
        L2Config {
            path: path.into(),
            extents,
            slot_bytes: DEFAULT_SLOT_BYTES,
            batch: 10,
            queue_depth: DEFAULT_QUEUE_DEPTH,
            io_threads: DEFAULT_QUEUE_DEPTH,
            backend: IoBackend::Auto,
            direct: false,
            replacement: Replacement::Fifo,
            admission: Admission::WriteBack,
            decision: Decision::Always,
            seed: 1,
            disk: None,
        }
    }

    /// The index file written at clean shutdown: `<path>.idx`.
    pub fn index_path(&self) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(".idx");
        PathBuf::from(p)
    }

    fn validate(&self) -> Result<(), L2Error> {
        if self.queue_depth == 0 || self.queue_depth > 4096 {
            return Err(L2Error::Config(format!(
                "queue depth must be 1..=4096, got {}",
                self.queue_depth
            )));
        }
        if let Decision::Lcp { p } = self.decision {
            if !(0.0..=1.0).contains(&p) {
                return Err(L2Error::Config(format!(
                    "LCP probability must be in 0..=1, got {p}"
                )));
            }
        }
        if let Decision::TwoLru { filter_batches: 0 } = self.decision {
            return Err(L2Error::Config(
                "2-LRU filter must hold at least 1 key".into(),
            ));
        }
        Ok(())
    }
}

/// An L2 open/close failure.
#[derive(Debug)]
pub enum L2Error {
    /// Bad configuration.
    Config(String),
    /// The file's superblock or geometry.
    Layout(LayoutError),
    /// An I/O error, with what was being done.
    Io(String, io::Error),
}

impl fmt::Display for L2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config(s) => write!(f, "bad L2 configuration: {s}"),
            Self::Layout(e) => write!(f, "{e}"),
            Self::Io(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

impl std::error::Error for L2Error {}

impl From<LayoutError> for L2Error {
    fn from(e: LayoutError) -> Self {
        L2Error::Layout(e)
    }
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> L2Error {
    let what = what.into();
    move |e| L2Error::Io(what, e)
}

/// Counters since open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Counters {
    /// Batch reads submitted to the device.
    pub reads_submitted: u64,
    /// Reads that joined a read of the same batch already in flight.
    pub reads_joined: u64,
    /// Reads answered "not in L2".
    pub read_misses: u64,
    /// Reads refused because the queue was full.
    pub read_busy: u64,
    /// Batch reads that failed with an I/O error.
    pub read_errors: u64,
    /// Bytes read by batch reads.
    pub bytes_read: u64,
    /// Verified chunks handed to the caller.
    pub chunks_read: u64,
    /// Slots dropped because their checksum (or length or position) failed on read.
    pub checksum_failures: u64,
    /// Slots dropped on read because their payload failed the payload check
    /// ([`L2File::set_payload_check`]): with [`crate::L2Tier`], a Data whose Name is not the
    /// name in the slot header.
    pub name_mismatches: u64,
    /// Chunk writes submitted.
    pub writes_submitted: u64,
    /// Chunk writes that failed.
    pub write_errors: u64,
    /// Bytes written by chunk writes.
    pub bytes_written: u64,
    /// Offers ([`L2File::admit`], [`L2File::admit_stamped`], and [`crate::L2Tier`]'s offers
    /// of malformed names). Each ends in exactly one of `writes_submitted`, `admit_present`,
    /// `admit_rejected`, `admit_busy`, `admit_too_large` and `admit_off`: see
    /// [`L2Counters::offers_accounted`].
    pub admit_offers: u64,
    /// Offers refused by the decision policy.
    pub admit_rejected: u64,
    /// Offers refused because the queue was full or no extent could be freed.
    pub admit_busy: u64,
    /// Offers of chunks already stored (or being written).
    pub admit_present: u64,
    /// Offers too large for a slot.
    pub admit_too_large: u64,
    /// Extents evicted by the replacement policy.
    pub evictions: u64,
    /// At open: chunks found by the index file or the rebuild scan.
    pub recovered_chunks: u64,
    /// At open: slots dropped by the rebuild scan because their checksum failed.
    pub rebuild_corrupt: u64,
    /// At open: whether the index came from a valid index file (else a rebuild scan).
    pub loaded_index_file: bool,
    /// Reads and offers refused because a storage fault turned the store off
    /// ([`L2File::fault`]).
    pub refused_off: u64,
    /// Of those, offers.
    pub admit_off: u64,
}

impl L2Counters {
    /// The offers the outcomes account for: the sum of `writes_submitted`, `admit_present`,
    /// `admit_rejected`, `admit_busy`, `admit_too_large` and `admit_off`, which equals
    /// [`L2Counters::admit_offers`] at every moment (an offer is counted with its outcome, at
    /// once).
    pub fn offers_accounted(&self) -> u64 {
        self.writes_submitted
            + self.admit_present
            + self.admit_rejected
            + self.admit_busy
            + self.admit_too_large
            + self.admit_off
    }
}

/// The storage fault that turned an [`L2File`] off: a read or write that failed (EIO, ENOSPC,
/// EROFS, or any other error but an interruption), or came up short because the file shrank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Fault {
    /// A write failed (else a read).
    pub write: bool,
    /// The OS error number; 0 for a transfer that came up short.
    pub errno: i32,
}

impl fmt::Display for L2Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = if self.write { "write" } else { "read" };
        match self.errno {
            0 => write!(
                f,
                "{op} came up short (the file is shorter than its superblock says)"
            ),
            e => write!(f, "{op} failed: {}", io::Error::from_raw_os_error(e)),
        }
    }
}

/// The answer to [`L2File::read`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadStart {
    /// The chunk's batch is being read; its completion will carry `ticket`.
    Pending {
        /// Identifies the batch read in [`BatchRead::ticket`].
        ticket: u64,
        /// The chunk's slot in the batch.
        slot: u32,
        /// The read was already in flight (no new I/O).
        joined: bool,
    },
    /// The chunk is not in L2.
    Miss,
    /// The queue is full: treat as a miss (or retry later).
    Busy,
}

/// The answer to [`L2File::admit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// The write was submitted.
    Writing,
    /// Already stored or being written.
    Present,
    /// Refused by the decision policy.
    Rejected,
    /// Queue full or nothing evictable.
    Busy,
    /// A storage fault turned the store off ([`L2File::fault`]).
    Off,
    /// Name + payload do not fit a slot (or the name is not valid TLV).
    TooLarge,
}

/// One verified chunk of a completed batch read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// Slot in the batch (`segment mod B`).
    pub slot: u32,
    /// When the chunk was written (ms since the Unix epoch; 0: unknown).
    pub stored_at_ms: u64,
    /// Segment number.
    pub segment: u64,
    /// The full name (name TLV value) stored with the chunk.
    pub name: &'a [u8],
    /// The payload (a Data packet).
    pub payload: &'a [u8],
}

/// A completed batch read: the verified chunks of one extent.
#[derive(Debug)]
pub struct BatchRead<'a> {
    /// The ticket returned by [`L2File::read`].
    pub ticket: u64,
    /// The read itself failed (I/O error): no chunk is served.
    pub io_error: bool,
    buf: &'a [u8],
    slot_bytes: usize,
    /// Slots whose chunk verified, with (name_len, payload_len).
    valid: u64,
    lens: &'a [(u16, u32)],
    segments: &'a [u64],
    now_ms: u64,
}

impl<'a> BatchRead<'a> {
    /// The store's clock when the read completed ([`L2File::now_ms`]), for freshness.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// The verified chunk in `slot`, if any.
    pub fn chunk(&self, slot: u32) -> Option<Chunk<'a>> {
        if slot >= 64 || self.valid & (1 << slot) == 0 {
            return None;
        }
        let (n, p) = self.lens[slot as usize];
        let base = slot as usize * self.slot_bytes + SLOT_HEADER_BYTES;
        let name_end = base + usize::from(n);
        Some(Chunk {
            slot,
            stored_at_ms: crate::layout::slot_stored_at_ms(&self.buf[base - SLOT_HEADER_BYTES..]),
            segment: self.segments[slot as usize],
            name: &self.buf[base..name_end],
            payload: &self.buf[name_end..name_end + p as usize],
        })
    }

    /// Every verified chunk, by slot.
    pub fn chunks(&self) -> impl Iterator<Item = Chunk<'a>> + '_ {
        (0..64).filter_map(|s| self.chunk(s))
    }

    /// Number of verified chunks.
    pub fn len(&self) -> usize {
        self.valid.count_ones() as usize
    }

    /// Whether no chunk verified.
    pub fn is_empty(&self) -> bool {
        self.valid == 0
    }
}

/// Per-extent index entry.
#[derive(Debug, Clone, Copy)]
struct Extent {
    key: u64,
    /// Slots holding a chunk.
    present: u64,
    /// Slots with a write in flight.
    writing: u64,
    /// Slots present when the read in flight was submitted (the ones it verifies).
    snapshot: u64,
    gen: u32,
    /// Operations in flight on this extent.
    busy: u16,
    reading: bool,
    in_use: bool,
}

impl Extent {
    const EMPTY: Extent = Extent {
        key: 0,
        present: 0,
        writing: 0,
        snapshot: 0,
        gen: 0,
        busy: 0,
        reading: false,
        in_use: false,
    };
}

/// The file-backed L2 store of one worker. Not shared: one owner thread submits and polls.
pub struct L2File {
    config: L2Config,
    sb: Superblock,
    file: Backing,
    /// Declared before the buffers, so dropped first: they are registered with it.
    io: Io,
    map: KeyMap,
    extents: Vec<Extent>,
    free: Vec<u32>,
    /// The extents in replacement order (tail: next victim).
    replacement: Order,
    read_bufs: Vec<AlignedBuf>,
    write_bufs: Vec<AlignedBuf>,
    next_seq: u64,
    counters: L2Counters,
    /// Direct-mapped cache of recent decisions: (key, admit, offers left).
    decisions: Vec<(u64, bool, u32)>,
    filter: Option<KeyLru>,
    rng: u64,
    /// Checks every verified slot's (name, payload) before it is handed out.
    payload_check: Option<PayloadCheck>,
    /// Set by the first storage fault: from then on nothing is read or written.
    fault: Option<L2Fault>,
    /// The filter in front of the CS that holds L2's names, if any.
    members: Option<members::Members>,
    /// Which extents hold chunks under a name prefix (CanBePrefix lookups).
    prefixes: prefixes::Prefixes,
    /// Tickets of reads a previous store left in flight when [`L2File::reopen`] replaced it:
    /// the next poll hands each out as a failed read, so that no lookup waits for them.
    orphans: Vec<u64>,
    // Scratch for a completed read (fixed size, reused).
    lens: [(u16, u32); 64],
    segments: [u64; 64],
}

impl fmt::Debug for L2File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("L2File")
            .field("path", &self.config.path)
            .field("extents", &self.sb.extents)
            .field("batch", &self.sb.batch)
            .field("io", &self.io)
            .finish()
    }
}

impl L2File {
    /// Opens (or creates and preallocates) the L2 file, then loads the index file written at
    /// the last clean shutdown, or rebuilds the index by scanning every slot if there is none.
    /// An existing file must have the configured geometry. What a crash while the file was
    /// created leaves (an empty or short file, a superblock of zeros) is created again, and a
    /// file shorter than its superblock says is extended back and its index rebuilt.
    pub fn open(config: &L2Config) -> Result<Self, L2Error> {
        Self::open_with_filter(config, None)
    }

    /// [`L2File::open`], keeping the names of the chunks it holds in `filter` (the counting
    /// Bloom filter in front of the CS): every chunk the index holds is inserted now, a chunk
    /// when its write completes, and a chunk leaves it when its extent is evicted or its slot
    /// fails a read (see [`FilterLink`]). An index file without the names' hashes is rebuilt by
    /// a scan.
    pub fn open_with_filter(
        config: &L2Config,
        filter: Option<FilterLink>,
    ) -> Result<Self, L2Error> {
        Self::open_with_filters(config, filter, None)
    }

    /// [`L2File::open_with_filter`], also counting every name prefix its prefix index links
    /// (those [`L2File::read_prefix`] answers for) in `prefixes`, keyed by the engine's
    /// full-name hash: what the dispatcher reads to send a CanBePrefix Interest to a worker
    /// whose L2 may answer it.
    pub fn open_with_filters(
        config: &L2Config,
        filter: Option<FilterLink>,
        prefixes: Option<FilterLink>,
    ) -> Result<Self, L2Error> {
        config.validate()?;
        let want = Superblock {
            slot_bytes: config.slot_bytes,
            batch: config.batch,
            extents: config.extents,
            hash_key: [0; 16],
            file_id: 0,
        };
        want.validate()?;
        let file = Backing::open(config)?;
        let (sb, found) = superblock(&file, &config.path, want)?;
        let io = file.io(config).map_err(io_err("cannot start L2 I/O"))?;
        let n = sb.extents as usize;
        let qd = config.queue_depth;
        let mut l2 = L2File {
            sb,
            file,
            io,
            map: key_map(n),
            extents: vec![Extent::EMPTY; n],
            free: Vec::with_capacity(n),
            replacement: {
                let mut o = Order::with_capacity(n);
                o.grow_to(n);
                o
            },
            read_bufs: (0..qd)
                .map(|_| AlignedBuf::new(sb.extent_bytes() as usize))
                .collect(),
            write_bufs: (0..qd)
                .map(|_| AlignedBuf::new(sb.slot_bytes as usize))
                .collect(),
            next_seq: 1,
            counters: L2Counters::default(),
            decisions: vec![(0, false, 0); DECISION_CACHE_ENTRIES],
            filter: match config.decision {
                Decision::TwoLru { filter_batches } => Some(KeyLru::new(filter_batches as usize)),
                _ => None,
            },
            rng: config.seed | 1,
            payload_check: None,
            fault: None,
            members: filter.map(|f| members::Members::new(f, sb.extents, sb.batch)),
            prefixes: prefixes::Prefixes::new(sb.extents, prefixes),
            orphans: Vec::new(),
            lens: [(0, 0); 64],
            segments: [0; 64],
            config: config.clone(),
        };
        {
            let bufs: Vec<&AlignedBuf> = l2.read_bufs.iter().chain(&l2.write_bufs).collect();
            // SAFETY: the buffers are freed only with the L2File, after `io` (declared before
            // them, so dropped first); in between they only move in and out of operations.
            // Refused (e.g. the memlock limit): plain reads and writes, as before.
            unsafe { l2.io.register_buffers(&bufs) };
        }
        l2.prefault();
        if let Err(e) = l2.load(found) {
            // The prefixes linked so far leave the filter with the store that failed to open.
            l2.prefixes.filter_off();
            return Err(e);
        }
        l2.counters.recovered_chunks = l2.stored_chunks();
        l2.members_load();
        Ok(l2)
    }

    /// Writes every page of the memory the store reserved for its index when it was made (its
    /// maps, arrays and lists), before anything is loaded into it: otherwise a fresh store's
    /// first admissions take a page fault on each page they write first, in the worker's loop,
    /// where a fault can wait on the process's memory-map lock. Their size is fixed by the
    /// file's extents, and a store that fills writes them all anyway.
    fn prefault(&mut self) {
        use engine::table::mem::{touch_slice, touch_spare};
        prefault_key_map(&mut self.map);
        touch_slice(&mut self.extents);
        touch_spare(&mut self.free);
        self.replacement.prefault();
        touch_slice(&mut self.decisions);
        if let Some(f) = &mut self.filter {
            f.prefault();
        }
        if let Some(m) = &mut self.members {
            m.prefault();
        }
        self.prefixes.prefault();
    }

    /// Installs a check that every slot read must pass, after its checksum, before its chunk
    /// is handed out: a slot that fails is dropped from the index and counted
    /// ([`L2Counters::name_mismatches`]), like a slot whose checksum fails. The check gets the
    /// name from the slot header and the payload.
    pub fn set_payload_check(&mut self, check: PayloadCheck) {
        self.payload_check = Some(check);
    }

    /// The configuration.
    pub fn config(&self) -> &L2Config {
        &self.config
    }

    /// The file's geometry.
    pub fn superblock(&self) -> &Superblock {
        &self.sb
    }

    /// The I/O mechanism in use.
    pub fn backend(&self) -> ActiveBackend {
        self.io.backend()
    }

    /// Counters since open.
    pub fn counters(&self) -> &L2Counters {
        &self.counters
    }

    /// The storage fault that turned the store off, if one did. A read or write that fails
    /// (except for an interruption) or comes up short turns it off for good: every later
    /// [`L2File::read`] answers [`ReadStart::Miss`] and every [`L2File::admit`] [`Admit::Off`]
    /// (both counted in [`L2Counters::refused_off`]), rather than failing again on every
    /// packet; the operations in flight complete as usual (a failed read serves nothing).
    pub fn fault(&self) -> Option<L2Fault> {
        self.fault
    }

    /// Operations in flight.
    pub fn in_flight(&self) -> usize {
        self.io.in_flight()
    }

    /// Chunks the index says are stored.
    pub fn stored_chunks(&self) -> u64 {
        self.extents
            .iter()
            .filter(|e| e.in_use)
            .map(|e| u64::from(e.present.count_ones()))
            .sum()
    }

    /// RAM the index costs per chunk of capacity, in bytes: the extent entry plus the hash
    /// map's key, value and control byte (at its maximum 7/8 load), divided by `B`.
    pub fn index_bytes_per_chunk(&self) -> f64 {
        let map_entry = (std::mem::size_of::<(u64, u32)>() + 1) as f64 * 8.0 / 7.0; // 19.4
        (std::mem::size_of::<Extent>() as f64 + map_entry) / f64::from(self.sb.batch)
    }

    /// The keyed hash identifying the batch of `segment` under `prefix`.
    pub fn batch_key(&self, prefix: &[u8], segment: u64) -> u64 {
        let mut k0 = [0u8; 8];
        let mut k1 = [0u8; 8];
        k0.copy_from_slice(&self.sb.hash_key[..8]);
        k1.copy_from_slice(&self.sb.hash_key[8..]);
        let mut h = SipHasher13::new_with_keys(u64::from_le_bytes(k0), u64::from_le_bytes(k1));
        h.write(prefix);
        h.write_u64(segment / u64::from(self.sb.batch));
        h.finish()
    }

    fn slot_of(&self, segment: u64) -> u32 {
        (segment % u64::from(self.sb.batch)) as u32
    }

    /// Whether the index holds `name` (no I/O; the slot is verified only when read).
    pub fn contains(&self, name: &ChunkName<'_>) -> bool {
        let key = self.batch_key(name.prefix, name.segment);
        let bit = 1u64 << self.slot_of(name.segment);
        self.fault.is_none()
            && self
                .map
                .get(&key)
                .is_some_and(|&e| self.extents[e as usize].present & bit != 0)
    }

    /// Starts reading the batch holding `name` (one contiguous read of its extent), or joins
    /// the read already in flight. Never blocks.
    pub fn read(&mut self, name: &ChunkName<'_>) -> ReadStart {
        if self.fault.is_some() {
            self.counters.refused_off += 1;
            return ReadStart::Miss;
        }
        let key = self.batch_key(name.prefix, name.segment);
        let slot = self.slot_of(name.segment);
        let Some(&e) = self.map.get(&key) else {
            self.counters.read_misses += 1;
            return ReadStart::Miss;
        };
        if self.extents[e as usize].present & (1 << slot) == 0 {
            self.counters.read_misses += 1;
            return ReadStart::Miss;
        }
        self.read_extent(e, slot)
    }

    /// Starts (or joins) the read of extent `e` for the chunk in `slot`, which is present.
    fn read_extent(&mut self, e: u32, slot: u32) -> ReadStart {
        let ext = self.extents[e as usize];
        let ticket = read_tag(e, ext.gen);
        if ext.reading {
            if ext.snapshot & (1 << slot) == 0 {
                // Written after that read was submitted: it will not verify this slot.
                self.counters.read_busy += 1;
                return ReadStart::Busy;
            }
            self.counters.reads_joined += 1;
            return ReadStart::Pending {
                ticket,
                slot,
                joined: true,
            };
        }
        // (Room first: a buffer taken from the pool must not be dropped.)
        let Some(buf) = self.io.has_room().then(|| self.read_bufs.pop()).flatten() else {
            self.counters.read_busy += 1;
            return ReadStart::Busy;
        };
        let op = IoOp {
            kind: IoKind::Read,
            offset: self.sb.extent_offset(e),
            len: self.sb.extent_bytes() as usize,
            buf,
            tag: ticket,
        };
        if let Err(op) = self.io.submit(op) {
            self.read_bufs.push(op.buf);
            self.counters.read_busy += 1;
            return ReadStart::Busy;
        }
        self.counters.reads_submitted += 1;
        let x = &mut self.extents[e as usize];
        x.reading = true;
        x.snapshot = x.present;
        x.busy += 1;
        if self.config.replacement == Replacement::Lru {
            self.replacement.unlink(e);
            self.replacement.push_head(e);
        }
        ReadStart::Pending {
            ticket,
            slot,
            joined: false,
        }
    }

    /// Offers a chunk (`payload` is the Data packet) for storage: writes it into its batch's
    /// extent, allocating one (and evicting) if the decision policy accepts a new batch.
    /// Never blocks. The slot records the store's clock now as the chunk's write time.
    pub fn admit(&mut self, name: &ChunkName<'_>, payload: &[u8]) -> Admit {
        self.admit_stamped(name, payload, None)
    }

    /// [`L2File::admit`] for a chunk that arrived at `arrived_at_ms` (the store's clock, ms
    /// since the Unix epoch; `None`: now): the slot records that time, so that its freshness
    /// counts from the arrival (write-back writes a chunk long after it arrived). A time after
    /// now records now.
    pub fn admit_stamped(
        &mut self,
        name: &ChunkName<'_>,
        payload: &[u8],
        arrived_at_ms: Option<u64>,
    ) -> Admit {
        self.counters.admit_offers += 1;
        if self.fault.is_some() {
            self.counters.refused_off += 1;
            self.counters.admit_off += 1;
            return Admit::Off;
        }
        if name.name.len() > usize::from(u16::MAX)
            || name.name.len() + payload.len() > self.sb.slot_capacity_bytes()
            || payload.len() > u32::MAX as usize
        {
            self.counters.admit_too_large += 1;
            return Admit::TooLarge;
        }
        let key = self.batch_key(name.prefix, name.segment);
        let slot = self.slot_of(name.segment);
        let bit = 1u64 << slot;
        let e = match self.map.get(&key) {
            Some(&e) => {
                let x = &self.extents[e as usize];
                if (x.present | x.writing) & bit != 0 {
                    self.counters.admit_present += 1;
                    return Admit::Present;
                }
                if !self.io.has_room() || self.write_bufs.is_empty() {
                    self.counters.admit_busy += 1;
                    return Admit::Busy;
                }
                e
            }
            None => {
                if !self.io.has_room() || self.write_bufs.is_empty() {
                    self.counters.admit_busy += 1;
                    return Admit::Busy;
                }
                if !self.decide(key) {
                    self.counters.admit_rejected += 1;
                    return Admit::Rejected;
                }
                let Some(e) = self.allocate(key) else {
                    self.counters.admit_busy += 1;
                    return Admit::Busy;
                };
                self.prefixes_link(e, name);
                e
            }
        };
        let mut buf = self.write_bufs.pop().expect("checked above");
        let header = SlotHeader {
            batch_key: key,
            segment: name.segment,
            seq: self.next_seq,
            name_len: name.name.len() as u16,
            payload_len: payload.len() as u32,
        };
        self.next_seq += 1;
        let now_ms = self.now_ms();
        let stamp = arrived_at_ms.map_or(now_ms, |t| t.min(now_ms));
        header.write_stamped(buf.as_mut_slice(), name.name, payload, stamp);
        self.member_written(e, slot, name.name);
        let gen = self.extents[e as usize].gen;
        let op = IoOp {
            kind: IoKind::Write,
            offset: self.sb.slot_offset(e, slot),
            len: self.sb.slot_bytes as usize,
            buf,
            tag: write_tag(e, gen, slot),
        };
        if let Err(op) = self.io.submit(op) {
            self.write_bufs.push(op.buf);
            self.counters.admit_busy += 1;
            return Admit::Busy;
        }
        self.counters.writes_submitted += 1;
        let x = &mut self.extents[e as usize];
        x.writing |= bit;
        x.busy += 1;
        Admit::Writing
    }

    /// An offer of a chunk whose name is not valid TLV (made by [`crate::L2Tier`]): refused as
    /// [`Admit::TooLarge`], counted like one.
    pub(crate) fn refuse_malformed(&mut self) -> Admit {
        self.counters.admit_offers += 1;
        self.counters.admit_too_large += 1;
        Admit::TooLarge
    }

    /// Whether a batch that has no extent yet is accepted.
    fn decide(&mut self, key: u64) -> bool {
        let i = (key % DECISION_CACHE_ENTRIES as u64) as usize;
        let (k, admit, left) = self.decisions[i];
        if left > 0 && k == key {
            self.decisions[i].2 -= 1;
            return admit;
        }
        let admit = match self.config.decision {
            Decision::Always => return true,
            Decision::Lcp { p } => {
                // xorshift64*
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let x = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
                ((x >> 11) as f64 / (1u64 << 53) as f64) < p
            }
            Decision::TwoLru { .. } => self
                .filter
                .as_mut()
                .is_some_and(|f| f.check_and_insert(key)),
        };
        // The decision covers the rest of this batch's chunks.
        self.decisions[i] = (key, admit, self.sb.batch.saturating_sub(1));
        admit
    }

    /// A free extent for `key` (evicting the replacement victim if needed); `None` if every
    /// candidate has I/O in flight.
    fn allocate(&mut self, key: u64) -> Option<u32> {
        let e = match self.free.pop() {
            Some(e) => e,
            None => {
                let mut victim = self.replacement.tail();
                let mut tries = 0;
                while victim != NIL && self.extents[victim as usize].busy > 0 {
                    tries += 1;
                    if tries > 64 {
                        return None;
                    }
                    victim = self.replacement.prev(victim);
                }
                if victim == NIL {
                    return None;
                }
                self.members_changed(victim, self.extents[victim as usize].present, false);
                self.prefixes.unlink(victim);
                self.replacement.unlink(victim);
                let old = self.extents[victim as usize].key;
                self.map.remove(&old);
                self.counters.evictions += 1;
                victim
            }
        };
        let x = &mut self.extents[e as usize];
        x.key = key;
        x.present = 0;
        x.writing = 0;
        x.gen = x.gen.wrapping_add(1);
        x.in_use = true;
        x.reading = false;
        self.map.insert(key, e);
        self.replacement.push_head(e);
        Some(e)
    }

    /// Drains finished operations without blocking: writes update the index, and `f` gets
    /// every finished batch read. Returns the number of operations drained.
    pub fn poll(&mut self, f: impl FnMut(&BatchRead<'_>)) -> usize {
        self.poll_max(usize::MAX, f)
    }

    /// Like [`L2File::poll`], but drains at most `max` operations (the rest wait for the next
    /// call): bounds the time one call takes. Operations queued since the last call are handed
    /// to the kernel first.
    pub fn poll_max(&mut self, max: usize, mut f: impl FnMut(&BatchRead<'_>)) -> usize {
        self.io.flush();
        let mut n = 0;
        while n < max && self.finish_orphan(&mut f) {
            n += 1;
        }
        while n < max {
            let Some(done) = self.io.try_complete() else {
                break;
            };
            self.finish(done, &mut f);
            n += 1;
        }
        n
    }

    /// Blocks until one operation finishes and handles it like [`L2File::poll`]; `false` if
    /// nothing was in flight. For benchmarks and shutdown, not for forwarding workers.
    pub fn wait_one(&mut self, mut f: impl FnMut(&BatchRead<'_>)) -> bool {
        if self.finish_orphan(&mut f) {
            return true;
        }
        match self.io.wait() {
            Some(done) => {
                self.finish(done, &mut f);
                true
            }
            None => false,
        }
    }

    /// Blocks until nothing is in flight (completed reads are discarded).
    pub fn flush(&mut self) {
        while self.wait_one(|_| {}) {}
    }

    fn finish(&mut self, done: IoDone, f: &mut impl FnMut(&BatchRead<'_>)) {
        let ok = done.complete();
        if !ok {
            self.note_failure(&done);
        }
        let IoDone { op, .. } = done;
        if op.tag & WRITE_TAG != 0 {
            let (e, gen, slot) = untag(op.tag);
            let bit = 1u64 << slot;
            let x = &mut self.extents[e as usize];
            x.busy = x.busy.saturating_sub(1);
            x.writing &= !bit;
            if ok {
                self.counters.bytes_written += op.len as u64;
                if x.gen & 0xff_ffff == gen && x.in_use && x.present & bit == 0 {
                    x.present |= bit;
                    self.members_changed(e, bit, true);
                }
            } else {
                self.counters.write_errors += 1;
            }
            self.write_bufs.push(op.buf);
            return;
        }
        let (e, gen, _) = untag(op.tag);
        let (key, present) = {
            let x = &mut self.extents[e as usize];
            x.busy = x.busy.saturating_sub(1);
            x.reading = false;
            (x.key, x.snapshot & x.present)
        };
        let same = self.extents[e as usize].gen & 0xff_ffff == gen;
        let mut valid = 0u64;
        if ok {
            self.counters.bytes_read += op.len as u64;
            let sbytes = self.sb.slot_bytes as usize;
            let buf = op.buf.as_slice();
            for s in 0..self.sb.batch {
                if present & (1 << s) == 0 || !same {
                    continue;
                }
                let at = s as usize * sbytes;
                match self.verify_slot(&buf[at..at + sbytes], key, s) {
                    Ok(h) => {
                        valid |= 1 << s;
                        self.lens[s as usize] = (h.name_len, h.payload_len);
                        self.segments[s as usize] = h.segment;
                    }
                    Err(drop) => {
                        // Never served, dropped: corrupt (or not what the index says), or
                        // intact bytes with the wrong content (a buggy writer, a crafted file).
                        match drop {
                            SlotDrop::Corrupt => self.counters.checksum_failures += 1,
                            SlotDrop::WrongContent => self.counters.name_mismatches += 1,
                        }
                        self.extents[e as usize].present &= !(1 << s);
                        self.members_changed(e, 1 << s, false);
                    }
                }
            }
            self.counters.chunks_read += u64::from(valid.count_ones());
        } else {
            self.counters.read_errors += 1;
        }
        let view = BatchRead {
            ticket: op.tag,
            io_error: !ok,
            buf: op.buf.as_slice(),
            slot_bytes: self.sb.slot_bytes as usize,
            valid,
            lens: &self.lens,
            segments: &self.segments,
            now_ms: self.file.now_ms(),
        };
        f(&view);
        self.read_bufs.push(op.buf);
    }

    /// Turns the store off at its first storage fault (an interrupted operation is not one).
    fn note_failure(&mut self, done: &IoDone) {
        let errno = match &done.result {
            Err(e) => e.raw_os_error().unwrap_or(libc::EIO),
            Ok(_) => 0,
        };
        if self.fault.is_none() && !matches!(errno, libc::EINTR | libc::EAGAIN | libc::ECANCELED) {
            self.fault = Some(L2Fault {
                write: done.op.kind == IoKind::Write,
                errno,
            });
            self.members_off();
            self.prefixes.filter_off();
        }
    }

    /// Test hook: the next operation of `kind` to complete fails with OS error `errno`.
    #[cfg(test)]
    pub(crate) fn fail_next_io(&mut self, kind: IoKind, errno: i32) {
        self.io.fail_next(kind, errno);
    }

    /// The extents' keys from the next victim to the newest (for tests).
    #[cfg(test)]
    fn order(&self) -> Vec<u64> {
        self.replacement
            .tail_to_head()
            .map(|e| self.extents[e as usize].key)
            .collect()
    }
}

fn read_tag(e: u32, gen: u32) -> u64 {
    (u64::from(e) << 24) | u64::from(gen & 0xff_ffff)
}

fn write_tag(e: u32, gen: u32, slot: u32) -> u64 {
    WRITE_TAG | (u64::from(slot) << 56) | read_tag(e, gen)
}

/// (extent, generation's low 24 bits, slot).
fn untag(tag: u64) -> (u32, u32, u32) {
    (
        ((tag >> 24) & 0xffff_ffff) as u32,
        (tag & 0xff_ffff) as u32,
        ((tag >> 56) & 0x7f) as u32,
    )
}

/// The wall clock in ms since the Unix epoch (0 if the clock is before it): the time L2 stamps
/// on every slot it writes, and judges freshness by.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Whether `path` is on a filesystem that accepts `O_DIRECT` (tmpfs does not).
pub fn supports_direct(dir: &Path) -> bool {
    let probe = dir.join(".cascade-odirect-probe");
    let r = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .is_ok();
    let _ = std::fs::remove_file(&probe);
    r
}

#[cfg(test)]
mod tests;
