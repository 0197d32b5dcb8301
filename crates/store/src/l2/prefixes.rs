//! The prefix index: which extents hold chunks under a name prefix, so that L2 answers
//! CanBePrefix Interests ([`L2File::read_prefix`]).
//!
//! Every extent in use is linked, for each of the [`PREFIX_LEVELS`] longest component prefixes
//! of its batch's name prefix (the chunk names without their segment: `/a/b/v=1` gives
//! `/a/b/v=1`, `/a/b` and `/a`), into a list of the extents that share that prefix, newest
//! first: a map from the prefix's keyed hash to the list's head, and per extent `PREFIX_LEVELS`
//! links of 16 bytes. Memory is bounded and reserved at open: 64 bytes per extent and room for
//! `PREFIX_LEVELS` map entries per extent (so that linking never grows the map at run time). A hash collision costs a read, never a wrong answer: whoever serves
//! the chunk checks that its name starts with the prefix asked for. The index is kept with the
//! slot index and rebuilt at start-up (from the rebuild scan, or after loading the index file by
//! reading the first chunk of every extent in use).
//!
//! With a prefix filter ([`L2File::open_with_filters`]) the index's hashes are the engine's
//! full-name hashes of the prefixes ([`value_hash`] under the router's key), and every prefix
//! the index has a list for is also in that filter (a counting Bloom filter of this worker's
//! L2 prefixes, written by this worker only): a prefix enters it when its list is created and
//! leaves it when its list's last extent is unlinked, so each distinct prefix counts once. The
//! dispatcher reads the filters of every worker's L2 and sends a CanBePrefix Interest to a
//! worker whose L2 may hold chunks under its name, when the worker that owns the name holds
//! none.

use super::*;

use engine::hash::{value_hash, HashKey};

use crate::bloom::CountingBloom;

/// Prefix lengths indexed per extent: the longest ones of its batch's name prefix.
pub const PREFIX_LEVELS: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Link {
    /// 0: unused.
    hash: u64,
    next: u32,
    prev: u32,
}

const UNUSED: Link = Link {
    hash: 0,
    next: NIL,
    prev: NIL,
};

/// The prefix index of an [`L2File`].
#[derive(Debug)]
pub(super) struct Prefixes {
    heads: KeyMap,
    links: Vec<[Link; PREFIX_LEVELS]>,
    /// The filter every linked prefix is counted in, and the key of its hashes.
    filter: Option<(Arc<CountingBloom>, HashKey)>,
    /// A storage fault took the prefixes out of the filter: no more updates (the key still
    /// makes the hashes, and a reopened store takes the filter again).
    filter_off: bool,
}

impl Prefixes {
    /// Writes every page of the list heads' map and the links ([`L2File::prefault`]).
    pub(super) fn prefault(&mut self) {
        prefault_key_map(&mut self.heads);
        engine::table::mem::touch_slice(&mut self.links);
    }

    pub(super) fn new(extents: u32, filter: Option<FilterLink>) -> Self {
        Prefixes {
            // At most one list head per linked prefix: `PREFIX_LEVELS` per extent.
            heads: key_map(extents as usize * PREFIX_LEVELS),
            links: vec![[UNUSED; PREFIX_LEVELS]; extents as usize],
            filter: filter.map(|f| (f.filter, f.key)),
            filter_off: false,
        }
    }

    /// Every linked prefix leaves the filter, which is no longer updated (a storage fault:
    /// the store serves nothing more).
    pub(super) fn filter_off(&mut self) {
        self.filter_remove_all();
        self.filter_off = true;
    }

    /// The filter, while the store keeps its prefixes in it.
    fn live_filter(&self) -> Option<&Arc<CountingBloom>> {
        self.filter
            .as_ref()
            .filter(|_| !self.filter_off)
            .map(|(f, _)| f)
    }

    /// The prefix filter and its key, to reopen the store with the same one.
    pub(super) fn filter_link(&self) -> Option<FilterLink> {
        let (filter, key) = self.filter.clone()?;
        Some(FilterLink { filter, key })
    }

    fn filter_remove_all(&self) {
        if let Some(f) = self.live_filter() {
            for &hash in self.heads.keys() {
                f.remove(hash);
            }
        }
    }

    fn level_of(&self, e: u32, hash: u64) -> usize {
        let l = self.links[e as usize].iter().position(|l| l.hash == hash);
        l.expect("a linked extent holds the hash of its list")
    }

    pub(super) fn link(&mut self, e: u32, hashes: [u64; PREFIX_LEVELS]) {
        self.unlink(e);
        for (level, &hash) in hashes.iter().enumerate() {
            if hash == 0
                || self.links[e as usize][..level]
                    .iter()
                    .any(|l| l.hash == hash)
            {
                continue;
            }
            let next = self.heads.insert(hash, e).unwrap_or(NIL);
            if let (NIL, Some(f)) = (next, self.live_filter()) {
                f.insert(hash); // a new list
            }
            if next != NIL {
                let l = self.level_of(next, hash);
                self.links[next as usize][l].prev = e;
            }
            self.links[e as usize][level] = Link {
                hash,
                next,
                prev: NIL,
            };
        }
    }

    pub(super) fn unlink(&mut self, e: u32) {
        for level in 0..PREFIX_LEVELS {
            let Link { hash, next, prev } = self.links[e as usize][level];
            if hash == 0 {
                continue;
            }
            if next != NIL {
                let l = self.level_of(next, hash);
                self.links[next as usize][l].prev = prev;
            }
            if prev != NIL {
                let l = self.level_of(prev, hash);
                self.links[prev as usize][l].next = next;
            } else if next != NIL {
                self.heads.insert(hash, next);
            } else {
                self.heads.remove(&hash);
                if let Some(f) = self.live_filter() {
                    f.remove(hash); // the list's last extent
                }
            }
            self.links[e as usize][level] = UNUSED;
        }
    }

    /// Room in the map of list heads (for tests: it never grows).
    #[cfg(test)]
    pub(super) fn heads_capacity(&self) -> usize {
        self.heads.capacity()
    }

    pub(super) fn clear(&mut self) {
        self.filter_remove_all();
        self.heads.clear();
        self.links.fill([UNUSED; PREFIX_LEVELS]);
    }

    /// The newest extent under the prefix with this hash.
    fn head(&self, hash: u64) -> Option<u32> {
        self.heads.get(&hash).copied()
    }

    /// The next (older) extent after `e` under the prefix with this hash.
    fn next(&self, e: u32, hash: u64) -> Option<u32> {
        let links = self.links.get(e as usize)?;
        let l = links.iter().find(|l| l.hash == hash)?;
        (l.next != NIL).then_some(l.next)
    }
}

impl L2File {
    /// The keyed hash of a name prefix (name TLV value) in the prefix index (never 0): with a
    /// prefix filter, the engine's full-name hash of the prefix.
    fn prefix_hash(&self, prefix: &[u8]) -> u64 {
        if let Some((_, key)) = &self.prefixes.filter {
            return value_hash(*key, prefix).max(1);
        }
        let mut k0 = [0u8; 8];
        let mut k1 = [0u8; 8];
        k0.copy_from_slice(&self.sb.hash_key[..8]);
        k1.copy_from_slice(&self.sb.hash_key[8..]);
        // Other keys than the batch keys': a prefix hash is never a batch key.
        let mut h = SipHasher13::new_with_keys(!u64::from_le_bytes(k0), u64::from_le_bytes(k1));
        h.write(prefix);
        h.finish().max(1)
    }

    /// The hashes of the [`PREFIX_LEVELS`] longest component prefixes of a batch's name
    /// prefix (0 where it has fewer components).
    pub(super) fn prefix_hashes(&self, batch_prefix: &[u8]) -> [u64; PREFIX_LEVELS] {
        let mut ends = [0usize; PREFIX_LEVELS];
        let mut n = 0usize;
        let mut off = 0;
        while off < batch_prefix.len() {
            let Some(end) = component_end(batch_prefix, off) else {
                break;
            };
            ends[n % PREFIX_LEVELS] = end;
            n += 1;
            off = end;
        }
        let mut out = [0u64; PREFIX_LEVELS];
        for (o, &end) in out.iter_mut().zip(&ends).take(n.min(PREFIX_LEVELS)) {
            *o = self.prefix_hash(&batch_prefix[..end]);
        }
        out
    }

    /// Links extent `e` (just allocated for the batch of `name`) into the prefix index.
    pub(super) fn prefixes_link(&mut self, e: u32, name: &ChunkName<'_>) {
        let hashes = self.prefix_hashes(name.prefix);
        self.prefixes.link(e, hashes);
    }

    /// Starts reading the newest extent holding chunks under `prefix` (a name TLV value: the
    /// name of a CanBePrefix Interest), or joins the read in flight; the answer names the
    /// extent's first chunk's slot. The caller picks, among the chunks read, one whose name
    /// starts with `prefix`. Never blocks.
    pub fn read_prefix(&mut self, prefix: &[u8]) -> ReadStart {
        if self.fault.is_some() {
            self.counters.refused_off += 1;
            return ReadStart::Miss;
        }
        let hash = self.prefix_hash(prefix);
        let e = self.prefixes.head(hash);
        self.read_prefix_from(hash, e)
    }

    /// Like [`L2File::read_prefix`], for the extent under `prefix` older than the one read by
    /// `ticket` (a lookup whose batch had no chunk it could serve tries the next one).
    pub fn read_prefix_next(&mut self, prefix: &[u8], ticket: u64) -> ReadStart {
        if self.fault.is_some() {
            self.counters.refused_off += 1;
            return ReadStart::Miss;
        }
        let hash = self.prefix_hash(prefix);
        let e = self.prefixes.next(untag(ticket).0, hash);
        self.read_prefix_from(hash, e)
    }

    /// Reads the first extent from `e` on (older and older) under the prefix `hash` that holds
    /// a chunk.
    fn read_prefix_from(&mut self, hash: u64, mut e: Option<u32>) -> ReadStart {
        for _ in 0..self.sb.extents {
            let Some(x) = e else {
                break;
            };
            let present = self.extents[x as usize].present;
            if present != 0 {
                return self.read_extent(x, present.trailing_zeros());
            }
            e = self.prefixes.next(x, hash);
        }
        self.counters.read_misses += 1;
        ReadStart::Miss
    }

    /// The hashes of the prefixes the prefix index has a list for (what its filter must
    /// hold, each once).
    pub(crate) fn linked_prefixes(&self) -> Vec<u64> {
        self.prefixes.heads.keys().copied().collect()
    }

    /// After loading the index file: links every extent in use into the prefix index, reading
    /// the name of its first chunk whose header is whole (one read of a slot per extent, in
    /// replacement order, more only past damaged slots).
    pub(super) fn prefixes_scan(&mut self) -> Result<(), L2Error> {
        let sbytes = self.sb.slot_bytes as usize;
        let mut buf = AlignedBuf::new(sbytes);
        // Oldest first, so that the newest extent under a prefix ends up at its list's head.
        let order: Vec<u32> = self.replacement.tail_to_head().collect();
        for e in order {
            let x = self.extents[e as usize];
            if !x.in_use {
                continue;
            }
            // The first present slot whose header names a chunk of the batch: an unreadable
            // one is found (and dropped) when read, but must not hide the extent's other
            // chunks from CanBePrefix lookups. An extent with no chunk present (its last
            // one dropped by a failed read before a clean stop) or none of whose slots is
            // readable leaves the index: kept, unlinked, a chunk written into its batch later
            // would be out of reach of CanBePrefix lookups and of the prefix filters.
            let mut linked = false;
            let mut present = x.present;
            while present != 0 && !linked {
                let slot = present.trailing_zeros();
                present &= present - 1;
                // One slot, not the whole (page-rounded) buffer: past the file's end for a
                // late slot of the last extent.
                let at = self.sb.slot_offset(e, slot);
                self.file
                    .read_full(&mut buf.as_mut_slice()[..sbytes], at)
                    .map_err(io_err("cannot read L2 slot"))?;
                if let Ok((h, name, _)) = SlotHeader::read(&buf.as_slice()[..sbytes]) {
                    if let (true, Some(n)) = (h.batch_key == x.key, ChunkName::parse(name)) {
                        self.prefixes_link(e, &n);
                        linked = true;
                    }
                }
            }
            if !linked {
                self.map.remove(&x.key);
                self.replacement.unlink(e);
                self.extents[e as usize] = Extent::EMPTY;
                self.free.push(e);
            }
        }
        Ok(())
    }
}

/// The end of the TLV element starting at `off` in `b`, if it is whole.
fn component_end(b: &[u8], off: usize) -> Option<usize> {
    let (_, n1) = wire::tlv::read_var_number(&b[off..], off).ok()?;
    let (len, n2) = wire::tlv::read_var_number(&b[off + n1..], off + n1).ok()?;
    let end = (off + n1 + n2).checked_add(usize::try_from(len).ok()?)?;
    (end <= b.len()).then_some(end)
}
