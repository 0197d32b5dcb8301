//! Per-face accounting of the PIT: in-records per face, the InterestLifetime cap and the fair
//! share a face may hold once the PIT is nearly full.
//!
//! Every in-record is counted against its face, in a counter of fixed size allocated with the
//! table (slot `face & (face_slots - 1)`), which remembers the full id it counts for: a face
//! table gives a closed face's slot to a new face with a new id (a new generation of the slot),
//! and the new face's first in-record starts the slot's count afresh, while the in-records the
//! closed face left in the PIT count no more (their removals, when they expire, do not touch
//! the new count). So a new face gets its whole share at once. The router sizes `face_slots` to
//! its face id space, so two open faces never share a slot; where they do (an engine of fewer
//! slots than the ids it sees), each takes the slot from the other, and the share is looser
//! for them. Below the watermark ([`PitLimits::share_watermark_percent`]
//! of the PIT's capacity) any face may take any free entry; at or above it, a face that already
//! holds its fair share — the capacity divided by the faces holding in-records plus one, a
//! share kept for a face not yet in the PIT — gets no new in-record (the pipeline Nacks it with
//! Congestion). A flood from one face therefore stops at the watermark, and the entries left
//! above it, and those its Interests free as they expire, go to the faces under their share.

use super::*;

/// Default of [`PitLimits::max_lifetime_ms`]: two minutes, the longest sync Interest lifetime
/// NLSR accepts (its default, 60 s, is also ndn-cxx's `FaceMonitor` lifetime).
pub const DEFAULT_MAX_LIFETIME_MS: u64 = 120_000;

/// Default of [`PitLimits::share_watermark_percent`].
pub const DEFAULT_SHARE_WATERMARK_PERCENT: u8 = 90;

/// Default of [`PitLimits::face_slots`].
pub const DEFAULT_FACE_SLOTS: usize = 8192;

/// Most [`PitLimits::face_slots`] (a table of more is refused: the configuration that asks for
/// it is refused at load).
pub const MAX_FACE_SLOTS: usize = 1 << 24;

/// What one face may take of the PIT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PitLimits {
    /// Longest time an in-record waits: a longer InterestLifetime is cut to this (the Interest
    /// is forwarded unchanged).
    pub max_lifetime_ms: u64,
    /// PIT occupancy, in percent of its capacity (1..=100), from which a face holding its fair
    /// share of in-records gets no new one.
    pub share_watermark_percent: u8,
    /// Per-face counters (a power of two; rounded up; 1 to [`MAX_FACE_SLOTS`]): face `f` is
    /// counted in slot `f & (face_slots - 1)`.
    pub face_slots: usize,
}

impl Default for PitLimits {
    fn default() -> Self {
        PitLimits {
            max_lifetime_ms: DEFAULT_MAX_LIFETIME_MS,
            share_watermark_percent: DEFAULT_SHARE_WATERMARK_PERCENT,
            face_slots: DEFAULT_FACE_SLOTS,
        }
    }
}

/// The per-face counters and the watermark, sized at construction.
#[derive(Debug)]
pub(super) struct FaceShares {
    /// In-records per face slot.
    records: Box<[u32]>,
    /// The full face id each slot counts for (the last to add an in-record in it).
    owners: Box<[FaceId]>,
    mask: u32,
    /// Slots holding at least one in-record.
    active: u32,
    /// Live PIT entries from which the share applies.
    watermark: usize,
    pub(super) max_lifetime_ms: u64,
}

impl FaceShares {
    pub(super) fn new(limits: PitLimits, pit_capacity: usize) -> Self {
        assert!(
            (1..=MAX_FACE_SLOTS).contains(&limits.face_slots),
            "face_slots {} outside 1..={MAX_FACE_SLOTS}",
            limits.face_slots
        );
        let slots = limits.face_slots.next_power_of_two();
        let percent = usize::from(limits.share_watermark_percent.clamp(1, 100));
        FaceShares {
            records: vec![0; slots].into_boxed_slice(),
            owners: vec![0; slots].into_boxed_slice(),
            mask: (slots - 1) as u32,
            active: 0,
            watermark: (pit_capacity * percent).div_ceil(100),
            max_lifetime_ms: limits.max_lifetime_ms,
        }
    }

    #[inline(always)]
    fn slot(&self, face: FaceId) -> usize {
        (face & self.mask) as usize
    }

    /// In-records counted for `face` (0 when its slot counts for another id).
    #[inline(always)]
    fn count(&self, face: FaceId) -> u32 {
        let s = self.slot(face);
        if self.owners[s] == face {
            self.records[s]
        } else {
            0
        }
    }

    #[inline]
    pub(super) fn add(&mut self, face: FaceId) {
        let s = self.slot(face);
        if self.owners[s] != face {
            // A new id in the slot: what the old one left is no longer counted.
            if self.records[s] > 0 {
                self.records[s] = 0;
                self.active -= 1;
            }
            self.owners[s] = face;
        }
        if self.records[s] == 0 {
            self.active += 1;
        }
        self.records[s] += 1;
    }

    #[inline]
    pub(super) fn remove(&mut self, face: FaceId) {
        let s = self.slot(face);
        if self.owners[s] != face {
            return; // an in-record of an id the slot no longer counts for
        }
        debug_assert!(self.records[s] > 0, "in-record of face {face} not counted");
        self.records[s] = self.records[s].saturating_sub(1);
        if self.records[s] == 0 {
            self.active -= 1;
        }
    }

    /// Checks the counters against the in-records of the live entries (of the ids the slots
    /// count for).
    pub(super) fn check<'a>(
        &self,
        records: impl Iterator<Item = &'a InRecord>,
    ) -> Result<(), String> {
        let mut counted = vec![0u32; self.records.len()];
        for r in records {
            let s = self.slot(r.face);
            if self.owners[s] == r.face {
                counted[s] += 1;
            }
        }
        if let Some(s) = (0..counted.len()).find(|&s| counted[s] != self.records[s]) {
            return Err(format!(
                "face slot {s}: {} in-records present, {} counted",
                counted[s], self.records[s]
            ));
        }
        let active = counted.iter().filter(|&&c| c > 0).count();
        if active != self.active as usize {
            return Err(format!(
                "{active} faces hold in-records, {} counted",
                self.active
            ));
        }
        Ok(())
    }
}

impl PitCs {
    /// The slot of `face` (its id's low bits: `face & (face_slots - 1)`), which per-face state
    /// is indexed by: a face table's slot when `face_slots` is its id space's
    /// (`face::table::FaceIdSpace::slots`), whose generations share the slot.
    #[inline(always)]
    pub fn face_slot(&self, face: FaceId) -> usize {
        self.shares.slot(face)
    }

    /// Number of face slots (a power of two: [`PitLimits::face_slots`], rounded up).
    pub fn face_slots(&self) -> usize {
        self.shares.records.len()
    }

    /// In-records `face` holds (0 for an id its slot no longer counts for: the in-records a
    /// closed face left).
    pub fn face_in_records(&self, face: FaceId) -> u32 {
        self.shares.count(face)
    }

    /// Faces (counters) holding at least one in-record.
    pub fn active_faces(&self) -> u32 {
        self.shares.active
    }

    /// The fair share of a face now: the PIT's capacity over the faces holding in-records, plus
    /// one for a face not yet in the PIT.
    pub fn fair_share(&self) -> usize {
        self.config.pit_capacity / (self.shares.active as usize + 1)
    }

    /// The longest an in-record waits ([`PitLimits::max_lifetime_ms`]).
    #[inline]
    pub fn max_lifetime_ms(&self) -> u64 {
        self.shares.max_lifetime_ms
    }

    /// Whether a new in-record from `face` is refused: the PIT is at or above its watermark
    /// and `face` already holds its fair share. (A refresh of an in-record `face` already has
    /// is never refused: see [`PitCs::has_in_record`].)
    #[inline]
    pub fn share_refuses(&self, face: FaceId) -> bool {
        self.pit_len >= self.shares.watermark
            && self.face_in_records(face) as usize >= self.fair_share()
    }

    /// Whether `face` has an in-record on the PIT entry of name entry `entry` (if any) for
    /// (CanBePrefix, MustBeFresh).
    pub fn has_in_record(&self, entry: Option<u32>, cbp: bool, mbf: bool, face: FaceId) -> bool {
        entry
            .and_then(|e| self.pit_of(e, cbp, mbf))
            .is_some_and(|p| {
                self.pits[p as usize]
                    .in_records
                    .iter()
                    .any(|r| r.face == face)
            })
    }
}
