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
//!   position). A slot that fails is dropped from the index and counted, never served.
//! - [`L2File::close`] writes the index to `<path>.idx` with a CRC32C; [`L2File::open`] loads
//!   it and deletes it, so that after a crash (no valid index) the next open rebuilds the
//!   index by scanning every slot header, dropping slots whose checksum fails.
//!
//! `O_DIRECT` is an option ([`L2Config::direct`]); all buffers are 4 KiB-aligned and all
//! offsets and lengths are multiples of 512 bytes (slots) or 4 KiB (extents).

use std::collections::HashMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::hash::{BuildHasherDefault, Hasher};
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

/// Default queue depth (operations in flight).
pub const DEFAULT_QUEUE_DEPTH: usize = 16;
/// Default slot size: an 8 KiB chunk plus its header and name, rounded to 512 bytes.
pub const DEFAULT_SLOT_BYTES: u32 = 8704;
/// How many batches one admission decision covers at most (see [`Decision`]).
const DECISION_CACHE_ENTRIES: usize = 4096;
/// Extents read per `pread` while rebuilding the index.
const REBUILD_EXTENTS_PER_READ: u32 = 32;
const INDEX_MAGIC: &[u8; 8] = b"CASCIDX1";
const WRITE_TAG: u64 = 1 << 63;

/// When chunks are offered to L2 (the caller decides when to call [`L2File::admit`]; the
/// setting is carried here so that every user of one store agrees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Admission {
    /// On L1 eviction: L2 holds what L1 drops (the seed's write-back hierarchy).
    #[default]
    WriteBack,
    /// On L1 insertion: every chunk entering L1 is also written to L2.
    WriteThrough,
}

/// Which offered batches L2 accepts (decided once per batch when it has no extent yet).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Decision {
    /// Admit everything (the seed's policy).
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
    /// Chunk writes submitted.
    pub writes_submitted: u64,
    /// Chunk writes that failed.
    pub write_errors: u64,
    /// Bytes written by chunk writes.
    pub bytes_written: u64,
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
    /// Name + payload do not fit a slot (or the name is not valid TLV).
    TooLarge,
}

/// One verified chunk of a completed batch read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// Slot in the batch (`segment mod B`).
    pub slot: u32,
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
}

impl<'a> BatchRead<'a> {
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

/// A pass-through hasher for keys that are already keyed SipHash outputs.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

type KeyMap = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;

/// A fixed-capacity LRU set of keys (the 2-LRU filter).
#[derive(Debug)]
struct KeyLru {
    map: KeyMap,
    keys: Vec<u64>,
    order: Order,
    capacity: usize,
}

impl KeyLru {
    fn new(capacity: usize) -> Self {
        KeyLru {
            map: KeyMap::with_capacity_and_hasher(capacity, Default::default()),
            keys: Vec::with_capacity(capacity),
            order: Order::with_capacity(capacity),
            capacity,
        }
    }

    /// Whether `key` was present; inserts it (or refreshes it) at the head either way.
    fn check_and_insert(&mut self, key: u64) -> bool {
        if let Some(&i) = self.map.get(&key) {
            self.order.unlink(i);
            self.order.push_head(i);
            return true;
        }
        let i = if self.keys.len() < self.capacity {
            self.keys.push(key);
            self.order.grow_to(self.keys.len());
            (self.keys.len() - 1) as u32
        } else {
            let v = self.order.tail();
            self.order.unlink(v);
            self.map.remove(&self.keys[v as usize]);
            self.keys[v as usize] = key;
            v
        };
        self.map.insert(key, i);
        self.order.push_head(i);
        false
    }
}

/// The file-backed L2 store of one worker. Not shared: one owner thread submits and polls.
pub struct L2File {
    config: L2Config,
    sb: Superblock,
    file: Arc<File>,
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
    /// An existing file must have the configured geometry.
    pub fn open(config: &L2Config) -> Result<Self, L2Error> {
        config.validate()?;
        let want = Superblock {
            slot_bytes: config.slot_bytes,
            batch: config.batch,
            extents: config.extents,
            hash_key: [0; 16],
            file_id: 0,
        };
        want.validate()?;
        let mut opts = OpenOptions::new();
        opts.read(true).write(true).create(true);
        if config.direct {
            opts.custom_flags(libc::O_DIRECT);
        }
        let path = &config.path;
        let file = opts
            .open(path)
            .map_err(io_err(format!("cannot open L2 file {}", path.display())))?;
        let mut block = AlignedBuf::new(SUPERBLOCK_BYTES as usize);
        let len = file
            .metadata()
            .map_err(io_err(format!("cannot stat {}", path.display())))?
            .len();
        let is_blockdev = {
            use std::os::unix::fs::FileTypeExt;
            file.metadata()
                .map(|m| m.file_type().is_block_device())
                .unwrap_or(false)
        };
        let fresh = len == 0
            || (is_blockdev && {
                let _ = file.read_at(block.as_mut_slice(), 0);
                Superblock::decode(block.as_slice()) == Err(LayoutError::NotAnL2File)
            });
        let sb = if fresh {
            let mut rand = [0u8; 24];
            File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut rand))
                .map_err(io_err("cannot read /dev/urandom"))?;
            let mut hash_key = [0u8; 16];
            hash_key.copy_from_slice(&rand[..16]);
            let sb = Superblock {
                hash_key,
                file_id: le64(&rand, 16),
                ..want
            };
            if !is_blockdev {
                preallocate(&file, sb.file_bytes())
                    .map_err(io_err(format!("cannot preallocate {}", path.display())))?;
            }
            sb.encode(block.as_mut_slice());
            file.write_at(&block.as_slice()[..SUPERBLOCK_BYTES as usize], 0)
                .map_err(io_err(format!(
                    "cannot write superblock of {}",
                    path.display()
                )))?;
            sb
        } else {
            file.read_at(block.as_mut_slice(), 0)
                .map_err(io_err(format!(
                    "cannot read superblock of {}",
                    path.display()
                )))?;
            let sb = Superblock::decode(block.as_slice())?;
            if (sb.slot_bytes, sb.batch, sb.extents) != (want.slot_bytes, want.batch, want.extents)
            {
                return Err(L2Error::Config(format!(
                    "{} has slot_bytes={} batch={} extents={}, the configuration asks for \
                     slot_bytes={} batch={} extents={}",
                    path.display(),
                    sb.slot_bytes,
                    sb.batch,
                    sb.extents,
                    want.slot_bytes,
                    want.batch,
                    want.extents
                )));
            }
            sb
        };
        let file = Arc::new(file);
        let io = Io::new(
            file.clone(),
            config.backend,
            config.queue_depth,
            config.io_threads,
        )
        .map_err(io_err("cannot start L2 I/O"))?;
        let n = sb.extents as usize;
        let qd = config.queue_depth;
        let mut l2 = L2File {
            sb,
            file,
            io,
            map: KeyMap::with_capacity_and_hasher(n, Default::default()),
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
        if fresh {
            l2.free.extend((0..sb.extents).rev());
            let _ = std::fs::remove_file(config.index_path());
        } else if !l2.load_index()? {
            l2.rebuild()?;
        }
        l2.counters.recovered_chunks = l2.stored_chunks();
        Ok(l2)
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
        self.map
            .get(&key)
            .is_some_and(|&e| self.extents[e as usize].present & bit != 0)
    }

    /// Starts reading the batch holding `name` (one contiguous read of its extent), or joins
    /// the read already in flight. Never blocks.
    pub fn read(&mut self, name: &ChunkName<'_>) -> ReadStart {
        let key = self.batch_key(name.prefix, name.segment);
        let slot = self.slot_of(name.segment);
        let Some(&e) = self.map.get(&key) else {
            self.counters.read_misses += 1;
            return ReadStart::Miss;
        };
        let ext = self.extents[e as usize];
        if ext.present & (1 << slot) == 0 {
            self.counters.read_misses += 1;
            return ReadStart::Miss;
        }
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
        let Some(buf) = self.read_bufs.pop().filter(|_| self.io.has_room()) else {
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
    /// Never blocks.
    pub fn admit(&mut self, name: &ChunkName<'_>, payload: &[u8]) -> Admit {
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
        header.write(buf.as_mut_slice(), name.name, payload);
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
        let IoDone { op, .. } = done;
        if op.tag & WRITE_TAG != 0 {
            let (e, gen, slot) = untag(op.tag);
            let bit = 1u64 << slot;
            let x = &mut self.extents[e as usize];
            x.busy = x.busy.saturating_sub(1);
            x.writing &= !bit;
            if ok {
                self.counters.bytes_written += op.len as u64;
                if x.gen & 0xff_ffff == gen && x.in_use {
                    x.present |= bit;
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
                match SlotHeader::read(&buf[at..at + sbytes]) {
                    Ok((h, _, _))
                        if h.batch_key == key
                            && h.segment % u64::from(self.sb.batch) == u64::from(s) =>
                    {
                        valid |= 1 << s;
                        self.lens[s as usize] = (h.name_len, h.payload_len);
                        self.segments[s as usize] = h.segment;
                    }
                    _ => {
                        // Corrupt (or not what the index says): never served, dropped.
                        self.counters.checksum_failures += 1;
                        self.extents[e as usize].present &= !(1 << s);
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
        };
        f(&view);
        self.read_bufs.push(op.buf);
    }

    /// Waits for every operation in flight, then writes the index to
    /// [`L2Config::index_path`] (with a CRC32C) and syncs, so that the next open needs no
    /// scan. Dropping an `L2File` without `close` is like a crash.
    pub fn close(mut self) -> Result<(), L2Error> {
        self.flush();
        self.file
            .sync_all()
            .map_err(io_err("cannot sync L2 file"))?;
        let mut out = Vec::with_capacity(32 + self.map.len() * 20 + 4);
        out.extend_from_slice(INDEX_MAGIC);
        out.extend_from_slice(&self.sb.file_id.to_le_bytes());
        out.extend_from_slice(&self.next_seq.to_le_bytes());
        out.extend_from_slice(&(self.map.len() as u32).to_le_bytes());
        // Tail (next victim) first, so the replacement order survives.
        for e in self.replacement.tail_to_head() {
            let x = &self.extents[e as usize];
            out.extend_from_slice(&e.to_le_bytes());
            out.extend_from_slice(&x.key.to_le_bytes());
            out.extend_from_slice(&x.present.to_le_bytes());
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        let path = self.config.index_path();
        let tmp = path.with_extension("idx.tmp");
        let write = || -> io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(&out)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(io_err(format!("cannot write index {}", path.display())))
    }

    /// Loads and deletes the index file; `false` if there is no valid one.
    fn load_index(&mut self) -> Result<bool, L2Error> {
        let path = self.config.index_path();
        let Ok(bytes) = std::fs::read(&path) else {
            return Ok(false);
        };
        // Whatever happens next, a crash from now on must rebuild.
        std::fs::remove_file(&path)
            .map_err(io_err(format!("cannot remove index {}", path.display())))?;
        if bytes.len() < 32 || &bytes[..8] != INDEX_MAGIC {
            return Ok(false);
        }
        let body = bytes.len() - 4;
        if le32(&bytes, body) != crc32c::crc32c(&bytes[..body]) {
            return Ok(false);
        }
        if le64(&bytes, 8) != self.sb.file_id {
            return Ok(false);
        }
        let count = le32(&bytes, 24) as usize;
        if 28 + count * 20 != body {
            return Ok(false);
        }
        let mut seen = vec![false; self.extents.len()];
        for i in 0..count {
            let at = 28 + i * 20;
            let e = le32(&bytes, at);
            let key = le64(&bytes, at + 4);
            let present = le64(&bytes, at + 12);
            if e >= self.sb.extents || seen[e as usize] || self.map.contains_key(&key) {
                self.reset_index();
                return Ok(false);
            }
            seen[e as usize] = true;
            self.install(e, key, present);
        }
        self.next_seq = le64(&bytes, 16);
        self.free
            .extend((0..self.sb.extents).rev().filter(|&e| !seen[e as usize]));
        self.counters.loaded_index_file = true;
        Ok(true)
    }

    fn reset_index(&mut self) {
        self.map.clear();
        self.extents.fill(Extent::EMPTY);
        self.free.clear();
        self.replacement.clear();
    }

    /// Installs `e` as the newest extent holding `key`.
    fn install(&mut self, e: u32, key: u64, present: u64) {
        let x = &mut self.extents[e as usize];
        x.key = key;
        x.present = present;
        x.in_use = true;
        self.map.insert(key, e);
        self.replacement.push_head(e);
    }

    /// Rebuilds the index by reading every slot header (after a crash).
    fn rebuild(&mut self) -> Result<(), L2Error> {
        self.reset_index();
        let per = REBUILD_EXTENTS_PER_READ.min(self.sb.extents);
        let ebytes = self.sb.extent_bytes() as usize;
        let sbytes = self.sb.slot_bytes as usize;
        let batch = u64::from(self.sb.batch);
        let mut buf = AlignedBuf::new(ebytes * per as usize);
        // (max seq, extent, key, present) of every extent with a live owner.
        let mut found: Vec<(u64, u32, u64, u64)> = Vec::new();
        let mut max_seq = 0;
        let mut e0 = 0;
        while e0 < self.sb.extents {
            let n = per.min(self.sb.extents - e0);
            let len = n as usize * ebytes;
            read_full(
                &self.file,
                &mut buf.as_mut_slice()[..len],
                self.sb.extent_offset(e0),
            )
            .map_err(io_err("cannot scan L2 file"))?;
            for i in 0..n {
                let base = i as usize * ebytes;
                // Owner: the key of the newest valid slot; older slots are a previous batch.
                let mut owner: Option<(u64, u64)> = None; // (seq, key)
                let mut slots = [(0u64, 0u64); 64]; // (seq, key) of valid slots
                let mut valid = 0u64;
                for (s, slot) in slots.iter_mut().enumerate().take(self.sb.batch as usize) {
                    let at = base + s * sbytes;
                    match SlotHeader::read(&buf.as_slice()[at..at + sbytes]) {
                        Ok((h, _, _)) if h.segment % batch == s as u64 => {
                            valid |= 1 << s;
                            *slot = (h.seq, h.batch_key);
                            max_seq = max_seq.max(h.seq);
                            if owner.is_none_or(|(q, _)| h.seq > q) {
                                owner = Some((h.seq, h.batch_key));
                            }
                        }
                        Err(SlotError::Empty) => {}
                        _ => self.counters.rebuild_corrupt += 1,
                    }
                }
                if let Some((seq, key)) = owner {
                    let present = (0..64)
                        .filter(|&s| valid & (1 << s) != 0 && slots[s].1 == key)
                        .fold(0u64, |m, s| m | 1 << s);
                    found.push((seq, e0 + i, key, present));
                }
            }
            e0 += n;
        }
        // Oldest first, so the newest ends at the head; a key found twice keeps its newest.
        found.sort_unstable();
        let mut used = vec![false; self.extents.len()];
        for &(_, e, key, present) in &found {
            if let Some(&old) = self.map.get(&key) {
                self.replacement.unlink(old);
                self.extents[old as usize] = Extent::EMPTY;
                used[old as usize] = false;
            }
            self.install(e, key, present);
            used[e as usize] = true;
        }
        self.free
            .extend((0..self.sb.extents).rev().filter(|&e| !used[e as usize]));
        self.next_seq = max_seq + 1;
        Ok(())
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

fn read_full(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "L2 file shorter than its superblock says",
                ))
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reserves the file's blocks (`posix_fallocate`), so writes never fail for space later.
fn preallocate(file: &File, bytes: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "L2 file too large"))?;
    // SAFETY: plain syscall on an open descriptor.
    let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
    if r == 0 {
        Ok(())
    } else if r == libc::EOPNOTSUPP || r == libc::EINVAL {
        file.set_len(bytes)
    } else {
        Err(io::Error::from_raw_os_error(r))
    }
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
mod tests {
    use super::*;

    /// The name TLV value of /t/c=<content>/seg=<segment>.
    fn name(content: u32, segment: u64) -> Vec<u8> {
        let mut v = vec![8, 1, b't', 8, 4];
        v.extend_from_slice(&content.to_be_bytes());
        v.push(0x32);
        v.push(8);
        v.extend_from_slice(&segment.to_be_bytes());
        v
    }

    fn key_of(l2: &L2File, content: u32, segment: u64) -> u64 {
        let n = name(content, segment);
        let c = ChunkName::parse(&n).unwrap();
        l2.batch_key(c.prefix, c.segment)
    }

    fn payload(content: u32, segment: u64) -> Vec<u8> {
        (0..1000u32)
            .map(|i| (i as u64 * 31 + u64::from(content) * 7 + segment) as u8)
            .collect()
    }

    fn config(dir: &Path, extents: u32) -> L2Config {
        L2Config {
            slot_bytes: 2048,
            batch: 4,
            queue_depth: 4,
            io_threads: 2,
            ..L2Config::new(dir.join("l2"), extents)
        }
    }

    /// Writes every chunk of `contents × segments`, waiting whenever the queue is full.
    fn fill(l2: &mut L2File, contents: u32, segments: u64) {
        for c in 0..contents {
            fill_one(l2, c, segments);
        }
    }

    /// Writes segments `0..segments` of content `c`.
    fn fill_one(l2: &mut L2File, c: u32, segments: u64) {
        for s in 0..segments {
            let n = name(c, s);
            let chunk = ChunkName::parse(&n).unwrap();
            loop {
                match l2.admit(&chunk, &payload(c, s)) {
                    Admit::Busy => assert!(l2.wait_one(|_| {})),
                    other => break assert_ne!(other, Admit::TooLarge),
                }
            }
        }
        l2.flush();
    }

    /// Reads chunk (c, s): the verified chunks of its batch, or None on a miss.
    /// (segment, name, payload) of a chunk read back.
    type Got = (u64, Vec<u8>, Vec<u8>);

    fn read(l2: &mut L2File, c: u32, s: u64) -> Option<Vec<Got>> {
        let n = name(c, s);
        match l2.read(&ChunkName::parse(&n).unwrap()) {
            ReadStart::Pending { ticket, .. } => {
                let mut out = None;
                while out.is_none() {
                    assert!(l2.wait_one(|b| {
                        assert_eq!(b.ticket, ticket);
                        out = Some(
                            b.chunks()
                                .map(|c| (c.segment, c.name.to_vec(), c.payload.to_vec()))
                                .collect(),
                        );
                    }));
                }
                out
            }
            ReadStart::Miss => None,
            ReadStart::Busy => panic!("busy with nothing in flight"),
        }
    }

    fn servable(l2: &mut L2File, contents: u32, segments: u64) -> u64 {
        let mut ok = 0;
        for c in 0..contents {
            for s in (0..segments).step_by(l2.sb.batch as usize) {
                if let Some(chunks) = read(l2, c, s) {
                    for (seg, n, p) in chunks {
                        assert_eq!(n, name(c, seg), "wrong name served");
                        assert_eq!(p, payload(c, seg), "wrong data served");
                        ok += 1;
                    }
                }
            }
        }
        ok
    }

    #[test]
    fn batches_round_trip_on_both_backends() {
        for backend in [IoBackend::Threads, IoBackend::Auto] {
            let dir = tempfile::tempdir().unwrap();
            let mut l2 = L2File::open(&L2Config {
                backend,
                ..config(dir.path(), 16)
            })
            .unwrap();
            fill(&mut l2, 3, 10); // 3 batches of 4 + one of 2 per content = 9 extents
            assert_eq!(l2.stored_chunks(), 30);
            let got = read(&mut l2, 1, 5).unwrap();
            let segs: Vec<u64> = got.iter().map(|c| c.0).collect();
            assert_eq!(segs, vec![4, 5, 6, 7], "one read returns the whole batch");
            assert_eq!(servable(&mut l2, 3, 10), 30);
            assert_eq!(read(&mut l2, 3, 0), None);
            assert_eq!(read(&mut l2, 0, 10), None);
            let k = *l2.counters();
            assert_eq!(k.checksum_failures, 0);
            assert_eq!(k.writes_submitted, 30);
            assert!(l2.index_bytes_per_chunk() <= 32.0);
        }
    }

    #[test]
    fn index_costs_at_most_32_bytes_per_chunk_from_batch_3() {
        let dir = tempfile::tempdir().unwrap();
        let per_chunk = |batch| {
            let l2 = L2File::open(&L2Config {
                batch,
                ..config(dir.path(), 4)
            })
            .unwrap();
            let b = l2.index_bytes_per_chunk();
            drop(l2);
            std::fs::remove_file(dir.path().join("l2")).unwrap();
            b
        };
        assert!(per_chunk(3) <= 32.0, "{}", per_chunk(3));
        assert!(per_chunk(10) <= 8.0, "{}", per_chunk(10));
    }

    #[test]
    fn direct_io_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        if !supports_direct(dir.path()) {
            eprintln!("O_DIRECT unsupported here; skipped");
            return;
        }
        let mut l2 = L2File::open(&L2Config {
            direct: true,
            ..config(dir.path(), 8)
        })
        .unwrap();
        fill(&mut l2, 2, 8);
        assert_eq!(servable(&mut l2, 2, 8), 16);
    }

    #[test]
    fn fifo_and_lru_evict_whole_batches_in_their_order() {
        for policy in [Replacement::Fifo, Replacement::Lru] {
            let dir = tempfile::tempdir().unwrap();
            let mut l2 = L2File::open(&L2Config {
                replacement: policy,
                ..config(dir.path(), 3)
            })
            .unwrap();
            fill(&mut l2, 3, 4); // contents 0, 1, 2: one extent each, L2 full
            assert!(read(&mut l2, 0, 0).is_some()); // LRU refreshes content 0
            fill(&mut l2, 4, 4); // content 3 evicts one batch
            assert_eq!(l2.counters().evictions, 1);
            let gone = if policy == Replacement::Fifo { 0 } else { 1 };
            assert_eq!(read(&mut l2, gone, 0), None, "{policy:?}");
            for c in (0..4).filter(|&c| c != gone) {
                assert_eq!(read(&mut l2, c, 2).map(|v| v.len()), Some(4), "{policy:?}");
            }
            assert_eq!(l2.order().len(), 3);
        }
    }

    #[test]
    fn decision_policies() {
        let dir = tempfile::tempdir().unwrap();
        let mut never = L2File::open(&L2Config {
            decision: Decision::Lcp { p: 0.0 },
            ..config(dir.path(), 8)
        })
        .unwrap();
        fill(&mut never, 2, 8);
        assert_eq!(never.stored_chunks(), 0);
        assert_eq!(never.counters().admit_rejected, 16);
        drop(never);

        let dir = tempfile::tempdir().unwrap();
        let mut half = L2File::open(&L2Config {
            decision: Decision::Lcp { p: 0.5 },
            ..config(dir.path(), 400)
        })
        .unwrap();
        fill(&mut half, 100, 4); // 100 batches, one decision each
        let kept = half.stored_chunks();
        assert_eq!(kept % 4, 0, "a decision covers the whole batch");
        assert!(
            (120..=280).contains(&kept),
            "{kept} of 400 chunks admitted at p = 0.5"
        );
        drop(half);

        let dir = tempfile::tempdir().unwrap();
        let mut two = L2File::open(&L2Config {
            decision: Decision::TwoLru { filter_batches: 16 },
            ..config(dir.path(), 8)
        })
        .unwrap();
        fill(&mut two, 1, 4);
        assert_eq!(two.stored_chunks(), 0, "first offer of a batch is filtered");
        // A later offer (after this batch's decision is used up) finds the key in the filter.
        fill(&mut two, 1, 4);
        assert_eq!(two.stored_chunks(), 4);
    }

    #[test]
    fn poll_max_bounds_the_completions_one_call_handles() {
        let dir = tempfile::tempdir().unwrap();
        let mut l2 = L2File::open(&config(dir.path(), 8)).unwrap();
        fill(&mut l2, 1, 12); // 3 batches
        for b in 0..3u64 {
            let n = name(0, b * 4);
            assert!(matches!(
                l2.read(&ChunkName::parse(&n).unwrap()),
                ReadStart::Pending { .. }
            ));
        }
        let mut batches = 0;
        let t0 = std::time::Instant::now();
        while batches < 3 {
            assert!(t0.elapsed() < std::time::Duration::from_secs(10));
            let n = l2.poll_max(1, |b| {
                assert_eq!(b.len(), 4);
                batches += 1;
            });
            assert!(n <= 1);
        }
        assert_eq!(l2.in_flight(), 0);
    }

    #[test]
    fn too_large_and_busy_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let mut l2 = L2File::open(&config(dir.path(), 64)).unwrap();
        let n = name(0, 0);
        let chunk = ChunkName::parse(&n).unwrap();
        assert_eq!(l2.admit(&chunk, &[0u8; 2048]), Admit::TooLarge);
        let mut busy = false;
        for s in 0..64 {
            let n = name(1, s);
            if l2.admit(&ChunkName::parse(&n).unwrap(), b"x") == Admit::Busy {
                busy = true;
                break;
            }
        }
        assert!(busy, "queue depth 4 must refuse the 5th write");
        assert!(l2.in_flight() <= 4);
        l2.flush();
    }

    #[test]
    fn corrupt_bytes_are_never_served_and_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), 8);
        let mut l2 = L2File::open(&cfg).unwrap();
        fill(&mut l2, 2, 8);
        // Flip a payload byte of content 1, segment 5 (extent of batch 1 of content 1).
        let sb = *l2.superblock();
        let key = key_of(&l2, 1, 5);
        let e = l2.map[&key];
        let off = sb.slot_offset(e, 1) + SLOT_HEADER_BYTES as u64 + 20 + 100;
        let f = OpenOptions::new().write(true).open(&cfg.path).unwrap();
        f.write_at(&[0x5a], off).unwrap();
        drop(f);
        let got = read(&mut l2, 1, 4).unwrap();
        let segs: Vec<u64> = got.iter().map(|c| c.0).collect();
        assert_eq!(
            segs,
            vec![4, 6, 7],
            "the corrupt slot is dropped, the rest served"
        );
        for (seg, n, p) in &got {
            assert_eq!((n, p), (&name(1, *seg), &payload(1, *seg)));
        }
        assert_eq!(l2.counters().checksum_failures, 1);
        assert!(!l2.contains(&ChunkName::parse(&name(1, 5)).unwrap()));
        assert_eq!(read(&mut l2, 1, 5), None, "dropped from the index");
        assert_eq!(servable(&mut l2, 2, 8), 15);
    }

    #[test]
    fn clean_restart_keeps_everything_and_crash_restart_rebuilds() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), 12);
        let mut l2 = L2File::open(&cfg).unwrap();
        fill(&mut l2, 4, 12); // 12 extents, full
        fill(&mut l2, 5, 12); // content 4 evicts 3 extents (FIFO: content 0)
        let before_order = l2.order();
        let stored = l2.stored_chunks();
        assert_eq!(stored, 48);
        l2.close().unwrap();
        assert!(cfg.index_path().exists());

        // Clean restart: index file loaded, order kept, everything servable.
        let mut l2 = L2File::open(&cfg).unwrap();
        assert!(l2.counters().loaded_index_file);
        assert!(!cfg.index_path().exists(), "the index is consumed at open");
        assert_eq!(l2.order(), before_order);
        assert_eq!(l2.counters().recovered_chunks, 48);
        let ok = servable(&mut l2, 5, 12);
        assert!(
            ok as f64 >= 0.95 * stored as f64,
            "{ok} of {stored} servable"
        );
        assert_eq!(ok, 48);

        // Crash (drop without close): no index file, so the next open scans. Corrupt one slot
        // header on disk first: the scan must drop it.
        fill_one(&mut l2, 6, 4); // one more batch (evicts the oldest)
        let sb = *l2.superblock();
        drop(l2);
        assert!(!cfg.index_path().exists());
        let f = OpenOptions::new().write(true).open(&cfg.path).unwrap();
        f.write_at(&[0xff, 0xff], sb.slot_offset(5, 2) + 40)
            .unwrap();
        drop(f);
        let mut l2 = L2File::open(&cfg).unwrap();
        let k = *l2.counters();
        assert!(!k.loaded_index_file);
        assert_eq!(k.rebuild_corrupt, 1);
        assert_eq!(k.recovered_chunks, 47);
        assert_eq!(servable(&mut l2, 7, 12), 47);
        assert_eq!(l2.counters().checksum_failures, 0);
        // The rebuilt FIFO order: content 6's batch is the newest.
        let newest = *l2.order().last().unwrap();
        assert_eq!(newest, key_of(&l2, 6, 0));

        // A damaged index file is ignored (rebuild instead).
        l2.close().unwrap();
        let mut idx = std::fs::read(cfg.index_path()).unwrap();
        idx[30] ^= 1;
        std::fs::write(cfg.index_path(), idx).unwrap();
        let mut l2 = L2File::open(&cfg).unwrap();
        assert!(!l2.counters().loaded_index_file);
        assert_eq!(servable(&mut l2, 7, 12), 47);
    }

    #[test]
    fn geometry_mismatch_and_bad_config_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), 8);
        L2File::open(&cfg).unwrap().close().unwrap();
        let e = L2File::open(&L2Config {
            batch: 8,
            ..cfg.clone()
        })
        .unwrap_err();
        assert!(e.to_string().contains("batch=4"), "{e}");
        let e = L2File::open(&L2Config {
            slot_bytes: 1000,
            ..cfg.clone()
        })
        .unwrap_err();
        assert!(e.to_string().contains("slot_bytes"), "{e}");
        let e = L2File::open(&L2Config {
            decision: Decision::Lcp { p: 1.5 },
            ..cfg.clone()
        })
        .unwrap_err();
        assert!(e.to_string().contains("LCP"), "{e}");
        std::fs::write(dir.path().join("junk"), [1u8; 8192]).unwrap();
        let e = L2File::open(&L2Config {
            path: dir.path().join("junk"),
            ..cfg
        })
        .unwrap_err();
        assert!(e.to_string().contains("not a Cascade L2 file"), "{e}");
    }
}
