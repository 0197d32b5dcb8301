//! The CUBIC congestion window of a segmented fetch, as ndncatchunks' CUBIC pipeline (ndn-tools
//! 24.07) computes it after RFC 8312 ("CUBIC for Fast Long-Distance Networks"), and [`Window`],
//! the window a fetch uses: fixed, AIMD ([`crate::aimd`]) or CUBIC.
//!
//! The window counts Interests in flight. Below `ssthresh` (slow start) each unmarked Data adds
//! one. Above it, with `t` the seconds since the last decrease, `W_max` the window before it,
//! `C` = 0.4 and `β` the decrease factor (0.7):
//!
//! - `K = cbrt(W_max · (1 − β) / C)` (RFC 8312 eq. 2),
//! - `W_cubic(t) = C · (t − K)³ + W_max` (eq. 1),
//! - `W_est(t) = W_max · β + 3 · (1 − β) / (1 + β) · t / SRTT` (eq. 4, the Reno-friendly estimate),
//!
//! and each Data adds `max(0, max(W_cubic, W_est) − cwnd) / cwnd`. A congestion signal (a
//! timeout, a Nack with reason Congestion, a Data with a CongestionMark) sets `W_max = cwnd` —
//! or, with fast convergence and a window below the previous `W_max`, `W_max = cwnd · (1 + β) / 2`
//! — then `ssthresh = max(initial cwnd, cwnd · β)` and `cwnd = ssthresh`, and restarts `t`. As for
//! AIMD, at most one decrease per RTT: a signal about a transmission sent before the last
//! decrease (serial at or below the recovery point) is ignored.

use std::time::Duration;

use crate::aimd::{Aimd, AimdOptions};

/// CUBIC's scaling constant `C` (RFC 8312, and ndncatchunks).
pub const CUBIC_C: f64 = 0.4;

/// Parameters of a [`Cubic`] window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CubicOptions {
    /// Window at the start; also the smallest slow-start threshold after a decrease.
    pub initial_cwnd: f64,
    /// Slow-start threshold at the start (infinite: slow start until the first signal).
    pub initial_ssthresh: f64,
    /// Largest window (bounds the Interests in flight).
    pub max_cwnd: f64,
    /// Multiplicative decrease factor `β`.
    pub beta: f64,
    /// Fast convergence: a flow whose window shrank since the last decrease remembers a
    /// smaller `W_max`, leaving room to newer flows.
    pub fast_convergence: bool,
    /// Conservative window adaptation: at most one decrease per RTT (off: one per signal).
    pub conservative: bool,
}

impl Default for CubicOptions {
    fn default() -> Self {
        CubicOptions {
            initial_cwnd: 2.0,
            initial_ssthresh: f64::INFINITY,
            max_cwnd: 1024.0,
            beta: 0.7,
            fast_convergence: false,
            conservative: true,
        }
    }
}

/// A CUBIC window. See the [module docs](self).
#[derive(Debug, Clone, PartialEq)]
pub struct Cubic {
    opts: CubicOptions,
    cwnd: f64,
    ssthresh: f64,
    w_max: f64,
    last_w_max: f64,
    /// When the last decrease happened (the first event, before any).
    last_decrease: Option<Duration>,
    recovery_point: u64,
    decreases: u64,
}

impl Cubic {
    /// A window with `opts` (the initial window clamped to [1, max_cwnd]).
    pub fn new(opts: CubicOptions) -> Self {
        let max = opts.max_cwnd.max(1.0);
        let opts = CubicOptions {
            max_cwnd: max,
            initial_cwnd: opts.initial_cwnd.clamp(1.0, max),
            ..opts
        };
        Cubic {
            cwnd: opts.initial_cwnd,
            ssthresh: opts.initial_ssthresh,
            w_max: 0.0,
            last_w_max: 0.0,
            last_decrease: None,
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

    /// `W_max`: the window before the last decrease.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// How many times the window was decreased.
    pub fn decreases(&self) -> u64 {
        self.decreases
    }

    /// A Data without a CongestionMark arrived at `now`, the smoothed RTT being `srtt`: grow
    /// the window.
    pub fn on_data(&mut self, now: Duration, srtt: Option<Duration>) {
        let since = *self.last_decrease.get_or_insert(now);
        if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            if self.w_max < self.opts.initial_cwnd {
                self.w_max = self.cwnd;
            }
            let t = now.saturating_sub(since).as_secs_f64();
            let beta = self.opts.beta;
            let k = (self.w_max * (1.0 - beta) / CUBIC_C).cbrt();
            let w_cubic = CUBIC_C * (t - k).powi(3) + self.w_max;
            let rtt = srtt.map_or(0.0, |d| d.as_secs_f64());
            let reno = if rtt > 0.0 {
                3.0 * (1.0 - beta) / (1.0 + beta) * (t / rtt)
            } else {
                0.0
            };
            let w_est = self.w_max * beta + reno;
            let increment = (w_cubic.max(w_est) - self.cwnd).max(0.0);
            self.cwnd += increment / self.cwnd;
        }
        self.cwnd = self.cwnd.min(self.opts.max_cwnd);
    }

    /// A congestion signal at `now` about the transmission with serial `sent_serial`, when the
    /// newest transmission so far has serial `newest_serial`. Returns whether the window was
    /// decreased (false within the RTT after the last decrease).
    pub fn on_congestion(&mut self, sent_serial: u64, newest_serial: u64, now: Duration) -> bool {
        if self.opts.conservative && sent_serial <= self.recovery_point {
            return false;
        }
        if self.opts.fast_convergence && self.cwnd < self.last_w_max {
            self.last_w_max = self.cwnd;
            self.w_max = self.cwnd * (1.0 + self.opts.beta) / 2.0;
        } else {
            self.last_w_max = self.cwnd;
            self.w_max = self.cwnd;
        }
        self.ssthresh = (self.cwnd * self.opts.beta).max(self.opts.initial_cwnd);
        self.cwnd = self.ssthresh.min(self.opts.max_cwnd);
        self.last_decrease = Some(now);
        self.recovery_point = newest_serial.max(sent_serial);
        self.decreases += 1;
        true
    }
}

/// The congestion window of a fetch: AIMD (also a fixed window, [`AimdOptions::fixed`]) or
/// CUBIC.
#[derive(Debug, Clone, PartialEq)]
pub enum Window {
    /// AIMD, or a fixed window.
    Aimd(Aimd),
    /// CUBIC.
    Cubic(Cubic),
}

impl Window {
    /// How many Interests may be in flight: the window rounded down, at least 1.
    pub fn window(&self) -> usize {
        (self.cwnd().floor() as usize).max(1)
    }

    /// The window as a real number.
    pub fn cwnd(&self) -> f64 {
        match self {
            Window::Aimd(w) => w.cwnd(),
            Window::Cubic(w) => w.cwnd(),
        }
    }

    /// An unmarked Data arrived at `now` (see [`Aimd::on_data`], [`Cubic::on_data`]).
    pub fn on_data(&mut self, now: Duration, srtt: Option<Duration>) {
        match self {
            Window::Aimd(w) => w.on_data(),
            Window::Cubic(w) => w.on_data(now, srtt),
        }
    }

    /// A congestion signal (see [`Aimd::on_congestion`], [`Cubic::on_congestion`]).
    pub fn on_congestion(&mut self, sent_serial: u64, newest_serial: u64, now: Duration) -> bool {
        match self {
            Window::Aimd(w) => w.on_congestion(sent_serial, newest_serial),
            Window::Cubic(w) => w.on_congestion(sent_serial, newest_serial, now),
        }
    }
}

impl From<AimdOptions> for Window {
    fn from(o: AimdOptions) -> Self {
        Window::Aimd(Aimd::new(o))
    }
}

impl From<CubicOptions> for Window {
    fn from(o: CubicOptions) -> Self {
        Window::Cubic(Cubic::new(o))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn slow_start_adds_one_per_data() {
        let mut w = Cubic::new(CubicOptions::default());
        for i in 0..5 {
            w.on_data(i * MS, None);
        }
        close(w.cwnd(), 7.0);
    }

    #[test]
    fn a_decrease_keeps_w_max_and_multiplies_by_beta() {
        let mut w = Cubic::new(CubicOptions {
            initial_cwnd: 10.0,
            ..CubicOptions::default()
        });
        // 10 -> 20 in slow start.
        for i in 0..10 {
            w.on_data(i * MS, None);
        }
        assert!(w.on_congestion(5, 20, 100 * MS));
        close(w.w_max(), 20.0);
        close(w.ssthresh(), 14.0);
        close(w.cwnd(), 14.0);
        // A signal about a transmission sent before the decrease is ignored.
        assert!(!w.on_congestion(20, 25, 101 * MS));
        assert_eq!(w.decreases(), 1);
        let mut eager = Cubic::new(CubicOptions {
            initial_cwnd: 10.0,
            conservative: false,
            ..CubicOptions::default()
        });
        assert!(eager.on_congestion(1, 5, MS) && eager.on_congestion(2, 5, MS));
        // The floor is the initial window: 14 * 0.7 = 9.8 < 10.
        assert!(w.on_congestion(21, 30, 102 * MS));
        close(w.cwnd(), 10.0);
        close(w.w_max(), 14.0);
    }

    #[test]
    fn growth_follows_the_cubic_function() {
        let mut w = Cubic::new(CubicOptions {
            initial_cwnd: 10.0,
            ..CubicOptions::default()
        });
        for i in 0..10 {
            w.on_data(i * MS, None);
        }
        w.on_congestion(1, 20, Duration::ZERO);
        // cwnd = 14, W_max = 20, K = cbrt(20 * 0.3 / 0.4) = cbrt(15).
        let k = 15f64.cbrt();
        // t = 1 s, SRTT = 100 ms: W_cubic = 0.4 (1 - K)^3 + 20 = 18.6733...,
        // W_est = 20 * 0.7 + 3 * 0.3 / 1.7 * 10 = 19.2941...; the larger wins.
        let w_cubic = 0.4 * (1.0 - k).powi(3) + 20.0;
        let w_est = 14.0 + 0.9 / 1.7 * 10.0;
        assert!(w_est > w_cubic);
        w.on_data(Duration::from_secs(1), Some(100 * MS));
        close(w.cwnd(), 14.0 + (w_est - 14.0) / 14.0);
        // At t = K the cubic term is zero: W_cubic = W_max = 20; with a long RTT the Reno
        // estimate (14 + 0.9 / 1.7 * K / 10) stays below it.
        let c = w.cwnd();
        w.on_data(Duration::from_secs_f64(k), Some(Duration::from_secs(10)));
        close(w.cwnd(), c + (20.0 - c) / c);
        // Far past K the cubic term dominates: W_cubic(K + 2) = 0.4 * 8 + 20 = 23.2.
        let c = w.cwnd();
        w.on_data(
            Duration::from_secs_f64(k + 2.0),
            Some(Duration::from_secs(10)),
        );
        close(w.cwnd(), c + (23.2 - c) / c);
    }

    #[test]
    fn no_growth_when_both_targets_are_below_the_window() {
        let mut w = Cubic::new(CubicOptions {
            initial_cwnd: 10.0,
            ..CubicOptions::default()
        });
        for i in 0..10 {
            w.on_data(i * MS, None);
        }
        w.on_congestion(1, 20, Duration::ZERO);
        // Right after the decrease: W_cubic(0) = 20 - 0.4 K^3 = 20 - 6 = 14 = cwnd, W_est = 14.
        w.on_data(Duration::ZERO, Some(100 * MS));
        close(w.cwnd(), 14.0);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut w = Cubic::new(CubicOptions {
            initial_cwnd: 10.0,
            fast_convergence: true,
            ..CubicOptions::default()
        });
        for i in 0..10 {
            w.on_data(i * MS, None);
        }
        w.on_congestion(1, 20, Duration::ZERO);
        close(w.w_max(), 20.0);
        // The window (14) is below the last W_max (20): W_max = 14 * 1.7 / 2 = 11.9.
        w.on_congestion(21, 30, 10 * MS);
        close(w.w_max(), 11.9);
        close(w.cwnd(), 10.0);
        // Without fast convergence W_max is the window itself.
        let mut plain = Cubic::new(CubicOptions {
            initial_cwnd: 10.0,
            ..CubicOptions::default()
        });
        for i in 0..10 {
            plain.on_data(i * MS, None);
        }
        plain.on_congestion(1, 20, Duration::ZERO);
        plain.on_congestion(21, 30, 10 * MS);
        close(plain.w_max(), 14.0);
    }

    #[test]
    fn the_window_stays_within_its_bounds() {
        let mut w = Window::from(CubicOptions {
            initial_cwnd: 3.0,
            max_cwnd: 4.0,
            ..CubicOptions::default()
        });
        for i in 0..10 {
            w.on_data(i * MS, None);
        }
        assert_eq!(w.window(), 4);
        let mut fixed = Window::from(AimdOptions::fixed(5.0));
        fixed.on_data(MS, None);
        assert!(!fixed.on_congestion(1, 2, MS));
        assert_eq!(fixed.window(), 5);
    }
}
