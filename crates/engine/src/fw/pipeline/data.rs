//! The Data and Nack paths, and the slower CS tier's completions.

use super::*;
use crate::table::pit_cs::MeasuredBy;

impl Engine {
    pub(super) fn on_data(
        &mut self,
        now_ms: u64,
        idx: usize,
        face: FaceId,
        wire: &[u8],
        d: &DataView<'_>,
        lp: LpInfo<'_>,
    ) {
        self.counters.in_data += 1;
        let name = d.name();
        if !self.face(face).local && is_under(&name, b"localhost") {
            return self.drop_packet(DropReason::Scope);
        }
        let mut pits = std::mem::take(&mut self.pits_scratch);
        pits.clear();
        if !self.hashes[idx].has_prefixes() && self.table.data_needs_prefixes() {
            // A CanBePrefix or digest Interest arrived earlier in this batch.
            self.hashes[idx].compute(self.key, &name);
        }
        let h = &self.hashes[idx];
        self.table
            .matching_pits(&name, h, d.wire(), |p, exact| pits.push((p, exact)));
        if pits.is_empty() {
            self.pits_scratch = pits;
            if lp.nbcc.is_some() {
                // A copy that brought an NB-CC signal to this worker (the dispatcher hands such
                // a Data to every worker): not unsolicited.
                return;
            }
            return self.drop_packet(DropReason::Unsolicited);
        }
        let mark = lp.congestion_mark;
        let no_cache = lp.cache_policy == Some(CACHE_POLICY_NO_CACHE);
        // Send to every downstream once.
        let mut sent = std::mem::take(&mut self.faces_scratch);
        sent.clear();
        let packet = PacketRef::Input {
            index: idx as u32,
            range: range_of(wire, d.wire()),
        };
        for &(p, _) in &pits {
            let n = self.table.pit(p).in_records.len();
            for r in 0..n {
                let rec = self.table.pit(p).in_records[r];
                if rec.expiry_ms <= now_ms || rec.face == face || sent.contains(&rec.face) {
                    continue;
                }
                sent.push(rec.face);
                let mark = self.data_mark(p, mark);
                self.send(
                    rec.face,
                    SendKind::Data,
                    packet.clone(),
                    rec.pit_token(),
                    mark,
                    Some(face),
                );
            }
        }
        self.faces_scratch = sent;
        // Cache the Data (the PIT entry's name entry becomes a CS entry), then satisfy.
        let h = &self.hashes[idx];
        // The Data's own name entry is the owner of any exact-match PIT entry (found by the
        // lookup above); only a Data that satisfied nothing at its own name needs another one.
        let exact_owner = pits
            .iter()
            .find(|&&(_, exact)| exact)
            .map(|&(p, _)| self.table.pit(p).owner);
        let data_entry = if no_cache || !self.cs_admit {
            None
        } else if exact_owner.is_some() {
            exact_owner
        } else {
            self.table
                .find_or_insert(h.full(), name.value(), h.len())
                .ok()
        };
        if let Some(e) = data_entry {
            let fresh = d.freshness_ms().unwrap_or(0);
            self.table.cs_insert(e, d.wire(), fresh, now_ms);
        }
        for &(p, exact) in &pits {
            // ASF keeps the entry 50 ms past each Data it measures (NFD's `setExpiryTimer` in
            // `beforeSatisfyInterest`), so that a slower upstream's (a probe's) Data finds it
            // and is measured too; that Data goes nowhere, the downstreams were answered.
            let linger = match self.table.pit(p).measured_by {
                MeasuredBy::None => false,
                MeasuredBy::Asf => self.asf_on_data(now_ms, idx, face, &name, p),
                MeasuredBy::Access => {
                    self.access_on_data(now_ms, idx, face, &name, p);
                    false
                }
            };
            let pe = self.table.pit(p);
            let owner = pe.owner;
            if let (false, true, Some(target)) = (exact, pe.can_be_prefix, data_entry) {
                // The CanBePrefix Interest's name now points at the Data; done before the PIT
                // entry goes, so the name entry turns into a CS entry in place.
                self.table.cs_insert_indirect(owner, target);
            }
            if linger {
                self.table.pit_mut(p).out_records.retain(|r| r.face != face);
                self.table
                    .linger(p, now_ms.saturating_add(asf::ASF_PROBE_GRACE_MS));
            } else {
                self.table.pit_remove(p, |_| {});
                self.counters.satisfied += 1;
            }
        }
        self.pits_scratch = pits;
    }

    pub(super) fn on_nack(
        &mut self,
        now_ms: u64,
        idx: usize,
        face: FaceId,
        i: &InterestView<'_>,
        reason: NackReason,
    ) {
        self.counters.in_nacks += 1;
        let name = i.name();
        let full = self.hashes[idx].full();
        let Some(p) = self
            .table
            .find(full, name.value())
            .and_then(|e| self.table.pit_of(e, i.can_be_prefix(), i.must_be_fresh()))
        else {
            return self.drop_packet(DropReason::NackUnmatched);
        };
        let nonce = i.nonce().unwrap_or([0; 4]);
        let pe = self.table.pit_mut(p);
        let Some(rec) = pe
            .out_records
            .iter_mut()
            .find(|r| r.face == face && r.nonce == nonce)
        else {
            return self.drop_packet(DropReason::NackUnmatched);
        };
        rec.nack = Some(reason);
        if pe.measured_by == MeasuredBy::Asf {
            self.asf_on_nack(now_ms, idx, face, &name);
        }
        let pe = self.table.pit_mut(p);
        if pe
            .out_records
            .iter()
            .any(|r| r.nack.is_none() && r.expiry_ms > now_ms)
        {
            return; // other upstreams may still answer
        }
        if !self.strategy_kind(idx, &name).nacks_downstream(false) {
            // Multicast and access: the entry waits for its expiry (unsatisfied then).
            return;
        }
        let pe = self.table.pit_mut(p);
        let least = pe
            .out_records
            .iter()
            .filter_map(|r| r.nack)
            .fold(reason, strategy::less_severe);
        // Every upstream Nacked: Nack each downstream with its own Interest (its nonce). The
        // entry ends unsatisfied, as NFD's (unless it was satisfied and only kept for a late
        // Data).
        self.nack_in_records(now_ms, p, least, Some(i.wire()));
        if self.table.pit(p).satisfied() {
            self.counters.satisfied += 1;
        } else {
            self.counters.unsatisfied += 1;
        }
        let dnl = &mut self.dnl;
        self.table
            .pit_remove(p, |n| dnl.insert(dead_nonce_key(full, n), now_ms));
    }

    /// Nacks every live point-to-point downstream of PIT entry `p` with its own Interest and its
    /// PIT token. The Interest is `template` (the upstream's Nack carries the Interest as we
    /// forwarded it) or the one stored in the entry, with the downstream's nonce put back.
    pub(super) fn nack_in_records(
        &mut self,
        now_ms: u64,
        p: u32,
        reason: NackReason,
        template: Option<&[u8]>,
    ) {
        let n = self.table.pit(p).in_records.len();
        for r in 0..n {
            let pe = self.table.pit(p);
            let rec = pe.in_records[r];
            if rec.expiry_ms <= now_ms || self.face(rec.face).multi_access {
                continue;
            }
            let (bytes, nonce_off) = match template {
                Some(t) => (t, find_nonce_offset(t)),
                None => (&pe.interest[..], pe.nonce_offset.map(usize::from)),
            };
            let start = self.out.len();
            self.out.extend_from_slice(bytes);
            if let Some(off) = nonce_off {
                let off = start + off;
                self.out[off..off + 4].copy_from_slice(&rec.nonce);
            }
            let range = start as u32..self.out.len() as u32;
            self.send(
                rec.face,
                SendKind::Nack(reason),
                PacketRef::Out(range),
                rec.pit_token(),
                0,
                None,
            );
        }
    }

    /// Completes a pending slower-tier lookup for exactly these name components: with the Data,
    /// it satisfies the waiting Interests (and is cached in RAM, fresh for its whole
    /// FreshnessPeriod from `now_ms`); without, they are forwarded. A Data that arrived earlier
    /// (a slower tier's copy) goes through [`Engine::complete_pending_aged`].
    pub fn complete_pending<'e>(
        &'e mut self,
        now_ms: u64,
        full_hash: u64,
        name_value: &[u8],
        data: Option<&[u8]>,
    ) -> Output<'e> {
        self.complete_pending_aged(now_ms, full_hash, name_value, data, 0)
    }

    /// [`Engine::complete_pending`] for a Data that arrived `age_ms` ago (a slower tier knows
    /// when it stored it): the RAM CS counts its FreshnessPeriod from its arrival, not from
    /// `now_ms`, so a MustBeFresh Interest never gets a Data older than its FreshnessPeriod.
    /// `u64::MAX`: age unknown, stale at once (still served without MustBeFresh).
    pub fn complete_pending_aged<'e>(
        &'e mut self,
        now_ms: u64,
        full_hash: u64,
        name_value: &[u8],
        data: Option<&[u8]>,
        age_ms: u64,
    ) -> Output<'e> {
        self.actions.clear();
        self.out.clear();
        let Some(e) = self.table.find(full_hash, name_value) else {
            return Output {
                actions: &self.actions,
                out: &self.out,
            };
        };
        let pits = self.table.pits_of(e);
        // Send to every downstream once, even if it waits on several of the name's entries.
        let mut sent = std::mem::take(&mut self.faces_scratch);
        sent.clear();
        for p in pits.into_iter().filter(|&p| p != NONE) {
            if !self.table.pit(p).cs_pending {
                continue;
            }
            self.table.pit_mut(p).cs_pending = false;
            match data {
                Some(d) => {
                    let start = self.out.len() as u32;
                    self.out.extend_from_slice(d);
                    let range = start..self.out.len() as u32;
                    let n = self.table.pit(p).in_records.len();
                    for r in 0..n {
                        let rec = self.table.pit(p).in_records[r];
                        if rec.expiry_ms > now_ms && !sent.contains(&rec.face) {
                            sent.push(rec.face);
                            let mark = self.data_mark(p, 0);
                            self.send(
                                rec.face,
                                SendKind::Data,
                                PacketRef::Out(range.clone()),
                                rec.pit_token(),
                                mark,
                                None,
                            );
                        }
                    }
                    self.table.pit_remove(p, |_| {});
                    self.counters.satisfied += 1;
                }
                None => self.forward_stored(now_ms, p),
            }
        }
        if data.is_some() {
            self.faces_scratch = sent;
        }
        if let Some(d) = data.filter(|_| self.cs_admit) {
            if let Ok(view) = DataView::decode(d, &self.config.limits) {
                let fresh_ms = remaining_freshness_ms(&view, age_ms);
                if view.name().value() != name_value {
                    // A CanBePrefix answer: cached under its own name.
                    self.insert_cs_aged(now_ms, d, age_ms);
                } else if let Some(e) = self.table.find(full_hash, name_value) {
                    self.table.cs_insert(e, view.wire(), fresh_ms, now_ms);
                } else if let Ok(e) =
                    self.table
                        .find_or_insert(full_hash, name_value, view.name().len())
                {
                    self.table.cs_insert(e, view.wire(), fresh_ms, now_ms);
                }
            }
        }
        Output {
            actions: &self.actions,
            out: &self.out,
        }
    }

    /// Caches a Data that no Interest is waiting for (a chunk a slower tier prefetched with
    /// its batch). Returns false if the packet does not decode or the table is full; a Data
    /// already cached is refreshed. Honours no PIT entry and sends nothing.
    pub fn insert_cs(&mut self, now_ms: u64, data_wire: &[u8]) -> bool {
        self.insert_cs_aged(now_ms, data_wire, 0)
    }

    /// [`Engine::insert_cs`] for a Data that arrived `age_ms` ago: fresh only for what is left
    /// of its FreshnessPeriod (see [`Engine::complete_pending_aged`]).
    pub fn insert_cs_aged(&mut self, now_ms: u64, data_wire: &[u8], age_ms: u64) -> bool {
        if !self.cs_admit {
            return false;
        }
        let Ok(view) = DataView::decode(data_wire, &self.config.limits) else {
            return false;
        };
        let name = view.name();
        let h = PrefixHashes::new(self.key, &name);
        match self
            .table
            .find_or_insert(h.full(), name.value(), name.len())
        {
            Ok(e) => {
                let fresh_ms = remaining_freshness_ms(&view, age_ms);
                self.table.cs_insert(e, view.wire(), fresh_ms, now_ms);
                true
            }
            Err(_) => false,
        }
    }

    /// A stored Interest `i` (wire `stored`) to send upstream: a copy in the output buffer with
    /// its HopLimit decremented, and whether it may go only to local faces (`from_remote`: a
    /// downstream is not local).
    pub(super) fn stored_outgoing(
        &mut self,
        stored: &[u8],
        i: &InterestView<'_>,
        from_remote: bool,
    ) -> (PacketRef, bool) {
        let start = self.out.len();
        self.out.extend_from_slice(stored);
        if let Some(off) = i.hop_limit_value_offset() {
            self.out[start + off] = self.out[start + off].saturating_sub(1);
        }
        let outgoing = PacketRef::Out(start as u32..self.out.len() as u32);
        let name = i.name();
        let restrict_local = i.hop_limit() == Some(1)
            || (from_remote && is_under(&name, b"localhop"))
            || is_under(&name, b"localhost");
        (outgoing, restrict_local)
    }

    /// Forwards the Interest stored in PIT entry `p` (after a slower-tier miss).
    pub(super) fn forward_stored(&mut self, now_ms: u64, p: u32) {
        let stored = self.table.pit(p).interest.clone();
        let Ok(i) = InterestView::decode(&stored, &self.config.limits) else {
            self.table.pit_remove(p, |_| {});
            return;
        };
        let h = PrefixHashes::new(self.key, &i.name());
        self.hashes[0] = h;
        let face = self
            .table
            .pit(p)
            .in_records
            .first()
            .map_or(NONE, |r| r.face);
        let from_remote = self
            .table
            .pit(p)
            .in_records
            .iter()
            .any(|r| !self.face(r.face).local);
        let (outgoing, restrict_local) = self.stored_outgoing(&stored, &i, from_remote);
        let guard = crossbeam_epoch::pin();
        self.forward(Forward {
            now_ms,
            idx: 0,
            face,
            p,
            is_new: true,
            nonce: i.nonce().unwrap_or([0; 4]),
            expiry: self.table.pit(p).expiry_ms,
            next_hop: self.table.pit(p).stored_next_hop,
            outgoing,
            restrict_local,
            stored: true,
            bypass: false,
            wire: &stored,
            interest: &i,
            token: None,
            mark: self.table.pit(p).stored_mark,
            planned: None,
            guard: &guard,
        });
    }
}

/// What is left of a Data's FreshnessPeriod `age_ms` after it arrived (0: stale now).
fn remaining_freshness_ms(view: &DataView<'_>, age_ms: u64) -> u64 {
    view.freshness_ms().unwrap_or(0).saturating_sub(age_ms)
}
