//! Round-trip times: the RFC 6298 retransmission-timeout estimator ([`RttEstimator`]) and
//! bounded-memory RTT statistics ([`RttStats`], summarised as [`RttSummary`]).
//!
//! Nothing here reads a clock: samples are durations measured by the caller.

use std::time::Duration;

/// Parameters of an [`RttEstimator`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RttOptions {
    /// RTO before the first sample (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Smallest RTO (RFC 6298 says 1 s; ndn-cxx and Linux use 200 ms).
    pub min_rto: Duration,
    /// Largest RTO, also the cap of the back-off (RFC 6298: at least 60 s).
    pub max_rto: Duration,
    /// Clock granularity G.
    pub granularity: Duration,
    /// Gain of SRTT (alpha, 1/8).
    pub alpha: f64,
    /// Gain of RTTVAR (beta, 1/4).
    pub beta: f64,
    /// Multiplier of RTTVAR in the RTO (K, 4).
    pub k: f64,
}

impl Default for RttOptions {
    fn default() -> Self {
        RttOptions {
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            granularity: Duration::from_millis(1),
            alpha: 0.125,
            beta: 0.25,
            k: 4.0,
        }
    }
}

/// The RFC 6298 estimator: SRTT, RTTVAR and the retransmission timeout RTO.
///
/// First sample R: SRTT = R, RTTVAR = R/2. Later samples: RTTVAR = (1-beta) RTTVAR +
/// beta |SRTT - R|, then SRTT = (1-alpha) SRTT + alpha R. RTO = SRTT + max(G, K RTTVAR), clamped
/// to [min_rto, max_rto]. [`RttEstimator::backoff`] doubles the RTO (up to max_rto) after a
/// timeout; the next sample recomputes it. Following Karn's algorithm, callers feed only samples
/// of Interests that were not retransmitted.
#[derive(Debug, Clone, PartialEq)]
pub struct RttEstimator {
    opts: RttOptions,
    srtt: Option<f64>,
    rttvar: f64,
    rto: f64,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::new(RttOptions::default())
    }
}

impl RttEstimator {
    /// An estimator with no sample yet (RTO = `initial_rto`, clamped).
    pub fn new(opts: RttOptions) -> Self {
        let mut e = RttEstimator {
            opts,
            srtt: None,
            rttvar: 0.0,
            rto: 0.0,
        };
        e.rto = e.clamp(opts.initial_rto.as_secs_f64());
        e
    }

    fn clamp(&self, secs: f64) -> f64 {
        secs.clamp(
            self.opts.min_rto.as_secs_f64(),
            self.opts
                .max_rto
                .as_secs_f64()
                .max(self.opts.min_rto.as_secs_f64()),
        )
    }

    /// Takes one RTT sample.
    pub fn add_sample(&mut self, rtt: Duration) {
        let r = rtt.as_secs_f64();
        let srtt = match self.srtt {
            None => {
                self.rttvar = r / 2.0;
                r
            }
            Some(s) => {
                self.rttvar = (1.0 - self.opts.beta) * self.rttvar + self.opts.beta * (s - r).abs();
                (1.0 - self.opts.alpha) * s + self.opts.alpha * r
            }
        };
        self.srtt = Some(srtt);
        let g = self.opts.granularity.as_secs_f64();
        self.rto = self.clamp(srtt + g.max(self.opts.k * self.rttvar));
    }

    /// Doubles the RTO after a timeout (at most `max_rto`).
    pub fn backoff(&mut self) {
        self.rto = self.clamp(self.rto * 2.0);
    }

    /// The current retransmission timeout.
    pub fn rto(&self) -> Duration {
        Duration::from_secs_f64(self.rto)
    }

    /// The smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt.map(Duration::from_secs_f64)
    }

    /// The RTT variation (0 before the first sample).
    pub fn rttvar(&self) -> Duration {
        Duration::from_secs_f64(self.rttvar)
    }
}

/// Number of histogram buckets: bucket `i` holds samples of `GROWTH^i` to `GROWTH^(i+1)`
/// microseconds, which covers 1 µs to over 1000 s.
const BUCKETS: usize = 1100;
/// Relative width of a bucket (2 %): percentiles are within 2 % of the true sample.
const GROWTH: f64 = 1.02;

/// RTT statistics in fixed memory: exact count, min, mean and max; percentiles from a
/// logarithmic histogram with 2 % relative resolution.
#[derive(Debug, Clone, PartialEq)]
pub struct RttStats {
    count: u64,
    sum_us: f64,
    min_us: u64,
    max_us: u64,
    buckets: Vec<u64>,
}

impl Default for RttStats {
    fn default() -> Self {
        RttStats {
            count: 0,
            sum_us: 0.0,
            min_us: u64::MAX,
            max_us: 0,
            buckets: vec![0; BUCKETS],
        }
    }
}

/// A summary of RTT samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RttSummary {
    /// Number of samples.
    pub count: u64,
    /// Smallest.
    pub min: Duration,
    /// Mean.
    pub avg: Duration,
    /// Median (within 2 %).
    pub p50: Duration,
    /// 99th percentile (within 2 %).
    pub p99: Duration,
    /// Largest.
    pub max: Duration,
}

fn bucket_of(us: u64) -> usize {
    if us <= 1 {
        return 0;
    }
    ((us as f64).ln() / GROWTH.ln()) as usize
}

impl RttStats {
    /// Adds one sample.
    pub fn add(&mut self, rtt: Duration) {
        let us = rtt.as_micros().min(u128::from(u64::MAX)) as u64;
        self.count += 1;
        self.sum_us += us as f64;
        self.min_us = self.min_us.min(us);
        self.max_us = self.max_us.max(us);
        let b = bucket_of(us).min(BUCKETS - 1);
        self.buckets[b] += 1;
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `q`-quantile (0 < q <= 1) by nearest rank, in microseconds: the geometric middle of
    /// its bucket, clamped to [min, max].
    fn quantile_us(&self, q: f64) -> u64 {
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let mid = GROWTH.powf(i as f64 + 0.5);
                return (mid.round() as u64).clamp(self.min_us, self.max_us);
            }
        }
        self.max_us
    }

    /// The summary, once there is a sample.
    pub fn summary(&self) -> Option<RttSummary> {
        if self.count == 0 {
            return None;
        }
        let us = Duration::from_micros;
        Some(RttSummary {
            count: self.count,
            min: us(self.min_us),
            avg: Duration::from_secs_f64(self.sum_us / self.count as f64 / 1e6),
            p50: us(self.quantile_us(0.50)),
            p99: us(self.quantile_us(0.99)),
            max: us(self.max_us),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn close(a: Duration, b: Duration) -> bool {
        (a.as_secs_f64() - b.as_secs_f64()).abs() < 1e-9
    }

    #[test]
    fn rfc6298_first_and_second_sample() {
        let opts = RttOptions {
            min_rto: Duration::ZERO,
            ..RttOptions::default()
        };
        let mut e = RttEstimator::new(opts);
        assert_eq!(e.rto(), Duration::from_secs(1));
        assert_eq!(e.srtt(), None);
        e.add_sample(ms(100));
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50 = 300.
        assert!(close(e.srtt().unwrap(), ms(100)));
        assert!(close(e.rttvar(), ms(50)));
        assert!(close(e.rto(), ms(300)));
        e.add_sample(ms(200));
        // RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5;
        // RTO = 112.5 + 4*62.5 = 362.5.
        assert!(close(e.rttvar(), Duration::from_micros(62_500)));
        assert!(close(e.srtt().unwrap(), Duration::from_micros(112_500)));
        assert!(close(e.rto(), Duration::from_micros(362_500)));
    }

    #[test]
    fn granularity_min_max_and_backoff() {
        let mut e = RttEstimator::default();
        // A steady 1 ms RTT converges RTTVAR to 0: RTO would be SRTT + G, but min_rto holds.
        for _ in 0..200 {
            e.add_sample(ms(1));
        }
        assert_eq!(e.rto(), ms(200));
        e.backoff();
        assert!(close(e.rto(), ms(400)));
        for _ in 0..20 {
            e.backoff();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        // A new sample recomputes the RTO from SRTT and RTTVAR.
        e.add_sample(ms(1));
        assert_eq!(e.rto(), ms(200));
        // Without the floor, G is the least RTTVAR term.
        let mut g = RttEstimator::new(RttOptions {
            min_rto: Duration::ZERO,
            ..RttOptions::default()
        });
        for _ in 0..400 {
            g.add_sample(ms(10));
        }
        assert!(
            (g.rto().as_secs_f64() - 0.011).abs() < 1e-6,
            "{:?}",
            g.rto()
        );
    }

    #[test]
    fn stats_exact_extremes_and_percentiles_within_two_percent() {
        let mut s = RttStats::default();
        assert!(s.summary().is_none());
        // 1..=1000 ms: p50 = 500 ms, p99 = 990 ms.
        for i in 1..=1000u64 {
            s.add(ms(i));
        }
        let m = s.summary().unwrap();
        assert_eq!(m.count, 1000);
        assert_eq!(m.min, ms(1));
        assert_eq!(m.max, ms(1000));
        assert!(close(m.avg, Duration::from_micros(500_500)));
        let within = |got: Duration, want: f64| (got.as_secs_f64() / want - 1.0).abs() <= 0.02;
        assert!(within(m.p50, 0.500), "{:?}", m.p50);
        assert!(within(m.p99, 0.990), "{:?}", m.p99);
        // One sample: every statistic is that sample.
        let mut one = RttStats::default();
        one.add(Duration::from_micros(1234));
        let m = one.summary().unwrap();
        for d in [m.min, m.avg, m.p50, m.p99, m.max] {
            assert_eq!(d, Duration::from_micros(1234));
        }
        // Zero and huge samples land in the end buckets.
        let mut z = RttStats::default();
        z.add(Duration::ZERO);
        z.add(Duration::from_secs(100_000));
        assert_eq!(z.summary().unwrap().max, Duration::from_secs(100_000));
        assert_eq!(z.summary().unwrap().min, Duration::ZERO);
    }
}
