//! The PIT's timer wheel: InterestLifetime expiry in ticks of [`WHEEL_TICK_MS`].

use super::*;

impl PitCs {
    pub(super) fn schedule(&mut self, p: u32, expiry_ms: u64) {
        self.unschedule(p);
        let slot =
            ((expiry_ms.max(self.wheel_time_ms) / WHEEL_TICK_MS) % WHEEL_SLOTS as u64) as u32;
        let head = self.wheel[slot as usize];
        {
            let pe = &mut self.pits[p as usize];
            pe.expiry_ms = expiry_ms;
            pe.wheel_slot = slot;
            pe.wheel_prev = NONE;
            pe.wheel_next = head;
        }
        if head != NONE {
            self.pits[head as usize].wheel_prev = p;
        }
        self.wheel[slot as usize] = p;
    }

    pub(super) fn unschedule(&mut self, p: u32) {
        let (slot, prev, next) = {
            let pe = &self.pits[p as usize];
            (pe.wheel_slot, pe.wheel_prev, pe.wheel_next)
        };
        if slot == NONE {
            return;
        }
        if prev == NONE {
            self.wheel[slot as usize] = next;
        } else {
            self.pits[prev as usize].wheel_next = next;
        }
        if next != NONE {
            self.pits[next as usize].wheel_prev = prev;
        }
        let pe = &mut self.pits[p as usize];
        pe.wheel_slot = NONE;
        pe.wheel_prev = NONE;
        pe.wheel_next = NONE;
    }

    /// Advances time to `now_ms`, passing every PIT entry whose expiry is at or before `now_ms`
    /// to `on_expire` (which decides what to do, typically [`PitCs::pit_remove`] after the
    /// strategy's say). Visits only the wheel slots that time passed over (at most a full lap).
    pub fn expire(&mut self, now_ms: u64, expired: &mut Vec<u32>) {
        expired.clear();
        if now_ms < self.wheel_time_ms {
            return;
        }
        let first = self.wheel_time_ms / WHEEL_TICK_MS;
        let last = now_ms / WHEEL_TICK_MS;
        let laps = (last - first).min(WHEEL_SLOTS as u64 - 1);
        for t in first..=first + laps {
            let slot = (t % WHEEL_SLOTS as u64) as usize;
            let mut p = self.wheel[slot];
            while p != NONE {
                let pe = &self.pits[p as usize];
                let next = pe.wheel_next;
                if pe.expiry_ms <= now_ms {
                    expired.push(p);
                }
                p = next;
            }
        }
        self.wheel_time_ms = now_ms;
        for &p in expired.iter() {
            self.unschedule(p);
        }
        self.counters.pit_expired += expired.len() as u64;
    }
}
