//! ASF's measurements: NFD's Adaptive Smoothed RTT-based Forwarding keeps, per name prefix
//! (the FIB entry's prefix, the namespace), per upstream face, the last RTT, a smoothed RTT and
//! a retransmission timeout, and ranks the faces by them.
//!
//! As NFD 24.07's `AsfMeasurements`, `AsfProbingModule` and `AsfStrategy`:
//! - a face's last RTT is a measurement (the face works), none yet, or a timeout; forwarding
//!   ranks working faces first by smoothed RTT, then unmeasured ones, then timed-out ones, each
//!   group by cost and then face id;
//! - forwarding to a face starts its retransmission timeout (the RTT estimator's RTO: 1 s before
//!   any sample, SRTT + 4 RTTVAR clamped to 200 ms – 60 s after), unless one runs; a Data from
//!   the face cancels it and clears the face's timeout count; a timeout counts, and the
//!   `max-timeouts`-th in a row marks the face timed out (a Nack does at once);
//! - a namespace is probed: first at a random time within 5 s of its first use, then every
//!   `probing-interval` after each probe; a probe goes to an unmeasured face if there is one,
//!   else to a face drawn with a probability falling with its probing rank;
//! - measurements live 5 minutes after their last use.
//!
//! Unlike NFD, which schedules timers, the table has no clock: a timeout that is due is applied
//! when its face is next looked at (ranking, Data, Nack), which orders events as the timer
//! would have. The table's capacity is fixed when it is built: a namespace that finds no room
//! in its probe window replaces the one expiring first (counted in [`AsfTable::evicted`]).

use crate::fw::rtt::RttEstimator;
use crate::table::pit_cs::{FaceId, NONE};

/// Face records per namespace (more next hops than this are ranked unmeasured).
pub const ASF_FACES: usize = 8;

/// Most candidates ranked for a probe (a FIB entry has fewer next hops).
const MAX_CANDIDATES: usize = 16;

/// Slots probed for a namespace.
const PROBE_WINDOW: usize = 8;

/// How long measurements live after their last use (NFD: 5 minutes).
pub const MEASUREMENTS_LIFETIME_MS: u64 = 300_000;

/// The first probe of a namespace is due within this long of its first use (NFD: 0–5 s).
const FIRST_PROBE_WITHIN_MS: u64 = 5_000;

/// A face's last RTT: NFD's RTT_NO_MEASUREMENT, RTT_TIMEOUT, or a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LastRtt {
    /// No Data measured yet.
    #[default]
    None,
    /// The face timed out (or Nacked).
    Timeout,
    /// The last RTT measured, in microseconds.
    Measured(u64),
}

/// One face's measurements in a namespace.
#[derive(Debug, Clone, Copy)]
pub struct FaceMeasure {
    /// The face (`NONE`: a free record).
    pub face: FaceId,
    /// When the record expires.
    pub expiry_ms: u64,
    /// The last RTT.
    pub last_rtt: LastRtt,
    /// The RTT estimator (smoothed RTT, RTO).
    pub rtt: RttEstimator,
    /// Timeouts counted since the last Data or recorded timeout.
    pub n_timeouts: u32,
    /// The running retransmission timeout: when it fires, and the full-name hash of the
    /// Interest that started it.
    timeout: Option<(u64, u64)>,
}

impl FaceMeasure {
    const FREE: FaceMeasure = FaceMeasure {
        face: NONE,
        expiry_ms: 0,
        last_rtt: LastRtt::None,
        rtt: RttEstimator::NEW,
        n_timeouts: 0,
        timeout: None,
    };

    /// A Data measured `rtt_us`.
    fn record_rtt(&mut self, rtt_us: u64) {
        self.last_rtt = LastRtt::Measured(rtt_us);
        self.rtt.add(rtt_us);
    }

    /// The rank for forwarding (lower is better): working by SRTT, unmeasured, timed out.
    fn forwarding_group(&self) -> (u8, u64) {
        match self.last_rtt {
            LastRtt::Measured(_) => (1, self.rtt.srtt_us),
            LastRtt::None => (2, u64::MAX),
            LastRtt::Timeout => (3, u64::MAX),
        }
    }

    /// The rank for probing (lower is better): unmeasured, working by SRTT, timed out.
    fn probing_group(&self) -> (u8, u64) {
        match self.last_rtt {
            LastRtt::None => (1, u64::MAX),
            LastRtt::Measured(_) => (2, self.rtt.srtt_us),
            LastRtt::Timeout => (3, u64::MAX),
        }
    }
}

/// One namespace's measurements.
#[derive(Debug, Clone)]
struct Namespace {
    /// Keyed hash of the prefix (with `depth`, the key).
    hash: u64,
    depth: u8,
    in_use: bool,
    expiry_ms: u64,
    /// When the next probe is due (`None`: the first one is not scheduled yet).
    probe_at_ms: Option<u64>,
    /// The strategy's `max-timeouts` when the namespace was last used for forwarding.
    max_timeouts: u32,
    faces: [FaceMeasure; ASF_FACES],
}

impl Namespace {
    const FREE: Namespace = Namespace {
        hash: 0,
        depth: 0,
        in_use: false,
        expiry_ms: 0,
        probe_at_ms: None,
        max_timeouts: crate::fw::strategy::ASF_MAX_TIMEOUTS,
        faces: [FaceMeasure::FREE; ASF_FACES],
    };

    fn live(&self, now_ms: u64) -> bool {
        self.in_use && self.expiry_ms > now_ms
    }
}

/// A candidate next hop for ranking: face and cost.
pub type Candidate = (FaceId, u32);

/// ASF's measurements of one engine, bounded.
#[derive(Debug)]
pub struct AsfTable {
    slots: Vec<Namespace>,
    rng: u64,
    /// Namespaces replaced before they expired because the table had no room.
    pub evicted: u64,
}

impl AsfTable {
    /// A table of `capacity` namespaces (rounded up to a power of two, at least
    /// 8, the slots probed for one prefix); `seed` seeds the probing draws.
    pub fn new(capacity: usize, seed: u64) -> Self {
        let n = capacity.max(PROBE_WINDOW).next_power_of_two();
        AsfTable {
            slots: vec![Namespace::FREE; n],
            rng: seed | 1,
            evicted: 0,
        }
    }

    /// Capacity in namespaces.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The name hashes of the live namespaces.
    pub fn live_hashes(&self, now_ms: u64) -> impl Iterator<Item = u64> + '_ {
        self.slots
            .iter()
            .filter(move |s| s.live(now_ms))
            .map(|s| s.hash)
    }

    /// Live namespaces.
    pub fn len(&self, now_ms: u64) -> usize {
        self.slots.iter().filter(|s| s.live(now_ms)).count()
    }

    /// Whether no namespace is live.
    pub fn is_empty(&self, now_ms: u64) -> bool {
        self.len(now_ms) == 0
    }

    fn window(&self, hash: u64) -> impl Iterator<Item = usize> {
        let mask = self.slots.len() - 1;
        let start = hash as usize & mask;
        (0..PROBE_WINDOW).map(move |i| (start + i) & mask)
    }

    /// The live namespace of prefix (`hash`, `depth`), if any.
    pub fn find(&self, hash: u64, depth: usize, now_ms: u64) -> Option<usize> {
        self.window(hash).find(|&i| {
            let s = &self.slots[i];
            s.live(now_ms) && s.hash == hash && usize::from(s.depth) == depth
        })
    }

    /// The namespace of prefix (`hash`, `depth`), created if need be; its lifetime extended,
    /// and its faces' timeouts counted to `max_timeouts` from now on.
    pub fn get_or_create(
        &mut self,
        hash: u64,
        depth: usize,
        now_ms: u64,
        max_timeouts: u32,
    ) -> usize {
        let slot = match self.find(hash, depth, now_ms) {
            Some(i) => i,
            None => {
                let free = self.window(hash).find(|&i| !self.slots[i].live(now_ms));
                let i = free.unwrap_or_else(|| {
                    self.evicted += 1;
                    self.window(hash)
                        .min_by_key(|&i| self.slots[i].expiry_ms)
                        .unwrap_or(0)
                });
                self.slots[i] = Namespace {
                    hash,
                    depth: depth.min(usize::from(u8::MAX)) as u8,
                    in_use: true,
                    ..Namespace::FREE
                };
                i
            }
        };
        self.slots[slot].expiry_ms = now_ms.saturating_add(MEASUREMENTS_LIFETIME_MS);
        self.slots[slot].max_timeouts = max_timeouts;
        slot
    }

    /// The measurements of `face` in namespace `slot`, its due timeout applied first.
    pub fn face(&mut self, slot: usize, face: FaceId, now_ms: u64) -> Option<&FaceMeasure> {
        let i = self.face_index(slot, face, now_ms)?;
        self.fire_due(slot, i, now_ms);
        Some(&self.slots[slot].faces[i])
    }

    /// The measurements of `face` in namespace `slot` as they stand (a due timeout not
    /// applied yet).
    pub fn peek(&self, slot: usize, face: FaceId, now_ms: u64) -> Option<&FaceMeasure> {
        let i = self.face_index(slot, face, now_ms)?;
        Some(&self.slots[slot].faces[i])
    }

    fn face_index(&self, slot: usize, face: FaceId, now_ms: u64) -> Option<usize> {
        self.slots[slot]
            .faces
            .iter()
            .position(|f| f.face == face && f.expiry_ms > now_ms)
    }

    /// Applies the timeout of face record `i` if it is due (NFD's timer firing).
    fn fire_due(&mut self, slot: usize, i: usize, now_ms: u64) {
        let f = &self.slots[slot].faces[i];
        if let Some((at, _)) = f.timeout {
            if at <= now_ms {
                self.slots[slot].faces[i].timeout = None;
                self.timeout_or_nack(slot, i, at, false);
            }
        }
    }

    /// NFD's `onTimeoutOrNack`: counts the timeout; a Nack, or the `max_timeouts`-th timeout,
    /// marks the face timed out and restarts the count; otherwise the lifetime is extended.
    fn timeout_or_nack(&mut self, slot: usize, i: usize, now_ms: u64, nack: bool) {
        let max = self.slots[slot].max_timeouts;
        let f = &mut self.slots[slot].faces[i];
        f.n_timeouts = f.n_timeouts.saturating_add(1);
        if f.n_timeouts < max && !nack {
            f.expiry_ms = now_ms.saturating_add(MEASUREMENTS_LIFETIME_MS);
            f.timeout = None;
        } else {
            f.last_rtt = LastRtt::Timeout;
            f.timeout = None;
            f.n_timeouts = 0;
        }
    }

    /// The record of `face` in `slot`, created (unmeasured) if need be; `None` when the
    /// namespace has no free record for it.
    fn face_or_create(&mut self, slot: usize, face: FaceId, now_ms: u64) -> Option<usize> {
        if let Some(i) = self.face_index(slot, face, now_ms) {
            return Some(i);
        }
        let faces = &mut self.slots[slot].faces;
        let i = faces
            .iter()
            .position(|f| f.face == NONE || f.expiry_ms <= now_ms)?;
        faces[i] = FaceMeasure {
            face,
            expiry_ms: now_ms.saturating_add(MEASUREMENTS_LIFETIME_MS),
            ..FaceMeasure::FREE
        };
        Some(i)
    }

    /// An Interest named `name_hash` was forwarded to `face` (not a retry to the face tried
    /// longest ago): the face's record lives on and its timeout starts if none runs.
    pub fn forwarded(&mut self, slot: usize, face: FaceId, name_hash: u64, now_ms: u64) {
        let Some(i) = self.face_or_create(slot, face, now_ms) else {
            return;
        };
        self.fire_due(slot, i, now_ms);
        let f = &mut self.slots[slot].faces[i];
        f.expiry_ms = now_ms.saturating_add(MEASUREMENTS_LIFETIME_MS);
        if f.timeout.is_none() {
            f.timeout = Some((now_ms.saturating_add(f.rtt.rto_us / 1000), name_hash));
        }
    }

    /// A Data for `name_hash` came from `face`, `rtt_ms` after the Interest went there
    /// (`None`: no out-record): the RTT is recorded, the timeout cancelled if it was this
    /// Interest's, the timeout count cleared. Whether the face had measurements here.
    pub fn data(
        &mut self,
        slot: usize,
        face: FaceId,
        rtt_ms: Option<u64>,
        name_hash: u64,
        now_ms: u64,
    ) -> bool {
        let Some(i) = self.face_index(slot, face, now_ms) else {
            return false;
        };
        self.fire_due(slot, i, now_ms);
        let f = &mut self.slots[slot].faces[i];
        if let Some(rtt) = rtt_ms {
            f.record_rtt(rtt.saturating_mul(1000));
        }
        f.expiry_ms = now_ms.saturating_add(MEASUREMENTS_LIFETIME_MS);
        if f.timeout.is_some_and(|(_, n)| n == name_hash) {
            f.timeout = None;
        }
        f.n_timeouts = 0;
        true
    }

    /// A Nack came from `face`: it counts as timed out at once.
    pub fn nack(&mut self, slot: usize, face: FaceId, now_ms: u64) {
        if let Some(i) = self.face_index(slot, face, now_ms) {
            self.fire_due(slot, i, now_ms);
            self.timeout_or_nack(slot, i, now_ms, true);
        }
    }

    /// The best face for forwarding among `candidates` (in cost order).
    pub fn best(&mut self, slot: usize, candidates: &[Candidate], now_ms: u64) -> Option<FaceId> {
        let mut best: Option<((u8, u64, u32, FaceId), FaceId)> = None;
        for &(face, cost) in candidates {
            let (g, srtt) = self
                .face(slot, face, now_ms)
                .map_or((2, u64::MAX), |f| f.forwarding_group());
            let rank = (g, srtt, cost, face);
            if best.is_none_or(|(b, _)| rank < b) {
                best = Some((rank, face));
            }
        }
        best.map(|(_, f)| f)
    }

    /// Whether a probe is due in namespace `slot` (the first one is scheduled here, at a
    /// random time within 5 s).
    pub fn probing_due(&mut self, slot: usize, now_ms: u64) -> bool {
        let at = match self.slots[slot].probe_at_ms {
            Some(at) => at,
            None => {
                let first = self.random() % (FIRST_PROBE_WITHIN_MS + 1);
                let at = now_ms.saturating_add(first);
                self.slots[slot].probe_at_ms = Some(at);
                at
            }
        };
        at <= now_ms
    }

    /// A probe went out in `slot`: the next is due `interval_ms` from now.
    pub fn probed(&mut self, slot: usize, now_ms: u64, interval_ms: u32) {
        self.slots[slot].probe_at_ms = Some(now_ms.saturating_add(u64::from(interval_ms)));
    }

    /// The face to probe among `candidates` (in cost order; the face used and the incoming face
    /// already left out): an unmeasured one if any (the best by cost), else one drawn with
    /// probability (n + 1 − rank) / (n (n + 1) / 2) by probing rank.
    pub fn probe_face(
        &mut self,
        slot: usize,
        candidates: &[Candidate],
        now_ms: u64,
    ) -> Option<FaceId> {
        let mut ranked = [((0u8, 0u64, 0u32, 0 as FaceId), 0 as FaceId); MAX_CANDIDATES];
        let mut n = 0;
        for &(face, cost) in candidates.iter().take(ranked.len()) {
            let (g, srtt) = self
                .face(slot, face, now_ms)
                .map_or((1, u64::MAX), |f| f.probing_group());
            ranked[n] = ((g, srtt, cost, face), face);
            n += 1;
        }
        let ranked = &mut ranked[..n];
        ranked.sort_unstable();
        let &((top_group, ..), top) = ranked.first()?;
        if top_group == 1 {
            return Some(top);
        }
        let n = ranked.len() as u64;
        let sum = n * (n + 1) / 2;
        let mut r = self.random() % sum;
        for (j, &(_, face)) in ranked.iter().enumerate() {
            let weight = n - j as u64;
            if r < weight {
                return Some(face);
            }
            r -= weight;
        }
        ranked.last().map(|&(_, f)| f)
    }

    /// A fresh nonce for a probe.
    pub fn nonce(&mut self) -> [u8; 4] {
        (self.random() as u32).to_be_bytes()
    }

    /// The probing draws (deterministic for a seed).
    fn random(&mut self) -> u64 {
        xorshift(&mut self.rng)
    }
}

/// xorshift64*: the next number from `state` (non-zero), which it advances.
pub(crate) fn xorshift(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u32 = 3;

    #[test]
    fn ranking_groups_as_nfd() {
        let mut t = AsfTable::new(16, 7);
        let s = t.get_or_create(42, 1, 0, MAX);
        // Face 1 slow, face 2 fast, face 3 unmeasured, face 4 timed out (by a Nack).
        for (face, rtt) in [(1, 80), (2, 20)] {
            t.forwarded(s, face, 9, 0);
            t.data(s, face, Some(rtt), 9, rtt);
        }
        t.forwarded(s, 3, 9, 0);
        t.forwarded(s, 4, 9, 0);
        t.nack(s, 4, 1);
        let all = [(4, 0), (3, 0), (1, 5), (2, 10)];
        assert_eq!(t.best(s, &all, 100), Some(2));
        assert_eq!(t.best(s, &[(4, 0), (3, 5)], 100), Some(3));
        assert_eq!(t.best(s, &[(4, 0)], 100), Some(4));
        // Probing prefers an unmeasured face, here one never seen.
        assert_eq!(t.probe_face(s, &[(1, 5), (9, 50)], 100), Some(9));
        // Among measured faces, every one is drawn sometimes, the better more often.
        let mut hits = [0u32; 5];
        for _ in 0..600 {
            let f = t.probe_face(s, &[(1, 5), (2, 10), (4, 0)], 100).unwrap();
            hits[f as usize] += 1;
        }
        assert!(
            hits[2] > hits[1] && hits[1] > hits[4] && hits[4] > 0,
            "{hits:?}"
        );
    }

    #[test]
    fn timeouts_count_to_max_then_mark_the_face() {
        let mut t = AsfTable::new(16, 7);
        let s = t.get_or_create(1, 1, 0, MAX);
        t.forwarded(s, 1, 5, 0);
        t.data(s, 1, Some(10), 5, 10);
        let rto_ms = 200; // 10 ms RTT: the RTO is clamped to its 200 ms minimum
        let mut now = 100;
        for n in 1..MAX {
            t.forwarded(s, 1, 5, now);
            now += rto_ms;
            let f = *t.face(s, 1, now).unwrap();
            assert_eq!((f.n_timeouts, f.last_rtt), (n, LastRtt::Measured(10_000)));
        }
        t.forwarded(s, 1, 5, now);
        now += rto_ms;
        let f = *t.face(s, 1, now).unwrap();
        assert_eq!((f.n_timeouts, f.last_rtt), (0, LastRtt::Timeout));
        // A Data clears the count and makes the face work again; one for another name does
        // not cancel the running timeout.
        t.forwarded(s, 1, 5, now);
        t.data(s, 1, Some(30), 6, now + 30);
        assert_eq!(
            t.face(s, 1, now + 31).unwrap().last_rtt,
            LastRtt::Measured(30_000)
        );
        assert_eq!(t.face(s, 1, now + rto_ms).unwrap().n_timeouts, 1);
    }

    #[test]
    fn bounded_with_expiry_and_eviction() {
        let mut t = AsfTable::new(8, 1);
        assert_eq!(t.capacity(), 8);
        let slots: Vec<usize> = (0..8u64).map(|h| t.get_or_create(h, 1, h, MAX)).collect();
        assert_eq!(t.len(10), 8);
        assert_eq!(t.evicted, 0);
        // Full: the next namespace replaces the one expiring first (created at t = 0).
        let s = t.get_or_create(100, 1, 20, MAX);
        assert_eq!((s, t.evicted), (slots[0], 1));
        assert_eq!(t.find(0, 1, 20), None);
        // Measurements expire after their lifetime.
        assert!(t.find(100, 1, 20 + MEASUREMENTS_LIFETIME_MS - 1).is_some());
        assert!(t.find(100, 1, 20 + MEASUREMENTS_LIFETIME_MS).is_none());
        // Probing: the first probe within 5 s, then every interval after a probe.
        let s = t.get_or_create(5, 2, 0, MAX);
        let first = (0..=5_000).find(|&now| t.probing_due(s, now)).unwrap();
        assert!(first <= 5_000);
        t.probed(s, first, 1_000);
        assert!(!t.probing_due(s, first + 999));
        assert!(t.probing_due(s, first + 1_000));
    }
}
