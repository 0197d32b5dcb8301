//! Multicast's afterNewNextHop (NFD 24.07's `Forwarder::onNewNextHop` and
//! `MulticastStrategy::afterNewNextHop`): an Interest pending under multicast goes to a next
//! hop added while it waits, so an Interest that came before its producer registered reaches
//! the producer when the route appears.
//!
//! NFD finds the PIT entries under the new next hop's prefix by enumerating its name tree;
//! this PIT is a hash table without prefix enumeration, so each engine watches instead a
//! fixed-capacity queue ([`NEW_NEXTHOP_WATCH`] entries, reserved when the engine is built) of
//! the multicast PIT entries it created, in arrival order, their Interest stored in the entry
//! (the copy the slow tier and the access strategy store; the slot's buffer is reused, so no
//! allocation once warm). Pushing one costs that copy and O(1); the queue's head drops the
//! entries gone (satisfied, expired, rejected) when a push finds it full, and an entry that
//! finds it full of live ones is not watched ([`NewNextHopCounters::unwatched`]).
//!
//! The FIB counts the next hops added ([`crate::table::fib::Fib::nexthop_additions`], one
//! atomic load per batch or tick; no lock, nothing shared but that counter). When it changes,
//! the engine scans its queue once: for each live entry still under multicast, a FIB lookup of
//! its name, and its Interest to every next hop of the longest match it has not been sent to
//! (the next hops added since), if one of its downstreams may use it: another face than that
//! downstream, and within scope (`/localhost` to local faces; `/localhop` from a non-local
//! downstream, or a HopLimit run out, to local faces). The scan costs at most
//! [`NEW_NEXTHOP_WATCH`] lookups per FIB change seen, off the per-packet path. As NFD, the
//! longest match decides: an entry under a longer prefix than the new next hop's is not
//! affected. A next hop removed and added again while the Interest waits gets it again, as in
//! NFD (whose `afterNewNextHop` sends to the new next hop whatever its out-record says): the FIB
//! logs its last [`ADDITION_LOG`] additions (prefix hash and face,
//! [`crate::table::fib::Fib::addition`]), and a next hop of the longest match the log shows
//! added after the entry was forwarded (or last scanned) gets the Interest even with an
//! out-record. When more additions came between two scans than the log holds, the scan sends
//! only to the next hops without an out-record, as before the log.

use std::collections::VecDeque;

use super::interest::{find_nonce_offset, Forward};
use super::*;
use crate::table::fib::ADDITION_LOG;

/// Most multicast PIT entries an engine watches for new next hops.
pub const NEW_NEXTHOP_WATCH: usize = 1024;

/// What the watch of multicast PIT entries did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NewNextHopCounters {
    /// Interests sent to a next hop added while they waited.
    pub sent: u64,
    /// Multicast PIT entries not watched: the queue was full of live entries.
    pub unwatched: u64,
    /// Scans of the queue (FIB changes seen).
    pub scans: u64,
}

/// A watched PIT entry: its index and its name entry (an index reused for another name is
/// not the entry watched).
#[derive(Debug, Clone, Copy)]
struct Watched {
    pit: u32,
    owner: u32,
    /// The FIB's additions count when the entry was forwarded, then when last scanned: a next
    /// hop added after it is new to the entry.
    seen: u64,
}

/// The additions a scan looks at: numbers, prefix hashes and faces, on the stack.
struct Added {
    /// `(number, prefix hash, face)`; the first `len` hold.
    log: [(u64, u64, u32); ADDITION_LOG],
    len: usize,
}

impl Added {
    /// Whether next hop `face` of the prefix hashed `hash` was added after addition `seen`.
    fn since(&self, seen: u64, hash: u64, face: u32) -> bool {
        self.log[..self.len]
            .iter()
            .any(|&(n, h, f)| n > seen && h == hash && f == face)
    }
}

/// The queue of watched multicast PIT entries and the FIB's count last seen.
#[derive(Debug)]
pub(super) struct Watch {
    queue: VecDeque<Watched>,
    seen_additions: u64,
}

impl Watch {
    /// An empty watch, its capacity reserved, having seen `additions`.
    pub(super) fn new(additions: u64) -> Self {
        Watch {
            queue: VecDeque::with_capacity(NEW_NEXTHOP_WATCH),
            seen_additions: additions,
        }
    }
}

impl Engine {
    /// Whether watched entry `w` is still the live PIT entry it was, its Interest stored.
    fn watched_live(&self, w: Watched) -> bool {
        self.table.pit_in_use(w.pit) && {
            let pe = self.table.pit(w.pit);
            pe.owner == w.owner && !pe.satisfied() && !pe.interest.is_empty()
        }
    }

    /// A new multicast PIT entry `f.p` (not one with a NextHopFaceId): stores its Interest and
    /// watches it for new next hops, if the queue has room once the entries gone leave.
    pub(super) fn watch_multicast(&mut self, f: &Forward<'_, '_>) {
        if !f.is_new || f.next_hop.is_some() {
            return;
        }
        while self.watch.queue.len() >= NEW_NEXTHOP_WATCH {
            match self.watch.queue.front() {
                Some(&w) if !self.watched_live(w) => {
                    self.watch.queue.pop_front();
                }
                _ => {
                    self.counters.new_nexthop.unwatched += 1;
                    return;
                }
            }
        }
        if !f.stored {
            let wire = f.interest.wire();
            let nonce_off = f.interest.nonce().and_then(|_| find_nonce_offset(wire));
            self.table.store_interest(f.p, wire, nonce_off, f.mark);
        }
        let owner = self.table.pit(f.p).owner;
        // Loaded after the entry's FIB lookup: an addition it did not see counts as new.
        let seen = self.fib.nexthop_additions();
        self.watch.queue.push_back(Watched {
            pit: f.p,
            owner,
            seen,
        });
    }

    /// If the FIB gained next hops since the last look, sends the watched Interests to them
    /// (see the [module docs](self)).
    pub(super) fn after_new_nexthops(&mut self, now_ms: u64) {
        let additions = self.fib.nexthop_additions();
        if additions == self.watch.seen_additions {
            return;
        }
        self.watch.seen_additions = additions;
        self.counters.new_nexthop.scans += 1;
        let oldest = self
            .watch
            .queue
            .iter()
            .map(|w| w.seen)
            .min()
            .unwrap_or(additions);
        let mut added = Added {
            log: [(0, 0, 0); ADDITION_LOG],
            len: 0,
        };
        // The log holds the last ADDITION_LOG additions at most.
        let first = (oldest + 1).max(additions.saturating_sub(ADDITION_LOG as u64 - 1));
        for n in first..=additions {
            if let Some((hash, face)) = self.fib.addition(n) {
                added.log[added.len] = (n, hash, face);
                added.len += 1;
            }
        }
        let guard = crossbeam_epoch::pin();
        for k in 0..self.watch.queue.len() {
            let w = self.watch.queue[k];
            if self.watched_live(w) {
                self.new_nexthops_of(now_ms, w, &added, &guard);
            }
            self.watch.queue[k].seen = additions;
        }
        // The entries gone leave the queue.
        let mut queue = std::mem::take(&mut self.watch.queue);
        queue.retain(|&w| self.watched_live(w));
        self.watch.queue = queue;
    }

    /// Sends watched entry `w`'s stored Interest to the next hops of its longest match that
    /// were added since it was last seen (`added`), or that it has no out-record for, and one
    /// of its downstreams may use.
    fn new_nexthops_of(
        &mut self,
        now_ms: u64,
        w: Watched,
        added: &Added,
        guard: &crossbeam_epoch::Guard,
    ) {
        let p = w.pit;
        let stored = std::mem::take(&mut self.table.pit_mut(p).interest);
        if let Ok(i) = InterestView::decode(&stored, &self.config.limits) {
            let name = i.name();
            let h = PrefixHashes::new(self.key, &name);
            if self.strategies.find(&name, &h) == StrategyKind::Multicast {
                let mut stats = LpmStats::default();
                let entry = self.fib.lookup(&name, &h, guard, &mut stats);
                self.counters.lpm.lookups += stats.lookups;
                self.counters.lpm.probes += stats.probes;
                let mut outgoing = None;
                let prefix_hash = entry.map_or(0, |e| e.hash);
                for n in entry.map_or(&[][..], |e| e.nexthops()) {
                    let pe = self.table.pit(p);
                    let readded = added.since(w.seen, prefix_hash, n.face);
                    let tried = !readded && pe.out_records.iter().any(|r| r.face == n.face);
                    let expiry = pe.expiry_ms;
                    if tried || !self.downstream_may_use(p, &i, n.face) {
                        continue;
                    }
                    let out = match &outgoing {
                        Some(o) => PacketRef::clone(o),
                        None => {
                            let (o, _) = self.stored_outgoing(&stored, &i, false);
                            outgoing = Some(o.clone());
                            o
                        }
                    };
                    let nonce = i.nonce().unwrap_or([0; 4]);
                    self.table.add_out_record(p, n.face, nonce, now_ms, expiry);
                    let pe = self.table.pit(p);
                    let (mark, from) = (pe.stored_mark, pe.in_records.first().map(|r| r.face));
                    self.send(n.face, SendKind::Interest, out, None, mark, from);
                    self.counters.new_nexthop.sent += 1;
                }
            }
        }
        self.table.pit_mut(p).interest = stored;
    }

    /// Whether some downstream of PIT entry `p` (Interest `i`) may have it sent to `out`
    /// (NFD's `isNextHopEligible` for a new next hop): not its own face, and within scope.
    fn downstream_may_use(&self, p: u32, i: &InterestView<'_>, out: FaceId) -> bool {
        let name = i.name();
        let out_local = self.face(out).local;
        let local_only = i.hop_limit() == Some(1) || is_under(&name, b"localhost");
        let localhop = is_under(&name, b"localhop");
        self.table.pit(p).in_records.iter().any(|r| {
            let from_remote = !self.face(r.face).local;
            let restrict = local_only || (localhop && from_remote);
            r.face != out && (out_local || !restrict)
        })
    }
}
