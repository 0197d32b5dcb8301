//! The fixed entry arena shared by the writer and the readers.

use core::cell::UnsafeCell;

use super::entry::FibEntry;

/// One arena slot: an entry on its own pair of cache lines (the unit of the adjacent-line
/// prefetcher).
#[repr(C, align(128))]
#[derive(Default)]
struct Slot(UnsafeCell<FibEntry>);

/// The fixed entry arena shared by the writer and the readers.
///
/// Protocol (what makes the `unsafe` accessors sound): a slot is *free* (never published, or
/// retired and then past a grace period), *published* (its number is in the index), or
/// *retiring* (unpublished, waiting for its grace period). Only the writer, holding the writer
/// mutex, writes a slot, and only a free one: no reader can reach it (readers only follow slot
/// numbers loaded from the index under a pinned guard, and a retired slot becomes free only once
/// every guard pinned before its unpublication is gone), and the writer holds no reference to it.
/// The writes happen before the index's release store that publishes the slot; readers load slot
/// numbers with acquire ordering, so they see the complete entry. Published and retiring entries
/// are only read.
pub(super) struct Arena {
    slots: crate::table::mem::FixedArena<Slot>,
}

// SAFETY: entries are `Send + Sync` data; concurrent access to a slot follows the protocol above
// (writes only to slots no other thread can reach, synchronised through the index).
unsafe impl Sync for Arena {}

impl Arena {
    pub(super) fn new(len: usize) -> Self {
        Arena {
            slots: crate::table::mem::arena(len, |_| Slot::default()),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The first cache line of `slot` (an address only: nothing is read).
    #[inline(always)]
    pub(super) fn line(&self, slot: u32) -> *const u8 {
        self.slots
            .get(slot as usize)
            .map_or(core::ptr::null(), |s| s as *const Slot as *const u8)
    }

    /// Reads the entry in `slot`.
    ///
    /// # Safety
    /// `slot` must be published or retiring for as long as the returned reference lives: either
    /// its number was loaded from the index (acquire) under a guard that outlives the reference,
    /// or the caller is the writer, holds the writer mutex meanwhile, and found `slot` published.
    #[inline(always)]
    pub(super) unsafe fn get(&self, slot: u32) -> Option<&FibEntry> {
        let s = self.slots.get(slot as usize)?;
        // SAFETY: per the contract, no one writes the slot while the reference lives (see the
        // protocol).
        Some(unsafe { &*s.0.get() })
    }

    /// Writes `entry` into `slot` (dropping the previous, dead contents).
    ///
    /// # Safety
    /// The caller is the writer (holds the writer mutex) and `slot` is free: never published,
    /// or retired and then past a grace period; the writer holds no reference into it.
    pub(super) unsafe fn write(&self, slot: u32, entry: FibEntry) {
        let s = &self.slots[slot as usize];
        // SAFETY: per the contract, nobody else can access the slot now.
        unsafe { *s.0.get() = entry };
    }
}
