//! What survives a restart: the superblock written at creation, the index written by a clean
//! [`L2File::close`] and loaded by the next open, and the scan that rebuilds it after a crash.

use super::*;

impl L2File {
    /// Waits for every operation in flight, then writes the index to
    /// [`L2Config::index_path`] (with a CRC32C) and syncs, so that the next open needs no
    /// scan. Dropping an `L2File` without `close` is like a crash. A store that a fault turned
    /// off ([`L2File::fault`]) writes no index: the next open scans it (and turns it off again
    /// if the fault persists).
    pub fn close(mut self) -> Result<(), L2Error> {
        self.flush();
        if self.fault.is_some() {
            return Ok(());
        }
        self.write_index()
    }

    /// Syncs the file, then writes the index to [`L2Config::index_path`] (with a CRC32C).
    pub(super) fn write_index(&mut self) -> Result<(), L2Error> {
        self.file.sync().map_err(io_err("cannot sync L2 file"))?;
        let mut out = Vec::with_capacity(32 + self.map.len() * 20 + 4);
        out.extend_from_slice(INDEX_MAGIC);
        out.extend_from_slice(&self.sb.file_id.to_le_bytes());
        out.extend_from_slice(&self.next_seq.to_le_bytes());
        out.extend_from_slice(&(self.map.len() as u32).to_le_bytes());
        // Tail (next victim) first, so the replacement order survives.
        let order: Vec<u32> = self.replacement.tail_to_head().collect();
        for &e in &order {
            let x = &self.extents[e as usize];
            out.extend_from_slice(&e.to_le_bytes());
            out.extend_from_slice(&x.key.to_le_bytes());
            out.extend_from_slice(&x.present.to_le_bytes());
        }
        // With a filter: the hashes of the names (see `members`).
        self.members_encode(&order, &mut out);
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        let path = self.config.index_path();
        self.file
            .write_index(&path, &out)
            .map_err(io_err(format!("cannot write index {}", path.display())))
    }

    /// The index, as `found` says: none (a new file), rebuilt by a scan, or loaded from the
    /// index file (rebuilt if there is no valid one).
    pub(super) fn load(&mut self, found: Found) -> Result<(), L2Error> {
        let path = self.config.index_path();
        match found {
            Found::Fresh => {
                self.free.extend((0..self.sb.extents).rev());
                let _ = self.file.remove_index(&path);
            }
            Found::Extended => {
                let _ = self.file.remove_index(&path);
                self.rebuild()?;
            }
            Found::Whole => {
                if self.load_index()? {
                    self.prefixes_scan()?;
                } else {
                    self.rebuild()?;
                }
            }
        }
        Ok(())
    }

    /// Loads and deletes the index file; `false` if there is no valid one.
    pub(super) fn load_index(&mut self) -> Result<bool, L2Error> {
        let path = self.config.index_path();
        let Some(bytes) = self.file.read_index(&path) else {
            return Ok(false);
        };
        // Whatever happens next, a crash from now on must rebuild.
        self.file
            .remove_index(&path)
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
        let records_end = count.checked_mul(20).and_then(|n| n.checked_add(28));
        let Some(records_end) = records_end.filter(|&end| end <= body) else {
            return Ok(false);
        };
        let mut seen = vec![false; self.extents.len()];
        let mut order = Vec::with_capacity(count);
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
            order.push(e);
            self.install(e, key, present);
        }
        // Past the records: the names' hashes of a filter, or nothing.
        let rest = &bytes[records_end..body];
        if !self.members_decode(&order, rest) {
            self.reset_index();
            return Ok(false);
        }
        self.next_seq = le64(&bytes, 16);
        self.free
            .extend((0..self.sb.extents).rev().filter(|&e| !seen[e as usize]));
        self.counters.loaded_index_file = true;
        Ok(true)
    }

    pub(super) fn reset_index(&mut self) {
        self.map.clear();
        self.extents.fill(Extent::EMPTY);
        self.free.clear();
        self.replacement.clear();
        self.prefixes.clear();
    }

    /// Installs `e` as the newest extent holding `key`.
    pub(super) fn install(&mut self, e: u32, key: u64, present: u64) {
        let x = &mut self.extents[e as usize];
        x.key = key;
        x.present = present;
        x.in_use = true;
        self.map.insert(key, e);
        self.replacement.push_head(e);
    }

    /// Rebuilds the index by reading every slot header (after a crash).
    pub(super) fn rebuild(&mut self) -> Result<(), L2Error> {
        self.reset_index();
        let per = REBUILD_EXTENTS_PER_READ.min(self.sb.extents);
        let ebytes = self.sb.extent_bytes() as usize;
        let sbytes = self.sb.slot_bytes as usize;
        let batch = u64::from(self.sb.batch);
        let mut buf = AlignedBuf::new(ebytes * per as usize);
        // (max seq, extent, key, present) of every extent with a live owner.
        let mut found: Vec<(u64, u32, u64, u64, [u64; PREFIX_LEVELS])> = Vec::new();
        let mut max_seq = 0;
        let mut e0 = 0;
        while e0 < self.sb.extents {
            let n = per.min(self.sb.extents - e0);
            let len = n as usize * ebytes;
            self.file
                .read_full(&mut buf.as_mut_slice()[..len], self.sb.extent_offset(e0))
                .map_err(io_err("cannot scan L2 file"))?;
            for i in 0..n {
                let base = i as usize * ebytes;
                // Owner: the key of the newest valid slot; older slots are a previous batch.
                let mut owner: Option<(u64, u64)> = None; // (seq, key)
                let mut owner_prefixes = [0u64; PREFIX_LEVELS];
                let mut slots = [(0u64, 0u64); 64]; // (seq, key) of valid slots
                let mut valid = 0u64;
                for (s, slot) in slots.iter_mut().enumerate().take(self.sb.batch as usize) {
                    let at = base + s * sbytes;
                    match SlotHeader::read(&buf.as_slice()[at..at + sbytes]) {
                        Ok((h, name, _)) if h.segment % batch == s as u64 => {
                            self.member_written(e0 + i, s as u32, name);
                            valid |= 1 << s;
                            *slot = (h.seq, h.batch_key);
                            max_seq = max_seq.max(h.seq);
                            if owner.is_none_or(|(q, _)| h.seq > q) {
                                owner = Some((h.seq, h.batch_key));
                                owner_prefixes = ChunkName::parse(name)
                                    .map_or([0; PREFIX_LEVELS], |n| self.prefix_hashes(n.prefix));
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
                    found.push((seq, e0 + i, key, present, owner_prefixes));
                }
            }
            e0 += n;
        }
        // Oldest first, so the newest ends at the head; a key found twice keeps its newest.
        found.sort_unstable();
        let mut used = vec![false; self.extents.len()];
        for &(_, e, key, present, prefixes) in &found {
            if let Some(&old) = self.map.get(&key) {
                self.replacement.unlink(old);
                self.prefixes.unlink(old);
                self.extents[old as usize] = Extent::EMPTY;
                used[old as usize] = false;
            }
            self.install(e, key, present);
            self.prefixes.link(e, prefixes);
            used[e as usize] = true;
        }
        self.free
            .extend((0..self.sb.extents).rev().filter(|&e| !used[e as usize]));
        self.next_seq = max_seq + 1;
        Ok(())
    }
}

pub(super) fn read_full(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
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
pub(super) fn preallocate(file: &File, bytes: u64) -> io::Result<()> {
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

/// What [`superblock`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// A new superblock: the file was empty, held no superblock yet (a crash while it was
    /// created), or was shorter than a superblock; every extent is free.
    Fresh,
    /// A superblock, and the file as long as it says.
    Whole,
    /// A superblock, but the file was shorter than its geometry (truncated): it was extended
    /// back, and the index must be rebuilt from the slots (an index file would name slots that
    /// are gone).
    Extended,
}

/// The superblock of the L2 file just opened as `file`, and what was found: a new one (random
/// hash key and file id) written to a file that has none, which is then [`Found::Fresh`], or
/// the existing one, which must have the geometry of `want`.
///
/// Every state a crash while creating the file can leave opens: an empty file, a file shorter
/// than a superblock or whose superblock is still zeros (preallocated, superblock not yet
/// written) is created again; a file shorter than its superblock says is extended back. A
/// block device without a superblock gets one; one with a superblock is used as it is.
pub(super) fn superblock(
    file: &Backing,
    path: &Path,
    want: Superblock,
) -> Result<(Superblock, Found), L2Error> {
    let mut block = AlignedBuf::new(SUPERBLOCK_BYTES as usize);
    let (len, is_blockdev) = file
        .len()
        .map_err(io_err(format!("cannot stat {}", path.display())))?;
    let fresh = len < SUPERBLOCK_BYTES || {
        file.read_full(block.as_mut_slice(), 0)
            .map_err(io_err(format!(
                "cannot read superblock of {}",
                path.display()
            )))?;
        let b = &block.as_slice()[..SUPERBLOCK_BYTES as usize];
        b.iter().all(|&x| x == 0)
            || (is_blockdev && Superblock::decode(b) == Err(LayoutError::NotAnL2File))
    };
    if fresh {
        return create(file, path, want, is_blockdev, &mut block).map(|sb| (sb, Found::Fresh));
    }
    let sb = Superblock::decode(block.as_slice())?;
    if (sb.slot_bytes, sb.batch, sb.extents) != (want.slot_bytes, want.batch, want.extents) {
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
    if len >= sb.file_bytes() {
        return Ok((sb, Found::Whole));
    }
    if is_blockdev {
        return Err(L2Error::Config(format!(
            "{} holds {len} bytes, its superblock says {}",
            path.display(),
            sb.file_bytes()
        )));
    }
    file.preallocate(sb.file_bytes())
        .map_err(io_err(format!("cannot extend {}", path.display())))?;
    Ok((sb, Found::Extended))
}

/// (bytes, is a block device): a block device's size is not in its metadata.
pub(super) fn file_len(file: &File) -> io::Result<(u64, bool)> {
    use std::io::{Seek as _, SeekFrom};
    use std::os::unix::fs::FileTypeExt;
    let meta = file.metadata()?;
    if meta.file_type().is_block_device() {
        // `Seek` on `&File` moves the shared offset, which positional I/O never uses.
        let mut f = file;
        return Ok((f.seek(SeekFrom::End(0))?, true));
    }
    Ok((meta.len(), false))
}

/// Writes a new superblock (random hash key and file id, the geometry of `want`) into a file
/// preallocated first, so that a crash in between leaves a file of zeros, created again at
/// the next open.
fn create(
    file: &Backing,
    path: &Path,
    want: Superblock,
    is_blockdev: bool,
    block: &mut AlignedBuf,
) -> Result<Superblock, L2Error> {
    let mut rand = [0u8; 24];
    file.random(&mut rand)
        .map_err(io_err("cannot read /dev/urandom"))?;
    let mut hash_key = [0u8; 16];
    hash_key.copy_from_slice(&rand[..16]);
    let sb = Superblock {
        hash_key,
        file_id: le64(&rand, 16),
        ..want
    };
    if !is_blockdev {
        file.preallocate(sb.file_bytes())
            .map_err(io_err(format!("cannot preallocate {}", path.display())))?;
    }
    sb.encode(block.as_mut_slice());
    file.write_all_at(&block.as_slice()[..SUPERBLOCK_BYTES as usize], 0)
        .map_err(io_err(format!(
            "cannot write superblock of {}",
            path.display()
        )))?;
    Ok(sb)
}
