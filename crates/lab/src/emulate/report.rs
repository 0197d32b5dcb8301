//! What a run reports: the consumer's figures, and each router's counters read through the
//! management protocol (`status/general`, `cs/info`, `cs/tiers`, `cs/nbcache`) before it
//! stops.

use std::path::Path;
use std::time::Duration;

use client::transport::TransportUri;
use client::Face;
use serde_json::json;

use super::consumer::TraceResult;
use super::{Case, Cc};

/// One router's counters at the end of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouterCounters {
    /// The node's name.
    pub name: String,
    /// Interests its workers took in (`status/general`).
    pub in_interests: u64,
    /// Interests it forwarded.
    pub out_interests: u64,
    /// Data it sent.
    pub out_data: u64,
    /// Lookups its RAM CS missed (`cs/info`): with no RAM tier, every Interest the CS filter
    /// did not skip.
    pub cs_misses: u64,
    /// Lookups that reached its L2 (`cs/tiers`).
    pub l2_lookups: u64,
    /// Of those, how many found the chunk (answered from L2).
    pub l2_hits: u64,
    /// Batch reads of its L2.
    pub l2_reads: u64,
    /// Interests that went upstream past L2's queue threshold (`cs/nbcache`).
    pub bypassed: u64,
    /// NB-Cache's bypass and congestion counters (`cs/nbcache`).
    pub nbcache: client::control::NbCacheInfo,
    /// Datagrams the kernel dropped at its UDP sockets for want of buffer room (in its
    /// namespace; unknown on loopback, where every router shares the host's counters).
    pub udp_drops: Option<u64>,
}

impl RouterCounters {
    /// Reads the counters of the router whose Unix socket is `sock`.
    pub fn read(name: &str, sock: &Path) -> Result<RouterCounters, String> {
        let what = |e: client::Error| format!("counters of {name}: {e}");
        let mut face = Face::connect(&TransportUri::Unix(sock.to_path_buf())).map_err(what)?;
        let mut c = client::Controller::new(&mut face).with_timeout(Duration::from_secs(5));
        let st = c.forwarder_status().map_err(what)?;
        let cs = c.cs_info().map_err(what)?;
        let tiers = c.cs_tiers(Duration::from_secs(2)).map_err(what)?;
        let nb = c.cs_nbcache(Duration::from_secs(2)).map_err(what)?;
        let sum = |f: fn(&client::control::CsTierInfo) -> u64| tiers.iter().map(f).sum::<u64>();
        let l2_lookups = sum(|t| t.n_lookups);
        Ok(RouterCounters {
            name: name.into(),
            in_interests: st.n_in_interests,
            out_interests: st.n_out_interests,
            out_data: st.n_out_data,
            cs_misses: cs.n_misses,
            l2_lookups,
            l2_hits: sum(|t| t.n_hits),
            l2_reads: sum(|t| t.n_reads),
            bypassed: nb.n_queue_bypasses,
            nbcache: nb,
            udp_drops: None,
        })
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "name": self.name,
            "in_interests": self.in_interests,
            "out_interests": self.out_interests,
            "out_data": self.out_data,
            "cs_misses": self.cs_misses,
            "l2_lookups": self.l2_lookups,
            "l2_hits": self.l2_hits,
            "l2_reads": self.l2_reads,
            "bypassed": self.bypassed,
            "udp_drops": self.udp_drops,
            "nbcache": {
                "bloom_sure_misses": self.nbcache.n_filter_skips,
                "bloom_false_positives": self.nbcache.n_filter_false_positives,
                "queue_no_upstream": self.nbcache.n_queue_no_upstream,
                "alpha_sent": self.nbcache.n_alpha_sent,
                "beta_sent": self.nbcache.n_beta_sent,
                "alpha_received": self.nbcache.n_alpha_received,
                "beta_received": self.nbcache.n_beta_received,
                "upstreams_unavailable": self.nbcache.n_faces_unavailable,
                "data_marked": self.nbcache.n_data_marked,
                "idle_sent": self.nbcache.n_idle_sent,
            },
        })
    }
}

/// One run: a case, a congestion control and a threshold.
#[derive(Debug, Clone)]
pub struct Row {
    /// The case.
    pub case: Case,
    /// The congestion control.
    pub cc: Cc,
    /// `store.bypass_threshold`.
    pub threshold: usize,
    /// What the consumer measured.
    pub trace: TraceResult,
    /// The routers' counters, from the consumer's neighbour on.
    pub routers: Vec<RouterCounters>,
    /// Whether the nodes ran in network namespaces.
    pub namespaces: bool,
    /// Whether the stores the scenario slows down were throttled.
    pub throttled: bool,
    /// Datagrams the kernel dropped at the consumer's socket (namespaces only).
    pub consumer_udp_drops: Option<u64>,
}

impl Row {
    /// Interests the routers sent upstream past a store that held them (queue threshold).
    pub fn bypassed(&self) -> u64 {
        self.routers.iter().map(|r| r.bypassed).sum()
    }

    /// The row as one JSON object (the line `--json` prints).
    pub fn json(&self) -> serde_json::Value {
        let t = &self.trace;
        let (mean, p50, p99) = t.rtt_ms();
        json!({
            "case": self.case.to_string(),
            "cc": self.cc.to_string(),
            "threshold": self.threshold,
            "throughput_pps": round(t.throughput_pps()),
            "rtt_ms": {"mean": round(mean), "p50": round(p50), "p99": round(p99)},
            "bypassed": self.bypassed(),
            "marked": t.marked,
            "namespaces": self.namespaces,
            "offered_pps": round(t.offered_pps()),
            "sent": t.sent,
            "received": t.received,
            "timeouts": t.timeouts,
            "nacks": t.nacks,
            "window_decreases": t.window_decreases,
            "window_max": t.window_max,
            "storage_throttled": self.throttled,
            "consumer_udp_drops": self.consumer_udp_drops,
            "routers": self.routers.iter().map(RouterCounters::json).collect::<Vec<_>>(),
        })
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The header of the text table.
pub fn header() -> String {
    format!(
        "{:<4} {:<5} {:>5} {:>10} {:>12} {:>10} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "case",
        "cc",
        "thr",
        "offered/s",
        "throughput/s",
        "rtt_ms",
        "p50_ms",
        "p99_ms",
        "bypassed",
        "marked",
        "timeouts"
    )
}

/// A row of the text table.
pub fn line(r: &Row) -> String {
    let t = &r.trace;
    let (mean, p50, p99) = t.rtt_ms();
    format!(
        "{:<4} {:<5} {:>5} {:>10.0} {:>12.0} {:>10.1} {:>9.1} {:>9.1} {:>9} {:>8} {:>8}",
        r.case.to_string(),
        r.cc.to_string(),
        r.threshold,
        t.offered_pps(),
        t.throughput_pps(),
        mean,
        p50,
        p99,
        r.bypassed(),
        t.marked,
        t.timeouts
    )
}

/// "B against A: throughput +x %, mean RTT −y %" for the first rows of cases A and B with the
/// same congestion control, if both ran.
pub fn comparison(rows: &[Row]) -> Option<String> {
    let find = |c: Case| rows.iter().find(|r| r.case == c && r.cc == Cc::None);
    let (a, b) = (find(Case::A)?, find(Case::B)?);
    let (ta, tb) = (a.trace.throughput_pps(), b.trace.throughput_pps());
    let (ra, rb) = (a.trace.rtt_ms().0, b.trace.rtt_ms().0);
    if ta <= 0.0 || ra <= 0.0 {
        return None;
    }
    Some(format!(
        "B against A: throughput {:+.1} % ({:.0} -> {:.0} /s), mean RTT {:+.1} % ({:.1} -> {:.1} ms)",
        (tb / ta - 1.0) * 100.0,
        ta,
        tb,
        (rb / ra - 1.0) * 100.0,
        ra,
        rb
    ))
}

/// With congestion control, Pan et al.'s Fig. 19 ordering: "B+NB-CC against B+ECN and A+ECN:
/// throughput x / y / z /s, mean RTT ..." for the first rows of each, if all three ran.
pub fn cc_comparison(rows: &[Row]) -> Option<String> {
    let find = |c: Case, cc: Cc| rows.iter().find(|r| r.case == c && r.cc == cc);
    let runs = [
        ("B+NB-CC", find(Case::B, Cc::Nbcc)?),
        ("B+ECN", find(Case::B, Cc::Ecn)?),
        ("A+ECN", find(Case::A, Cc::Ecn)?),
    ];
    let a = runs[2].1.trace.rtt_ms().0;
    let mut out = String::from("with congestion control:");
    for (label, r) in runs {
        let rtt = r.trace.rtt_ms().0;
        out.push_str(&format!(
            " {label} {:.0} /s, {:.1} ms ({:.2}x A+ECN's RTT);",
            r.trace.throughput_pps(),
            rtt,
            if a > 0.0 { rtt / a } else { 0.0 }
        ));
    }
    out.pop();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(case: Case, rtt_us: Vec<u32>, received: u64) -> Row {
        Row {
            case,
            cc: Cc::None,
            threshold: 64,
            trace: TraceResult {
                sent: 10,
                send_seconds: 1.0,
                received,
                data_seconds: 1.0,
                rtt_us,
                ..TraceResult::default()
            },
            routers: vec![RouterCounters {
                name: "R1".into(),
                bypassed: 3,
                ..RouterCounters::default()
            }],
            namespaces: false,
            throttled: false,
            consumer_udp_drops: None,
        }
    }

    #[test]
    fn the_json_line_has_the_documented_shape() {
        let v = row(Case::B, vec![1000, 3000], 3).json();
        assert_eq!(v["case"], "B");
        assert_eq!(v["cc"], "none");
        assert_eq!(v["throughput_pps"], 2.0);
        assert_eq!(v["rtt_ms"]["mean"], 2.0);
        assert!(v["rtt_ms"]["p50"].is_number() && v["rtt_ms"]["p99"].is_number());
        assert_eq!(v["bypassed"], 3);
        assert_eq!(v["marked"], 0);
        assert_eq!(v["namespaces"], false);
        assert_eq!(v["routers"][0]["name"], "R1");
    }

    #[test]
    fn b_is_compared_with_a() {
        let rows = [row(Case::A, vec![4000], 11), row(Case::B, vec![1000], 31)];
        let s = comparison(&rows).unwrap();
        assert!(s.contains("+200.0 %") && s.contains("-75.0 %"), "{s}");
        assert!(comparison(&rows[..1]).is_none());
        assert!(cc_comparison(&rows).is_none());
        let mut cc_rows = vec![
            row(Case::B, vec![3000], 31),
            row(Case::B, vec![2000], 21),
            row(Case::A, vec![2000], 11),
        ];
        for (r, cc) in cc_rows.iter_mut().zip([Cc::Nbcc, Cc::Ecn, Cc::Ecn]) {
            r.cc = cc;
        }
        let s = cc_comparison(&cc_rows).unwrap();
        assert!(s.contains("B+NB-CC 30 /s, 3.0 ms (1.50x"), "{s}");
        assert!(s.contains("A+ECN 10 /s, 2.0 ms (1.00x"), "{s}");
        assert_eq!(
            header().split_whitespace().count(),
            line(&rows[0]).split_whitespace().count()
        );
    }
}
