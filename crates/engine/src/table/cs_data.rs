//! Where the CS keeps its Data: slots of fixed size classes, each class in its own fixed
//! mapping, so that where a Data lands depends only on the CS's own history, never on the
//! process heap's.
//!
//! Why not a heap buffer per CS entry: on a machine whose TLB caches 4 KB translations, every
//! distinct page a Data path touches costs a page walk (~125 ns here, `memlat tlb`). The heap
//! put the CS's 65,536 buffers wherever earlier frees had left holes, so the benchmark's Data
//! figure moved by 1.7× with how the FIB generator allocated. Here the live Data
//! of a class are packed from the front of the class's mapping.
//!
//! Owns: the slot mappings, per class a bump mark and an intrusive free list (the index of the
//! next free slot is kept in the first 4 bytes of a free slot), so taking and giving back a slot
//! never allocates and is O(1). Does not own: which entry holds which slot, or Data lengths (the
//! PIT+CS table keeps both in its name entries).
//!
//! Sizing: every class can hold `capacity` Data (the CS can never hold more, whatever their
//! sizes), so a slot is always available to a CS below capacity. The mappings are reserved
//! virtual memory (`MAP_NORESERVE`, about 29 KB per CS entry over all classes); a page becomes
//! memory only when a Data is first written to it, so the memory used is, per class, the most
//! Data of that class the CS ever held at once, times the slot size. Slot sizes grow by 1.5× or
//! 4/3× (128, 192, 256, …, 6,144, 8,832 bytes), so a Data wastes at most a third of its slot.

use super::mem::{touch_pages, zeroed_bytes, FixedArena, LAZY_SMALL_PAGE_BYTES};

/// Slot sizes in bytes, ascending; every one a multiple of the cache line, the last one holding
/// the largest packet ([`wire::MAX_NDN_PACKET_BYTES`]).
pub const CLASS_BYTES: [usize; 13] = [
    128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8832,
];

const _: () = {
    let mut i = 0;
    while i < CLASS_BYTES.len() {
        assert!(CLASS_BYTES[i] % 64 == 0);
        assert!(i == 0 || CLASS_BYTES[i] > CLASS_BYTES[i - 1]);
        i += 1;
    }
    assert!(CLASS_BYTES[CLASS_BYTES.len() - 1] >= wire::MAX_NDN_PACKET_BYTES);
    // A free slot holds the next free slot's index.
    assert!(CLASS_BYTES[0] >= 4);
};

/// Sentinel: no slot.
const NO_SLOT: u32 = u32::MAX;

/// A slot: its class and its index within the class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Index into [`CLASS_BYTES`].
    pub class: u8,
    /// Index of the slot in its class.
    pub index: u32,
}

/// The class whose slots fit `len` bytes (the smallest such), or `None` beyond the largest.
#[inline]
pub fn class_of(len: usize) -> Option<u8> {
    // At most 13 compares; Data of one flow are of similar sizes, so the branch predicts.
    CLASS_BYTES.iter().position(|&c| len <= c).map(|c| c as u8)
}

#[derive(Debug)]
struct Class {
    bytes: FixedArena<u8>,
    slot_bytes: usize,
    /// Slots `0..used` have been handed out at least once.
    used: u32,
    /// First free slot below `used`, or `NO_SLOT`.
    free_head: u32,
    /// Slots currently handed out.
    live: u32,
}

impl Class {
    /// The byte offset of slot `i`.
    #[inline]
    fn at(&self, i: u32) -> usize {
        i as usize * self.slot_bytes
    }

    /// The free slot after free slot `i` (kept in its first 4 bytes).
    #[inline]
    fn next_free(&self, i: u32) -> u32 {
        let at = self.at(i);
        u32::from_ne_bytes(self.bytes[at..at + 4].try_into().expect("4 bytes"))
    }
}

/// The Data slots of one CS.
#[derive(Debug)]
pub struct DataSlots {
    classes: Vec<Class>,
    capacity: u32,
}

impl DataSlots {
    /// Slots for a CS of `capacity` entries: `capacity` of every class, reserved now.
    pub fn new(capacity: usize) -> Self {
        let capacity = u32::try_from(capacity).expect("CS capacity fits 32 bits");
        assert!(capacity < NO_SLOT, "CS capacity below the sentinel");
        DataSlots {
            classes: CLASS_BYTES
                .iter()
                .map(|&slot_bytes| Class {
                    bytes: zeroed_bytes(capacity as usize * slot_bytes),
                    slot_bytes,
                    used: 0,
                    free_head: NO_SLOT,
                    live: 0,
                })
                .collect(),
            capacity,
        }
    }

    /// A slot that fits `len` bytes, or `None` if `len` is beyond the largest class or the
    /// class has `capacity` slots out already (a caller that keeps at most `capacity` Data
    /// never sees the latter).
    pub fn take(&mut self, len: usize) -> Option<Slot> {
        let class = class_of(len)?;
        let c = &mut self.classes[usize::from(class)];
        let index = if c.free_head != NO_SLOT {
            let i = c.free_head;
            let next = c.next_free(i);
            debug_assert!(next == NO_SLOT || next < c.used, "free list corrupt");
            c.free_head = next;
            i
        } else if c.used < self.capacity {
            c.used += 1;
            c.used - 1
        } else {
            return None;
        };
        c.live += 1;
        Some(Slot { class, index })
    }

    /// Gives `slot` back; its bytes are garbage from now on.
    pub fn give_back(&mut self, slot: Slot) {
        let c = &mut self.classes[usize::from(slot.class)];
        assert!(slot.index < c.used && c.live > 0, "slot was not handed out");
        let at = c.at(slot.index);
        c.bytes[at..at + 4].copy_from_slice(&c.free_head.to_ne_bytes());
        c.free_head = slot.index;
        c.live -= 1;
    }

    /// The whole slot (its class's size).
    #[inline]
    pub fn slot(&self, slot: Slot) -> &[u8] {
        let c = &self.classes[usize::from(slot.class)];
        let at = c.at(slot.index);
        &c.bytes[at..at + c.slot_bytes]
    }

    /// The whole slot, to write.
    #[inline]
    pub fn slot_mut(&mut self, slot: Slot) -> &mut [u8] {
        let c = &mut self.classes[usize::from(slot.class)];
        let at = c.at(slot.index);
        let end = at + c.slot_bytes;
        &mut c.bytes[at..end]
    }

    /// Writes every 4 KB page of each class's part on small pages (its first
    /// [`LAZY_SMALL_PAGE_BYTES`]) so that the first Data stored in them do not take a page
    /// fault each in the forwarding loop; the parts on huge pages stay untouched (faulting
    /// them in would commit the whole CS). Slot contents are unchanged. Returns the bytes
    /// touched.
    pub fn prefault(&mut self) -> usize {
        self.classes
            .iter_mut()
            .map(|c| {
                let n = c.bytes.len().min(LAZY_SMALL_PAGE_BYTES);
                touch_pages(&mut c.bytes[..n]);
                n
            })
            .sum()
    }

    /// The small-page part of each class, as (address, length): what [`Self::prefault`]
    /// writes.
    #[cfg(test)]
    fn small_page_parts(&self) -> Vec<(usize, usize)> {
        (self.classes.iter())
            .map(|c| {
                let n = c.bytes.len().min(LAZY_SMALL_PAGE_BYTES);
                (c.bytes.as_ptr() as usize, n)
            })
            .collect()
    }

    /// Slots handed out now, over all classes.
    pub fn live(&self) -> usize {
        self.classes.iter().map(|c| c.live as usize).sum()
    }

    /// Bytes of the slots ever handed out (an upper bound of the memory the Data use).
    pub fn touched_bytes(&self) -> usize {
        self.classes
            .iter()
            .map(|c| c.used as usize * c.slot_bytes)
            .sum()
    }

    /// Checks each class's free list against its counts: every free slot is below the bump
    /// mark, no slot is listed twice, and free + live = handed out. O(slots); for tests.
    pub fn check(&self) -> Result<(), String> {
        for (k, c) in self.classes.iter().enumerate() {
            let mut seen = vec![false; c.used as usize];
            let mut free = 0u32;
            let mut i = c.free_head;
            while i != NO_SLOT {
                if i >= c.used || std::mem::replace(&mut seen[i as usize], true) {
                    return Err(format!("class {k}: free list broken at slot {i}"));
                }
                free += 1;
                i = c.next_free(i);
            }
            if free + c.live != c.used {
                return Err(format!(
                    "class {k}: {free} free + {} live != {} handed out",
                    c.live, c.used
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_the_smallest_that_fit() {
        assert_eq!(class_of(0), Some(0));
        assert_eq!(class_of(128), Some(0));
        assert_eq!(class_of(129), Some(1));
        assert_eq!(class_of(8800), Some(12));
        assert_eq!(class_of(8832), Some(12));
        assert_eq!(class_of(8833), None);
        for len in 0..=8832 {
            let c = usize::from(class_of(len).unwrap());
            assert!(CLASS_BYTES[c] >= len);
            assert!(c == 0 || CLASS_BYTES[c - 1] < len);
            // Less than a third of a slot is wasted (beyond the smallest class).
            assert!(c == 0 || len * 3 > CLASS_BYTES[c] * 2, "{len}");
        }
    }

    /// Resident 4 KB pages of `len` bytes at `addr` (`mincore`).
    fn resident(addr: usize, len: usize) -> usize {
        let start = addr & !4095;
        let pages = (addr + len).div_ceil(4096) - start / 4096;
        let mut vec = vec![0u8; pages];
        // SAFETY: reads the page tables of a range we mapped; writes `pages` bytes to `vec`.
        let r =
            unsafe { libc::mincore(start as *mut libc::c_void, pages * 4096, vec.as_mut_ptr()) };
        assert_eq!(r, 0, "mincore");
        vec.iter().filter(|&&b| b & 1 == 1).count()
    }

    #[test]
    fn prefault_maps_every_small_page_of_every_class_and_keeps_the_slots() {
        let mut d = DataSlots::new(100);
        let a = d.take(3000).unwrap();
        d.slot_mut(a).fill(0x5a);
        let parts = d.small_page_parts();
        let pages: usize = parts.iter().map(|&(_, n)| n.div_ceil(4096)).sum();
        // A fresh mapping has only the pages written so far: the one slot.
        let before: usize = parts.iter().map(|&(p, n)| resident(p, n)).sum();
        assert!(before < pages, "{before} of {pages} resident before");
        let touched = d.prefault();
        assert_eq!(touched, CLASS_BYTES.iter().map(|b| 100 * b).sum::<usize>());
        for (k, &(p, n)) in parts.iter().enumerate() {
            assert_eq!(resident(p, n), n.div_ceil(4096), "class {k}");
        }
        assert!(d.slot(a).iter().all(|&x| x == 0x5a));
        d.check().unwrap();
        // A class larger than the small-page part is touched only there.
        let mut big = DataSlots::new(1000);
        assert_eq!(
            big.prefault(),
            CLASS_BYTES
                .iter()
                .map(|b| (1000 * b).min(LAZY_SMALL_PAGE_BYTES))
                .sum::<usize>()
        );
    }

    #[test]
    fn slots_are_reused_last_in_first_out_and_never_shared() {
        let mut d = DataSlots::new(3);
        let a = d.take(100).unwrap();
        let b = d.take(120).unwrap();
        let c = d.take(1).unwrap();
        assert_eq!((a.index, b.index, c.index), (0, 1, 2));
        // The class is full: `capacity` slots are out.
        assert_eq!(d.take(50), None);
        // Another class has its own slots.
        let big = d.take(5000).unwrap();
        assert_eq!((big.class, big.index), (11, 0));
        d.slot_mut(a).fill(0xaa);
        d.slot_mut(b).fill(0xbb);
        d.give_back(b);
        d.give_back(a);
        assert_eq!(d.live(), 2);
        d.check().unwrap();
        // Last given back, first taken again; its neighbour's bytes are untouched.
        assert_eq!(d.take(128), Some(a));
        assert!(d.slot(c).iter().all(|&x| x == 0));
        assert_eq!(d.take(128), Some(b));
        assert_eq!(d.take(128), None);
        d.check().unwrap();
        assert_eq!(d.touched_bytes(), 3 * 128 + 6144);
        assert_eq!(d.take(8833), None);
    }

    #[test]
    fn the_live_slots_of_a_random_history_are_disjoint() {
        let mut d = DataSlots::new(64);
        let mut live: Vec<(Slot, u8)> = Vec::new();
        let mut x = 12345u64;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if live.len() < 64 && x % 3 != 0 {
                let len = (x >> 8) as usize % 3000;
                let s = d.take(len).expect("fewer than capacity live");
                let tag = step as u8;
                d.slot_mut(s)[..len.max(4)].fill(tag);
                live.push((s, tag));
            } else if !live.is_empty() {
                let (s, tag) = live.swap_remove((x >> 20) as usize % live.len());
                // Nothing else wrote into it while it was out.
                assert!(d.slot(s)[..4].iter().all(|&b| b == tag));
                d.give_back(s);
            }
        }
        assert_eq!(d.live(), live.len());
        d.check().unwrap();
    }
}
