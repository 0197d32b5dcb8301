//! What `cascade bench forward` prints: text or one JSON object.

use std::collections::HashMap;

use super::generator::RunResult;
use super::{FaceKind, ForwardBenchArgs};

/// What `cascade bench forward` reports.
pub(super) struct Report<'a> {
    pub(super) args: &'a ForwardBenchArgs,
    pub(super) res: RunResult,
    pub(super) ceiling: Option<RunResult>,
    pub(super) drops: Vec<(String, u64)>,
    pub(super) workers: usize,
    /// Router CPU time per satisfied Interest (a router started here only).
    pub(super) cpu_us: Option<f64>,
}

impl Report<'_> {
    fn face(&self) -> &'static str {
        match self.args.face {
            FaceKind::Udp => "udp",
            FaceKind::Unix => "unix",
        }
    }

    pub(super) fn print_json(mut self) {
        let args = self.args;
        let rate = self.res.rate();
        let res = &mut self.res;
        let (p50, p90, p99, max) = (res.pct(0.5), res.pct(0.9), res.pct(0.99), res.pct(1.0));
        let v = serde_json::json!({
            "face": self.face(),
            "workload": args.workload,
            "window": args.window,
            "payload_bytes": args.payload,
            "duration_s": self.res.seconds,
            "workers": self.workers,
            "satisfied_per_s": rate,
            "satisfied": self.res.satisfied,
            "timeouts": self.res.timeouts,
            "nacks": self.res.nacks,
            "router_drops": self.drops.iter().cloned().collect::<HashMap<String, u64>>(),
            "rtt_us": {"p50": p50, "p90": p90, "p99": p99, "max": max},
            "router_cpu_us_per_interest": self.cpu_us,
            "ceiling_per_s": self.ceiling.as_ref().map(RunResult::rate),
            "ceiling_timeouts": self.ceiling.as_ref().map(|c| c.timeouts),
        });
        println!("{v}");
    }

    pub(super) fn print_text(mut self) {
        let args = self.args;
        let face = self.face();
        let rate = self.res.rate();
        let res = &mut self.res;
        let (p50, p90, p99, max) = (res.pct(0.5), res.pct(0.9), res.pct(0.99), res.pct(1.0));
        let res = &self.res;
        println!(
            "bench forward: face {face}, workload {}, window {}, payload {} B, {:.1} s, {} worker(s)",
            args.workload, args.window, args.payload, res.seconds, self.workers
        );
        println!(
            "  satisfied      {:>12.0} Interests/s ({} in total)",
            rate, res.satisfied
        );
        println!("  timeouts       {:>12}", res.timeouts);
        let nacks: Vec<String> = res.nacks.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!(
            "  nacks          {:>12}",
            if nacks.is_empty() {
                "0".into()
            } else {
                nacks.join(", ")
            }
        );
        let d: Vec<String> = self.drops.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!(
            "  router drops   {:>12}",
            if d.is_empty() {
                "0".into()
            } else {
                d.join(", ")
            }
        );
        println!("  RTT us         p50 {p50:.0}  p90 {p90:.0}  p99 {p99:.0}  max {max:.0}");
        if let Some(c) = self.cpu_us {
            println!("  router CPU     {c:>12.2} us per satisfied Interest");
        }
        if let Some(c) = self.ceiling.as_ref().map(RunResult::rate) {
            println!(
                "  ceiling        {:>12.0} exchanges/s (generator consumer -> producer, no router)",
                c
            );
        }
    }
}
