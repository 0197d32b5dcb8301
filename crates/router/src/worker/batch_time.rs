//! How long a worker's batches take through the engine (forwarding, emitting, write-through):
//! a histogram with power-of-two bounds in microseconds, fixed in size, filled with one clock
//! read per batch (the batch's start is the clock read the engine needs anyway).

use mgmt::LatencyHistogram;

/// Bounds of the histogram: 1, 2, 4, ... 2^(BOUNDS-1) µs (about a second at the top).
pub const BATCH_TIME_BOUNDS: usize = 21;

/// Batch times of one worker since start.
#[derive(Debug, Clone, Copy)]
pub struct BatchTimes {
    /// Batches in each bucket: `i` holds times in (2^(i-1), 2^i] µs, the last one the rest.
    buckets: [u64; BATCH_TIME_BOUNDS + 1],
    count: u64,
    sum_ns: u64,
}

impl Default for BatchTimes {
    fn default() -> Self {
        BatchTimes {
            buckets: [0; BATCH_TIME_BOUNDS + 1],
            count: 0,
            sum_ns: 0,
        }
    }
}

impl BatchTimes {
    /// Counts one batch that took `ns`.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let us = ns.div_ceil(1000);
        let i = if us <= 1 {
            0
        } else {
            (u64::BITS - (us - 1).leading_zeros()) as usize
        };
        self.buckets[i.min(BATCH_TIME_BOUNDS)] += 1;
        self.count += 1;
        self.sum_ns = self.sum_ns.wrapping_add(ns);
    }

    /// The histogram as management and the metrics endpoint report it.
    pub fn histogram(&self) -> LatencyHistogram {
        let le_us: Vec<u64> = (0..BATCH_TIME_BOUNDS).map(|i| 1u64 << i).collect();
        let cumulative = self.buckets[..BATCH_TIME_BOUNDS]
            .iter()
            .scan(0u64, |acc, &n| {
                *acc += n;
                Some(*acc)
            })
            .collect();
        LatencyHistogram {
            name: "batch",
            help: "Time a worker's batch of packets takes through the engine and out to its ring.",
            le_us,
            cumulative,
            count: self.count,
            sum_ns: self.sum_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_fall_in_power_of_two_buckets_cumulatively() {
        let mut t = BatchTimes::default();
        for ns in [0, 1_000, 1_001, 2_000, 3_500, 5_000_000_000] {
            t.record(ns);
        }
        let h = t.histogram();
        assert_eq!(&h.le_us[..4], &[1, 2, 4, 8]);
        // <= 1 µs: 0 and 1000 ns; <= 2 µs: and 1001, 2000; <= 4 µs: and 3500; 5 s: above all.
        assert_eq!(&h.cumulative[..4], &[2, 4, 5, 5]);
        assert_eq!(*h.cumulative.last().unwrap(), 5);
        assert_eq!(h.count, 6);
        assert_eq!(h.sum_ns, 5_000_007_501);
    }
}
