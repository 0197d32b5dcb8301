//! NB-Cache's switches of `[store]` (Pan et al., "NB-Cache: Non-Blocking In-Network Caching
//! for High-Performance Content Routers") applied to a worker: `bloom` puts a counting Bloom
//! filter of the worker's names (RAM CS and L2) in front of its CS, `aqm` turns the
//! queue-threshold bypass on, and `io` (in the worker's L2) decides whether the worker waits for
//! its storage. The paper's cases A–D are these switches, not separate code paths; so are its
//! congestion controls: `ecn` alone is plain ECN, `ecn` with `nbcc` is NB-CC.

use std::sync::Arc;

use engine::fw::pipeline::{CongestionConfig, Engine};
use store::{BloomHandle, CountingBloom};

use crate::config::Config;

/// Names a worker's filter holds at capacity: `bloom_capacity` shared between the workers, or
/// the worker's RAM CS and L2 capacities.
fn capacity(cfg: &Config, workers: usize) -> u64 {
    let n = workers.max(1) as u64;
    let s = &cfg.store;
    if s.bloom_capacity > 0 {
        return s.bloom_capacity.div_ceil(n).max(1);
    }
    let ram = (cfg.cs.capacity as u64).div_ceil(n);
    let l2 = if s.l2_path.is_empty() {
        0
    } else {
        let batch = u64::from(s.batch.max(1));
        s.l2_capacity.div_ceil(n).div_ceil(batch) * batch
    };
    (ram + l2).max(1)
}

/// Applies `bloom`, `aqm`, `ecn` and `nbcc` to worker `i`'s engine; returns the filter (to share with the
/// worker's L2), if `bloom` is on.
pub(crate) fn attach(
    cfg: &Config,
    i: usize,
    workers: usize,
    engine: &mut Engine,
) -> Result<Option<Arc<CountingBloom>>, String> {
    let s = &cfg.store;
    engine.set_bypass_threshold(s.aqm.then_some(s.bypass_threshold));
    engine.set_congestion(CongestionConfig {
        ecn: s.ecn,
        nbcc: s.nbcc,
        threshold: s.bypass_threshold,
        interval_ms: s.nbcc_interval_ms,
        timeout_ms: s.nbcc_timeout_ms,
    });
    if !s.bloom {
        return Ok(None);
    }
    let names = capacity(cfg, workers);
    let filter = if s.bloom_bytes > 0 {
        let bytes = s.bloom_bytes.div_ceil(workers.max(1) as u64);
        CountingBloom::with_bytes(names, bytes).map_err(|e| format!("store.bloom_bytes: {e}"))?
    } else {
        CountingBloom::with_fp_rate(names, s.bloom_fp_rate)
            .map_err(|e| format!("store.bloom_fp_rate: {e}"))?
    };
    let g = filter.geometry();
    tracing::info!(
        worker = i,
        names,
        bytes = g.bytes(),
        k = g.k,
        fp_rate = filter.target_fp_rate(),
        "CS filter"
    );
    let filter = Arc::new(filter);
    engine.set_cs_filter(Box::new(BloomHandle(filter.clone())));
    Ok(Some(filter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workers_filter_covers_its_share_of_ram_and_l2() {
        let mut cfg = Config::default();
        cfg.cs.capacity = 1000;
        assert_eq!(capacity(&cfg, 4), 250);
        cfg.store.l2_path = "/x".into();
        cfg.store.l2_capacity = 1001;
        cfg.store.batch = 10;
        // 251 chunks per worker, in whole batches: 260.
        assert_eq!(capacity(&cfg, 4), 250 + 260);
        cfg.store.bloom_capacity = 99;
        assert_eq!(capacity(&cfg, 4), 25);
    }
}
