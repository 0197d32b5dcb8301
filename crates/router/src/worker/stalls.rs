//! How long a worker's loop iterations take, and how much of each storage takes.

use mgmt::LatencyHistogram;

/// Buckets (1 µs each) of the stall histograms; longer times fall in the last one.
pub const STALL_BUCKETS: usize = 16_384;

/// How long a worker's loop iterations take, and how much of each is spent on storage
/// (L2 lookups, admissions and write-back, polling and handing out completions).
pub(super) struct Stalls {
    pub(super) storage: Vec<u32>,
    pub(super) looped: Vec<u32>,
    pub(super) storage_max_ns: u64,
    pub(super) loop_max_ns: u64,
    pub(super) storage_over_1ms: u64,
    pub(super) iterations: u64,
    /// Sums of the storage and loop times recorded, ns.
    pub(super) storage_sum_ns: u64,
    pub(super) loop_sum_ns: u64,
    /// Storage time of the current iteration so far.
    pub(super) current_ns: u64,
    /// Longest L2 poll (completions handed to the engine included), ns.
    pub(super) poll_max_ns: u64,
    /// Longest L2 lookups of one iteration (starting batch reads), ns.
    pub(super) lookups_max_ns: u64,
    /// Storage time of iterations in which the thread was not preempted (no involuntary
    /// context switch): the stalls storage itself caused, on CPU or blocked in a system call.
    pub(super) unpreempted_max_ns: u64,
    pub(super) unpreempted_over_1ms: u64,
    /// Iterations whose storage time exceeded 1 ms while the scheduler preempted the thread.
    pub(super) preempted_over_1ms: u64,
    /// Unpreempted iterations over 1 ms in which the thread blocked (a voluntary switch: a
    /// system call or a page fault waited).
    pub(super) blocked_over_1ms: u64,
    /// Unpreempted, unblocked iterations over 1 ms whose thread CPU time also exceeded 1 ms.
    pub(super) on_cpu_over_1ms: u64,
    /// Of those, the ones in which the thread took page faults.
    pub(super) faulted_over_1ms: u64,
    /// Context switches (voluntary, involuntary), CPU time (µs) and minor page faults at the
    /// start of the iteration.
    pub(super) switches: (i64, i64, i64, i64),
    /// The thread's minor page faults at the start of its first iteration.
    pub(super) first_faults: Option<i64>,
}

/// The calling thread's (voluntary, involuntary) context switches, CPU time in µs and minor
/// page faults.
pub(super) fn context_switches() -> (i64, i64, i64, i64) {
    // SAFETY: getrusage writes into the zeroed struct we own.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut u);
        let us = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
        let cpu_us = us(u.ru_utime) + us(u.ru_stime);
        (u.ru_nvcsw, u.ru_nivcsw, cpu_us, u.ru_minflt)
    }
}

impl Stalls {
    pub(super) fn new() -> Self {
        // Zeroed memory from calloc is mapped only when first written: a long iteration would
        // take the page fault when it records itself.
        let mapped = || {
            let mut v = vec![0; STALL_BUCKETS];
            engine::table::mem::touch_slice(&mut v);
            v
        };
        Stalls {
            storage: mapped(),
            looped: mapped(),
            storage_max_ns: 0,
            loop_max_ns: 0,
            storage_over_1ms: 0,
            iterations: 0,
            storage_sum_ns: 0,
            loop_sum_ns: 0,
            current_ns: 0,
            poll_max_ns: 0,
            lookups_max_ns: 0,
            unpreempted_max_ns: 0,
            unpreempted_over_1ms: 0,
            preempted_over_1ms: 0,
            blocked_over_1ms: 0,
            on_cpu_over_1ms: 0,
            faulted_over_1ms: 0,
            switches: (0, 0, 0, 0),
            first_faults: None,
        }
    }

    /// Reads the thread's counters at the start of an iteration.
    pub(super) fn start_iteration(&mut self) {
        self.switches = context_switches();
        self.first_faults.get_or_insert(self.switches.3);
    }

    pub(super) fn bucket(ns: u64) -> usize {
        ((ns / 1000) as usize).min(STALL_BUCKETS - 1)
    }

    /// Records an iteration; `preempted`: the scheduler switched the thread out during it;
    /// `blocked`: the thread waited in the kernel during it; `on_cpu`: its CPU time exceeded
    /// 1 ms; `faulted`: it took page faults.
    pub(super) fn record(
        &mut self,
        storage_ns: u64,
        loop_ns: u64,
        preempted: bool,
        blocked: bool,
        (on_cpu, faulted): (bool, bool),
    ) {
        let over = u64::from(storage_ns > 1_000_000);
        if preempted {
            self.preempted_over_1ms += over;
        } else {
            self.unpreempted_max_ns = self.unpreempted_max_ns.max(storage_ns);
            self.unpreempted_over_1ms += over;
            self.blocked_over_1ms += over * u64::from(blocked);
            self.on_cpu_over_1ms += over * u64::from(!blocked && on_cpu);
            self.faulted_over_1ms += over * u64::from(!blocked && on_cpu && faulted);
        }
        let b = &mut self.storage[Self::bucket(storage_ns)];
        *b = b.saturating_add(1);
        let b = &mut self.looped[Self::bucket(loop_ns)];
        *b = b.saturating_add(1);
        self.storage_max_ns = self.storage_max_ns.max(storage_ns);
        self.loop_max_ns = self.loop_max_ns.max(loop_ns);
        self.storage_over_1ms += u64::from(storage_ns > 1_000_000);
        self.iterations += 1;
        self.storage_sum_ns = self.storage_sum_ns.wrapping_add(storage_ns);
        self.loop_sum_ns = self.loop_sum_ns.wrapping_add(loop_ns);
    }

    /// The storage and loop times as histograms with power-of-two bounds (1 µs to 8 ms).
    pub(super) fn histograms(&self) -> [LatencyHistogram; 2] {
        let h = |name, help, buckets: &[u32], sum_ns| {
            let le_us: Vec<u64> = (0..14).map(|i| 1u64 << i).collect();
            // Bucket i holds times up to (i + 1) µs.
            let cumulative = le_us
                .iter()
                .map(|&le| buckets[..le as usize].iter().map(|&c| u64::from(c)).sum())
                .collect();
            LatencyHistogram {
                name,
                help,
                le_us,
                cumulative,
                count: self.iterations,
                sum_ns,
            }
        };
        [
            h(
                "l2_storage",
                "Time a worker's loop iteration spends on its L2 tier (lookups, admissions, \
                 write-back, completions).",
                &self.storage,
                self.storage_sum_ns,
            ),
            h(
                "l2_loop",
                "Time a worker's loop iteration that did work takes, with an L2 tier.",
                &self.looped,
                self.loop_sum_ns,
            ),
        ]
    }

    /// Upper edge (ns) of the bucket holding quantile `q`, capped at `max`.
    pub(super) fn quantile(h: &[u32], n: u64, max: u64, q: f64) -> u64 {
        let want = ((q * n as f64).ceil() as u64).max(1);
        let mut seen = 0u64;
        for (i, &c) in h.iter().enumerate() {
            seen += u64::from(c);
            if seen >= want {
                return ((i as u64 + 1) * 1000).min(max);
            }
        }
        max
    }

    pub(super) fn summary(&self) -> StallSummary {
        let n = self.iterations;
        StallSummary {
            iterations: n,
            storage_max_ns: self.storage_max_ns,
            storage_p999_ns: Self::quantile(&self.storage, n, self.storage_max_ns, 0.999),
            storage_over_1ms: self.storage_over_1ms,
            loop_max_ns: self.loop_max_ns,
            loop_p999_ns: Self::quantile(&self.looped, n, self.loop_max_ns, 0.999),
            poll_max_ns: self.poll_max_ns,
            lookups_max_ns: self.lookups_max_ns,
            unpreempted_max_ns: self.unpreempted_max_ns,
            unpreempted_over_1ms: self.unpreempted_over_1ms,
            preempted_over_1ms: self.preempted_over_1ms,
            blocked_over_1ms: self.blocked_over_1ms,
            on_cpu_over_1ms: self.on_cpu_over_1ms,
            faulted_over_1ms: self.faulted_over_1ms,
            loop_minor_faults: self
                .first_faults
                .map_or(0, |f| (self.switches.3 - f) as u64),
        }
    }
}

/// A worker's loop iterations that did work, since start (with an L2 tier only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StallSummary {
    /// Iterations that processed packets or L2 completions.
    pub iterations: u64,
    /// Longest storage time in one iteration (lookups, admissions, write-back, completions), ns.
    pub storage_max_ns: u64,
    /// 99.9th percentile of it (1 µs resolution), ns.
    pub storage_p999_ns: u64,
    /// Iterations whose storage time exceeded 1 ms.
    pub storage_over_1ms: u64,
    /// Longest whole iteration (control, a batch through the engine, L2 polling), ns.
    pub loop_max_ns: u64,
    /// 99.9th percentile of it (1 µs resolution), ns.
    pub loop_p999_ns: u64,
    /// Longest L2 poll of one iteration (completions handed to the engine included), ns.
    pub poll_max_ns: u64,
    /// Longest L2 lookups of one iteration (batch reads started), ns.
    pub lookups_max_ns: u64,
    /// Longest storage time of an iteration the scheduler did not preempt (storage's own
    /// stall: on CPU, or blocked in a system call), ns.
    pub unpreempted_max_ns: u64,
    /// Unpreempted iterations whose storage time exceeded 1 ms.
    pub unpreempted_over_1ms: u64,
    /// Preempted iterations whose storage time exceeded 1 ms (the scheduler's, not storage's).
    pub preempted_over_1ms: u64,
    /// Of the unpreempted ones over 1 ms, those in which the thread blocked in the kernel.
    pub blocked_over_1ms: u64,
    /// Of the unpreempted, unblocked ones over 1 ms, those that also used over 1 ms of CPU
    /// (the rest lost the time to interrupts or to the hypervisor, without a switch).
    pub on_cpu_over_1ms: u64,
    /// Of those, the ones in which the thread took page faults.
    pub faulted_over_1ms: u64,
    /// Minor page faults the thread took from the start of its first iteration to the start
    /// of its latest (memory touched for the first time in the loop; none once start-up has
    /// pre-faulted it, see `router::mem`).
    pub loop_minor_faults: u64,
}
