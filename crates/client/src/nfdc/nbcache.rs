//! Cascade's `cs/nbcache` dataset as `cs info` prints it (after the tiers).

use serde_json::{json, Value};

use crate::control::NbCacheInfo;

/// The counters as a JSON object (the `nbcache` member of `cs info --json`).
pub(super) fn json(n: &NbCacheInfo) -> Value {
    json!({
        "n_filter_skips": n.n_filter_skips,
        "n_filter_false_positives": n.n_filter_false_positives,
        "n_queue_bypasses": n.n_queue_bypasses,
        "n_queue_no_upstream": n.n_queue_no_upstream,
        "n_bypass_unavailable": n.n_bypass_unavailable,
        "n_alpha_sent": n.n_alpha_sent,
        "n_beta_sent": n.n_beta_sent,
        "n_alpha_received": n.n_alpha_received,
        "n_beta_received": n.n_beta_received,
        "n_faces_made_unavailable": n.n_faces_made_unavailable,
        "n_faces_unavailable": n.n_faces_unavailable,
        "n_data_marked": n.n_data_marked,
        "n_idle_sent": n.n_idle_sent,
    })
}

/// The counters as the text `cs info` prints.
pub(super) fn text(n: &NbCacheInfo) -> String {
    format!(
        "NB-Cache:\n  bloomSureMisses={}\n  bloomFalsePositives={}\n  queueBypasses={}\n  \
         noUpstream={} (all under Nack-alpha: {})\n  nackAlpha sent={} received={}\n  \
         nackBeta sent={} received={}\n  upstreamsUnavailable now={} (made unavailable: {})\n  \
         dataMarked={}\n  idlePacketsSent={}\n",
        n.n_filter_skips,
        n.n_filter_false_positives,
        n.n_queue_bypasses,
        n.n_queue_no_upstream,
        n.n_bypass_unavailable,
        n.n_alpha_sent,
        n.n_alpha_received,
        n.n_beta_sent,
        n.n_beta_received,
        n.n_faces_unavailable,
        n.n_faces_made_unavailable,
        n.n_data_marked,
        n.n_idle_sent
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_is_shown() {
        let n = NbCacheInfo {
            n_filter_skips: 11,
            n_filter_false_positives: 12,
            n_queue_bypasses: 13,
            n_queue_no_upstream: 14,
            n_bypass_unavailable: 15,
            n_alpha_sent: 16,
            n_beta_sent: 17,
            n_alpha_received: 18,
            n_beta_received: 19,
            n_faces_made_unavailable: 20,
            n_faces_unavailable: 21,
            n_data_marked: 22,
            n_idle_sent: 23,
        };
        let t = text(&n);
        for k in 11..=23 {
            assert!(t.contains(&k.to_string()), "{k} in {t}");
        }
        assert!(t.contains("queueBypasses=13") && t.contains("nackAlpha sent=16 received=18"));
        let j = json(&n);
        let o = j.as_object().unwrap();
        assert_eq!(o.len(), 13);
        let mut vals: Vec<u64> = o.values().map(|v| v.as_u64().unwrap()).collect();
        vals.sort_unstable();
        assert_eq!(vals, (11..=23).collect::<Vec<_>>());
    }
}
