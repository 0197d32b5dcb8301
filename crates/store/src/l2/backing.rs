//! What an [`L2File`] stands on: its file (or block device), or a simulated disk
//! ([`crate::sim::SimDisk`]) for the router's deterministic simulation. The open path
//! (superblock, index file, rebuild scan) and the index written at close go through
//! [`Backing`]; the store's reads and writes go through its [`Io`], which the backing starts.

use super::*;
use crate::sim::SimDisk;

/// The L2 file, or the simulated disk that stands for it.
pub(crate) enum Backing {
    /// A real file or block device.
    File(Arc<File>),
    /// A simulated disk (its image and its index file).
    Sim(SimDisk),
}

impl Backing {
    /// Opens the backing `config` names: its simulated disk, or its file.
    pub(super) fn open(config: &L2Config) -> Result<Self, L2Error> {
        if let Some(d) = &config.disk {
            d.opened();
            return Ok(Backing::Sim(d.clone()));
        }
        let mut opts = OpenOptions::new();
        opts.read(true).write(true).create(true);
        if config.direct {
            opts.custom_flags(libc::O_DIRECT);
        }
        let path = &config.path;
        let file = opts
            .open(path)
            .map_err(io_err(format!("cannot open L2 file {}", path.display())))?;
        Ok(Backing::File(Arc::new(file)))
    }

    /// Starts the I/O engine on the backing.
    pub(super) fn io(&self, config: &L2Config) -> io::Result<Io> {
        match self {
            Backing::File(f) => Io::new(
                f.clone(),
                config.backend,
                config.queue_depth,
                config.io_threads,
            ),
            Backing::Sim(d) => Ok(Io::sim(d.clone(), config.queue_depth)),
        }
    }

    /// Fills `buf` from `offset` (an error if the file is shorter).
    pub(super) fn read_full(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        match self {
            Backing::File(f) => persist::read_full(f, buf, offset),
            Backing::Sim(d) => d.read_at(buf, offset),
        }
    }

    /// Writes all of `buf` at `offset`.
    pub(super) fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        match self {
            Backing::File(f) => f.write_all_at(buf, offset),
            Backing::Sim(d) => d.write_at(buf, offset),
        }
    }

    /// (bytes, is a block device).
    pub(super) fn len(&self) -> io::Result<(u64, bool)> {
        match self {
            Backing::File(f) => persist::file_len(f),
            Backing::Sim(d) => Ok((d.len(), false)),
        }
    }

    /// Reserves `bytes` for the file.
    pub(super) fn preallocate(&self, bytes: u64) -> io::Result<()> {
        match self {
            Backing::File(f) => persist::preallocate(f, bytes),
            Backing::Sim(d) => d.set_len(bytes),
        }
    }

    /// Makes what was written durable.
    pub(super) fn sync(&self) -> io::Result<()> {
        match self {
            Backing::File(f) => f.sync_all(),
            Backing::Sim(d) => d.sync(),
        }
    }

    /// Random bytes for a new superblock (the simulated disk's come from its seed).
    pub(super) fn random(&self, out: &mut [u8]) -> io::Result<()> {
        match self {
            Backing::File(_) => File::open("/dev/urandom").and_then(|mut f| f.read_exact(out)),
            Backing::Sim(d) => {
                d.random(out);
                Ok(())
            }
        }
    }

    /// The clock slot write times are taken from (ms since the Unix epoch).
    pub(super) fn now_ms(&self) -> u64 {
        match self {
            Backing::File(_) => unix_ms(),
            Backing::Sim(d) => d.now_ms(),
        }
    }

    /// The index file's bytes, if there is one.
    pub(super) fn read_index(&self, path: &Path) -> Option<Vec<u8>> {
        match self {
            Backing::File(_) => std::fs::read(path).ok(),
            Backing::Sim(d) => d.index(),
        }
    }

    /// Deletes the index file (a missing one is not an error).
    pub(super) fn remove_index(&self, path: &Path) -> io::Result<()> {
        match self {
            Backing::File(_) => match std::fs::remove_file(path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                r => r,
            },
            Backing::Sim(d) => d.set_index(None),
        }
    }

    /// Writes the index file whole (through a temporary file and a rename), synced.
    pub(super) fn write_index(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        match self {
            Backing::File(_) => {
                let tmp = path.with_extension("idx.tmp");
                let mut f = File::create(&tmp)?;
                f.write_all(bytes)?;
                f.sync_all()?;
                std::fs::rename(&tmp, path)
            }
            Backing::Sim(d) => d.set_index(Some(bytes.to_vec())),
        }
    }
}

/// Why a slot read is dropped, never served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotDrop {
    /// Its checksum, length or position fails, or it belongs to another batch.
    Corrupt,
    /// Intact bytes whose content fails the payload check.
    WrongContent,
}

impl L2File {
    /// The header of slot `s` read from the extent of batch `key`, if it passes every check a
    /// batch read applies before it serves a chunk: the checksum, the batch key, the position
    /// of its segment, then the payload check.
    pub(crate) fn verify_slot(
        &self,
        slot: &[u8],
        key: u64,
        s: u32,
    ) -> Result<SlotHeader, SlotDrop> {
        match SlotHeader::read(slot) {
            Ok((h, name, payload))
                if h.batch_key == key && h.segment % u64::from(self.sb.batch) == u64::from(s) =>
            {
                if self
                    .payload_check
                    .is_some_and(|check| !check(name, payload))
                {
                    return Err(SlotDrop::WrongContent);
                }
                Ok(h)
            }
            _ => Err(SlotDrop::Corrupt),
        }
    }

    /// (extent, slot) of `name` if the index holds it.
    pub(crate) fn held_slot(&self, name: &ChunkName<'_>) -> Option<(u32, u32)> {
        if !self.contains(name) {
            return None;
        }
        let key = self.batch_key(name.prefix, name.segment);
        let e = *self.map.get(&key)?;
        Some((e, self.slot_of(name.segment)))
    }

    /// The store's clock: the wall clock (ms since the Unix epoch), or the simulated disk's.
    pub fn now_ms(&self) -> u64 {
        self.file.now_ms()
    }

    /// Reads a previous store left in flight at [`L2File::reopen`], not yet handed out as
    /// failed (the next poll does).
    pub fn orphaned_reads(&self) -> usize {
        self.orphans.len()
    }

    /// See [`crate::sim::forget_orphans`].
    pub(crate) fn forget_orphans(&mut self) {
        self.orphans.clear();
    }

    /// Hands out a read a previous store left in flight as a failed read; false if none.
    pub(super) fn finish_orphan(&mut self, f: &mut impl FnMut(&BatchRead<'_>)) -> bool {
        let Some(ticket) = self.orphans.pop() else {
            return false;
        };
        f(&BatchRead {
            ticket,
            io_error: true,
            buf: &[],
            slot_bytes: self.sb.slot_bytes as usize,
            valid: 0,
            lens: &self.lens,
            segments: &self.segments,
            now_ms: self.file.now_ms(),
        });
        true
    }

    /// Opens the store again from what is on its file or disk, as a restart does: `clean`
    /// first waits for every operation in flight and writes the index (as [`L2File::close`];
    /// an index that cannot be written is left for the next open to rebuild); otherwise it is
    /// a crash (the operations in flight are abandoned, the index file is not written, the
    /// next open rebuilds). The new store keeps the payload check and the filters: this
    /// store's names leave them, and the new one puts in those it finds. Every read in flight
    /// (or finished and not handed out) completes, at the next poll, as a failed read, so that
    /// the lookups waiting for it complete as misses. On an error the store is left as it
    /// was, turned off (its names out of the filters).
    pub fn reopen(&mut self, clean: bool) -> Result<(), L2Error> {
        let mut orphans = std::mem::take(&mut self.orphans);
        if clean {
            while self.wait_one(|b| orphans.push(b.ticket)) {}
            if self.fault.is_none() {
                let _ = self.write_index();
            }
        }
        orphans.extend(
            (self.extents.iter().enumerate())
                .filter(|(_, x)| x.reading)
                .map(|(e, x)| read_tag(e as u32, x.gen)),
        );
        let check = self.payload_check;
        let (members, prefixes) = (self.members_link(), self.prefixes.filter_link());
        self.members_off();
        self.prefixes.filter_off();
        match L2File::open_with_filters(&self.config, members, prefixes) {
            Ok(mut l2) => {
                l2.payload_check = check;
                // Newer generations: a ticket of this store never names a read of the new one.
                for (x, old) in l2.extents.iter_mut().zip(&self.extents) {
                    x.gen = old.gen.wrapping_add(1);
                }
                l2.orphans = orphans;
                *self = l2;
                Ok(())
            }
            Err(e) => {
                if self.fault.is_none() {
                    self.fault = Some(L2Fault {
                        write: false,
                        errno: libc::EIO,
                    });
                }
                self.orphans = orphans;
                Err(e)
            }
        }
    }
}
