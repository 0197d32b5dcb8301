//! The AIMD congestion window of a segmented fetch, in the manner of ndncatchunks and of the
//! consumer of Pan et al.'s NB-CC ("NB-Cache: Non-Blocking In-Network Caching for
//! High-Performance Content Routers").
//!
//! The window counts Interests in flight. Each unmarked Data grows it: by `ai_step` per Data in
//! slow start (below `ssthresh`), by `ai_step / cwnd` per Data above it (one step per window,
//! that is per RTT). A congestion signal (a timeout, a Nack with reason Congestion, or a Data
//! with an NDNLPv2 CongestionMark, which does not grow the window) sets
//! `ssthresh = max(min_ssthresh, cwnd * md_coef)` and `cwnd = ssthresh` — by default halving
//! it, down to 1 — but at most once per RTT: every transmission carries a serial number
//! (increasing), the decrease records the newest serial sent so far as the recovery point, and a
//! signal about a transmission at or before the recovery point (sent before the decrease could
//! take effect) is ignored (unless `conservative` is off, as ndncatchunks' `--disable-cwa`);
//! with `reset_to_initial` the window restarts from its initial value. A fixed window ([`AimdOptions::fixed`]) neither grows nor shrinks.

/// Parameters of an [`Aimd`] window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AimdOptions {
    /// Window at the start.
    pub initial_cwnd: f64,
    /// Slow-start threshold at the start (infinite: slow start until the first signal).
    pub initial_ssthresh: f64,
    /// Smallest window.
    pub min_cwnd: f64,
    /// Largest window (bounds the Interests in flight).
    pub max_cwnd: f64,
    /// Smallest slow-start threshold after a decrease.
    pub min_ssthresh: f64,
    /// Additive increase per RTT.
    pub ai_step: f64,
    /// Multiplicative decrease factor.
    pub md_coef: f64,
    /// Keep the window at `initial_cwnd` whatever happens (no AIMD).
    pub fixed: bool,
    /// Conservative window adaptation: at most one decrease per RTT (off: one per signal).
    pub conservative: bool,
    /// After a decrease, the window restarts from `initial_cwnd` instead of `ssthresh`.
    pub reset_to_initial: bool,
}

impl Default for AimdOptions {
    fn default() -> Self {
        AimdOptions {
            initial_cwnd: 2.0,
            initial_ssthresh: f64::INFINITY,
            min_cwnd: 1.0,
            max_cwnd: 1024.0,
            min_ssthresh: 1.0,
            ai_step: 1.0,
            md_coef: 0.5,
            fixed: false,
            conservative: true,
            reset_to_initial: false,
        }
    }
}

impl AimdOptions {
    /// A window fixed at `cwnd` Interests (at least 1): no growth, no decrease.
    pub fn fixed(cwnd: f64) -> Self {
        let cwnd = cwnd.max(1.0);
        AimdOptions {
            initial_cwnd: cwnd,
            max_cwnd: cwnd,
            fixed: true,
            ..AimdOptions::default()
        }
    }
}

/// An AIMD window. See the [module docs](self).
#[derive(Debug, Clone, PartialEq)]
pub struct Aimd {
    opts: AimdOptions,
    cwnd: f64,
    ssthresh: f64,
    recovery_point: u64,
    decreases: u64,
}

impl Default for Aimd {
    fn default() -> Self {
        Aimd::new(AimdOptions::default())
    }
}

impl Aimd {
    /// A window with `opts` (the initial window is clamped to [min_cwnd, max_cwnd]).
    pub fn new(opts: AimdOptions) -> Self {
        let max = opts.max_cwnd.max(opts.min_cwnd).max(1.0);
        let opts = AimdOptions {
            max_cwnd: max,
            ..opts
        };
        Aimd {
            cwnd: opts.initial_cwnd.clamp(opts.min_cwnd, max),
            ssthresh: opts.initial_ssthresh,
            recovery_point: 0,
            decreases: 0,
            opts,
        }
    }

    /// The window as a real number.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// The slow-start threshold.
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// How many Interests may be in flight: the window rounded down, at least 1.
    pub fn window(&self) -> usize {
        (self.cwnd.floor() as usize).max(1)
    }

    /// How many times the window was decreased.
    pub fn decreases(&self) -> u64 {
        self.decreases
    }

    /// A Data without a CongestionMark arrived: grow the window. (A marked one is a congestion
    /// signal: [`Aimd::on_congestion`].)
    pub fn on_data(&mut self) {
        if self.opts.fixed {
            return;
        }
        let step = if self.cwnd < self.ssthresh {
            self.opts.ai_step
        } else {
            self.opts.ai_step / self.cwnd
        };
        self.cwnd = (self.cwnd + step).min(self.opts.max_cwnd);
    }

    /// A congestion signal about the transmission with serial `sent_serial`, when the newest
    /// transmission so far has serial `newest_serial`. Returns whether the window was decreased
    /// (false when the signal falls within the RTT after the last decrease).
    pub fn on_congestion(&mut self, sent_serial: u64, newest_serial: u64) -> bool {
        if self.opts.fixed || (self.opts.conservative && sent_serial <= self.recovery_point) {
            return false;
        }
        self.ssthresh = (self.cwnd * self.opts.md_coef).max(self.opts.min_ssthresh);
        let restart = if self.opts.reset_to_initial {
            self.opts.initial_cwnd
        } else {
            self.ssthresh
        };
        self.cwnd = restart.clamp(self.opts.min_cwnd, self.opts.max_cwnd);
        self.recovery_point = newest_serial.max(sent_serial);
        self.decreases += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let mut w = Aimd::default();
        assert_eq!(w.window(), 2);
        for _ in 0..6 {
            w.on_data();
        }
        // Slow start: +1 per Data.
        assert_eq!(w.cwnd(), 8.0);
        // Serial 8 of 8 sent signals congestion: halve.
        assert!(w.on_congestion(8, 8));
        assert_eq!((w.cwnd(), w.ssthresh()), (4.0, 4.0));
        // Congestion avoidance: +1/cwnd per Data, so about +1 per window of Data.
        for _ in 0..4 {
            w.on_data();
        }
        assert!(w.cwnd() > 4.9 && w.cwnd() < 5.0, "{}", w.cwnd());
        assert_eq!(w.window(), 4);
    }

    #[test]
    fn once_per_rtt() {
        let mut w = Aimd::new(AimdOptions {
            initial_cwnd: 16.0,
            ..AimdOptions::default()
        });
        // Serials 1..=16 are in flight; serial 3 is lost.
        assert!(w.on_congestion(3, 16));
        assert_eq!(w.cwnd(), 8.0);
        // Losses of other Interests of the same flight (sent before the decrease) are ignored.
        assert!(!w.on_congestion(5, 20));
        assert!(!w.on_congestion(16, 20));
        assert_eq!(w.cwnd(), 8.0);
        // A loss of an Interest sent after the decrease is a new event.
        assert!(w.on_congestion(17, 24));
        assert_eq!(w.cwnd(), 4.0);
        assert_eq!(w.decreases(), 2);
    }

    #[test]
    fn without_cwa_every_signal_decreases_and_reset_restarts_from_the_initial_window() {
        let mut w = Aimd::new(AimdOptions {
            initial_cwnd: 16.0,
            conservative: false,
            ..AimdOptions::default()
        });
        assert!(w.on_congestion(3, 16) && w.on_congestion(5, 16));
        assert_eq!(w.cwnd(), 4.0);
        let mut r = Aimd::new(AimdOptions {
            initial_cwnd: 2.0,
            reset_to_initial: true,
            ..AimdOptions::default()
        });
        for _ in 0..14 {
            r.on_data();
        }
        assert_eq!(r.cwnd(), 16.0);
        assert!(r.on_congestion(1, 14));
        assert_eq!((r.cwnd(), r.ssthresh()), (2.0, 8.0));
    }

    #[test]
    fn bounds() {
        let mut w = Aimd::new(AimdOptions {
            initial_cwnd: 3.0,
            max_cwnd: 5.0,
            ..AimdOptions::default()
        });
        for _ in 0..100 {
            w.on_data();
        }
        assert_eq!(w.cwnd(), 5.0);
        // Repeated decreases stop at min_ssthresh, never below min_cwnd.
        let mut two = Aimd::new(AimdOptions {
            initial_cwnd: 5.0,
            min_ssthresh: 2.0,
            ..AimdOptions::default()
        });
        for s in 1..10 {
            two.on_congestion(s * 100, s * 100);
        }
        assert_eq!(two.cwnd(), 2.0);
        let mut tiny = Aimd::new(AimdOptions {
            min_ssthresh: 0.1,
            ..AimdOptions::default()
        });
        for s in 1..10 {
            tiny.on_congestion(s, s);
        }
        assert_eq!(tiny.cwnd(), 1.0);
        assert_eq!(tiny.window(), 1);
    }

    /// The consumer NB-CC expects: in congestion avoidance +1 per window of unmarked Data;
    /// a marked Data halves the window, at most once per RTT, down to 1.
    #[test]
    fn additive_increase_per_window_halving_per_rtt_down_to_one() {
        let mut w = Aimd::new(AimdOptions {
            initial_cwnd: 4.0,
            initial_ssthresh: 4.0,
            ..AimdOptions::default()
        });
        // Four unmarked Data (one window): +1/cwnd each, about +1 in all.
        for _ in 0..4 {
            w.on_data();
        }
        assert!(w.cwnd() > 4.9 && w.cwnd() < 5.0, "{}", w.cwnd());
        assert_eq!(w.window(), 4);
        for _ in 0..5 {
            w.on_data();
        }
        assert_eq!(w.window(), 5, "{}", w.cwnd());
        // Serials 1..=20 sent; the Data of serial 10 is marked: halve, once for that flight.
        let before = w.cwnd();
        assert!(w.on_congestion(10, 20));
        assert_eq!(w.cwnd(), before / 2.0);
        assert!(!w.on_congestion(15, 22));
        assert!(!w.on_congestion(20, 24));
        // Marks on later flights halve again, down to 1 and no further.
        for s in 0..6 {
            w.on_congestion(30 + s * 10, 30 + s * 10);
        }
        assert_eq!((w.cwnd(), w.window()), (1.0, 1));
        assert_eq!(w.decreases(), 7);
    }

    #[test]
    fn a_fixed_window_never_moves() {
        let mut w = Aimd::new(AimdOptions::fixed(6.0));
        for s in 1..50 {
            w.on_data();
            assert!(!w.on_congestion(s, s));
        }
        assert_eq!((w.window(), w.decreases()), (6, 0));
        assert_eq!(Aimd::new(AimdOptions::fixed(0.0)).window(), 1);
    }
}
