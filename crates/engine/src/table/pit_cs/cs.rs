//! The content store: lookups (exact, CanBePrefix, implicit digest), insertion, the
//! replacement policy's list, eviction and the eviction log.

use super::*;

impl PitCs {
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

    pub(super) fn fresh_ok(&self, e: u32, mbf: bool, now_ms: u64) -> bool {
        !mbf || self.names[e as usize].fresh_until_ms > now_ms
    }

    pub(super) fn match_entry(&self, e: u32, cbp: bool, mbf: bool, now_ms: u64) -> Option<u32> {
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

    pub(super) fn digest_lookup(
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

    /// Caches `data_wire` under its name (entry `e`, found or created by the caller), fresh for
    /// `freshness_ms`. Evicts by the replacement policy if the CS is full.
    pub fn cs_insert(&mut self, e: u32, data_wire: &[u8], freshness_ms: u64, now_ms: u64) {
        if self.config.cs_capacity == 0 {
            self.release_if_empty(e);
            return;
        }
        let was_direct = self.names[e as usize].cs == CsKind::Direct;
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
            if was_direct {
                self.filter_note(e, false);
            }
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
        if !was_direct {
            self.filter_note(e, true);
        }
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

    pub(super) fn cs_link_tail(&mut self, e: u32) {
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

    pub(super) fn cs_unlink(&mut self, e: u32) {
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

    pub(super) fn cs_touch(&mut self, e: u32) {
        if self.cs_tail != e {
            self.cs_unlink(e);
            self.cs_link_tail(e);
        }
    }

    pub(super) fn cs_remove(&mut self, e: u32) {
        if self.names[e as usize].cs != CsKind::None {
            if self.names[e as usize].cs == CsKind::Direct {
                self.filter_note(e, false);
            }
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
    /// A slower tier uses it for write-back admission (Mansilha et al., 2017: admission on eviction from L1).
    pub fn log_evictions(&mut self, max_entries: usize, max_bytes: usize) {
        let max_bytes = if max_entries == 0 { 0 } else { max_bytes };
        self.evicted = EvictionLog {
            bytes: Vec::with_capacity(max_bytes),
            ends: Vec::with_capacity(max_entries),
            fresh_until_ms: Vec::with_capacity(max_entries),
            max_entries,
            max_bytes,
        };
    }

    /// Maps now the CS memory the forwarding loop would otherwise touch for the first time
    /// while it forwards: the small-page part of the Data slots ([`DataSlots::prefault`]) and
    /// the eviction log's reserved memory. Call it once before the loop runs; what it touches
    /// keeps its contents. Returns the bytes touched.
    pub fn prefault(&mut self) -> usize {
        let log = &mut self.evicted;
        let touched = crate::table::mem::touch_spare(&mut log.bytes)
            + crate::table::mem::touch_spare(&mut log.ends)
            + crate::table::mem::touch_spare(&mut log.fresh_until_ms);
        touched + self.data.prefault()
    }

    /// Hands every logged evicted Data (oldest first) to `f` and empties the log.
    pub fn drain_evicted(&mut self, mut f: impl FnMut(&[u8])) {
        self.drain_evicted_fresh(|d, _| f(d));
    }

    /// [`PitCs::drain_evicted`], with each Data's `fresh_until_ms` in the CS (the `now_ms` of
    /// its insertion plus the freshness it had left then): with its FreshnessPeriod, that
    /// tells when it arrived, so that a slower tier it is written back to later counts its
    /// freshness from its arrival, not from the write.
    pub fn drain_evicted_fresh(&mut self, mut f: impl FnMut(&[u8], u64)) {
        let mut start = 0usize;
        let log = &self.evicted;
        for (&end, &fresh_until_ms) in log.ends.iter().zip(&log.fresh_until_ms) {
            f(&log.bytes[start..end as usize], fresh_until_ms);
            start = end as usize;
        }
        self.evicted.bytes.clear();
        self.evicted.ends.clear();
        self.evicted.fresh_until_ms.clear();
    }

    pub(super) fn evict_one(&mut self) {
        let e = self.cs_head;
        if e == NONE {
            return;
        }
        if self.evicted.max_entries > 0 && self.names[e as usize].cs == CsKind::Direct {
            let n = &self.names[e as usize];
            let data = data_of(n, &self.data).unwrap_or(&[]);
            if !self.evicted.push(data, n.fresh_until_ms) {
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
    pub(super) fn warm_victims(&mut self) {
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
}
