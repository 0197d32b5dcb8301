//! The read path: Algorithm 1 as a resumable state machine, probes, prefetch requests.

use core::sync::atomic::Ordering;
use std::sync::Arc;

use crossbeam_epoch::Guard;
use wire::NameView;

use super::arena::Arena;
use super::{Fib, FibEntry, LpmStats};
use crate::hash::{PrefixHashes, MAX_PREFIX_STATES};
use crate::table::index::{Direct, LinePlan, Stopped, Touch};

/// Where a FIB lookup ([`Fib::lookup`], [`Fib::plan`]) is in Algorithm 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Phase {
    /// Not started: M is read and stage 1 begins at depth min(n, M).
    #[default]
    Start,
    /// Stage 1: probing depth `k`, from min(n, M) down to 1.
    Stage1,
    /// Stage 2: probing depth `k`, from min(n, MD) down to M + 1.
    Stage2,
    /// Below M after stage 2 found nothing and the depth-M entry was virtual: real entries
    /// from depth `k` down to 1.
    Descend,
    /// The default route `/`.
    Root,
    /// Answered.
    Done,
}

/// A FIB lookup's position in Algorithm 1, kept between the planning passes of a batch so that
/// each pass resumes the lookup at the probe it stopped in instead of replaying it from the
/// start. Valid for the guard its lookup runs under (`'g`): it holds the depth-M entry stage 2
/// may fall back to. Start each lookup from [`FibCursor::default`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FibCursor<'g> {
    phase: Phase,
    /// M, read once when the lookup starts (a concurrent change of M does not mix two Ms in
    /// one lookup).
    m: u8,
    /// The depth probed next (or being probed).
    k: u8,
    /// Probes finished so far.
    probes: u32,
    /// Stage 2's fall-back: the real depth-M entry whose MD sent the lookup there.
    stage1: Option<&'g FibEntry>,
}

impl Fib {
    #[inline(always)]
    pub(super) fn check_guard(&self, guard: &Guard) {
        // Slots are recycled through the default collector; a guard of another collector (or
        // `unprotected`) would not hold them.
        assert!(
            guard.collector() == Some(self.collector),
            "FIB lookups need a guard from crossbeam_epoch::pin()"
        );
    }

    /// One hash-table probe for the first `k` components of the Interest name, reading memory
    /// through `t` (a planning pass stops at lines it has not requested yet). Counts the probe
    /// in `probes` when it finishes.
    #[inline(always)]
    pub(super) fn probe<'g, T: Touch>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        k: usize,
        guard: &'g Guard,
        probes: &mut u32,
        t: &mut T,
    ) -> Result<Option<&'g FibEntry>, Stopped> {
        let (Some(hash), Some(end)) = (h.prefix(k, name), h.prefix_end(k, name)) else {
            return Ok(None);
        };
        let Some(bytes) = name.value().get(..end) else {
            return Ok(None);
        };
        let arena = self.arena_for(guard);
        let mut found = None;
        self.index.find_touched(hash, t, |slot, t| {
            // Both lines of the entry, requested together (one page, one walk): the prefix may
            // run into the second, where the answer's next hops are.
            let line = arena.line(slot);
            let (first, second) = (t.touch(line), t.touch(line.wrapping_add(64)));
            if !(first && second) {
                return Err(Stopped);
            }
            // SAFETY: `slot` was just loaded from the index with acquire ordering while `guard`
            // (checked by the callers to be of the default collector) is pinned, and it lives
            // for `'g`; a slot is recycled only after every such guard is gone.
            match unsafe { arena.get(slot) } {
                Some(e) if e.hash == hash => {
                    if let Some((head, tail)) = e.heap_lines() {
                        let (a, b) = (t.touch(head), t.touch(tail));
                        if !(a && b) {
                            return Err(Stopped);
                        }
                    }
                    let hit = e.value() == bytes;
                    if hit {
                        found = Some(e);
                    }
                    Ok(hit)
                }
                _ => Ok(false),
            }
        })?;
        *probes += 1;
        Ok(found)
    }

    /// The arena, for as long as a reader's guard is pinned: the arena is freed through the
    /// collector when the FIB is dropped, so it outlives every guard pinned before that.
    #[inline(always)]
    pub(super) fn arena_for<'g>(&self, _guard: &'g Guard) -> &'g Arena {
        let p: *const Arena = Arc::as_ptr(&self.arena);
        // SAFETY: `Drop for Fib` hands its reference to the arena to a deferred function of the
        // default collector, which runs only after every guard pinned before it (such as
        // `_guard`, pinned while `self` is alive) has been dropped.
        unsafe { &*p }
    }

    /// The `/` entry if the FIB has one (a default route), else no probe.
    #[inline(always)]
    pub(super) fn probe_root<'g, T: Touch>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        probes: &mut u32,
        t: &mut T,
    ) -> Result<Option<&'g FibEntry>, Stopped> {
        if self.has_root.load(Ordering::Acquire) {
            Ok(self
                .probe(name, h, 0, guard, probes, t)?
                .filter(|e| !e.is_virtual))
        } else {
            Ok(None)
        }
    }

    /// Longest-prefix match with the 2-stage algorithm of So et al. (Algorithm 1). No lock, no
    /// allocation. `h` must be the prefix hashes of `name` under this FIB's key.
    ///
    /// # Panics
    /// If `guard` was not obtained from [`crossbeam_epoch::pin`].
    #[inline]
    pub fn lookup<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        stats: &mut LpmStats,
    ) -> Option<&'g FibEntry> {
        self.run_to_end(name, h, guard, FibCursor::default(), stats)
    }

    /// Plans [`Fib::lookup`] of `name` over passes of a batch: resumes the lookup where
    /// `cursor` says it stopped, over the lines `plan` requested in earlier passes, and
    /// requests the next line it needs (one per pass, or the two lines of an entry). Sets
    /// `plan.complete` once the lookup reaches its end.
    ///
    /// The pass that completes the plan returns the lookup's answer and probe count, exactly
    /// what [`Fib::lookup`] would answer (every probe compares name bytes), so the caller need
    /// not look the name up again; every other pass returns `None`. `cursor` must start from
    /// [`FibCursor::default`] for each lookup and stay with `plan` (reset by [`Fib::prefetch`])
    /// and under the same `guard` until the plan completes.
    ///
    /// # Panics
    /// If `guard` was not obtained from [`crossbeam_epoch::pin`].
    #[inline]
    pub fn plan<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        plan: &mut LinePlan,
        cursor: &mut FibCursor<'g>,
    ) -> Option<(Option<&'g FibEntry>, u64)> {
        if plan.complete {
            return None;
        }
        self.check_guard(guard);
        let answer = self.two_stage(name, h, guard, cursor, plan).ok()?;
        plan.complete = true;
        Some((answer, u64::from(cursor.probes)))
    }

    /// Algorithm 1 as a resumable state machine, reading through `t`: runs from `c`'s position
    /// until the answer (`c` is then [`Phase::Done`]) or a line `t` stops at (`c` then stays at
    /// the probe that stopped, which the next call runs again from its bucket).
    #[inline(always)]
    pub(super) fn two_stage<'g, T: Touch>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        c: &mut FibCursor<'g>,
        t: &mut T,
    ) -> Result<Option<&'g FibEntry>, Stopped> {
        let n = h.len();
        // At most one step per depth of each phase, and six phases: the loop ends.
        loop {
            let m = usize::from(c.m);
            let k = usize::from(c.k);
            match c.phase {
                Phase::Start => {
                    // M is at most MAX_PREFIX_STATES (it is a depth), and so is k below.
                    let m = self.m.load(Ordering::Acquire).min(MAX_PREFIX_STATES);
                    c.m = m as u8;
                    c.k = n.min(m) as u8;
                    c.phase = Phase::Stage1;
                }
                Phase::Stage1 if k == 0 => c.phase = Phase::Root,
                Phase::Stage1 => {
                    let e = self.probe(name, h, k, guard, &mut c.probes, t)?;
                    match e {
                        Some(e) if usize::from(e.depth) == m && usize::from(e.md) > m && n > m => {
                            c.stage1 = (!e.is_virtual).then_some(e);
                            c.phase = Phase::Stage2;
                            c.k = n.min(usize::from(e.md)) as u8;
                        }
                        Some(e) if !e.is_virtual => {
                            c.phase = Phase::Done;
                            return Ok(Some(e));
                        }
                        _ => c.k -= 1,
                    }
                }
                Phase::Stage2 if k <= m => match c.stage1 {
                    Some(e) => {
                        c.phase = Phase::Done;
                        return Ok(Some(e));
                    }
                    None => {
                        c.phase = Phase::Descend;
                        c.k = (m - 1) as u8;
                    }
                },
                Phase::Stage2 | Phase::Descend if k == 0 => c.phase = Phase::Root,
                Phase::Stage2 | Phase::Descend => {
                    let e = self.probe(name, h, k, guard, &mut c.probes, t)?;
                    match e {
                        Some(e) if !e.is_virtual => {
                            c.phase = Phase::Done;
                            return Ok(Some(e));
                        }
                        _ => c.k -= 1,
                    }
                }
                Phase::Root => {
                    let e = self.probe_root(name, h, guard, &mut c.probes, t)?;
                    c.phase = Phase::Done;
                    return Ok(e);
                }
                Phase::Done => return Ok(None),
            }
        }
    }

    /// Longest-prefix match the basic way (So et al.'s baseline): from depth
    /// min(n, deepest real prefix) down to `/`. Same contract as [`Fib::lookup`].
    ///
    /// # Panics
    /// If `guard` was not obtained from [`crossbeam_epoch::pin`].
    #[inline]
    pub fn lookup_longest_first<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        stats: &mut LpmStats,
    ) -> Option<&'g FibEntry> {
        let start = h.len().min(self.max_real_depth.load(Ordering::Acquire));
        // Real entries from `start` down to 1, then `/`: the part of Algorithm 1 below M.
        let c = FibCursor {
            phase: Phase::Descend,
            k: start.min(MAX_PREFIX_STATES) as u8,
            ..FibCursor::default()
        };
        self.run_to_end(name, h, guard, c, stats)
    }

    /// Runs a lookup from cursor `c` to its end, reading memory directly, and counts it and
    /// its probes in `stats`.
    #[inline(always)]
    fn run_to_end<'g>(
        &self,
        name: &NameView<'_>,
        h: &PrefixHashes,
        guard: &'g Guard,
        mut c: FibCursor<'g>,
        stats: &mut LpmStats,
    ) -> Option<&'g FibEntry> {
        self.check_guard(guard);
        stats.lookups += 1;
        // `Direct` never stops.
        let answer = self
            .two_stage(name, h, guard, &mut c, &mut Direct)
            .ok()
            .flatten();
        stats.probes += u64::from(c.probes);
        answer
    }

    /// Starts a lookup plan for a new packet: requests the index bucket of the first probe of
    /// [`Fib::lookup`]'s first stage (the prefix of min(n, M) components), which needs no
    /// earlier read (prefetched by the plan's next [`LinePlan::issue`]). Later passes go on with
    /// [`Fib::plan`].
    ///
    /// Only that one bucket: the next one (min(n, M) − 1 components) is needed only when the
    /// first probe misses, and on this project's machine every random line of a large table
    /// costs a page walk, during which the prefetch instruction itself holds up the core
    /// (docs/performance.md, on the 16M figures), so a speculative request costs
    /// every Interest what it saves the few whose first probe misses.
    #[inline]
    pub fn prefetch(&self, name: &NameView<'_>, h: &PrefixHashes, plan: &mut LinePlan) {
        plan.reset();
        let k = h.len().min(self.m.load(Ordering::Relaxed));
        if let Some(hash) = h.prefix(k, name) {
            plan.request(self.index.home_line(hash));
        }
    }
}
