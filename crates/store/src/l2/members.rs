//! The names L2 holds, kept in the counting Bloom filter in front of the CS
//! ([`crate::bloom`]): a chunk enters the filter when its write completes and leaves it when
//! its extent is evicted or a read finds its slot corrupt.
//!
//! The filter is keyed by the engine's full-name hash, which the index cannot give back (it
//! keeps no names), so the hash of every slot's chunk is kept beside the index (8 bytes per
//! chunk of capacity, only with a filter), written after the index at a clean stop and read
//! back at the next open. An index file without them (written without a filter) or for
//! another hash key is rebuilt by a scan of the slot headers, which carry the names.
//! A storage fault takes every name of the L2 out of the filter at once: the store serves
//! nothing more.

use super::*;

use engine::hash::{value_hash, HashKey};

use crate::bloom::CountingBloom;

/// Marks the start of the names' hashes after the index records.
const HASHES_MAGIC: &[u8; 8] = b"CASCBLM1";

/// The filter an [`L2File`] keeps its names in ([`L2File::open_with_filter`]).
#[derive(Debug, Clone)]
pub struct FilterLink {
    /// The filter, shared with the engine's RAM CS.
    pub filter: Arc<CountingBloom>,
    /// The engine's hash key: the filter is keyed by [`value_hash`] under it.
    pub key: HashKey,
}

/// What an [`L2File`] with a filter keeps.
#[derive(Debug)]
pub(super) struct Members {
    link: FilterLink,
    /// The full-name hash of the chunk last written to each slot (`extent × B + slot`).
    hashes: Vec<u64>,
    batch: u32,
    /// A storage fault took L2's names out of the filter: no more updates.
    off: bool,
}

impl Members {
    /// Writes every page of the slots' hashes ([`L2File::prefault`]).
    pub(super) fn prefault(&mut self) {
        engine::table::mem::touch_slice(&mut self.hashes);
    }

    pub(super) fn new(link: FilterLink, extents: u32, batch: u32) -> Self {
        Members {
            link,
            hashes: vec![0; extents as usize * batch as usize],
            batch,
            off: false,
        }
    }

    fn at(&self, e: u32, slot: u32) -> usize {
        e as usize * self.batch as usize + slot as usize
    }

    /// A value that tells whether stored hashes were made under this key.
    fn key_check(&self) -> u64 {
        value_hash(self.link.key, HASHES_MAGIC)
    }
}

impl L2File {
    /// Records the name of the chunk being written to `(e, slot)`.
    pub(super) fn member_written(&mut self, e: u32, slot: u32, name: &[u8]) {
        if let Some(m) = self.members.as_mut() {
            let i = m.at(e, slot);
            m.hashes[i] = value_hash(m.link.key, name);
        }
    }

    /// Slots `bits` of extent `e` came to hold their chunks (`true`) or stopped.
    pub(super) fn members_changed(&self, e: u32, bits: u64, held: bool) {
        let Some(m) = self.members.as_ref().filter(|m| !m.off) else {
            return;
        };
        let mut b = bits;
        while b != 0 {
            let s = b.trailing_zeros();
            b &= b - 1;
            let h = m.hashes[m.at(e, s)];
            if held {
                m.link.filter.insert(h);
            } else {
                m.link.filter.remove(h);
            }
        }
    }

    /// Puts every chunk the index holds into the filter (at open).
    pub(super) fn members_load(&self) {
        for (e, x) in self.extents.iter().enumerate() {
            if x.in_use {
                self.members_changed(e as u32, x.present, true);
            }
        }
    }

    /// At the first storage fault: L2's names leave the filter, for good.
    pub(super) fn members_off(&mut self) {
        if self.members.as_ref().is_some_and(|m| !m.off) {
            self.members_load_inverse();
            if let Some(m) = self.members.as_mut() {
                m.off = true;
            }
        }
    }

    fn members_load_inverse(&self) {
        for (e, x) in self.extents.iter().enumerate() {
            if x.in_use {
                self.members_changed(e as u32, x.present, false);
            }
        }
    }

    /// The filter the store keeps its names in, to reopen it with the same one.
    pub(super) fn members_link(&self) -> Option<FilterLink> {
        self.members.as_ref().map(|m| m.link.clone())
    }

    /// Whether the store keeps its names in a filter.
    pub fn has_filter(&self) -> bool {
        self.members.is_some()
    }

    /// Appends the hashes of the present slots of every extent, in `order` (the records'), to
    /// an index file being written.
    pub(super) fn members_encode(&self, order: &[u32], out: &mut Vec<u8>) {
        let Some(m) = self.members.as_ref().filter(|m| !m.off) else {
            return;
        };
        out.extend_from_slice(HASHES_MAGIC);
        out.extend_from_slice(&m.key_check().to_le_bytes());
        for &e in order {
            let mut b = self.extents[e as usize].present;
            while b != 0 {
                let s = b.trailing_zeros();
                b &= b - 1;
                out.extend_from_slice(&m.hashes[m.at(e, s)].to_le_bytes());
            }
        }
    }

    /// Reads back what [`L2File::members_encode`] wrote at `bytes` (the rest of the index file
    /// after its records, without the checksum), for the extents already installed in
    /// `order`. `false` when they are missing, made under another key or malformed: the index
    /// must then be rebuilt by a scan. Always `true` without a filter.
    pub(super) fn members_decode(&mut self, order: &[u32], bytes: &[u8]) -> bool {
        let Some(m) = self.members.as_ref() else {
            return true;
        };
        let present: Vec<u64> = order
            .iter()
            .map(|&e| self.extents[e as usize].present)
            .collect();
        let total: usize = present.iter().map(|p| p.count_ones() as usize).sum();
        if bytes.len() != 16 + total * 8
            || &bytes[..8] != HASHES_MAGIC
            || le64(bytes, 8) != m.key_check()
        {
            return false;
        }
        let Some(m) = self.members.as_mut() else {
            return true;
        };
        let mut at = 16;
        for (&e, &p) in order.iter().zip(&present) {
            let mut b = p;
            while b != 0 {
                let s = b.trailing_zeros();
                b &= b - 1;
                let i = m.at(e, s);
                m.hashes[i] = le64(bytes, at);
                at += 8;
            }
        }
        true
    }
}
