//! The Interest path: loops and scope, the CS, PIT insert or aggregate, the FIB and the
//! strategy.

use super::nbcc::Upstream;
use super::*;
use crate::fw::strategy::{RetxDecision, RetxSuppression, Strategy};

impl Engine {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn on_interest(
        &mut self,
        now_ms: u64,
        idx: usize,
        face: FaceId,
        wire: &[u8],
        i: &InterestView<'_>,
        lp: LpInfo<'_>,
        planned: Option<Planned<'_>>,
        guard: &crossbeam_epoch::Guard,
    ) {
        match self.handed_on {
            None => self.counters.in_interests += 1,
            Some(_) => self.counters.handed_on_in += 1,
        }
        let name = i.name();
        let token = lp.pit_token;
        let info = self.face(face);
        if !info.local && is_under(&name, b"localhost") {
            return self.drop_packet(DropReason::Scope);
        }
        if lp.next_hop_face_id.is_some() && !info.local_fields {
            return self.drop_packet(DropReason::LinkField);
        }
        if i.hop_limit() == Some(0) {
            return self.drop_packet(DropReason::HopLimit);
        }
        let full = self.hashes[idx].full();
        let nonce = i.nonce().unwrap_or([0; 4]);
        if self.dnl.contains(dead_nonce_key(full, nonce), now_ms) {
            return self.on_loop(idx, face, wire, i, token);
        }
        let (cbp, mbf) = (i.can_be_prefix(), i.must_be_fresh());
        let mut entry = self.table.find(full, name.value());
        // A pending PIT entry for the same Interest: loop and retransmission handling.
        let mut pending = entry.and_then(|e| self.table.pit_of(e, cbp, mbf));
        let mut filter = Filtered::NotAsked;
        if let Some(p) = pending {
            if self.is_loop(p, nonce, face, info.multi_access) {
                return self.on_loop(idx, face, wire, i, token);
            }
            if self.end_if_kept(p) {
                entry = self.table.find(full, name.value());
                pending = None;
            }
        }
        if pending.is_some() {
            // Pending: not asked of the CS.
        } else if !self.cs_serve {
            // Serving off: no tier of the CS is asked (NFD's CS_ENABLE_SERVE).
            filter = Filtered::Absent;
        } else {
            // CS: only for an Interest that is not already pending, and whose name the filter
            // in front of the CS may hold (first-stage bypass).
            filter = self.filter_check(full, &name, cbp);
            let h = &self.hashes[idx];
            if filter == Filtered::Absent {
                self.counters.bypass.filter_skips += 1;
            } else if let CsMatch::Hit(e) = self.table.cs_lookup(&name, h, entry, cbp, mbf, now_ms)
            {
                return self.answer_from_cs(face, e, token, name.value());
            }
        }
        let Some((p, is_new, expiry)) = self.pit_insert(now_ms, idx, face, wire, i, entry, token)
        else {
            return;
        };
        if self.ecn_marks_all() {
            self.table.pit_mut(p).cc_mark = true;
        }
        let next_hop = lp.next_hop_face_id.map(|f| f as FaceId);
        let restrict_local = restricted_to_local(i, &name, info.local);
        // The slower CS tier (SSD): a pending answer parks the Interest in its PIT entry, with a
        // copy of it to forward or Nack when the lookup completes. (Not on the hot path.)
        let mut bypass = false;
        if is_new && filter != Filtered::Absent {
            let route = Route {
                now_ms,
                idx,
                face,
                next_hop,
                restrict_local,
                interest: i,
                mark: lp.congestion_mark,
                planned,
                guard,
            };
            match self.ask_slow_tier(p, full, &route, filter == Filtered::Maybe) {
                Slow::Parked => return,
                Slow::Bypass => bypass = true,
                Slow::Go => {}
            }
        }
        if self.table.pit(p).cs_pending {
            return; // the pending tier lookup will forward it if it misses
        }
        let outgoing = self.outgoing_interest(idx, wire, i);
        self.forward(Forward {
            now_ms,
            idx,
            face,
            p,
            is_new,
            nonce,
            expiry,
            next_hop,
            outgoing,
            restrict_local,
            stored: false,
            bypass,
            wire,
            interest: i,
            token,
            mark: lp.congestion_mark,
            planned,
            guard,
        });
    }

    /// Answers an Interest from `face` (with its PIT `token`) with the Data of CS entry `e`,
    /// then lets the slow tier read ahead of `name_value`.
    #[inline(always)]
    fn answer_from_cs(&mut self, face: FaceId, e: u32, token: Option<&[u8]>, name_value: &[u8]) {
        let mark = u64::from(self.ecn_marks_all());
        self.counters.congestion.data_marked += mark;
        let data = self.table.data(e).unwrap_or(&[]);
        let start = self.out.len() as u32;
        self.out.extend_from_slice(data);
        let range = start..self.out.len() as u32;
        self.send(
            face,
            SendKind::Data,
            PacketRef::Out(range),
            token,
            mark,
            None,
        );
        self.read_ahead(name_value)
    }

    /// A looping Interest (its nonce in the dead-nonce list or the PIT entry): dropped, with a
    /// Nack Duplicate unless its strategy is multicast (NFD's `onInterestLoop`).
    fn on_loop(
        &mut self,
        idx: usize,
        face: FaceId,
        wire: &[u8],
        i: &InterestView<'_>,
        token: Option<&[u8]>,
    ) {
        if self.strategy_kind(idx, &i.name()).nacks_downstream(true) {
            self.nack_input(face, idx, wire, i, NackReason::Duplicate, token);
        }
        self.drop_packet(DropReason::Loop)
    }

    /// The strategy governing `name` (input `idx`), its prefix hashes computed first if a
    /// per-prefix choice needs them (off the hot path: loops and Nacks).
    pub(super) fn strategy_kind(&mut self, idx: usize, name: &NameView<'_>) -> StrategyKind {
        if self.strategies.per_prefix() && !self.hashes[idx].has_prefixes() {
            self.hashes[idx].compute(self.key, name);
        }
        self.strategies.find(name, &self.hashes[idx])
    }

    /// Ends PIT entry `p` if it is one ASF kept after its Data (satisfied): an Interest for it
    /// is then a new one, asked of the CS first (as NFD asks it for an entry with no
    /// downstream). Whether it ended.
    fn end_if_kept(&mut self, p: u32) -> bool {
        if !self.table.pit(p).satisfied() {
            return false;
        }
        self.table.pit_remove(p, |_| {});
        self.counters.satisfied += 1;
        true
    }

    /// Whether an Interest with `nonce` from `face` that matches pending PIT entry `p` loops:
    /// its nonce is on an in-record of another face or went upstream. As NFD: on a
    /// point-to-point face, the same nonce again from the same downstream is a retransmission,
    /// not a loop (even though that nonce also went upstream).
    #[inline(always)]
    pub(super) fn is_loop(&self, p: u32, nonce: [u8; 4], face: FaceId, multi_access: bool) -> bool {
        let pe = self.table.pit(p);
        let dup_other = pe
            .in_records
            .iter()
            .any(|r| r.nonce == nonce && r.face != face);
        let dup_out = pe.out_records.iter().any(|r| r.nonce == nonce);
        let in_same = pe
            .in_records
            .iter()
            .any(|r| r.nonce == nonce && r.face == face);
        let p2p_retx = in_same && !multi_access;
        (dup_other || dup_out) && !p2p_retx
    }

    /// PIT insert or aggregate for Interest `i` (input `idx` from `face`), in name entry
    /// `entry` if the name is in the table: the PIT entry, whether it is new, and the
    /// in-record's expiry (InterestLifetime capped by [`PitLimits::max_lifetime_ms`]). `None`
    /// when the Interest was refused (Nacked or dropped).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn pit_insert(
        &mut self,
        now_ms: u64,
        idx: usize,
        face: FaceId,
        wire: &[u8],
        i: &InterestView<'_>,
        entry: Option<u32>,
        token: Option<&[u8]>,
    ) -> Option<(u32, bool, u64)> {
        let name = i.name();
        let is_digest = name
            .last()
            .is_some_and(|c| u32::from(c.typ) == tt::IMPLICIT_SHA256_DIGEST);
        let (cbp, mbf) = (i.can_be_prefix(), i.must_be_fresh());
        // Near full, a face at its fair share gets no new in-record (a refresh of its own is
        // not new).
        if self.table.share_refuses(face) && !self.table.has_in_record(entry, cbp, mbf, face) {
            self.nack_input(face, idx, wire, i, NackReason::Congestion, token);
            self.drop_packet(DropReason::PitShare);
            return None;
        }
        let h = &self.hashes[idx];
        let full = h.full();
        let e = match entry {
            Some(e) => e,
            // `find` missed and nothing since has added a name: no second search.
            None => match self.table.insert_new(full, name.value(), h.len()) {
                Ok(e) => e,
                Err(_) => {
                    self.nack_input(face, idx, wire, i, NackReason::Congestion, token);
                    self.drop_packet(DropReason::PitFull);
                    return None;
                }
            },
        };
        let (p, is_new) = match self.table.pit_get_or_insert(e, cbp, mbf, is_digest) {
            Ok(x) => x,
            Err(TableFull::Pit | TableFull::Names | TableFull::Index) => {
                self.nack_input(face, idx, wire, i, NackReason::Congestion, token);
                self.drop_packet(DropReason::PitFull);
                return None;
            }
        };
        let nonce = i.nonce().unwrap_or([0; 4]);
        let mut lifetime_ms = i.effective_lifetime_ms().min(self.table.max_lifetime_ms());
        if let Some(left) = &self.handed_on {
            // Handed on by another engine: the downstream's Interest expires when it would
            // have there.
            lifetime_ms = lifetime_ms.min(left[idx]);
        }
        let expiry = now_ms.saturating_add(lifetime_ms);
        if !self.table.add_in_record(p, face, nonce, expiry, token) {
            if is_new {
                self.table.pit_remove(p, |_| {});
            }
            self.drop_packet(DropReason::InRecordsFull);
            return None;
        }
        Some((p, is_new, expiry))
    }

    /// What the filter in front of the CS says of an Interest's name (`full` its hash):
    /// CanBePrefix Interests and names ending in an implicit digest are not asked (the filter
    /// holds full Data names).
    #[inline]
    fn filter_check(&self, full: u64, name: &NameView<'_>, cbp: bool) -> Filtered {
        let Some(f) = self.table.filter() else {
            return Filtered::NotAsked;
        };
        if cbp
            || name
                .last()
                .is_some_and(|c| u32::from(c.typ) == tt::IMPLICIT_SHA256_DIGEST)
        {
            return Filtered::NotAsked;
        }
        if f.may_hold(full) {
            Filtered::Maybe
        } else {
            Filtered::Absent
        }
    }

    /// The slow tier's part for new PIT entry `p` after a RAM-CS miss: the second-stage bypass
    /// (past the threshold, a name the tier holds goes upstream if one is available), else
    /// the lookup, which may park the Interest (and, with NB-CC, mark its Data when the queue
    /// it joins is past the threshold). `positive`: the CS filter said the name may be held,
    /// so a miss in every tier is its false positive.
    fn ask_slow_tier(&mut self, p: u32, full: u64, r: &Route<'_, '_>, positive: bool) -> Slow {
        let name = r.interest.name();
        let Some(tier) = self.slow_tier.as_mut() else {
            self.counters.bypass.filter_false_positives += u64::from(positive);
            return Slow::Go;
        };
        let cc = self.config.congestion;
        let waiting = if self.config.bypass_threshold.is_some() || (cc.ecn && cc.nbcc) {
            tier.waiting()
        } else {
            0
        };
        if let Some(threshold) = self.config.bypass_threshold {
            if waiting >= threshold && tier.holds(full, name.value()) {
                match self.bypass_upstream(r) {
                    Upstream::Available => {
                        self.counters.bypass.queue_bypasses += 1;
                        return Slow::Bypass;
                    }
                    Upstream::Unavailable => self.counters.congestion.bypass_unavailable += 1,
                    Upstream::None => {}
                }
                self.counters.bypass.queue_no_upstream += 1;
            }
        }
        if self.park_on_slow_tier(p, full, r.interest, r.next_hop, r.mark) {
            if self.nbcc_marks_queued(waiting) {
                self.table.pit_mut(p).cc_mark = true;
            }
            return Slow::Parked;
        }
        if positive
            && !self
                .slow_tier
                .as_mut()
                .is_some_and(|t| t.holds(full, name.value()))
        {
            self.counters.bypass.filter_false_positives += 1;
        }
        Slow::Go
    }

    /// Where Interest `r` could be bypassed to: its NextHopFaceId in scope, or an eligible next
    /// hop of its FIB entry, that has not sent a Nack-α (the strategy's choice among the
    /// available ones is made later).
    fn bypass_upstream(&mut self, r: &Route<'_, '_>) -> Upstream {
        let now = r.now_ms;
        let judge = |e: &Self, face: FaceId| {
            if e.bypass_available(face, now) {
                Upstream::Available
            } else {
                Upstream::Unavailable
            }
        };
        if let Some(nh) = r.next_hop {
            if !self.in_scope(r.restrict_local, nh) {
                return Upstream::None;
            }
            return judge(self, nh);
        }
        let Some(entry) = self.fib_answer(r) else {
            return Upstream::None;
        };
        let mut found = Upstream::None;
        for n in entry.nexthops() {
            if n.face != r.face && self.in_scope(r.restrict_local, n.face) {
                found = judge(self, n.face);
                if found == Upstream::Available {
                    break;
                }
            }
        }
        found
    }

    /// Whether `face` may carry an Interest restricted to local faces (`restrict_local`).
    #[inline]
    pub(super) fn in_scope(&self, restrict_local: bool, face: FaceId) -> bool {
        !restrict_local || self.face(face).local
    }

    /// The FIB entry of Interest `r`: the planning pass's answer if it found one, else a
    /// lookup (counted in the LPM counters either way).
    #[inline]
    fn fib_answer<'g>(&mut self, r: &Route<'_, 'g>) -> Option<&'g crate::table::fib::FibEntry> {
        let h = &self.hashes[r.idx];
        let name = r.interest.name();
        let mut stats = LpmStats::default();
        let entry = match (self.config.lpm, r.planned) {
            (LpmAlgorithm::TwoStage, Some((entry, probes))) => {
                stats.lookups += 1;
                stats.probes += probes;
                entry
            }
            (LpmAlgorithm::TwoStage, None) => self.fib.lookup(&name, h, r.guard, &mut stats),
            (LpmAlgorithm::LongestFirst, _) => {
                self.fib.lookup_longest_first(&name, h, r.guard, &mut stats)
            }
        };
        self.counters.lpm.lookups += stats.lookups;
        self.counters.lpm.probes += stats.probes;
        entry
    }

    /// Asks the slow CS tier about new PIT entry `p`'s name; when it answers pending, parks a
    /// copy of Interest `i` in the entry, with its NextHopFaceId `next_hop` and its
    /// CongestionMark `mark` (to forward or Nack when the lookup completes, or to hand on) and
    /// returns true.
    pub(super) fn park_on_slow_tier(
        &mut self,
        p: u32,
        full: u64,
        i: &InterestView<'_>,
        next_hop: Option<FaceId>,
        mark: u64,
    ) -> bool {
        let Some(tier) = self.slow_tier.as_mut() else {
            return false;
        };
        let name = i.name().value();
        let exact = if i.must_be_fresh() {
            tier.lookup_fresh(full, name)
        } else {
            tier.lookup(full, name)
        };
        let pending =
            exact || (i.can_be_prefix() && tier.lookup_prefix(full, name, i.must_be_fresh()));
        if !pending {
            return false;
        }
        let nonce_off = i.nonce().and_then(|_| find_nonce_offset(i.wire()));
        self.table.store_interest(p, i.wire(), nonce_off, mark);
        let pe = self.table.pit_mut(p);
        pe.cs_pending = true;
        pe.stored_next_hop = next_hop;
        true
    }

    /// The Interest to send upstream: input `idx` unchanged, or a copy in the output buffer
    /// with its HopLimit decremented.
    #[inline(always)]
    pub(super) fn outgoing_interest(
        &mut self,
        idx: usize,
        wire: &[u8],
        i: &InterestView<'_>,
    ) -> PacketRef {
        if i.hop_limit().is_none() {
            return PacketRef::Input {
                index: idx as u32,
                range: range_of(wire, i.wire()),
            };
        }
        let w = i.wire();
        let start = self.out.len();
        self.out.extend_from_slice(w);
        if let Some(off) = i.hop_limit_value_offset() {
            self.out[start + off] -= 1;
        }
        PacketRef::Out(start as u32..self.out.len() as u32)
    }

    pub(super) fn forward(&mut self, f: Forward<'_, '_>) {
        let mut chosen = std::mem::take(&mut self.faces_scratch);
        chosen.clear();
        let entry = self.fib_answer(&f.route());
        let strategy = *self
            .strategies
            .find_instance(&f.interest.name(), &self.hashes[f.idx]);
        if f.is_new {
            // Suppression starts at the strategy's initial interval: a retransmission (or
            // another downstream's Interest) within it of the first is not forwarded.
            self.table.pit_mut(f.p).retx_interval_ms = strategy.retx.initial_ms;
        }
        let d = match entry {
            Some(e) if strategy.kind == StrategyKind::Asf && f.next_hop.is_none() => {
                self.asf_select(&f, e, &strategy, &mut chosen)
            }
            _ if strategy.kind == StrategyKind::Access && f.next_hop.is_none() => {
                self.access_select(&f, entry, &mut chosen)
            }
            _ => {
                let draw = match strategy.kind {
                    StrategyKind::Random => self.random(),
                    _ => 0,
                };
                self.select(&f, entry, &strategy, draw, &mut chosen)
            }
        };
        if d.grow_entry_interval {
            let pe = self.table.pit_mut(f.p);
            pe.retx_interval_ms = strategy.retx.next(pe.retx_interval_ms);
        }
        if strategy.kind == StrategyKind::Multicast {
            self.watch_multicast(&f);
        }
        if chosen.is_empty() {
            self.faces_scratch = chosen;
            if d.reject {
                // No route: reject the Interest (NFD's `rejectPendingInterest`: unsatisfied).
                if d.silent {
                } else if f.stored {
                    self.nack_in_records(f.now_ms, f.p, NackReason::NoRoute, None);
                } else {
                    self.nack_input(
                        f.face,
                        f.idx,
                        f.wire,
                        f.interest,
                        NackReason::NoRoute,
                        f.token,
                    );
                }
                self.table.pit_remove(f.p, |_| {});
                self.counters.unsatisfied += 1;
                return self.drop_packet(DropReason::NoRoute);
            }
            if d.unrouted {
                return self.drop_packet(DropReason::NoRoute);
            }
            return self.drop_packet(DropReason::Suppressed);
        }
        // Multicast and ASF suppress per upstream: a retransmission forwarded to an upstream
        // already tried grows that out-record's interval.
        let per_upstream = matches!(strategy.kind, StrategyKind::Multicast | StrategyKind::Asf)
            && f.next_hop.is_none();
        for &out_face in &chosen {
            let again = per_upstream
                && self
                    .table
                    .pit(f.p)
                    .out_records
                    .iter()
                    .any(|r| r.face == out_face);
            self.table
                .add_out_record(f.p, out_face, f.nonce, f.now_ms, f.expiry);
            if again {
                let pe = self.table.pit_mut(f.p);
                if let Some(r) = pe.out_records.iter_mut().find(|r| r.face == out_face) {
                    strategy.retx.grow_upstream(r);
                }
            }
            let (packet, from) = (f.outgoing.clone(), Some(f.face));
            self.send(out_face, SendKind::Interest, packet, None, f.mark, from);
        }
        let first = chosen.first().copied();
        self.faces_scratch = chosen;
        if let Some(face) = d.probe {
            self.asf_send_probe(&f, face);
        }
        if let (Some(rto_ms), Some(face)) = (d.rto_ms, first) {
            self.access_arm(&f, face, rto_ms);
        }
    }

    /// Best-route's, multicast's and random's choice for Interest `f` (or its NextHopFaceId):
    /// pushes the faces to forward to onto `chosen`. `draw` is random's random number.
    fn select(
        &self,
        f: &Forward<'_, '_>,
        entry: Option<&crate::table::fib::FibEntry>,
        strategy: &Strategy,
        draw: u64,
        chosen: &mut Vec<FaceId>,
    ) -> Decision {
        let in_scope = |nh: FaceId| self.in_scope(f.restrict_local, nh);
        // A bypassed Interest goes only to upstreams that have not sent a Nack-α.
        let available = |nh: FaceId| !f.bypass || self.bypass_available(nh, f.now_ms);
        let eligible = |nh: FaceId| nh != f.face && in_scope(nh) && available(nh);
        let pe = self.table.pit(f.p);
        let had_route = match f.next_hop {
            Some(nh) => in_scope(nh),
            None => entry.is_some_and(|e| e.nexthops().iter().any(|n| eligible(n.face))),
        };
        let mut d = Decision {
            reject: f.is_new && !had_route,
            ..Decision::default()
        };
        if strategy.kind == StrategyKind::Multicast && f.next_hop.is_none() {
            // NFD 24.07's multicast rejects nothing: an Interest it sends nowhere waits in the
            // PIT until its lifetime ends.
            d.unrouted = std::mem::take(&mut d.reject);
        }
        if let Some(nh) = f.next_hop {
            if in_scope(nh) {
                chosen.push(nh);
            }
            return d;
        }
        let Some(entry) = entry else {
            return d;
        };
        let hops = entry
            .nexthops()
            .iter()
            .map(|n| n.face)
            .filter(|&x| eligible(x));
        let (out, now) = (&pe.out_records[..], f.now_ms);
        match strategy.kind {
            // ASF or access without its table (a choice made through `strategies_mut`), or with
            // a NextHopFaceId, goes as best-route.
            StrategyKind::BestRoute | StrategyKind::Asf | StrategyKind::Access => {
                match RetxSuppression::decide_per_entry(out, pe.retx_interval_ms, now) {
                    RetxDecision::New => {
                        chosen.extend(hops.take(1));
                        d.reject = !had_route;
                    }
                    RetxDecision::Forward => {
                        d.grow_entry_interval = true;
                        chosen.extend(strategy::best_route_retx(hops, out, now));
                    }
                    RetxDecision::Suppress => {}
                }
            }
            StrategyKind::Multicast => {
                let retx = strategy.retx;
                chosen.extend(hops.filter(|&x| {
                    let rec = out.iter().find(|r| r.face == x);
                    retx.decide_per_upstream(rec, now) != RetxDecision::Suppress
                }));
            }
            StrategyKind::Random => {
                let n = hops.clone().count() as u64;
                chosen.extend(hops.clone().nth((draw % n.max(1)) as usize));
                // NFD's random strategy rejects any Interest it cannot forward.
                d.reject = !had_route;
            }
        }
        d
    }

    /// After a CS hit on `name_value`: asks the slow tier (if any) whether to read ahead,
    /// and starts that read unless the CS already holds the chunk it names.
    pub(super) fn read_ahead(&mut self, name_value: &[u8]) {
        let Some(tier) = self.slow_tier.as_mut() else {
            return;
        };
        let mut next = std::mem::take(&mut self.ahead_name);
        next.clear();
        if tier.ahead_of(name_value, &mut next) {
            let hash = crate::hash::value_hash(self.key, &next);
            let cached = self
                .table
                .find(hash, &next)
                .is_some_and(|e| self.table.data(e).is_some());
            if !cached {
                tier.prefetch(&next);
            }
        }
        self.ahead_name = next;
    }
}

/// What a strategy decided for an Interest, besides the faces it chose.
#[derive(Debug, Default)]
pub(super) struct Decision {
    /// Nothing chosen: Nack the downstream with NoRoute (unless `silent`) and remove the PIT
    /// entry.
    pub(super) reject: bool,
    /// Reject without a Nack (the access strategy's way).
    pub(super) silent: bool,
    /// Nothing chosen for a new Interest for want of a route, but the entry stays until it
    /// expires (multicast): counted as a NoRoute drop.
    pub(super) unrouted: bool,
    /// Access: the RTO (ms) after which the Interest goes to the other next hops.
    pub(super) rto_ms: Option<u64>,
    /// A retransmission forwarded per PIT entry: grow the entry's suppression interval.
    pub(super) grow_entry_interval: bool,
    /// ASF: the face to probe, besides the chosen one.
    pub(super) probe: Option<FaceId>,
}

/// Arguments of [`Engine::forward`].
pub(super) struct Forward<'a, 'g> {
    pub(super) now_ms: u64,
    pub(super) idx: usize,
    pub(super) face: FaceId,
    pub(super) p: u32,
    pub(super) is_new: bool,
    pub(super) nonce: [u8; 4],
    pub(super) expiry: u64,
    pub(super) next_hop: Option<FaceId>,
    pub(super) outgoing: PacketRef,
    pub(super) restrict_local: bool,
    /// Forwarding an Interest stored in the PIT (no input packet to Nack).
    pub(super) stored: bool,
    /// The Interest bypasses the store (NB-Cache's second stage): it goes only to upstreams
    /// available for bypass (NB-CC).
    pub(super) bypass: bool,
    pub(super) wire: &'a [u8],
    pub(super) interest: &'a InterestView<'a>,
    pub(super) token: Option<&'a [u8]>,
    /// The NDNLPv2 CongestionMark the Interest came with (0: none), sent on with it upstream
    /// (NFD's link service writes an Interest's CongestionMark tag on the Interest it forwards).
    pub(super) mark: u64,
    /// The FIB answer a planning pass found for this Interest in this batch.
    pub(super) planned: Option<Planned<'g>>,
    pub(super) guard: &'g crossbeam_epoch::Guard,
}

impl<'a, 'g> Forward<'a, 'g> {
    /// The parts of the Interest that decide where it may go.
    fn route(&self) -> Route<'a, 'g> {
        Route {
            now_ms: self.now_ms,
            idx: self.idx,
            face: self.face,
            next_hop: self.next_hop,
            restrict_local: self.restrict_local,
            interest: self.interest,
            mark: self.mark,
            planned: self.planned,
            guard: self.guard,
        }
    }
}

/// Whether Interest `i` (named `name`, from a local face if `from_local`) may go to local
/// faces only: its HopLimit is spent here, it is under `/localhop` from a remote face, or under
/// `/localhost`.
#[inline(always)]
fn restricted_to_local(i: &InterestView<'_>, name: &NameView<'_>, from_local: bool) -> bool {
    let hop_exhausted = i.hop_limit() == Some(1);
    let localhop_from_remote = !from_local && is_under(name, b"localhop");
    hop_exhausted || localhop_from_remote || is_under(name, b"localhost")
}

/// Where an Interest may go: what [`Engine::has_upstream`] and the FIB lookup need.
pub(super) struct Route<'a, 'g> {
    now_ms: u64,
    idx: usize,
    face: FaceId,
    next_hop: Option<FaceId>,
    restrict_local: bool,
    interest: &'a InterestView<'a>,
    /// The CongestionMark it came with (0: none).
    mark: u64,
    planned: Option<Planned<'g>>,
    guard: &'g crossbeam_epoch::Guard,
}

/// What the slow tier's part decided for an Interest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slow {
    /// It waits in its PIT entry for the slow tier.
    Parked,
    /// Past the threshold, it bypasses the store to an available upstream.
    Bypass,
    /// It goes on to the FIB as usual (a miss, or no slow tier).
    Go,
}

/// What the filter in front of the CS said of an Interest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filtered {
    /// No filter, or one that cannot answer for this Interest (or it was pending).
    NotAsked,
    /// The name may be held.
    Maybe,
    /// The name is surely not held: the CS and the slow tier are skipped.
    Absent,
}

/// A FIB lookup's answer from its plan ([`Fib::plan`]): the entry (`None`: no route) and the
/// probes it took.
pub(super) type Planned<'g> = (Option<&'g crate::table::fib::FibEntry>, u64);

/// Offset of the Nonce value inside an Interest's wire bytes.
pub(super) fn find_nonce_offset(interest: &[u8]) -> Option<usize> {
    let mut r = wire::tlv::Reader::new(interest);
    let outer = r.read().ok()?;
    let mut inner = outer.reader();
    while let Some(Ok(e)) = inner.next_element() {
        if e.typ == tt::NONCE {
            return Some(e.value_offset);
        }
    }
    None
}
