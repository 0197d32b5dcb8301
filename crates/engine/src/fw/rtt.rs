//! ndn-cxx's RTT estimator (`ndn::util::RttEstimator` with its default options), which NFD's ASF
//! and access strategies use: a smoothed RTT, its variation, and the retransmission timeout
//! derived from them (RFC 6298's α = 1/8, β = 1/4, K = 4).

/// RTO before any sample (ndn-cxx: 1 s).
pub const INITIAL_RTO_US: u64 = 1_000_000;
/// Smallest RTO (ndn-cxx: 200 ms).
pub const MIN_RTO_US: u64 = 200_000;
/// Largest RTO (ndn-cxx: 1 minute).
pub const MAX_RTO_US: u64 = 60_000_000;

/// One RTT estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RttEstimator {
    /// Smoothed RTT (microseconds; 0 before the first sample).
    pub srtt_us: u64,
    /// RTT variation (microseconds).
    pub rttvar_us: u64,
    /// Retransmission timeout (microseconds).
    pub rto_us: u64,
    /// Samples taken.
    pub samples: u32,
}

impl RttEstimator {
    /// No sample yet: the RTO is the initial one.
    pub const NEW: RttEstimator = RttEstimator {
        srtt_us: 0,
        rttvar_us: 0,
        rto_us: INITIAL_RTO_US,
        samples: 0,
    };

    /// Takes a sample (`addMeasurement`).
    pub fn add(&mut self, rtt_us: u64) {
        if self.samples == 0 {
            self.srtt_us = rtt_us;
            self.rttvar_us = rtt_us / 2;
        } else {
            self.rttvar_us = (self.rttvar_us * 3 + self.srtt_us.abs_diff(rtt_us)) / 4;
            self.srtt_us = (self.srtt_us * 7 + rtt_us) / 8;
        }
        self.samples = self.samples.saturating_add(1);
        self.rto_us = (self.srtt_us + 4 * self.rttvar_us).clamp(MIN_RTO_US, MAX_RTO_US);
    }
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::NEW
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srtt_and_rto_as_ndn_cxx() {
        let mut f = RttEstimator::NEW;
        assert_eq!(f.rto_us, INITIAL_RTO_US);
        f.add(100_000);
        assert_eq!(
            (f.srtt_us, f.rttvar_us, f.rto_us),
            (100_000, 50_000, 300_000)
        );
        f.add(200_000);
        assert_eq!((f.srtt_us, f.rttvar_us), (112_500, 62_500));
        assert_eq!(f.rto_us, 112_500 + 4 * 62_500);
        // Clamped to the minimum.
        let mut g = RttEstimator::NEW;
        g.add(1_000);
        assert_eq!(g.rto_us, MIN_RTO_US);
    }
}
