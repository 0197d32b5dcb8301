//! The access strategy in the pipeline ([`crate::fw::access`] holds its table): the choice for
//! an Interest, the RTO timer and its multicast, and the measurement a Data brings back.

use super::interest::{Decision, Forward};
use super::*;
use crate::fw::access::{AccessTable, RtoTimer};
use crate::fw::strategy::{RetxDecision, RetxSuppression};
use crate::table::fib::FibEntry;
use crate::table::pit_cs::MeasuredBy;

impl Engine {
    /// Allocates the access strategy's table when a prefix first chooses it.
    pub(super) fn access_table_for(&mut self, kind: StrategyKind) {
        if kind == StrategyKind::Access && self.access.is_none() {
            self.access = Some(AccessTable::new(self.config.asf_namespaces));
        }
    }

    /// The access strategy's measurements (`None` until a prefix chooses it).
    pub fn access(&self) -> Option<&AccessTable> {
        self.access.as_ref()
    }

    /// The access strategy's choice for Interest `f` (NFD's `AccessStrategy`): a new Interest
    /// goes to the last working next hop of the longest measured prefix (with an RTO timer), or
    /// to every eligible next hop; a retransmission past the suppression interval (per PIT
    /// entry) to every eligible next hop. A new Interest it can send nowhere is rejected
    /// without a Nack, as NFD's.
    pub(super) fn access_select(
        &mut self,
        f: &Forward<'_, '_>,
        entry: Option<&FibEntry>,
        chosen: &mut Vec<FaceId>,
    ) -> Decision {
        let now = f.now_ms;
        let pe = self.table.pit(f.p);
        let decision = RetxSuppression::decide_per_entry(&pe.out_records, pe.retx_interval_ms, now);
        let usable = |e: &Self, nh: FaceId| {
            e.in_scope(f.restrict_local, nh) && (!f.bypass || e.bypass_available(nh, now))
        };
        let mut d = Decision::default();
        match decision {
            RetxDecision::Suppress => return d,
            RetxDecision::Forward => d.grow_entry_interval = true,
            RetxDecision::New => {
                self.table.pit_mut(f.p).measured_by = MeasuredBy::Access;
                if let (Some((last, rto_ms)), Some(e)) = (self.access_last(f), entry) {
                    let routed = e.nexthops().iter().any(|n| n.face == last);
                    if last != f.face && routed && usable(self, last) {
                        chosen.push(last);
                        d.rto_ms = Some(rto_ms);
                        return d;
                    }
                }
            }
        }
        if let Some(e) = entry {
            let hops = e.nexthops().iter().map(|n| n.face);
            chosen.extend(hops.filter(|&nh| nh != f.face && usable(self, nh)));
        }
        if chosen.is_empty() && decision == RetxDecision::New {
            d.reject = true;
            d.silent = true;
        }
        d
    }

    /// The last working next hop (and its RTO, ms) of the longest measured prefix of `f`'s name.
    fn access_last(&self, f: &Forward<'_, '_>) -> Option<(FaceId, u64)> {
        let t = self.access.as_ref()?;
        let h = &self.hashes[f.idx];
        let name = f.interest.name();
        (0..=h.len())
            .rev()
            .find_map(|d| t.last_nexthop(h.prefix(d, &name)?, d, f.now_ms))
    }

    /// After Interest `f` went to the last working next hop `first_out`: keeps a copy of it in
    /// its PIT entry and starts the RTO timer that sends it to the other next hops.
    pub(super) fn access_arm(&mut self, f: &Forward<'_, '_>, first_out: FaceId, rto_ms: u64) {
        let Some(t) = self.access.as_mut() else {
            return;
        };
        let timer = RtoTimer {
            due_ms: f.now_ms.saturating_add(rto_ms),
            pit: f.p,
            sent_ms: f.now_ms,
            first_out,
            in_face: f.face,
        };
        if t.schedule(timer) && !f.stored {
            let wire = f.interest.wire();
            let nonce_off = f.interest.nonce().and_then(|_| find_nonce_offset(wire));
            self.table.store_interest(f.p, wire, nonce_off, f.mark);
        }
    }

    /// Fires the RTO timers due (NFD's `afterRtoTimeout`): a PIT entry still waiting for the
    /// Data from the next hop its timer was started for sends its Interest to every other
    /// next hop but its downstream.
    pub(super) fn access_timers(&mut self, now_ms: u64) {
        while let Some(t) = self.access.as_mut().and_then(|a| a.pop_due(now_ms)) {
            if !self.table.pit_in_use(t.pit) {
                continue;
            }
            let pe = self.table.pit(t.pit);
            let mine = pe.measured_by == MeasuredBy::Access
                && pe.in_records.iter().any(|r| r.face == t.in_face)
                && pe
                    .out_records
                    .iter()
                    .any(|r| r.face == t.first_out && r.last_sent_ms == t.sent_ms);
            if mine && !pe.interest.is_empty() {
                self.access_multicast(now_ms, &t);
            }
        }
    }

    fn access_multicast(&mut self, now_ms: u64, t: &RtoTimer) {
        let stored = std::mem::take(&mut self.table.pit_mut(t.pit).interest);
        if let Ok(i) = InterestView::decode(&stored, &self.config.limits) {
            let from_remote = !self.face(t.in_face).local;
            let (outgoing, restrict_local) = self.stored_outgoing(&stored, &i, from_remote);
            let h = PrefixHashes::new(self.key, &i.name());
            let guard = crossbeam_epoch::pin();
            let mut stats = LpmStats::default();
            let expiry = self.table.pit(t.pit).expiry_ms;
            let nonce = i.nonce().unwrap_or([0; 4]);
            let mark = self.table.pit(t.pit).stored_mark;
            if let Some(e) = self.fib.lookup(&i.name(), &h, &guard, &mut stats) {
                for n in e.nexthops() {
                    let skip = n.face == t.in_face || n.face == t.first_out;
                    if skip || !self.in_scope(restrict_local, n.face) {
                        continue;
                    }
                    self.table
                        .add_out_record(t.pit, n.face, nonce, now_ms, expiry);
                    let from = Some(t.in_face);
                    self.send(
                        n.face,
                        SendKind::Interest,
                        outgoing.clone(),
                        None,
                        mark,
                        from,
                    );
                }
            }
        }
        self.table.pit_mut(t.pit).interest = stored;
    }

    /// A Data from `face` satisfies access PIT entry `p` (NFD's `beforeSatisfyInterest`): its
    /// RTT is recorded for the Data's prefix (its name less the last component) and the face.
    pub(super) fn access_on_data(
        &mut self,
        now_ms: u64,
        idx: usize,
        face: FaceId,
        name: &NameView<'_>,
        p: u32,
    ) {
        let Some(rtt) = self
            .table
            .pit(p)
            .out_records
            .iter()
            .find(|r| r.face == face)
            .map(|r| now_ms.saturating_sub(r.last_sent_ms))
        else {
            return;
        };
        if !self.hashes[idx].has_prefixes() {
            self.hashes[idx].compute(self.key, name);
        }
        let h = &self.hashes[idx];
        let depth = h.len().saturating_sub(1);
        if let (Some(hash), Some(t)) = (h.prefix(depth, name), self.access.as_mut()) {
            t.data(hash, depth, face, rtt, now_ms);
        }
    }
}
