//! The Dead Nonce List: (name, nonce) pairs of Interests that recently left the PIT, so that a
//! looping Interest arriving after its PIT entry is gone is still recognised as a duplicate.
//!
//! Entries are 64-bit keys mixing the full-name hash with the nonce, kept for `lifetime_ms`
//! (NFD uses about 6 s) in a ring of fixed capacity with a hash index beside it: insertion and
//! lookup are O(1), memory is fixed at start-up, and when the ring is full the oldest entry is
//! dropped early (a false negative: a loop may go undetected, never a false duplicate).

use super::index::HashIndex;

/// Default lifetime of a dead nonce (NFD's default).
pub const DEFAULT_LIFETIME_MS: u64 = 6000;

#[derive(Clone, Copy, Default)]
struct Slot {
    key: u64,
    inserted_ms: u64,
}

/// The Dead Nonce List of one worker.
pub struct DeadNonceList {
    ring: crate::table::mem::FixedArena<Slot>,
    head: usize,
    len: usize,
    index: HashIndex,
    lifetime_ms: u64,
}

impl core::fmt::Debug for DeadNonceList {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DeadNonceList")
            .field("len", &self.len)
            .field("capacity", &self.ring.len())
            .finish()
    }
}

/// The key of (name, nonce): a keyed full-name hash mixed with the nonce.
#[inline]
pub fn dead_nonce_key(full_name_hash: u64, nonce: [u8; 4]) -> u64 {
    // Mix the nonce through a multiply-xorshift so that nonces differing in one bit move every
    // bit of the key; the name hash is already keyed and uniform.
    let n = u64::from(u32::from_be_bytes(nonce)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let k = full_name_hash ^ (n ^ (n >> 29));
    // Key 0 is reserved for "empty" in the ring; remap it.
    if k == 0 {
        1
    } else {
        k
    }
}

impl DeadNonceList {
    /// A list holding at most `capacity` entries for `lifetime_ms` each.
    pub fn new(capacity: usize, lifetime_ms: u64) -> Self {
        let capacity = capacity.max(1);
        DeadNonceList {
            ring: crate::table::mem::arena(capacity, |_| Slot::default()),
            head: 0,
            len: 0,
            // Sized for the full ring; every entry is removed from the index before its ring
            // slot is reused, so the index never exceeds the ring.
            index: HashIndex::with_capacity(capacity * 2),
            lifetime_ms,
        }
    }

    /// Number of live entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Capacity fixed at construction.
    pub fn capacity(&self) -> usize {
        self.ring.len()
    }

    fn pop_oldest(&mut self) {
        let s = self.ring[self.head];
        self.index.remove(s.key, self.head as u32);
        self.head = (self.head + 1) % self.ring.len();
        self.len -= 1;
    }

    /// Drops entries older than the lifetime. Bounded by the number of live entries.
    pub fn expire(&mut self, now_ms: u64) {
        while self.len > 0 {
            let s = self.ring[self.head];
            if s.inserted_ms + self.lifetime_ms > now_ms {
                break;
            }
            self.pop_oldest();
        }
    }

    /// Records (name, nonce) as dead at `now_ms`.
    pub fn insert(&mut self, key: u64, now_ms: u64) {
        self.expire(now_ms);
        if self.len == self.ring.len() {
            self.pop_oldest();
        }
        let pos = (self.head + self.len) % self.ring.len();
        self.ring[pos] = Slot {
            key,
            inserted_ms: now_ms,
        };
        // Cannot fail: the index is sized for twice the ring and holds at most the ring.
        let inserted = self.index.insert(key, pos as u32).is_ok();
        debug_assert!(inserted);
        self.len += 1;
    }

    /// Prefetches the bucket a [`Self::contains`] of `key` will read.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        if self.len > 0 {
            self.index.prefetch(key);
        }
    }

    /// Is (name, nonce) dead at `now_ms`? Free when the list is empty.
    #[inline]
    pub fn contains(&self, key: u64, now_ms: u64) -> bool {
        if self.len == 0 {
            return false;
        }
        let ring = &self.ring;
        let lifetime = self.lifetime_ms;
        self.index
            .find(key, |pos| {
                let s = ring[pos as usize];
                s.key == key && s.inserted_ms + lifetime > now_ms
            })
            .is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_for_the_lifetime_then_forgets() {
        let mut d = DeadNonceList::new(8, 6000);
        let k = dead_nonce_key(42, [1, 2, 3, 4]);
        assert!(!d.contains(k, 0));
        d.insert(k, 1000);
        assert!(d.contains(k, 1000));
        assert!(d.contains(k, 6999));
        assert!(!d.contains(k, 7000));
        assert!(!d.contains(dead_nonce_key(42, [1, 2, 3, 5]), 1000));
        assert!(!d.contains(dead_nonce_key(43, [1, 2, 3, 4]), 1000));
        d.expire(7000);
        assert!(d.is_empty());
    }

    #[test]
    fn memory_is_bounded_and_oldest_goes_first() {
        let mut d = DeadNonceList::new(4, 6000);
        let keys: Vec<u64> = (0..10u32)
            .map(|i| dead_nonce_key(7, i.to_be_bytes()))
            .collect();
        for (t, &k) in keys.iter().enumerate() {
            d.insert(k, t as u64);
            assert!(d.len() <= 4);
        }
        assert!(!d.contains(keys[5], 10));
        for &k in &keys[6..] {
            assert!(d.contains(k, 10));
        }
    }
}
