//! One measured |L1| point, summed over the workers.

use super::CHUNK_BYTES;

/// One measured point.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Point {
    pub(super) l1_chunks: u64,
    pub(super) requests: u64,
    pub(super) l1_hits: u64,
    pub(super) pending_hits: u64,
    pub(super) prefetch_used: u64,
    pub(super) prefetch_evicted_unused: u64,
    pub(super) l2_batch_reads: u64,
    pub(super) l2_bytes: u64,
    pub(super) l2_misses: u64,
    pub(super) checksum_failures: u64,
    pub(super) elapsed_s: f64,
    /// The model the point is compared with (see the module documentation).
    pub(super) model: f64,
    /// Eq. 2–4 of Mansilha et al. (2017) for this workload.
    pub(super) model_seed: f64,
    /// `Real`: the stream model's steady state (every stream past the ramp).
    pub(super) model_steady: Option<f64>,
    /// Longest and 99.9th-percentile request iteration (L1 logic, serving, L2 submit and
    /// poll; the bench's own waits on a full L2 queue excluded), ns; max over workers.
    pub(super) iter_max_ns: u64,
    pub(super) iter_p999_ns: u64,
    /// Time the bench threads waited for a completion because the L2 queue was full, s.
    pub(super) blocked_s: f64,
    /// CPU time of the bench threads, s.
    pub(super) cpu_s: f64,
    /// L2 operations in flight, summed over the per-request samples.
    pub(super) in_flight_sum: u64,
    /// Per-request samples of the L2 queue.
    pub(super) queue_samples: u64,
    /// Samples that found the L2 queue full.
    pub(super) queue_full: u64,
    /// Batch reads waiting for room in the L2 queue, summed over the per-request samples.
    pub(super) backlog_sum: u64,
    /// Batch reads given up because the queue stayed full with nothing in flight (never
    /// expected: counted so that a run that had any says so).
    pub(super) l2_gave_up: u64,
}

impl Point {
    pub(super) fn hit_ratio(&self) -> f64 {
        ratio(self.l1_hits, self.requests)
    }
    pub(super) fn chunks_per_s(&self) -> f64 {
        self.requests as f64 / self.elapsed_s.max(1e-9)
    }
    pub(super) fn gbps(&self) -> f64 {
        self.chunks_per_s() * CHUNK_BYTES as f64 * 8.0 / 1e9
    }
    pub(super) fn l2_gbytes_per_s(&self) -> f64 {
        self.l2_bytes as f64 / self.elapsed_s.max(1e-9) / 1e9
    }
    pub(super) fn usefulness(&self) -> f64 {
        ratio(
            self.prefetch_used,
            self.prefetch_used + self.prefetch_evicted_unused,
        )
    }
    pub(super) fn add(&mut self, o: &Point) {
        self.requests += o.requests;
        self.l1_hits += o.l1_hits;
        self.pending_hits += o.pending_hits;
        self.prefetch_used += o.prefetch_used;
        self.prefetch_evicted_unused += o.prefetch_evicted_unused;
        self.l2_batch_reads += o.l2_batch_reads;
        self.l2_bytes += o.l2_bytes;
        self.l2_misses += o.l2_misses;
        self.checksum_failures += o.checksum_failures;
        self.elapsed_s = self.elapsed_s.max(o.elapsed_s);
        self.iter_max_ns = self.iter_max_ns.max(o.iter_max_ns);
        self.iter_p999_ns = self.iter_p999_ns.max(o.iter_p999_ns);
        self.blocked_s += o.blocked_s;
        self.cpu_s += o.cpu_s;
        self.in_flight_sum += o.in_flight_sum;
        self.queue_samples += o.queue_samples;
        self.queue_full += o.queue_full;
        self.backlog_sum += o.backlog_sum;
        self.l2_gave_up += o.l2_gave_up;
    }

    /// Mean L2 operations in flight at a request.
    pub(super) fn mean_in_flight(&self) -> f64 {
        ratio(self.in_flight_sum, self.queue_samples)
    }

    /// Mean batch reads waiting for room in the L2 queue at a request.
    pub(super) fn mean_backlog(&self) -> f64 {
        ratio(self.backlog_sum, self.queue_samples)
    }
}

/// `a / b`, 0 when `b` is 0.
pub(super) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The share of batch reads found in L2.
pub(super) fn l2_hit_ratio(p: &Point) -> f64 {
    ratio(
        p.l2_batch_reads - p.l2_misses.min(p.l2_batch_reads),
        p.l2_batch_reads,
    )
}
