//! Handing a pending CanBePrefix Interest on to another engine: when this engine's slower tier
//! has no chunk under the Interest's name, another worker's may (each worker's L2 holds the
//! names it owns), so the router may give the Interest to that worker instead of forwarding it.

use super::*;

/// What [`Engine::hand_on_pending`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HandedOn {
    /// Interests handed on (one per live downstream of each entry that went).
    pub interests: u32,
    /// PIT entries removed because every downstream's Interest was handed on.
    pub entries: u32,
    /// PIT entries kept pending because a hand-over was refused: the caller completes them
    /// with [`Engine::complete_pending`] (no data), which forwards them as usual.
    pub kept: u32,
}

impl Engine {
    /// For each PIT entry of `name_value` (full-name hash `full_hash`) that waits for a
    /// CanBePrefix lookup of the slower tier: calls `push(face, token, interest)` for each
    /// downstream whose Interest has not expired, with the stored Interest carrying that
    /// downstream's nonce and its PIT token. When every push of an entry returns true, the entry
    /// is removed without an answer (the engine that took the Interests answers, or forwards
    /// them); at the first false the entry stays pending (and its later downstreams are not
    /// offered) for [`Engine::complete_pending`] to forward: a downstream handed on before may
    /// then get two answers, which NDN tolerates (the second is unsolicited). Entries of exact
    /// lookups are left alone. Sends nothing itself.
    pub fn hand_on_pending(
        &mut self,
        now_ms: u64,
        full_hash: u64,
        name_value: &[u8],
        mut push: impl FnMut(FaceId, Option<&[u8]>, &[u8]) -> bool,
    ) -> HandedOn {
        let mut done = HandedOn::default();
        let Some(e) = self.table.find(full_hash, name_value) else {
            return done;
        };
        for p in self.table.pits_of(e).into_iter().filter(|&p| p != NONE) {
            let pe = self.table.pit(p);
            if !pe.cs_pending || !pe.can_be_prefix || pe.interest.is_empty() {
                continue;
            }
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
                if !push(rec.face, rec.pit_token(), &self.out) {
                    all = false;
                    break;
                }
                done.interests += 1;
            }
            if all {
                self.table.pit_remove(p, |_| {});
                done.entries += 1;
            } else {
                done.kept += 1;
            }
        }
        self.out.clear();
        done
    }
}
