//! The store's maps of keys (already keyed SipHash outputs) and the 2-LRU filter's set:
//! capacity fixed when they are made, their memory written before they are used.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::list::Order;

/// A pass-through hasher for keys that are already keyed SipHash outputs.
#[derive(Default)]
pub(super) struct KeyHasher(u64);

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

pub(super) type KeyMap = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;

/// A [`KeyMap`] that holds up to `entries` keys, under any sequence of inserts and removals,
/// without allocating after this call. Reserving `entries` is not enough: removals leave
/// tombstones, and when they have used up the table's room the standard library's hash map
/// (hashbrown's SwissTable) rehashes in place only while at most half of its capacity is in
/// use; above that it allocates a table twice as large, at run time. So twice the entries
/// are reserved (plus one for the insert that finds the room used up).
pub(super) fn key_map(entries: usize) -> KeyMap {
    KeyMap::with_capacity_and_hasher(2 * entries + 2, Default::default())
}

/// Writes the pages of an empty [`KeyMap`]'s table: fills it to its capacity with keys spread
/// over its buckets, then empties it (an emptied table keeps its memory: its control bytes are
/// reset, its buckets stay written).
pub(super) fn prefault_key_map(map: &mut KeyMap) {
    debug_assert!(map.is_empty());
    let capacity = map.capacity();
    let mut key = 0u64;
    for _ in 0..capacity {
        // Fibonacci hashing: consecutive keys land far apart in the table.
        key = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
        map.insert(key, 0);
    }
    map.clear();
    debug_assert_eq!(map.capacity(), capacity, "filled within its capacity");
}

/// A fixed-capacity LRU set of keys (the 2-LRU filter).
#[derive(Debug)]
pub(super) struct KeyLru {
    pub(super) map: KeyMap,
    pub(super) keys: Vec<u64>,
    order: Order,
    capacity: usize,
}

impl KeyLru {
    pub(super) fn new(capacity: usize) -> Self {
        KeyLru {
            map: key_map(capacity),
            keys: Vec::with_capacity(capacity),
            order: Order::with_capacity(capacity),
            capacity,
        }
    }

    /// Writes every page of the memory the filter reserved ([`L2File::prefault`]).
    pub(super) fn prefault(&mut self) {
        prefault_key_map(&mut self.map);
        engine::table::mem::touch_spare(&mut self.keys);
        self.order.prefault();
    }

    /// Whether `key` was present; inserts it (or refreshes it) at the head either way.
    pub(super) fn check_and_insert(&mut self, key: u64) -> bool {
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
