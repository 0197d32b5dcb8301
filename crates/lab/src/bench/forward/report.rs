//! What `cascade bench forward` prints: text or one JSON object per measurement through the
//! router, and with `--scale` a table (or a JSON array) of them, one per worker count.
//!
//! Beside the rates it puts each CPU cost against the generator's own: the router's CPU per
//! satisfied Interest over the generator's CPU per direct exchange in the ceiling run (the same
//! socket operations with no router), and the satisfied rate as a share of the ceiling.

use std::collections::HashMap;

use super::cpu::PerOp;
use super::generator::RunResult;
use super::{FaceKind, ForwardBenchArgs, Routed};

/// What `cascade bench forward` reports for one measurement through the router.
pub(super) struct Report<'a> {
    args: &'a ForwardBenchArgs,
    routed: Routed,
    /// RTT percentiles in microseconds: p50, p90, p99, max.
    rtt: [f64; 4],
    /// The ceiling run: exchanges/s and timeouts (none with `--no-ceiling`).
    ceiling: Option<(f64, u64)>,
    /// Router CPU time per satisfied Interest (a router started here only).
    router: Option<PerOp>,
    /// The generator thread's CPU time per satisfied Interest, through the router.
    generator: Option<PerOp>,
    /// The generator thread's CPU time per direct exchange, in the ceiling run.
    direct: Option<PerOp>,
}

impl<'a> Report<'a> {
    /// The report of `routed`, against the `ceiling` run of the same invocation.
    pub(super) fn new(
        args: &'a ForwardBenchArgs,
        mut routed: Routed,
        ceiling: Option<&RunResult>,
    ) -> Report<'a> {
        let res = &mut routed.res;
        let rtt = [res.pct(0.5), res.pct(0.9), res.pct(0.99), res.pct(1.0)];
        let router = if args.attach.is_none() {
            res.router_cpu.per_op_us(res.satisfied)
        } else {
            None
        };
        let generator = res.generator_cpu.per_op_us(res.satisfied);
        Report {
            args,
            rtt,
            ceiling: ceiling.map(|c| (c.rate(), c.timeouts)),
            router,
            generator,
            direct: ceiling.and_then(|c| c.generator_cpu.per_op_us(c.satisfied)),
            routed,
        }
    }

    /// `one`, `io+workers` or `sharded` for a router started here.
    fn threads(&self) -> Option<&'static str> {
        self.routed.threads
    }

    /// A sharded router's share of the packets that crossed a ring between its loops (in
    /// received, out emitted), in percent.
    fn crossed_pct(&self) -> Option<f64> {
        self.routed.crossed.map(|c| 100.0 * c)
    }

    fn face(&self) -> &'static str {
        match self.args.face {
            FaceKind::Udp => "udp",
            FaceKind::Unix => "unix",
            FaceKind::Ws => "ws",
        }
    }

    /// Satisfied Interests/s.
    fn rate(&self) -> f64 {
        self.routed.res.rate()
    }

    /// The satisfied rate as a percentage of the ceiling's exchanges/s.
    fn pct_of_ceiling(&self) -> Option<f64> {
        let (c, _) = self.ceiling?;
        (c > 0.0).then(|| 100.0 * self.rate() / c)
    }

    /// Router CPU per satisfied Interest over the generator's CPU per direct exchange.
    fn cpu_ratio(&self) -> Option<f64> {
        let (r, d) = (self.router?.total(), self.direct?.total());
        (d > 0.0).then(|| r / d)
    }

    /// The report as one JSON object.
    pub(super) fn json(&self) -> serde_json::Value {
        let args = self.args;
        let res = &self.routed.res;
        let [p50, p90, p99, max] = self.rtt;
        let total = |p: Option<PerOp>| p.map(PerOp::total);
        let user = |p: Option<PerOp>| p.map(|p| p.user);
        let sys = |p: Option<PerOp>| p.map(|p| p.sys);
        serde_json::json!({
            "face": self.face(),
            "workload": args.workload,
            "window": args.window,
            "payload_bytes": args.payload,
            "duration_s": res.seconds,
            "workers": self.routed.workers,
            "threads": self.threads(),
            "satisfied_per_s": self.rate(),
            "satisfied": res.satisfied,
            "timeouts": res.timeouts,
            "nacks": res.nacks,
            "router_drops": self.routed.drops.iter().cloned().collect::<HashMap<String, u64>>(),
            "rtt_us": {"p50": p50, "p90": p90, "p99": p99, "max": max},
            "router_cpu_us_per_interest": total(self.router),
            "router_cpu_user_us_per_interest": user(self.router),
            "router_cpu_sys_us_per_interest": sys(self.router),
            "generator_cpu_us_per_interest": total(self.generator),
            "generator_cpu_user_us_per_interest": user(self.generator),
            "generator_cpu_sys_us_per_interest": sys(self.generator),
            "ceiling_per_s": self.ceiling.map(|c| c.0),
            "ceiling_timeouts": self.ceiling.map(|c| c.1),
            "ceiling_generator_cpu_us_per_exchange": total(self.direct),
            "ceiling_generator_cpu_user_us_per_exchange": user(self.direct),
            "ceiling_generator_cpu_sys_us_per_exchange": sys(self.direct),
            "pct_of_ceiling": self.pct_of_ceiling(),
            "crossed_loops_pct": self.crossed_pct(),
            "loops": self.routed.loops.iter().map(|l| serde_json::json!({
                "received": l.kept_in + l.crossed_in,
                "crossed_in": l.crossed_in,
                "sent": l.kept_out + l.crossed_out + l.direct_out,
                "crossed_out": l.crossed_out,
                "direct_out": l.direct_out,
            })).collect::<Vec<_>>(),
            "router_to_direct_cpu_ratio": self.cpu_ratio(),
        })
    }

    /// The report as text, one figure a line.
    pub(super) fn print_text(&self) {
        let args = self.args;
        let face = self.face();
        let res = &self.routed.res;
        let [p50, p90, p99, max] = self.rtt;
        let threads = self
            .threads()
            .map_or_else(String::new, |t| format!(", threads {t}"));
        println!(
            "bench forward: face {face}, workload {}, window {}, payload {} B, {:.1} s, {} worker(s){threads}",
            args.workload, args.window, args.payload, res.seconds, self.routed.workers
        );
        println!(
            "  satisfied      {:>12.0} Interests/s ({} in total)",
            self.rate(),
            res.satisfied
        );
        println!("  timeouts       {:>12}", res.timeouts);
        let nacks: Vec<String> = res.nacks.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!("  nacks          {:>12}", list_or_zero(&nacks));
        let d: Vec<String> = (self.routed.drops.iter())
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        println!("  router drops   {:>12}", list_or_zero(&d));
        println!("  RTT us         p50 {p50:.0}  p90 {p90:.0}  p99 {p99:.0}  max {max:.0}");
        if let Some(c) = self.router {
            println!(
                "  router CPU     {:>12.2} us per satisfied Interest ({})",
                c.total(),
                user_sys(c)
            );
        }
        if let Some(c) = self.generator {
            println!(
                "  generator CPU  {:>12.2} us per satisfied Interest ({})",
                c.total(),
                user_sys(c)
            );
        }
        if let Some((c, _)) = self.ceiling {
            println!(
                "  ceiling        {:>12.0} exchanges/s (generator consumer -> producer, no router)",
                c
            );
        }
        if let Some(c) = self.direct {
            println!(
                "  ceiling CPU    {:>12.2} us of generator per direct exchange ({})",
                c.total(),
                user_sys(c)
            );
        }
        if let Some(p) = self.pct_of_ceiling() {
            println!("  of ceiling     {p:>11.1}% (satisfied/s over the ceiling's exchanges/s)");
        }
        if let Some(r) = self.cpu_ratio() {
            println!(
                "  CPU ratio      {r:>12.2} (router CPU per satisfied Interest / generator CPU per direct exchange)"
            );
        }
        if let Some(c) = self.crossed_pct() {
            println!("  crossed        {c:>11.1}% (packets handed between the sharded loops)");
        }
    }
}

/// `items` joined with commas, or `0` when there are none.
fn list_or_zero(items: &[String]) -> String {
    if items.is_empty() {
        "0".into()
    } else {
        items.join(", ")
    }
}

/// "user U, sys S" in microseconds.
fn user_sys(p: PerOp) -> String {
    format!("user {:.2}, sys {:.2}", p.user, p.sys)
}

/// A figure with `decimals` decimals, or `-` when there is none.
fn or_dash(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.decimals$}"))
}

/// `cascade bench forward --scale` as text: the ceiling, then one row per worker count.
pub(super) fn print_scale(args: &ForwardBenchArgs, ceiling: Option<&RunResult>, rows: &[Report]) {
    let face = rows.first().map_or("udp", Report::face);
    println!(
        "bench forward --scale: face {face}, workload {}, window {}, payload {} B, {:.1} s per point",
        args.workload, args.window, args.payload, args.duration
    );
    if let Some(c) = ceiling {
        let direct = rows.first().and_then(|r| r.direct);
        println!(
            "  ceiling {:.0} exchanges/s, {} us of generator CPU per direct exchange{}",
            c.rate(),
            or_dash(direct.map(PerOp::total), 2),
            direct.map_or_else(String::new, |d| format!(" ({})", user_sys(d)))
        );
    }
    println!(
        "  {:>7}  {:>10}  {:>12}  {:>10}  {:>26}  {:>13}  {:>8}  {:>7}",
        "workers",
        "threads",
        "satisfied/s",
        "of ceiling",
        "router CPU us (user/sys)",
        "router/direct",
        "timeouts",
        "crossed"
    );
    for r in rows {
        let cpu = r.router.map_or_else(
            || "-".into(),
            |c| format!("{:.2} ({:.2}/{:.2})", c.total(), c.user, c.sys),
        );
        let pct = r
            .pct_of_ceiling()
            .map_or_else(|| "-".into(), |p| format!("{p:.1}%"));
        let crossed = r
            .crossed_pct()
            .map_or_else(|| "-".into(), |c| format!("{c:.1}%"));
        println!(
            "  {:>7}  {:>10}  {:>12.0}  {:>10}  {:>26}  {:>13}  {:>8}  {:>7}",
            r.routed.workers,
            r.threads().unwrap_or("-"),
            r.rate(),
            pct,
            cpu,
            or_dash(r.cpu_ratio(), 2),
            r.routed.res.timeouts,
            crossed
        );
    }
}
