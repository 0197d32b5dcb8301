//! Invariant checks for tests and the simulator.

use super::*;

impl PitCs {
    /// Checks the table's invariants (for tests and the simulator): counts agree with the
    /// arenas (the per-face in-record counts with the in-records present), every live PIT
    /// entry is reachable from its name entry and scheduled, the CS list holds exactly the CS
    /// entries, and capacities are respected.
    pub fn check_invariants(&self) -> Result<(), String> {
        let live_pits = self.pits.iter().filter(|p| p.in_use).count();
        if live_pits != self.pit_len || live_pits + self.free_pits.len() != self.pits.len() {
            return Err(format!("pit_len {} but {} live", self.pit_len, live_pits));
        }
        if self.pit_len > self.config.pit_capacity || self.cs_len > self.config.cs_capacity {
            return Err("capacity exceeded".into());
        }
        self.shares.check(
            self.pits
                .iter()
                .filter(|p| p.in_use)
                .flat_map(|p| p.in_records.iter()),
        )?;
        let live_cbp = self
            .pits
            .iter()
            .filter(|p| p.in_use && p.can_be_prefix)
            .count();
        let by_depth: u64 = self.cbp_by_depth.iter().map(|&c| u64::from(c)).sum();
        if live_cbp != self.cbp_pits as usize || by_depth != u64::from(self.cbp_pits) {
            return Err(format!(
                "{live_cbp} live CanBePrefix PIT entries, counted {} ({by_depth} by depth)",
                self.cbp_pits
            ));
        }
        if let Some(p) = self
            .pits
            .iter()
            .position(|p| p.has_interest == p.interest.is_empty() || (!p.in_use && p.has_interest))
        {
            return Err(format!(
                "PIT entry {p}: stored Interest and its flag disagree"
            ));
        }
        let mut cs_count = 0;
        let mut i = self.cs_head;
        while i != NONE {
            cs_count += 1;
            if cs_count > self.names.len() {
                return Err("CS list has a cycle".into());
            }
            if self.names[i as usize].cs == CsKind::None {
                return Err("non-CS entry on the CS list".into());
            }
            i = self.names[i as usize].cs_next;
        }
        let cs_entries = self
            .names
            .iter()
            .filter(|n| n.in_use && n.cs != CsKind::None)
            .count();
        let direct = self
            .names
            .iter()
            .filter(|n| n.in_use && n.cs == CsKind::Direct)
            .count();
        let holding = self
            .names
            .iter()
            .filter(|n| n.data_slot().is_some())
            .count();
        if direct != holding || holding != self.data.live() {
            return Err(format!(
                "Data slots: {direct} direct entries, {holding} holding one, {} handed out",
                self.data.live()
            ));
        }
        self.data.check()?;
        let mut slots: Vec<Slot> = self.names.iter().filter_map(|n| n.data_slot()).collect();
        slots.sort_by_key(|s| (s.class, s.index));
        if slots.windows(2).any(|w| w[0] == w[1]) {
            return Err("two name entries share a Data slot".into());
        }
        if let Some(n) = self.names.iter().find(|n| {
            n.data_slot()
                .is_some_and(|s| usize::from(n.data_len) > self.data.slot(s).len())
        }) {
            return Err(format!("Data of {} bytes beyond its slot", n.data_len));
        }
        if cs_count != self.cs_len || cs_entries != self.cs_len {
            return Err(format!(
                "cs_len {} list {} entries {}",
                self.cs_len, cs_count, cs_entries
            ));
        }
        for (i, n) in self.names.iter().enumerate() {
            if n.in_use {
                if n.is_empty() {
                    return Err(format!("empty name entry {i} not released"));
                }
                if self.find(n.hash, name_of(n, &self.long_names)) != Some(i as u32) {
                    return Err(format!("name entry {i} not indexed"));
                }
                for (s, &p) in n.pit.iter().enumerate() {
                    if p != NONE {
                        let pe = &self.pits[p as usize];
                        if !pe.in_use
                            || pe.owner != i as u32
                            || pit_slot(pe.can_be_prefix, pe.must_be_fresh) != s
                        {
                            return Err(format!("PIT link broken at {i}"));
                        }
                        if pe.wheel_slot == NONE && pe.expiry_ms > self.wheel_time_ms {
                            return Err(format!("PIT entry {p} not scheduled"));
                        }
                    }
                }
            }
        }
        if self.names_len() != self.index.len() {
            return Err("index and arena disagree".into());
        }
        Ok(())
    }
}
