//! A simulated disk for the L2 store, for the router's deterministic simulation (and tests):
//! an in-memory file image whose operations complete only when the simulation steps it, with
//! faults chosen by a seed.
//!
//! **Simulation API.** Nothing here is used by a real store: an [`crate::L2File`] uses a
//! [`SimDisk`] only when its configuration names one ([`crate::L2Config::disk`]); otherwise it
//! opens its file and does its I/O through io_uring or threads as before, and the only cost to
//! those backends is one more arm in the match that already dispatches every operation.
//!
//! - The image ([`SimDisk::image_len`]) stands for the L2 file; an optional second byte vector
//!   stands for its index file (written by a clean close, loaded and deleted at open). The
//!   store's real open path runs against them: superblock, index load, or the rebuild scan.
//! - An operation the store submits waits in the disk until [`SimDisk::step`] completes it
//!   (no threads, no clock): each step completes a few operations whose delay has passed, in
//!   submission order or, with reordering, in any order. A store that must wait (close,
//!   benchmarks) gets the next operation completed at once.
//! - Faults ([`DiskFaults`], rates per mille, drawn from the disk's own seed): reads that fail
//!   (`EIO`), writes that fail (`EIO` or `ENOSPC`, nothing written), torn writes (a prefix of
//!   the slot written, success reported) and lost writes (nothing written, success reported),
//!   bit flips in the stored data, delayed and reordered completions, and
//!   [`SimDisk::crash`]: every pending write is lost, torn or written whole, every pending read
//!   fails, and every operation fails until the store is opened again.
//! - Faults on the store's synchronous open path ([`DiskFaults::open_error_pm`], once the
//!   simulation arms them with [`SimDisk::arm_open_faults`]): reads of the superblock, of
//!   the index file or of the rebuild scan that fail (`EIO`) or come back short, writes of a
//!   new superblock that fail (`ENOSPC`, `EROFS`) or are torn, a preallocation without space,
//!   a sync that fails, an index file that is lost, damaged or not deleted; and at a crash,
//!   sometimes, a file left short (the store extends it back and rebuilds) or a torn
//!   superblock (the store cannot open it and stays off).
//! - [`SimDisk::now_ms`]: the store's clock (slot write times, freshness) is the simulated
//!   one.
//!
//! Checks for the simulation: [`read_back`] reads a held chunk's slot straight from the image
//! through the store's own verification, and [`plant`] writes a slot that passes every check
//! of the store but carries other bytes (a test that the simulation's checker catches it).

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::io::{IoDone, IoKind, IoOp};
use crate::l2::L2File;
use crate::layout::{ChunkName, SlotHeader, SUPERBLOCK_BYTES};

/// What the simulated clock's 0 stands for, in ms since the Unix epoch (slot write times must
/// be non-zero to count as known).
pub const SIM_EPOCH_MS: u64 = 1_700_000_000_000;

/// Fault rates of a [`SimDisk`]: per mille of operations (bit flips: of steps).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskFaults {
    /// Reads that fail with `EIO`.
    pub read_error_pm: u32,
    /// Writes that fail (`EIO` or `ENOSPC`, one each in turn), writing nothing.
    pub write_error_pm: u32,
    /// Writes that write only a prefix of their bytes but report success.
    pub torn_write_pm: u32,
    /// Writes that write nothing but report success.
    pub lost_write_pm: u32,
    /// Steps that flip one bit of the stored data (past the superblock).
    pub bit_flip_pm: u32,
    /// Complete ready operations in any order (else in submission order).
    pub reorder: bool,
    /// An operation waits up to this many steps before it can complete.
    pub max_delay_steps: u32,
    /// Per mille of the open path's operations that fail or lose their bytes, and of crashes
    /// that leave the file short or its superblock torn (from [`SimDisk::arm_open_faults`]).
    pub open_error_pm: u32,
}

impl DiskFaults {
    /// No fault: operations complete in order, one step after submission at most.
    pub const NONE: DiskFaults = DiskFaults {
        read_error_pm: 0,
        write_error_pm: 0,
        torn_write_pm: 0,
        lost_write_pm: 0,
        bit_flip_pm: 0,
        reorder: false,
        max_delay_steps: 0,
        open_error_pm: 0,
    };
}

/// Faults a [`SimDisk`] injected, by kind, and what it did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskCounts {
    /// Reads completed (including failed ones).
    pub reads: u64,
    /// Writes completed (including failed ones).
    pub writes: u64,
    /// Reads failed with `EIO`.
    pub read_errors: u64,
    /// Writes failed with `EIO`.
    pub write_eio: u64,
    /// Writes failed with `ENOSPC`.
    pub write_enospc: u64,
    /// Torn writes (a prefix written, success reported).
    pub torn_writes: u64,
    /// Lost writes (nothing written, success reported).
    pub lost_writes: u64,
    /// Bits flipped in the stored data.
    pub bit_flips: u64,
    /// Operations completed ahead of an older ready one.
    pub reordered: u64,
    /// Operations given a delay.
    pub delayed: u64,
    /// Crashes.
    pub crashes: u64,
    /// Writes pending at a crash that were lost.
    pub crash_lost: u64,
    /// Writes pending at a crash that were torn.
    pub crash_torn: u64,
    /// Operations that failed because the disk had crashed (before the store reopened).
    pub after_crash: u64,
    /// Operations of the open path that failed (`EIO`, `ENOSPC`, `EROFS`, a short read).
    pub open_errors: u64,
    /// Operations of the open path that reported success but lost or tore their bytes (a
    /// torn superblock write, an index file lost, damaged or not deleted).
    pub open_lost: u64,
    /// Crashes that left the file short.
    pub truncated: u64,
    /// Crashes that tore the superblock.
    pub torn_superblocks: u64,
}

impl DiskCounts {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &DiskCounts) {
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_errors += o.read_errors;
        self.write_eio += o.write_eio;
        self.write_enospc += o.write_enospc;
        self.torn_writes += o.torn_writes;
        self.lost_writes += o.lost_writes;
        self.bit_flips += o.bit_flips;
        self.reordered += o.reordered;
        self.delayed += o.delayed;
        self.crashes += o.crashes;
        self.crash_lost += o.crash_lost;
        self.crash_torn += o.crash_torn;
        self.after_crash += o.after_crash;
        self.open_errors += o.open_errors;
        self.open_lost += o.open_lost;
        self.truncated += o.truncated;
        self.torn_superblocks += o.torn_superblocks;
    }
}

struct Pending {
    op: IoOp,
    due: u64,
}

struct Disk {
    image: Vec<u8>,
    index: Option<Vec<u8>>,
    pending: VecDeque<Pending>,
    done: VecDeque<IoDone>,
    down: bool,
    steps: u64,
    rng: u64,
    faults: DiskFaults,
    counts: DiskCounts,
    clock: Arc<AtomicU64>,
    /// The next failed write is ENOSPC (else EIO).
    enospc: bool,
    /// Faults on the open path are on ([`SimDisk::arm_open_faults`]).
    open_armed: bool,
    /// Tests: the open path's reads that succeed before one fails.
    fail_read_in: Option<u32>,
}

impl Disk {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    fn per_mille(&mut self, pm: u32) -> bool {
        pm > 0 && self.below(1000) < u64::from(pm)
    }

    /// Whether this operation of the open path is faulted.
    fn open_fault(&mut self) -> bool {
        self.open_armed && self.per_mille(self.faults.open_error_pm)
    }

    /// An open-path operation failed with `errno`.
    fn open_error(&mut self, errno: i32) -> io::Error {
        self.counts.open_errors += 1;
        io::Error::from_raw_os_error(errno)
    }

    /// At a crash, sometimes: the file left short (at a random length), or the superblock
    /// torn (zeros from a random byte of it on: all zeros is a file created again).
    fn crash_damage(&mut self) {
        if !self.open_fault() {
            return;
        }
        if self.below(4) > 0 {
            self.counts.truncated += 1;
            let len = self.below(self.image.len() as u64 + 1) as usize;
            self.image.truncate(len);
        } else {
            self.counts.torn_superblocks += 1;
            let sb = (SUPERBLOCK_BYTES as usize).min(self.image.len());
            let from = self.below(sb as u64) as usize;
            self.image[from..sb].fill(0);
        }
    }

    /// Carries out `op` on the image, with the faults its draw gives.
    fn complete(&mut self, mut op: IoOp) -> IoDone {
        let start = op.offset as usize;
        let end = start.saturating_add(op.len).min(self.image.len());
        let len = end.saturating_sub(start);
        let result = if self.down {
            self.counts.after_crash += 1;
            Err(io::Error::from_raw_os_error(libc::EIO))
        } else {
            match op.kind {
                IoKind::Read => self.read(&mut op, start, len),
                IoKind::Write => self.write(&op, start, len),
            }
        };
        IoDone { op, result }
    }

    fn read(&mut self, op: &mut IoOp, start: usize, len: usize) -> io::Result<usize> {
        self.counts.reads += 1;
        if self.per_mille(self.faults.read_error_pm) {
            self.counts.read_errors += 1;
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        op.buf.as_mut_slice()[..len].copy_from_slice(&self.image[start..start + len]);
        Ok(len)
    }

    fn write(&mut self, op: &IoOp, start: usize, len: usize) -> io::Result<usize> {
        self.counts.writes += 1;
        let f = self.faults;
        let written = if self.per_mille(f.write_error_pm) {
            self.enospc = !self.enospc;
            let errno = if self.enospc {
                self.counts.write_enospc += 1;
                libc::ENOSPC
            } else {
                self.counts.write_eio += 1;
                libc::EIO
            };
            return Err(io::Error::from_raw_os_error(errno));
        } else if self.per_mille(f.torn_write_pm) {
            self.counts.torn_writes += 1;
            self.below(len as u64) as usize
        } else if self.per_mille(f.lost_write_pm) {
            self.counts.lost_writes += 1;
            0
        } else {
            len
        };
        self.image[start..start + written].copy_from_slice(&op.buf.as_slice()[..written]);
        Ok(len)
    }

    fn flip_bit(&mut self) {
        let from = SUPERBLOCK_BYTES as usize;
        if self.image.len() > from {
            let at = from + self.below((self.image.len() - from) as u64) as usize;
            let bit = self.below(8);
            self.image[at] ^= 1 << bit;
            self.counts.bit_flips += 1;
        }
    }
}

/// A simulated disk holding one L2 file (see the [module docs](self)). Cloning gives another
/// handle on the same disk.
#[derive(Clone)]
pub struct SimDisk {
    inner: Arc<Mutex<Disk>>,
}

impl PartialEq for SimDisk {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl fmt::Debug for SimDisk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.lock();
        f.debug_struct("SimDisk")
            .field("image_bytes", &d.image.len())
            .field("pending", &d.pending.len())
            .field("done", &d.done.len())
            .field("down", &d.down)
            .finish()
    }
}

impl SimDisk {
    /// An empty disk (the store creates its file on it at first open), its faults drawn from
    /// `seed`, its clock `clock` (ms from [`SIM_EPOCH_MS`]).
    pub fn new(seed: u64, faults: DiskFaults, clock: Arc<AtomicU64>) -> Self {
        SimDisk {
            inner: Arc::new(Mutex::new(Disk {
                image: Vec::new(),
                index: None,
                pending: VecDeque::new(),
                done: VecDeque::new(),
                down: false,
                steps: 0,
                rng: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
                faults,
                counts: DiskCounts::default(),
                clock,
                enospc: false,
                open_armed: false,
                fail_read_in: None,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Disk> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One step of the disk: completes up to three operations whose delay has passed (the
    /// store drains them at its next poll), and may flip a bit. Returns how many completed.
    pub fn step(&self) -> usize {
        let mut g = self.lock();
        let d = &mut *g;
        d.steps += 1;
        if d.per_mille(d.faults.bit_flip_pm) {
            d.flip_bit();
        }
        let want = 1 + d.below(3) as usize;
        let mut n = 0;
        while n < want {
            let now = d.steps;
            let ready: Vec<usize> = (0..d.pending.len())
                .filter(|&i| d.pending[i].due <= now)
                .collect();
            if ready.is_empty() {
                break;
            }
            let pick = if d.faults.reorder {
                ready[d.below(ready.len() as u64) as usize]
            } else {
                ready[0]
            };
            if pick != ready[0] {
                d.counts.reordered += 1;
            }
            let Some(p) = d.pending.remove(pick) else {
                break;
            };
            let done = d.complete(p.op);
            d.done.push_back(done);
            n += 1;
        }
        n
    }

    /// A crash: each pending write is lost, torn or written whole (one chance in three each),
    /// and every pending operation, and every later one until a store opens this disk again,
    /// completes with `EIO` (the crashed store drains and is off; the simulation then opens a
    /// new one).
    pub fn crash(&self) {
        let mut g = self.lock();
        let d = &mut *g;
        d.counts.crashes += 1;
        let pending: Vec<Pending> = d.pending.drain(..).collect();
        for p in pending {
            match p.op.kind {
                IoKind::Write => {
                    let (start, len) = (p.op.offset as usize, p.op.len);
                    let len = len.min(d.image.len().saturating_sub(start));
                    let written = match d.below(3) {
                        0 => {
                            d.counts.crash_lost += 1;
                            0
                        }
                        1 => {
                            d.counts.crash_torn += 1;
                            d.below(len as u64) as usize
                        }
                        _ => len,
                    };
                    d.image[start..start + written]
                        .copy_from_slice(&p.op.buf.as_slice()[..written]);
                }
                IoKind::Read => {}
            }
            // The crashed store sees every operation fail (so that it drains).
            d.done.push_back(IoDone {
                op: p.op,
                result: Err(io::Error::from_raw_os_error(libc::EIO)),
            });
        }
        d.crash_damage();
        d.down = true;
    }

    /// Turns the open path's faults on ([`DiskFaults::open_error_pm`]): the simulation does
    /// once its stores have opened the first time.
    pub fn arm_open_faults(&self) {
        self.lock().open_armed = true;
    }

    /// Faults injected so far, by kind.
    pub fn counts(&self) -> DiskCounts {
        self.lock().counts
    }

    /// Operations submitted and not yet drained by the store (pending or completed).
    pub fn queued(&self) -> usize {
        let d = self.lock();
        d.pending.len() + d.done.len()
    }

    /// The image's length in bytes (the L2 file's).
    pub fn image_len(&self) -> usize {
        self.lock().image.len()
    }

    /// Whether an index file is on the disk.
    pub fn has_index(&self) -> bool {
        self.lock().index.is_some()
    }

    /// The store's clock: [`SIM_EPOCH_MS`] plus the simulated clock.
    pub fn now_ms(&self) -> u64 {
        SIM_EPOCH_MS + self.lock().clock.load(Ordering::Relaxed)
    }

    /// The file's image and its index file as they are now (a store closed on this disk left
    /// them), for starting other stores on the same bytes with [`SimDisk::load`].
    pub fn files(&self) -> (Vec<u8>, Option<Vec<u8>>) {
        let d = self.lock();
        (d.image.clone(), d.index.clone())
    }

    /// Replaces the file's image and its index file (`None`: no index file) with the given
    /// bytes, dropping whatever was in flight: a store opened next finds exactly these, as it
    /// would find a file and an index on a real disk (the fuzzing of the open path starts each
    /// store on damaged bytes so, without a file system under it).
    pub fn load(&self, image: Vec<u8>, index: Option<Vec<u8>>) {
        let mut d = self.lock();
        d.image = image;
        d.index = index;
        d.pending.clear();
        d.done.clear();
    }

    // ------------------------------------------------------------ the store's side (crate)

    /// A store opens the disk: whatever the previous store left in flight is gone, and
    /// operations work again.
    pub(crate) fn opened(&self) {
        let mut d = self.lock();
        d.pending.clear();
        d.done.clear();
        d.down = false;
    }

    pub(crate) fn submit(&self, op: IoOp) {
        let mut g = self.lock();
        let d = &mut *g;
        let max = u64::from(d.faults.max_delay_steps);
        let delay = d.below(max + 1);
        if delay > 0 {
            d.counts.delayed += 1;
        }
        let due = d.steps + delay.max(1);
        d.pending.push_back(Pending { op, due });
    }

    pub(crate) fn try_complete(&self) -> Option<IoDone> {
        self.lock().done.pop_front()
    }

    /// The next completion, completing the oldest pending operation now if none is ready.
    pub(crate) fn wait(&self) -> Option<IoDone> {
        let mut d = self.lock();
        if let Some(done) = d.done.pop_front() {
            return Some(done);
        }
        let p = d.pending.pop_front()?;
        Some(d.complete(p.op))
    }

    pub(crate) fn len(&self) -> u64 {
        self.lock().image.len() as u64
    }

    /// Preallocation: fails with `ENOSPC` (nothing changed) when faulted.
    pub(crate) fn set_len(&self, bytes: u64) -> io::Result<()> {
        let mut d = self.lock();
        if d.open_fault() {
            return Err(d.open_error(libc::ENOSPC));
        }
        d.image.resize(bytes as usize, 0);
        Ok(())
    }

    /// Synchronous read for the open path: faulted, it fails with `EIO` or comes back short.
    pub(crate) fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let mut d = self.lock();
        if let Some(n) = d.fail_read_in {
            d.fail_read_in = n.checked_sub(1);
            if n == 0 {
                return Err(d.open_error(libc::EIO));
            }
        }
        if d.open_fault() {
            return Err(if d.below(2) == 0 {
                d.open_error(libc::EIO)
            } else {
                d.counts.open_errors += 1;
                short_read()
            });
        }
        d.copy_out(buf, offset)
    }

    /// Synchronous write for the open path (a new superblock): faulted, it fails (`ENOSPC`
    /// or `EROFS`, nothing written) or is torn (a prefix written, success reported).
    pub(crate) fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut d = self.lock();
        let mut len = buf.len();
        if d.open_fault() {
            match d.below(3) {
                0 => return Err(d.open_error(libc::ENOSPC)),
                1 => return Err(d.open_error(libc::EROFS)),
                _ => {
                    d.counts.open_lost += 1;
                    len = d.below(len as u64) as usize;
                }
            }
        }
        d.copy_in(&buf[..len], offset);
        Ok(())
    }

    /// Makes writes durable: faulted, fails with `EIO`.
    pub(crate) fn sync(&self) -> io::Result<()> {
        let mut d = self.lock();
        if d.open_fault() {
            return Err(d.open_error(libc::EIO));
        }
        Ok(())
    }

    pub(crate) fn random(&self, out: &mut [u8]) {
        let mut g = self.lock();
        let d = &mut *g;
        for chunk in out.chunks_mut(8) {
            let x = d.next().to_le_bytes();
            chunk.copy_from_slice(&x[..chunk.len()]);
        }
    }

    /// The index file: faulted, it is lost (not found) or comes back with a byte changed.
    pub(crate) fn index(&self) -> Option<Vec<u8>> {
        let mut d = self.lock();
        let mut index = d.index.clone()?;
        if d.open_fault() {
            d.counts.open_lost += 1;
            if index.is_empty() || d.below(2) == 0 {
                return None;
            }
            let at = d.below(index.len() as u64) as usize;
            index[at] ^= 1 + d.below(255) as u8;
        }
        Some(index)
    }

    /// Writes (`Some`) or deletes (`None`) the index file: faulted, it fails (`EROFS` or
    /// `EIO`) or reports success having done nothing (a write lost, a deletion that did not
    /// happen: the old index file stays).
    pub(crate) fn set_index(&self, index: Option<Vec<u8>>) -> io::Result<()> {
        let mut d = self.lock();
        if d.open_fault() {
            return match d.below(2) {
                0 => Err(d.open_error(if index.is_some() {
                    libc::EROFS
                } else {
                    libc::EIO
                })),
                _ => {
                    d.counts.open_lost += 1;
                    Ok(())
                }
            };
        }
        d.index = index;
        Ok(())
    }

    /// Tests: the open path's next `n` reads succeed, the one after fails with `EIO`.
    #[cfg(test)]
    pub(crate) fn fail_open_read_after(&self, n: u32) {
        self.lock().fail_read_in = Some(n);
    }

    /// Tests: changes a byte of the image.
    #[cfg(test)]
    pub(crate) fn poke(&self, offset: u64, xor: u8) {
        self.lock().image[offset as usize] ^= xor;
    }

    /// The image's bytes at `offset`, without a fault (the checker's own view).
    fn peek(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.lock().copy_out(buf, offset)
    }
}

impl Disk {
    fn copy_out(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = offset as usize;
        match self.image.get(start..start + buf.len()) {
            Some(b) => {
                buf.copy_from_slice(b);
                Ok(())
            }
            None => Err(short_read()),
        }
    }

    fn copy_in(&mut self, buf: &[u8], offset: u64) {
        let end = offset as usize + buf.len();
        if self.image.len() < end {
            self.image.resize(end, 0);
        }
        self.image[offset as usize..end].copy_from_slice(buf);
    }
}

fn short_read() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "L2 file shorter than its superblock says",
    )
}

/// The hashes of the name prefixes `l2`'s prefix index has a list for: with a prefix filter
/// ([`L2File::open_with_filters`]), each must be in it, once.
pub fn linked_prefixes(l2: &L2File) -> Vec<u64> {
    l2.linked_prefixes()
}

/// Forgets the reads a previous store left in flight at [`L2File::reopen`], as a store that
/// did not hand them out would: the lookups waiting for them would wait for ever. For tests
/// of the simulation's checker.
pub fn forget_orphans(l2: &mut L2File) {
    l2.forget_orphans();
}

/// What [`read_back`] found for a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadBack {
    /// The store's index does not hold the name.
    NotHeld,
    /// Held, but its slot fails the store's checks: a read would be a miss.
    Miss,
    /// Held, and its slot passes every check: a read would serve these bytes.
    Served(Vec<u8>),
}

/// Reads the slot of `name` straight from `disk`'s image, as a batch read of `l2` would, and
/// says what the store would serve for it (no I/O through the store, no change to its index).
pub fn read_back(l2: &L2File, disk: &SimDisk, name: &ChunkName<'_>) -> ReadBack {
    let Some((e, slot)) = l2.held_slot(name) else {
        return ReadBack::NotHeld;
    };
    let sb = l2.superblock();
    let mut buf = vec![0u8; sb.slot_bytes as usize];
    if disk.peek(&mut buf, sb.slot_offset(e, slot)).is_err() {
        return ReadBack::Miss;
    }
    let key = l2.batch_key(name.prefix, name.segment);
    match l2.verify_slot(&buf, key, slot) {
        Ok(h) => {
            let at = crate::layout::SLOT_HEADER_BYTES + usize::from(h.name_len);
            ReadBack::Served(buf[at..at + h.payload_len as usize].to_vec())
        }
        Err(_) => ReadBack::Miss,
    }
}

/// The extent and slot `l2`'s index holds `name` in, if it holds it (and no fault turned it
/// off).
pub fn held_slot(l2: &L2File, name: &ChunkName<'_>) -> Option<(u32, u32)> {
    l2.held_slot(name)
}

/// Writes into `disk`'s image, in the slot `l2` holds `name` in, a slot that passes every
/// check of the store (checksum, batch key, position, the name in the header) but carries
/// `payload` instead of what was stored: what a buggy writer or a crafted file could leave.
/// For tests of the simulation's checker; false if `l2` does not hold `name`.
pub fn plant(l2: &L2File, disk: &SimDisk, name: &ChunkName<'_>, payload: &[u8]) -> bool {
    let Some((e, slot)) = l2.held_slot(name) else {
        return false;
    };
    let sb = l2.superblock();
    let mut buf = vec![0u8; sb.slot_bytes as usize];
    let header = SlotHeader {
        batch_key: l2.batch_key(name.prefix, name.segment),
        segment: name.segment,
        seq: 1,
        name_len: name.name.len() as u16,
        payload_len: payload.len() as u32,
    };
    header.write_stamped(&mut buf, name.name, payload, disk.now_ms());
    disk.lock().copy_in(&buf, sb.slot_offset(e, slot));
    true
}

#[cfg(test)]
mod tests;
