//! The access strategy's state: NFD 24.07's `AccessStrategy` for a router at the edge, where a
//! consumer's Interests should reach whichever of several upstreams (access points, a
//! multicast link) last answered.
//!
//! Per name prefix (a Data's name less its last component) the upstream that last brought Data
//! and an RTT estimator; per upstream face another estimator. A new Interest goes to the prefix's
//! last working next hop (the longest prefix with a measurement), and if no Data comes back
//! within that prefix's RTO, to every other next hop; without a measurement, or when that next
//! hop is not usable, to every next hop at once. Measurements live 8 s after their last Data.
//!
//! The table's capacity is fixed when it is built: a prefix that finds no room in its probe
//! window replaces the one expiring first ([`AccessTable::evicted`]); the face estimators and
//! the RTO timers are bounded the same way ([`AccessTable::timers_refused`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::fw::rtt::RttEstimator;
use crate::table::pit_cs::{FaceId, NONE};

/// How long a prefix's measurement lives after its last Data (NFD: 8 s).
pub const ACCESS_LIFETIME_MS: u64 = 8_000;

/// Slots probed for a prefix or a face.
const PROBE_WINDOW: usize = 8;

/// Face estimators kept (more upstreams share by replacement).
const FACE_SLOTS: usize = 256;

/// One prefix's measurement.
#[derive(Debug, Clone, Copy)]
struct Prefix {
    hash: u64,
    depth: u8,
    expiry_ms: u64,
    last_nexthop: FaceId,
    rtt: RttEstimator,
}

impl Prefix {
    const FREE: Prefix = Prefix {
        hash: 0,
        depth: 0,
        expiry_ms: 0,
        last_nexthop: NONE,
        rtt: RttEstimator::NEW,
    };

    fn live(&self, now_ms: u64) -> bool {
        self.last_nexthop != NONE && self.expiry_ms > now_ms
    }
}

/// A retransmission timer: if PIT entry `pit` has had no Data by `due_ms`, its Interest goes to
/// every next hop but `first_out` (where it went at `sent_ms`) and `in_face` (its downstream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct RtoTimer {
    /// When it fires.
    pub due_ms: u64,
    /// The PIT entry.
    pub pit: u32,
    /// When the Interest went to `first_out` (the out-record still says so if nothing else
    /// was sent there since: the timer is this entry's).
    pub sent_ms: u64,
    /// The last working next hop the Interest went to.
    pub first_out: FaceId,
    /// The downstream.
    pub in_face: FaceId,
}

/// The access strategy's measurements and timers, bounded.
#[derive(Debug)]
pub struct AccessTable {
    prefixes: Vec<Prefix>,
    faces: Vec<(FaceId, RttEstimator)>,
    timers: BinaryHeap<Reverse<RtoTimer>>,
    timer_capacity: usize,
    /// Prefixes replaced before they expired because the table had no room.
    pub evicted: u64,
    /// RTO timers not started because `timer_capacity` were running (the Interest then waits
    /// for its upstream alone).
    pub timers_refused: u64,
}

impl AccessTable {
    /// A table of `capacity` prefixes (rounded up to a power of two, at least 8) and as many
    /// running timers.
    pub fn new(capacity: usize) -> Self {
        let n = capacity.max(PROBE_WINDOW).next_power_of_two();
        AccessTable {
            prefixes: vec![Prefix::FREE; n],
            faces: vec![(NONE, RttEstimator::NEW); FACE_SLOTS],
            timers: BinaryHeap::with_capacity(n),
            timer_capacity: n,
            evicted: 0,
            timers_refused: 0,
        }
    }

    fn window(len: usize, hash: u64) -> impl Iterator<Item = usize> {
        let mask = len - 1;
        let start = hash as usize & mask;
        (0..PROBE_WINDOW).map(move |i| (start + i) & mask)
    }

    fn find(&self, hash: u64, depth: usize, now_ms: u64) -> Option<usize> {
        Self::window(self.prefixes.len(), hash).find(|&i| {
            let p = &self.prefixes[i];
            p.live(now_ms) && p.hash == hash && usize::from(p.depth) == depth
        })
    }

    /// The last working next hop of prefix (`hash`, `depth`) and its RTO in milliseconds, if
    /// the prefix has a live measurement.
    pub fn last_nexthop(&self, hash: u64, depth: usize, now_ms: u64) -> Option<(FaceId, u64)> {
        let p = &self.prefixes[self.find(hash, depth, now_ms)?];
        Some((p.last_nexthop, p.rtt.rto_us / 1000))
    }

    /// A Data of prefix (`hash`, `depth`) came from `face` `rtt_ms` after its Interest went
    /// there (NFD's `updateMeasurements`): the face's estimator takes the sample; the prefix's
    /// takes it too if `face` was already its last next hop, else `face` becomes it with the
    /// face's estimator; the prefix lives 8 s more.
    pub fn data(&mut self, hash: u64, depth: usize, face: FaceId, rtt_ms: u64, now_ms: u64) {
        let rtt_us = rtt_ms.saturating_mul(1000);
        let key = u64::from(face).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let fi = Self::window(FACE_SLOTS, key)
            .find(|&i| self.faces[i].0 == face)
            .or_else(|| Self::window(FACE_SLOTS, key).find(|&i| self.faces[i].0 == NONE))
            .unwrap_or(key as usize & (FACE_SLOTS - 1));
        if self.faces[fi].0 != face {
            self.faces[fi] = (face, RttEstimator::NEW);
        }
        self.faces[fi].1.add(rtt_us);
        let face_rtt = self.faces[fi].1;
        let slot = match self.find(hash, depth, now_ms) {
            Some(i) => i,
            None => {
                let len = self.prefixes.len();
                let free = Self::window(len, hash).find(|&i| !self.prefixes[i].live(now_ms));
                let i = free.unwrap_or_else(|| {
                    self.evicted += 1;
                    Self::window(len, hash)
                        .min_by_key(|&i| self.prefixes[i].expiry_ms)
                        .unwrap_or(0)
                });
                self.prefixes[i] = Prefix {
                    hash,
                    depth: depth.min(usize::from(u8::MAX)) as u8,
                    ..Prefix::FREE
                };
                i
            }
        };
        let p = &mut self.prefixes[slot];
        p.expiry_ms = now_ms.saturating_add(ACCESS_LIFETIME_MS);
        if p.last_nexthop == face {
            p.rtt.add(rtt_us);
        } else {
            p.last_nexthop = face;
            p.rtt = face_rtt;
        }
    }

    /// Starts an RTO timer; `false` (counted) when `timer_capacity` are running.
    pub fn schedule(&mut self, t: RtoTimer) -> bool {
        if self.timers.len() >= self.timer_capacity {
            self.timers_refused += 1;
            return false;
        }
        self.timers.push(Reverse(t));
        true
    }

    /// The next timer due at `now_ms`, removed.
    pub fn pop_due(&mut self, now_ms: u64) -> Option<RtoTimer> {
        if self.timers.peek()?.0.due_ms > now_ms {
            return None;
        }
        self.timers.pop().map(|Reverse(t)| t)
    }

    /// The name hashes of the live prefix measurements.
    pub fn live_hashes(&self, now_ms: u64) -> impl Iterator<Item = u64> + '_ {
        self.prefixes
            .iter()
            .filter(move |p| p.live(now_ms))
            .map(|p| p.hash)
    }

    /// Live prefix measurements.
    pub fn len(&self, now_ms: u64) -> usize {
        self.prefixes.iter().filter(|p| p.live(now_ms)).count()
    }

    /// Whether no prefix measurement is live.
    pub fn is_empty(&self, now_ms: u64) -> bool {
        self.len(now_ms) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_nexthop_follows_the_data_and_expires() {
        let mut t = AccessTable::new(8);
        assert_eq!(t.last_nexthop(5, 1, 0), None);
        t.data(5, 1, 3, 40, 0);
        // The face's estimator, one 40 ms sample: RTO clamped to 200 ms.
        assert_eq!(t.last_nexthop(5, 1, 10), Some((3, 200)));
        // Another face answers: it becomes the last next hop, with that face's estimator.
        t.data(9, 1, 4, 300, 10);
        t.data(5, 1, 4, 300, 20);
        let (face, rto) = t.last_nexthop(5, 1, 30).unwrap();
        assert_eq!(face, 4);
        assert!(rto > 300, "two samples of 300 ms: {rto}");
        assert_eq!(t.len(30), 2);
        assert_eq!(t.last_nexthop(5, 1, 20 + ACCESS_LIFETIME_MS), None);
        // Full: the prefix expiring first goes.
        for h in 100..110 {
            t.data(h, 2, 1, 10, 40 + h);
        }
        assert!(t.evicted > 0);
        assert!(t.len(200) <= 8);
    }

    #[test]
    fn timers_fire_in_order_and_are_bounded() {
        let mut t = AccessTable::new(8);
        let timer = |due_ms, pit| RtoTimer {
            due_ms,
            pit,
            sent_ms: 0,
            first_out: 1,
            in_face: 2,
        };
        for (i, due) in [30, 10, 20, 40, 50, 60, 70, 80].into_iter().enumerate() {
            assert!(t.schedule(timer(due, i as u32)));
        }
        assert!(!t.schedule(timer(5, 99)));
        assert_eq!(t.timers_refused, 1);
        assert_eq!(t.pop_due(5), None);
        let fired: Vec<u64> = std::iter::from_fn(|| t.pop_due(30))
            .map(|x| x.due_ms)
            .collect();
        assert_eq!(fired, [10, 20, 30]);
    }
}
