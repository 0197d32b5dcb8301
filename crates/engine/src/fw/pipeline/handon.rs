//! Handing a pending CanBePrefix Interest on to another engine: when this engine's slower tier
//! has no chunk under the Interest's name, another worker's may (each worker's L2 holds the
//! names it owns), so the router may give the Interest to that worker instead of forwarding it.
//!
//! A handed-on Interest is the one its downstream sent, as NFD's `onIncomingInterest` and
//! `onContentStoreMiss` would still use it: its nonce, the downstream's PIT token, the
//! NextHopFaceId it came with, and what is left of its lifetime here; the engine that takes it
//! runs it through [`Engine::process_handed_on`].

use super::*;

/// What [`Engine::hand_on_pending`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandedOn {
    /// Interests handed on (one per live downstream of each entry that went).
    pub interests: u32,
    /// PIT entries removed because every downstream's Interest was handed on.
    pub entries: u32,
    /// PIT entries kept pending because a hand-over was refused: the downstreams handed on
    /// before the refusal left the entry, and the caller completes it with
    /// [`Engine::complete_pending`] (no data), which forwards it for the others.
    pub kept: u32,
}

/// One downstream's Interest, handed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandOn<'a> {
    /// The downstream's face (the Interest comes from it at the other engine).
    pub face: FaceId,
    /// The downstream's NDNLPv2 PIT token.
    pub pit_token: Option<&'a [u8]>,
    /// The NextHopFaceId the stored Interest came with.
    pub next_hop: Option<FaceId>,
    /// The CongestionMark the stored Interest came with (0: none), to send on with it.
    pub congestion_mark: u64,
    /// What is left of the downstream's lifetime, ms (at least 1).
    pub lifetime_left_ms: u64,
    /// The stored Interest with the downstream's nonce.
    pub interest: &'a [u8],
}

impl Engine {
    /// For each PIT entry of `name_value` (full-name hash `full_hash`) that waits for a
    /// CanBePrefix lookup of the slower tier: calls `push` for each downstream whose Interest
    /// has not expired ([`HandOn`]). When every push of an entry returns true, the entry is
    /// removed without an answer (the engine that took the Interests answers, or forwards
    /// them). At the first false the entry stays pending for [`Engine::complete_pending`] to
    /// forward, without the downstreams handed on before (they get their answer from the
    /// other engine, once) and, if its stored Interest carried the nonce of one of them, with
    /// the nonce of a downstream that stays; its later downstreams are not offered. Entries of
    /// exact lookups are left alone. Sends nothing itself; allocates nothing.
    pub fn hand_on_pending(
        &mut self,
        now_ms: u64,
        full_hash: u64,
        name_value: &[u8],
        mut push: impl FnMut(&HandOn<'_>) -> bool,
    ) -> HandedOn {
        let mut done = HandedOn::default();
        let Some(e) = self.table.find(full_hash, name_value) else {
            return done;
        };
        let mut pushed = std::mem::take(&mut self.faces_scratch);
        for p in self.table.pits_of(e).into_iter().filter(|&p| p != NONE) {
            let pe = self.table.pit(p);
            if !pe.cs_pending || !pe.can_be_prefix || pe.interest.is_empty() {
                continue;
            }
            pushed.clear();
            let mut all = true;
            for r in 0..pe.in_records.len() {
                let pe = self.table.pit(p);
                let rec = pe.in_records[r];
                if rec.expiry_ms <= now_ms {
                    continue;
                }
                self.out.clear();
                self.out.extend_from_slice(&pe.interest);
                if let Some(off) = pe.nonce_offset.map(usize::from) {
                    self.out[off..off + 4].copy_from_slice(&rec.nonce);
                }
                let h = HandOn {
                    face: rec.face,
                    pit_token: rec.pit_token(),
                    next_hop: pe.stored_next_hop,
                    congestion_mark: pe.stored_mark,
                    lifetime_left_ms: rec.expiry_ms - now_ms,
                    interest: &self.out,
                };
                if !push(&h) {
                    all = false;
                    break;
                }
                pushed.push(rec.face);
                done.interests += 1;
            }
            if all {
                self.table.pit_remove(p, |_| {});
                done.entries += 1;
                continue;
            }
            done.kept += 1;
            if pushed.is_empty() {
                continue;
            }
            self.table
                .remove_in_records(p, |r| pushed.contains(&r.face));
            // The nonces handed on go upstream from the other engine: this one forwards with
            // a nonce of its own downstreams.
            let pe = self.table.pit_mut(p);
            if let (Some(off), Some(rec)) =
                (pe.nonce_offset.map(usize::from), pe.in_records.first())
            {
                let nonce = rec.nonce;
                pe.interest[off..off + 4].copy_from_slice(&nonce);
            }
        }
        self.faces_scratch = pushed;
        self.out.clear();
        done
    }
}
