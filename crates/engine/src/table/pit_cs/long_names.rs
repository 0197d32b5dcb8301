//! Fixed pools for names too long to sit inline in a name entry.

use super::*;

/// Fixed pools for names longer than [`NAME_INLINE`]: slots of [`LONG_NAME_SLOT_BYTES`] and
/// slots of a whole packet, allocated and written (so every page is mapped: a name copied in
/// while forwarding never takes a page fault) when the table is built.
#[derive(Debug)]
pub(super) struct LongNames {
    long: crate::table::mem::FixedArena<u8>,
    long_free: Vec<u32>,
    huge: crate::table::mem::FixedArena<u8>,
    huge_free: Vec<u32>,
}

/// Marks a slot of the pool of the longest names in [`NameEntry::long`].
const HUGE_BIT: u32 = 1 << 31;

impl LongNames {
    pub(super) fn new(names: usize) -> Self {
        let long_n = (names / LONG_NAME_SLOT_EVERY).max(16);
        let huge_n = (names / HUGE_NAME_SLOT_EVERY).max(16);
        // `arena` writes every byte, which maps every page.
        LongNames {
            long: crate::table::mem::arena(long_n * LONG_NAME_SLOT_BYTES, |_| 0),
            long_free: (0..long_n as u32).rev().collect(),
            huge: crate::table::mem::arena(huge_n * wire::MAX_NDN_PACKET_BYTES, |_| 0),
            huge_free: (0..huge_n as u32).rev().collect(),
        }
    }

    /// A slot for a name of `len` bytes (more than [`NAME_INLINE`]), if one is free.
    pub(super) fn take(&mut self, len: usize) -> Option<u32> {
        if len <= LONG_NAME_SLOT_BYTES {
            self.long_free.pop()
        } else if len <= wire::MAX_NDN_PACKET_BYTES {
            self.huge_free.pop().map(|i| i | HUGE_BIT)
        } else {
            None
        }
    }

    pub(super) fn give_back(&mut self, slot: u32) {
        if slot & HUGE_BIT != 0 {
            self.huge_free.push(slot & !HUGE_BIT);
        } else {
            self.long_free.push(slot);
        }
    }

    /// The pool holding `slot` and the slot's byte range in it.
    #[inline]
    pub(super) fn span(slot: u32) -> (bool, core::ops::Range<usize>) {
        let i = (slot & !HUGE_BIT) as usize;
        let huge = slot & HUGE_BIT != 0;
        let size = if huge {
            wire::MAX_NDN_PACKET_BYTES
        } else {
            LONG_NAME_SLOT_BYTES
        };
        (huge, i * size..(i + 1) * size)
    }

    pub(super) fn bytes_mut(&mut self, slot: u32) -> &mut [u8] {
        match Self::span(slot) {
            (true, r) => &mut self.huge[r],
            (false, r) => &mut self.long[r],
        }
    }

    #[inline]
    pub(super) fn bytes(&self, slot: u32, len: usize) -> &[u8] {
        let (huge, r) = Self::span(slot);
        let pool = if huge { &self.huge } else { &self.long };
        let slot_bytes = &pool[r];
        &slot_bytes[..len.min(slot_bytes.len())]
    }
}
