//! Face ids: a bounded slot and a generation, so that a slot is reused at once and a full id
//! never names two faces within the quarantine.
//!
//! A face id is `generation << slot_bits | slot` ([`FaceIdSpace`]). The slot is what per-face
//! state is indexed by (a worker's face properties and NB-CC state, the PIT's per-face counts):
//! a table of `max_faces` faces has [`FACE_SLOTS_PER_FACE`] × `max_faces` slots, from its first
//! id (`FIRST_FACE_ID`, or the start of a shard's range when several tables share one id space:
//! [`super::FaceTable::with_id_space`]), so those arrays stay bounded. The generation is bumped
//! each time the slot names a new face, and whatever records a face id for later (PIT
//! in-records and out-records, next hops, management's routes and datasets, the face table's
//! own maps) keeps the full id: a record of an old generation names no open face, and what is
//! sent to it is dropped (and counted: `sent_to_closed_faces`).
//!
//! A full id comes back only after its slot has gone through every other generation. A slot
//! is given out again only once it has been free for [`FaceIds::reuse_ms`] — the quarantine
//! (longer than any PIT entry lives) divided by the number of generations, rounded up — so
//! between two faces with the same full id lie at least `generations` such waits: the
//! quarantine. With the router's defaults (4,096 faces: slots 256 to 8,447, 14 slot bits, 2^18
//! generations) the wait is 1 ms; and since at least `max_faces` slots are free at any time and
//! every slot is given out once before freed slots are reused, oldest first, a full id comes back
//! after 2^18 × 4,096 ≈ 10^9 faces made: 15 hours at 20,000 new faces a second. An id is
//! refused only if every free slot was freed less than the wait ago (more than `max_faces` faces
//! closed within it): the churn of on-demand faces never runs the ids out. Only a face the router itself needs (a local
//! connection, a face management creates) then takes the slot that has waited longest, early,
//! and counted.

use std::collections::VecDeque;

use super::{FaceId, FIRST_FACE_ID};

/// Face slots per place in the table: at least `max_faces` slots are free whatever the table
/// holds, so a slot waits behind them before it is reused.
pub const FACE_SLOTS_PER_FACE: usize = 2;

/// How face ids split into a slot (low bits) and a generation (high bits); every table sharing
/// one id space (a sharded router's) uses the same split, and so does whoever indexes per-face
/// state by slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaceIdSpace {
    slot_bits: u32,
}

impl FaceIdSpace {
    /// The space whose slots reach `end` (one past the largest slot any table gives out): the
    /// fewest slot bits that hold `end` itself (so no id is `u32::MAX`), at least 9 (the ids
    /// NFD reserves) and at most 31 (one generation bit).
    pub fn new(end: usize) -> Self {
        let bits = usize::BITS - end.leading_zeros();
        FaceIdSpace {
            slot_bits: bits.clamp(9, 31),
        }
    }

    /// The space of `tables` tables of `max_faces` faces each ([`FACE_SLOTS_PER_FACE`] slots
    /// per face, from [`FIRST_FACE_ID`]).
    pub fn for_tables(tables: usize, max_faces: usize) -> Self {
        let span = max_faces.saturating_mul(FACE_SLOTS_PER_FACE).max(1);
        Self::new((FIRST_FACE_ID as usize).saturating_add(span.saturating_mul(tables.max(1))))
    }

    /// Bits of the slot.
    pub fn slot_bits(&self) -> u32 {
        self.slot_bits
    }

    /// Number of slots (a power of two): per-face state indexed by slot has at most this many
    /// entries.
    pub fn slots(&self) -> usize {
        1 << self.slot_bits
    }

    /// Number of generations of a slot.
    pub fn generations(&self) -> u64 {
        1 << (32 - self.slot_bits)
    }

    /// The slot of face `id`.
    #[inline]
    pub fn slot(&self, id: FaceId) -> usize {
        (id & ((1 << self.slot_bits) - 1)) as usize
    }

    /// The generation of face `id`.
    #[inline]
    pub fn generation(&self, id: FaceId) -> u32 {
        id >> self.slot_bits
    }

    /// The id of `slot` in `generation` (taken modulo the generations).
    pub fn id(&self, slot: usize, generation: u32) -> FaceId {
        let gen = u64::from(generation) % self.generations();
        ((gen << self.slot_bits) as FaceId) | (slot as FaceId & ((1 << self.slot_bits) - 1))
    }

    /// How long a freed slot waits before it is reused, for full ids to stay unique over
    /// `quarantine_ms`: the quarantine over the generations, rounded up.
    pub fn reuse_ms(&self, quarantine_ms: u64) -> u64 {
        quarantine_ms.div_ceil(self.generations())
    }
}

/// The ids a face table gives out.
#[derive(Debug)]
pub(super) struct FaceIds {
    space: FaceIdSpace,
    /// The table's slots: `first..end`; `next` the first never given out.
    first: usize,
    next: usize,
    end: usize,
    reuse_ms: u64,
    /// The generation of each slot given out so far (index: slot − `first`).
    generation: Vec<u32>,
    /// Slots of closed faces with the time they were closed, oldest first.
    freed: VecDeque<(usize, u64)>,
    /// Ids given out before their slot's wait was over.
    pub(super) reused_early: u64,
    /// Packets not sent: their face id is of this table's slots but names no open face (a
    /// face closed since, perhaps of an old generation of a slot that names a new face now).
    pub(super) sent_to_closed: u64,
}

impl FaceIds {
    /// The slots `first` to `first + FACE_SLOTS_PER_FACE × max_faces` (`first` at least
    /// `FIRST_FACE_ID`) of `space`, unique over `quarantine_ms`.
    pub(super) fn new(
        first: FaceId,
        max_faces: usize,
        space: FaceIdSpace,
        quarantine_ms: u64,
    ) -> Self {
        let first = space
            .slot(first.max(FIRST_FACE_ID))
            .max(FIRST_FACE_ID as usize);
        let span = max_faces.saturating_mul(FACE_SLOTS_PER_FACE).max(1);
        let end = first.saturating_add(span).min(space.slots() - 1);
        FaceIds {
            space,
            first,
            next: first,
            end,
            reuse_ms: space.reuse_ms(quarantine_ms),
            generation: Vec::new(),
            freed: VecDeque::new(),
            reused_early: 0,
            sent_to_closed: 0,
        }
    }

    /// The split of the ids.
    pub(super) fn space(&self) -> FaceIdSpace {
        self.space
    }

    /// How long a freed slot waits before it names a new face.
    pub(super) fn reuse_ms(&self) -> u64 {
        self.reuse_ms
    }

    /// Whether face `id` is of this table's slots.
    pub(super) fn owns(&self, id: FaceId) -> bool {
        (self.first..self.end).contains(&self.space.slot(id))
    }

    /// Whether an id is free at `now_ms` without cutting a slot's wait short.
    pub(super) fn available(&self, now_ms: u64) -> bool {
        self.next < self.end
            || self
                .freed
                .front()
                .is_some_and(|&(_, closed)| now_ms.saturating_sub(closed) >= self.reuse_ms)
    }

    /// An id for a new face at `now_ms` (the caller has checked that the table has room): a
    /// slot never given out while there is one (so that every slot takes its turn, and a slot
    /// goes through its generations as slowly as the churn allows), else the slot freed
    /// longest ago.
    pub(super) fn take(&mut self, now_ms: u64) -> Option<FaceId> {
        if self.next < self.end {
            let slot = self.next;
            self.next += 1;
            self.generation.push(0);
            return Some(self.space.id(slot, 0));
        }
        if let Some(&(slot, closed)) = self.freed.front() {
            if now_ms.saturating_sub(closed) >= self.reuse_ms {
                self.freed.pop_front();
                return Some(self.next_generation(slot));
            }
        }
        let (slot, _) = self.freed.pop_front()?;
        self.reused_early += 1;
        Some(self.next_generation(slot))
    }

    /// The next generation's id of a freed `slot`.
    fn next_generation(&mut self, slot: usize) -> FaceId {
        let g = &mut self.generation[slot - self.first];
        *g = ((u64::from(*g) + 1) % self.space.generations()) as u32;
        self.space.id(slot, *g)
    }

    /// The id of a face closed at `now_ms`: its slot is free.
    pub(super) fn give_back(&mut self, id: FaceId, now_ms: u64) {
        let slot = self.space.slot(id);
        debug_assert!(
            self.owns(id) && slot < self.next,
            "face id {id} not given out"
        );
        debug_assert_eq!(
            self.generation.get(slot - self.first).copied(),
            Some(self.space.generation(id)),
            "face id {id} of an old generation given back"
        );
        debug_assert!(self.freed.len() < self.next - self.first);
        self.freed.push_back((slot, now_ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_space_splits_ids_into_slot_and_generation() {
        let s = FaceIdSpace::for_tables(1, 4096);
        assert_eq!(s.slot_bits(), 14, "256 + 8,192 slots");
        assert_eq!((s.slots(), s.generations()), (1 << 14, 1 << 18));
        assert_eq!(s.reuse_ms(130_000), 1);
        let id = s.id(300, 5);
        assert_eq!((s.slot(id), s.generation(id)), (300, 5));
        assert_eq!(s.id(300, 0), 300, "generation 0: the id is the slot");
        assert_eq!(s.id(300, 1 << 18), 300, "generations wrap");
        // Shards share one split; the largest slot never makes u32::MAX.
        let sharded = FaceIdSpace::for_tables(4, 4096);
        assert_eq!(sharded.slot_bits(), 16);
        let exact = FaceIdSpace::new(1 << 12);
        assert_eq!(exact.slot_bits(), 13);
        assert_ne!(exact.id((1 << 12) - 1, u32::MAX), u32::MAX);
        assert_eq!(FaceIdSpace::new(1).slot_bits(), 9);
        assert_eq!(FaceIdSpace::new(usize::MAX).slot_bits(), 31);
        assert_eq!(FaceIdSpace::new(usize::MAX).reuse_ms(100), 50);
    }

    #[test]
    fn freed_slots_come_back_with_a_new_generation_after_their_wait() {
        let space = FaceIdSpace::new(FIRST_FACE_ID as usize + 4);
        assert_eq!(space.slot_bits(), 9);
        // 2^23 generations: 1 ms per reuse for an 8,388,608 ms quarantine.
        let mut ids = FaceIds::new(FIRST_FACE_ID, 2, space, 1 << 23);
        assert_eq!(ids.reuse_ms(), 1);
        let a = ids.take(0).unwrap();
        let b = ids.take(0).unwrap();
        assert_eq!((a, b), (FIRST_FACE_ID, FIRST_FACE_ID + 1));
        ids.give_back(a, 10);
        // Slots never given out come first, freed or not.
        assert_eq!(ids.take(50), Some(FIRST_FACE_ID + 2));
        assert_eq!(ids.take(50), Some(FIRST_FACE_ID + 3));
        // Then the freed slot again, a generation on.
        let a2 = ids.take(50).unwrap();
        assert_eq!((space.slot(a2), space.generation(a2)), (space.slot(a), 1));
        assert!(ids.owns(a) && ids.owns(a2) && !ids.owns(FIRST_FACE_ID + 4));
        // Every slot of the range in use: none left.
        assert_eq!(ids.take(12), None, "nothing freed");
        assert!(!ids.available(12));
        ids.give_back(b, 20);
        assert!(!ids.available(20), "b's wait is not over");
        assert!(ids.available(21));
        // Taken early (a face the router needs): counted, still a new generation.
        let b2 = ids.take(20).unwrap();
        assert_eq!(ids.reused_early, 1);
        assert_ne!(b2, b);
        assert_eq!(space.slot(b2), space.slot(b));
    }

    #[test]
    fn a_full_id_does_not_come_back_within_the_quarantine() {
        // 29 slot bits: 8 generations, so that they wrap many times; 10 ms per reuse.
        let space = FaceIdSpace::new(1 << 28);
        assert_eq!(space.generations(), 8);
        let quarantine_ms = 80;
        let mut ids = FaceIds::new(FIRST_FACE_ID, 1, space, quarantine_ms);
        assert_eq!(ids.reuse_ms(), 10);
        let mut now = 0;
        let mut closed = std::collections::HashMap::new();
        let mut repeats = 0;
        let mut id = ids.take(now).unwrap();
        // Close and reopen as soon as an id is available.
        for _ in 0..100 {
            ids.give_back(id, now);
            closed.insert(id, now);
            while !ids.available(now) {
                now += 1;
            }
            id = ids.take(now).unwrap();
            if let Some(&c) = closed.get(&id) {
                repeats += 1;
                assert!(
                    now - c >= quarantine_ms,
                    "{id} back {} ms after it closed",
                    now - c
                );
            }
        }
        assert_eq!(ids.reused_early, 0);
        assert!(repeats > 50, "the generations wrapped: {repeats}");
        assert_eq!(ids.next - ids.first, 2, "within the table's two slots");
    }
}
