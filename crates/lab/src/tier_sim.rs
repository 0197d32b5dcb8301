//! The tier simulator: the hierarchical content store of Mansilha et al., "Exploiting
//! parallelism in hierarchical content stores for high-speed ICN routers" (Computer Networks,
//! 2017), on chunk ids and without disk.
//!
//! - **L1** is a chunk cache of a fixed number of chunks with FIFO (the paper's) or LRU
//!   replacement: a `HashMap` index over a slab of slots linked in an intrusive doubly linked
//!   list (head = newest / most recently used, tail = next victim).
//! - **L2** holds every chunk (as in the paper's experiments) and is modelled as "always hit";
//!   only its reads are counted.
//! - **Batch prefetch**: a request that misses L1 reads the whole batch of `B` chunks holding
//!   it (chunks `⌊k/B⌋·B .. ⌊k/B⌋·B + B`, clipped to the content's length) from L2 into L1.
//!   With `prefetch_ahead`, a request for the penultimate chunk of a batch also reads the next
//!   batch of the same content (the improvement the paper left for later).
//!
//! `cascade bench hcs` runs it with real chunk bytes and a real L2, and the model-fit test
//! checks its L1 hit ratio against the models of the `model` crate.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use store::list::Order;
use store::Replacement;

/// Bit of an index value marking a prefetched chunk not requested since (kept in the map so
/// that a FIFO hit touches nothing but the map).
const PREFETCHED: u32 = 1 << 31;

/// A multiplicative hasher for chunk ids: they are internal numbers, not names an attacker
/// chooses (the router's own L1 is the engine's keyed-SipHash CS), so speed wins.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // The high bits of a multiplicative hash are its good ones; hashbrown uses the top 7
        // for control bytes and the low ones for the bucket, so fold them together.
        let h = self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 32)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.0 = (self.0 << 32) | u64::from(x);
    }
}

type IdMap = HashMap<(u32, u32), u32, BuildHasherDefault<IdHasher>>;

/// Configuration of one [`TierSim`]; the capacity is fixed at construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierSimConfig {
    /// L1 capacity in chunks (0 disables L1: every request misses).
    pub l1_chunks: usize,
    /// Prefetch batch size `B` in chunks (at least 1; Mansilha et al.: 10).
    pub batch: u32,
    /// Chunks per content; batches are clipped to it.
    pub chunks_per_content: u32,
    /// L1 replacement policy.
    pub replacement: Replacement,
    /// Read the next batch when the penultimate chunk of the current one is requested (on by
    /// default; Mansilha et al. measured without it).
    pub prefetch_ahead: bool,
}

impl Default for TierSimConfig {
    fn default() -> Self {
        Self {
            l1_chunks: 0,
            batch: 10,
            chunks_per_content: 1280,
            replacement: Replacement::Fifo,
            prefetch_ahead: true,
        }
    }
}

/// The result of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The chunk was in L1.
    pub l1_hit: bool,
    /// The batch `[start, end)` read from L2 because of the miss (its chunks that were not in
    /// L1 are now in L1).
    pub miss_batch: Option<(u32, u32)>,
    /// The next batch `[start, end)` read ahead (`prefetch_ahead` only).
    pub ahead_batch: Option<(u32, u32)>,
}

/// Counters of a [`TierSim`] since construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Requests served.
    pub requests: u64,
    /// Requests that hit L1.
    pub l1_hits: u64,
    /// Batches read from L2 (on a miss, or ahead).
    pub l2_batch_reads: u64,
    /// Chunks read from L2 into L1 (the chunks of those batches that were not already in L1).
    pub l2_chunk_reads: u64,
    /// Chunks brought in by prefetch (not the requested chunk itself).
    pub prefetched: u64,
    /// Prefetched chunks that were requested while in L1.
    pub prefetch_used: u64,
    /// Prefetched chunks evicted from L1 without ever being requested.
    pub prefetch_evicted_unused: u64,
    /// Chunks evicted from L1.
    pub evictions: u64,
}

impl Counters {
    /// L1 hit ratio (0 before any request).
    pub fn l1_hit_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.l1_hits as f64 / self.requests as f64
        }
    }

    /// Prefetch usefulness: used / (used + evicted unused); 0 when neither happened.
    pub fn prefetch_usefulness(&self) -> f64 {
        let decided = self.prefetch_used + self.prefetch_evicted_unused;
        if decided == 0 {
            0.0
        } else {
            self.prefetch_used as f64 / decided as f64
        }
    }

    /// The counters accumulated since `earlier` (a snapshot of the same store).
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            requests: self.requests - earlier.requests,
            l1_hits: self.l1_hits - earlier.l1_hits,
            l2_batch_reads: self.l2_batch_reads - earlier.l2_batch_reads,
            l2_chunk_reads: self.l2_chunk_reads - earlier.l2_chunk_reads,
            prefetched: self.prefetched - earlier.prefetched,
            prefetch_used: self.prefetch_used - earlier.prefetch_used,
            prefetch_evicted_unused: self.prefetch_evicted_unused - earlier.prefetch_evicted_unused,
            evictions: self.evictions - earlier.evictions,
        }
    }
}

/// One L1 slot.
#[derive(Debug, Clone, Copy)]
struct Slot {
    key: (u32, u32),
}

/// One hierarchical content store (L1 chunk cache + always-hit L2) with batch prefetch.
#[derive(Debug, Clone)]
pub struct TierSim {
    config: TierSimConfig,
    /// Chunk → slot, with [`PREFETCHED`] set while a prefetched chunk is unrequested.
    index: IdMap,
    slots: Vec<Slot>,
    /// The slots in replacement order (tail: next victim).
    order: Order,
    counters: Counters,
}

impl TierSim {
    /// An empty store. Panics if `batch` or `chunks_per_content` is 0, or if `l1_chunks`
    /// does not fit in `u32` slot indices.
    pub fn new(config: TierSimConfig) -> Self {
        assert!(config.batch > 0, "TierSim: batch must be at least 1");
        assert!(
            config.chunks_per_content > 0,
            "TierSim: contents must have at least one chunk"
        );
        assert!(
            config.l1_chunks < PREFETCHED as usize,
            "TierSim: L1 capacity {} too large",
            config.l1_chunks
        );
        Self {
            config,
            index: IdMap::with_capacity_and_hasher(config.l1_chunks, Default::default()),
            slots: Vec::with_capacity(config.l1_chunks),
            order: Order::with_capacity(config.l1_chunks),
            counters: Counters::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TierSimConfig {
        &self.config
    }

    /// Counters since construction.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Chunks currently in L1 (never more than `l1_chunks`).
    pub fn l1_len(&self) -> usize {
        self.index.len()
    }

    /// Whether `(content, chunk)` is in L1 (no side effect).
    pub fn l1_contains(&self, content: u32, chunk: u32) -> bool {
        self.index.contains_key(&(content, chunk))
    }

    /// The L1 slot (`0..l1_chunks`, stable while the chunk stays in L1) holding
    /// `(content, chunk)`: lets a caller keep the chunk's bytes in a slab beside the store.
    pub fn l1_slot(&self, content: u32, chunk: u32) -> Option<u32> {
        self.index.get(&(content, chunk)).map(|&v| v & !PREFETCHED)
    }

    /// L1's chunks from the next victim to the newest (FIFO: insertion order; LRU: recency).
    pub fn l1_eviction_order(&self) -> Vec<(u32, u32)> {
        self.order
            .tail_to_head()
            .map(|i| self.slots[i as usize].key)
            .collect()
    }

    /// The chunk range `[start, end)` of the batch holding `chunk`, clipped to the content.
    pub fn batch_of(&self, chunk: u32) -> (u32, u32) {
        let b = self.config.batch;
        let start = chunk / b * b;
        let end = start.saturating_add(b).min(self.config.chunks_per_content);
        (start, end.max(start))
    }

    /// Serves a request for `chunk` of `content`: an L1 hit, or an L1 miss answered by L2 that
    /// reads the chunk's whole batch into L1; with `prefetch_ahead`, a request for a batch's
    /// penultimate chunk also reads the next batch.
    pub fn request(&mut self, content: u32, chunk: u32) -> Outcome {
        self.counters.requests += 1;
        let key = (content, chunk);
        let mut miss_batch = None;
        let mut ahead_batch = None;
        let l1_hit = match self.index.get_mut(&key) {
            Some(v) => {
                self.counters.l1_hits += 1;
                if *v & PREFETCHED != 0 {
                    *v &= !PREFETCHED;
                    self.counters.prefetch_used += 1;
                }
                let i = *v;
                if self.config.replacement == Replacement::Lru {
                    self.order.unlink(i);
                    self.order.push_head(i);
                }
                true
            }
            None => {
                let (start, end) = self.batch_of(chunk);
                self.read_batch(content, start, end, Some(chunk));
                miss_batch = Some((start, end));
                false
            }
        };
        if self.config.prefetch_ahead {
            let (start, end) = self.batch_of(chunk);
            if end - start >= 2 && chunk == end - 2 && end < self.config.chunks_per_content {
                let (ns, ne) = self.batch_of(end);
                if (ns..ne).any(|c| !self.index.contains_key(&(content, c))) {
                    self.read_batch(content, ns, ne, None);
                    ahead_batch = Some((ns, ne));
                }
            }
        }
        Outcome {
            l1_hit,
            miss_batch,
            ahead_batch,
        }
    }

    /// Reads chunks `start..end` of `content` from L2 into L1 (one batch read); `requested` is
    /// the chunk asked for, not counted as prefetched.
    fn read_batch(&mut self, content: u32, start: u32, end: u32, requested: Option<u32>) {
        self.counters.l2_batch_reads += 1;
        for c in start..end {
            if self.index.contains_key(&(content, c)) {
                continue;
            }
            self.counters.l2_chunk_reads += 1;
            let prefetched = requested != Some(c);
            if prefetched {
                self.counters.prefetched += 1;
            }
            self.insert((content, c), prefetched);
        }
    }

    /// Inserts a chunk known not to be in L1 at the head, evicting the tail if full.
    fn insert(&mut self, key: (u32, u32), prefetched_unused: bool) {
        if self.config.l1_chunks == 0 {
            return;
        }
        let i = if self.index.len() < self.config.l1_chunks {
            self.slots.push(Slot { key });
            self.order.grow_to(self.slots.len());
            (self.slots.len() - 1) as u32
        } else {
            let victim = self.order.tail();
            self.order.unlink(victim);
            let old = self.slots[victim as usize];
            let was = self.index.remove(&old.key).unwrap_or(0);
            self.counters.evictions += 1;
            if was & PREFETCHED != 0 {
                self.counters.prefetch_evicted_unused += 1;
            }
            self.slots[victim as usize].key = key;
            victim
        };
        self.index
            .insert(key, i | if prefetched_unused { PREFETCHED } else { 0 });
        self.order.push_head(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim(l1: usize, batch: u32, cpc: u32, replacement: Replacement, ahead: bool) -> TierSim {
        TierSim::new(TierSimConfig {
            l1_chunks: l1,
            batch,
            chunks_per_content: cpc,
            replacement,
            prefetch_ahead: ahead,
        })
    }

    #[test]
    fn fifo_and_lru_evict_in_their_order() {
        // Batch 1: no prefetch, so insertion order is request order.
        for (policy, victim) in [(Replacement::Fifo, (0, 0)), (Replacement::Lru, (0, 1))] {
            let mut h = sim(3, 1, 100, policy, false);
            for c in 0..3 {
                assert!(!h.request(0, c).l1_hit);
            }
            assert!(h.request(0, 0).l1_hit); // LRU refreshes 0; FIFO does not.
            assert!(!h.request(0, 3).l1_hit); // Evicts one chunk.
            assert!(!h.l1_contains(victim.0, victim.1), "{policy:?}");
            assert_eq!(h.l1_len(), 3);
            let order = h.l1_eviction_order();
            match policy {
                Replacement::Fifo => assert_eq!(order, vec![(0, 1), (0, 2), (0, 3)]),
                Replacement::Lru => assert_eq!(order, vec![(0, 2), (0, 0), (0, 3)]),
            }
            assert_eq!(h.counters().evictions, 1);
        }
    }

    #[test]
    fn miss_fills_exactly_the_batch() {
        let mut h = sim(100, 10, 25, Replacement::Fifo, false);
        let o = h.request(7, 13);
        assert_eq!(
            (o.l1_hit, o.miss_batch, o.ahead_batch),
            (false, Some((10, 20)), None)
        );
        let slots: Vec<u32> = (10..20).map(|c| h.l1_slot(7, c).unwrap()).collect();
        assert_eq!(slots, (0..10).collect::<Vec<u32>>(), "one slot per chunk");
        assert_eq!(h.l1_slot(7, 9), None);
        assert_eq!(h.request(7, 14).miss_batch, None);
        assert_eq!(h.l1_len(), 10);
        for c in 0..25 {
            assert_eq!(h.l1_contains(7, c), (10..20).contains(&c), "chunk {c}");
        }
        let k = *h.counters();
        assert_eq!(
            (k.l2_batch_reads, k.l2_chunk_reads, k.prefetched),
            (1, 10, 9)
        );
        for c in 10..20 {
            assert!(h.request(7, c).l1_hit);
        }
        assert_eq!(h.counters().prefetch_used, 9);
        // The last batch is clipped to the content's length.
        assert!(!h.request(7, 21).l1_hit);
        assert_eq!(h.l1_len(), 15);
        assert!((20..25).all(|c| h.l1_contains(7, c)) && !h.l1_contains(7, 25));
        assert_eq!(h.batch_of(24), (20, 25));
    }

    #[test]
    fn prefetch_ahead_triggers_on_the_penultimate_chunk() {
        let mut h = sim(100, 10, 30, Replacement::Fifo, true);
        h.request(0, 0);
        assert_eq!(h.l1_len(), 10);
        for c in 1..8 {
            assert!(h.request(0, c).l1_hit);
            assert_eq!(h.l1_len(), 10, "no read ahead before the penultimate chunk");
        }
        let o = h.request(0, 8);
        assert!(o.l1_hit && o.miss_batch.is_none());
        assert_eq!(o.ahead_batch, Some((10, 20)));
        assert_eq!(h.l1_len(), 20);
        assert!((10..20).all(|c| h.l1_contains(0, c)));
        assert_eq!(h.counters().l2_batch_reads, 2);
        // Read-ahead keeps going: the whole rest of the content hits.
        for c in 9..30 {
            assert!(h.request(0, c).l1_hit, "chunk {c}");
        }
        assert_eq!(h.counters().l2_batch_reads, 3);
        // No read beyond the content's end.
        assert!(!h.l1_contains(0, 30));
        // Without the option, the penultimate chunk reads nothing.
        let mut h = sim(100, 10, 30, Replacement::Fifo, false);
        h.request(0, 8);
        assert_eq!(h.l1_len(), 10);
        h.request(0, 9);
        assert!(!h.request(0, 10).l1_hit);
    }

    #[test]
    fn capacity_is_never_exceeded_and_unused_prefetch_is_counted() {
        for policy in [Replacement::Fifo, Replacement::Lru] {
            let mut h = sim(25, 10, 1280, policy, true);
            let mut x = 12345u64;
            for _ in 0..10_000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let content = ((x >> 33) % 7) as u32;
                let chunk = ((x >> 17) % 1280) as u32;
                h.request(content, chunk);
                assert!(h.l1_len() <= 25);
                assert_eq!(h.l1_eviction_order().len(), h.l1_len());
            }
            let k = *h.counters();
            assert_eq!(k.requests, 10_000);
            assert!(k.prefetch_evicted_unused > 0);
            assert!(k.prefetch_used + k.prefetch_evicted_unused <= k.prefetched);
            assert_eq!(k.l2_chunk_reads, k.evictions + h.l1_len() as u64);
        }
        let mut h = sim(0, 10, 100, Replacement::Fifo, false);
        assert!(!h.request(0, 0).l1_hit && !h.request(0, 0).l1_hit);
        assert_eq!(h.l1_len(), 0);
    }
}
