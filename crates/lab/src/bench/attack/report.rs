//! What one attack measured, the floors it is held to, and how the suite prints: a table, or
//! one JSON object per attack.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::flood::{Attack, FloodStats};
use super::legit::Snapshot;

/// Share of its unattacked throughput the legitimate consumer keeps during an attack.
pub(super) const THROUGHPUT_FLOOR: f64 = 0.90;
/// The router's resident size stays under this times its idle size, plus the table budget.
pub(super) const RSS_IDLE_FACTOR: f64 = 1.5;

const MIB: f64 = 1024.0 * 1024.0;

/// The memory the configured tables may take on top of the idle router, in bytes, by table.
#[derive(Debug, Clone, Default)]
pub(super) struct TableBudget {
    /// (table, bytes), in the order printed.
    pub(super) parts: Vec<(&'static str, u64)>,
}

impl TableBudget {
    /// All the parts together.
    pub(super) fn total(&self) -> u64 {
        self.parts.iter().map(|p| p.1).sum()
    }
}

/// What one attack measured.
#[derive(Debug, Clone, Default)]
pub(super) struct Row {
    pub(super) attack: Option<Attack>,
    pub(super) flood: FloodStats,
    /// The legitimate side's counts over the baseline and over the attack.
    pub(super) baseline: Snapshot,
    pub(super) attacked: Snapshot,
    /// Seconds of each phase.
    pub(super) seconds: f64,
    pub(super) idle_rss_kib: u64,
    pub(super) baseline_peak_rss_kib: u64,
    pub(super) attack_peak_rss_kib: u64,
    /// Resident-size growth over the last part of the attack, MiB/s.
    pub(super) rss_growth_mib_s: f64,
    /// The same over the last part of the baseline (the CS filling with the consumer's Data).
    pub(super) baseline_rss_growth_mib_s: f64,
    pub(super) budget: TableBudget,
    /// The router's CPU over the attack, in cores.
    pub(super) router_cpu_cores: f64,
    /// How long `status/general` took over a new Unix face at the end of the attack, in ms.
    pub(super) mgmt_status_ms: Option<f64>,
    /// Why it failed, if it did.
    pub(super) mgmt_error: Option<String>,
    /// From `status/general` at the end of the attack.
    pub(super) pit_entries: Option<u64>,
    /// Nacks the router sent during the attack (`status/general`'s NOutNacks).
    pub(super) out_nacks: Option<u64>,
    /// Faces at the end of the attack, all and the attacker's (by source address).
    pub(super) faces: Option<(u64, u64)>,
    /// Bytes the attacker's faces received and sent, per the router's face counters.
    pub(super) attacker_face_bytes: Option<(u64, u64)>,
    /// Growth of the face table's bound counters during the attack (nonzero ones).
    pub(super) bounds: BTreeMap<String, u64>,
    /// Whether the router was still running at the end.
    pub(super) router_alive: bool,
    /// WARN/ERROR lines the router logged during the run.
    pub(super) router_warnings: u64,
}

impl Row {
    fn rate(s: &Snapshot, secs: f64) -> f64 {
        s.satisfied as f64 / secs.max(1e-9)
    }

    pub(super) fn baseline_rate(&self) -> f64 {
        Row::rate(&self.baseline, self.seconds)
    }

    pub(super) fn attacked_rate(&self) -> f64 {
        Row::rate(&self.attacked, self.seconds)
    }

    /// The attacked throughput in percent of the baseline.
    pub(super) fn pct(&self) -> f64 {
        100.0 * self.attacked_rate() / self.baseline_rate().max(1e-9)
    }

    /// The resident-size bound: 1.5 × idle plus the table budget, in KiB.
    pub(super) fn rss_bound_kib(&self) -> u64 {
        (self.idle_rss_kib as f64 * RSS_IDLE_FACTOR) as u64 + self.budget.total() / 1024
    }

    pub(super) fn throughput_holds(&self) -> bool {
        self.router_alive && self.pct() >= THROUGHPUT_FLOOR * 100.0
    }

    pub(super) fn rss_holds(&self) -> bool {
        self.router_alive && self.attack_peak_rss_kib <= self.rss_bound_kib()
    }

    fn name(&self) -> &'static str {
        self.attack.map_or("none", Attack::name)
    }

    /// The row as one JSON object.
    pub(super) fn json(&self) -> Value {
        let mib = |k: u64| k as f64 / 1024.0;
        let a = self.attack;
        let probes = |ok: u64, sent: u64| json!({"ok": ok, "sent": sent});
        let legit = |s: &Snapshot| {
            json!({
                "satisfied_per_s": Row::rate(s, self.seconds),
                "satisfied": s.satisfied,
                "timeouts": s.timeouts,
                "nacks": s.nacks,
                "probe_udp": probes(s.probe_udp_ok, s.probe_udp_sent),
                "probe_unix": probes(s.probe_unix_ok, s.probe_unix_sent),
            })
        };
        json!({
            "attack": self.name(),
            "letter": a.map(|a| a.letter().to_string()),
            "description": a.map(Attack::describe),
            "seconds": self.seconds,
            "attack_packets": self.flood.packets,
            "attack_bytes": self.flood.bytes,
            "attack_send_errors": self.flood.send_errors,
            "attack_packets_per_s": self.flood.packets as f64 / self.flood.seconds.max(1e-9),
            "attack_sources": self.flood.sources,
            "baseline": legit(&self.baseline),
            "attacked": legit(&self.attacked),
            "pct_of_baseline": self.pct(),
            "idle_rss_mib": mib(self.idle_rss_kib),
            "baseline_peak_rss_mib": mib(self.baseline_peak_rss_kib),
            "attack_peak_rss_mib": mib(self.attack_peak_rss_kib),
            "rss_growth_end_mib_per_s": self.rss_growth_mib_s,
            "baseline_rss_growth_end_mib_per_s": self.baseline_rss_growth_mib_s,
            "rss_bound_mib": mib(self.rss_bound_kib()),
            "table_budget_mib": self.budget.parts.iter()
                .map(|(k, v)| ((*k).to_string(), json!(*v as f64 / MIB)))
                .collect::<serde_json::Map<_, _>>(),
            "router_cpu_cores": self.router_cpu_cores,
            "mgmt_status_ms": self.mgmt_status_ms,
            "mgmt_status_error": self.mgmt_error,
            "pit_entries": self.pit_entries,
            "out_nacks": self.out_nacks,
            "faces": self.faces.map(|f| f.0),
            "attacker_faces": self.faces.map(|f| f.1),
            "attacker_face_in_bytes": self.attacker_face_bytes.map(|b| b.0),
            "attacker_face_out_bytes": self.attacker_face_bytes.map(|b| b.1),
            "bound_counters": self.bounds,
            "router_alive": self.router_alive,
            "router_warnings": self.router_warnings,
            "floor_throughput_holds": self.throughput_holds(),
            "floor_rss_holds": self.rss_holds(),
        })
    }

    /// What the router counted or showed, in a few words, for the table's last column.
    fn notes(&self) -> String {
        let mut n: Vec<String> = self
            .bounds
            .iter()
            .filter(|(k, _)| k.as_str() != "reassembly_bytes")
            .map(|(k, v)| format!("{k} +{v}"))
            .collect();
        if let Some(p) = self.pit_entries {
            n.push(format!("pit {p}"));
        }
        if let Some(x) = self.out_nacks.filter(|x| *x > 0) {
            n.push(format!("nacks out {x}"));
        }
        if let Some((all, att)) = self.faces {
            n.push(format!("faces {all} ({att} attacker)"));
        }
        if let Some((rx, tx)) = self.attacker_face_bytes.filter(|b| b.0 > 0) {
            n.push(format!("attacker out/in {:.1}x", tx as f64 / rx as f64));
        }
        if let Some(ms) = self.mgmt_status_ms {
            n.push(format!("status {ms:.0} ms"));
        }
        if let Some(e) = &self.mgmt_error {
            n.push(format!("status failed: {e}"));
        }
        if !self.router_alive {
            n.push("ROUTER DIED".into());
        }
        n.join(", ")
    }
}

/// Prints the suite's table, then each floor, held or failed.
pub(super) fn print_text(rows: &[Row]) {
    let Some(first) = rows.first() else { return };
    println!(
        "cascade bench attack: {:.1} s baseline then {:.1} s of attack, each against a new `cascade run`",
        first.seconds, first.seconds
    );
    let parts: Vec<String> = first
        .budget
        .parts
        .iter()
        .map(|(k, v)| format!("{k} {:.0}", *v as f64 / MIB))
        .collect();
    println!(
        "table budget {:.0} MiB ({})",
        first.budget.total() as f64 / MIB,
        parts.join(", ")
    );
    println!();
    println!(
        "{:<14} {:>9} {:>9} {:>9} {:>6} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}  router counters",
        "attack",
        "sent/s",
        "base/s",
        "attack/s",
        "%",
        "t/o",
        "probes",
        "idle",
        "peak",
        "bound",
        "MiB/s",
        "cpu"
    );
    for r in rows {
        let a = &r.attacked;
        println!(
            "{:<14} {:>9.0} {:>9.0} {:>9.0} {:>6.1} {:>5} {:>3}/{:<3} {:>7.1} {:>7.1} {:>7.0} {:>4.1}/{:<4.1} {:>5.2}  {}",
            format!("{} {}", r.attack.map_or('-', Attack::letter), r.name()),
            r.flood.packets as f64 / r.flood.seconds.max(1e-9),
            r.baseline_rate(),
            r.attacked_rate(),
            r.pct(),
            a.timeouts + a.nacks,
            a.probe_udp_ok + a.probe_unix_ok,
            a.probe_udp_sent + a.probe_unix_sent,
            r.idle_rss_kib as f64 / 1024.0,
            r.attack_peak_rss_kib as f64 / 1024.0,
            r.rss_bound_kib() as f64 / 1024.0,
            r.baseline_rss_growth_mib_s,
            r.rss_growth_mib_s,
            r.router_cpu_cores,
            r.notes(),
        );
    }
    println!();
    println!(
        "columns: sent/s attack packets; base/s and attack/s the legitimate consumer's satisfied \
         Interests/s; t/o its timeouts+Nacks under attack; probes new faces that got Data; RSS in \
         MiB (bound = {RSS_IDLE_FACTOR} x idle + table budget); MiB/s RSS growth at the end of the \
         baseline / of the attack; cpu the router's cores during the attack"
    );
    println!();
    let mut failed = 0;
    for r in rows {
        let t = r.throughput_holds();
        let m = r.rss_holds();
        failed += usize::from(!t) + usize::from(!m);
        println!(
            "floor {} {:<11} throughput {:>5.1} % >= {:.0} %: {:<5}  RSS {:>6.1} MiB <= {:.0} MiB: {}",
            r.attack.map_or('-', Attack::letter),
            r.name(),
            r.pct(),
            THROUGHPUT_FLOOR * 100.0,
            verdict(t),
            r.attack_peak_rss_kib as f64 / 1024.0,
            r.rss_bound_kib() as f64 / 1024.0,
            verdict(m),
        );
    }
    println!(
        "{} of {} floors hold",
        2 * rows.len() - failed,
        2 * rows.len()
    );
}

fn verdict(holds: bool) -> &'static str {
    if holds {
        "holds"
    } else {
        "FAILS"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(base: u64, attacked: u64, idle: u64, peak: u64) -> Row {
        Row {
            attack: Some(Attack::Pit),
            baseline: Snapshot {
                satisfied: base,
                ..Snapshot::default()
            },
            attacked: Snapshot {
                satisfied: attacked,
                ..Snapshot::default()
            },
            seconds: 2.0,
            idle_rss_kib: idle,
            attack_peak_rss_kib: peak,
            budget: TableBudget {
                parts: vec![("cs", 1024 * 1024), ("pit", 1024 * 1024)],
            },
            router_alive: true,
            mgmt_status_ms: Some(3.0),
            ..Row::default()
        }
    }

    #[test]
    fn floors_compare_with_the_baseline_and_the_memory_bound() {
        let r = row(1000, 950, 100_000, 150_000);
        assert_eq!(r.baseline_rate(), 500.0);
        assert!((r.pct() - 95.0).abs() < 1e-9);
        assert_eq!(r.rss_bound_kib(), 150_000 + 2048);
        assert!(r.throughput_holds() && r.rss_holds());
        let r = row(1000, 899, 100_000, 152_049);
        assert!(!r.throughput_holds() && !r.rss_holds());
        let mut dead = row(1000, 1000, 100_000, 100_000);
        dead.router_alive = false;
        assert!(!dead.throughput_holds() && !dead.rss_holds());
    }

    #[test]
    fn json_has_one_object_with_the_floors() {
        let v = row(1000, 950, 100_000, 150_000).json();
        assert_eq!(v["attack"], "pit");
        assert_eq!(v["letter"], "b");
        assert_eq!(v["floor_throughput_holds"], true);
        assert_eq!(v["baseline"]["satisfied"], 1000);
        assert_eq!(v["table_budget_mib"]["cs"], 1.0);
        assert_eq!(v["mgmt_status_ms"], 3.0);
        assert!(v["mgmt_status_error"].is_null());
    }
}
