//! ASF in the pipeline: the forwarding choice, the probe, and the measurements a Data or a
//! Nack brings back ([`crate::fw::asf`] holds the table).

use super::interest::{Decision, Forward};
use super::*;
use crate::fw::asf::{AsfTable, Candidate};
use crate::fw::strategy::{RetxDecision, Strategy};
use crate::table::fib::{FibEntry, MAX_NEXTHOPS};
use crate::table::pit_cs::MeasuredBy;

/// How long ASF keeps a satisfied PIT entry for another upstream's Data (a probe's, or the
/// Interest's when the probe answered first): NFD's `setExpiryTimer(pitEntry, 50_ms)` in
/// `beforeSatisfyInterest`, after every Data it measures (a later Data extends it again), whether
/// or not another upstream is still pending.
pub const ASF_PROBE_GRACE_MS: u64 = 50;

impl Engine {
    /// Sets (`Some`) or unsets (`None`) the strategy of `prefix`, with its parameters. The first
    /// ASF choice allocates the ASF measurements table
    /// ([`EngineConfig::asf_namespaces`] namespaces).
    pub fn set_strategy(&mut self, prefix: &wire::Name, strategy: Option<Strategy>) {
        match strategy {
            Some(s) => {
                if s.kind == StrategyKind::Asf && self.asf.is_none() {
                    let seed = crate::hash::value_hash(self.key, b"asf");
                    self.asf = Some(AsfTable::new(self.config.asf_namespaces, seed));
                }
                self.access_table_for(s.kind);
                self.strategies.set_instance(prefix, s);
            }
            None => {
                self.strategies.unset(prefix);
            }
        }
    }

    /// Live entries of this engine's measurements tables (NFD's `NMeasurementsEntries`, for
    /// this worker): ASF's namespaces and the access strategy's prefixes.
    pub fn measurements_len(&self, now_ms: u64) -> usize {
        self.asf.as_ref().map_or(0, |t| t.len(now_ms))
            + self.access.as_ref().map_or(0, |t| t.len(now_ms))
    }

    /// The name hashes of this engine's live measurements entries (ASF's namespaces and the
    /// access strategy's prefixes, one per name) into `out`: the workers share the hash key,
    /// so management counts the prefixes two workers both measure once.
    pub fn measured_prefixes(&self, now_ms: u64, out: &mut Vec<u64>) {
        out.clear();
        out.extend(self.asf.iter().flat_map(|t| t.live_hashes(now_ms)));
        out.extend(self.access.iter().flat_map(|t| t.live_hashes(now_ms)));
        out.sort_unstable();
        out.dedup();
    }

    /// ASF's measurements (`None` until a prefix chooses ASF).
    pub fn asf(&self) -> Option<&AsfTable> {
        self.asf.as_ref()
    }

    /// ASF's choice for Interest `f` under FIB entry `entry` (NFD's `afterReceiveInterest`):
    /// pushes the face to forward to onto `chosen`, and says which face to probe.
    pub(super) fn asf_select(
        &mut self,
        f: &Forward<'_, '_>,
        entry: &FibEntry,
        strategy: &Strategy,
        chosen: &mut Vec<FaceId>,
    ) -> Decision {
        let mut cands: [Candidate; MAX_NEXTHOPS] = [(0, 0); MAX_NEXTHOPS];
        let mut n = 0;
        for nh in entry.nexthops().iter().take(MAX_NEXTHOPS) {
            let scope = !f.restrict_local || self.face(nh.face).local;
            let available = !f.bypass || self.bypass_available(nh.face, f.now_ms);
            if nh.face != f.face && scope && available {
                cands[n] = (nh.face, nh.cost);
                n += 1;
            }
        }
        let cands = &cands[..n];
        let now = f.now_ms;
        let pending = strategy::has_pending(&self.table.pit(f.p).out_records, now);
        // New (nothing pending) and no eligible face: Nack NoRoute (NFD's `sendNoRouteNack`).
        let mut choice = Decision {
            reject: !pending && n == 0,
            ..Decision::default()
        };
        let Some(asf) = self.asf.as_mut() else {
            return choice;
        };
        let name_hash = self.hashes[f.idx].full();
        let depth = usize::from(entry.depth);
        let slot = asf.get_or_create(entry.hash, depth, now, strategy.max_timeouts);
        self.table.pit_mut(f.p).measured_by = MeasuredBy::Asf;
        let pe = self.table.pit(f.p);
        if !pending {
            let Some(best) = asf.best(slot, cands, now) else {
                return choice;
            };
            chosen.push(best);
            asf.forwarded(slot, best, name_hash, now);
            if asf.probing_due(slot, now) {
                let mut others: [Candidate; MAX_NEXTHOPS] = [(0, 0); MAX_NEXTHOPS];
                let mut m = 0;
                for &c in cands.iter().filter(|c| c.0 != best) {
                    others[m] = c;
                    m += 1;
                }
                if let Some(p) = asf.probe_face(slot, &others[..m], now) {
                    asf.forwarded(slot, p, name_hash, now);
                    asf.probed(slot, now, strategy.probing_interval_ms);
                    choice.probe = Some(p);
                }
            }
            return choice;
        }
        // A retransmission: the best face without an unexpired out-record, else the one tried
        // longest ago, each unless suppressed on that upstream (its out-record's interval).
        let record = |face: FaceId| pe.out_records.iter().find(|r| r.face == face);
        let allowed =
            |face| strategy.retx.decide_per_upstream(record(face), now) != RetxDecision::Suppress;
        let mut unused: [Candidate; MAX_NEXTHOPS] = [(0, 0); MAX_NEXTHOPS];
        let mut m = 0;
        for &c in cands {
            if record(c.0).is_none_or(|r| r.expiry_ms <= now) {
                unused[m] = c;
                m += 1;
            }
        }
        if let Some(face) = asf.best(slot, &unused[..m], now) {
            if allowed(face) {
                chosen.push(face);
                asf.forwarded(slot, face, name_hash, now);
            }
        } else if let Some(&(face, _)) = cands
            .iter()
            .filter(|c| record(c.0).is_some())
            .min_by_key(|c| record(c.0).map_or(0, |r| r.last_sent_ms))
        {
            if allowed(face) {
                chosen.push(face);
            }
        }
        choice
    }

    /// Sends Interest `f` as a probe to `face`, with a fresh nonce (NFD's `sendProbe`).
    pub(super) fn asf_send_probe(&mut self, f: &Forward<'_, '_>, face: FaceId) {
        let wire = f.interest.wire();
        let (Some(off), Some(asf)) = (find_nonce_offset(wire), self.asf.as_mut()) else {
            return;
        };
        let nonce = asf.nonce();
        let start = self.out.len();
        self.out.extend_from_slice(wire);
        if let Some(hop) = f.interest.hop_limit_value_offset() {
            self.out[start + hop] -= 1;
        }
        self.out[start + off..start + off + 4].copy_from_slice(&nonce);
        let packet = PacketRef::Out(start as u32..self.out.len() as u32);
        self.table
            .add_out_record(f.p, face, nonce, f.now_ms, f.expiry);
        self.send(face, SendKind::Interest, packet, None, f.mark, Some(f.face));
    }

    /// The ASF namespace of a name (the longest prefix that has one), its prefix hashes
    /// computed in slot `idx` if need be.
    fn asf_namespace(&mut self, idx: usize, name: &NameView<'_>, now_ms: u64) -> Option<usize> {
        let asf = self.asf.as_ref()?;
        if !self.hashes[idx].has_prefixes() {
            self.hashes[idx].compute(self.key, name);
        }
        let h = &self.hashes[idx];
        (0..=h.len())
            .rev()
            .find_map(|d| asf.find(h.prefix(d, name)?, d, now_ms))
    }

    /// A Data from `face` satisfies ASF PIT entry `p` (NFD's `beforeSatisfyInterest`): the RTT
    /// since the Interest went to `face` is recorded. Whether the namespace and the face had
    /// measurements (NFD then keeps the entry [`ASF_PROBE_GRACE_MS`] longer).
    pub(super) fn asf_on_data(
        &mut self,
        now_ms: u64,
        idx: usize,
        face: FaceId,
        name: &NameView<'_>,
        p: u32,
    ) -> bool {
        let Some(slot) = self.asf_namespace(idx, name, now_ms) else {
            return false;
        };
        let pe = self.table.pit(p);
        let owner_hash = self.table.name_entry(pe.owner).hash_value();
        let rtt = pe
            .out_records
            .iter()
            .find(|r| r.face == face)
            .map(|r| now_ms.saturating_sub(r.last_sent_ms));
        self.asf
            .as_mut()
            .is_some_and(|asf| asf.data(slot, face, rtt, owner_hash, now_ms))
    }

    /// A Nack from `face` for ASF PIT entry (named `name`): the face counts as timed out.
    pub(super) fn asf_on_nack(
        &mut self,
        now_ms: u64,
        idx: usize,
        face: FaceId,
        name: &NameView<'_>,
    ) {
        if let Some(slot) = self.asf_namespace(idx, name, now_ms) {
            if let Some(asf) = self.asf.as_mut() {
                asf.nack(slot, face, now_ms);
            }
        }
    }
}
