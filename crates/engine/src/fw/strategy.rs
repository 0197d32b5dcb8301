//! Forwarding strategies and the strategy-choice table.
//!
//! - **best-route**: forward a new Interest to the lowest-cost eligible next hop; a
//!   retransmission (new nonce, same pending Interest) is suppressed while within an exponentially
//!   growing interval (10 ms doubling up to 250 ms, as NFD's best-route), otherwise it goes to the
//!   next unused next hop (no unexpired out-record), or the one tried longest ago.
//! - **multicast**: forward to every eligible next hop, each subject to the same suppression.
//! - **asf** (NFD's Adaptive Smoothed RTT-based Forwarding): forward to the working next hop
//!   with the lowest smoothed RTT, and probe another now and then ([`crate::fw::asf`]).
//! - **random**: forward every Interest, a retransmission too, to one eligible next hop drawn at
//!   random; none eligible: Nack NoRoute (NFD's random strategy).
//! - **access**: a new Interest goes to the next hop that last brought Data under its longest
//!   measured prefix, and after that prefix's RTO to every other next hop; unmeasured, and a
//!   retransmission, to every next hop (NFD's access strategy, [`crate::fw::access`]).
//!
//! Retransmission suppression is NFD 24.07's: best-route decides per PIT entry (a new Interest
//! when no out-record is pending; a retransmission within the entry's interval of the last
//! transmission is suppressed), multicast and ASF per upstream (each out-record keeps its own
//! interval, grown by each retransmission forwarded to it).
//!
//! Each choice carries its parameters ([`Strategy`]): the retransmission-suppression interval's
//! start, cap and multiplier (NFD's `retx-suppression-initial`, `-max`, `-multiplier`), and
//! ASF's `probing-interval` and `max-timeouts`.
//!
//! A next hop is eligible when it is not the face the Interest came from and the scope rules
//! allow it (see [`crate::fw::pipeline`]). When every upstream has Nacked, the downstreams of
//! best-route, ASF and random get a Nack with the least severe reason (NFD's `processNack`).
//!
//! Multicast and access override neither NFD's `afterReceiveNack` nor (multicast) its
//! `onInterestLoop`, and NFD 24.07's multicast rejects nothing: under them an entry whose
//! upstreams all Nacked, or a new Interest multicast can send nowhere, stays in the PIT until
//! its lifetime ends (unsatisfied then), and a looping Interest under multicast is dropped
//! without a Nack Duplicate ([`StrategyKind::nacks_downstream`]). Access rejects a new Interest
//! it can send nowhere, without a Nack.

use std::collections::HashMap;

use crate::hash::{name_hash, HashKey, PrefixHashes};
use crate::table::pit_cs::{FaceId, OutRecord};
use wire::lp::NackReason;
use wire::Name;

/// First retransmission-suppression interval.
pub const RETX_INITIAL_MS: u32 = 10;
/// Largest retransmission-suppression interval.
pub const RETX_MAX_MS: u32 = 250;

/// The strategies an operator can choose per name prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StrategyKind {
    /// Lowest-cost next hop, with retransmission suppression.
    BestRoute,
    /// Every next hop.
    Multicast,
    /// Adaptive Smoothed RTT-based Forwarding.
    Asf,
    /// An eligible next hop drawn at random, every Interest (no suppression).
    Random,
    /// The last next hop that answered under the prefix, then every next hop after its RTO.
    Access,
}

impl StrategyKind {
    /// The NFD strategy name.
    pub fn nfd_name(self) -> &'static str {
        match self {
            StrategyKind::BestRoute => "/localhost/nfd/strategy/best-route",
            StrategyKind::Multicast => "/localhost/nfd/strategy/multicast",
            StrategyKind::Asf => "/localhost/nfd/strategy/asf",
            StrategyKind::Random => "/localhost/nfd/strategy/random",
            StrategyKind::Access => "/localhost/nfd/strategy/access",
        }
    }

    /// Whether the strategy tells downstreams about a failure with a Nack: after every upstream
    /// Nacked (NFD's `processNack`, which best-route, ASF and random call from
    /// `afterReceiveNack`) and (all but multicast) on a looping Interest (`onInterestLoop`'s
    /// Nack Duplicate). NFD 24.07's multicast and access strategies keep the base
    /// `afterReceiveNack`, which does nothing: the PIT entry waits for its expiry. Multicast also
    /// overrides `onInterestLoop` to do nothing; access keeps the base one (Nack Duplicate).
    pub fn nacks_downstream(self, on_loop: bool) -> bool {
        match self {
            StrategyKind::Multicast => false,
            StrategyKind::Access => on_loop,
            _ => true,
        }
    }

    /// Parses an NFD strategy name (`.../best-route`, `.../multicast`), optionally versioned
    /// with a version component (`v=5`) or the older marker form (`%FD%05`).
    pub fn from_nfd_name(name: &Name) -> Option<Self> {
        let comps = &name.components;
        let is_version = |c: &wire::Component| {
            u32::from(c.typ) == wire::tt::VERSION
                || (u32::from(c.typ) == wire::tt::GENERIC_COMPONENT
                    && c.value.first() == Some(&0xFD))
        };
        let last = match comps.last() {
            Some(c) if is_version(c) => comps.get(comps.len().checked_sub(2)?)?,
            other => other?,
        };
        if u32::from(last.typ) != wire::tt::GENERIC_COMPONENT {
            return None;
        }
        match last.value.as_slice() {
            b"best-route" => Some(StrategyKind::BestRoute),
            b"multicast" => Some(StrategyKind::Multicast),
            b"asf" => Some(StrategyKind::Asf),
            b"random" => Some(StrategyKind::Random),
            b"access" => Some(StrategyKind::Access),
            _ => None,
        }
    }
}

/// NFD's exponential retransmission suppression: a retransmission within `interval` of the
/// last transmission is suppressed; the interval starts at `initial_ms` and, after each
/// retransmission forwarded, is multiplied by `multiplier` up to `max_ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetxSuppression {
    /// First interval (`retx-suppression-initial`, > 0).
    pub initial_ms: u32,
    /// Largest interval (`retx-suppression-max`, >= `initial_ms`).
    pub max_ms: u32,
    /// Growth factor (`retx-suppression-multiplier`, >= 1).
    pub multiplier: f32,
}

impl RetxSuppression {
    /// NFD's defaults: 10 ms, doubling, up to 250 ms.
    pub const DEFAULT: RetxSuppression = RetxSuppression {
        initial_ms: RETX_INITIAL_MS,
        max_ms: RETX_MAX_MS,
        multiplier: 2.0,
    };

    /// The interval after a retransmission was forwarded (the initial one after 0), truncated
    /// to whole milliseconds as NFD's duration cast does.
    #[inline]
    pub fn next(&self, interval_ms: u32) -> u32 {
        if interval_ms == 0 {
            return self.initial_ms;
        }
        let grown = (f64::from(interval_ms) * f64::from(self.multiplier)) as u64;
        grown.min(u64::from(self.max_ms)) as u32
    }
}

impl Default for RetxSuppression {
    fn default() -> Self {
        RetxSuppression::DEFAULT
    }
}

/// ASF's default probing interval (NFD: 1 minute).
pub const ASF_PROBING_INTERVAL_MS: u32 = 60_000;
/// ASF's shortest probing interval (NFD: 1 second).
pub const ASF_MIN_PROBING_INTERVAL_MS: u32 = 1_000;
/// ASF's default count of timeouts before a face is considered not working.
pub const ASF_MAX_TIMEOUTS: u32 = 3;

/// A strategy instance: the strategy and its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Strategy {
    /// Which strategy.
    pub kind: StrategyKind,
    /// Retransmission suppression (every strategy).
    pub retx: RetxSuppression,
    /// ASF: how often another face is probed (`probing-interval`, >= 1 s).
    pub probing_interval_ms: u32,
    /// ASF: timeouts in a row before a face counts as not working (`max-timeouts`).
    pub max_timeouts: u32,
}

impl Strategy {
    /// `kind` with NFD's default parameters.
    pub const fn new(kind: StrategyKind) -> Self {
        Strategy {
            kind,
            retx: RetxSuppression::DEFAULT,
            probing_interval_ms: ASF_PROBING_INTERVAL_MS,
            max_timeouts: ASF_MAX_TIMEOUTS,
        }
    }
}

impl From<StrategyKind> for Strategy {
    fn from(kind: StrategyKind) -> Self {
        Strategy::new(kind)
    }
}

/// Which strategy governs which prefix (longest prefix wins; `/` defaults to best-route).
#[derive(Debug, Clone)]
pub struct StrategyChoice {
    key: HashKey,
    /// Choices by prefix hash: (prefix, its Name TLV-VALUE bytes kept for the per-packet
    /// comparison, strategy).
    by_hash: HashMap<u64, Vec<(Name, Vec<u8>, Strategy)>>,
    max_depth: usize,
    default: Strategy,
}

impl StrategyChoice {
    /// A table with best-route at `/`.
    pub fn new(key: HashKey) -> Self {
        StrategyChoice {
            key,
            by_hash: HashMap::new(),
            max_depth: 0,
            default: Strategy::new(StrategyKind::BestRoute),
        }
    }

    /// Sets the strategy of `prefix`, with NFD's default parameters.
    pub fn set(&mut self, prefix: &Name, kind: StrategyKind) {
        self.set_instance(prefix, Strategy::new(kind));
    }

    /// Sets the strategy of `prefix`, with its parameters.
    pub fn set_instance(&mut self, prefix: &Name, kind: Strategy) {
        if prefix.is_empty() {
            self.default = kind;
            return;
        }
        let v = self.by_hash.entry(name_hash(self.key, prefix)).or_default();
        match v.iter_mut().find(|(n, _, _)| n == prefix) {
            Some(e) => e.2 = kind,
            None => {
                let mut value = Vec::new();
                for c in &prefix.components {
                    c.encode(&mut value);
                }
                v.push((prefix.clone(), value, kind))
            }
        }
        self.max_depth = self.max_depth.max(prefix.len());
    }

    /// Removes the choice at `prefix` (the root choice returns to best-route).
    pub fn unset(&mut self, prefix: &Name) -> bool {
        if prefix.is_empty() {
            self.default = Strategy::new(StrategyKind::BestRoute);
            return true;
        }
        let h = name_hash(self.key, prefix);
        let Some(v) = self.by_hash.get_mut(&h) else {
            return false;
        };
        let before = v.len();
        v.retain(|(n, _, _)| n != prefix);
        let removed = v.len() != before;
        if v.is_empty() {
            self.by_hash.remove(&h);
        }
        self.max_depth = self
            .by_hash
            .values()
            .flatten()
            .map(|(n, _, _)| n.len())
            .max()
            .unwrap_or(0);
        removed
    }

    /// Every choice, `/` first.
    pub fn list(&self) -> Vec<(Name, StrategyKind)> {
        let mut v: Vec<(Name, StrategyKind)> = self
            .by_hash
            .values()
            .flatten()
            .map(|(n, _, k)| (n.clone(), k.kind))
            .collect();
        v.sort();
        v.insert(0, (Name::new(), self.default.kind));
        v
    }

    /// Whether any prefix but `/` has a choice (else [`StrategyChoice::find`] needs no prefix
    /// hashes).
    #[inline]
    pub fn per_prefix(&self) -> bool {
        !self.by_hash.is_empty()
    }

    /// The strategy for a name: probes at most `min(n, deepest choice)` prefixes, none when only
    /// the root is set.
    #[inline]
    pub fn find(&self, name: &wire::NameView<'_>, h: &PrefixHashes) -> StrategyKind {
        self.find_instance(name, h).kind
    }

    /// The strategy instance (with its parameters) for a name; as [`StrategyChoice::find`].
    #[inline]
    pub fn find_instance(&self, name: &wire::NameView<'_>, h: &PrefixHashes) -> &Strategy {
        if self.by_hash.is_empty() {
            return &self.default;
        }
        let top = h.len().min(self.max_depth);
        for d in (1..=top).rev() {
            let (Some(hash), Some(end)) = (h.prefix(d, name), h.prefix_end(d, name)) else {
                continue;
            };
            if let Some(v) = self.by_hash.get(&hash) {
                let bytes = &name.value()[..end];
                // No allocation: the prefix's bytes were encoded when it was set.
                if let Some((_, _, k)) = v.iter().find(|(_, value, _)| value[..] == *bytes) {
                    return k;
                }
            }
        }
        &self.default
    }
}

/// The least severe of two Nack reasons (Congestion < Duplicate < NoRoute < others), as NFD
/// reports to downstreams when all upstreams Nacked.
pub fn less_severe(a: NackReason, b: NackReason) -> NackReason {
    fn rank(r: NackReason) -> u8 {
        match r {
            NackReason::Congestion => 0,
            NackReason::Duplicate => 1,
            NackReason::NoRoute => 2,
            NackReason::Other(_) => 3,
        }
    }
    if rank(b) < rank(a) {
        b
    } else {
        a
    }
}

/// Whether a retransmission to an upstream last tried at `last_sent_ms` is suppressed.
#[inline]
pub fn suppressed(last_sent_ms: u64, interval_ms: u32, now_ms: u64) -> bool {
    now_ms < last_sent_ms.saturating_add(u64::from(interval_ms))
}

/// The next suppression interval after a retransmission was forwarded, with NFD's default
/// parameters ([`RetxSuppression::next`]).
#[inline]
pub fn next_interval(interval_ms: u32) -> u32 {
    RetxSuppression::DEFAULT.next(interval_ms)
}

/// Whether PIT entry out-records `out` hold one still pending: unexpired and not Nacked (NFD's
/// `hasPendingOutRecords`). An entry without one takes a new Interest as new, not as a
/// retransmission.
#[inline]
pub fn has_pending(out: &[OutRecord], now_ms: u64) -> bool {
    out.iter()
        .any(|r| r.expiry_ms >= now_ms && r.nack.is_none())
}

/// NFD's retransmission-suppression decision for an Interest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetxDecision {
    /// Not a retransmission (to this upstream): forward, the interval unchanged.
    New,
    /// A retransmission past the interval: forward, and grow the interval.
    Forward,
    /// A retransmission within the interval: do not forward.
    Suppress,
}

impl RetxSuppression {
    /// NFD's `decidePerPitEntry` (best-route): new when no out-record is pending; else
    /// suppressed within `interval_ms` (the entry's) of the last transmission to any upstream.
    #[inline]
    pub fn decide_per_entry(out: &[OutRecord], interval_ms: u32, now_ms: u64) -> RetxDecision {
        if !has_pending(out, now_ms) {
            return RetxDecision::New;
        }
        let last = out.iter().map(|r| r.last_sent_ms).max().unwrap_or(0);
        if suppressed(last, interval_ms, now_ms) {
            RetxDecision::Suppress
        } else {
            RetxDecision::Forward
        }
    }

    /// NFD's `decidePerUpstream` (multicast, ASF): new when the upstream has no out-record;
    /// else suppressed within the out-record's own interval of its last transmission.
    #[inline]
    pub fn decide_per_upstream(&self, rec: Option<&OutRecord>, now_ms: u64) -> RetxDecision {
        match rec {
            None => RetxDecision::New,
            Some(r) if suppressed(r.last_sent_ms, self.upstream_interval(r), now_ms) => {
                RetxDecision::Suppress
            }
            Some(_) => RetxDecision::Forward,
        }
    }

    /// An out-record's suppression interval: the initial one until a retransmission to it grew
    /// it.
    #[inline]
    pub fn upstream_interval(&self, r: &OutRecord) -> u32 {
        if r.retx_interval_ms == 0 {
            self.initial_ms
        } else {
            r.retx_interval_ms
        }
    }

    /// Grows out-record `r`'s interval after a retransmission was forwarded to it (NFD's
    /// `incrementIntervalForOutRecord`).
    #[inline]
    pub fn grow_upstream(&self, r: &mut OutRecord) {
        r.retx_interval_ms = self.next(self.upstream_interval(r));
    }
}

/// Best-route's choice for a retransmission: the first eligible next hop (by cost) without an
/// unexpired out-record, else the eligible one whose out-record was renewed longest ago (NFD's
/// `isNextHopEligible` wanting an unused one, then `findEligibleNextHopWithEarliestOutRecord`).
pub fn best_route_retx(
    eligible: impl Iterator<Item = FaceId> + Clone,
    out_records: &[OutRecord],
    now_ms: u64,
) -> Option<FaceId> {
    let record = |f: FaceId| out_records.iter().find(|r| r.face == f);
    let unused = eligible
        .clone()
        .find(|&f| record(f).is_none_or(|r| r.expiry_ms <= now_ms));
    unused.or_else(|| eligible.min_by_key(|&f| record(f).map_or(0, |r| r.last_sent_ms)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{Limits, NameView};

    const KEY: HashKey = HashKey::fixed(1, 2);

    fn find(sc: &StrategyChoice, uri: &str) -> StrategyKind {
        let w = Name::from_uri(uri).unwrap().to_wire();
        let v = NameView::decode(&w, &Limits::default()).unwrap();
        sc.find(&v, &PrefixHashes::new(KEY, &v))
    }

    #[test]
    fn longest_prefix_choice_wins() {
        let mut sc = StrategyChoice::new(KEY);
        assert_eq!(find(&sc, "/a/b"), StrategyKind::BestRoute);
        sc.set(&Name::from_uri("/a").unwrap(), StrategyKind::Multicast);
        sc.set(&Name::from_uri("/a/b/c").unwrap(), StrategyKind::BestRoute);
        assert_eq!(find(&sc, "/a/b"), StrategyKind::Multicast);
        assert_eq!(find(&sc, "/a/b/c/d"), StrategyKind::BestRoute);
        assert_eq!(find(&sc, "/b"), StrategyKind::BestRoute);
        sc.set(&Name::new(), StrategyKind::Multicast);
        assert_eq!(find(&sc, "/b"), StrategyKind::Multicast);
        assert!(sc.unset(&Name::from_uri("/a").unwrap()));
        assert!(!sc.unset(&Name::from_uri("/a").unwrap()));
        assert_eq!(find(&sc, "/a/b"), StrategyKind::Multicast);
        assert_eq!(sc.list().len(), 2);
    }

    #[test]
    fn nfd_names_parse() {
        let n = Name::from_uri("/localhost/nfd/strategy/multicast/v=4").unwrap();
        assert_eq!(
            StrategyKind::from_nfd_name(&n),
            Some(StrategyKind::Multicast)
        );
        let n = Name::from_uri(StrategyKind::BestRoute.nfd_name()).unwrap();
        assert_eq!(
            StrategyKind::from_nfd_name(&n),
            Some(StrategyKind::BestRoute)
        );
        assert_eq!(
            StrategyKind::from_nfd_name(&Name::from_uri("/x").unwrap()),
            None
        );
        // The older version marker, and names that only end like a strategy.
        let n = Name::from_uri("/localhost/nfd/strategy/best-route/%FD%05").unwrap();
        assert_eq!(
            StrategyKind::from_nfd_name(&n),
            Some(StrategyKind::BestRoute)
        );
        for bad in [
            "/v=4",
            "/localhost/nfd/strategy/not-multicast",
            "/multicast/x",
        ] {
            let n = Name::from_uri(bad).unwrap();
            assert_eq!(StrategyKind::from_nfd_name(&n), None, "{bad}");
        }
    }

    #[test]
    fn suppression_and_retx_choice() {
        assert!(suppressed(100, 10, 105));
        assert!(!suppressed(100, 10, 110));
        assert_eq!(next_interval(0), 10);
        assert_eq!(next_interval(160), 250);
        // Parameters as NFD applies them: truncated to milliseconds, capped.
        let r = RetxSuppression {
            initial_ms: 5,
            max_ms: 40,
            multiplier: 1.5,
        };
        let mut seen = vec![];
        let mut i = 0;
        for _ in 0..8 {
            i = r.next(i);
            seen.push(i);
        }
        assert_eq!(seen, [5, 7, 10, 15, 22, 33, 40, 40]);
        let rec = |face, t| OutRecord {
            face,
            nonce: [0; 4],
            last_sent_ms: t,
            expiry_ms: 1_000,
            nack: None,
            retx_interval_ms: 0,
        };
        let outs = [rec(1, 50), rec(2, 20)];
        assert_eq!(best_route_retx([1, 2, 3].into_iter(), &outs, 60), Some(3));
        assert_eq!(best_route_retx([1, 2].into_iter(), &outs, 60), Some(2));
        assert_eq!(best_route_retx([].into_iter(), &outs, 60), None);
        // An expired out-record counts as unused.
        assert_eq!(best_route_retx([1, 2].into_iter(), &outs, 1_000), Some(1));
        // Per entry: new once nothing is pending; per upstream: each record's own interval.
        let d = RetxSuppression::DEFAULT;
        assert_eq!(
            RetxSuppression::decide_per_entry(&outs, 10, 55),
            RetxDecision::Suppress
        );
        assert_eq!(
            RetxSuppression::decide_per_entry(&outs, 10, 60),
            RetxDecision::Forward
        );
        assert_eq!(
            RetxSuppression::decide_per_entry(&outs, 10, 1_001),
            RetxDecision::New
        );
        let mut r = rec(3, 100);
        assert_eq!(d.decide_per_upstream(None, 0), RetxDecision::New);
        assert_eq!(d.decide_per_upstream(Some(&r), 109), RetxDecision::Suppress);
        assert_eq!(d.decide_per_upstream(Some(&r), 110), RetxDecision::Forward);
        d.grow_upstream(&mut r);
        assert_eq!(r.retx_interval_ms, 20);
        assert_eq!(d.decide_per_upstream(Some(&r), 119), RetxDecision::Suppress);
        assert_eq!(
            less_severe(NackReason::NoRoute, NackReason::Congestion),
            NackReason::Congestion
        );
    }
}
