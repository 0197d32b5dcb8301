//! The creation budget of on-demand faces: a token bucket of new on-demand faces (UDP and
//! Ethernet) per second, with a burst, so that a flood of datagrams from new remotes (forged
//! sources, each of which would make a face and evict another) costs the router a bounded
//! amount of work, not a core.
//!
//! The budget takes nothing from faces that exist: a datagram from a remote with a face never
//! reaches it, and the eviction order (unproven faces first) is unchanged, so a consumer that
//! proved its address keeps its face whatever the flood. What the budget refuses is a new
//! face, and so that a new legitimate remote still gets one soon during a flood, a part of the
//! bucket (a quarter of the burst, [`RESERVE_DIVISOR`]) is kept for remotes whose host made no
//! on-demand face within [`HOST_RECENT_MS`]: a flood's hosts, making faces all the time, take
//! the tokens down to the reserve and no further, while a new host takes the reserve, which
//! the refill fills first. Hosts are remembered in a fixed table of [`HOST_MEMORY`] entries
//! indexed by a keyed hash of the host (a slot stays with its host while that host is recent:
//! a host whose slot is taken is not remembered, and looks new); a flood from more hosts than
//! that (every datagram from a forged random address) makes its hosts look new, and then the
//! reserve is first come, first served as the rest of the bucket is.

use std::hash::{BuildHasher, RandomState};

/// Default of [`super::FaceBounds::on_demand_faces_per_s`].
pub const DEFAULT_ON_DEMAND_FACES_PER_S: u64 = 1000;
/// Default of [`super::FaceBounds::on_demand_faces_burst`].
pub const DEFAULT_ON_DEMAND_FACES_BURST: u64 = 1000;
/// The reserve of the bucket for new hosts: the burst divided by this.
pub const RESERVE_DIVISOR: u64 = 4;
/// A host that made an on-demand face within this time is not new.
pub const HOST_RECENT_MS: u64 = 10_000;
/// Hosts remembered (a power of two).
pub const HOST_MEMORY: usize = 4096;

/// Tokens are counted in thousandths, so that a refill of one millisecond is exact.
const MILLI: u64 = 1000;

/// The creation budget's state.
#[derive(Debug)]
pub(super) struct CreationBudget {
    per_s: u64,
    burst: u64,
    /// Thousandths of a face.
    tokens: u64,
    last_ms: u64,
    /// Per slot: the host key's hash and the last time that host made a face (0: never).
    hosts: Box<[(u64, u64)]>,
    hasher: RandomState,
}

impl CreationBudget {
    /// A full bucket of `per_s` faces per second (0: no bound) and `burst` faces.
    pub(super) fn new(per_s: u64, burst: u64) -> CreationBudget {
        CreationBudget {
            per_s,
            burst: burst.max(1),
            tokens: burst.max(1).saturating_mul(MILLI),
            last_ms: 0,
            hosts: vec![(0, 0); HOST_MEMORY].into_boxed_slice(),
            hasher: RandomState::new(),
        }
    }

    /// The rate and burst in force.
    #[cfg(test)]
    fn bounds(&self) -> (u64, u64) {
        (self.per_s, self.burst)
    }

    /// Changes the rate and the burst (a reload): the tokens held stay, up to the new burst,
    /// and so do the hosts remembered; a bucket that had no bound starts full. The same bounds
    /// again change nothing.
    pub(super) fn set_bounds(&mut self, per_s: u64, burst: u64) {
        let burst = burst.max(1);
        if self.per_s == 0 {
            self.tokens = burst.saturating_mul(MILLI);
        }
        self.per_s = per_s;
        self.burst = burst;
        self.tokens = self.tokens.min(burst.saturating_mul(MILLI));
    }

    /// Takes one face for host `host` at `now_ms` if the bucket holds one for it (a host that
    /// made a face within [`HOST_RECENT_MS`] only above the reserve); the host is remembered.
    pub(super) fn take(&mut self, host: u128, now_ms: u64) -> bool {
        if self.per_s == 0 {
            return true;
        }
        let elapsed = now_ms.saturating_sub(self.last_ms);
        if elapsed > 0 {
            let cap = self.burst.saturating_mul(MILLI);
            let add = elapsed.saturating_mul(self.per_s);
            self.tokens = self.tokens.saturating_add(add).min(cap);
            self.last_ms = now_ms;
        }
        let hash = self.hasher.hash_one(host);
        let slot = &mut self.hosts[hash as usize & (HOST_MEMORY - 1)];
        let recent =
            slot.0 == hash && slot.1 != 0 && now_ms.saturating_sub(slot.1) < HOST_RECENT_MS;
        let floor = if recent {
            (self.burst / RESERVE_DIVISOR).saturating_mul(MILLI)
        } else {
            0
        };
        if self.tokens < floor + MILLI {
            return false;
        }
        self.tokens -= MILLI;
        // A slot another host made a face from recently stays that host's: this one is not
        // remembered (and stays new to the reserve) until the slot is free.
        if slot.0 == hash || slot.1 == 0 || now_ms.saturating_sub(slot.1) >= HOST_RECENT_MS {
            *slot = (hash, now_ms.max(1));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_burst_then_the_rate_and_a_pause_refills_the_burst_only() {
        let mut b = CreationBudget::new(100, 20);
        // 20 new hosts at once: the burst.
        assert!((0..20).all(|h| b.take(h, 1)));
        assert!(!b.take(99, 1), "the bucket is empty");
        // 100 per second: one per 10 ms.
        assert!(!b.take(99, 9));
        assert!(b.take(99, 11));
        assert!(!b.take(100, 11));
        // A long pause gives the burst back, no more.
        let later = 1_000_000;
        assert!((200..220).all(|h| b.take(h, later)));
        assert!(!b.take(300, later));
    }

    #[test]
    fn a_recent_host_stops_at_the_reserve_and_a_new_host_takes_it() {
        let mut b = CreationBudget::new(100, 20);
        // One host making faces all the time gets 15 of 20: the reserve is 5.
        let flood = (0..20).filter(|_| b.take(7, 1)).count();
        assert_eq!(flood, 15);
        // New hosts get the reserve.
        assert!((100..105).all(|h| b.take(h, 1)));
        assert!(!b.take(200, 1), "the reserve is spent too");
        // The refill goes to the reserve first: the flooding host waits for it to be full.
        assert!(!b.take(7, 51), "5 tokens back: the reserve only");
        assert!(b.take(300, 51));
        // Once the host has been quiet for HOST_RECENT_MS it is new again.
        let t = 1 + HOST_RECENT_MS;
        assert!(b.take(7, t));
        let mut off = CreationBudget::new(0, 1);
        assert!((0..10_000).all(|h| off.take(h, 0)));
    }

    #[test]
    fn new_bounds_keep_the_tokens_up_to_the_new_burst() {
        let mut b = CreationBudget::new(100, 20);
        assert!((0..10).all(|h| b.take(h, 1)));
        // 10 tokens left; a burst of 4 keeps 4, a rate of 1 per second refills slowly.
        b.set_bounds(1, 4);
        assert_eq!(b.bounds(), (1, 4));
        assert_eq!((100..110).filter(|&h| b.take(h, 1)).count(), 4);
        assert!(!b.take(200, 500));
        assert!(b.take(200, 1_001));
        // Turned off, everything passes; turned on again, the bucket starts full.
        b.set_bounds(0, 4);
        assert!((300..400).all(|h| b.take(h, 1_001)));
        b.set_bounds(10, 6);
        assert_eq!((400..420).filter(|&h| b.take(h, 1_001)).count(), 6);
    }
}
