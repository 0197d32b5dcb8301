//! The report: one line per point as it is measured, then the summary as a table or JSON.

use std::path::Path;

use serde_json::{json, Value};

use super::args::HcsBenchArgs;
use super::device::{extent_bytes, median, range, Device, DEEP_QD, DEVICE_PASSES};
use super::models::model_name;
use super::point::{l2_hit_ratio, ratio, Point};
use crate::hcs_workload::WorkloadKind;

/// Prints one measured point (and its model and L2-queue lines).
pub(super) fn print_point_line(w: WorkloadKind, p: &Point) {
    println!(
        "{w} |L1|={:>8} L1 hit={:.4} model={:.4} (pending hits {}) L2 hit={:.4} \
         prefetch usefulness={:.3} {:.0} chunks/s {:.2} Gbps L2 read {:.3} GB/s",
        p.l1_chunks,
        p.hit_ratio(),
        p.model,
        p.pending_hits,
        l2_hit_ratio(p),
        p.usefulness(),
        p.chunks_per_s(),
        p.gbps(),
        p.l2_gbytes_per_s()
    );
    if let Some(steady) = p.model_steady {
        println!(
            "    model: stream model over this window {:.4}; its steady state {steady:.4}; seed \
             000 eq. 4 {:.4}",
            p.model, p.model_seed
        );
    }
    if p.queue_samples > 0 {
        println!(
            "    L2 queue: {:.1} in flight on average, full at {:.0}% of requests, {:.1} reads \
             waiting for room on average{}; bench threads {:.2} s CPU in {:.2} s, {:.2} s \
             waiting on a full backlog; request iteration (L2 submit/poll included, waits \
             excluded) max {:.0} us, p99.9 {:.1} us",
            p.mean_in_flight(),
            100.0 * ratio(p.queue_full, p.queue_samples),
            p.mean_backlog(),
            if p.l2_gave_up > 0 {
                format!(" ({} given up)", p.l2_gave_up)
            } else {
                String::new()
            },
            p.cpu_s,
            p.elapsed_s,
            p.blocked_s,
            p.iter_max_ns as f64 / 1e3,
            p.iter_p999_ns as f64 / 1e3
        );
    }
}

/// What the summary reports.
pub(super) struct Report<'a> {
    pub(super) args: &'a HcsBenchArgs,
    pub(super) catalogue_chunks: u64,
    pub(super) dir: &'a Path,
    pub(super) direct: bool,
    pub(super) backend_name: &'a str,
    pub(super) points: &'a [Point],
    pub(super) rmse: f64,
    pub(super) rmse_seed: f64,
    pub(super) device: Option<&'a Device>,
    pub(super) hit_ns: Option<f64>,
}

impl Report<'_> {
    /// Checksum failures over all points.
    fn checksum_failures(&self) -> u64 {
        let total = self.points.iter().fold(Point::default(), |mut a, p| {
            a.add(p);
            a
        });
        total.checksum_failures
    }

    /// Prints the summary as one JSON object.
    pub(super) fn print_json(&self) {
        let (args, device) = (self.args, self.device);
        let pts: Vec<Value> = self.points.iter().map(point_json).collect();
        let out = json!({
            "workload": args.workload.name(),
            "points": pts,
            "rmse": self.rmse,
            "model": model_name(args),
            "rmse_seed_model": self.rmse_seed,
            "catalogue_chunks": self.catalogue_chunks,
            "batch": args.batch,
            "prefetch_ahead": args.ahead(),
            "workers": args.workers(),
            "mapping": format!("{:?}", args.mapping).to_lowercase(),
            "l2": if args.emulated { "emulated".to_string() } else { format!("file ({}, {})", self.backend_name, if self.direct { "O_DIRECT" } else { "buffered" }) },
            "device_seq_read_gbytes_per_s": device.map(Device::best),
            "device_seq_read_qd1_gbytes_per_s": device.map(|d| median(&d.qd1)),
            "device_seq_read_qd_gbytes_per_s": device.map(|d| median(&d.qd)),
            "device_seq_read_qd64_gbytes_per_s": device.map(|d| median(&d.deep)),
            "device_seq_read_passes": device.map(|d| json!({
                "qd1": d.qd1,
                "qd": d.qd,
                "qd64": d.deep,
            })),
            "device_seq_read_best_pass_gbytes_per_s": device.map(Device::best_pass),
            "device_random_extent_read_gbytes_per_s": device.map(|d| median(&d.random)),
            "device_random_extent_read_passes": device.map(|d| d.random.clone()),
            "l1_hit_ns_median_10m": self.hit_ns,
            "checksum_failures": self.checksum_failures(),
        });
        println!("{out}");
    }

    /// Prints the summary as text.
    pub(super) fn print_text(&self) {
        let (args, rmse, rmse_seed) = (self.args, self.rmse, self.rmse_seed);
        println!(
            "workload={} catalogue={} chunks B={} workers={} mapping={:?} L2={}",
            args.workload,
            self.catalogue_chunks,
            args.batch,
            args.workers(),
            args.mapping,
            if args.emulated {
                format!(
                    "emulated (tau={} Gbps, {:?}, {:?})",
                    args.tau_gbps, args.delay, args.memory
                )
            } else {
                format!(
                    "file in {} ({}, {}, queue depth {})",
                    self.dir.display(),
                    self.backend_name,
                    if self.direct { "O_DIRECT" } else { "buffered" },
                    args.queue_depth
                )
            }
        );
        println!(
            "L1 hit ratio RMSE against the model ({}): {rmse:.4}",
            model_name(args)
        );
        match args.workload {
            WorkloadKind::Real => println!(
                "  against Mansilha et al.'s (2017) eq. 4 (L1 keeps every stream's batch): {rmse_seed:.4}"
            ),
            WorkloadKind::Seq if args.ahead() => {
                println!("  against Mansilha et al.'s (2017) eq. 3 (no prefetch-ahead): {rmse_seed:.4}")
            }
            _ => {}
        }
        if let Some(d) = self.device {
            self.print_device(d);
        }
        if let Some(ns) = self.hit_ns {
            println!("L1 hit cost, 10M entries: median {ns:.0} ns");
        }
        let checksum_failures = self.checksum_failures();
        if checksum_failures > 0 {
            println!("checksum failures: {checksum_failures}");
        }
    }

    /// Prints the device's read bandwidth and the L2's share of it.
    fn print_device(&self, d: &Device) {
        let args = self.args;
        let best_l2 = self
            .points
            .iter()
            .map(Point::l2_gbytes_per_s)
            .fold(0.0, f64::max);
        println!(
            "device sequential read: {:.3} GB/s (1 MiB O_DIRECT, the best mode's median \
             of {} passes, {DEVICE_PASSES} before and {DEVICE_PASSES} after the L2 runs; \
             median [min-max] of QD1 {}, {} x QD{} {}, QD{DEEP_QD} {}); best L2 read \
             bandwidth {:.3} GB/s = {:.0}% of it",
            d.best(),
            d.qd1.len(),
            range(&d.qd1),
            args.workers(),
            args.queue_depth,
            range(&d.qd),
            range(&d.deep),
            best_l2,
            100.0 * best_l2 / d.best().max(1e-9)
        );
        println!(
            "  (the best single pass, {:.3} GB/s, would put the L2 at {:.0}%); not the \
             reference: {} x QD{} reads of one L2 extent ({} bytes) at random offsets, \
             the L2's I/O without its CPU work: {} GB/s, the L2 at {:.0}% of it",
            d.best_pass(),
            100.0 * best_l2 / d.best_pass().max(1e-9),
            args.workers(),
            args.queue_depth,
            extent_bytes(args.batch),
            range(&d.random),
            100.0 * best_l2 / median(&d.random).max(1e-9)
        );
    }
}

/// One point as JSON.
fn point_json(p: &Point) -> Value {
    json!({
        "l1_chunks": p.l1_chunks,
        "l1_hit_ratio": p.hit_ratio(),
        "model_hit_ratio": p.model,
        "seed_model_hit_ratio": p.model_seed,
        "model_steady_hit_ratio": p.model_steady,
        "chunks_per_s": p.chunks_per_s(),
        "gbps": p.gbps(),
        "pending_hits": p.pending_hits,
        "prefetch_usefulness": p.usefulness(),
        "l2_hit_ratio": l2_hit_ratio(p),
        "l2_read_gbytes_per_s": p.l2_gbytes_per_s(),
        "l2_mean_in_flight": p.mean_in_flight(),
        "l2_queue_full_share": ratio(p.queue_full, p.queue_samples),
        "l2_mean_backlog": p.mean_backlog(),
        "l2_reads_given_up": p.l2_gave_up,
        "blocked_on_full_queue_s": p.blocked_s,
        "bench_cpu_s": p.cpu_s,
        "elapsed_s": p.elapsed_s,
        "iteration_max_us": p.iter_max_ns as f64 / 1e3,
        "iteration_p999_us": p.iter_p999_ns as f64 / 1e3,
    })
}
