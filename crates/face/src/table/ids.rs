//! Face ids: bounded, and reused only after a quarantine.
//!
//! Ids are given out from the table's first id (`FIRST_FACE_ID`, or the start of a shard's range
//! when several tables share one id space: [`super::FaceTable::with_first_id`]) up to
//! `first + FACE_IDS_PER_FACE × max_faces`, so that whoever keeps state per face id (a worker's face properties, the PIT's per-face
//! counts) keeps a bounded array. A closed face's id waits in a first-in, first-out queue for
//! the quarantine (longer than any PIT entry lives, so no in-record, out-record or route of the
//! closed face is still live when its id names a new face) before it is given out again; fresh
//! ids are used while the range lasts. If every id of the range is in use or in quarantine (more
//! than `(FACE_IDS_PER_FACE − 1) × max_faces` faces closed within one quarantine), a new
//! on-demand face is refused (the table asks [`FaceIds::available`] first, and counts the
//! refusal): remotes that come and go faster than the quarantine cannot make an id name two
//! faces within it. Only a face the router itself needs (a local connection, a face management
//! creates) then takes the id that has waited longest, early, and counted.

use std::collections::VecDeque;

use super::{FaceId, FIRST_FACE_ID};

/// Face ids per place in the table: the id range is this many times `max_faces`.
pub const FACE_IDS_PER_FACE: usize = 8;

/// The ids a face table gives out.
#[derive(Debug)]
pub(super) struct FaceIds {
    first: FaceId,
    next: FaceId,
    end: FaceId,
    quarantine_ms: u64,
    /// Ids of closed faces with the time they were closed, oldest first.
    freed: VecDeque<(FaceId, u64)>,
    /// Ids given out before their quarantine was over.
    pub(super) reused_early: u64,
}

impl FaceIds {
    /// The ids `first` to `first + FACE_IDS_PER_FACE × max_faces` (`first` at least
    /// `FIRST_FACE_ID`).
    pub(super) fn new(first: FaceId, max_faces: usize, quarantine_ms: u64) -> Self {
        let first = first.max(FIRST_FACE_ID);
        let span = max_faces.saturating_mul(FACE_IDS_PER_FACE).max(1);
        let end = (first as usize)
            .saturating_add(span)
            .min(u32::MAX as usize - 1);
        FaceIds {
            next: first,
            first,
            end: end as FaceId,
            quarantine_ms,
            freed: VecDeque::new(),
            reused_early: 0,
        }
    }

    /// One past the largest id ever given out.
    pub(super) fn end(&self) -> FaceId {
        self.end
    }

    /// Whether an id is free at `now_ms` without cutting a quarantine short.
    pub(super) fn available(&self, now_ms: u64) -> bool {
        self.next < self.end
            || self
                .freed
                .front()
                .is_some_and(|&(_, closed)| now_ms.saturating_sub(closed) >= self.quarantine_ms)
    }

    /// An id for a new face at `now_ms` (the caller has checked that the table has room).
    pub(super) fn take(&mut self, now_ms: u64) -> Option<FaceId> {
        if let Some(&(id, closed)) = self.freed.front() {
            if now_ms.saturating_sub(closed) >= self.quarantine_ms {
                self.freed.pop_front();
                return Some(id);
            }
        }
        if self.next < self.end {
            let id = self.next;
            self.next += 1;
            return Some(id);
        }
        let (id, _) = self.freed.pop_front()?;
        self.reused_early += 1;
        Some(id)
    }

    /// The id of a face closed at `now_ms`.
    pub(super) fn give_back(&mut self, id: FaceId, now_ms: u64) {
        debug_assert!((self.first..self.end).contains(&id));
        self.freed.push_back((id, now_ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_stay_in_range_and_wait_out_the_quarantine() {
        let mut ids = FaceIds::new(FIRST_FACE_ID, 2, 100);
        let end = FIRST_FACE_ID + 16;
        assert_eq!(ids.end(), end);
        let a = ids.take(0).unwrap();
        let b = ids.take(0).unwrap();
        assert_eq!((a, b), (FIRST_FACE_ID, FIRST_FACE_ID + 1));
        ids.give_back(a, 10);
        // In quarantine: a fresh id instead.
        assert_eq!(ids.take(50), Some(FIRST_FACE_ID + 2));
        // Over: the old id again.
        assert_eq!(ids.take(110), Some(a));
        // The range runs out: then the longest-waiting id is reused early, and counted.
        while ids.next < end {
            ids.take(120).unwrap();
        }
        assert_eq!(ids.take(120), None, "nothing closed");
        assert!(!ids.available(120));
        ids.give_back(b, 130);
        ids.give_back(a, 131);
        // In quarantine, not available (an on-demand face is refused) ...
        assert!(!ids.available(229));
        assert!(ids.available(230), "b's quarantine is over");
        assert_eq!(ids.take(140), Some(b));
        assert_eq!(ids.reused_early, 1);
        // A range of its own, as a shard's table has.
        let mut second = FaceIds::new(end, 2, 100);
        assert_eq!(second.take(0), Some(end));
        assert_eq!(second.end(), end + 16);
    }
}
